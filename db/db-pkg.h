/*
 * The package store's rows: table package (one per imported package, keyed
 * by the digest of its manifest) and package_file (its files, naming store
 * objects by SHA-256), from migration 4. It works on the daemon's own
 * connection (rocmd_pkg_db_attach); only the daemon's loop thread uses it. Writers use BEGIN IMMEDIATE, so a package
 * and all its files appear together or not at all.
 */
#ifndef ROCMD_DB_PKG_H
#define ROCMD_DB_PKG_H

#include <stddef.h>
#include <stdint.h>

struct rocmd_db;
struct rocmd_pkg_db;

/* A package row; strings may be NULL where the column is. */
struct rocmd_db_pkg {
	int64_t id;
	const char *digest;
	const char *name;
	const char *source;
	int64_t imported_ms;
	const char *platform; /* windows, linux, any */
	const char *sdk;
	const char *sdk_source;
	const char *version_hint;
	const char *archs; /* "gfx1103,gfx1150" */
	const char *binary;
	const char *binary_version;
	int64_t file_count;
	int64_t total_size;
	const char *identity; /* JSON */
};

struct rocmd_db_pkg_file {
	const char *path;
	int kind; /* 'f' or 'l' */
	int exec;
	int64_t size;
	const char *sha256; /* hex; NULL for symlinks */
	const char *link;   /* symlink target, else NULL */
};

/* Uses the connection of MAIN (opened and migrated by rocmd_db_open), so
 * every module's writes share one connection and one transaction order. */
int rocmd_pkg_db_attach(struct rocmd_db *main, struct rocmd_pkg_db **out);
/* Frees the accessor; the connection stays with MAIN. NULL is fine. */
void rocmd_pkg_db_detach(struct rocmd_pkg_db *db);
const char *rocmd_pkg_db_errmsg(struct rocmd_pkg_db *db);

/* Adds a package with its files; ROCMD_EEXISTS (and *ID the existing one)
 * when a package with the same digest is stored. */
int rocmd_pkg_db_add(struct rocmd_pkg_db *db, const struct rocmd_db_pkg *pkg,
                     const struct rocmd_db_pkg_file *files, size_t nfiles, int64_t *id);
/* Sets package ID's SDK (an explicit --sdk given when importing it again) and
 * its identity JSON; ROCMD_ENOTFOUND when it is not there. */
int rocmd_pkg_db_set_sdk(struct rocmd_pkg_db *db, int64_t id, const char *sdk,
                         const char *sdk_source, const char *identity);
/* Calls CB for every package, oldest first (ID 0), or for package ID only
 * (ROCMD_ENOTFOUND when there is none). Strings live during the call. */
int rocmd_pkg_db_list(struct rocmd_pkg_db *db, int64_t id,
                      int (*cb)(const struct rocmd_db_pkg *p, void *ctx), void *ctx);
/* Calls CB for the files of package ID, by path, from OFFSET, at most LIMIT (0 all). */
int rocmd_pkg_db_files(struct rocmd_pkg_db *db, int64_t id, int64_t offset, int64_t limit,
                       int (*cb)(const struct rocmd_db_pkg_file *f, void *ctx), void *ctx);
/* Removes package ID and its files; its deployments keep its name and digest
 * (package_id NULL). ROCMD_ENOTFOUND when it is not there, ROCMD_EBUSY while
 * it is in place at a target. */
int rocmd_pkg_db_remove(struct rocmd_pkg_db *db, int64_t id);
/* How many live deployments (in place on a target now) use package ID. */
int rocmd_pkg_db_deployments(struct rocmd_pkg_db *db, int64_t id, int64_t *count);
/* Calls CB for every distinct object (hash, size) any package uses, by hash. */
int rocmd_pkg_db_objects(struct rocmd_pkg_db *db, int64_t id,
                         int (*cb)(const char *sha256, int64_t size, void *ctx), void *ctx);

/* Totals: packages, file rows, their bytes, distinct objects and their bytes. */
struct rocmd_pkg_db_stats {
	int64_t packages;
	int64_t files;
	int64_t bytes;
	int64_t objects;
	int64_t object_bytes;
};
int rocmd_pkg_db_stats(struct rocmd_pkg_db *db, struct rocmd_pkg_db_stats *out);

#endif
