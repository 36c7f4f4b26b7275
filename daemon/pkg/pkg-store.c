/*
 * The content-addressed store: one file per distinct content under
 * objects/ab/cdef..., named by its SHA-256, shared by every package that
 * holds it. Objects arrive by rename from the staging folder of an import
 * (same filesystem), after their data is on disk, and each folder a rename
 * touched is fsync'd afterwards, as dpkg does. Objects are read-only (0444)
 * in a store only the daemon may enter (0700), and never rewritten; garbage
 * collection removes those no package lists. The daemon runs one store job
 * at a time, so an import never races a collection.
 *
 * Every file operation goes through the shared file layer (fs.h), so the
 * store follows no symlink (no reparse point on Windows), passes the same
 * failpoints as the deploy engine, and builds unchanged on Windows, where
 * the objects carry the read-only attribute and a folder's names are made
 * durable as far as NTFS allows (see fs.h).
 */
#include "pkg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/stat.h>
#endif

#include "common/error.h"
#include "common/paths.h"
#include "common/fs.h"

/* Past this many files one syncfs is cheaper than an fsync each. */
#define SYNCFS_THRESHOLD 16

int
rocmd_store_object_path(const char *store, const char *hex, char *out, size_t outlen)
{
	int n;

	if (strlen(hex) != 64)
		return ROCMD_EINVAL;
	n = snprintf(out, outlen, "%s/objects/%.2s/%s", store, hex, hex + 2);
	return n < 0 || (size_t)n >= outlen ? ROCMD_EINVAL : 0;
}

int
rocmd_store_open(const char *store, char *why, size_t whylen)
{
	char path[4096];
	int rc;

	/* Only the daemon reads the store: an object holds what an importer
	 * could read, which other users may not (0700; a store made before
	 * is closed on the next start). fs.h has no call that sets a mode. */
	if ((rc = rocmd_paths_mkdir_p(store, 0700)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", store, rocmd_strerror(rc));
		return rc;
	}
#ifndef _WIN32
	if (chmod(store, 0700) != 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot make %s private: %s", store, rocmd_strerror(rc));
		return rc;
	}
#endif
	snprintf(path, sizeof(path), "%s/objects", store);
	if ((rc = rocmd_paths_mkdir_p(path, 0755)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	/* An import cut short by a crash left its staging folder: start afresh.
	 * What cannot be removed now (a file another process holds open on
	 * Windows) stays, harmless: every import stages in a folder of its own. */
	snprintf(path, sizeof(path), "%s/staging", store);
	rocmd_fs_remove_tree(path);
	if ((rc = rocmd_paths_mkdir_p(path, 0700)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	/* Downloads cut short are kept (partial/<sha256>), to be resumed. */
	snprintf(path, sizeof(path), "%s/partial", store);
	if ((rc = rocmd_paths_mkdir_p(path, 0700)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	return 0;
}

int
rocmd_store_staging_new(const char *store, char *out, size_t outlen)
{
	static unsigned seq;
	int n, rc;

	for (int tries = 0; tries < 100; tries++) {
		n = snprintf(out, outlen, "%s/staging/import-%ld-%u", store, (long)getpid(),
		             __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		if (n < 0 || (size_t)n >= outlen)
			return ROCMD_EINVAL;
		if ((rc = rocmd_fs_mkdir(out, 0700)) == 0)
			return 0;
		if (rc != -EEXIST)
			return rc;
	}
	return ROCMD_EEXISTS;
}

/* Puts the data of the N staged files at PATHS (in folder DIR) on disk: one
 * syncfs of the file system when there are many (cheaper than an fsync each)
 * and the system has it, else an fsync of each file. */
static int
flush(const char *dir, const char **paths, size_t n, char *why, size_t whylen)
{
	int rc = 0;

	if (ROCMD_FS_HAS_SYNCFS && n > SYNCFS_THRESHOLD && dir != NULL) {
		if ((rc = rocmd_fs_syncfs(dir)) < 0)
			snprintf(why, whylen, "cannot flush the staging folder: %s",
			         rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* Written: Windows flushes only a handle open for writing. */
		int fd = rocmd_fs_open(paths[i], O_WRONLY, 0);
		rc = fd < 0 ? fd : rocmd_fs_fsync(fd);
		if (fd >= 0)
			rocmd_fs_close(fd);
		if (rc < 0)
			snprintf(why, whylen, "cannot flush %s: %s", paths[i], rocmd_strerror(rc));
	}
	return rc;
}

int
rocmd_store_commit(const char *store, struct rocmd_pkg_contents *c, uint64_t *added,
                   uint64_t *added_bytes, char *why, size_t whylen)
{
	char obj[4096], dir[4096];
	uint8_t touched[256] = {0};
	const char **staged = NULL;
	size_t nstaged = 0;
	int rc = 0;

	*added = 0;
	*added_bytes = 0;
	staged = malloc((c->count ? c->count : 1) * sizeof(*staged));
	if (staged == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < c->count; i++)
		if (c->entries[i].staged != NULL)
			staged[nstaged++] = c->entries[i].staged;
	/* The data first: on disk before any name points at it. */
	rc = flush(c->staging, staged, nstaged, why, whylen);
	free(staged);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < c->count; i++) {
		struct rocmd_pkg_entry *e = &c->entries[i];
		char hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;
		unsigned fan;
		int kind;

		if (e->staged == NULL)
			continue;
		rocmd_sha256_hex(e->sha256, hex);
		rocmd_store_object_path(store, hex, obj, sizeof(obj));
		kind = rocmd_fs_kind(obj, &size, NULL);
		if (kind == 'f' && size == e->size) {
			/* Already stored by this or another package. */
			rocmd_fs_unlink(e->staged);
			free(e->staged);
			e->staged = NULL;
			continue;
		}
		/* A damaged object (cut short) is replaced; Windows will not
		 * replace a read-only file. */
		if (kind == 'f')
			rocmd_fs_set_writable(obj, 1);
		snprintf(dir, sizeof(dir), "%s/objects/%.2s", store, hex);
		if ((rc = rocmd_fs_mkdir(dir, 0755)) < 0 && rc != -EEXIST) {
			snprintf(why, whylen, "cannot create %s: %s", dir, rocmd_strerror(rc));
			return rc;
		}
		/* Objects are never rewritten: read-only (0444; the read-only attribute). */
		rocmd_fs_set_writable(e->staged, 0);
		if ((rc = rocmd_fs_rename(e->staged, obj)) < 0) {
			snprintf(why, whylen, "cannot move %s to %s: %s", e->staged, obj,
			         rocmd_strerror(rc));
			return rc;
		}
		free(e->staged);
		e->staged = NULL;
		fan = (unsigned)strtoul((char[]){hex[0], hex[1], 0}, NULL, 16);
		touched[fan] = 1;
		(*added)++;
		*added_bytes += e->size;
	}
	for (unsigned fan = 0; fan < 256; fan++) {
		if (!touched[fan])
			continue;
		snprintf(dir, sizeof(dir), "%s/objects/%02x", store, fan);
		if ((rc = rocmd_fs_fsync_dir(dir)) < 0) {
			snprintf(why, whylen, "cannot flush %s: %s", dir, rocmd_strerror(rc));
			return rc;
		}
	}
	snprintf(dir, sizeof(dir), "%s/objects", store);
	if (*added > 0 && (rc = rocmd_fs_fsync_dir(dir)) < 0) {
		snprintf(why, whylen, "cannot flush %s: %s", dir, rocmd_strerror(rc));
		return rc;
	}
	return 0;
}

int
rocmd_store_verify(const char *store, struct rocmd_store_check *objs, size_t n,
                   int (*progress)(uint64_t done, uint64_t total, void *ctx), void *ctx)
{
	uint64_t total = 0, done = 0;
	char path[4096];

	for (size_t i = 0; i < n; i++)
		total += objs[i].size;
	for (size_t i = 0; i < n; i++) {
		char hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;
		int rc;

		if (rocmd_store_object_path(store, objs[i].hex, path, sizeof(path)) < 0) {
			objs[i].status = ROCMD_EINVAL;
			continue;
		}
		rc = rocmd_fs_hash_file(path, hex, &size);
		if (rc == -ENOENT)
			objs[i].status = ROCMD_ENOTFOUND;
		else if (rc < 0)
			objs[i].status = rc;
		else
			objs[i].status = strcmp(hex, objs[i].hex) == 0 && size == objs[i].size
			                     ? 0
			                     : ROCMD_ECORRUPT;
		done += objs[i].size;
		if (progress != NULL && progress(done, total, ctx) != 0)
			return ROCMD_ECANCELED;
	}
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists every object (objects/ab/cdef...) into *E, sorted by path. */
static int
objects_list(const char *store, char *dir, size_t dirlen, struct rocmd_fs_entry **e, size_t *n)
{
	char why[256];
	int rc;

	*e = NULL;
	*n = 0;
	snprintf(dir, dirlen, "%s/objects", store);
	if (rocmd_fs_kind(dir, NULL, NULL) == 0)
		return 0;
	rc = rocmd_fs_walk(dir, 0, e, n, why, sizeof(why));
	return rc;
}

int
rocmd_store_gc(const char *store, char *const *keep, size_t keep_n, uint64_t *removed,
               uint64_t *removed_bytes)
{
	char dir[4096], path[4096 + 80];
	struct rocmd_fs_entry *e;
	size_t n, kept_in_fan = 0;
	int rc;

	*removed = 0;
	*removed_bytes = 0;
	if ((rc = objects_list(store, dir, sizeof(dir), &e, &n)) < 0)
		return rc;
	/* Sorted: a fan folder "ab" comes right before its objects "ab/...". Walk
	 * backwards, so a fan is reached after all of its objects were decided. */
	for (size_t i = n; i-- > 0;) {
		const char *rel = e[i].path, *slash = strchr(rel, '/');
		char hex[ROCMD_SHA256_HEX], *key = hex;

		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, rel);
		if (slash == NULL) {
			/* Empty now: no other job stored an object since the listing,
			 * since the daemon runs one store job at a time. */
			if (e[i].kind == 'd' && strlen(rel) == 2 && kept_in_fan == 0)
				rocmd_fs_remove_tree(path);
			kept_in_fan = 0;
			continue;
		}
		if (strchr(slash + 1, '/') != NULL)
			continue; /* not an object: goes with the folder holding it */
		if (e[i].kind == 'f' && strlen(rel) == 65 && slash == rel + 2) {
			snprintf(hex, sizeof(hex), "%.2s%.62s", rel, rel + 3);
			if (keep_n > 0 &&
			    bsearch(&key, keep, keep_n, sizeof(*keep), cmp_str) != NULL) {
				kept_in_fan++;
				continue;
			}
		}
		if (rocmd_fs_remove_tree(path) == 0) {
			(*removed)++;
			*removed_bytes += e[i].kind == 'f' ? e[i].size : 0;
		} else {
			kept_in_fan++;
		}
	}
	rocmd_fs_entries_free(e, n);
	if (*removed > 0)
		rocmd_fs_fsync_dir(dir);
	return 0;
}

int
rocmd_store_set_aside(const char *store, char *const *keep, size_t keep_n, const char *stamp,
                      uint64_t *moved, uint64_t *moved_bytes)
{
	char dir[4096], to[4096 + 160], path[4096 + 80], fan[4096 + 200];
	uint8_t touched[256] = {0};
	struct rocmd_fs_entry *e;
	size_t n;
	int rc;

	*moved = 0;
	*moved_bytes = 0;
	if ((rc = objects_list(store, dir, sizeof(dir), &e, &n)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *rel = e[i].path;
		char hex[ROCMD_SHA256_HEX], *key = hex;

		if (e[i].kind != 'f' || strlen(rel) != 65 || rel[2] != '/')
			continue;
		snprintf(hex, sizeof(hex), "%.2s%.62s", rel, rel + 3);
		if (keep_n > 0 && bsearch(&key, keep, keep_n, sizeof(*keep), cmp_str) != NULL)
			continue;
		rocmd_fs_fmt(fan, sizeof(fan), "%s/unclaimed/%s/%.2s", store, stamp, rel);
		rocmd_fs_fmt(to, sizeof(to), "%s/unclaimed/%s/%s", store, stamp, rel);
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, rel);
		if ((rc = rocmd_paths_mkdir_p(fan, 0755)) == 0 &&
		    (rc = rocmd_fs_rename(path, to)) == 0) {
			touched[strtoul((char[]){rel[0], rel[1], 0}, NULL, 16) & 0xff] = 1;
			(*moved)++;
			*moved_bytes += e[i].size;
		}
	}
	rocmd_fs_entries_free(e, n);
	/* On disk before anything relies on it: an object whose move a crash
	 * undid would be back among those the collector may take. */
	for (unsigned f = 0; f < 256 && rc == 0; f++) {
		if (!touched[f])
			continue;
		rocmd_fs_fmt(fan, sizeof(fan), "%s/unclaimed/%s/%02x", store, stamp, f);
		rocmd_fs_fmt(path, sizeof(path), "%s/%02x", dir, f);
		if ((rc = rocmd_fs_fsync_dir(fan)) == 0)
			rc = rocmd_fs_fsync_dir(path);
	}
	if (*moved > 0 && rc == 0) {
		rocmd_fs_fmt(fan, sizeof(fan), "%s/unclaimed/%s", store, stamp);
		if ((rc = rocmd_fs_fsync_dir(fan)) == 0) {
			rocmd_fs_fmt(fan, sizeof(fan), "%s/unclaimed", store);
			rc = rocmd_fs_fsync_dir(fan);
		}
	}
	return rc;
}

int
rocmd_store_usage(const char *store, uint64_t *objects, uint64_t *bytes)
{
	char dir[4096];
	struct rocmd_fs_entry *e;
	size_t n;
	int rc;

	*objects = 0;
	*bytes = 0;
	if ((rc = objects_list(store, dir, sizeof(dir), &e, &n)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (e[i].kind == 'f') {
			(*objects)++;
			*bytes += e[i].size;
		}
	rocmd_fs_entries_free(e, n);
	return 0;
}
