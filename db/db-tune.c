/*
 * The tuner's results store on SQLite (see db-tune.h). rocmtune's
 * (tune_db_open) owns a connection that rocmd_db_open() opened and migrated;
 * the daemon's (tune_db_attach) borrows the daemon's one connection, used on
 * the loop thread only. Both run in WAL mode with synchronous=FULL, so each
 * recorded evaluation is durable when record() returns. Statements go through
 * the helper of db-internal.h (prepared on first use, kept until close); job
 * ids are cached per key.
 */
#include "db/db-tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct tune_db {
	struct db_conn c;     /* first */
	struct rocmd_db *own; /* rocmtune's own database (tune_db_open), else NULL */
	char last_key[1024];  /* the job the cached id belongs to */
	int64_t last_job;
};

/* Opens statement Q with the device + software columns bound at ?1..?8 (the
 * device's ?1..?4 only when DEVICE_ONLY). */
static void
open_key(struct db_stmt *s, struct tune_db *db, int q, const struct tune_key *k, int device_only)
{
	db_stmt_open(s, &db->c, q);
	db_bind_text(s, 1, k->backend);
	db_bind_text(s, 2, k->arch);
	db_bind_text(s, 3, k->device);
	db_bind_int64(s, 4, k->compute_units);
	if (device_only)
		return;
	db_bind_text(s, 5, k->driver);
	db_bind_text(s, 6, k->runtime);
	db_bind_text(s, 7, k->compiler);
	db_bind_text(s, 8, k->source_hash);
}

/* The job id for KEY; created when CREATE is set, else ROCMD_ENOTFOUND. */
static int
job_id(struct tune_db *db, const struct tune_key *k, int create, int64_t *id)
{
	char kstr[1024];
	struct db_stmt s;
	int err;

	snprintf(kstr, sizeof(kstr), "%s|%s|%s|%d|%s|%s|%s|%s|%s", k->backend, k->arch, k->device,
	         k->compute_units, k->driver, k->runtime, k->compiler, k->source_hash, k->problem);
	if (db->last_job > 0 && !strcmp(kstr, db->last_key)) {
		*id = db->last_job;
		return 0;
	}
	open_key(&s, db, Q_JOB_FIND, k, 0);
	db_bind_text(&s, 9, k->problem);
	err = db_stmt_int(&s, id);
	if (err == ROCMD_ENOTFOUND && create) {
		open_key(&s, db, Q_JOB_ADD, k, 0);
		db_bind_text(&s, 9, k->problem);
		db_bind_int64(&s, 10, db_now_ms());
		err = db_stmt_exec(&s);
		if (err == 0)
			*id = db_last_id(&db->c);
	}
	if (err != 0)
		return err;
	snprintf(db->last_key, sizeof(db->last_key), "%s", kstr);
	db->last_job = *id;
	return 0;
}

/* Opens statement Q with ?1 bound to KEY's job (created when CREATE is set);
 * on failure (ROCMD_ENOTFOUND: no such job) nothing is open. */
static int
open_job(struct db_stmt *s, struct tune_db *db, int q, const struct tune_key *key, int create)
{
	int64_t id;
	int err = job_id(db, key, create, &id);

	if (err != 0)
		return err;
	db_stmt_open(s, &db->c, q);
	db_bind_int64(s, 1, id);
	return 0;
}

static int
db_lookup(void *ctx, const struct tune_key *key, const char *config, struct tune_result *out)
{
	struct db_stmt s;
	int err, found;

	err = open_job(&s, ctx, Q_EVAL_FIND, key, 0);
	if (err != 0)
		return err;
	db_bind_text(&s, 2, config);
	found = db_stmt_row(&s);
	if (found) {
		memset(out, 0, sizeof(*out));
		if (outcome_parse(db_col_text(&s, 0), &out->outcome) < 0)
			return db_stmt_end(&s, ROCMD_ECORRUPT);
		out->median_ms = db_col_double(&s, 1);
		out->p20_ms = db_col_double(&s, 2);
		out->p80_ms = db_col_double(&s, 3);
		out->runs = (int)db_col_int64(&s, 4);
		out->gflops = db_col_double(&s, 5);
		db_col_copy(&s, 6, out->detail, sizeof(out->detail));
	}
	return db_stmt_found(&s, found);
}

static int
db_record(void *ctx, const struct tune_key *key, const char *config, const struct tune_result *r)
{
	struct tune_db *db = ctx;
	struct db_stmt s;
	int err;

	err = open_job(&s, db, Q_EVAL_ADD, key, 1);
	if (err != 0)
		return err;
	db_bind_text(&s, 2, config);
	db_bind_text(&s, 3, outcome_name(r->outcome));
	if (r->outcome == TUNE_OK) {
		db_bind_double(&s, 4, r->median_ms);
		db_bind_double(&s, 5, r->p20_ms);
		db_bind_double(&s, 6, r->p80_ms);
		db_bind_double(&s, 8, r->gflops);
	}
	db_bind_int64(&s, 7, r->runs);
	if (r->detail[0] != '\0')
		db_bind_text(&s, 9, r->detail);
	db_bind_int64(&s, 10, db_now_ms());
	err = db_stmt_exec(&s);
	if (err == 0 && db_changes(&db->c) == 0)
		return ROCMD_EEXISTS; /* stored, and not an outcome that is replaced */
	return err;
}

static int
db_set_winner(void *ctx, const struct tune_key *key, const char *config, double median_ms,
              double default_ms)
{
	struct db_stmt s;
	int err;

	err = open_job(&s, ctx, Q_WINNER_SET, key, 1);
	if (err != 0)
		return err;
	db_bind_text(&s, 2, config);
	db_bind_double(&s, 3, median_ms);
	db_bind_ms(&s, 4, default_ms);
	db_bind_int64(&s, 5, db_now_ms());
	return db_stmt_exec(&s);
}

static int
db_winners(void *ctx, const struct tune_key *key, int any_software, tune_winner_cb cb, void *cbctx)
{
	struct tune_db *db = ctx;
	struct db_stmt s;
	int err = 0;

	/* Q_WINNERS_ANY has no ?5..?8: bind the device columns only. */
	open_key(&s, db, any_software ? Q_WINNERS_ANY : Q_WINNERS, key, any_software);
	while (err == 0 && db_stmt_row(&s))
		err = cb(cbctx, db_col_text(&s, 0), db_col_text(&s, 1), db_col_double(&s, 2));
	return db_stmt_end(&s, err);
}

static int
db_count(void *ctx, const struct tune_key *key, int64_t *n)
{
	struct db_stmt s;
	int err;

	*n = 0;
	err = open_job(&s, ctx, Q_COUNT, key, 0);
	if (err != 0)
		return err == ROCMD_ENOTFOUND ? 0 : err;
	return db_stmt_int(&s, n);
}

/* The default's time declared with the winner (the tuned library keeps it). */
static int
db_winner_default(void *ctx, const struct tune_key *key, double *default_ms)
{
	struct db_stmt s;
	int err, found;

	*default_ms = 0;
	err = open_job(&s, ctx, Q_WINNER_DEFAULT, key, 0);
	if (err != 0)
		return err;
	found = db_stmt_row(&s);
	if (found)
		*default_ms = db_col_double(&s, 0); /* NULL reads as 0: unknown */
	return db_stmt_found(&s, found);
}

static const struct tune_store db_store = {
    .lookup = db_lookup,
    .record = db_record,
    .set_winner = db_set_winner,
    .winners = db_winners,
    .count = db_count,
    .winner_default = db_winner_default,
};

/* The store on MAIN's connection; OWN (may be NULL) is closed with it. */
static int
store_new(struct rocmd_db *main, struct rocmd_db *own, struct tune_store *out)
{
	struct tune_db *db;
	int err;

	memset(out, 0, sizeof(*out));
	db = db_module_new(main, sizeof(*db), queries, Q_COUNT_, &err);
	if (db == NULL) {
		rocmd_db_close(own);
		return err;
	}
	db->own = own;
	*out = db_store;
	out->ctx = db;
	return 0;
}

int
tune_db_open(const char *path, struct tune_store *out, char *why, size_t whylen)
{
	struct rocmd_db *rdb = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	/* Integrity check and migrations (tune tables come with version 3). */
	err = rocmd_db_open(path, &rdb, why, whylen);
	if (err < 0)
		return err;
	return store_new(rdb, rdb, out);
}

int
tune_db_attach(struct rocmd_db *main, struct tune_store *out)
{
	int err = store_new(main, NULL, out);

	/* Not offered on the daemon's connection (it never was): the tuned
	 * libraries the daemon builds keep the default's time unknown. */
	out->winner_default = NULL;
	return err;
}

void
tune_db_close(struct tune_store *st)
{
	struct tune_db *db = st->ctx;

	if (db != NULL) {
		struct rocmd_db *own = db->own;

		db_module_free(db);
		rocmd_db_close(own);
	}
	st->ctx = NULL;
}
