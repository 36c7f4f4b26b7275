/*
 * The statement helper and module handle of db/ (see db-internal.h): every
 * statement a db/ module runs goes through here, so preparing, binding,
 * stepping, error capture and reset are written once. The error mapping lives
 * here too, with the few connection-level calls (transactions, scripts).
 */
#include "db/db-internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"

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

int64_t
db_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
db_conn_init(struct db_conn *c, sqlite3 *h, const char *const *sql, int count)
{
	c->h = h;
	c->sql = sql;
	c->count = count;
	c->msg[0] = '\0';
	c->slot = count > 0 ? calloc((size_t)count, sizeof(*c->slot)) : NULL;
	return count > 0 && c->slot == NULL ? ROCMD_ENOMEM : 0;
}

void
db_conn_fini(struct db_conn *c)
{
	for (int i = 0; c->slot != NULL && i < c->count; i++)
		sqlite3_finalize(c->slot[i].st);
	free(c->slot);
	c->slot = NULL;
	c->count = 0;
}

void *
db_module_new(struct rocmd_db *main, size_t size, const char *const *sql, int count, int *err)
{
	sqlite3 *h = rocmd_db_sqlite(main);
	struct db_conn *c;

	*err = ROCMD_EINVAL;
	if (h == NULL || size < sizeof(*c))
		return NULL;
	*err = ROCMD_ENOMEM;
	c = calloc(1, size);
	if (c == NULL)
		return NULL;
	*err = db_conn_init(c, h, sql, count);
	if (*err != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void
db_module_free(void *mod)
{
	if (mod == NULL)
		return;
	db_conn_fini(mod);
	free(mod);
}

const char *
db_errmsg(const struct db_conn *c)
{
	if (c == NULL)
		return "no database";
	return c->msg[0] != '\0' ? c->msg : sqlite3_errstr(SQLITE_OK);
}

void
db_set_msg(struct db_conn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
}

/* Keeps RC's message when RC is a failure; returns RC. */
static int
capture(struct db_conn *c, int rc)
{
	if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
		snprintf(c->msg, sizeof(c->msg), "%s", sqlite3_errmsg(c->h));
	return rc;
}

int
db_exec_sql(struct db_conn *c, const char *sql)
{
	c->msg[0] = '\0';
	return rocmd_db_map_rc(capture(c, sqlite3_exec(c->h, sql, NULL, NULL, NULL)));
}

int
db_begin(struct db_conn *c)
{
	return db_exec_sql(c, "BEGIN IMMEDIATE");
}

int
db_commit(struct db_conn *c)
{
	return db_exec_sql(c, "COMMIT");
}

void
db_rollback(struct db_conn *c)
{
	if (!sqlite3_get_autocommit(c->h))
		sqlite3_exec(c->h, "ROLLBACK", NULL, NULL, NULL);
}

int
db_end(struct db_conn *c, int err)
{
	if (err == 0)
		err = db_commit(c);
	if (err != 0)
		db_rollback(c);
	return err;
}

int64_t
db_last_id(const struct db_conn *c)
{
	return sqlite3_last_insert_rowid(c->h);
}

int64_t
db_changes(const struct db_conn *c)
{
	return sqlite3_changes(c->h);
}

static void
stmt_prepare(struct db_stmt *s, const char *sql, unsigned flags)
{
	s->rc = capture(s->c, sqlite3_prepare_v3(s->c->h, sql, -1, flags, &s->st, NULL));
}

void
db_stmt_open(struct db_stmt *s, struct db_conn *c, int id)
{
	struct db_slot *slot = &c->slot[id];

	*s = (struct db_stmt){.c = c};
	c->msg[0] = '\0';
	if (slot->busy) {
		stmt_prepare(s, c->sql[id], 0);
		return;
	}
	if (slot->st == NULL) {
		stmt_prepare(s, c->sql[id], SQLITE_PREPARE_PERSISTENT);
		slot->st = s->st;
	}
	s->st = slot->st;
	if (s->st != NULL) {
		s->slot = slot;
		slot->busy = 1;
	}
}

void
db_stmt_sql(struct db_stmt *s, struct db_conn *c, const char *sql)
{
	*s = (struct db_stmt){.c = c};
	c->msg[0] = '\0';
	stmt_prepare(s, sql, 0);
}

/* Records a binder's result; a failure sticks. */
static void
bound(struct db_stmt *s, int rc)
{
	if (s->rc == SQLITE_OK)
		s->rc = capture(s->c, rc);
}

void
db_bind_int64(struct db_stmt *s, int i, int64_t v)
{
	if (s->rc == SQLITE_OK)
		bound(s, sqlite3_bind_int64(s->st, i, v));
}

void
db_bind_double(struct db_stmt *s, int i, double v)
{
	if (s->rc == SQLITE_OK)
		bound(s, sqlite3_bind_double(s->st, i, v));
}

void
db_bind_text(struct db_stmt *s, int i, const char *v)
{
	if (s->rc == SQLITE_OK)
		bound(s, v != NULL ? sqlite3_bind_text(s->st, i, v, -1, SQLITE_STATIC)
		                   : sqlite3_bind_null(s->st, i));
}

void
db_bind_id(struct db_stmt *s, int i, int64_t v)
{
	if (v > 0)
		db_bind_int64(s, i, v);
	else if (s->rc == SQLITE_OK)
		bound(s, sqlite3_bind_null(s->st, i));
}

void
db_bind_ms(struct db_stmt *s, int i, double v)
{
	if (v > 0 && v < 1e300)
		db_bind_double(s, i, v);
	else if (s->rc == SQLITE_OK)
		bound(s, sqlite3_bind_null(s->st, i));
}

void
db_bind_limit(struct db_stmt *s, int i, int64_t v)
{
	db_bind_int64(s, i, v > 0 ? v : -1);
}

int
db_stmt_row(struct db_stmt *s)
{
	int rc;

	if (s->rc != SQLITE_OK && s->rc != SQLITE_ROW)
		return 0;
	rc = capture(s->c, sqlite3_step(s->st));
	s->rc = rc;
	return rc == SQLITE_ROW;
}

int
db_stmt_done(struct db_stmt *s)
{
	if (s->slot != NULL) {
		sqlite3_reset(s->st);
		sqlite3_clear_bindings(s->st);
		s->slot->busy = 0;
	} else {
		sqlite3_finalize(s->st);
	}
	s->st = NULL;
	s->slot = NULL;
	return rocmd_db_map_rc(s->rc);
}

int
db_stmt_exec(struct db_stmt *s)
{
	while (db_stmt_row(s))
		;
	return db_stmt_done(s);
}

int
db_stmt_found(struct db_stmt *s, int found)
{
	int err = db_stmt_done(s);

	return err != 0 ? err : found ? 0 : ROCMD_ENOTFOUND;
}

int
db_stmt_int(struct db_stmt *s, int64_t *out)
{
	int found = db_stmt_row(s);

	*out = found ? db_col_int64(s, 0) : 0;
	return db_stmt_found(s, found);
}

int
db_stmt_end(struct db_stmt *s, int err)
{
	int done = db_stmt_done(s);

	return err != 0 ? err : done;
}

int64_t
db_col_int64(struct db_stmt *s, int i)
{
	return sqlite3_column_int64(s->st, i);
}

double
db_col_double(struct db_stmt *s, int i)
{
	return sqlite3_column_double(s->st, i);
}

const char *
db_col_text(struct db_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s->st, i);
}

void
db_col_copy(struct db_stmt *s, int i, char *out, size_t len)
{
	const char *t = db_col_text(s, i);

	snprintf(out, len, "%s", t != NULL ? t : "");
}
