/*
 * Unit tests for the idle tuner's job queue (db/db-tune-queue.c, migration 7)
 * and the tuner's store on the daemon's connection (tune_db_attach): jobs are
 * added once per device, SDK and problem, bad fields are refused, the next job
 * is the interrupted one first, progress and results stay after the database
 * is closed and opened again, an SDK change marks the old jobs stale and the
 * re-tunes name their seeds, a driver change does the same, jobs from before
 * the queue knew drivers are adopted, and a database at schema 6 is upgraded.
 * Vendor jobs (migration 9): every field round-trips, the queue runs the one
 * of the largest calls x time first, and a library change makes a target's
 * jobs stale with their re-tunes seeded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/error.h"
#include "db/db-internal.h"
#include "db/db-tune-queue.h"
#include "db/db-tune.h"
#include "db/db.h"

struct fixture {
	char dir[256];
	char path[300];
	struct rocmd_db *db;
	struct rocmd_tune_queue_db *q;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char why[256];

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/rocmd-test-tq-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/rocmd.db", f->dir);
	if (rocmd_db_open(f->path, &f->db, why, sizeof(why)) < 0 ||
	    rocmd_tune_queue_attach(f->db, &f->q) < 0)
		return -1;
	*state = f;
	return 0;
}

static void
reopen(struct fixture *f)
{
	char why[256];

	rocmd_tune_queue_detach(f->q);
	rocmd_db_close(f->db);
	assert_int_equal(rocmd_db_open(f->path, &f->db, why, sizeof(why)), 0);
	assert_int_equal(rocmd_tune_queue_attach(f->db, &f->q), 0);
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[400];

	rocmd_tune_queue_detach(f->q);
	rocmd_db_close(f->db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void
job_init(struct rocmd_tune_job *j, const char *sdk, int64_t m, const char *origin)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->backend, sizeof(j->backend), "cpu");
	snprintf(j->arch, sizeof(j->arch), "x86_64");
	snprintf(j->device, sizeof(j->device), "test cpu");
	snprintf(j->sdk, sizeof(j->sdk), "%s", sdk);
	snprintf(j->driver, sizeof(j->driver), "drv 1");
	snprintf(j->dtype, sizeof(j->dtype), "fp32");
	snprintf(j->trans, sizeof(j->trans), "NN");
	snprintf(j->origin, sizeof(j->origin), "%s", origin);
	j->m = m;
	j->n = 64;
	j->k = 64;
	j->batch = 1;
	j->budget = 20;
}

static int
count_cb(const struct rocmd_tune_job *j, void *ctx)
{
	(void)j;
	(*(int *)ctx)++;
	return 0;
}

static int
count(struct fixture *f, int all)
{
	int n = 0;

	assert_int_equal(rocmd_tune_queue_list(f->q, all, count_cb, &n), 0);
	return n;
}

static void
test_add_once(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j, got;
	int64_t id1, id2;
	int created;

	job_init(&j, "5.7.1", 16, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &id1, &created), 0);
	assert_int_equal(created, 1);
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 2000, &id2, &created), 0);
	assert_int_equal(created, 0);
	assert_int_equal(id1, id2);
	j.m = 32;
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 2000, &id2, &created), 0);
	assert_int_equal(created, 1);
	assert_true(id2 != id1);
	assert_int_equal(rocmd_tune_queue_get(f->q, id1, &got), 0);
	assert_string_equal(got.state, "queued");
	assert_string_equal(got.origin, "default");
	assert_int_equal(got.m, 16);
	assert_int_equal(got.created_ms, 1000);
	assert_int_equal(rocmd_tune_queue_get(f->q, 999, &got), ROCMD_ENOTFOUND);
	assert_int_equal(count(f, 0), 2);
}

static void
vendor_job(struct rocmd_tune_job *j, const char *target, int64_t m, int64_t calls, double ms)
{
	memset(j, 0, sizeof(*j));
	snprintf(j->backend, sizeof(j->backend), "rocblas");
	snprintf(j->sdk, sizeof(j->sdk), "6.2.0");
	snprintf(j->dtype, sizeof(j->dtype), "fp16");
	snprintf(j->trans, sizeof(j->trans), "TN");
	j->m = m;
	j->n = 16;
	j->k = 256;
	j->batch = 1;
	j->lda = 512;
	j->ldb = 0;
	j->ldc = 300;
	j->alpha = 0.5;
	j->beta = 1;
	snprintf(j->origin, sizeof(j->origin), "user");
	snprintf(j->source, sizeof(j->source), "capture");
	snprintf(j->detail, sizeof(j->detail), "./app --serve");
	snprintf(j->target, sizeof(j->target), "%s", target);
	snprintf(j->library, sizeof(j->library), "/opt/rocm/lib/librocblas.so.4");
	j->calls = calls;
	j->est_ms = ms;
	j->budget = 50;
}

static int stale_cb_count;

static void
on_stale_vendor(const struct rocmd_tune_job *old, void *ctx)
{
	stale_cb_count++;
	assert_string_equal(old->lib_digest, "aaaa");
}

static void
test_vendor_jobs(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j, got;
	int64_t a, b, c, fam, id;
	int created, n = 0;

	vendor_job(&j, "sdk-1", 256, 3, 2.0);
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &a, &created), 0);
	assert_int_equal(created, 1);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.target, "sdk-1");
	assert_string_equal(got.source, "capture");
	assert_string_equal(got.library, "/opt/rocm/lib/librocblas.so.4");
	assert_string_equal(got.detail, "./app --serve");
	assert_int_equal(got.calls, 3);
	assert_int_equal(got.lda, 512);
	assert_int_equal(got.ldb, 0);
	assert_int_equal(got.ldc, 300);
	assert_true(got.alpha == 0.5 && got.beta == 1);
	assert_true(got.est_ms == 2.0);
	/* The same problem for the same target is one job; a layout is another. */
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &id, &created), 0);
	assert_int_equal(created, 0);
	j.ldc = 0;
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &b, &created), 0);
	assert_int_equal(created, 1);
	/* A shape family's job of a far larger expected time still waits for
	 * the programs' own GEMMs. */
	vendor_job(&j, "sdk-2", 4096, 0, 500.0);
	snprintf(j.source, sizeof(j.source), "family");
	snprintf(j.origin, sizeof(j.origin), "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &fam, &created), 0);
	vendor_job(&j, "sdk-2", 128, 100, 0.5); /* 50 ms in all: first */
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1000, &c, &created), 0);
	assert_int_equal(rocmd_tune_queue_next_vendor(f->q, &got), 0);
	assert_int_equal(got.id, c);
	assert_true(got.id != fam);
	/* A kernel job never comes from the vendor queue, nor the reverse. */
	assert_int_equal(rocmd_tune_queue_next(f->q, "rocblas", "", "", "6.2.0", "", &got),
	                 ROCMD_ENOTFOUND);
	/* The library the job ran on, then another: stale, the callback sees it. */
	assert_int_equal(rocmd_tune_queue_adopt(f->q, a, "gfx1103", "Radeon", "drv 1", "aaaa", 2000),
	                 0);
	assert_int_equal(rocmd_tune_queue_spread(f->q, a, 1.5, 1.8, 1.9, 2000), 0);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.lib_digest, "aaaa");
	assert_string_equal(got.arch, "gfx1103");
	assert_true(got.best_hi_ms == 1.5 && got.default_lo_ms == 1.8 && got.est_ms == 1.9);
	assert_int_equal(rocmd_tune_queue_stale_target(f->q, "sdk-1", "rocblas", "aaaa", "drv 1",
	                                               3000, on_stale_vendor, NULL, &n),
	                 0);
	assert_int_equal(n, 0);
	assert_int_equal(rocmd_tune_queue_stale_target(f->q, "sdk-1", "rocblas", "bbbb", "drv 1",
	                                               3000, on_stale_vendor, NULL, &n),
	                 0);
	assert_int_equal(n, 1); /* b never ran: not stale */
	assert_int_equal(stale_cb_count, 1);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.state, "stale");
	assert_int_equal(rocmd_tune_queue_get(f->q, b, &got), 0);
	assert_string_equal(got.state, "queued");
}

static void
test_refuses_bad_fields(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j;
	int64_t id;
	int created;

	job_init(&j, "none", 16, "default");
	snprintf(j.dtype, sizeof(j.dtype), "fp64");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &id, &created), ROCMD_EINVAL);
	job_init(&j, "none", 0, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &id, &created), ROCMD_EINVAL);
	job_init(&j, "none", 16, "robot");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &id, &created), ROCMD_EINVAL);
	job_init(&j, "none", 16, "user");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &id, &created), 0);
	assert_int_equal(rocmd_tune_queue_set_state(f->q, id, "sleeping", NULL, 2), ROCMD_EINVAL);
	assert_int_equal(count(f, 1), 1);
}

static void
test_next_resume_and_survive(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j, got;
	int64_t a, b;
	int created, n;

	job_init(&j, "5.7.1", 16, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &a, &created), 0);
	j.m = 32;
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 2, &b, &created), 0);
	/* Oldest queued first. */
	assert_int_equal(
	    rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 1", &got), 0);
	assert_int_equal(got.id, a);
	/* Another SDK or device has nothing. */
	assert_int_equal(
	    rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "6.2", "drv 1", &got),
	    ROCMD_ENOTFOUND);
	/* A job a user added goes ahead of older default ones. */
	{
		struct rocmd_tune_job u;
		int64_t uid;

		job_init(&u, "5.7.1", 48, "user");
		assert_int_equal(rocmd_tune_queue_add(f->q, &u, 3, &uid, &created), 0);
		assert_int_equal(rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "5.7.1",
		                                       "drv 1", &got),
		                 0);
		assert_int_equal(got.id, uid);
		assert_int_equal(rocmd_tune_queue_set_state(f->q, uid, "stale", NULL, 3), 0);
	}
	/* A job cut short (running) comes before older queued ones. */
	assert_int_equal(rocmd_tune_queue_set_state(f->q, b, "running", NULL, 3), 0);
	assert_int_equal(rocmd_tune_queue_progress(f->q, b, 7, 5, 1.25, 4), 0);
	reopen(f);
	assert_int_equal(
	    rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 1", &got), 0);
	assert_int_equal(got.id, b);
	assert_string_equal(got.state, "running");
	assert_int_equal(got.evals, 7);
	assert_int_equal(got.measured, 5);
	assert_true(got.best_ms > 1.24 && got.best_ms < 1.26);
	/* Pause everything, resume everything. */
	assert_int_equal(rocmd_tune_queue_move_all(f->q, "queued", "paused", 5, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.state, "paused");
	assert_int_equal(rocmd_tune_queue_move_all(f->q, "paused", "queued", 6, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rocmd_tune_queue_finish(f->q, b, "done", "MT0=8;MT1=8", 1.0, 2.0, NULL, 7),
	                 0);
	assert_int_equal(rocmd_tune_queue_get(f->q, b, &got), 0);
	assert_string_equal(got.state, "done");
	assert_string_equal(got.winner, "MT0=8;MT1=8");
	assert_int_equal(got.finished_ms, 7);
}

struct retune {
	struct fixture *f;
	int64_t ids[8];
	int n;
};

static void
on_stale(const struct rocmd_tune_job *old, void *ctx)
{
	struct retune *r = ctx;
	struct rocmd_tune_job j = *old;
	int created;

	snprintf(j.sdk, sizeof(j.sdk), "6.2.4");
	snprintf(j.origin, sizeof(j.origin), "retune");
	j.seeded_from = old->id;
	assert_int_equal(rocmd_tune_queue_add(r->f->q, &j, 100, &r->ids[r->n], &created), 0);
	assert_int_equal(created, 1);
	r->n++;
}

static void
test_stale_and_seeded_retune(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j, got;
	struct retune r = {f, {0}, 0};
	int64_t a, b, other;
	int created, n;

	job_init(&j, "5.7.1", 16, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &a, &created), 0);
	assert_int_equal(rocmd_tune_queue_finish(f->q, a, "done", "MT0=8", 1.0, 2.0, NULL, 2), 0);
	j.m = 32;
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &b, &created), 0);
	/* Another device's job is not touched. */
	snprintf(j.device, sizeof(j.device), "other");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &other, &created), 0);

	assert_int_equal(rocmd_tune_queue_stale(f->q, "cpu", "x86_64", "test cpu", "6.2.4", "drv 1",
	                                        50, on_stale, &r, &n),
	                 0);
	assert_int_equal(n, 2);
	assert_int_equal(r.n, 2);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.state, "stale");
	assert_string_equal(got.winner, "MT0=8"); /* the result stays, as history */
	assert_int_equal(rocmd_tune_queue_get(f->q, r.ids[0], &got), 0);
	assert_string_equal(got.state, "queued");
	assert_string_equal(got.origin, "retune");
	assert_string_equal(got.sdk, "6.2.4");
	assert_int_equal(got.seeded_from, a);
	assert_int_equal(rocmd_tune_queue_get(f->q, other, &got), 0);
	assert_string_equal(got.state, "queued");
	/* Running it again changes nothing: the new jobs are under the new SDK. */
	assert_int_equal(rocmd_tune_queue_stale(f->q, "cpu", "x86_64", "test cpu", "6.2.4", "drv 1",
	                                        60, NULL, NULL, &n),
	                 0);
	assert_int_equal(n, 0);
	assert_int_equal(count(f, 0), 3);
	assert_int_equal(count(f, 1), 5);
	/* The old problem can be queued again under the old SDK (a downgrade). */
	job_init(&j, "5.7.1", 16, "retune");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 70, &other, &created), 0);
	assert_int_equal(created, 1);
}

struct redriver {
	struct fixture *f;
	int64_t ids[8];
	int n;
};

static void
on_stale_driver(const struct rocmd_tune_job *old, void *ctx)
{
	struct redriver *r = ctx;
	struct rocmd_tune_job j = *old;
	int created;

	assert_string_equal(old->driver, "drv 1");
	snprintf(j.driver, sizeof(j.driver), "drv 2");
	snprintf(j.origin, sizeof(j.origin), "retune");
	j.seeded_from = old->id;
	assert_int_equal(rocmd_tune_queue_add(r->f->q, &j, 100, &r->ids[r->n], &created), 0);
	assert_int_equal(created, 1);
	r->n++;
}

static void
test_driver_change(void **state)
{
	struct fixture *f = *state;
	struct rocmd_tune_job j, got;
	struct redriver r = {f, {0}, 0};
	int64_t a, b, c;
	int created, n;

	job_init(&j, "5.7.1", 16, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &a, &created), 0);
	assert_int_equal(rocmd_tune_queue_finish(f->q, a, "done", "MT0=8", 1.0, 2.0, NULL, 2), 0);
	/* The same problem under another driver is another job. */
	snprintf(j.driver, sizeof(j.driver), "drv 0");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &b, &created), 0);
	assert_int_equal(created, 1);
	assert_int_equal(rocmd_tune_queue_set_state(f->q, b, "stale", NULL, 2), 0);
	/* The next job is looked up under the driver too. */
	job_init(&j, "5.7.1", 32, "default");
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &c, &created), 0);
	assert_int_equal(
	    rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 2", &got),
	    ROCMD_ENOTFOUND);
	/* Same SDK, new driver: stale, and the re-tunes are queued under it. */
	assert_int_equal(rocmd_tune_queue_stale(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 2",
	                                        50, on_stale_driver, &r, &n),
	                 0);
	assert_int_equal(n, 2);
	assert_int_equal(rocmd_tune_queue_get(f->q, a, &got), 0);
	assert_string_equal(got.state, "stale");
	assert_int_equal(rocmd_tune_queue_get(f->q, r.ids[0], &got), 0);
	assert_string_equal(got.driver, "drv 2");
	assert_string_equal(got.sdk, "5.7.1");
	assert_int_equal(got.seeded_from, a);
	assert_int_equal(
	    rocmd_tune_queue_next(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 2", &got), 0);
	/* Jobs from schema 7 (driver '') are adopted, not re-tuned. */
	job_init(&j, "5.7.1", 64, "default");
	j.driver[0] = '\0';
	assert_int_equal(rocmd_tune_queue_add(f->q, &j, 1, &c, &created), 0);
	assert_int_equal(
	    rocmd_tune_queue_adopt_driver(f->q, "cpu", "x86_64", "test cpu", "drv 2", 70, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rocmd_tune_queue_get(f->q, c, &got), 0);
	assert_string_equal(got.driver, "drv 2");
	assert_string_equal(got.state, "queued");
	assert_int_equal(rocmd_tune_queue_stale(f->q, "cpu", "x86_64", "test cpu", "5.7.1", "drv 2",
	                                        80, NULL, NULL, &n),
	                 0);
	assert_int_equal(n, 0);
}

static void
test_upgrade_from_schema_7(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db;
	struct rocmd_tune_queue_db *q;
	struct rocmd_tune_job got;
	char path[320], why[256];

	snprintf(path, sizeof(path), "%s/v7.db", f->dir);
	assert_int_equal(rocmd_db_open_with(path, rocmd_migrations, 7, &db, why, sizeof(why)), 0);
	assert_int_equal(sqlite3_exec(rocmd_db_sqlite(db),
	                              "INSERT INTO tune_queue (backend, arch, device, sdk, "
	                              "dtype, trans, m, n, k, origin, state, budget, "
	                              "created_ms, updated_ms) VALUES ('cpu', 'x86_64', "
	                              "'test cpu', '5.7.1', 'fp32', 'NN', 8, 8, 8, "
	                              "'default', 'done', 5, 1, 1)",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	rocmd_db_close(db);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	assert_true(rocmd_db_schema_version(db) >= 8);
	assert_int_equal(rocmd_tune_queue_attach(db, &q), 0);
	assert_int_equal(rocmd_tune_queue_get(q, 1, &got), 0);
	assert_string_equal(got.driver, "");
	assert_string_equal(got.state, "done");
	rocmd_tune_queue_detach(q);
	rocmd_db_close(db);
}

static void
test_tuner_store_on_daemon_connection(void **state)
{
	struct fixture *f = *state;
	struct tune_store st;
	struct tune_key key;
	struct tune_result r, got;
	int64_t n;

	memset(&key, 0, sizeof(key));
	snprintf(key.backend, sizeof(key.backend), "cpu");
	snprintf(key.arch, sizeof(key.arch), "x86_64");
	snprintf(key.device, sizeof(key.device), "test cpu");
	snprintf(key.problem, sizeof(key.problem), "fp32 NN 16x64x64");
	memset(&r, 0, sizeof(r));
	r.outcome = TUNE_OK;
	r.median_ms = 0.5;
	r.runs = 9;
	assert_int_equal(tune_db_attach(f->db, &st), 0);
	assert_int_equal(st.record(st.ctx, &key, "MT0=8", &r), 0);
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, 1);
	tune_db_close(&st);
	reopen(f); /* the daemon's connection stays usable and the row durable */
	assert_int_equal(tune_db_attach(f->db, &st), 0);
	assert_int_equal(st.lookup(st.ctx, &key, "MT0=8", &got), 0);
	assert_true(got.median_ms > 0.49 && got.median_ms < 0.51);
	/* A result stays; an outcome of rocmd's own host code is replaced. */
	assert_int_equal(st.record(st.ctx, &key, "MT0=8", &r), ROCMD_EEXISTS);
	memset(&got, 0, sizeof(got));
	got.outcome = TUNE_LAUNCH_FAILED;
	snprintf(got.detail, sizeof(got.detail), "launch failed: error io");
	assert_int_equal(st.record(st.ctx, &key, "MT0=16", &got), 0);
	got.outcome = TUNE_WRONG_RESULT;
	assert_int_equal(st.record(st.ctx, &key, "MT0=32", &got), 0);
	r.median_ms = 0.25;
	assert_int_equal(st.record(st.ctx, &key, "MT0=16", &r), 0);
	assert_int_equal(st.record(st.ctx, &key, "MT0=32", &r), ROCMD_EEXISTS);
	assert_int_equal(st.lookup(st.ctx, &key, "MT0=16", &got), 0);
	assert_int_equal(got.outcome, TUNE_OK);
	assert_true(got.median_ms > 0.24 && got.median_ms < 0.26);
	assert_string_equal(got.detail, "");
	assert_int_equal(st.lookup(st.ctx, &key, "MT0=32", &got), 0);
	assert_int_equal(got.outcome, TUNE_WRONG_RESULT);
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, 3);
	tune_db_close(&st);
}

static void
test_upgrade_from_schema_6(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db;
	char path[320], why[256];

	snprintf(path, sizeof(path), "%s/old.db", f->dir);
	assert_int_equal(rocmd_db_open_with(path, rocmd_migrations, 6, &db, why, sizeof(why)), 0);
	assert_int_equal(rocmd_db_schema_version(db), 6);
	rocmd_db_close(db);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	assert_true(rocmd_db_schema_version(db) >= 7);
	rocmd_db_close(db);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_add_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_bad_fields, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_next_resume_and_survive, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stale_and_seeded_retune, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tuner_store_on_daemon_connection, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_from_schema_6, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_driver_change, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_from_schema_7, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vendor_jobs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
