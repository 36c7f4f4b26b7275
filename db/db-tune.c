/*
 * The tuner's results store on SQLite (see db-tune.h). rocmtune's
 * (tune_db_open) uses its own connection to the database rocmd_db_open()
 * created and migrated; the daemon's (tune_db_attach) the daemon's one
 * connection, used on the loop thread only. Both run in WAL mode with
 * synchronous=FULL, so each recorded evaluation is durable when record()
 * returns. Statements are prepared once; job ids are cached per key.
 */
#include "db/db-tune.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "db/db-internal.h"
#include "db/db.h"

enum {
	Q_JOB_FIND,
	Q_JOB_ADD,
	Q_EVAL_FIND,
	Q_EVAL_ADD,
	Q_WINNER_SET,
	Q_WINNERS,
	Q_WINNERS_ANY,
	Q_COUNT,
	Q_WINNER_DEFAULT,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
	"SELECT id FROM tune_job WHERE backend = ?1 AND arch = ?2 AND device = ?3 AND "
	"compute_units = ?4 AND driver = ?5 AND runtime = ?6 AND compiler = ?7 AND "
	"source_hash = ?8 AND problem = ?9",
	"INSERT INTO tune_job (backend, arch, device, compute_units, driver, runtime, compiler, "
	"source_hash, problem, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	"SELECT outcome, median_ms, p20_ms, p80_ms, runs, gflops, detail FROM tune_eval "
	"WHERE job_id = ?1 AND config = ?2",
	/* A stored outcome that tune_outcome_retried() names is replaced; others stay. */
	"INSERT INTO tune_eval (job_id, config, outcome, median_ms, p20_ms, p80_ms, runs, gflops, "
	"detail, time_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
	"ON CONFLICT (job_id, config) DO UPDATE SET outcome = excluded.outcome, "
	"median_ms = excluded.median_ms, p20_ms = excluded.p20_ms, p80_ms = excluded.p80_ms, "
	"runs = excluded.runs, gflops = excluded.gflops, detail = excluded.detail, "
	"time_ms = excluded.time_ms "
	"WHERE tune_eval.outcome IN ('compile_failed', 'launch_failed', 'ruled_out')",
	"UPDATE tune_job SET winner_config = ?2, winner_ms = ?3, default_ms = ?4, "
	"finished_ms = ?5 WHERE id = ?1",
	"SELECT problem, winner_config, winner_ms FROM tune_job WHERE backend = ?1 AND arch = ?2 "
	"AND device = ?3 AND compute_units = ?4 AND driver = ?5 AND runtime = ?6 AND "
	"compiler = ?7 AND source_hash = ?8 AND winner_config IS NOT NULL ORDER BY id",
	"SELECT problem, winner_config, winner_ms FROM tune_job WHERE backend = ?1 AND arch = ?2 "
	"AND device = ?3 AND compute_units = ?4 AND winner_config IS NOT NULL ORDER BY finished_ms, id",
	"SELECT count(*) FROM tune_eval WHERE job_id = ?1",
	"SELECT default_ms FROM tune_job WHERE id = ?1 AND winner_config IS NOT NULL",
};

struct tune_db {
	sqlite3 *h;
	sqlite3_stmt *st[Q_COUNT_];
	char last_key[1024]; /* the job the cached id belongs to */
	int64_t last_job;
	int borrowed; /* the connection is the daemon's (tune_db_attach) */
};

/* The outcome names, as tune_outcome_name() spells them; kept here so that
 * rocmd_core does not need rocmd_kernels at link time. */
static const char *const outcome_names[TUNE_OUTCOME_COUNT] = {
	"ok", "compile_failed", "launch_failed", "wrong_result", "timeout", "ruled_out", "crashed",
};

static const char *
outcome_name(enum tune_outcome o)
{
	return (unsigned)o < TUNE_OUTCOME_COUNT ? outcome_names[o] : "crashed";
}

static int
outcome_parse(const char *s, enum tune_outcome *out)
{
	int i;

	for (i = 0; s != NULL && i < TUNE_OUTCOME_COUNT; i++) {
		if (!strcmp(s, outcome_names[i])) {
			*out = (enum tune_outcome)i;
			return 0;
		}
	}
	return ROCMD_ECORRUPT;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static sqlite3_stmt *
stmt(struct tune_db *db, int q)
{
	sqlite3_stmt *st = db->st[q];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

/* Binds the device + software columns ?1..?8. */
static int
bind_device(sqlite3_stmt *st, const struct tune_key *k)
{
	int rc = sqlite3_bind_text(st, 1, k->backend, -1, SQLITE_STATIC);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, k->arch, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, k->device, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 4, k->compute_units);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 5, k->driver, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 6, k->runtime, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 7, k->compiler, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 8, k->source_hash, -1, SQLITE_STATIC);
	return rc;
}

/* The job id for KEY; created when CREATE is set, else ROCMD_ENOTFOUND. */
static int
job_id(struct tune_db *db, const struct tune_key *k, int create, int64_t *id)
{
	char kstr[1024];
	sqlite3_stmt *st;
	int rc;

	snprintf(kstr, sizeof(kstr), "%s|%s|%s|%d|%s|%s|%s|%s|%s", k->backend, k->arch, k->device,
		 k->compute_units, k->driver, k->runtime, k->compiler, k->source_hash, k->problem);
	if (db->last_job > 0 && !strcmp(kstr, db->last_key)) {
		*id = db->last_job;
		return 0;
	}
	st = stmt(db, Q_JOB_FIND);
	rc = bind_device(st, k);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 9, k->problem, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		goto found;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);
	if (!create)
		return ROCMD_ENOTFOUND;
	st = stmt(db, Q_JOB_ADD);
	rc = bind_device(st, k);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 9, k->problem, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 10, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);
	*id = sqlite3_last_insert_rowid(db->h);
found:
	snprintf(db->last_key, sizeof(db->last_key), "%s", kstr);
	db->last_job = *id;
	return 0;
}

static int
db_lookup(void *ctx, const struct tune_key *key, const char *config, struct tune_result *out)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st;
	int64_t id;
	int rc, err;

	err = job_id(db, key, 0, &id);
	if (err < 0)
		return err;
	st = stmt(db, Q_EVAL_FIND);
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, config, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 6);

		memset(out, 0, sizeof(*out));
		if (outcome_parse((const char *)sqlite3_column_text(st, 0), &out->outcome) < 0) {
			sqlite3_reset(st);
			return ROCMD_ECORRUPT;
		}
		out->median_ms = sqlite3_column_double(st, 1);
		out->p20_ms = sqlite3_column_double(st, 2);
		out->p80_ms = sqlite3_column_double(st, 3);
		out->runs = sqlite3_column_int(st, 4);
		out->gflops = sqlite3_column_double(st, 5);
		snprintf(out->detail, sizeof(out->detail), "%s", d != NULL ? d : "");
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ROCMD_ENOTFOUND : rocmd_db_map_rc(rc);
}

static int
db_record(void *ctx, const struct tune_key *key, const char *config, const struct tune_result *r)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st;
	int64_t id;
	int rc, err;

	err = job_id(db, key, 1, &id);
	if (err < 0)
		return err;
	st = stmt(db, Q_EVAL_ADD);
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, config, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, outcome_name(r->outcome), -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && r->outcome == TUNE_OK) {
		rc = sqlite3_bind_double(st, 4, r->median_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_double(st, 5, r->p20_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_double(st, 6, r->p80_ms);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_double(st, 8, r->gflops);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 7, r->runs);
	if (rc == SQLITE_OK && r->detail[0] != '\0')
		rc = sqlite3_bind_text(st, 9, r->detail, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 10, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE && sqlite3_changes(db->h) == 0)
		return ROCMD_EEXISTS; /* stored, and not an outcome that is replaced */
	return rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
}

static int
db_set_winner(void *ctx, const struct tune_key *key, const char *config, double median_ms,
	      double default_ms)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st;
	int64_t id;
	int rc, err;

	err = job_id(db, key, 1, &id);
	if (err < 0)
		return err;
	st = stmt(db, Q_WINNER_SET);
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, config, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_double(st, 3, median_ms);
	if (rc == SQLITE_OK && default_ms > 0 && default_ms < 1e300)
		rc = sqlite3_bind_double(st, 4, default_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
}

static int
db_winners(void *ctx, const struct tune_key *key, int any_software, tune_winner_cb cb,
	   void *cbctx)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st = stmt(db, any_software ? Q_WINNERS_ANY : Q_WINNERS);
	int rc, ret = 0;

	/* Q_WINNERS_ANY has no ?5..?8: bind the device columns only. */
	rc = sqlite3_bind_text(st, 1, key->backend, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, key->arch, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, key->device, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 4, key->compute_units);
	if (rc == SQLITE_OK && !any_software)
		rc = bind_device(st, key);

	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		ret = cb(cbctx, (const char *)sqlite3_column_text(st, 0),
			 (const char *)sqlite3_column_text(st, 1), sqlite3_column_double(st, 2));
		if (ret != 0)
			break;
	}
	sqlite3_reset(st);
	if (ret != 0)
		return ret;
	return rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
}

static int
db_count(void *ctx, const struct tune_key *key, int64_t *n)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st;
	int64_t id;
	int rc, err;

	*n = 0;
	err = job_id(db, key, 0, &id);
	if (err == ROCMD_ENOTFOUND)
		return 0;
	if (err < 0)
		return err;
	st = stmt(db, Q_COUNT);
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : rocmd_db_map_rc(rc);
}

/* The default's time declared with the winner (the tuned library keeps it). */
static int
db_winner_default(void *ctx, const struct tune_key *key, double *default_ms)
{
	struct tune_db *db = ctx;
	sqlite3_stmt *st;
	int64_t id;
	int rc, err;

	*default_ms = 0;
	err = job_id(db, key, 0, &id);
	if (err < 0)
		return err;
	st = stmt(db, Q_WINNER_DEFAULT);
	rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*default_ms = sqlite3_column_double(st, 0); /* NULL reads as 0: unknown */
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return ROCMD_ENOTFOUND;
	return rc == SQLITE_ROW ? 0 : rocmd_db_map_rc(rc);
}

static void
db_free(struct tune_db *db)
{
	int i;

	for (i = 0; i < Q_COUNT_; i++)
		sqlite3_finalize(db->st[i]);
	if (!db->borrowed)
		sqlite3_close(db->h);
	free(db);
}

int
tune_db_open(const char *path, struct tune_store *out, char *why, size_t whylen)
{
	struct rocmd_db *rdb = NULL;
	struct tune_db *db;
	int rc, err, i;

	memset(out, 0, sizeof(*out));
	/* Integrity check and migrations (tune tables come with version 3). */
	err = rocmd_db_open(path, &rdb, why, whylen);
	if (err < 0)
		return err;
	rocmd_db_close(rdb);
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return ROCMD_ENOMEM;
	rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(db->h, 5000);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->h,
				  "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
				  "PRAGMA foreign_keys=ON;",
				  NULL, NULL, NULL);
	for (i = 0; i < Q_COUNT_ && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v3(db->h, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &db->st[i],
					NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "%s: %s", path, sqlite3_errmsg(db->h));
		err = rocmd_db_map_rc(rc);
		db_free(db);
		return err < 0 ? err : ROCMD_EDB;
	}
	out->ctx = db;
	out->lookup = db_lookup;
	out->record = db_record;
	out->set_winner = db_set_winner;
	out->winners = db_winners;
	out->count = db_count;
	out->winner_default = db_winner_default;
	return 0;
}

int
tune_db_attach(struct rocmd_db *main, struct tune_store *out)
{
	struct tune_db *db;
	int rc = SQLITE_OK, err, i;

	memset(out, 0, sizeof(*out));
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return ROCMD_ENOMEM;
	db->h = rocmd_db_sqlite(main);
	db->borrowed = 1;
	for (i = 0; i < Q_COUNT_ && rc == SQLITE_OK; i++)
		rc = sqlite3_prepare_v3(db->h, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &db->st[i],
					NULL);
	if (rc != SQLITE_OK) {
		err = rocmd_db_map_rc(rc);
		db_free(db);
		return err < 0 ? err : ROCMD_EDB;
	}
	out->ctx = db;
	out->lookup = db_lookup;
	out->record = db_record;
	out->set_winner = db_set_winner;
	out->winners = db_winners;
	out->count = db_count;
	return 0;
}

void
tune_db_close(struct tune_store *st)
{
	if (st->ctx != NULL)
		db_free(st->ctx);
	st->ctx = NULL;
}
