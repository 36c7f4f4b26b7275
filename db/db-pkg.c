/*
 * Package store rows on SQLite (see db-pkg.h), through the statement helper
 * of db-internal.h: each statement below is prepared on first use and kept
 * until detach.
 */
#include "db/db-pkg.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

enum {
	Q_FIND_DIGEST,
	Q_ADD,
	Q_ADD_FILE,
	Q_LIST,
	Q_FILES,
	Q_SET_SDK,
	Q_REMOVE,
	Q_UNLINK,
	Q_HAS_DEPLOYMENTS,
	Q_DEPLOYMENTS,
	Q_OBJECTS,
	Q_STATS,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
    [Q_FIND_DIGEST] = "SELECT id FROM package WHERE digest = ?1",
    [Q_ADD] = "INSERT INTO package (digest, name, source, imported_ms, platform, sdk, "
              "sdk_source, version_hint, archs, binary, binary_version, file_count, "
              "total_size, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
              "?12, ?13, ?14)",
    [Q_ADD_FILE] = "INSERT INTO package_file (package_id, path, kind, exec, size, sha256, "
                   "link) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_LIST] = "SELECT id, digest, name, source, imported_ms, platform, sdk, sdk_source, "
               "version_hint, archs, binary, binary_version, file_count, total_size, identity "
               "FROM package WHERE ?1 = 0 OR id = ?1 ORDER BY id",
    [Q_FILES] = "SELECT path, kind, exec, size, sha256, link FROM package_file "
                "WHERE package_id = ?1 ORDER BY path LIMIT ?3 OFFSET ?2",
    [Q_SET_SDK] = "UPDATE package SET sdk = ?2, sdk_source = ?3, identity = ?4 WHERE id = ?1",
    [Q_REMOVE] = "DELETE FROM package WHERE id = ?1",
    /* Deployments of it keep its name and digest (migration 10). */
    [Q_UNLINK] = "UPDATE deployment SET package_name = coalesce(package_name, (SELECT name "
                 "FROM package WHERE id = ?1)), package_digest = coalesce(package_digest, "
                 "(SELECT digest FROM package WHERE id = ?1)), package_id = NULL "
                 "WHERE package_id = ?1",
    /* The deploy migration adds the table; until then nothing is deployed. */
    [Q_HAS_DEPLOYMENTS] = "SELECT count(*) FROM pragma_table_info('deployment') "
                          "WHERE name = 'package_id'",
    /* Only what is in place counts: the history of replaced deployments
     * keeps its package id, but a rollback restores from backups, not the
     * store. */
    [Q_DEPLOYMENTS] = "SELECT count(*) FROM deployment WHERE package_id = ?1 AND "
                      "state = 'live'",
    [Q_OBJECTS] = "SELECT sha256, max(size) FROM package_file WHERE sha256 IS NOT NULL "
                  "AND (?1 = 0 OR package_id = ?1) GROUP BY sha256 ORDER BY sha256",
    [Q_STATS] = "SELECT (SELECT count(*) FROM package), count(*), coalesce(sum(size), 0), "
                "(SELECT count(*) FROM (SELECT DISTINCT sha256 FROM package_file WHERE "
                "sha256 IS NOT NULL)), (SELECT coalesce(sum(s), 0) FROM (SELECT max(size) AS "
                "s FROM package_file WHERE sha256 IS NOT NULL GROUP BY sha256)) "
                "FROM package_file",
};

struct rocmd_pkg_db {
	struct db_conn c; /* first: the daemon's connection, borrowed */
};

DB_MODULE_DEFINE(struct rocmd_pkg_db, rocmd_pkg_db_attach, rocmd_pkg_db_detach, rocmd_pkg_db_errmsg,
                 queries, Q_COUNT_)

static int
add_files(struct rocmd_pkg_db *db, int64_t id, const struct rocmd_db_pkg_file *files, size_t nfiles)
{
	struct db_stmt s;
	int err = 0;

	for (size_t i = 0; err == 0 && i < nfiles; i++) {
		const struct rocmd_db_pkg_file *f = &files[i];

		db_stmt_open(&s, &db->c, Q_ADD_FILE);
		db_bind_int64(&s, 1, id);
		db_bind_text(&s, 2, f->path);
		db_bind_text(&s, 3, f->kind == 'l' ? "l" : "f");
		db_bind_int64(&s, 4, f->exec);
		db_bind_int64(&s, 5, f->size);
		db_bind_text(&s, 6, f->sha256);
		db_bind_text(&s, 7, f->link);
		err = db_stmt_exec(&s);
	}
	return err;
}

/* Adds package P and its files (no package with its digest is stored). */
static int
add_package(struct rocmd_pkg_db *db, const struct rocmd_db_pkg *p,
            const struct rocmd_db_pkg_file *files, size_t nfiles, int64_t *id)
{
	struct db_stmt s;
	int err;

	db_stmt_open(&s, &db->c, Q_ADD);
	db_bind_text(&s, 1, p->digest);
	db_bind_text(&s, 2, p->name);
	db_bind_text(&s, 3, p->source);
	db_bind_int64(&s, 4, p->imported_ms);
	db_bind_text(&s, 5, p->platform);
	db_bind_text(&s, 6, p->sdk);
	db_bind_text(&s, 7, p->sdk_source);
	db_bind_text(&s, 8, p->version_hint);
	db_bind_text(&s, 9, p->archs != NULL ? p->archs : "");
	db_bind_text(&s, 10, p->binary);
	db_bind_text(&s, 11, p->binary_version);
	db_bind_int64(&s, 12, p->file_count);
	db_bind_int64(&s, 13, p->total_size);
	db_bind_text(&s, 14, p->identity != NULL ? p->identity : "{}");
	err = db_stmt_exec(&s);
	if (err != 0)
		return err;
	*id = db_last_id(&db->c);
	return add_files(db, *id, files, nfiles);
}

int
rocmd_pkg_db_add(struct rocmd_pkg_db *db, const struct rocmd_db_pkg *p,
                 const struct rocmd_db_pkg_file *files, size_t nfiles, int64_t *id)
{
	struct db_stmt s;
	int err;

	*id = 0;
	err = db_begin(&db->c);
	if (err != 0)
		return err;
	db_stmt_open(&s, &db->c, Q_FIND_DIGEST);
	db_bind_text(&s, 1, p->digest);
	err = db_stmt_int(&s, id);
	if (err == 0)
		err = ROCMD_EEXISTS;
	else if (err == ROCMD_ENOTFOUND)
		err = add_package(db, p, files, nfiles, id);
	err = db_end(&db->c, err);
	if (err != 0 && err != ROCMD_EEXISTS)
		*id = 0;
	return err;
}

int
rocmd_pkg_db_list(struct rocmd_pkg_db *db, int64_t id,
                  int (*cb)(const struct rocmd_db_pkg *p, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0, found = 0;

	db_stmt_open(&s, &db->c, Q_LIST);
	db_bind_int64(&s, 1, id);
	while (err == 0 && db_stmt_row(&s)) {
		struct rocmd_db_pkg p = {
		    .id = db_col_int64(&s, 0),
		    .digest = db_col_text(&s, 1),
		    .name = db_col_text(&s, 2),
		    .source = db_col_text(&s, 3),
		    .imported_ms = db_col_int64(&s, 4),
		    .platform = db_col_text(&s, 5),
		    .sdk = db_col_text(&s, 6),
		    .sdk_source = db_col_text(&s, 7),
		    .version_hint = db_col_text(&s, 8),
		    .archs = db_col_text(&s, 9),
		    .binary = db_col_text(&s, 10),
		    .binary_version = db_col_text(&s, 11),
		    .file_count = db_col_int64(&s, 12),
		    .total_size = db_col_int64(&s, 13),
		    .identity = db_col_text(&s, 14),
		};
		found = 1;
		err = cb(&p, ctx);
	}
	err = db_stmt_end(&s, err);
	if (err == 0 && id != 0 && !found)
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_pkg_db_files(struct rocmd_pkg_db *db, int64_t id, int64_t offset, int64_t limit,
                   int (*cb)(const struct rocmd_db_pkg_file *f, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &db->c, Q_FILES);
	db_bind_int64(&s, 1, id);
	db_bind_int64(&s, 2, offset);
	db_bind_limit(&s, 3, limit);
	while (err == 0 && db_stmt_row(&s)) {
		const char *kind = db_col_text(&s, 1);
		struct rocmd_db_pkg_file f = {
		    .path = db_col_text(&s, 0),
		    .kind = kind != NULL ? kind[0] : 'f',
		    .exec = (int)db_col_int64(&s, 2),
		    .size = db_col_int64(&s, 3),
		    .sha256 = db_col_text(&s, 4),
		    .link = db_col_text(&s, 5),
		};
		err = cb(&f, ctx);
	}
	return db_stmt_end(&s, err);
}

int
rocmd_pkg_db_set_sdk(struct rocmd_pkg_db *db, int64_t id, const char *sdk, const char *sdk_source,
                     const char *identity)
{
	struct db_stmt s;
	int err;

	db_stmt_open(&s, &db->c, Q_SET_SDK);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, sdk);
	db_bind_text(&s, 3, sdk_source);
	db_bind_text(&s, 4, identity != NULL ? identity : "{}");
	err = db_stmt_exec(&s);
	return err == 0 && db_changes(&db->c) == 0 ? ROCMD_ENOTFOUND : err;
}

int
rocmd_pkg_db_remove(struct rocmd_pkg_db *db, int64_t id)
{
	struct db_stmt s;
	int64_t live = 0;
	int err;

	err = db_begin(&db->c);
	if (err != 0)
		return err;
	/* What is in place stays (the caller says so first; this is the guard). */
	err = rocmd_pkg_db_deployments(db, id, &live);
	if (err == 0 && live > 0)
		err = ROCMD_EBUSY;
	if (err == 0) {
		db_stmt_open(&s, &db->c, Q_UNLINK);
		db_bind_int64(&s, 1, id);
		err = db_stmt_exec(&s);
	}
	if (err == 0) {
		db_stmt_open(&s, &db->c, Q_REMOVE);
		db_bind_int64(&s, 1, id);
		err = db_stmt_exec(&s);
	}
	if (err == 0 && db_changes(&db->c) == 0)
		err = ROCMD_ENOTFOUND;
	return db_end(&db->c, err);
}

int
rocmd_pkg_db_deployments(struct rocmd_pkg_db *db, int64_t id, int64_t *count)
{
	struct db_stmt s;
	int64_t has;
	int err;

	*count = 0;
	db_stmt_open(&s, &db->c, Q_HAS_DEPLOYMENTS);
	err = db_stmt_int(&s, &has);
	if (err != 0 || has == 0)
		return err;
	db_stmt_open(&s, &db->c, Q_DEPLOYMENTS);
	db_bind_int64(&s, 1, id);
	return db_stmt_int(&s, count);
}

int
rocmd_pkg_db_objects(struct rocmd_pkg_db *db, int64_t id,
                     int (*cb)(const char *sha256, int64_t size, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &db->c, Q_OBJECTS);
	db_bind_int64(&s, 1, id);
	while (err == 0 && db_stmt_row(&s))
		err = cb(db_col_text(&s, 0), db_col_int64(&s, 1), ctx);
	return db_stmt_end(&s, err);
}

int
rocmd_pkg_db_stats(struct rocmd_pkg_db *db, struct rocmd_pkg_db_stats *out)
{
	struct db_stmt s;

	memset(out, 0, sizeof(*out));
	db_stmt_open(&s, &db->c, Q_STATS);
	if (db_stmt_row(&s)) {
		out->packages = db_col_int64(&s, 0);
		out->files = db_col_int64(&s, 1);
		out->bytes = db_col_int64(&s, 2);
		out->objects = db_col_int64(&s, 3);
		out->object_bytes = db_col_int64(&s, 4);
	}
	return db_stmt_end(&s, 0);
}
