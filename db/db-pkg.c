/*
 * Package store rows on SQLite (see db-pkg.h). Queries are prepared per call:
 * the store's traffic is a handful of statements per user command, and a
 * callback may call back in.
 */
#include "db/db-pkg.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

struct rocmd_pkg_db {
	sqlite3 *h; /* first: borrowed from the daemon's struct rocmd_db */
};

int
rocmd_pkg_db_attach(struct rocmd_db *main, struct rocmd_pkg_db **out)
{
	void *db;
	int rc = rocmd_db_view_new(main, sizeof(**out), &db);

	*out = db;
	return rc;
}

void
rocmd_pkg_db_detach(struct rocmd_pkg_db *db)
{
	free(db);
}

const char *
rocmd_pkg_db_errmsg(struct rocmd_pkg_db *db)
{
	return db != NULL ? sqlite3_errmsg(db->h) : "no database";
}

static int
find_digest(struct rocmd_pkg_db *db, const char *digest, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->h, "SELECT id FROM package WHERE digest = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 1, digest);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? ROCMD_ENOTFOUND : rocmd_db_map_rc(rc);
}

int
rocmd_pkg_db_add(struct rocmd_pkg_db *db, const struct rocmd_db_pkg *p,
                 const struct rocmd_db_pkg_file *files, size_t nfiles, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	*id = 0;
	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rocmd_db_map_rc(rc);
	if ((err = find_digest(db, p->digest, id)) != ROCMD_ENOTFOUND) {
		if (err == 0)
			err = ROCMD_EEXISTS;
		goto out;
	}
	rc = sqlite3_prepare_v2(
	    db->h,
	    "INSERT INTO package (digest, name, source, imported_ms, platform, sdk, sdk_source, "
	    "version_hint, archs, binary, binary_version, file_count, total_size, identity) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rocmd_db_bind_text(st, 1, p->digest);
		rocmd_db_bind_text(st, 2, p->name);
		rocmd_db_bind_text(st, 3, p->source);
		sqlite3_bind_int64(st, 4, p->imported_ms);
		rocmd_db_bind_text(st, 5, p->platform);
		rocmd_db_bind_text(st, 6, p->sdk);
		rocmd_db_bind_text(st, 7, p->sdk_source);
		rocmd_db_bind_text(st, 8, p->version_hint);
		rocmd_db_bind_text(st, 9, p->archs != NULL ? p->archs : "");
		rocmd_db_bind_text(st, 10, p->binary);
		rocmd_db_bind_text(st, 11, p->binary_version);
		sqlite3_bind_int64(st, 12, p->file_count);
		sqlite3_bind_int64(st, 13, p->total_size);
		rocmd_db_bind_text(st, 14, p->identity != NULL ? p->identity : "{}");
		rc = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		err = rocmd_db_map_rc(rc);
		goto out;
	}
	*id = sqlite3_last_insert_rowid(db->h);
	rc = sqlite3_prepare_v2(
	    db->h,
	    "INSERT INTO package_file (package_id, path, kind, exec, size, sha256, "
	    "link) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	    -1, &st, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < nfiles; i++) {
		const struct rocmd_db_pkg_file *f = &files[i];
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, *id);
		rocmd_db_bind_text(st, 2, f->path);
		rocmd_db_bind_text(st, 3, f->kind == 'l' ? "l" : "f");
		sqlite3_bind_int(st, 4, f->exec);
		sqlite3_bind_int64(st, 5, f->size);
		rocmd_db_bind_text(st, 6, f->sha256);
		rocmd_db_bind_text(st, 7, f->link);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	err = rocmd_db_map_rc(rc);
out:
	if (err == 0) {
		rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
		err = rocmd_db_map_rc(rc);
	}
	if (err != 0) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		if (err != ROCMD_EEXISTS)
			*id = 0;
	}
	return err;
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int
rocmd_pkg_db_list(struct rocmd_pkg_db *db, int64_t id,
                  int (*cb)(const struct rocmd_db_pkg *p, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0, found = 0;

	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT id, digest, name, source, imported_ms, platform, sdk, "
	    "sdk_source, version_hint, archs, binary, binary_version, file_count, "
	    "total_size, identity FROM package WHERE ?1 = 0 OR id = ?1 ORDER BY id",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_pkg p = {
		    .id = sqlite3_column_int64(st, 0),
		    .digest = col_text(st, 1),
		    .name = col_text(st, 2),
		    .source = col_text(st, 3),
		    .imported_ms = sqlite3_column_int64(st, 4),
		    .platform = col_text(st, 5),
		    .sdk = col_text(st, 6),
		    .sdk_source = col_text(st, 7),
		    .version_hint = col_text(st, 8),
		    .archs = col_text(st, 9),
		    .binary = col_text(st, 10),
		    .binary_version = col_text(st, 11),
		    .file_count = sqlite3_column_int64(st, 12),
		    .total_size = sqlite3_column_int64(st, 13),
		    .identity = col_text(st, 14),
		};
		found = 1;
		rc = SQLITE_OK;
		if ((err = cb(&p, ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	if (err == 0 && id != 0 && !found)
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_pkg_db_files(struct rocmd_pkg_db *db, int64_t id, int64_t offset, int64_t limit,
                   int (*cb)(const struct rocmd_db_pkg_file *f, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(db->h,
	                        "SELECT path, kind, exec, size, sha256, link FROM package_file "
	                        "WHERE package_id = ?1 ORDER BY path LIMIT ?3 OFFSET ?2",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, offset);
		sqlite3_bind_int64(st, 3, limit > 0 ? limit : -1);
	}
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = col_text(st, 1);
		struct rocmd_db_pkg_file f = {
		    .path = col_text(st, 0),
		    .kind = kind != NULL ? kind[0] : 'f',
		    .exec = sqlite3_column_int(st, 2),
		    .size = sqlite3_column_int64(st, 3),
		    .sha256 = col_text(st, 4),
		    .link = col_text(st, 5),
		};
		rc = SQLITE_OK;
		if ((err = cb(&f, ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_pkg_db_set_sdk(struct rocmd_pkg_db *db, int64_t id, const char *sdk, const char *sdk_source,
                     const char *identity)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	rc = sqlite3_prepare_v2(db->h,
	                        "UPDATE package SET sdk = ?2, sdk_source = ?3, identity = ?4 "
	                        "WHERE id = ?1",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		rocmd_db_bind_text(st, 2, sdk);
		rocmd_db_bind_text(st, 3, sdk_source);
		rocmd_db_bind_text(st, 4, identity != NULL ? identity : "{}");
		rc = sqlite3_step(st);
	}
	err = rocmd_db_map_rc(rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_ENOTFOUND;
	sqlite3_finalize(st);
	return err;
}

int
rocmd_pkg_db_remove(struct rocmd_pkg_db *db, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rocmd_db_map_rc(rc);
	rc = sqlite3_prepare_v2(db->h, "DELETE FROM package WHERE id = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	err = rocmd_db_map_rc(rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_ENOTFOUND;
	sqlite3_finalize(st);
	rc = sqlite3_exec(db->h, err == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
	if (err == 0)
		err = rocmd_db_map_rc(rc);
	return err;
}

int
rocmd_pkg_db_deployments(struct rocmd_pkg_db *db, int64_t id, int64_t *count)
{
	sqlite3_stmt *st = NULL;
	int rc, has = 0;

	*count = 0;
	/* The deploy migration adds the table; until then nothing is deployed. */
	rc = sqlite3_prepare_v2(db->h,
	                        "SELECT count(*) FROM pragma_table_info('deployment') "
	                        "WHERE name = 'package_id'",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		has = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_ROW)
		return rocmd_db_map_rc(rc);
	if (!has)
		return 0;
	/* Only what is in place counts: the history of replaced deployments
	 * keeps its package id, but a rollback restores from backups, not the
	 * store. */
	rc = sqlite3_prepare_v2(db->h,
	                        "SELECT count(*) FROM deployment WHERE package_id = ?1 AND "
	                        "state = 'live'",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		*count = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rocmd_db_map_rc(rc);
}

int
rocmd_pkg_db_objects(struct rocmd_pkg_db *db, int64_t id,
                     int (*cb)(const char *sha256, int64_t size, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT sha256, max(size) FROM package_file WHERE sha256 IS NOT NULL "
	    "AND (?1 = 0 OR package_id = ?1) GROUP BY sha256 ORDER BY sha256",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if ((err = cb(col_text(st, 0), sqlite3_column_int64(st, 1), ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_pkg_db_stats(struct rocmd_pkg_db *db, struct rocmd_pkg_db_stats *out)
{
	sqlite3_stmt *st = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT (SELECT count(*) FROM package), count(*), coalesce(sum(size), 0), "
	    "(SELECT count(*) FROM (SELECT DISTINCT sha256 FROM package_file WHERE sha256 IS NOT "
	    "NULL)), (SELECT coalesce(sum(s), 0) FROM (SELECT max(size) AS s FROM package_file "
	    "WHERE sha256 IS NOT NULL GROUP BY sha256)) FROM package_file",
	    -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->packages = sqlite3_column_int64(st, 0);
		out->files = sqlite3_column_int64(st, 1);
		out->bytes = sqlite3_column_int64(st, 2);
		out->objects = sqlite3_column_int64(st, 3);
		out->object_bytes = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rocmd_db_map_rc(rc);
}
