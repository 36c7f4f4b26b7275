/*
 * SDK discovery rows on SQLite (see db-sdk.h). Queries are prepared per call:
 * a scan writes a handful of rows, and only when something changed.
 */
#include "db/db-sdk.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

struct rocmd_sdk_db {
	sqlite3 *h; /* first: borrowed from the daemon's struct rocmd_db */
};

int
rocmd_sdk_db_attach(struct rocmd_db *main, struct rocmd_sdk_db **out)
{
	void *db;
	int rc = rocmd_db_view_new(main, sizeof(**out), &db);

	*out = db;
	return rc;
}

void
rocmd_sdk_db_detach(struct rocmd_sdk_db *db)
{
	free(db);
}

const char *
rocmd_sdk_db_errmsg(struct rocmd_sdk_db *db)
{
	return db != NULL ? sqlite3_errmsg(db->h) : "no database";
}

int
rocmd_sdk_db_begin(struct rocmd_sdk_db *db)
{
	return rocmd_db_map_rc(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
}

int
rocmd_sdk_db_commit(struct rocmd_sdk_db *db)
{
	return rocmd_db_map_rc(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
}

void
rocmd_sdk_db_rollback(struct rocmd_sdk_db *db)
{
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

int
rocmd_sdk_db_list(struct rocmd_sdk_db *db, int64_t id, const char *path,
                  int (*cb)(const struct rocmd_db_sdk *s, void *ctx), void *ctx)
{
	static const char *const sql =
	    "SELECT s.id, s.path, s.layout, s.version, s.version_source, s.version_conflict,"
	    " s.hip_runtime, s.rocblas_binary, s.state, s.first_seen_ms, s.last_seen_ms,"
	    " s.removed_ms, s.detail, l.path, l.fingerprint, l.archs, l.code_object_archs,"
	    " l.nfiles, l.total_size, l.first_seen_ms"
	    " FROM sdk s LEFT JOIN sdk_library l ON l.sdk_id = s.id AND l.current = 1"
	    " WHERE (?1 = 0 OR s.id = ?1) AND (?2 IS NULL OR s.path = ?2)"
	    " ORDER BY s.state = 'removed', s.path";
	sqlite3_stmt *st = NULL;
	int rc, err = 0, seen = 0;

	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 2, path);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_sdk s = {
		    .id = sqlite3_column_int64(st, 0),
		    .path = col_text(st, 1),
		    .layout = col_text(st, 2),
		    .version = col_text(st, 3),
		    .version_source = col_text(st, 4),
		    .version_conflict = sqlite3_column_int(st, 5),
		    .hip_runtime = col_text(st, 6),
		    .rocblas_binary = col_text(st, 7),
		    .state = col_text(st, 8),
		    .first_seen_ms = sqlite3_column_int64(st, 9),
		    .last_seen_ms = sqlite3_column_int64(st, 10),
		    .removed_ms = sqlite3_column_int64(st, 11),
		    .detail = col_text(st, 12),
		    .lib_path = col_text(st, 13),
		    .lib_fingerprint = col_text(st, 14),
		    .lib_archs = col_text(st, 15),
		    .lib_co_archs = col_text(st, 16),
		    .lib_nfiles = sqlite3_column_int64(st, 17),
		    .lib_total_size = sqlite3_column_int64(st, 18),
		    .lib_first_seen_ms = sqlite3_column_int64(st, 19),
		};
		seen = 1;
		err = cb(&s, ctx);
		if (err != 0)
			break;
		rc = SQLITE_OK;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	if (err == 0 && !seen && (id != 0 || path != NULL))
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_sdk_db_put(struct rocmd_sdk_db *db, const struct rocmd_db_sdk *s, int64_t now, int64_t *id,
                 int *created)
{
	static const char *const sql =
	    "INSERT INTO sdk (path, layout, version, version_source, version_conflict,"
	    " hip_runtime, rocblas_binary, state, first_seen_ms, last_seen_ms, removed_ms, detail)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL, ?10)"
	    " ON CONFLICT (path) DO UPDATE SET layout = ?2, version = ?3, version_source = ?4,"
	    " version_conflict = ?5, hip_runtime = ?6, rocblas_binary = ?7, state = ?8,"
	    " last_seen_ms = ?9, removed_ms = NULL, detail = ?10";
	sqlite3_stmt *st = NULL;
	int rc;

	*id = 0;
	*created = 0;
	rc = sqlite3_prepare_v2(db->h, "SELECT id FROM sdk WHERE path = ?1", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 1, s->path);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 1, s->path);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 2, s->layout);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, s->version);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 4, s->version_source);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(st, 5, s->version_conflict);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 6, s->hip_runtime);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 7, s->rocblas_binary);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 8, s->state);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 9, now);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 10, s->detail);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && *id == 0) {
		*id = sqlite3_last_insert_rowid(db->h);
		*created = 1;
	}
	return rocmd_db_map_rc(rc);
}

static int
exec_id_now(struct rocmd_sdk_db *db, const char *sql, int64_t id, int64_t now)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 2, now);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && sqlite3_changes(db->h) == 0)
		return ROCMD_ENOTFOUND;
	return rocmd_db_map_rc(rc);
}

int
rocmd_sdk_db_put_library(struct rocmd_sdk_db *db, int64_t id, const struct rocmd_db_sdk *s,
                         int64_t now, int *changed)
{
	sqlite3_stmt *st = NULL;
	int rc, same = 0, had = 0;

	*changed = 0;
	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT path IS ?2 AND fingerprint IS ?3 AND archs IS ?4 FROM sdk_library"
	    " WHERE sdk_id = ?1 AND current = 1",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 2, s->lib_path);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, s->lib_fingerprint);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 4, s->lib_archs != NULL ? s->lib_archs : "");
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		had = 1;
		same = sqlite3_column_int(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);
	if (same)
		return exec_id_now(db,
		                   "UPDATE sdk_library SET last_seen_ms = ?2 WHERE sdk_id = ?1 AND"
		                   " current = 1",
		                   id, now);
	if (!had && s->lib_path == NULL)
		return 0;
	*changed = 1;
	if (had) {
		rc = exec_id_now(
		    db,
		    "UPDATE sdk_library SET current = 0 WHERE sdk_id = ?1 AND current = 1"
		    " AND ?2 = ?2",
		    id, now);
		if (rc < 0)
			return rc;
	}
	if (s->lib_path == NULL)
		return 0;
	rc = sqlite3_prepare_v2(
	    db->h,
	    "INSERT INTO sdk_library (sdk_id, path, fingerprint, archs,"
	    " code_object_archs, nfiles, total_size, first_seen_ms, last_seen_ms,"
	    " current) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, 1)",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 2, s->lib_path);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, s->lib_fingerprint);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 4, s->lib_archs != NULL ? s->lib_archs : "");
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 5, s->lib_co_archs != NULL ? s->lib_co_archs : "");
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 6, s->lib_nfiles);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 7, s->lib_total_size);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 8, now);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rocmd_db_map_rc(rc);
}

int
rocmd_sdk_db_library_history(struct rocmd_sdk_db *db, int64_t id,
                             int (*cb)(const struct rocmd_db_sdk_library *l, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT id, path, fingerprint, archs, nfiles, total_size, first_seen_ms,"
	    " last_seen_ms, current FROM sdk_library WHERE sdk_id = ?1"
	    " ORDER BY id DESC",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, id);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_sdk_library l = {
		    .id = sqlite3_column_int64(st, 0),
		    .path = col_text(st, 1),
		    .fingerprint = col_text(st, 2),
		    .archs = col_text(st, 3),
		    .nfiles = sqlite3_column_int64(st, 4),
		    .total_size = sqlite3_column_int64(st, 5),
		    .first_seen_ms = sqlite3_column_int64(st, 6),
		    .last_seen_ms = sqlite3_column_int64(st, 7),
		    .current = sqlite3_column_int(st, 8),
		};
		err = cb(&l, ctx);
		if (err != 0)
			break;
		rc = SQLITE_OK;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_sdk_db_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now)
{
	return exec_id_now(db,
	                   "UPDATE sdk SET state = 'removed', removed_ms = ?2 WHERE id = ?1 AND"
	                   " state <> 'removed'",
	                   id, now);
}

int
rocmd_sdk_db_gpu_list(struct rocmd_sdk_db *db, int (*cb)(const struct rocmd_db_gpu *g, void *ctx),
                      void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc =
	    sqlite3_prepare_v2(db->h,
	                       "SELECT id, key, arch, name, kind, compute_units, vram_bytes, state,"
	                       " first_seen_ms, last_seen_ms, detail FROM gpu"
	                       " ORDER BY state = 'removed', id",
	                       -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_gpu g = {
		    .id = sqlite3_column_int64(st, 0),
		    .key = col_text(st, 1),
		    .arch = col_text(st, 2),
		    .name = col_text(st, 3),
		    .kind = col_text(st, 4),
		    .compute_units = sqlite3_column_int64(st, 5),
		    .vram_bytes = sqlite3_column_int64(st, 6),
		    .state = col_text(st, 7),
		    .first_seen_ms = sqlite3_column_int64(st, 8),
		    .last_seen_ms = sqlite3_column_int64(st, 9),
		    .detail = col_text(st, 10),
		};
		err = cb(&g, ctx);
		if (err != 0)
			break;
		rc = SQLITE_OK;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_sdk_db_gpu_put(struct rocmd_sdk_db *db, const struct rocmd_db_gpu *g, int64_t now,
                     int *created)
{
	sqlite3_stmt *st = NULL;
	int rc, existed = 0;

	*created = 0;
	rc = sqlite3_prepare_v2(db->h, "SELECT state = 'present' FROM gpu WHERE key = ?1", -1, &st,
	                        NULL);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 1, g->key);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		existed = sqlite3_column_int(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		return rocmd_db_map_rc(rc);
	rc = sqlite3_prepare_v2(
	    db->h,
	    "INSERT INTO gpu (key, arch, name, kind, compute_units, vram_bytes, state,"
	    " first_seen_ms, last_seen_ms, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'present', ?7,"
	    " ?7, ?8) ON CONFLICT (key) DO UPDATE SET arch = ?2, name = ?3, kind = ?4,"
	    " compute_units = ?5, vram_bytes = ?6, state = 'present', last_seen_ms = ?7,"
	    " detail = ?8",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 1, g->key);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 2, g->arch);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 3, g->name);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 4, g->kind);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 5, g->compute_units);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 6, g->vram_bytes);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 7, now);
	if (rc == SQLITE_OK)
		rc = rocmd_db_bind_text(st, 8, g->detail);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		*created = !existed;
	return rocmd_db_map_rc(rc);
}

int
rocmd_sdk_db_gpu_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now)
{
	return exec_id_now(db, "UPDATE gpu SET state = 'removed', last_seen_ms = ?2 WHERE id = ?1",
	                   id, now);
}
