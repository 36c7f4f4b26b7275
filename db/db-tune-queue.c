/*
 * The idle tuner's job queue on SQLite (see db-tune-queue.h). Statements are
 * prepared once on the daemon's connection. Each call is one statement (its
 * own implicit transaction) unless the caller wraps several in begin/commit.
 */
#include "db/db-tune-queue.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"
#include "db/db.h"

#define COLS                                                                                       \
	"id, backend, arch, device, sdk, dtype, trans, m, n, k, batch, origin, state, budget, "    \
	"evals, measured, winner, best_ms, default_ms, seeded_from, detail, created_ms, "          \
	"updated_ms, finished_ms, driver"

enum {
	Q_FIND_LIVE,
	Q_ADD,
	Q_GET,
	Q_LIST,
	Q_LIST_ALL,
	Q_NEXT,
	Q_SET_STATE,
	Q_MOVE_ALL,
	Q_PROGRESS,
	Q_FINISH,
	Q_STALE_LIST,
	Q_STALE_SET,
	Q_ADOPT,
	Q_BEGIN,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
    "SELECT id FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND sdk = ?4 "
    "AND dtype = ?5 AND trans = ?6 AND m = ?7 AND n = ?8 AND k = ?9 AND batch = ?10 AND "
    "driver = ?16 AND state <> 'stale'",
    "INSERT INTO tune_queue (backend, arch, device, sdk, dtype, trans, m, n, k, batch, origin, "
    "state, budget, seeded_from, detail, created_ms, updated_ms, driver) VALUES (?1, ?2, ?3, "
    "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'queued', ?12, ?13, ?14, ?15, ?15, ?16)",
    "SELECT " COLS " FROM tune_queue WHERE id = ?1",
    "SELECT " COLS " FROM tune_queue WHERE state <> 'stale' ORDER BY id",
    "SELECT " COLS " FROM tune_queue ORDER BY id",
    "SELECT " COLS " FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
    "sdk = ?4 AND driver = ?5 AND state IN ('running', 'queued') ORDER BY "
    "state = 'running' DESC, origin = 'user' DESC, id LIMIT 1",
    "UPDATE tune_queue SET state = ?2, detail = coalesce(?3, detail), updated_ms = ?4 "
    "WHERE id = ?1",
    "UPDATE tune_queue SET state = ?2, updated_ms = ?3 WHERE state = ?1",
    "UPDATE tune_queue SET evals = ?2, measured = ?3, best_ms = ?4, updated_ms = ?5 "
    "WHERE id = ?1",
    "UPDATE tune_queue SET state = ?2, winner = ?3, best_ms = ?4, default_ms = ?5, "
    "detail = ?6, updated_ms = ?7, finished_ms = ?7 WHERE id = ?1",
    "SELECT " COLS " FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
    "(sdk <> ?4 OR driver <> ?5) AND state <> 'stale' ORDER BY id",
    "UPDATE tune_queue SET state = 'stale', updated_ms = ?2 WHERE id = ?1",
    "UPDATE tune_queue SET driver = ?4, updated_ms = ?5 WHERE backend = ?1 AND arch = ?2 AND "
    "device = ?3 AND driver = ''",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
};

struct rocmd_tune_queue_db {
	sqlite3 *h;
	sqlite3_stmt *st[Q_COUNT_];
};

static sqlite3_stmt *
stmt(struct rocmd_tune_queue_db *q, int i)
{
	sqlite3_stmt *st = q->st[i];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Steps a statement that returns no row; SQLITE_CONSTRAINT is ROCMD_EINVAL. */
static int
run(sqlite3_stmt *st, int rc)
{
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return 0;
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return ROCMD_EINVAL;
	return rocmd_db_map_rc(rc);
}

static void
col_text(sqlite3_stmt *st, int i, char *out, size_t len)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	snprintf(out, len, "%s", s != NULL ? s : "");
}

static void
row_to_job(sqlite3_stmt *st, struct rocmd_tune_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	col_text(st, 1, j->backend, sizeof(j->backend));
	col_text(st, 2, j->arch, sizeof(j->arch));
	col_text(st, 3, j->device, sizeof(j->device));
	col_text(st, 4, j->sdk, sizeof(j->sdk));
	col_text(st, 5, j->dtype, sizeof(j->dtype));
	col_text(st, 6, j->trans, sizeof(j->trans));
	j->m = sqlite3_column_int64(st, 7);
	j->n = sqlite3_column_int64(st, 8);
	j->k = sqlite3_column_int64(st, 9);
	j->batch = sqlite3_column_int64(st, 10);
	col_text(st, 11, j->origin, sizeof(j->origin));
	col_text(st, 12, j->state, sizeof(j->state));
	j->budget = sqlite3_column_int64(st, 13);
	j->evals = sqlite3_column_int64(st, 14);
	j->measured = sqlite3_column_int64(st, 15);
	col_text(st, 16, j->winner, sizeof(j->winner));
	j->best_ms = sqlite3_column_double(st, 17);
	j->default_ms = sqlite3_column_double(st, 18);
	j->seeded_from = sqlite3_column_int64(st, 19);
	col_text(st, 20, j->detail, sizeof(j->detail));
	j->created_ms = sqlite3_column_int64(st, 21);
	j->updated_ms = sqlite3_column_int64(st, 22);
	j->finished_ms = sqlite3_column_int64(st, 23);
	col_text(st, 24, j->driver, sizeof(j->driver));
}

/* Binds backend, arch, device, sdk at ?1..?4. */
static int
bind_device(sqlite3_stmt *st, const char *backend, const char *arch, const char *device,
            const char *sdk)
{
	int rc = sqlite3_bind_text(st, 1, backend, -1, SQLITE_STATIC);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, arch, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, device, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 4, sdk, -1, SQLITE_STATIC);
	return rc;
}

/* Binds the problem at ?5..?10. */
static int
bind_problem(sqlite3_stmt *st, const struct rocmd_tune_job *j)
{
	int rc = sqlite3_bind_text(st, 5, j->dtype, -1, SQLITE_STATIC);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 6, j->trans, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 7, j->m);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 8, j->n);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 9, j->k);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 10, j->batch > 0 ? j->batch : 1);
	return rc;
}

int
rocmd_tune_queue_attach(struct rocmd_db *main, struct rocmd_tune_queue_db **out)
{
	struct rocmd_tune_queue_db *q;
	int rc = SQLITE_OK, i;

	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return ROCMD_ENOMEM;
	q->h = rocmd_db_sqlite(main);
	for (i = 0; i < Q_COUNT_ && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v3(q->h, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &q->st[i],
		                        NULL);
	if (rc != SQLITE_OK) {
		rocmd_tune_queue_detach(q);
		return rocmd_db_map_rc(rc) < 0 ? rocmd_db_map_rc(rc) : ROCMD_EDB;
	}
	*out = q;
	return 0;
}

void
rocmd_tune_queue_detach(struct rocmd_tune_queue_db *q)
{
	if (q == NULL)
		return;
	for (int i = 0; i < Q_COUNT_; i++)
		sqlite3_finalize(q->st[i]);
	free(q);
}

const char *
rocmd_tune_queue_errmsg(struct rocmd_tune_queue_db *q)
{
	return q != NULL && q->h != NULL ? sqlite3_errmsg(q->h) : "no database";
}

int
rocmd_tune_queue_add(struct rocmd_tune_queue_db *q, const struct rocmd_tune_job *j, int64_t now,
                     int64_t *id, int *created)
{
	sqlite3_stmt *st = stmt(q, Q_FIND_LIVE);
	int rc;

	*id = 0;
	*created = 0;
	rc = bind_device(st, j->backend, j->arch, j->device, j->sdk);
	if (rc == SQLITE_OK)
		rc = bind_problem(st, j);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 16, j->driver, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);

	st = stmt(q, Q_ADD);
	rc = bind_device(st, j->backend, j->arch, j->device, j->sdk);
	if (rc == SQLITE_OK)
		rc = bind_problem(st, j);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 11, j->origin, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 12, j->budget);
	if (rc == SQLITE_OK)
		rc = j->seeded_from > 0 ? sqlite3_bind_int64(st, 13, j->seeded_from)
		                        : sqlite3_bind_null(st, 13);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 14, j->detail[0] ? j->detail : NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 15, now);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 16, j->driver, -1, SQLITE_STATIC);
	rc = run(st, rc);
	if (rc < 0)
		return rc;
	*id = sqlite3_last_insert_rowid(q->h);
	*created = 1;
	return 0;
}

int
rocmd_tune_queue_get(struct rocmd_tune_queue_db *q, int64_t id, struct rocmd_tune_job *j)
{
	sqlite3_stmt *st = stmt(q, Q_GET);
	int rc = sqlite3_bind_int64(st, 1, id);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		row_to_job(st, j);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? ROCMD_ENOTFOUND : rocmd_db_map_rc(rc);
}

/* Steps ST calling CB per row; CB's non-zero return stops and is returned. */
static int
walk(sqlite3_stmt *st, int rc, int (*cb)(const struct rocmd_tune_job *j, void *ctx), void *ctx)
{
	struct rocmd_tune_job j;
	int ret = 0;

	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		row_to_job(st, &j);
		ret = cb(&j, ctx);
		if (ret != 0)
			break;
	}
	sqlite3_reset(st);
	if (ret != 0)
		return ret;
	return rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
}

int
rocmd_tune_queue_list(struct rocmd_tune_queue_db *q, int all,
                      int (*cb)(const struct rocmd_tune_job *j, void *ctx), void *ctx)
{
	return walk(stmt(q, all ? Q_LIST_ALL : Q_LIST), SQLITE_OK, cb, ctx);
}

int
rocmd_tune_queue_next(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                      const char *device, const char *sdk, const char *driver,
                      struct rocmd_tune_job *j)
{
	sqlite3_stmt *st = stmt(q, Q_NEXT);
	int rc = bind_device(st, backend, arch, device, sdk);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 5, driver, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		row_to_job(st, j);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? ROCMD_ENOTFOUND : rocmd_db_map_rc(rc);
}

int
rocmd_tune_queue_set_state(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                           const char *detail, int64_t now)
{
	sqlite3_stmt *st = stmt(q, Q_SET_STATE);
	int rc = sqlite3_bind_int64(st, 1, id);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, detail);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 4, now);
	rc = run(st, rc);
	if (rc == 0 && sqlite3_changes(q->h) == 0)
		return ROCMD_ENOTFOUND;
	return rc;
}

int
rocmd_tune_queue_move_all(struct rocmd_tune_queue_db *q, const char *from, const char *to,
                          int64_t now, int *n)
{
	sqlite3_stmt *st = stmt(q, Q_MOVE_ALL);
	int rc = sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, now);
	rc = run(st, rc);
	if (n != NULL)
		*n = rc == 0 ? sqlite3_changes(q->h) : 0;
	return rc;
}

int
rocmd_tune_queue_progress(struct rocmd_tune_queue_db *q, int64_t id, int64_t evals,
                          int64_t measured, double best_ms, int64_t now)
{
	sqlite3_stmt *st = stmt(q, Q_PROGRESS);
	int rc = sqlite3_bind_int64(st, 1, id);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, evals);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, measured);
	if (rc == SQLITE_OK)
		rc = best_ms > 0 && best_ms < 1e300 ? sqlite3_bind_double(st, 4, best_ms)
		                                    : sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5, now);
	return run(st, rc);
}

int
rocmd_tune_queue_finish(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                        const char *winner, double best_ms, double default_ms, const char *detail,
                        int64_t now)
{
	sqlite3_stmt *st = stmt(q, Q_FINISH);
	int rc = sqlite3_bind_int64(st, 1, id);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, winner != NULL && winner[0] ? winner : NULL);
	if (rc == SQLITE_OK)
		rc = best_ms > 0 && best_ms < 1e300 ? sqlite3_bind_double(st, 4, best_ms)
		                                    : sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = default_ms > 0 && default_ms < 1e300 ? sqlite3_bind_double(st, 5, default_ms)
		                                          : sqlite3_bind_null(st, 5);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 6, detail);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 7, now);
	rc = run(st, rc);
	if (rc == 0 && sqlite3_changes(q->h) == 0)
		return ROCMD_ENOTFOUND;
	return rc;
}

int
rocmd_tune_queue_stale(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                       const char *device, const char *sdk, const char *driver, int64_t now,
                       void (*cb)(const struct rocmd_tune_job *old, void *ctx), void *ctx, int *n)
{
	struct rocmd_tune_job *jobs = NULL, *grown;
	size_t count = 0, cap = 0;
	sqlite3_stmt *st = stmt(q, Q_STALE_LIST);
	int rc = bind_device(st, backend, arch, device, sdk), err = 0;

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 5, driver, -1, SQLITE_STATIC);
	if (n != NULL)
		*n = 0;
	/* Collect first: the callback adds rows, which must not disturb the walk. */
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		if (count == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(jobs, cap * sizeof(*jobs));
			if (grown == NULL) {
				err = ROCMD_ENOMEM;
				break;
			}
			jobs = grown;
		}
		row_to_job(st, &jobs[count++]);
	}
	sqlite3_reset(st);
	if (err == 0 && rc != SQLITE_DONE)
		err = rocmd_db_map_rc(rc);
	for (size_t i = 0; err == 0 && i < count; i++) {
		st = stmt(q, Q_STALE_SET);
		rc = sqlite3_bind_int64(st, 1, jobs[i].id);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(st, 2, now);
		err = run(st, rc);
		if (err == 0 && cb != NULL)
			cb(&jobs[i], ctx);
	}
	if (err == 0 && n != NULL)
		*n = (int)count;
	free(jobs);
	return err;
}

int
rocmd_tune_queue_adopt_driver(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                              const char *device, const char *driver, int64_t now, int *n)
{
	sqlite3_stmt *st = stmt(q, Q_ADOPT);
	int rc = bind_device(st, backend, arch, device, driver);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5, now);
	rc = run(st, rc);
	if (n != NULL)
		*n = rc == 0 ? sqlite3_changes(q->h) : 0;
	return rc;
}

int
rocmd_tune_queue_begin(struct rocmd_tune_queue_db *q)
{
	return run(stmt(q, Q_BEGIN), SQLITE_OK);
}

int
rocmd_tune_queue_commit(struct rocmd_tune_queue_db *q)
{
	return run(stmt(q, Q_COMMIT), SQLITE_OK);
}

void
rocmd_tune_queue_rollback(struct rocmd_tune_queue_db *q)
{
	run(stmt(q, Q_ROLLBACK), SQLITE_OK);
}
