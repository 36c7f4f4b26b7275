/*
 * Unit tests for db/: creating, reopening and upgrading databases, the
 * promise that a refused or failed open leaves the file byte for byte as it
 * was, the event history, daemon runs and the status counts. Each test works
 * in its own temporary folder, removed afterwards. The old-schema fixtures
 * (tests/data/db-schema-vN.sql, one per version before the newest) stand for
 * databases older rocmds wrote; each is upgraded and checked row by row.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "common/error.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "db/db-sdk.h"
#include "db/db-tune-queue.h"
#include "db/db-tune.h"
#include "db/db.h"

#ifndef ROCMD_SOURCE_DIR
#error "ROCMD_SOURCE_DIR must name the source tree (set by tests/unit/CMakeLists.txt)"
#endif

struct fixture {
	char dir[512];
	char db[600];
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (f == NULL)
		return -1;
	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	snprintf(f->dir, sizeof(f->dir), "%s/rocmd-test-db-XXXXXX", tmp);
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return -1;
	}
	snprintf(f->db, sizeof(f->db), "%s/rocmd.db", f->dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char p[1024];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, de->d_name);
		unlink(p);
	}
	if (d != NULL)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The whole content of PATH (malloc'd) and its size; NULL if it is missing. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	*len = 0;
	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf != NULL && n > 0)
		*len = fread(buf, 1, (size_t)n, fp);
	fclose(fp);
	return buf;
}

static void
assert_same_bytes(const unsigned char *a, size_t alen, const char *path)
{
	size_t blen;
	unsigned char *b = slurp(path, &blen);

	assert_non_null(b);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(b);
}

static int
file_exists_nonempty(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_size > 0;
}

/* Runs SQL on PATH through a plain SQLite connection, as another tool would. */
static void
raw_exec(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(h);
}

static int64_t
raw_int(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* Loads tests/data/db-schema-vVERSION.sql into a new database at PATH. */
static void
load_fixture(const char *path, int version)
{
	char fixture[512];
	size_t len;
	char *sql;

	snprintf(fixture, sizeof(fixture), "%s/tests/data/db-schema-v%d.sql", ROCMD_SOURCE_DIR,
		 version);
	sql = (char *)slurp(fixture, &len);
	if (sql == NULL)
		fail_msg("%s: missing (every schema version before the newest needs one)", fixture);
	sql = realloc(sql, len + 1);
	sql[len] = '\0';
	raw_exec(path, sql);
	free(sql);
}

/* Collects events from rocmd_db_events_list. */
struct seen {
	int n;
	int64_t id[64];
	char kind[64][64];
	char detail[64][128];
	int stop_after; /* 0 = never */
};

static int
collect(const struct rocmd_event *ev, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 64) {
		s->id[s->n] = ev->id;
		snprintf(s->kind[s->n], sizeof(s->kind[0]), "%s", ev->kind);
		snprintf(s->detail[s->n], sizeof(s->detail[0]), "%s",
			 ev->detail != NULL ? ev->detail : "(null)");
		assert_true(ev->time_ms > 0);
		assert_non_null(ev->message);
	}
	s->n++;
	if (s->stop_after > 0 && s->n == s->stop_after)
		return 42;
	return 0;
}

static struct rocmd_db *
open_ok(const char *path)
{
	struct rocmd_db *db = NULL;
	char why[512];
	int err = rocmd_db_open(path, &db, why, sizeof(why));

	if (err != 0)
		fail_msg("open %s: %s: %s", path, rocmd_err_name(err), why);
	assert_non_null(db);
	return db;
}

static void
test_fresh_create(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	struct rocmd_db_info info;
	struct rocmd_db_counts c;
	char wal[700];
	unsigned char *before;
	size_t len;

	assert_int_equal(rocmd_db_schema_version(db), rocmd_db_latest_version());
	assert_true(rocmd_db_latest_version() >= 2);
	assert_int_equal(rocmd_db_info(db, &info), 0);
	assert_int_equal(info.schema_version, rocmd_db_latest_version());
	assert_int_equal(info.wal, 1);
	assert_int_equal(info.foreign_keys, 1);
	assert_int_equal(info.synchronous, 2);
	assert_int_equal(info.busy_timeout_ms, 5000);
	assert_int_equal(rocmd_db_counts(db, &c), 0);
	assert_int_equal(c.events + c.sdks + c.packages + c.deployments + c.tune_jobs, 0);
	assert_int_equal(rocmd_db_events_last_id(db), 0);
	rocmd_db_close(db);
	rocmd_db_close(NULL);

	/* Closed cleanly: the WAL is folded in, the file alone is the database. */
	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	assert_false(file_exists_nonempty(wal));
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), rocmd_db_latest_version());

	/* Reopening an up-to-date database changes nothing. */
	before = slurp(f->db, &len);
	db = open_ok(f->db);
	assert_int_equal(rocmd_db_schema_version(db), rocmd_db_latest_version());
	assert_int_equal(rocmd_db_info(db, &info), 0);
	assert_int_equal(info.wal, 1);
	assert_int_equal(info.foreign_keys, 1);
	rocmd_db_close(db);
	assert_same_bytes(before, len, f->db);
	free(before);
}

static void
test_upgrade_from_v1(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db;
	struct rocmd_db_info info;
	struct seen s = {0};
	int64_t id, run;
	int clean;

	load_fixture(f->db, 1);
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 1);

	db = open_ok(f->db);
	assert_int_equal(rocmd_db_schema_version(db), rocmd_db_latest_version());
	assert_int_equal(rocmd_db_info(db, &info), 0);
	assert_int_equal(info.wal, 1);
	assert_int_equal(info.foreign_keys, 1);

	/* Every old event is kept, with its id and detail. */
	assert_int_equal(rocmd_db_events_list(db, 0, 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.id[0], 1);
	assert_int_equal(s.id[1], 2);
	assert_int_equal(s.id[2], 4);
	assert_int_equal(s.id[3], 5);
	assert_string_equal(s.kind[1], "sdk.added");
	assert_string_equal(s.detail[1], "{\"path\":\"/opt/rocm-6.1.2\",\"version\":\"6.1.2\"}");
	assert_string_equal(s.detail[2], "(null)");
	assert_int_equal(rocmd_db_events_last_id(db), 5);

	/* AUTOINCREMENT carried over: ids are never reused. */
	assert_int_equal(rocmd_db_event_add(db, "daemon.start", "upgraded", NULL, &id), 0);
	assert_int_equal(id, 6);
	/* Migration 2's table is there. */
	assert_int_equal(rocmd_db_run_begin(db, 1234, "0.1.0", &run, &clean), 0);
	assert_true(run > 0);
	assert_int_equal(clean, 1);
	rocmd_db_close(db);
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), rocmd_db_latest_version());
}

/* Writes enough to spill SQLite's page cache to the file before failing, so
 * the rollback itself is what keeps the bytes. */
static const char failing_sql[] =
	"CREATE TABLE big (x BLOB);\n"
	"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 40000)\n"
	"  INSERT INTO big SELECT randomblob(200) FROM c;\n"
	"UPDATE event SET message = 'overwritten';\n"
	"PRAGMA user_version = 77;\n"
	"SELECT no_such_function();\n";

static void
check_failed_migration(const char *path)
{
	struct rocmd_migration list[3];
	struct rocmd_db *db = (struct rocmd_db *)list; /* junk: open must reset it */
	unsigned char *before;
	char why[512];
	size_t len;
	int err;

	list[0] = rocmd_migrations[0];
	list[1] = (struct rocmd_migration){2, "injected failure", failing_sql};
	before = slurp(path, &len);
	assert_non_null(before);

	err = rocmd_db_open_with(path, list, 2, &db, why, sizeof(why));
	assert_int_equal(err, ROCMD_EMIGRATE);
	assert_null(db);
	assert_non_null(strstr(why, "migration 2 \"injected failure\""));
	assert_non_null(strstr(why, "no such function: no_such_function"));
	assert_non_null(strstr(why, path));

	/* Byte for byte as it was, and still usable at version 1. */
	assert_same_bytes(before, len, path);
	assert_int_equal(raw_int(path, "PRAGMA user_version"), 1);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'big'"), 0);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM event WHERE message = 'overwritten'"), 0);
	free(before);
}

static void
test_failed_migration_wal_file(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = NULL;
	char why[512];

	/* A version-1 database rocmd itself wrote (WAL mode), with some events. */
	assert_int_equal(rocmd_db_open_with(f->db, rocmd_migrations, 1, &db, why, sizeof(why)), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(rocmd_db_event_add(db, "test.fill", "some text", "{\"i\":1}", NULL), 0);
	rocmd_db_close(db);
	check_failed_migration(f->db);

	/* The next open with migrations that work completes the upgrade. */
	db = open_ok(f->db);
	assert_int_equal(rocmd_db_schema_version(db), rocmd_db_latest_version());
	assert_int_equal(rocmd_db_events_last_id(db), 50);
	rocmd_db_close(db);
}

static void
test_failed_migration_rollback_journal_file(void **state)
{
	struct fixture *f = *state;

	/* The fixture loads in rollback-journal mode: the WAL switch, which
	 * rewrites the header, must not happen before migrations succeed. */
	load_fixture(f->db, 1);
	check_failed_migration(f->db);
}

static void
test_failed_later_migration(void **state)
{
	struct fixture *f = *state;
	struct rocmd_migration list[3] = {
		rocmd_migrations[0],
		{2, "works", "CREATE TABLE two (x INTEGER);"},
		{3, "breaks", "CREATE TABLE three (x INTEGER); INSERT INTO nowhere VALUES (1);"},
	};
	struct rocmd_db *db = NULL;
	char why[512];

	assert_int_equal(rocmd_db_open_with(f->db, list, 1, &db, why, sizeof(why)), 0);
	rocmd_db_close(db);
	assert_int_equal(rocmd_db_open_with(f->db, list, 3, &db, why, sizeof(why)), ROCMD_EMIGRATE);
	assert_null(db);
	assert_non_null(strstr(why, "migration 3 \"breaks\""));
	assert_non_null(strstr(why, "no such table: nowhere"));
	assert_non_null(strstr(why, "left at schema version 2"));
	/* Each migration is its own transaction: 2 stays, 3 left no trace. */
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 2);
	assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name = 'two'"), 1);
	assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name = 'three'"),
			 0);
}

static void
test_bad_migration_list(void **state)
{
	struct fixture *f = *state;
	struct rocmd_migration list[2] = {
		{1, "one", "CREATE TABLE one (x);"},
		{3, "gap", "CREATE TABLE three (x);"},
	};
	struct rocmd_db *db = NULL;
	char why[256];

	assert_int_equal(rocmd_db_open_with(f->db, list, 2, &db, why, sizeof(why)), ROCMD_EINVAL);
	assert_null(db);
	assert_int_equal(rocmd_db_open_with(NULL, list, 1, &db, why, sizeof(why)), ROCMD_EINVAL);
	assert_int_equal(rocmd_db_open_with("", list, 1, &db, why, sizeof(why)), ROCMD_EINVAL);
}

static void
test_newer_schema_refused(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	unsigned char *before;
	char why[512];
	size_t len;

	assert_int_equal(rocmd_db_event_add(db, "daemon.start", "x", NULL, NULL), 0);
	rocmd_db_close(db);
	raw_exec(f->db, "PRAGMA user_version = 999;");
	before = slurp(f->db, &len);

	db = (struct rocmd_db *)before; /* junk: open must reset it */
	assert_int_equal(rocmd_db_open(f->db, &db, why, sizeof(why)), ROCMD_ESCHEMA_NEWER);
	assert_null(db);
	assert_non_null(strstr(why, "999"));
	assert_same_bytes(before, len, f->db);
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 999);
	free(before);
}

static void
test_corrupt_file_refused(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	unsigned char *before, junk[512];
	char why[512], msg[1024];
	size_t len;
	int fd, err;

	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	for (int i = 0; i < 300; i++)
		assert_int_equal(rocmd_db_event_add(db, i % 2 ? "a.x" : "b.y", msg, NULL, NULL), 0);
	rocmd_db_close(db);

	/* Scribble over the middle of a page in the middle of the file. */
	before = slurp(f->db, &len);
	free(before);
	assert_true(len > 64 * 4096);
	memset(junk, 0xa5, sizeof(junk));
	fd = open(f->db, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, sizeof(junk), (off_t)(len / 2 / 4096) * 4096 + 8),
			 (ssize_t)sizeof(junk));
	close(fd);
	before = slurp(f->db, &len);

	db = NULL;
	err = rocmd_db_open(f->db, &db, why, sizeof(why));
	assert_int_equal(err, ROCMD_ECORRUPT);
	assert_null(db);
	assert_non_null(strstr(why, f->db));
	assert_same_bytes(before, len, f->db);
	free(before);
}

static void
test_not_a_database(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = NULL;
	unsigned char *before;
	char why[512], missing[700];
	size_t len;
	FILE *fp = fopen(f->db, "w");

	assert_non_null(fp);
	for (int i = 0; i < 200; i++)
		fputs("this is a text file, not a database\n", fp);
	fclose(fp);
	before = slurp(f->db, &len);

	assert_int_equal(rocmd_db_open(f->db, &db, why, sizeof(why)), ROCMD_ECORRUPT);
	assert_null(db);
	assert_non_null(strstr(why, f->db));
	assert_same_bytes(before, len, f->db);
	free(before);

	/* A folder that does not exist: a system error, not a crash. */
	snprintf(missing, sizeof(missing), "%s/no/such/dir/rocmd.db", f->dir);
	assert_int_equal(rocmd_db_open(missing, &db, why, sizeof(why)), -ENOENT);
	assert_null(db);
	assert_non_null(strstr(why, missing));
}

static void
test_events(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	static const char *const kinds[] = {"daemon.start", "sdk.added", "daemon.stop", "sdk_x",
					    "%special",     "daemon.start", "daemonic"};
	struct rocmd_db_counts c;
	struct seen s;
	int64_t id, ids[7];

	for (int i = 0; i < 7; i++) {
		char detail[64];
		snprintf(detail, sizeof(detail), "{\"n\":%d}", i);
		assert_int_equal(rocmd_db_event_add(db, kinds[i], "msg", i == 2 ? NULL : detail,
						    &ids[i]),
				 0);
		assert_int_equal(ids[i], i + 1);
	}
	assert_int_equal(rocmd_db_events_last_id(db), 7);

	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 7);
	for (int i = 0; i < 7; i++) {
		assert_int_equal(s.id[i], ids[i]);
		assert_string_equal(s.kind[i], kinds[i]);
	}
	assert_string_equal(s.detail[0], "{\"n\":0}");
	assert_string_equal(s.detail[2], "(null)");

	/* Prefix filter. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, "daemon.", collect, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.id[0], 1);
	assert_int_equal(s.id[1], 3);
	assert_int_equal(s.id[2], 6);
	/* '_' and '%' are plain characters, not LIKE wildcards. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, "sdk_", collect, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.kind[0], "sdk_x");
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, "%", collect, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.kind[0], "%special");
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, "nothing", collect, &s), 0);
	assert_int_equal(s.n, 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 0, "", collect, &s), 0);
	assert_int_equal(s.n, 7);

	/* Limit, after_id, and both with a filter. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 0, 2, NULL, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.id[1], 2);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 5, 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.id[0], 6);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 1, 1, "daemon", collect, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.id[0], 3);
	memset(&s, 0, sizeof(s));
	assert_int_equal(rocmd_db_events_list(db, 7, 0, NULL, collect, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(rocmd_db_events_list(db, 0, -1, NULL, collect, &s), ROCMD_EINVAL);

	/* A callback's non-zero return stops the walk and comes back. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 3;
	assert_int_equal(rocmd_db_events_list(db, 0, 0, NULL, collect, &s), 42);
	assert_int_equal(s.n, 3);

	assert_int_equal(rocmd_db_counts(db, &c), 0);
	assert_int_equal(c.events, 7);
	assert_int_equal(c.sdks, 0);

	/* A database closed and reopened keeps its events. */
	rocmd_db_close(db);
	db = open_ok(f->db);
	assert_int_equal(rocmd_db_events_last_id(db), 7);
	assert_int_equal(rocmd_db_event_add(db, "x", "after reopen", NULL, &id), 0);
	assert_int_equal(id, 8);
	rocmd_db_close(db);
}

static void
test_invalid_detail_refused(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	static const char *const bad[] = {"{bad", "", "{\"a\":1", "{'a':1}", "[1,]", "nul"};
	int64_t id = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rocmd_db_event_add(db, "x", "m", bad[i], &id), ROCMD_EINVAL);
		assert_int_equal(id, 0);
	}
	assert_int_equal(rocmd_db_event_add(NULL, "x", "m", NULL, NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_db_event_add(db, NULL, "m", NULL, NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_db_event_add(db, "", "m", NULL, NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_db_event_add(db, "x", NULL, NULL, NULL), ROCMD_EINVAL);
	assert_int_equal(rocmd_db_events_last_id(db), 0);

	/* Any JSON value is fine, not only objects. */
	assert_int_equal(rocmd_db_event_add(db, "x", "m", "[1, 2, {\"a\": null}]", &id), 0);
	assert_int_equal(rocmd_db_event_add(db, "x", "m", "\"text\"", &id), 0);
	assert_int_equal(rocmd_db_event_add(db, "x", "m", "42", &id), 0);
	assert_int_equal(id, 3);
	rocmd_db_close(db);
}

static void
test_runs_across_crash(void **state)
{
	struct fixture *f = *state;
	struct rocmd_db *db = open_ok(f->db);
	int64_t run, first;
	int clean = -1;

	/* The first run ever: nothing to recover from. */
	assert_int_equal(rocmd_db_run_begin(db, 100, "0.1.0", &first, &clean), 0);
	assert_int_equal(clean, 1);
	assert_int_equal(rocmd_db_run_end(db, first), 0);
	assert_int_equal(rocmd_db_run_end(db, first), 0);
	rocmd_db_close(db);

	/* After a clean stop. */
	db = open_ok(f->db);
	clean = -1;
	assert_int_equal(rocmd_db_run_begin(db, 101, "0.1.0", &run, &clean), 0);
	assert_int_equal(clean, 1);
	assert_true(run > first);
	/* ...this run "crashes": no run_end, the handle just goes away. */
	rocmd_db_close(db);

	db = open_ok(f->db);
	clean = -1;
	assert_int_equal(rocmd_db_run_begin(db, 102, "0.1.0", &run, &clean), 0);
	assert_int_equal(clean, 0);
	assert_int_equal(rocmd_db_run_end(db, run), 0);
	assert_int_equal(rocmd_db_run_end(db, 424242), ROCMD_ENOTFOUND);
	rocmd_db_close(db);

	db = open_ok(f->db);
	assert_int_equal(rocmd_db_run_begin(db, 103, "0.1.0", &run, &clean), 0);
	assert_int_equal(clean, 1);
	rocmd_db_close(db);
	assert_int_equal(raw_int(f->db, "SELECT count(*) FROM daemon_run"), 4);
	assert_int_equal(raw_int(f->db, "SELECT count(*) FROM daemon_run WHERE ended_ms IS NULL"), 2);
}

static void
test_counts_follow_later_tables(void **state)
{
	struct fixture *f = *state;
	struct rocmd_migration list[3] = {
		rocmd_migrations[0],
		rocmd_migrations[1],
		{3, "test tables",
		 "CREATE TABLE sdk (id INTEGER PRIMARY KEY, state TEXT NOT NULL);\n"
		 "CREATE TABLE deployment (id INTEGER PRIMARY KEY,\n"
		 "	sdk_id INTEGER NOT NULL REFERENCES sdk(id), state TEXT NOT NULL);\n"
		 /* A removed SDK stays as history but is not counted; nor is a
		  * deployment that was replaced. */
		 "INSERT INTO sdk VALUES (1, 'present'), (2, 'unreadable'), (3, 'removed');\n"
		 "INSERT INTO deployment VALUES (1, 2, 'live'), (2, 2, 'superseded');\n"},
	};
	struct rocmd_db *db = NULL;
	struct rocmd_db_counts c;
	char why[512];

	/* Its own list: the real migration 3 may be anything. */
	assert_int_equal(rocmd_db_open_with(f->db, list, 3, &db, why, sizeof(why)), 0);
	assert_int_equal(rocmd_db_event_add(db, "x", "m", NULL, NULL), 0);
	assert_int_equal(rocmd_db_counts(db, &c), 0);
	assert_int_equal(c.sdks, 2);
	assert_int_equal(c.deployments, 1);
	assert_int_equal(c.packages, 0);
	assert_int_equal(c.tune_jobs, 0);
	assert_int_equal(c.events, 1);
	rocmd_db_close(db);
}

static void
test_migration_foreign_key_violation(void **state)
{
	struct fixture *f = *state;
	struct rocmd_migration list[3] = {
		rocmd_migrations[0],
		rocmd_migrations[1],
		{3, "dangling reference",
		 "CREATE TABLE sdk (id INTEGER PRIMARY KEY);\n"
		 "CREATE TABLE deployment (id INTEGER PRIMARY KEY,\n"
		 "	sdk_id INTEGER NOT NULL REFERENCES sdk(id));\n"
		 "INSERT INTO deployment VALUES (1, 7);\n"},
	};
	struct rocmd_db *db = NULL;
	char why[512];

	assert_int_equal(rocmd_db_open_with(f->db, list, 3, &db, why, sizeof(why)), ROCMD_EMIGRATE);
	assert_non_null(strstr(why, "foreign key"));
	assert_non_null(strstr(why, "deployment"));
	assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 2);
}

/*
 * The old-schema fixtures, one per schema version before the newest
 * (tests/data/db-schema-vN.sql), and what rocmd shows of each once it is
 * upgraded: the status counts and the id the next event gets (AUTOINCREMENT
 * carried over, the ids of deleted rows never handed out again).
 */
static const struct old_schema {
	int version;
	struct rocmd_db_counts counts;
	int64_t next_event;
} old_schemas[] = {
	{1, {.events = 4}, 6},
	{2, {.events = 5}, 7},
	{3, {.events = 5, .tune_jobs = 3}, 7},
	{4, {.events = 5, .tune_jobs = 3, .packages = 2}, 7},
	/* SDK 2 is removed: history, not counted. */
	{5, {.events = 5, .tune_jobs = 3, .packages = 2, .sdks = 2}, 7},
	/* One of the four deployments is live. */
	{6, {.events = 5, .tune_jobs = 3, .packages = 2, .sdks = 2, .deployments = 1}, 7},
	{7, {.events = 5, .tune_jobs = 3, .packages = 2, .sdks = 2, .deployments = 1}, 7},
	{8, {.events = 5, .tune_jobs = 3, .packages = 2, .sdks = 2, .deployments = 1}, 7},
	{9, {.events = 5, .tune_jobs = 3, .packages = 2, .sdks = 2, .deployments = 1}, 7},
};

/* Every row of SQL on H as text, a line per row with '|' between columns
 * (malloc'd). */
static char *
rows_text(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *out = sqlite3_mprintf("%s", ""), *grown;
	int rc;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);
			grown = sqlite3_mprintf("%s%s%s", out, i > 0 ? "|" : "",
						t != NULL ? (const char *)t : "NULL");
			sqlite3_free(out);
			out = grown;
		}
		grown = sqlite3_mprintf("%s\n", out);
		sqlite3_free(out);
		out = grown;
	}
	if (rc != SQLITE_DONE)
		fail_msg("%s: %s", sql, sqlite3_errmsg(h));
	sqlite3_finalize(st);
	return out;
}

static int64_t
rows_int(sqlite3 *h, const char *sql)
{
	char *t = rows_text(h, sql);
	int64_t v = strtoll(t, NULL, 10);

	sqlite3_free(t);
	return v;
}

/*
 * Compares the upgraded database UPGRADED with the fixture as loaded (OLD,
 * attached): every table of the old schema keeps every row with every old
 * column's value; a column a migration added holds its default in every old
 * row; a table a migration added is empty.
 */
static void
assert_rows_kept(sqlite3 *h, int version)
{
	char *tables = rows_text(h, "SELECT name FROM main.sqlite_master WHERE type = 'table' "
				    "ORDER BY name");

	for (char *name = strtok(tables, "\n"); name != NULL; name = strtok(NULL, "\n")) {
		char *sql, *cols, *added, *line;
		int64_t n;

		sql = sqlite3_mprintf("SELECT count(*) FROM old.sqlite_master WHERE name = %Q", name);
		n = rows_int(h, sql);
		sqlite3_free(sql);
		if (n == 0) {
			sql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\"", name);
			if (rows_int(h, sql) != 0)
				fail_msg("v%d: table %s, new in the upgrade, has rows", version, name);
			sqlite3_free(sql);
			continue;
		}
		/* The old columns, quoted and joined: "a", "b", ... */
		sql = sqlite3_mprintf("SELECT group_concat('\"' || replace(name, '\"', '\"\"') || '\"', "
				      "', ') FROM pragma_table_info(%Q, 'old')",
				      name);
		cols = rows_text(h, sql);
		sqlite3_free(sql);
		cols[strlen(cols) - 1] = '\0';
		sql = sqlite3_mprintf("SELECT (SELECT count(*) FROM old.\"%w\") - (SELECT count(*) FROM "
				      "main.\"%w\"), (SELECT count(*) FROM (SELECT %s FROM old.\"%w\" "
				      "EXCEPT SELECT %s FROM main.\"%w\"))",
				      name, name, cols, name, cols, name);
		line = rows_text(h, sql);
		if (strcmp(line, "0|0\n") != 0)
			fail_msg("v%d: table %s lost or changed rows in the upgrade (count "
				 "difference|rows not kept: %s)",
				 version, name, line);
		sqlite3_free(line);
		sqlite3_free(sql);
		sqlite3_free(cols);
		/* Columns a migration added: each old row holds the default. */
		sql = sqlite3_mprintf("SELECT name, coalesce(dflt_value, 'NULL') FROM "
				      "pragma_table_info(%Q, 'main') WHERE name NOT IN (SELECT name "
				      "FROM pragma_table_info(%Q, 'old'))",
				      name, name);
		added = rows_text(h, sql);
		sqlite3_free(sql);
		for (char *col = added, *next; *col != '\0'; col = next) {
			char *bar = strchr(col, '|');
			next = strchr(col, '\n') + 1;
			next[-1] = '\0';
			*bar = '\0';
			sql = sqlite3_mprintf("SELECT count(*) FROM main.\"%w\" WHERE \"%w\" IS NOT (%s)",
					      name, col, bar + 1);
			if (rows_int(h, sql) != 0)
				fail_msg("v%d: %s.%s, added by the upgrade, is not its default %s in "
					 "old rows",
					 version, name, col, bar + 1);
			sqlite3_free(sql);
		}
		sqlite3_free(added);
	}
	sqlite3_free(tables);
}

/* The schema as sqlite_master records it, without root pages. */
static char *
schema_text(sqlite3 *h)
{
	return rows_text(h, "SELECT type, name, tbl_name, sql FROM main.sqlite_master "
			    "ORDER BY type, name");
}

static int
first_package(const struct rocmd_db_pkg *p, void *ctx)
{
	snprintf(ctx, 64, "%s", p->name);
	return 1;
}

static int
sdk_library(const struct rocmd_db_sdk *s, void *ctx)
{
	snprintf(ctx, 64, "%s", s->lib_fingerprint != NULL ? s->lib_fingerprint : "NULL");
	return 0;
}

static int
target_state(const struct rocmd_db_target *t, void *ctx)
{
	snprintf(ctx, 128, "live %lld, backup %s", (long long)t->live_id,
		 t->backup_path != NULL ? t->backup_path : "NULL");
	return 0;
}

/* What each feature shows of the upgraded rows, through its own accessors. */
static void
check_accessors(struct rocmd_db *db, int version)
{
	struct rocmd_pkg_db *pdb;
	struct rocmd_sdk_db *sdb;
	struct rocmd_deploy_db *ddb;
	struct rocmd_tune_queue_db *q;
	struct rocmd_pkg_db_stats ps;
	struct rocmd_tune_job job;
	struct tune_store st;
	struct tune_key key = {
		.backend = "hip",
		.arch = "gfx1100",
		.device = "AMD Radeon RX 7900 XTX",
		.compute_units = 96,
		.driver = "6.7.0",
		.runtime = "6.1.40093",
		.compiler = "hiprtc 6.1.40093",
		.source_hash = "3f2a9c1e5b7d4a60",
		.problem = "fp32 NN 1024x1024x1024",
	};
	struct tune_result r;
	char text[128];
	int64_t n;

	assert_int_equal(tune_db_attach(db, &st), 0);
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, version >= 3 ? 7 : 0);
	if (version >= 3) {
		assert_int_equal(st.lookup(st.ctx, &key, "MT0=64 MT1=64 DU=16", &r), 0);
		assert_int_equal(r.outcome, TUNE_OK);
		assert_int_equal(r.runs, 25);
		assert_true(r.median_ms > 0.4119 && r.median_ms < 0.4121);
		assert_int_equal(st.lookup(st.ctx, &key, "MT0=128 MT1=128 DU=32", &r), 0);
		assert_int_equal(r.outcome, TUNE_COMPILE_FAILED);
		assert_string_equal(r.detail, "error: local memory (69632) exceeds limit (65536)");
	}
	tune_db_close(&st);

	assert_int_equal(rocmd_pkg_db_attach(db, &pdb), 0);
	assert_int_equal(rocmd_pkg_db_stats(pdb, &ps), 0);
	assert_int_equal(ps.packages, version >= 4 ? 2 : 0);
	assert_int_equal(ps.files, version >= 4 ? 6 : 0);
	assert_int_equal(ps.objects, version >= 4 ? 4 : 0);
	assert_int_equal(ps.object_bytes, version >= 4 ? 4263936 : 0);
	if (version >= 4) {
		assert_int_equal(rocmd_pkg_db_list(pdb, 3, first_package, text), 1);
		assert_string_equal(text, "librocblas-gfx1150");
		assert_int_equal(rocmd_pkg_db_list(pdb, 2, first_package, text), ROCMD_ENOTFOUND);
	}
	rocmd_pkg_db_detach(pdb);

	if (version >= 5) {
		assert_int_equal(rocmd_sdk_db_attach(db, &sdb), 0);
		assert_int_equal(rocmd_sdk_db_list(sdb, 0, "/opt/rocm-6.1.2", sdk_library, text), 0);
		assert_string_equal(text, "7d793037a0760186");
		rocmd_sdk_db_detach(sdb);
	}
	if (version >= 6) {
		assert_int_equal(rocmd_deploy_db_attach(db, &ddb), 0);
		assert_int_equal(rocmd_deploy_db_targets(ddb, 0, "sdk-1", target_state, text), 0);
		assert_string_equal(text, "live 2, backup /var/lib/rocmd/backup/sdk-1");
		rocmd_deploy_db_detach(ddb);
	}
	if (version >= 7) {
		/* Jobs from before migration 8 have no driver until adopted. */
		assert_int_equal(rocmd_tune_queue_attach(db, &q), 0);
		assert_int_equal(rocmd_tune_queue_get(q, 4, &job), 0);
		assert_string_equal(job.driver, "");
		assert_string_equal(job.origin, "retune");
		assert_string_equal(job.state, "queued");
		assert_int_equal(job.seeded_from, 3);
		assert_int_equal(job.batch, 4);
		assert_string_equal(job.detail, "SDK 5.7.1 -> 6.1.2");
		/* Kernel jobs from before migration 9 are no vendor target's. */
		assert_string_equal(job.target, "");
		assert_int_equal(job.calls, 0);
		assert_true(job.alpha == 1.0 && job.beta == 0.0);
		if (version >= 8) {
			assert_int_equal(rocmd_tune_queue_get(q, 7, &job), 0);
			assert_string_equal(job.driver, "HIP driver 60342000");
			assert_int_equal(job.seeded_from, 1);
		}
		rocmd_tune_queue_detach(q);
	}
}

static void
remove_db(const char *path)
{
	char p[700];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static void
test_upgrade_every_old_schema(void **state)
{
	struct fixture *f = *state;
	size_t count = sizeof(old_schemas) / sizeof(old_schemas[0]);
	char fresh[600], old[600], *want, *got, *attach;
	struct rocmd_db *db;
	struct rocmd_db_counts c;
	sqlite3 *h;
	int64_t id;

	/* A fixture for every version before the newest, in order. */
	assert_int_equal((int)count, rocmd_db_latest_version() - 1);
	snprintf(fresh, sizeof(fresh), "%s/fresh.db", f->dir);
	snprintf(old, sizeof(old), "%s/old.db", f->dir);
	rocmd_db_close(open_ok(fresh));
	assert_int_equal(sqlite3_open(fresh, &h), SQLITE_OK);
	want = schema_text(h);
	sqlite3_close(h);

	for (size_t i = 0; i < count; i++) {
		const struct old_schema *o = &old_schemas[i];

		assert_int_equal(o->version, (int)i + 1);
		remove_db(f->db);
		remove_db(old);
		load_fixture(f->db, o->version);
		load_fixture(old, o->version);
		assert_int_equal(raw_int(f->db, "PRAGMA user_version"), o->version);

		/* Through the daemon's own open: integrity check, migrations. */
		db = open_ok(f->db);
		assert_int_equal(rocmd_db_schema_version(db), rocmd_db_latest_version());
		assert_int_equal(rocmd_db_counts(db, &c), 0);
		assert_memory_equal(&c, &o->counts, sizeof(c));
		rocmd_db_close(db);

		assert_int_equal(sqlite3_open(f->db, &h), SQLITE_OK);
		got = rows_text(h, "PRAGMA integrity_check");
		assert_string_equal(got, "ok\n");
		sqlite3_free(got);
		got = rows_text(h, "PRAGMA foreign_key_check");
		assert_string_equal(got, "");
		sqlite3_free(got);
		got = schema_text(h);
		if (strcmp(got, want) != 0)
			fail_msg("v%d upgraded: the schema is not a fresh database's:\n%s\nfresh:\n%s",
				 o->version, got, want);
		sqlite3_free(got);
		attach = sqlite3_mprintf("ATTACH %Q AS old", old);
		assert_int_equal(sqlite3_exec(h, attach, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_free(attach);
		assert_rows_kept(h, o->version);
		sqlite3_close(h);

		db = open_ok(f->db);
		check_accessors(db, o->version);
		assert_int_equal(rocmd_db_event_add(db, "daemon.start", "upgraded", NULL, &id), 0);
		assert_int_equal(id, o->next_event);
		rocmd_db_close(db);
	}
	sqlite3_free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_every_old_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_migration_wal_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_migration_rollback_journal_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_failed_later_migration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_migration_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_file_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_detail_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_across_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_follow_later_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_foreign_key_violation, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
