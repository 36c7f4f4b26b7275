/*
 * The idle tuner's job queue on SQLite (see db-tune-queue.h), through the
 * statement helper of db-internal.h: each statement below is prepared on
 * first use on the daemon's connection and kept until detach. Each call is
 * one statement (its own implicit transaction) unless the caller wraps
 * several in begin/commit.
 */
#include "db/db-tune-queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

#define COLS                                                                                       \
	"id, backend, arch, device, sdk, dtype, trans, m, n, k, batch, origin, state, budget, "    \
	"evals, measured, winner, best_ms, default_ms, seeded_from, detail, created_ms, "          \
	"updated_ms, finished_ms, driver, source, calls, lda, ldb, ldc, stride_a, stride_b, "      \
	"stride_c, alpha, beta, target, library, lib_digest, est_ms, best_hi_ms, default_lo_ms"

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
	Q_FIND_VENDOR,
	Q_NEXT_VENDOR,
	Q_ADOPT_VENDOR,
	Q_SPREAD,
	Q_STALE_TARGET,
	Q_EVALS,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
    "SELECT id FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND sdk = ?4 "
    "AND dtype = ?5 AND trans = ?6 AND m = ?7 AND n = ?8 AND k = ?9 AND batch = ?10 AND "
    "driver = ?16 AND target = '' AND state <> 'stale'",
    "INSERT INTO tune_queue (backend, arch, device, sdk, dtype, trans, m, n, k, batch, origin, "
    "state, budget, seeded_from, detail, created_ms, updated_ms, driver, target, lda, ldb, "
    "ldc, stride_a, stride_b, stride_c, beta, source, calls, alpha, library, lib_digest, "
    "est_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'queued', ?12, ?13, ?14, ?15, ?15, "
    "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)",
    "SELECT " COLS " FROM tune_queue WHERE id = ?1",
    "SELECT " COLS " FROM tune_queue WHERE state <> 'stale' ORDER BY id",
    "SELECT " COLS " FROM tune_queue ORDER BY id",
    "SELECT " COLS " FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
    "sdk = ?4 AND driver = ?5 AND target = '' AND state IN ('running', 'queued') ORDER BY "
    "state = 'running' DESC, origin = 'user' DESC, id LIMIT 1",
    "UPDATE tune_queue SET state = ?2, detail = coalesce(?3, detail), updated_ms = ?4 "
    "WHERE id = ?1",
    "UPDATE tune_queue SET state = ?2, updated_ms = ?3 WHERE state = ?1",
    "UPDATE tune_queue SET evals = ?2, measured = ?3, best_ms = ?4, updated_ms = ?5 "
    "WHERE id = ?1",
    "UPDATE tune_queue SET state = ?2, winner = ?3, best_ms = ?4, default_ms = ?5, "
    "detail = ?6, updated_ms = ?7, finished_ms = ?7 WHERE id = ?1",
    "SELECT " COLS " FROM tune_queue WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
    "(sdk <> ?4 OR driver <> ?5) AND target = '' AND state <> 'stale' ORDER BY id",
    "UPDATE tune_queue SET state = 'stale', updated_ms = ?2 WHERE id = ?1",
    "UPDATE tune_queue SET driver = ?4, updated_ms = ?5 WHERE backend = ?1 AND arch = ?2 AND "
    "device = ?3 AND driver = '' AND target = ''",
    /* Q_FIND_VENDOR: the same problem queued for the same target */
    "SELECT id FROM tune_queue WHERE backend = ?1 AND target = ?17 AND dtype = ?5 AND "
    "trans = ?6 AND m = ?7 AND n = ?8 AND k = ?9 AND batch = ?10 AND lda = ?18 AND ldb = ?19 "
    "AND ldc = ?20 AND stride_a = ?21 AND stride_b = ?22 AND stride_c = ?23 AND beta = ?24 AND "
    "state <> 'stale'",
    "SELECT " COLS " FROM tune_queue WHERE target <> '' AND state IN ('running', 'queued') "
    "ORDER BY state = 'running' DESC, source = 'family', max(calls, 1) * est_ms DESC, id LIMIT 1",
    "UPDATE tune_queue SET arch = ?2, device = ?3, driver = ?4, lib_digest = ?5, "
    "updated_ms = ?6 WHERE id = ?1",
    "UPDATE tune_queue SET best_hi_ms = ?2, default_lo_ms = ?3, est_ms = ?4, updated_ms = ?5 "
    "WHERE id = ?1",
    "SELECT " COLS " FROM tune_queue WHERE target = ?1 AND backend = ?2 AND state <> 'stale' "
    "AND (?3 IS NULL OR (lib_digest <> '' AND (lib_digest <> ?3 OR driver <> ?4))) ORDER BY id",
    /* Q_EVALS: the evaluations of the tuner's job for a queue job, in order
     * (its problem key, a vendor job's with its layout after it; the newest
     * such job when the runtime or compiler changed in between) */
    "SELECT e.config, e.outcome, e.median_ms, e.gflops FROM tune_eval e WHERE e.job_id = "
    "(SELECT id FROM tune_job WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
    "driver = ?4 AND (problem = ?5 OR problem LIKE ?5 || ':%') ORDER BY created_ms DESC, id DESC "
    "LIMIT 1) ORDER BY e.id LIMIT ?6",
};

struct rocmd_tune_queue_db {
	struct db_conn c; /* first: the daemon's connection, borrowed */
};

/* Runs S to its end; a CHECK constraint a field breaks is ROCMD_EINVAL. */
static int
run(struct db_stmt *s)
{
	int err = db_stmt_exec(s);

	return err == ROCMD_EEXISTS ? ROCMD_EINVAL : err;
}

/* run(), then *N (may be NULL) gets the rows it changed. */
static int
run_count(struct rocmd_tune_queue_db *q, struct db_stmt *s, int *n)
{
	int err = run(s);

	if (n != NULL)
		*n = err == 0 ? (int)db_changes(&q->c) : 0;
	return err;
}

/* run(); ROCMD_ENOTFOUND when no row changed. */
static int
run_one(struct rocmd_tune_queue_db *q, struct db_stmt *s)
{
	int n, err = run_count(q, s, &n);

	return err == 0 && n == 0 ? ROCMD_ENOTFOUND : err;
}

static void
row_to_job(struct db_stmt *s, struct rocmd_tune_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = db_col_int64(s, 0);
	db_col_copy(s, 1, j->backend, sizeof(j->backend));
	db_col_copy(s, 2, j->arch, sizeof(j->arch));
	db_col_copy(s, 3, j->device, sizeof(j->device));
	db_col_copy(s, 4, j->sdk, sizeof(j->sdk));
	db_col_copy(s, 5, j->dtype, sizeof(j->dtype));
	db_col_copy(s, 6, j->trans, sizeof(j->trans));
	j->m = db_col_int64(s, 7);
	j->n = db_col_int64(s, 8);
	j->k = db_col_int64(s, 9);
	j->batch = db_col_int64(s, 10);
	db_col_copy(s, 11, j->origin, sizeof(j->origin));
	db_col_copy(s, 12, j->state, sizeof(j->state));
	j->budget = db_col_int64(s, 13);
	j->evals = db_col_int64(s, 14);
	j->measured = db_col_int64(s, 15);
	db_col_copy(s, 16, j->winner, sizeof(j->winner));
	j->best_ms = db_col_double(s, 17);
	j->default_ms = db_col_double(s, 18);
	j->seeded_from = db_col_int64(s, 19);
	db_col_copy(s, 20, j->detail, sizeof(j->detail));
	j->created_ms = db_col_int64(s, 21);
	j->updated_ms = db_col_int64(s, 22);
	j->finished_ms = db_col_int64(s, 23);
	db_col_copy(s, 24, j->driver, sizeof(j->driver));
	db_col_copy(s, 25, j->source, sizeof(j->source));
	j->calls = db_col_int64(s, 26);
	j->lda = db_col_int64(s, 27);
	j->ldb = db_col_int64(s, 28);
	j->ldc = db_col_int64(s, 29);
	j->stride_a = db_col_int64(s, 30);
	j->stride_b = db_col_int64(s, 31);
	j->stride_c = db_col_int64(s, 32);
	j->alpha = db_col_double(s, 33);
	j->beta = db_col_double(s, 34);
	db_col_copy(s, 35, j->target, sizeof(j->target));
	db_col_copy(s, 36, j->library, sizeof(j->library));
	db_col_copy(s, 37, j->lib_digest, sizeof(j->lib_digest));
	j->est_ms = db_col_double(s, 38);
	j->best_hi_ms = db_col_double(s, 39);
	j->default_lo_ms = db_col_double(s, 40);
}

/* Opens statement I with backend, arch, device, sdk bound at ?1..?4. */
static void
open_device(struct db_stmt *s, struct rocmd_tune_queue_db *q, int i, const char *backend,
            const char *arch, const char *device, const char *sdk)
{
	db_stmt_open(s, &q->c, i);
	db_bind_text(s, 1, backend);
	db_bind_text(s, 2, arch);
	db_bind_text(s, 3, device);
	db_bind_text(s, 4, sdk);
}

/* Opens statement I with J's device, SDK and problem at ?1..?10, its driver at ?16. */
static void
open_job(struct db_stmt *s, struct rocmd_tune_queue_db *q, int i, const struct rocmd_tune_job *j)
{
	open_device(s, q, i, j->backend, j->arch, j->device, j->sdk);
	db_bind_text(s, 5, j->dtype);
	db_bind_text(s, 6, j->trans);
	db_bind_int64(s, 7, j->m);
	db_bind_int64(s, 8, j->n);
	db_bind_int64(s, 9, j->k);
	db_bind_int64(s, 10, j->batch > 0 ? j->batch : 1);
	db_bind_text(s, 16, j->driver);
}

/* Binds J's target, leading dimensions, strides and beta at ?17..?24. */
static void
bind_vendor(struct db_stmt *s, const struct rocmd_tune_job *j)
{
	db_bind_text(s, 17, j->target);
	db_bind_int64(s, 18, j->lda);
	db_bind_int64(s, 19, j->ldb);
	db_bind_int64(s, 20, j->ldc);
	db_bind_int64(s, 21, j->stride_a);
	db_bind_int64(s, 22, j->stride_b);
	db_bind_int64(s, 23, j->stride_c);
	db_bind_double(s, 24, j->beta);
}

/* Steps S for its one row into *J; ROCMD_ENOTFOUND without one. */
static int
get_one(struct db_stmt *s, struct rocmd_tune_job *j)
{
	int found = db_stmt_row(s);

	if (found)
		row_to_job(s, j);
	return db_stmt_found(s, found);
}

DB_MODULE_DEFINE(struct rocmd_tune_queue_db, rocmd_tune_queue_attach, rocmd_tune_queue_detach,
                 rocmd_tune_queue_errmsg, queries, Q_COUNT_)

int
rocmd_tune_queue_add(struct rocmd_tune_queue_db *q, const struct rocmd_tune_job *j, int64_t now,
                     int64_t *id, int *created)
{
	struct db_stmt s;
	int err;

	*id = 0;
	*created = 0;
	/* A vendor job is the target's: its GPU and driver are learnt when it runs. */
	open_job(&s, q, j->target[0] ? Q_FIND_VENDOR : Q_FIND_LIVE, j);
	if (j->target[0])
		bind_vendor(&s, j);
	err = db_stmt_int(&s, id);
	if (err != ROCMD_ENOTFOUND)
		return err;
	open_job(&s, q, Q_ADD, j);
	bind_vendor(&s, j);
	db_bind_text(&s, 11, j->origin);
	db_bind_int64(&s, 12, j->budget);
	db_bind_id(&s, 13, j->seeded_from);
	db_bind_text(&s, 14, j->detail[0] ? j->detail : NULL);
	db_bind_int64(&s, 15, now);
	db_bind_text(&s, 25, j->source);
	db_bind_int64(&s, 26, j->calls);
	db_bind_double(&s, 27, j->target[0] || j->alpha != 0 ? j->alpha : 1.0);
	db_bind_text(&s, 28, j->library);
	db_bind_text(&s, 29, j->lib_digest);
	db_bind_double(&s, 30, j->est_ms);
	err = run(&s);
	if (err < 0)
		return err;
	*id = db_last_id(&q->c);
	*created = 1;
	return 0;
}

int
rocmd_tune_queue_get(struct rocmd_tune_queue_db *q, int64_t id, struct rocmd_tune_job *j)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_GET);
	db_bind_int64(&s, 1, id);
	return get_one(&s, j);
}

int
rocmd_tune_queue_list(struct rocmd_tune_queue_db *q, int all,
                      int (*cb)(const struct rocmd_tune_job *j, void *ctx), void *ctx)
{
	struct rocmd_tune_job j;
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &q->c, all ? Q_LIST_ALL : Q_LIST);
	while (err == 0 && db_stmt_row(&s)) {
		row_to_job(&s, &j);
		err = cb(&j, ctx);
	}
	return db_stmt_end(&s, err);
}

int
rocmd_tune_queue_next(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                      const char *device, const char *sdk, const char *driver,
                      struct rocmd_tune_job *j)
{
	struct db_stmt s;

	open_device(&s, q, Q_NEXT, backend, arch, device, sdk);
	db_bind_text(&s, 5, driver);
	return get_one(&s, j);
}

int
rocmd_tune_queue_evals(struct rocmd_tune_queue_db *q, const struct rocmd_tune_job *j,
                       int64_t limit, rocmd_tune_eval_fn cb, void *ctx)
{
	char problem[160];
	struct db_stmt s;
	int err = 0;

	snprintf(problem, sizeof(problem), "%s:%s:%lldx%lldx%lld:b%lld", j->dtype, j->trans,
	         (long long)j->m, (long long)j->n, (long long)j->k, (long long)j->batch);
	db_stmt_open(&s, &q->c, Q_EVALS);
	db_bind_text(&s, 1, j->backend);
	db_bind_text(&s, 2, j->arch);
	db_bind_text(&s, 3, j->device);
	db_bind_text(&s, 4, j->driver);
	db_bind_text(&s, 5, problem);
	db_bind_limit(&s, 6, limit);
	while (err == 0 && db_stmt_row(&s)) {
		const char *config = (const char *)db_col_text(&s, 0);
		const char *outcome = (const char *)db_col_text(&s, 1);

		err = cb(ctx, config != NULL ? config : "", outcome != NULL ? outcome : "",
		         db_col_double(&s, 2), db_col_double(&s, 3));
	}
	return db_stmt_end(&s, err);
}

int
rocmd_tune_queue_set_state(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                           const char *detail, int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_SET_STATE);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, state);
	db_bind_text(&s, 3, detail);
	db_bind_int64(&s, 4, now);
	return run_one(q, &s);
}

int
rocmd_tune_queue_move_all(struct rocmd_tune_queue_db *q, const char *from, const char *to,
                          int64_t now, int *n)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_MOVE_ALL);
	db_bind_text(&s, 1, from);
	db_bind_text(&s, 2, to);
	db_bind_int64(&s, 3, now);
	return run_count(q, &s, n);
}

int
rocmd_tune_queue_progress(struct rocmd_tune_queue_db *q, int64_t id, int64_t evals,
                          int64_t measured, double best_ms, int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_PROGRESS);
	db_bind_int64(&s, 1, id);
	db_bind_int64(&s, 2, evals);
	db_bind_int64(&s, 3, measured);
	db_bind_ms(&s, 4, best_ms);
	db_bind_int64(&s, 5, now);
	return run(&s);
}

int
rocmd_tune_queue_finish(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                        const char *winner, double best_ms, double default_ms, const char *detail,
                        int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_FINISH);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, state);
	db_bind_text(&s, 3, winner != NULL && winner[0] ? winner : NULL);
	db_bind_ms(&s, 4, best_ms);
	db_bind_ms(&s, 5, default_ms);
	db_bind_text(&s, 6, detail);
	db_bind_int64(&s, 7, now);
	return run_one(q, &s);
}

/* The jobs rocmd_tune_queue_stale() would mark, collected first: the
 * callback adds rows, which must not disturb the walk. */
static int
stale_jobs(struct rocmd_tune_queue_db *q, const char *backend, const char *arch, const char *device,
           const char *sdk, const char *driver, struct rocmd_tune_job **out, size_t *count)
{
	struct rocmd_tune_job *jobs = NULL, *grown;
	size_t cap = 0;
	struct db_stmt s;
	int err = 0;

	*count = 0;
	open_device(&s, q, Q_STALE_LIST, backend, arch, device, sdk);
	db_bind_text(&s, 5, driver);
	while (err == 0 && db_stmt_row(&s)) {
		if (*count == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(jobs, cap * sizeof(*jobs));
			if (grown == NULL) {
				err = ROCMD_ENOMEM;
				break;
			}
			jobs = grown;
		}
		row_to_job(&s, &jobs[(*count)++]);
	}
	*out = jobs;
	return db_stmt_end(&s, err);
}

int
rocmd_tune_queue_stale(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                       const char *device, const char *sdk, const char *driver, int64_t now,
                       void (*cb)(const struct rocmd_tune_job *old, void *ctx), void *ctx, int *n)
{
	struct rocmd_tune_job *jobs;
	struct db_stmt s;
	size_t count;
	int err;

	if (n != NULL)
		*n = 0;
	err = stale_jobs(q, backend, arch, device, sdk, driver, &jobs, &count);
	for (size_t i = 0; err == 0 && i < count; i++) {
		db_stmt_open(&s, &q->c, Q_STALE_SET);
		db_bind_int64(&s, 1, jobs[i].id);
		db_bind_int64(&s, 2, now);
		err = run(&s);
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
	struct db_stmt s;

	open_device(&s, q, Q_ADOPT, backend, arch, device, driver);
	db_bind_int64(&s, 5, now);
	return run_count(q, &s, n);
}

int
rocmd_tune_queue_next_vendor(struct rocmd_tune_queue_db *q, struct rocmd_tune_job *j)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_NEXT_VENDOR);
	return get_one(&s, j);
}

int
rocmd_tune_queue_adopt(struct rocmd_tune_queue_db *q, int64_t id, const char *arch,
                       const char *device, const char *driver, const char *lib_digest,
                       int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_ADOPT_VENDOR);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, arch);
	db_bind_text(&s, 3, device);
	db_bind_text(&s, 4, driver);
	db_bind_text(&s, 5, lib_digest);
	db_bind_int64(&s, 6, now);
	return run_one(q, &s);
}

int
rocmd_tune_queue_spread(struct rocmd_tune_queue_db *q, int64_t id, double best_hi_ms,
                        double default_lo_ms, double est_ms, int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &q->c, Q_SPREAD);
	db_bind_int64(&s, 1, id);
	db_bind_ms(&s, 2, best_hi_ms);
	db_bind_ms(&s, 3, default_lo_ms);
	db_bind_double(&s, 4, est_ms > 0 && est_ms < 3.6e6 ? est_ms : 0);
	db_bind_int64(&s, 5, now);
	return run_one(q, &s);
}

int
rocmd_tune_queue_stale_target(struct rocmd_tune_queue_db *q, const char *target,
                              const char *backend, const char *lib_digest, const char *driver,
                              int64_t now, void (*cb)(const struct rocmd_tune_job *old, void *ctx),
                              void *ctx, int *n)
{
	struct rocmd_tune_job *jobs = NULL, *grown;
	size_t count = 0, cap = 0;
	struct db_stmt s;
	int err = 0;

	if (n != NULL)
		*n = 0;
	/* Collected first: the callback adds rows, which must not disturb the walk. */
	db_stmt_open(&s, &q->c, Q_STALE_TARGET);
	db_bind_text(&s, 1, target);
	db_bind_text(&s, 2, backend);
	db_bind_text(&s, 3, lib_digest);
	db_bind_text(&s, 4, driver != NULL ? driver : "");
	while (err == 0 && db_stmt_row(&s)) {
		if (count == cap) {
			cap = cap ? cap * 2 : 8;
			if ((grown = realloc(jobs, cap * sizeof(*jobs))) == NULL) {
				err = ROCMD_ENOMEM;
				break;
			}
			jobs = grown;
		}
		row_to_job(&s, &jobs[count++]);
	}
	err = db_stmt_end(&s, err);
	for (size_t i = 0; err == 0 && i < count; i++) {
		db_stmt_open(&s, &q->c, Q_STALE_SET);
		db_bind_int64(&s, 1, jobs[i].id);
		db_bind_int64(&s, 2, now);
		err = run(&s);
		if (err == 0 && cb != NULL)
			cb(&jobs[i], ctx);
	}
	if (err == 0 && n != NULL)
		*n = (int)count;
	free(jobs);
	return err;
}

int
rocmd_tune_queue_begin(struct rocmd_tune_queue_db *q)
{
	return db_begin(&q->c);
}

int
rocmd_tune_queue_commit(struct rocmd_tune_queue_db *q)
{
	return db_commit(&q->c);
}

void
rocmd_tune_queue_rollback(struct rocmd_tune_queue_db *q)
{
	db_rollback(&q->c);
}
