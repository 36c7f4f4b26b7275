/*
 * rocmd's SQLite database: opening (integrity check, schema version,
 * migrations, WAL), the event history, daemon runs and the status counts.
 * See db.h for the contract. Nothing is written to the file until the
 * integrity check and the version check have passed, and a failed open closes
 * without checkpointing, so a refused database stays exactly as it was.
 * Statements are prepared once per handle and kept until close; only the loop
 * thread uses a handle (SQLITE_OPEN_NOMUTEX).
 */
#include "db.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "common/error.h"
#include "db-internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define DB_BUSY_TIMEOUT_MS 5000
/* integrity_check stops after this many problems; the first few are reported. */
#define DB_INTEGRITY_MAX_ERRORS 8
#define DB_INTEGRITY_REPORTED 3

/* Statements kept prepared for the life of a handle. events_list is not here:
 * its callback may call back into this module, so it prepares its own. */
enum db_stmt {
	ST_EVENT_ADD,
	ST_JSON_VALID,
	ST_EVENTS_LAST_ID,
	ST_RUN_LAST,
	ST_RUN_INSERT,
	ST_RUN_END,
	ST_EVENTS_COUNT,
	ST_TABLE_EXISTS,
	ST_COUNT_,
};

static const char *const stmt_sql[ST_COUNT_] = {
	[ST_EVENT_ADD] = "INSERT INTO event (time_ms, kind, message, detail) VALUES (?1, ?2, ?3, ?4)",
	[ST_JSON_VALID] = "SELECT json_valid(?1)",
	[ST_EVENTS_LAST_ID] = "SELECT coalesce(max(id), 0) FROM event",
	[ST_RUN_LAST] = "SELECT ended_ms IS NOT NULL FROM daemon_run ORDER BY id DESC LIMIT 1",
	[ST_RUN_INSERT] = "INSERT INTO daemon_run (pid, version, started_ms) VALUES (?1, ?2, ?3)",
	[ST_RUN_END] = "UPDATE daemon_run SET ended_ms = coalesce(ended_ms, ?2) WHERE id = ?1",
	[ST_EVENTS_COUNT] = "SELECT count(*) FROM event",
	[ST_TABLE_EXISTS] = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
};

struct rocmd_db {
	sqlite3 *h;
	int version;
	sqlite3_stmt *stmt[ST_COUNT_];
};

static void
set_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

int
rocmd_db_map_rc(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_FULL:
		return ROCMD_ENOSPACE;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return ROCMD_EBUSY;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return ROCMD_ECORRUPT;
	case SQLITE_NOMEM:
		return ROCMD_ENOMEM;
	case SQLITE_CONSTRAINT:
		return ROCMD_EEXISTS;
	default:
		return ROCMD_EDB;
	}
}

sqlite3 *
rocmd_db_sqlite(struct rocmd_db *db)
{
	return db != NULL ? db->h : NULL;
}

int
rocmd_db_view_new(struct rocmd_db *db, size_t size, void **out)
{
	sqlite3 *h = rocmd_db_sqlite(db);
	sqlite3 **view;

	*out = NULL;
	if (h == NULL || size < sizeof(*view))
		return ROCMD_EINVAL;
	view = calloc(1, size);
	if (view == NULL)
		return ROCMD_ENOMEM;
	*view = h;
	*out = view;
	return 0;
}

int
rocmd_db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s != NULL ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs a one-row, one-column statement and reads an integer. */
static int
query_int(sqlite3 *h, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*out = 0;
	rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
out:
	sqlite3_finalize(st);
	return rc;
}

static int
query_text(sqlite3 *h, const char *sql, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	out[0] = '\0';
	rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		snprintf(out, outlen, "%s", t != NULL ? (const char *)t : "");
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
out:
	sqlite3_finalize(st);
	return rc;
}

/* The cached statement ID, reset and unbound, or NULL (see sqlite3_errmsg). */
static sqlite3_stmt *
stmt_get(struct rocmd_db *db, enum db_stmt id)
{
	if (db->stmt[id] == NULL &&
	    sqlite3_prepare_v3(db->h, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &db->stmt[id],
			       NULL) != SQLITE_OK)
		return NULL;
	return db->stmt[id];
}

static void
stmt_done(sqlite3_stmt *st)
{
	if (st == NULL)
		return;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/*
 * Runs integrity_check. Returns 0, ROCMD_ECORRUPT with the first messages in
 * WHY, or the mapped error of a check that could not run (a file that is not
 * a database fails here with SQLITE_NOTADB).
 */
static int
check_integrity(sqlite3 *h, const char *path, char *why, size_t whylen)
{
	sqlite3_stmt *st = NULL;
	char msgs[512] = "";
	size_t used = 0;
	int rc, bad = 0, err = 0;

	rc = sqlite3_prepare_v2(h, "PRAGMA integrity_check(" STR(DB_INTEGRITY_MAX_ERRORS) ")", -1,
				&st, NULL);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		const char *m;

		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		m = (const char *)sqlite3_column_text(st, 0);
		if (m != NULL && strcmp(m, "ok") == 0)
			continue;
		if (bad++ < DB_INTEGRITY_REPORTED && used < sizeof(msgs)) {
			int n = snprintf(msgs + used, sizeof(msgs) - used, "%s%s",
					 used > 0 ? "; " : "", m != NULL ? m : "?");
			used += n > 0 ? (size_t)n : 0;
		}
	}
	if (rc != SQLITE_DONE) {
		err = rocmd_db_map_rc(rc);
		set_why(why, whylen, "%s: cannot read the database: %s", path, sqlite3_errmsg(h));
		goto out;
	}
	if (bad > 0) {
		err = ROCMD_ECORRUPT;
		set_why(why, whylen, "%s: integrity check failed (%d problem%s%s): %s", path, bad,
			bad == 1 ? "" : "s", bad >= DB_INTEGRITY_MAX_ERRORS ? " or more" : "", msgs);
	}
out:
	sqlite3_finalize(st);
	return err;
}

/* Fails with the first violation foreign_key_check finds, as SQLITE_CONSTRAINT. */
static int
check_foreign_keys(sqlite3 *h, char *msg, size_t msglen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(h, "PRAGMA foreign_key_check", -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		snprintf(msg, msglen, "foreign key violation: table %s, row %lld refers to a missing %s",
			 (const char *)sqlite3_column_text(st, 0),
			 (long long)sqlite3_column_int64(st, 1),
			 (const char *)sqlite3_column_text(st, 2));
		rc = SQLITE_CONSTRAINT;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
out:
	sqlite3_finalize(st);
	return rc;
}

/*
 * Applies M to a database at version M->version - 1 in one BEGIN IMMEDIATE
 * transaction that also sets user_version. On failure everything of M is
 * rolled back and WHY names the migration and SQLite's error.
 */
static int
apply_migration(sqlite3 *h, const char *path, const struct rocmd_migration *m, char *why,
		size_t whylen)
{
	char own[256] = "";
	char *sql = NULL;
	int64_t cur = 0;
	int rc, err = 0;

	rc = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto out;
	/* Re-read inside the write lock: another process may have migrated. */
	rc = query_int(h, "PRAGMA user_version", &cur);
	if (rc != SQLITE_OK)
		goto out;
	if (cur != m->version - 1) {
		snprintf(own, sizeof(own), "schema version changed to %lld under us",
			 (long long)cur);
		rc = SQLITE_ERROR;
		goto out;
	}
	rc = sqlite3_exec(h, m->sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto out;
	rc = check_foreign_keys(h, own, sizeof(own));
	if (rc != SQLITE_OK)
		goto out;
	sql = sqlite3_mprintf("PRAGMA user_version = %d", m->version);
	if (sql == NULL) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto out;
	rc = sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
out:
	if (rc != SQLITE_OK) {
		/* The message must be taken before ROLLBACK replaces it. */
		err = ROCMD_EMIGRATE;
		set_why(why, whylen,
			"%s: migration %d \"%s\" failed: %s; the database was left at schema "
			"version %d",
			path, m->version, m->name != NULL ? m->name : "", own[0] ? own : sqlite3_errmsg(h),
			m->version - 1);
		if (!sqlite3_get_autocommit(h))
			sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_free(sql);
	return err;
}

/* An error from sqlite3_open_v2: the system's errno when SQLite kept one. */
static int
open_error(sqlite3 *h, int rc)
{
	int sys = h != NULL ? sqlite3_system_errno(h) : 0;

	if ((rc & 0xff) == SQLITE_CANTOPEN && sys > 0)
		return rocmd_err_errno(sys);
	return rocmd_db_map_rc(rc);
}

int
rocmd_db_open_with(const char *path, const struct rocmd_migration *migrations, int count,
		   struct rocmd_db **out, char *why, size_t whylen)
{
	const int flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	struct rocmd_db *db = NULL;
	char mode[32];
	int64_t version = 0, fk = 0;
	int rc, err = 0;

	if (out != NULL)
		*out = NULL;
	set_why(why, whylen, "%s", "");
	/* An empty path would make SQLite open a private temporary database. */
	if (path == NULL || path[0] == '\0' || out == NULL || count < 0 ||
	    (count > 0 && migrations == NULL)) {
		err = ROCMD_EINVAL;
		goto out;
	}
	for (int i = 0; i < count; i++) {
		if (migrations[i].version != i + 1 || migrations[i].sql == NULL) {
			err = ROCMD_EINVAL;
			set_why(why, whylen, "migration list is not numbered 1..%d at entry %d", count,
				i);
			goto out;
		}
	}
	db = calloc(1, sizeof(*db));
	if (db == NULL) {
		err = ROCMD_ENOMEM;
		goto out;
	}
	rc = sqlite3_open_v2(path, &db->h, flags, NULL);
	if (rc != SQLITE_OK) {
		err = open_error(db->h, rc);
		set_why(why, whylen, "%s: cannot open: %s", path,
			db->h != NULL ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		goto out;
	}
	if (sqlite3_db_readonly(db->h, "main") == 1) {
		err = -EACCES;
		set_why(why, whylen, "%s: cannot open for writing", path);
		goto out;
	}
	sqlite3_busy_timeout(db->h, DB_BUSY_TIMEOUT_MS);

	/* Read-only checks first: until they pass, nothing may touch the file. */
	err = check_integrity(db->h, path, why, whylen);
	if (err != 0)
		goto out;
	rc = query_int(db->h, "PRAGMA user_version", &version);
	if (rc != SQLITE_OK) {
		err = rocmd_db_map_rc(rc);
		set_why(why, whylen, "%s: cannot read the schema version: %s", path,
			sqlite3_errmsg(db->h));
		goto out;
	}
	if (version > count || version < 0) {
		err = ROCMD_ESCHEMA_NEWER;
		set_why(why, whylen,
			"%s: schema version %lld is newer than the newest this rocmd knows (%d); "
			"the database was not changed",
			path, (long long)version, count);
		goto out;
	}

	/*
	 * Migrations run with foreign keys off, as SQLite recommends for schema
	 * changes (the pragma is a no-op inside a transaction, and table
	 * rebuilds would cascade); each transaction instead runs
	 * foreign_key_check before it commits.
	 */
	if (version < count) {
		rc = sqlite3_exec(db->h, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			err = rocmd_db_map_rc(rc);
			set_why(why, whylen, "%s: %s", path, sqlite3_errmsg(db->h));
			goto out;
		}
	}
	for (int i = (int)version; i < count; i++) {
		err = apply_migration(db->h, path, &migrations[i], why, whylen);
		if (err != 0)
			goto out;
	}

	/*
	 * WAL is switched on only now: the switch rewrites the file header, and
	 * a database from an older rocmd that fails to migrate must stay byte
	 * for byte as it was. journal_mode=WAL is persistent, so this is a no-op
	 * for every database rocmd has opened before. An in-memory database
	 * (":memory:", for tests of other modules) stays in memory mode.
	 */
	rc = query_text(db->h, "PRAGMA journal_mode = WAL", mode, sizeof(mode));
	if (rc == SQLITE_OK && strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0) {
		err = ROCMD_EDB;
		set_why(why, whylen, "%s: cannot switch to WAL mode (still \"%s\")", path, mode);
		goto out;
	}
	/*
	 * synchronous=FULL, not the NORMAL that WAL allows: with NORMAL a commit
	 * can be lost on power failure. The deploy journal (DESIGN I3) relies on
	 * an intent being durable before the step it describes starts, and
	 * rocmd writes rarely, so the extra fsync per commit is cheap.
	 */
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->h, "PRAGMA synchronous = FULL", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db->h, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = query_int(db->h, "PRAGMA foreign_keys", &fk);
	if (rc != SQLITE_OK) {
		err = rocmd_db_map_rc(rc);
		set_why(why, whylen, "%s: %s", path, sqlite3_errmsg(db->h));
		goto out;
	}
	if (fk != 1) {
		err = ROCMD_EDB;
		set_why(why, whylen, "%s: this SQLite cannot enforce foreign keys", path);
		goto out;
	}
	db->version = count;
	*out = db;
	db = NULL;
out:
	if (db != NULL) {
		/* A refused database is closed without a checkpoint: the main
		 * file keeps its bytes, a WAL left by a crash stays for later. */
		if (db->h != NULL) {
			sqlite3_db_config(db->h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
			sqlite3_close_v2(db->h);
		}
		free(db);
	}
	return err;
}

int
rocmd_db_open(const char *path, struct rocmd_db **out, char *why, size_t whylen)
{
	return rocmd_db_open_with(path, rocmd_migrations, rocmd_migrations_count, out, why, whylen);
}

void
rocmd_db_close(struct rocmd_db *db)
{
	if (db == NULL)
		return;
	for (int i = 0; i < ST_COUNT_; i++)
		sqlite3_finalize(db->stmt[i]);
	/* Fold the WAL into the main file and empty it, so the file alone is the
	 * whole database (for backups and copies) after a clean stop. */
	sqlite3_wal_checkpoint_v2(db->h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_close_v2(db->h);
	free(db);
}

int
rocmd_db_schema_version(struct rocmd_db *db)
{
	return db != NULL ? db->version : 0;
}

int
rocmd_db_latest_version(void)
{
	return rocmd_migrations_count;
}

int
rocmd_db_info(struct rocmd_db *db, struct rocmd_db_info *out)
{
	char mode[32];
	int64_t v;
	int rc;

	memset(out, 0, sizeof(*out));
	if (db == NULL)
		return ROCMD_EINVAL;
	out->schema_version = db->version;
	rc = query_text(db->h, "PRAGMA journal_mode", mode, sizeof(mode));
	if (rc != SQLITE_OK)
		goto out;
	out->wal = strcmp(mode, "wal") == 0;
	rc = query_int(db->h, "PRAGMA foreign_keys", &v);
	if (rc != SQLITE_OK)
		goto out;
	out->foreign_keys = (int)v;
	rc = query_int(db->h, "PRAGMA synchronous", &v);
	if (rc != SQLITE_OK)
		goto out;
	out->synchronous = (int)v;
	rc = query_int(db->h, "PRAGMA busy_timeout", &v);
	if (rc != SQLITE_OK)
		goto out;
	out->busy_timeout_ms = (int)v;
out:
	return rocmd_db_map_rc(rc);
}

/* Returns 1 when TEXT is JSON by SQLite's own json_valid(), the function the
 * detail column's CHECK constraint uses, so the two can never disagree. */
static int
json_is_valid(struct rocmd_db *db, const char *text, int *valid)
{
	sqlite3_stmt *st = stmt_get(db, ST_JSON_VALID);
	int rc;

	*valid = 0;
	if (st == NULL)
		return rocmd_db_map_rc(sqlite3_errcode(db->h));
	rc = sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*valid = sqlite3_column_int(st, 0) == 1;
		rc = SQLITE_OK;
	}
	stmt_done(st);
	return rocmd_db_map_rc(rc);
}

int
rocmd_db_event_add(struct rocmd_db *db, const char *kind, const char *message,
		   const char *detail, int64_t *id_out)
{
	sqlite3_stmt *st = NULL;
	int rc, err, valid;

	if (id_out != NULL)
		*id_out = 0;
	if (db == NULL || kind == NULL || kind[0] == '\0' || message == NULL)
		return ROCMD_EINVAL;
	if (detail != NULL) {
		err = json_is_valid(db, detail, &valid);
		if (err != 0)
			goto out;
		if (!valid) {
			err = ROCMD_EINVAL;
			goto out;
		}
	}
	st = stmt_get(db, ST_EVENT_ADD);
	if (st == NULL) {
		err = rocmd_db_map_rc(sqlite3_errcode(db->h));
		goto out;
	}
	rc = sqlite3_bind_int64(st, 1, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 3, message, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = detail != NULL ? sqlite3_bind_text(st, 4, detail, -1, SQLITE_STATIC)
				    : sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	err = rocmd_db_map_rc(rc);
	if (err == 0 && id_out != NULL)
		*id_out = sqlite3_last_insert_rowid(db->h);
out:
	stmt_done(st);
	return err;
}

/* A prefix test with substr() rather than LIKE: '%' and '_' in KIND are plain
 * characters, and no escaping can go wrong. */
#define EVENT_FILTER "WHERE id > ?1 AND (?2 IS NULL OR substr(kind, 1, length(?2)) = ?2) "

/* Runs one of the event queries (?1 after_id, ?2 kind, ?3 limit) and walks its rows. */
static int
events_query(struct rocmd_db *db, const char *sql, int64_t after_id, int limit, const char *kind,
	     int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (db == NULL || cb == NULL || limit < 0)
		return ROCMD_EINVAL;
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, after_id);
	if (rc == SQLITE_OK)
		rc = kind != NULL ? sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC)
				  : sqlite3_bind_null(st, 2);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, limit > 0 ? limit : -1);
	while (rc == SQLITE_OK || rc == SQLITE_ROW) {
		struct rocmd_event ev;

		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		ev.id = sqlite3_column_int64(st, 0);
		ev.time_ms = sqlite3_column_int64(st, 1);
		ev.kind = (const char *)sqlite3_column_text(st, 2);
		ev.message = (const char *)sqlite3_column_text(st, 3);
		ev.detail = (const char *)sqlite3_column_text(st, 4);
		err = cb(&ev, ctx);
		if (err != 0)
			goto out;
	}
	err = rocmd_db_map_rc(rc);
out:
	sqlite3_finalize(st);
	return err;
}

int
rocmd_db_events_list(struct rocmd_db *db, int64_t after_id, int limit, const char *kind,
		     int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	static const char sql[] = "SELECT id, time_ms, kind, message, detail FROM event "
		EVENT_FILTER "ORDER BY id LIMIT ?3";

	return events_query(db, sql, after_id, limit, kind, cb, ctx);
}

int
rocmd_db_events_tail(struct rocmd_db *db, int limit, const char *kind,
		     int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	static const char sql[] = "SELECT * FROM (SELECT id, time_ms, kind, message, detail "
		"FROM event " EVENT_FILTER "ORDER BY id DESC LIMIT ?3) ORDER BY id";

	return events_query(db, sql, 0, limit, kind, cb, ctx);
}

int64_t
rocmd_db_events_last_id(struct rocmd_db *db)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc;

	if (db == NULL)
		return ROCMD_EINVAL;
	st = stmt_get(db, ST_EVENTS_LAST_ID);
	if (st == NULL)
		return rocmd_db_map_rc(sqlite3_errcode(db->h));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	else
		id = rocmd_db_map_rc(rc);
	stmt_done(st);
	return id;
}

int
rocmd_db_run_begin(struct rocmd_db *db, int64_t pid, const char *version, int64_t *run_id,
		   int *previous_clean)
{
	sqlite3_stmt *last = NULL, *ins = NULL;
	int clean = 1;
	int rc;

	if (run_id != NULL)
		*run_id = 0;
	if (previous_clean != NULL)
		*previous_clean = 0;
	if (db == NULL || version == NULL)
		return ROCMD_EINVAL;
	/* Read the previous run and add ours in one write transaction. */
	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto out;
	last = stmt_get(db, ST_RUN_LAST);
	if (last == NULL) {
		rc = sqlite3_errcode(db->h);
		goto out;
	}
	rc = sqlite3_step(last);
	if (rc == SQLITE_ROW)
		clean = sqlite3_column_int(last, 0);
	else if (rc != SQLITE_DONE)
		goto out;
	stmt_done(last);
	last = NULL;
	ins = stmt_get(db, ST_RUN_INSERT);
	if (ins == NULL) {
		rc = sqlite3_errcode(db->h);
		goto out;
	}
	rc = sqlite3_bind_int64(ins, 1, pid);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(ins, 2, version, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(ins, 3, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_step(ins);
	if (rc != SQLITE_DONE)
		goto out;
	if (run_id != NULL)
		*run_id = sqlite3_last_insert_rowid(db->h);
	stmt_done(ins);
	ins = NULL;
	rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
out:
	stmt_done(last);
	stmt_done(ins);
	if (rc != SQLITE_OK) {
		if (!sqlite3_get_autocommit(db->h))
			sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		if (run_id != NULL)
			*run_id = 0;
		return rocmd_db_map_rc(rc);
	}
	if (previous_clean != NULL)
		*previous_clean = clean;
	return 0;
}

int
rocmd_db_run_end(struct rocmd_db *db, int64_t run_id)
{
	sqlite3_stmt *st;
	int rc, err;

	if (db == NULL)
		return ROCMD_EINVAL;
	st = stmt_get(db, ST_RUN_END);
	if (st == NULL)
		return rocmd_db_map_rc(sqlite3_errcode(db->h));
	rc = sqlite3_bind_int64(st, 1, run_id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, now_ms());
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	err = rocmd_db_map_rc(rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_ENOTFOUND;
	stmt_done(st);
	return err;
}

/* Tables later migrations add; each is counted once it exists. */
static const struct {
	const char *table;
	size_t offset;
	const char *where; /* rows that count, or NULL for all */
} count_tables[] = {
	/* SDKs that disappeared stay as history; only the others count. */
	{"sdk", offsetof(struct rocmd_db_counts, sdks), "state <> 'removed'"},
	{"package", offsetof(struct rocmd_db_counts, packages), NULL},
	/* Only a deployment in place counts, not the history of earlier ones. */
	{"deployment", offsetof(struct rocmd_db_counts, deployments), "state = 'live'"},
	{"tune_job", offsetof(struct rocmd_db_counts, tune_jobs), NULL},
};

static int
table_count(struct rocmd_db *db, const char *table, const char *where, int64_t *out)
{
	sqlite3_stmt *st = stmt_get(db, ST_TABLE_EXISTS);
	char *sql = NULL;
	int rc, exists = 0;

	*out = 0;
	if (st == NULL) {
		rc = sqlite3_errcode(db->h);
		goto out;
	}
	rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		goto out;
	exists = sqlite3_column_int(st, 0) > 0;
	rc = SQLITE_OK;
	if (!exists)
		goto out;
	/* TABLE comes from the constant list above, quoted all the same. */
	sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"%s%s", table, where != NULL ? " WHERE " : "",
			      where != NULL ? where : "");
	rc = sql != NULL ? query_int(db->h, sql, out) : SQLITE_NOMEM;
out:
	stmt_done(st);
	sqlite3_free(sql);
	return rocmd_db_map_rc(rc);
}

int
rocmd_db_counts(struct rocmd_db *db, struct rocmd_db_counts *out)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	memset(out, 0, sizeof(*out));
	if (db == NULL)
		return ROCMD_EINVAL;
	st = stmt_get(db, ST_EVENTS_COUNT);
	if (st == NULL) {
		err = rocmd_db_map_rc(sqlite3_errcode(db->h));
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		err = rocmd_db_map_rc(rc);
		goto out;
	}
	out->events = sqlite3_column_int64(st, 0);
	for (size_t i = 0; i < sizeof(count_tables) / sizeof(count_tables[0]); i++) {
		int64_t *slot = (int64_t *)((char *)out + count_tables[i].offset);
		err = table_count(db, count_tables[i].table, count_tables[i].where, slot);
		if (err != 0)
			goto out;
	}
out:
	stmt_done(st);
	return err;
}

const char *
rocmd_db_errmsg(struct rocmd_db *db)
{
	return db != NULL ? sqlite3_errmsg(db->h) : "no database handle";
}
