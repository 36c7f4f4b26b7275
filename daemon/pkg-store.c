/*
 * The content-addressed store: one file per distinct content under
 * objects/ab/cdef..., named by its SHA-256, shared by every package that
 * holds it. Objects arrive by rename from the staging folder of an import
 * (same filesystem), after their data is on disk, and each folder a rename
 * touched is fsync'd afterwards, as dpkg does. Objects are read-only (0444)
 * and never rewritten; garbage collection removes those no package lists.
 * The daemon runs one store job at a time, so an import never races a
 * collection.
 */
#include "pkg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/paths.h"

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

static int
fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

/* Removes a folder's files and the folder (staging leftovers: flat). */
static void
remove_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(dir);
}

int
rocmd_store_open(const char *store, char *why, size_t whylen)
{
	char path[4096];
	DIR *d;
	struct dirent *de;
	int rc;

	snprintf(path, sizeof(path), "%s/objects", store);
	if ((rc = rocmd_paths_mkdir_p(path, 0755)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", path, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/staging", store);
	if ((rc = rocmd_paths_mkdir_p(path, 0700)) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", path, strerror(-rc));
		return rc;
	}
	/* An import cut short by a crash left its staging folder. */
	d = opendir(path);
	if (d == NULL) {
		rc = -errno;
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		char sub[4096 + 256];
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		remove_flat(sub);
	}
	closedir(d);
	return 0;
}

int
rocmd_store_staging_new(const char *store, char *out, size_t outlen)
{
	static unsigned seq;
	int n;

	for (int tries = 0; tries < 100; tries++) {
		n = snprintf(out, outlen, "%s/staging/import-%ld-%u", store, (long)getpid(),
		             __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
		if (n < 0 || (size_t)n >= outlen)
			return ROCMD_EINVAL;
		if (mkdir(out, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return ROCMD_EEXISTS;
}

static int
fsync_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

int
rocmd_store_commit(const char *store, struct rocmd_pkg_contents *c, uint64_t *added,
                   uint64_t *added_bytes, char *why, size_t whylen)
{
	char obj[4096], dir[4096];
	uint8_t touched[256] = {0};
	size_t staged = 0;
	int rc = 0;

	*added = 0;
	*added_bytes = 0;
	for (size_t i = 0; i < c->count; i++)
		staged += c->entries[i].staged != NULL;
	/* The data first: on disk before any name points at it. */
	if (staged > SYNCFS_THRESHOLD && c->staging != NULL) {
		int fd = open(c->staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd) < 0) {
			rc = rocmd_err_errno(errno);
			snprintf(why, whylen, "cannot flush the staging folder: %s",
			         strerror(errno));
			if (fd >= 0)
				close(fd);
			return rc;
		}
		close(fd);
	} else {
		for (size_t i = 0; i < c->count; i++)
			if (c->entries[i].staged != NULL &&
			    (rc = fsync_file(c->entries[i].staged)) < 0) {
				snprintf(why, whylen, "cannot flush %s: %s", c->entries[i].staged,
				         rocmd_strerror(rc));
				return rc;
			}
	}
	for (size_t i = 0; i < c->count; i++) {
		struct rocmd_pkg_entry *e = &c->entries[i];
		char hex[ROCMD_SHA256_HEX];
		struct stat st;
		unsigned fan;

		if (e->staged == NULL)
			continue;
		rocmd_sha256_hex(e->sha256, hex);
		rocmd_store_object_path(store, hex, obj, sizeof(obj));
		if (lstat(obj, &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size == e->size) {
			/* Already stored by this or another package. */
			unlink(e->staged);
			free(e->staged);
			e->staged = NULL;
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/objects/%.2s", store, hex);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			rc = -errno;
			snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
			return rc;
		}
		chmod(e->staged, 0444);
		if (rename(e->staged, obj) < 0) {
			rc = rocmd_err_errno(errno);
			snprintf(why, whylen, "cannot move %s to %s: %s", e->staged, obj,
			         strerror(errno));
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
		if ((rc = fsync_path(dir)) < 0) {
			snprintf(why, whylen, "cannot flush %s: %s", dir, rocmd_strerror(rc));
			return rc;
		}
	}
	snprintf(dir, sizeof(dir), "%s/objects", store);
	if (*added > 0 && (rc = fsync_path(dir)) < 0) {
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
		uint8_t d[ROCMD_SHA256_LEN];
		char hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;
		int rc;

		if (rocmd_store_object_path(store, objs[i].hex, path, sizeof(path)) < 0) {
			objs[i].status = ROCMD_EINVAL;
			continue;
		}
		rc = rocmd_sha256_file(path, d, &size);
		if (rc == -ENOENT) {
			objs[i].status = ROCMD_ENOTFOUND;
		} else if (rc < 0) {
			objs[i].status = rc;
		} else {
			rocmd_sha256_hex(d, hex);
			objs[i].status = strcmp(hex, objs[i].hex) == 0 && size == objs[i].size
			                     ? 0
			                     : ROCMD_ECORRUPT;
		}
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

int
rocmd_store_gc(const char *store, char *const *keep, size_t keep_n, uint64_t *removed,
               uint64_t *removed_bytes)
{
	char path[4096];
	DIR *top;
	struct dirent *de;

	*removed = 0;
	*removed_bytes = 0;
	snprintf(path, sizeof(path), "%s/objects", store);
	top = opendir(path);
	if (top == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(top)) != NULL) {
		DIR *d;
		struct dirent *f;
		int fd, any = 0, gone = 0;

		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		fd =
		    openat(dirfd(top), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || (d = fdopendir(fd)) == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((f = readdir(d)) != NULL) {
			char hex[ROCMD_SHA256_HEX], *key = hex;
			struct stat st;
			if (f->d_name[0] == '.')
				continue;
			any = 1;
			snprintf(hex, sizeof(hex), "%.2s%.62s", de->d_name, f->d_name);
			if (keep_n > 0 &&
			    bsearch(&key, keep, keep_n, sizeof(*keep), cmp_str) != NULL)
				continue;
			if (fstatat(dirfd(d), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				*removed_bytes += (uint64_t)st.st_size;
			if (unlinkat(dirfd(d), f->d_name, 0) == 0) {
				(*removed)++;
				gone++;
			}
		}
		closedir(d);
		if (any && gone > 0)
			unlinkat(dirfd(top), de->d_name, AT_REMOVEDIR); /* fails while not empty */
		else if (!any)
			unlinkat(dirfd(top), de->d_name, AT_REMOVEDIR);
	}
	closedir(top);
	if (*removed > 0)
		fsync_path(path);
	return 0;
}

int
rocmd_store_usage(const char *store, uint64_t *objects, uint64_t *bytes)
{
	char path[4096];
	DIR *top;
	struct dirent *de;

	*objects = 0;
	*bytes = 0;
	snprintf(path, sizeof(path), "%s/objects", store);
	top = opendir(path);
	if (top == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(top)) != NULL) {
		DIR *d;
		struct dirent *f;
		int fd;

		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		fd =
		    openat(dirfd(top), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || (d = fdopendir(fd)) == NULL) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while ((f = readdir(d)) != NULL) {
			struct stat st;
			if (f->d_name[0] == '.')
				continue;
			if (fstatat(dirfd(d), f->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				(*objects)++;
				*bytes += (uint64_t)st.st_size;
			}
		}
		closedir(d);
	}
	closedir(top);
	return 0;
}
