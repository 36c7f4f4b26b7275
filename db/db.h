/*
 * rocmd's persistent state in SQLite: the only module that writes SQL.
 *
 * The database runs in WAL mode with foreign keys on and a busy timeout.
 * Numbered migrations (db/migrations.c) are applied in order, each in its own
 * transaction; PRAGMA user_version holds the schema version. At open,
 * integrity_check runs first; a failed check leaves the file as it was and
 * returns a clear message. A failed migration is rolled back whole, so the
 * file is as it was before that migration: byte for byte as it was opened
 * when it was the only one pending (earlier migrations of the same open stay
 * committed, each a consistent schema version). Only the daemon's loop thread
 * (or a single-threaded tool) uses a handle.
 */
#ifndef ROCMD_DB_H
#define ROCMD_DB_H

#include <stddef.h>
#include <stdint.h>

struct rocmd_db;

/* One migration: a version number and the SQL that reaches it from version-1. */
struct rocmd_migration {
	int version;
	const char *name;
	const char *sql;
};

/* The migrations this build knows, in order (db/migrations.c). */
extern const struct rocmd_migration rocmd_migrations[];
extern const int rocmd_migrations_count;

/*
 * Opens or creates the database at PATH and brings it to the newest schema.
 * Errors: ROCMD_ECORRUPT (integrity check failed, or not a database),
 * ROCMD_EMIGRATE (a migration failed; see above), ROCMD_ESCHEMA_NEWER
 * (written by a newer rocmd; nothing changed), ROCMD_EBUSY, ROCMD_ENOSPACE,
 * ROCMD_EDB, or -errno when the file cannot be opened. WHY gets a sentence
 * for the user naming PATH.
 */
int rocmd_db_open(const char *path, struct rocmd_db **out, char *why, size_t whylen);
/* The same, with an explicit migration list (numbered 1..COUNT): for tests. */
int rocmd_db_open_with(const char *path, const struct rocmd_migration *migrations, int count,
		       struct rocmd_db **out, char *why, size_t whylen);
/* Checkpoints the WAL and closes. NULL is fine. */
void rocmd_db_close(struct rocmd_db *db);

int rocmd_db_schema_version(struct rocmd_db *db);
/* The newest version this build knows. */
int rocmd_db_latest_version(void);

/* The connection's effective settings, for diagnostics and tests. */
struct rocmd_db_info {
	int schema_version;
	int wal;             /* 1 in WAL mode */
	int foreign_keys;    /* 1 when enforced */
	int synchronous;     /* 0 off, 1 normal, 2 full, 3 extra */
	int busy_timeout_ms;
};
int rocmd_db_info(struct rocmd_db *db, struct rocmd_db_info *out);

/*
 * Whether the write-ahead log was removed from under the open database
 * (someone deleted <db>-wal while rocmd runs: every commit since the last
 * checkpoint would live only in the unlinked file and die with the process).
 * If so, the log is folded into the main file and a fresh one is made at its
 * path. Call it right after a commit, when the log must exist. Returns 1 when
 * it restored the log, 0 when it was in place, or a negative error.
 */
int rocmd_db_wal_check(struct rocmd_db *db);

/* The event history: every significant action writes one row. */
struct rocmd_event {
	int64_t id;
	int64_t time_ms; /* Unix epoch, milliseconds */
	const char *kind;   /* "daemon.start", "sdk.added", ... */
	const char *message;
	const char *detail; /* JSON text or NULL */
};

/* Appends an event; *id_out (may be NULL) receives its id. DETAIL is JSON
 * text or NULL; text that is not JSON is refused with ROCMD_EINVAL. */
int rocmd_db_event_add(struct rocmd_db *db, const char *kind, const char *message,
		       const char *detail, int64_t *id_out);
/* Calls CB for events with id > AFTER_ID, oldest first, at most LIMIT (0 = no
 * limit); KIND, if not NULL, filters by kind prefix ("daemon." matches
 * "daemon.start"; '%' and '_' are plain characters). A non-zero return from
 * CB stops the walk and is returned. The strings of EV are valid only during
 * the call. */
int rocmd_db_events_list(struct rocmd_db *db, int64_t after_id, int limit, const char *kind,
			 int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx);
/* The newest LIMIT events (0 = all) matching KIND, walked oldest first. */
int rocmd_db_events_tail(struct rocmd_db *db, int limit, const char *kind,
			 int (*cb)(const struct rocmd_event *ev, void *ctx), void *ctx);
/* The id of the newest event, 0 when there is none, or a negative error code. */
int64_t rocmd_db_events_last_id(struct rocmd_db *db);

/* Daemon runs: one row per start, closed on clean shutdown, so the next start
 * can tell whether the previous run ended cleanly. run_begin sets
 * *previous_clean to 1 when the previous run was ended (or there was none),
 * 0 after a crash. run_end returns ROCMD_ENOTFOUND for an unknown RUN_ID and
 * keeps the first end time when called twice. */
int rocmd_db_run_begin(struct rocmd_db *db, int64_t pid, const char *version, int64_t *run_id,
		       int *previous_clean);
int rocmd_db_run_end(struct rocmd_db *db, int64_t run_id);

/* Counts shown by `rocmctl status`. Tables that later migrations add are
 * counted once they exist; until then the count is 0. */
struct rocmd_db_counts {
	int64_t sdks;
	int64_t packages;
	int64_t deployments;
	int64_t tune_jobs;
	int64_t events;
};
int rocmd_db_counts(struct rocmd_db *db, struct rocmd_db_counts *out);

/* The last SQLite error message for logs. */
const char *rocmd_db_errmsg(struct rocmd_db *db);

#endif
