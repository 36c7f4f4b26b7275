/*
 * What the db/ modules share, implemented in db-stmt.c: the one mapping from
 * SQLite result codes to rocmd errors, the handle every table module embeds
 * (struct db_conn: the connection, the module's statements, the message of
 * its last failure) and the statement helper that is the one way db/ runs SQL.
 *
 * A module names each statement it runs in a table indexed by its own enum.
 * db_stmt_open() hands out that statement, prepared on first use and kept
 * until the module detaches; when the statement is already in use (a
 * callback called back into the module during a walk over it), a fresh copy
 * is prepared for the nested use and finalized after it. Binding and stepping
 * never need checking one by one: the first failure sticks to the struct
 * db_stmt, later calls do nothing, its message goes to the module's buffer
 * before anything (a ROLLBACK) can replace it, and db_stmt_done() resets the
 * statement and returns the failure as a rocmd error. Only the thread that
 * owns the connection uses any of this.
 */
#ifndef ROCMD_DB_INTERNAL_H
#define ROCMD_DB_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct rocmd_db;

/* The daemon's one connection: module handles borrow it; tests write rows
 * on it by hand. */
sqlite3 *rocmd_db_sqlite(struct rocmd_db *db);
/* SQLite result code → 0 or a rocmd error (extended codes are folded). */
int rocmd_db_map_rc(int rc);

/* Milliseconds since the Unix epoch, for the time columns. */
int64_t db_now_ms(void);

struct db_slot {
	sqlite3_stmt *st;
	int busy;
};

/* A module's handle on a connection. */
struct db_conn {
	sqlite3 *h;
	const char *const *sql; /* the module's statements, by its enum */
	struct db_slot *slot;   /* one per statement */
	int count;
	char msg[256]; /* the last failure; "" when the last statement was fine */
};

/* Sets C up on connection H for the COUNT statements of SQL (which must
 * outlive C); nothing is prepared yet. ROCMD_ENOMEM. */
int db_conn_init(struct db_conn *c, sqlite3 *h, const char *const *sql, int count);
/* Finalizes C's statements; the connection stays open. */
void db_conn_fini(struct db_conn *c);
/* A table module's handle on MAIN's connection: SIZE bytes, zeroed, whose
 * first member is its struct db_conn. NULL with *ERR set on failure. */
void *db_module_new(struct rocmd_db *main, size_t size, const char *const *sql, int count,
                    int *err);
/* Finalizes and frees a handle from db_module_new. NULL is fine. */
void db_module_free(void *mod);

/*
 * Defines a table module's attach, detach and errmsg, whose names are given
 * in full so that they can be found: TYPE is the module's handle, a struct
 * whose first member is its struct db_conn c, on the COUNT statements of SQL.
 * Attach uses MAIN's connection, detach frees the handle (NULL is fine) and
 * leaves the connection to MAIN.
 */
#define DB_MODULE_DEFINE(type, attach, detach, errmsg, sql, count)                                 \
	int attach(struct rocmd_db *main, type **out)                                              \
	{                                                                                          \
		int err_;                                                                          \
		*out = db_module_new(main, sizeof(**out), sql, count, &err_);                      \
		return err_;                                                                       \
	}                                                                                          \
	void detach(type *db)                                                                      \
	{                                                                                          \
		db_module_free(db);                                                                \
	}                                                                                          \
	const char *errmsg(type *db)                                                               \
	{                                                                                          \
		return db_errmsg(db != NULL ? &db->c : NULL);                                      \
	}

/* The message of C's last failure, "not an error" after success, "no
 * database" for NULL. */
const char *db_errmsg(const struct db_conn *c);
void db_set_msg(struct db_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs SQL, which may hold several statements (migrations, pragmas). */
int db_exec_sql(struct db_conn *c, const char *sql);
/* BEGIN IMMEDIATE; COMMIT; ROLLBACK of an open transaction (its own failure
 * is not recorded: the message that caused it stays). */
int db_begin(struct db_conn *c);
int db_commit(struct db_conn *c);
void db_rollback(struct db_conn *c);
/* Commits when ERR is 0, else rolls back; returns ERR or the commit's error. */
int db_end(struct db_conn *c, int err);
int64_t db_last_id(const struct db_conn *c);
/* Rows the last INSERT, UPDATE or DELETE changed. */
int64_t db_changes(const struct db_conn *c);

/* One use of a statement, from open to done. */
struct db_stmt {
	struct db_conn *c;
	sqlite3_stmt *st;
	struct db_slot *slot; /* NULL: prepared for this use, finalized when done */
	int rc;               /* SQLITE_OK, or the first failure */
};

/* Statement ID of C's table, reset and unbound. */
void db_stmt_open(struct db_stmt *s, struct db_conn *c, int id);
/* A statement that is not in C's table (built at run time, or run once). */
void db_stmt_sql(struct db_stmt *s, struct db_conn *c, const char *sql);

/* Typed binders by parameter number (?N). Text is bound without a copy, so
 * it must live until the statement is done; NULL text binds NULL. */
void db_bind_int64(struct db_stmt *s, int i, int64_t v);
void db_bind_double(struct db_stmt *s, int i, double v);
void db_bind_text(struct db_stmt *s, int i, const char *v);
/* A row id: NULL unless V > 0. */
void db_bind_id(struct db_stmt *s, int i, int64_t v);
/* A time in milliseconds: NULL unless 0 < V < 1e300 (unknown, or infinite). */
void db_bind_ms(struct db_stmt *s, int i, double v);
/* A LIMIT: V > 0, else no limit. */
void db_bind_limit(struct db_stmt *s, int i, int64_t v);

/* Steps: 1 when a row is ready, 0 at the end or after a failure. */
int db_stmt_row(struct db_stmt *s);
/* Resets (or finalizes) S; 0 or the rocmd error of its first failure. */
int db_stmt_done(struct db_stmt *s);
/* Steps S to its end, then done. */
int db_stmt_exec(struct db_stmt *s);
/* Done after a lookup: done's error, else 0 when FOUND, else
 * ROCMD_ENOTFOUND. */
int db_stmt_found(struct db_stmt *s, int found);
/* Steps S once, then done: *OUT gets the integer of its row's first
 * column, or 0 and ROCMD_ENOTFOUND when there is no row. */
int db_stmt_int(struct db_stmt *s, int64_t *out);
/* Done, returning ERR when it is not 0 (a callback's return, a row that
 * was not there), else done's result. */
int db_stmt_end(struct db_stmt *s, int err);

/* Column readers of the current row. */
int64_t db_col_int64(struct db_stmt *s, int i);
double db_col_double(struct db_stmt *s, int i);
/* NULL for NULL; valid until the next step or done. */
const char *db_col_text(struct db_stmt *s, int i);
/* Copies the text of column I into OUT ("" for NULL), cut to fit. */
void db_col_copy(struct db_stmt *s, int i, char *out, size_t len);

#endif
