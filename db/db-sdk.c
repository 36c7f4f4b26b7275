/*
 * SDK discovery rows on SQLite (see db-sdk.h), through the statement helper
 * of db-internal.h: each statement below is prepared on first use and kept
 * until detach. A scan writes a handful of rows, and only when something
 * changed.
 */
#include "db/db-sdk.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

enum {
	Q_LIST,
	Q_FIND,
	Q_PUT,
	Q_LIB_SAME,
	Q_LIB_SEEN,
	Q_LIB_RETIRE,
	Q_LIB_ADD,
	Q_LIB_HISTORY,
	Q_MARK_REMOVED,
	Q_GPU_LIST,
	Q_GPU_FIND,
	Q_GPU_PUT,
	Q_GPU_MARK_REMOVED,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
    [Q_LIST] = "SELECT s.id, s.path, s.layout, s.version, s.version_source, "
               "s.version_conflict, s.hip_runtime, s.rocblas_binary, s.state, s.first_seen_ms, "
               "s.last_seen_ms, s.removed_ms, s.detail, l.path, l.fingerprint, l.archs, "
               "l.code_object_archs, l.nfiles, l.total_size, l.first_seen_ms "
               "FROM sdk s LEFT JOIN sdk_library l ON l.sdk_id = s.id AND l.current = 1 "
               "WHERE (?1 = 0 OR s.id = ?1) AND (?2 IS NULL OR s.path = ?2) "
               "ORDER BY s.state = 'removed', s.path",
    [Q_FIND] = "SELECT id FROM sdk WHERE path = ?1",
    [Q_PUT] = "INSERT INTO sdk (path, layout, version, version_source, version_conflict, "
              "hip_runtime, rocblas_binary, state, first_seen_ms, last_seen_ms, removed_ms, "
              "detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL, ?10) "
              "ON CONFLICT (path) DO UPDATE SET layout = ?2, version = ?3, version_source = ?4, "
              "version_conflict = ?5, hip_runtime = ?6, rocblas_binary = ?7, state = ?8, "
              "last_seen_ms = ?9, removed_ms = NULL, detail = ?10",
    [Q_LIB_SAME] = "SELECT path IS ?2 AND fingerprint IS ?3 AND archs IS ?4 FROM sdk_library "
                   "WHERE sdk_id = ?1 AND current = 1",
    [Q_LIB_SEEN] = "UPDATE sdk_library SET last_seen_ms = ?2 WHERE sdk_id = ?1 AND "
                   "current = 1",
    [Q_LIB_RETIRE] = "UPDATE sdk_library SET current = 0 WHERE sdk_id = ?1 AND current = 1 "
                     "AND ?2 = ?2",
    [Q_LIB_ADD] = "INSERT INTO sdk_library (sdk_id, path, fingerprint, archs, "
                  "code_object_archs, nfiles, total_size, first_seen_ms, last_seen_ms, "
                  "current) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, 1)",
    [Q_LIB_HISTORY] = "SELECT id, path, fingerprint, archs, nfiles, total_size, "
                      "first_seen_ms, last_seen_ms, current FROM sdk_library "
                      "WHERE sdk_id = ?1 ORDER BY id DESC",
    [Q_MARK_REMOVED] = "UPDATE sdk SET state = 'removed', removed_ms = ?2 WHERE id = ?1 AND "
                       "state <> 'removed'",
    [Q_GPU_LIST] = "SELECT id, key, arch, name, kind, compute_units, vram_bytes, state, "
                   "first_seen_ms, last_seen_ms, detail FROM gpu "
                   "ORDER BY state = 'removed', id",
    [Q_GPU_FIND] = "SELECT state = 'present' FROM gpu WHERE key = ?1",
    [Q_GPU_PUT] = "INSERT INTO gpu (key, arch, name, kind, compute_units, vram_bytes, state, "
                  "first_seen_ms, last_seen_ms, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                  "'present', ?7, ?7, ?8) ON CONFLICT (key) DO UPDATE SET arch = ?2, "
                  "name = ?3, kind = ?4, compute_units = ?5, vram_bytes = ?6, "
                  "state = 'present', last_seen_ms = ?7, detail = ?8",
    [Q_GPU_MARK_REMOVED] = "UPDATE gpu SET state = 'removed', last_seen_ms = ?2 WHERE id = ?1",
};

struct rocmd_sdk_db {
	struct db_conn c; /* first: the daemon's connection, borrowed */
};

DB_MODULE_DEFINE(struct rocmd_sdk_db, rocmd_sdk_db_attach, rocmd_sdk_db_detach, rocmd_sdk_db_errmsg,
                 queries, Q_COUNT_)

int
rocmd_sdk_db_begin(struct rocmd_sdk_db *db)
{
	return db_begin(&db->c);
}

int
rocmd_sdk_db_commit(struct rocmd_sdk_db *db)
{
	return db_commit(&db->c);
}

void
rocmd_sdk_db_rollback(struct rocmd_sdk_db *db)
{
	db_rollback(&db->c);
}

int
rocmd_sdk_db_list(struct rocmd_sdk_db *db, int64_t id, const char *path,
                  int (*cb)(const struct rocmd_db_sdk *s, void *ctx), void *ctx)
{
	struct db_stmt q;
	int err = 0, seen = 0;

	db_stmt_open(&q, &db->c, Q_LIST);
	db_bind_int64(&q, 1, id);
	db_bind_text(&q, 2, path);
	while (err == 0 && db_stmt_row(&q)) {
		struct rocmd_db_sdk s = {
		    .id = db_col_int64(&q, 0),
		    .path = db_col_text(&q, 1),
		    .layout = db_col_text(&q, 2),
		    .version = db_col_text(&q, 3),
		    .version_source = db_col_text(&q, 4),
		    .version_conflict = (int)db_col_int64(&q, 5),
		    .hip_runtime = db_col_text(&q, 6),
		    .rocblas_binary = db_col_text(&q, 7),
		    .state = db_col_text(&q, 8),
		    .first_seen_ms = db_col_int64(&q, 9),
		    .last_seen_ms = db_col_int64(&q, 10),
		    .removed_ms = db_col_int64(&q, 11),
		    .detail = db_col_text(&q, 12),
		    .lib_path = db_col_text(&q, 13),
		    .lib_fingerprint = db_col_text(&q, 14),
		    .lib_archs = db_col_text(&q, 15),
		    .lib_co_archs = db_col_text(&q, 16),
		    .lib_nfiles = db_col_int64(&q, 17),
		    .lib_total_size = db_col_int64(&q, 18),
		    .lib_first_seen_ms = db_col_int64(&q, 19),
		};
		seen = 1;
		err = cb(&s, ctx);
	}
	err = db_stmt_end(&q, err);
	if (err == 0 && !seen && (id != 0 || path != NULL))
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_sdk_db_put(struct rocmd_sdk_db *db, const struct rocmd_db_sdk *s, int64_t now, int64_t *id,
                 int *created)
{
	struct db_stmt q;
	int err;

	*id = 0;
	*created = 0;
	db_stmt_open(&q, &db->c, Q_FIND);
	db_bind_text(&q, 1, s->path);
	err = db_stmt_int(&q, id);
	if (err != 0 && err != ROCMD_ENOTFOUND)
		return err;
	db_stmt_open(&q, &db->c, Q_PUT);
	db_bind_text(&q, 1, s->path);
	db_bind_text(&q, 2, s->layout);
	db_bind_text(&q, 3, s->version);
	db_bind_text(&q, 4, s->version_source);
	db_bind_int64(&q, 5, s->version_conflict);
	db_bind_text(&q, 6, s->hip_runtime);
	db_bind_text(&q, 7, s->rocblas_binary);
	db_bind_text(&q, 8, s->state);
	db_bind_int64(&q, 9, now);
	db_bind_text(&q, 10, s->detail);
	err = db_stmt_exec(&q);
	if (err == 0 && *id == 0) {
		*id = db_last_id(&db->c);
		*created = 1;
	}
	return err;
}

/* Runs statement Q for ?1 = ID, ?2 = NOW; ROCMD_ENOTFOUND when no row changed. */
static int
exec_id_now(struct rocmd_sdk_db *db, int q, int64_t id, int64_t now)
{
	struct db_stmt s;
	int err;

	db_stmt_open(&s, &db->c, q);
	db_bind_int64(&s, 1, id);
	db_bind_int64(&s, 2, now);
	err = db_stmt_exec(&s);
	return err == 0 && db_changes(&db->c) == 0 ? ROCMD_ENOTFOUND : err;
}

int
rocmd_sdk_db_put_library(struct rocmd_sdk_db *db, int64_t id, const struct rocmd_db_sdk *s,
                         int64_t now, int *changed)
{
	const char *archs = s->lib_archs != NULL ? s->lib_archs : "";
	struct db_stmt q;
	int64_t same = 0;
	int err, had;

	*changed = 0;
	db_stmt_open(&q, &db->c, Q_LIB_SAME);
	db_bind_int64(&q, 1, id);
	db_bind_text(&q, 2, s->lib_path);
	db_bind_text(&q, 3, s->lib_fingerprint);
	db_bind_text(&q, 4, archs);
	err = db_stmt_int(&q, &same);
	had = err == 0;
	if (err != 0 && err != ROCMD_ENOTFOUND)
		return err;
	if (same)
		return exec_id_now(db, Q_LIB_SEEN, id, now);
	if (!had && s->lib_path == NULL)
		return 0;
	*changed = 1;
	if (had) {
		err = exec_id_now(db, Q_LIB_RETIRE, id, now);
		if (err < 0)
			return err;
	}
	if (s->lib_path == NULL)
		return 0;
	db_stmt_open(&q, &db->c, Q_LIB_ADD);
	db_bind_int64(&q, 1, id);
	db_bind_text(&q, 2, s->lib_path);
	db_bind_text(&q, 3, s->lib_fingerprint);
	db_bind_text(&q, 4, archs);
	db_bind_text(&q, 5, s->lib_co_archs != NULL ? s->lib_co_archs : "");
	db_bind_int64(&q, 6, s->lib_nfiles);
	db_bind_int64(&q, 7, s->lib_total_size);
	db_bind_int64(&q, 8, now);
	return db_stmt_exec(&q);
}

int
rocmd_sdk_db_library_history(struct rocmd_sdk_db *db, int64_t id,
                             int (*cb)(const struct rocmd_db_sdk_library *l, void *ctx), void *ctx)
{
	struct db_stmt q;
	int err = 0;

	db_stmt_open(&q, &db->c, Q_LIB_HISTORY);
	db_bind_int64(&q, 1, id);
	while (err == 0 && db_stmt_row(&q)) {
		struct rocmd_db_sdk_library l = {
		    .id = db_col_int64(&q, 0),
		    .path = db_col_text(&q, 1),
		    .fingerprint = db_col_text(&q, 2),
		    .archs = db_col_text(&q, 3),
		    .nfiles = db_col_int64(&q, 4),
		    .total_size = db_col_int64(&q, 5),
		    .first_seen_ms = db_col_int64(&q, 6),
		    .last_seen_ms = db_col_int64(&q, 7),
		    .current = (int)db_col_int64(&q, 8),
		};
		err = cb(&l, ctx);
	}
	return db_stmt_end(&q, err);
}

int
rocmd_sdk_db_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now)
{
	return exec_id_now(db, Q_MARK_REMOVED, id, now);
}

int
rocmd_sdk_db_gpu_list(struct rocmd_sdk_db *db, int (*cb)(const struct rocmd_db_gpu *g, void *ctx),
                      void *ctx)
{
	struct db_stmt q;
	int err = 0;

	db_stmt_open(&q, &db->c, Q_GPU_LIST);
	while (err == 0 && db_stmt_row(&q)) {
		struct rocmd_db_gpu g = {
		    .id = db_col_int64(&q, 0),
		    .key = db_col_text(&q, 1),
		    .arch = db_col_text(&q, 2),
		    .name = db_col_text(&q, 3),
		    .kind = db_col_text(&q, 4),
		    .compute_units = db_col_int64(&q, 5),
		    .vram_bytes = db_col_int64(&q, 6),
		    .state = db_col_text(&q, 7),
		    .first_seen_ms = db_col_int64(&q, 8),
		    .last_seen_ms = db_col_int64(&q, 9),
		    .detail = db_col_text(&q, 10),
		};
		err = cb(&g, ctx);
	}
	return db_stmt_end(&q, err);
}

int
rocmd_sdk_db_gpu_put(struct rocmd_sdk_db *db, const struct rocmd_db_gpu *g, int64_t now,
                     int *created)
{
	struct db_stmt q;
	int64_t present = 0;
	int err;

	*created = 0;
	db_stmt_open(&q, &db->c, Q_GPU_FIND);
	db_bind_text(&q, 1, g->key);
	err = db_stmt_int(&q, &present);
	if (err != 0 && err != ROCMD_ENOTFOUND)
		return err;
	db_stmt_open(&q, &db->c, Q_GPU_PUT);
	db_bind_text(&q, 1, g->key);
	db_bind_text(&q, 2, g->arch);
	db_bind_text(&q, 3, g->name);
	db_bind_text(&q, 4, g->kind);
	db_bind_int64(&q, 5, g->compute_units);
	db_bind_int64(&q, 6, g->vram_bytes);
	db_bind_int64(&q, 7, now);
	db_bind_text(&q, 8, g->detail);
	err = db_stmt_exec(&q);
	if (err == 0)
		*created = !present;
	return err;
}

int
rocmd_sdk_db_gpu_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now)
{
	return exec_id_now(db, Q_GPU_MARK_REMOVED, id, now);
}
