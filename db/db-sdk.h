/*
 * SDK discovery's rows (migration 5): table sdk (one row per install path
 * ever seen, with its state present / unreadable / removed, so history stays
 * when an SDK disappears), sdk_library (each content its rocBLAS library has
 * had; the current one has current = 1) and gpu. It works on the daemon's own
 * connection (rocmd_sdk_db_attach); only the daemon's loop thread uses it. A scan's changes are
 * written in one BEGIN IMMEDIATE transaction (begin/commit).
 */
#ifndef ROCMD_DB_SDK_H
#define ROCMD_DB_SDK_H

#include <stddef.h>
#include <stdint.h>

struct rocmd_db;
struct rocmd_sdk_db;

/* An install with its current library; strings may be NULL where the column is. */
struct rocmd_db_sdk {
	int64_t id;
	const char *path;
	const char *layout;
	const char *version; /* NULL: unknown */
	const char *version_source;
	int version_conflict;
	const char *hip_runtime;
	const char *rocblas_binary;
	const char *state; /* "present", "unreadable", "removed" */
	int64_t first_seen_ms, last_seen_ms, removed_ms;
	const char *detail; /* JSON of the last scan */
	/* current library (lib_path NULL: none) */
	const char *lib_path;
	const char *lib_fingerprint;
	const char *lib_archs; /* "gfx1030,gfx1100" */
	const char *lib_co_archs;
	int64_t lib_nfiles, lib_total_size;
	int64_t lib_first_seen_ms;
};

struct rocmd_db_gpu {
	int64_t id;
	const char *key;
	const char *arch;
	const char *name;
	const char *kind; /* "igpu" or "dgpu" */
	int64_t compute_units;
	int64_t vram_bytes;
	const char *state; /* "present" or "removed" */
	int64_t first_seen_ms, last_seen_ms;
	const char *detail;
};

/* Uses the connection of MAIN (opened and migrated by rocmd_db_open), so
 * every module's writes share one connection and one transaction order. */
int rocmd_sdk_db_attach(struct rocmd_db *main, struct rocmd_sdk_db **out);
/* Frees the accessor; the connection stays with MAIN. NULL is fine. */
void rocmd_sdk_db_detach(struct rocmd_sdk_db *db);
const char *rocmd_sdk_db_errmsg(struct rocmd_sdk_db *db);

int rocmd_sdk_db_begin(struct rocmd_sdk_db *db);
int rocmd_sdk_db_commit(struct rocmd_sdk_db *db);
void rocmd_sdk_db_rollback(struct rocmd_sdk_db *db);

/* Calls CB per install (ID 0 and PATH NULL: all, by path), or for the one with
 * ID or PATH (ROCMD_ENOTFOUND when none). Strings live during the call. */
int rocmd_sdk_db_list(struct rocmd_sdk_db *db, int64_t id, const char *path,
                      int (*cb)(const struct rocmd_db_sdk *s, void *ctx), void *ctx);
/* Inserts or updates the install at S->path (state, version, ... and
 * last_seen = NOW; first_seen on insert; removed_ms cleared). *ID gets its id,
 * *CREATED 1 when it was new. Library fields are ignored here. */
int rocmd_sdk_db_put(struct rocmd_sdk_db *db, const struct rocmd_db_sdk *s, int64_t now,
                     int64_t *id, int *created);
/* Records install ID's current library from S's lib_* fields (lib_path NULL:
 * none). When path or fingerprint differ from the current row, that row stops
 * being current and a new one is added; *CHANGED is then 1. */
int rocmd_sdk_db_put_library(struct rocmd_sdk_db *db, int64_t id, const struct rocmd_db_sdk *s,
                             int64_t now, int *changed);
/* One content a library folder has had (sdk_library row). */
struct rocmd_db_sdk_library {
	int64_t id;
	const char *path;
	const char *fingerprint;
	const char *archs;
	int64_t nfiles, total_size;
	int64_t first_seen_ms, last_seen_ms;
	int current;
};
/* Calls CB for every library content install ID has had, newest first. */
int rocmd_sdk_db_library_history(struct rocmd_sdk_db *db, int64_t id,
                                 int (*cb)(const struct rocmd_db_sdk_library *l, void *ctx),
                                 void *ctx);
/* Marks install ID removed at NOW (its rows stay, as history). */
int rocmd_sdk_db_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now);

int rocmd_sdk_db_gpu_list(struct rocmd_sdk_db *db,
                          int (*cb)(const struct rocmd_db_gpu *g, void *ctx), void *ctx);
int rocmd_sdk_db_gpu_put(struct rocmd_sdk_db *db, const struct rocmd_db_gpu *g, int64_t now,
                         int *created);
int rocmd_sdk_db_gpu_mark_removed(struct rocmd_sdk_db *db, int64_t id, int64_t now);

#endif
