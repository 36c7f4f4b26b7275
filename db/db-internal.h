/*
 * Helpers shared by the db/ modules (db.c, db-pkg.c, db-sdk.c, db-deploy.c,
 * db-tune.c) and nothing else: the modules' handles on the one connection, the
 * one mapping from SQLite result codes to rocmd errors, and binding of
 * optional text.
 */
#ifndef ROCMD_DB_INTERNAL_H
#define ROCMD_DB_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>

struct rocmd_db;

/* The daemon's one connection, shared by the feature modules' accessors. */
sqlite3 *rocmd_db_sqlite(struct rocmd_db *db);
/* A feature module's handle (db-pkg.c, db-sdk.c, db-deploy.c): a struct of
 * SIZE bytes whose first member is the borrowed connection (sqlite3 *h),
 * zeroed but for it. Freed with free(). */
int rocmd_db_view_new(struct rocmd_db *db, size_t size, void **out);
/* SQLite result code → 0 or a rocmd error (extended codes are folded). */
int rocmd_db_map_rc(int rc);
/* Binds S, or NULL when S is NULL; S must outlive the statement's step. */
int rocmd_db_bind_text(sqlite3_stmt *st, int i, const char *s);

#endif
