/*
 * rocmd's SQLite database: opening (integrity check, schema version,
 * migrations, WAL), the event history, daemon runs and the status counts.
 * See db.h for the contract. Nothing is written to the file until the
 * integrity check and the version check have passed, and a failed open closes
 * without checkpointing, so a refused database stays exactly as it was.
 * The handle is the connection's own module handle (db-internal.h): its
 * statements are prepared once and kept until close; only the loop thread
 * uses a handle (SQLITE_OPEN_NOMUTEX).
 */
#include "db.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "common/error.h"
#include "db-internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define DB_BUSY_TIMEOUT_MS 5000
/* integrity_check stops after this many problems; the first few are reported. */
#define DB_INTEGRITY_MAX_ERRORS 8
#define DB_INTEGRITY_REPORTED 3

/* A prefix test with substr() rather than LIKE: '%' and '_' in KIND are plain
 * characters, and no escaping can go wrong. */
#define EVENT_FILTER "WHERE id > ?1 AND (?2 IS NULL OR substr(kind, 1, length(?2)) = ?2) "

enum {
	ST_EVENT_ADD,
	ST_JSON_VALID,
	ST_EVENTS_LIST,
	ST_EVENTS_TAIL,
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
    /* Both event queries: ?1 after_id, ?2 kind, ?3 limit. */
    [ST_EVENTS_LIST] =
        "SELECT id, time_ms, kind, message, detail FROM event " EVENT_FILTER "ORDER BY id LIMIT ?3",
    [ST_EVENTS_TAIL] = "SELECT * FROM (SELECT id, time_ms, kind, message, detail "
                       "FROM event " EVENT_FILTER "ORDER BY id DESC LIMIT ?3) ORDER BY id",
    [ST_EVENTS_LAST_ID] = "SELECT coalesce(max(id), 0) FROM event",
    [ST_RUN_LAST] = "SELECT ended_ms IS NOT NULL FROM daemon_run ORDER BY id DESC LIMIT 1",
    [ST_RUN_INSERT] = "INSERT INTO daemon_run (pid, version, started_ms) VALUES (?1, ?2, ?3)",
    [ST_RUN_END] = "UPDATE daemon_run SET ended_ms = coalesce(ended_ms, ?2) WHERE id = ?1",
    [ST_EVENTS_COUNT] = "SELECT count(*) FROM event",
    [ST_TABLE_EXISTS] = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
};

struct rocmd_db {
	struct db_conn c; /* first: the connection and this module's statements */
	int version;
};

static void set_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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

sqlite3 *
rocmd_db_sqlite(struct rocmd_db *db)
{
	return db != NULL ? db->c.h : NULL;
}

/* Runs a one-row, one-column statement that is not in the table; *OUT gets
 * its integer (0 without a row), TEXT (when not NULL) its text. */
static int
query_one(struct db_conn *c, const char *sql, int64_t *out, char *text, size_t textlen)
{
	struct db_stmt s;

	db_stmt_sql(&s, c, sql);
	*out = 0;
	if (text != NULL)
		text[0] = '\0';
	if (db_stmt_row(&s)) {
		*out = db_col_int64(&s, 0);
		if (text != NULL)
			db_col_copy(&s, 0, text, textlen);
	}
	return db_stmt_done(&s);
}

static int
query_int(struct db_conn *c, const char *sql, int64_t *out)
{
	return query_one(c, sql, out, NULL, 0);
}

static int
query_text(struct db_conn *c, const char *sql, char *out, size_t outlen)
{
	int64_t ignored;

	return query_one(c, sql, &ignored, out, outlen);
}

/*
 * Runs integrity_check. Returns 0, ROCMD_ECORRUPT with the first messages in
 * WHY, or the mapped error of a check that could not run (a file that is not
 * a database fails here with SQLITE_NOTADB).
 */
static int
check_integrity(struct db_conn *c, const char *path, char *why, size_t whylen)
{
	struct db_stmt s;
	char msgs[512] = "";
	size_t used = 0;
	int bad = 0, err;

	db_stmt_sql(&s, c, "PRAGMA integrity_check(" STR(DB_INTEGRITY_MAX_ERRORS) ")");
	while (db_stmt_row(&s)) {
		const char *m = db_col_text(&s, 0);

		if (m != NULL && strcmp(m, "ok") == 0)
			continue;
		if (bad++ < DB_INTEGRITY_REPORTED && used < sizeof(msgs)) {
			int n = snprintf(msgs + used, sizeof(msgs) - used, "%s%s",
			                 used > 0 ? "; " : "", m != NULL ? m : "?");
			used += n > 0 ? (size_t)n : 0;
		}
	}
	err = db_stmt_done(&s);
	if (err != 0) {
		set_why(why, whylen, "%s: cannot read the database: %s", path, db_errmsg(c));
		return err;
	}
	if (bad > 0) {
		set_why(why, whylen, "%s: integrity check failed (%d problem%s%s): %s", path, bad,
		        bad == 1 ? "" : "s", bad >= DB_INTEGRITY_MAX_ERRORS ? " or more" : "",
		        msgs);
		return ROCMD_ECORRUPT;
	}
	return 0;
}

/* Fails with the first violation foreign_key_check finds, as ROCMD_EEXISTS
 * with the violation in C's message. */
static int
check_foreign_keys(struct db_conn *c)
{
	struct db_stmt s;
	int err;

	db_stmt_sql(&s, c, "PRAGMA foreign_key_check");
	if (!db_stmt_row(&s))
		return db_stmt_done(&s);
	db_set_msg(c, "foreign key violation: table %s, row %lld refers to a missing %s",
	           db_col_text(&s, 0), (long long)db_col_int64(&s, 1), db_col_text(&s, 2));
	err = db_stmt_done(&s);
	return err != 0 ? err : ROCMD_EEXISTS;
}

/*
 * Applies M to a database at version M->version - 1 in one BEGIN IMMEDIATE
 * transaction that also sets user_version. On failure everything of M is
 * rolled back and WHY names the migration and SQLite's error.
 */
static int
apply_migration(struct db_conn *c, const char *path, const struct rocmd_migration *m, char *why,
                size_t whylen)
{
	char *sql = NULL;
	int64_t cur = 0;
	int err;

	err = db_begin(c);
	/* Re-read inside the write lock: another process may have migrated. */
	if (err == 0)
		err = query_int(c, "PRAGMA user_version", &cur);
	if (err == 0 && cur != m->version - 1) {
		db_set_msg(c, "schema version changed to %lld under us", (long long)cur);
		err = ROCMD_EDB;
	}
	if (err == 0)
		err = db_exec_sql(c, m->sql);
	if (err == 0)
		err = check_foreign_keys(c);
	if (err == 0 && (sql = sqlite3_mprintf("PRAGMA user_version = %d", m->version)) == NULL) {
		db_set_msg(c, "%s", sqlite3_errstr(SQLITE_NOMEM));
		err = ROCMD_ENOMEM;
	}
	if (err == 0)
		err = db_exec_sql(c, sql);
	err = db_end(c, err);
	if (err != 0)
		set_why(why, whylen,
		        "%s: migration %d \"%s\" failed: %s; the database was left at schema "
		        "version %d",
		        path, m->version, m->name != NULL ? m->name : "", db_errmsg(c),
		        m->version - 1);
	sqlite3_free(sql);
	return err != 0 ? ROCMD_EMIGRATE : 0;
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

/* Reports ERR of a pragma or setting with C's message in WHY; returns ERR. */
static int
fail_setting(struct db_conn *c, int err, const char *path, char *why, size_t whylen)
{
	if (err != 0)
		set_why(why, whylen, "%s: %s", path, db_errmsg(c));
	return err;
}

/* Opens PATH into DB->c.h and runs the read-only checks: until they pass,
 * nothing may touch the file. *VERSION gets the schema version found. */
static int
open_checked(struct rocmd_db *db, const char *path, int count, int64_t *version, char *why,
             size_t whylen)
{
	const int flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	int rc, err;

	rc = sqlite3_open_v2(path, &db->c.h, flags, NULL);
	if (rc != SQLITE_OK) {
		set_why(why, whylen, "%s: cannot open: %s", path,
		        db->c.h != NULL ? sqlite3_errmsg(db->c.h) : sqlite3_errstr(rc));
		return open_error(db->c.h, rc);
	}
	if (sqlite3_db_readonly(db->c.h, "main") == 1) {
		set_why(why, whylen, "%s: cannot open for writing", path);
		return -EACCES;
	}
	sqlite3_busy_timeout(db->c.h, DB_BUSY_TIMEOUT_MS);
	err = check_integrity(&db->c, path, why, whylen);
	if (err != 0)
		return err;
	err = query_int(&db->c, "PRAGMA user_version", version);
	if (err != 0) {
		set_why(why, whylen, "%s: cannot read the schema version: %s", path,
		        db_errmsg(&db->c));
		return err;
	}
	if (*version > count || *version < 0) {
		set_why(why, whylen,
		        "%s: schema version %lld is newer than the newest this rocmd knows (%d); "
		        "the database was not changed",
		        path, (long long)*version, count);
		return ROCMD_ESCHEMA_NEWER;
	}
	return 0;
}

/* WAL, synchronous=FULL and foreign keys, once the schema is current. */
static int
set_modes(struct db_conn *c, const char *path, char *why, size_t whylen)
{
	char mode[32];
	int64_t fk = 0;
	int err;

	/*
	 * WAL is switched on only now: the switch rewrites the file header, and
	 * a database from an older rocmd that fails to migrate must stay byte
	 * for byte as it was. journal_mode=WAL is persistent, so this is a no-op
	 * for every database rocmd has opened before. An in-memory database
	 * (":memory:", for tests of other modules) stays in memory mode.
	 */
	err = query_text(c, "PRAGMA journal_mode = WAL", mode, sizeof(mode));
	if (err == 0 && strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0) {
		set_why(why, whylen, "%s: cannot switch to WAL mode (still \"%s\")", path, mode);
		return ROCMD_EDB;
	}
	/*
	 * synchronous=FULL, not the NORMAL that WAL allows: with NORMAL a commit
	 * can be lost on power failure. The deploy journal (DESIGN I3) relies on
	 * an intent being durable before the step it describes starts, and
	 * rocmd writes rarely, so the extra fsync per commit is cheap.
	 */
	if (err == 0)
		err = db_exec_sql(c, "PRAGMA synchronous = FULL");
	if (err == 0)
		err = db_exec_sql(c, "PRAGMA foreign_keys = ON");
	if (err == 0)
		err = query_int(c, "PRAGMA foreign_keys", &fk);
	if (err != 0)
		return fail_setting(c, err, path, why, whylen);
	if (fk != 1) {
		set_why(why, whylen, "%s: this SQLite cannot enforce foreign keys", path);
		return ROCMD_EDB;
	}
	return 0;
}

int
rocmd_db_open_with(const char *path, const struct rocmd_migration *migrations, int count,
                   struct rocmd_db **out, char *why, size_t whylen)
{
	struct rocmd_db *db = NULL;
	int64_t version = 0;
	int err = 0;

	if (out != NULL)
		*out = NULL;
	set_why(why, whylen, "%s", "");
	/* An empty path would make SQLite open a private temporary database. */
	if (path == NULL || path[0] == '\0' || out == NULL || count < 0 ||
	    (count > 0 && migrations == NULL))
		return ROCMD_EINVAL;
	for (int i = 0; i < count; i++) {
		if (migrations[i].version != i + 1 || migrations[i].sql == NULL) {
			set_why(why, whylen, "migration list is not numbered 1..%d at entry %d",
			        count, i);
			return ROCMD_EINVAL;
		}
	}
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return ROCMD_ENOMEM;
	err = db_conn_init(&db->c, NULL, stmt_sql, ST_COUNT_);
	if (err == 0)
		err = open_checked(db, path, count, &version, why, whylen);
	/*
	 * Migrations run with foreign keys off, as SQLite recommends for schema
	 * changes (the pragma is a no-op inside a transaction, and table
	 * rebuilds would cascade); each transaction instead runs
	 * foreign_key_check before it commits.
	 */
	if (err == 0 && version < count)
		err = fail_setting(&db->c, db_exec_sql(&db->c, "PRAGMA foreign_keys = OFF"), path,
		                   why, whylen);
	for (int i = (int)version; err == 0 && i < count; i++)
		err = apply_migration(&db->c, path, &migrations[i], why, whylen);
	if (err == 0)
		err = set_modes(&db->c, path, why, whylen);
	if (err != 0) {
		/* A refused database is closed without a checkpoint: the main
		 * file keeps its bytes, a WAL left by a crash stays for later. */
		db_conn_fini(&db->c);
		if (db->c.h != NULL) {
			sqlite3_db_config(db->c.h, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
			sqlite3_close_v2(db->c.h);
		}
		free(db);
		return err;
	}
	db->version = count;
	*out = db;
	return 0;
}

int
rocmd_db_open(const char *path, struct rocmd_db **out, char *why, size_t whylen)
{
	return rocmd_db_open_with(path, rocmd_migrations, rocmd_migrations_count, out, why, whylen);
}

int
rocmd_db_wal_check(struct rocmd_db *db)
{
	const char *main_path = sqlite3_db_filename(db->c.h, "main");
	char wal[4096], mode[32];
	struct stat st;
	int err;

	if (main_path == NULL || main_path[0] == '\0' ||
	    snprintf(wal, sizeof(wal), "%s-wal", main_path) >= (int)sizeof(wal))
		return 0; /* in memory, or a path no log could have */
	if (stat(wal, &st) == 0 || errno != ENOENT)
		return 0;
	/* The log's pages into the main file (through SQLite's own descriptor of
	 * the unlinked log), then out of WAL mode and back: a new log file. */
	if (sqlite3_wal_checkpoint_v2(db->c.h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) !=
	    SQLITE_OK)
		return rocmd_db_map_rc(sqlite3_errcode(db->c.h));
	err = query_text(&db->c, "PRAGMA journal_mode = DELETE", mode, sizeof(mode));
	if (err == 0)
		err = query_text(&db->c, "PRAGMA journal_mode = WAL", mode, sizeof(mode));
	if (err == 0 && strcmp(mode, "wal") != 0)
		err = ROCMD_EDB;
	return err < 0 ? err : 1;
}

void
rocmd_db_close(struct rocmd_db *db)
{
	if (db == NULL)
		return;
	db_conn_fini(&db->c);
	/* Fold the WAL into the main file and empty it, so the file alone is the
	 * whole database (for backups and copies) after a clean stop. */
	sqlite3_wal_checkpoint_v2(db->c.h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_close_v2(db->c.h);
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
	int64_t fk = 0, sync = 0, busy = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (db == NULL)
		return ROCMD_EINVAL;
	out->schema_version = db->version;
	err = query_text(&db->c, "PRAGMA journal_mode", mode, sizeof(mode));
	if (err == 0)
		out->wal = strcmp(mode, "wal") == 0;
	if (err == 0)
		err = query_int(&db->c, "PRAGMA foreign_keys", &fk);
	if (err == 0)
		err = query_int(&db->c, "PRAGMA synchronous", &sync);
	if (err == 0)
		err = query_int(&db->c, "PRAGMA busy_timeout", &busy);
	out->foreign_keys = (int)fk;
	out->synchronous = (int)sync;
	out->busy_timeout_ms = (int)busy;
	return err;
}

/* Returns 1 when TEXT is JSON by SQLite's own json_valid(), the function the
 * detail column's CHECK constraint uses, so the two can never disagree. */
static int
json_is_valid(struct rocmd_db *db, const char *text, int *valid)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, ST_JSON_VALID);
	db_bind_text(&s, 1, text);
	*valid = db_stmt_row(&s) && db_col_int64(&s, 0) == 1;
	return db_stmt_done(&s);
}

int
rocmd_db_event_add(struct rocmd_db *db, const char *kind, const char *message, const char *detail,
                   int64_t *id_out)
{
	struct db_stmt s;
	int err, valid;

	if (id_out != NULL)
		*id_out = 0;
	if (db == NULL || kind == NULL || kind[0] == '\0' || message == NULL)
		return ROCMD_EINVAL;
	if (detail != NULL) {
		err = json_is_valid(db, detail, &valid);
		if (err != 0)
			return err;
		if (!valid)
			return ROCMD_EINVAL;
	}
	db_stmt_open(&s, &db->c, ST_EVENT_ADD);
	db_bind_int64(&s, 1, db_now_ms());
	db_bind_text(&s, 2, kind);
	db_bind_text(&s, 3, message);
	db_bind_text(&s, 4, detail);
	err = db_stmt_exec(&s);
	if (err == 0 && id_out != NULL)
		*id_out = db_last_id(&db->c);
	return err;
}

/* Runs one of the event queries and walks its rows. */
static int
events_query(struct rocmd_db *db, int id, int64_t after_id, int limit, const char *kind,
             int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0;

	if (db == NULL || cb == NULL || limit < 0)
		return ROCMD_EINVAL;
	db_stmt_open(&s, &db->c, id);
	db_bind_int64(&s, 1, after_id);
	db_bind_text(&s, 2, kind);
	db_bind_limit(&s, 3, limit);
	while (err == 0 && db_stmt_row(&s)) {
		struct rocmd_event ev = {
		    .id = db_col_int64(&s, 0),
		    .time_ms = db_col_int64(&s, 1),
		    .kind = db_col_text(&s, 2),
		    .message = db_col_text(&s, 3),
		    .detail = db_col_text(&s, 4),
		};
		err = cb(&ev, ctx);
	}
	return db_stmt_end(&s, err);
}

int
rocmd_db_events_list(struct rocmd_db *db, int64_t after_id, int limit, const char *kind,
                     int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	return events_query(db, ST_EVENTS_LIST, after_id, limit, kind, cb, ctx);
}

int
rocmd_db_events_tail(struct rocmd_db *db, int limit, const char *kind,
                     int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx)
{
	return events_query(db, ST_EVENTS_TAIL, 0, limit, kind, cb, ctx);
}

/* Reads the integer of statement ID's one row (0 without one). */
static int
stmt_int(struct rocmd_db *db, int id, int64_t *out)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, id);
	*out = db_stmt_row(&s) ? db_col_int64(&s, 0) : 0;
	return db_stmt_done(&s);
}

int64_t
rocmd_db_events_last_id(struct rocmd_db *db)
{
	int64_t id;
	int err;

	if (db == NULL)
		return ROCMD_EINVAL;
	err = stmt_int(db, ST_EVENTS_LAST_ID, &id);
	return err != 0 ? err : id;
}

int
rocmd_db_run_begin(struct rocmd_db *db, int64_t pid, const char *version, int64_t *run_id,
                   int *previous_clean)
{
	struct db_stmt s;
	int clean = 1;
	int err;

	if (run_id != NULL)
		*run_id = 0;
	if (previous_clean != NULL)
		*previous_clean = 0;
	if (db == NULL || version == NULL)
		return ROCMD_EINVAL;
	/* Read the previous run and add ours in one write transaction. */
	err = db_begin(&db->c);
	if (err != 0)
		return err;
	db_stmt_open(&s, &db->c, ST_RUN_LAST);
	if (db_stmt_row(&s))
		clean = (int)db_col_int64(&s, 0);
	err = db_stmt_done(&s);
	if (err == 0) {
		db_stmt_open(&s, &db->c, ST_RUN_INSERT);
		db_bind_int64(&s, 1, pid);
		db_bind_text(&s, 2, version);
		db_bind_int64(&s, 3, db_now_ms());
		err = db_stmt_exec(&s);
	}
	if (err == 0 && run_id != NULL)
		*run_id = db_last_id(&db->c);
	err = db_end(&db->c, err);
	if (err != 0) {
		if (run_id != NULL)
			*run_id = 0;
		return err;
	}
	/* Our row (unclean until the stop) into the main file: with the log
	 * deleted and a kill -9 before the next write, the next start would
	 * read the clean stop of the run before. Best effort: the row is
	 * committed either way. */
	sqlite3_wal_checkpoint_v2(db->c.h, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (previous_clean != NULL)
		*previous_clean = clean;
	return 0;
}

int
rocmd_db_run_end(struct rocmd_db *db, int64_t run_id)
{
	struct db_stmt s;
	int err;

	if (db == NULL)
		return ROCMD_EINVAL;
	db_stmt_open(&s, &db->c, ST_RUN_END);
	db_bind_int64(&s, 1, run_id);
	db_bind_int64(&s, 2, db_now_ms());
	err = db_stmt_exec(&s);
	if (err == 0 && db_changes(&db->c) == 0)
		err = ROCMD_ENOTFOUND;
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
	struct db_stmt s;
	char *sql;
	int err, exists;

	*out = 0;
	db_stmt_open(&s, &db->c, ST_TABLE_EXISTS);
	db_bind_text(&s, 1, table);
	exists = db_stmt_row(&s) && db_col_int64(&s, 0) > 0;
	err = db_stmt_done(&s);
	if (err != 0 || !exists)
		return err;
	/* TABLE comes from the constant list above, quoted all the same. */
	sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"%s%s", table,
	                      where != NULL ? " WHERE " : "", where != NULL ? where : "");
	err = sql != NULL ? query_int(&db->c, sql, out) : ROCMD_ENOMEM;
	sqlite3_free(sql);
	return err;
}

int
rocmd_db_counts(struct rocmd_db *db, struct rocmd_db_counts *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (db == NULL)
		return ROCMD_EINVAL;
	err = stmt_int(db, ST_EVENTS_COUNT, &out->events);
	for (size_t i = 0; err == 0 && i < sizeof(count_tables) / sizeof(count_tables[0]); i++) {
		int64_t *slot = (int64_t *)((char *)out + count_tables[i].offset);
		err = table_count(db, count_tables[i].table, count_tables[i].where, slot);
	}
	return err;
}

const char *
rocmd_db_errmsg(struct rocmd_db *db)
{
	return db != NULL ? db_errmsg(&db->c) : "no database handle";
}
