/*
 * File operations of the deploy engine. Each one passes a failpoint first
 * (common/failpoint.h), so the fault tests can fail every open, write,
 * fsync, rename, mkdir and unlink the engine does. Nothing here follows a
 * symlink: files are opened with O_NOFOLLOW, folders are walked through
 * descriptors opened with O_NOFOLLOW | O_DIRECTORY, and removal unlinks a
 * symlink itself, never what it points to (I4).
 */
#include "deploy-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/failpoint.h"

#define COPY_BUF (4u << 20)
#define TICK_BYTES (16u << 20)
#define WRITEBACK_BYTES (32u << 20)

int
deploy_mkdir(const char *path, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("deploy.mkdir");

	if (rc == 0 && mkdir(path, (mode_t)mode) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_open(const char *path, int flags, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("deploy.open"), fd;

	if (rc < 0)
		return rc;
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
	return fd < 0 ? rocmd_err_errno(errno) : fd;
}

int
deploy_read(int fd, void *buf, size_t n, size_t *got)
{
	int rc = ROCMD_FAILPOINT("deploy.read");
	ssize_t r;

	*got = 0;
	if (rc < 0)
		return rc;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return rocmd_err_errno(errno);
	*got = (size_t)r;
	return 0;
}

int
deploy_write_all(int fd, const void *buf, size_t n)
{
	int rc = ROCMD_FAILPOINT("deploy.write");
	const char *p = buf;

	if (rc < 0)
		return rc;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return rocmd_err_errno(errno);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
deploy_fsync(int fd)
{
	int rc = ROCMD_FAILPOINT("deploy.fsync");

	if (rc == 0 && fsync(fd) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_fsync_dir(const char *path)
{
	int rc = ROCMD_FAILPOINT("deploy.fsync"), fd;

	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if (fsync(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

int
deploy_syncfs(const char *path)
{
	int rc = ROCMD_FAILPOINT("deploy.fsync"), fd;

	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if (syncfs(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

int
deploy_rename(const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("deploy.rename");

	if (rc == 0 && rename(from, to) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_unlink(const char *path)
{
	int rc = ROCMD_FAILPOINT("deploy.unlink");

	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_symlink(const char *target, const char *path)
{
	int rc = ROCMD_FAILPOINT("deploy.symlink");

	if (rc == 0 && symlink(target, path) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_link(const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("deploy.link");

	if (rc == 0 && link(from, to) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
deploy_id_of(const char *path, struct deploy_id *id)
{
	struct stat st;

	id->dev = id->ino = 0;
	if (lstat(path, &st) < 0)
		return -errno;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	return 0;
}

int
deploy_id_eq(const struct deploy_id *a, const struct deploy_id *b)
{
	return a->ino != 0 && a->dev == b->dev && a->ino == b->ino;
}

/* Empties the folder open at FD (consumed) depth-first, through descriptors. */
static int
remove_contents(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		int sub, r;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				break;
			}
			sub = openat(dirfd(d), de->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				rc = rocmd_err_errno(errno);
				break;
			}
			if ((r = remove_contents(sub, depth + 1)) < 0) {
				rc = r;
				break;
			}
		}
		if ((r = ROCMD_FAILPOINT("deploy.unlink")) < 0) {
			rc = r;
			break;
		}
		if (unlinkat(dirfd(d), de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 &&
		    errno != ENOENT) {
			rc = rocmd_err_errno(errno);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
deploy_remove_tree(const char *path)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return deploy_unlink(path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if ((rc = remove_contents(fd, 0)) < 0)
		return rc;
	if ((rc = ROCMD_FAILPOINT("deploy.rmdir")) < 0)
		return rc;
	if (rmdir(path) < 0 && errno != ENOENT)
		return rocmd_err_errno(errno);
	return 0;
}

int
deploy_copy_file(const char *src, const char *dst, unsigned mode, uint64_t want_size,
                 const char *want_hex, char hex_out[ROCMD_SHA256_HEX], struct deploy_copy_stats *st)
{
	struct rocmd_sha256 *h = NULL;
	uint8_t digest[ROCMD_SHA256_LEN];
	char hex[ROCMD_SHA256_HEX];
	unsigned char *buf = NULL;
	int in = -1, out = -1, rc, cloned = 0, created = 0;
	uint64_t total = 0, since_tick = 0;
	struct stat sst;

	if ((in = deploy_open(src, O_RDONLY, 0)) < 0) {
		rc = in;
		goto out;
	}
	if (fstat(in, &sst) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(sst.st_mode)) {
		rc = ROCMD_EUNSAFE;
		goto out;
	}
	if (want_hex != NULL && (uint64_t)sst.st_size != want_size) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if ((out = deploy_open(dst, O_WRONLY | O_CREAT | O_EXCL, mode)) < 0) {
		rc = out;
		goto out;
	}
	created = 1;
	if ((rc = rocmd_sha256_new(&h)) < 0)
		goto out;
	if ((buf = malloc(COPY_BUF)) == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	if (st->reflink && sst.st_size > 0) {
		rc = ROCMD_FAILPOINT("deploy.clone");
		if (rc < 0)
			goto out;
		cloned = deploy_os_clone(in, out) == 0;
	}
	for (;;) {
		size_t got;
		if ((rc = deploy_read(in, buf, COPY_BUF, &got)) < 0)
			goto out;
		if (got == 0)
			break;
		rocmd_sha256_update(h, buf, got);
		if (!cloned && (rc = deploy_write_all(out, buf, got)) < 0)
			goto out;
		total += got;
		/* Start the write-back of each 32 MiB now (it does not wait), so the
		 * disk works while the rest is read and hashed and the final syncfs
		 * finds little left to do (dpkg does the same). */
		if (!cloned && (total & (WRITEBACK_BYTES - 1)) < got)
			sync_file_range(out, (off_t)(total - got) & ~(off_t)(WRITEBACK_BYTES - 1),
			                WRITEBACK_BYTES, SYNC_FILE_RANGE_WRITE);
		since_tick += got;
		st->bytes += got;
		if (!cloned)
			st->bytes_copied += got;
		if (since_tick >= TICK_BYTES && st->tick != NULL) {
			since_tick = 0;
			if (st->tick(st->ctx, st->bytes) != 0) {
				rc = ROCMD_ECANCELED;
				goto out;
			}
		}
	}
	rc = rocmd_sha256_final(h, digest);
	h = NULL;
	if (rc < 0)
		goto out;
	rocmd_sha256_hex(digest, hex);
	if (want_hex != NULL && (total != want_size || strcmp(hex, want_hex) != 0)) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if (hex_out != NULL)
		memcpy(hex_out, hex, ROCMD_SHA256_HEX);
	rc = 0;
out:
	rocmd_sha256_free(h);
	free(buf);
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = rocmd_err_errno(errno);
	if (rc < 0 && created)
		unlink(dst);
	return rc;
}

/* ---- walking a tree ---- */

struct walk {
	struct deploy_entry *e;
	size_t n, cap;
	int hash;
	char *why;
	size_t whylen;
};

static int
walk_add(struct walk *w, const char *rel, int kind, int exec, uint64_t size, const char *link)
{
	struct deploy_entry *e;

	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		void *p = realloc(w->e, cap * sizeof(*w->e));
		if (p == NULL)
			return ROCMD_ENOMEM;
		w->e = p;
		w->cap = cap;
	}
	e = &w->e[w->n];
	memset(e, 0, sizeof(*e));
	e->path = strdup(rel);
	e->link = link != NULL ? strdup(link) : NULL;
	if (e->path == NULL || (link != NULL && e->link == NULL)) {
		free(e->path);
		free(e->link);
		return ROCMD_ENOMEM;
	}
	e->kind = kind;
	e->exec = exec;
	e->size = size;
	w->n++;
	return 0;
}

/* Resolves a symlink's target against the folder of REL; ROCMD_EUNSAFE when it
 * leaves the root or is absolute. */
int
deploy_link_inside(const char *rel, const char *target)
{
	int depth = 0;
	const char *p;

	if (target[0] == '/' || target[0] == '\0')
		return ROCMD_EUNSAFE;
	for (p = rel; *p != '\0'; p++)
		depth += *p == '/';
	p = target;
	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return ROCMD_EUNSAFE;
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			depth++;
		}
		p += len;
		if (*p == '/')
			p++;
	}
	return 0;
}

static int
walk_dir(struct walk *w, int fd, const char *prefix, const char *root, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		char rel[DEPLOY_PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", de->d_name) >=
		    (int)sizeof(rel)) {
			rc = ROCMD_EUNSAFE;
			snprintf(w->why, w->whylen, "path too long under %s", root);
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
			snprintf(w->why, w->whylen, "cannot read %s/%s: %s", root, rel,
			         strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub;
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				snprintf(w->why, w->whylen, "%s/%s is nested too deep", root, rel);
				break;
			}
			if ((rc = walk_add(w, rel, 'd', 0, 0, NULL)) < 0)
				break;
			sub = openat(dirfd(d), de->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				rc = -errno;
				snprintf(w->why, w->whylen, "cannot open %s/%s: %s", root, rel,
				         strerror(errno));
				break;
			}
			if ((rc = walk_dir(w, sub, rel, root, depth + 1)) < 0)
				break;
		} else if (S_ISREG(st.st_mode)) {
			if ((rc = walk_add(w, rel, 'f', (st.st_mode & 0111) != 0,
			                   (uint64_t)st.st_size, NULL)) < 0)
				break;
		} else if (S_ISLNK(st.st_mode)) {
			char target[DEPLOY_PATH_MAX];
			ssize_t len = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
			if (len < 0) {
				rc = -errno;
				break;
			}
			target[len] = '\0';
			if (deploy_link_inside(rel, target) < 0) {
				rc = ROCMD_EUNSAFE;
				snprintf(w->why, w->whylen,
				         "%s/%s is a symlink leading outside (%s)", root, rel,
				         target);
				break;
			}
			if ((rc = walk_add(w, rel, 'l', 0, 0, target)) < 0)
				break;
		} else {
			rc = ROCMD_EUNSAFE;
			snprintf(w->why, w->whylen, "%s/%s is not a file, folder or symlink", root,
			         rel);
			break;
		}
	}
	closedir(d);
	return rc;
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct deploy_entry *)a)->path,
	              ((const struct deploy_entry *)b)->path);
}

int
deploy_walk(const char *root, int hash, struct deploy_entry **out, size_t *n, char *why,
            size_t whylen)
{
	struct walk w = {.hash = hash, .why = why, .whylen = whylen};
	int fd, rc;

	*out = NULL;
	*n = 0;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot open %s: %s", root, strerror(errno));
		return rc;
	}
	rc = walk_dir(&w, fd, "", root, 0);
	for (size_t i = 0; rc == 0 && hash && i < w.n; i++) {
		char path[DEPLOY_PATH_MAX * 2];
		uint8_t d[ROCMD_SHA256_LEN];
		uint64_t size;
		if (w.e[i].kind != 'f')
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, w.e[i].path);
		if ((rc = ROCMD_FAILPOINT("deploy.read")) < 0 ||
		    (rc = rocmd_sha256_file(path, d, &size)) < 0) {
			snprintf(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
			break;
		}
		w.e[i].size = size;
		rocmd_sha256_hex(d, w.e[i].sha256);
	}
	if (rc < 0) {
		deploy_entries_free(w.e, w.n);
		return rc;
	}
	if (w.n > 0)
		qsort(w.e, w.n, sizeof(*w.e), entry_cmp);
	*out = w.e;
	*n = w.n;
	return 0;
}

void
deploy_entries_free(struct deploy_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].link);
	}
	free(e);
}

int
deploy_hash_file(const char *path, char hex[ROCMD_SHA256_HEX], uint64_t *size)
{
	uint8_t d[ROCMD_SHA256_LEN];
	struct stat st;
	int rc;

	if ((rc = ROCMD_FAILPOINT("deploy.read")) < 0)
		return rc;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return ROCMD_EUNSAFE;
	if ((rc = rocmd_sha256_file(path, d, size)) < 0)
		return rc;
	rocmd_sha256_hex(d, hex);
	return 0;
}

static int
dfile_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct rocmd_deploy_file *const *)a)->path,
	              (*(const struct rocmd_deploy_file *const *)b)->path);
}

static int
dfile_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct rocmd_deploy_file *const *)elem)->path);
}

static int
entry_key_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct deploy_entry *)elem)->path);
}

static void
note_bad(uint64_t *bad, char *first, size_t len, const char *path, const char *what)
{
	if (*bad == 0)
		snprintf(first, len, "%s: %s", path, what);
	(*bad)++;
}

int
deploy_check_tree(const char *root, const struct rocmd_deploy_file *files, size_t n,
                  uint64_t *checked, uint64_t *bad, char *first_bad, size_t first_len,
                  rocmd_deploy_progress_fn progress, void *ctx, const char *step, char *why,
                  size_t whylen)
{
	const struct rocmd_deploy_file **sorted = NULL;
	struct deploy_entry *e = NULL;
	struct rocmd_deploy_progress pr = {.step = step, .files_total = n};
	size_t ne = 0;
	int rc;

	*checked = *bad = 0;
	first_bad[0] = '\0';
	for (size_t i = 0; i < n; i++)
		pr.bytes_total += files[i].size;
	if ((rc = deploy_walk(root, 0, &e, &ne, why, whylen)) < 0)
		return rc;
	sorted = calloc(n > 0 ? n : 1, sizeof(*sorted));
	if (sorted == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = &files[i];
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), dfile_cmp);
	/* Anything on disk the list does not name is stale (I2). */
	for (size_t i = 0; i < ne; i++) {
		if (e[i].kind == 'd') {
			/* A folder must lead to a listed file: the first listed path
			 * sorting after "dir/" starts with it. */
			char prefix[DEPLOY_PATH_MAX + 2];
			size_t lo = 0, hi = n, plen;
			snprintf(prefix, sizeof(prefix), "%s/", e[i].path);
			plen = strlen(prefix);
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (strcmp(sorted[mid]->path, prefix) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo == n || strncmp(sorted[lo]->path, prefix, plen) != 0)
				note_bad(bad, first_bad, first_len, e[i].path,
				         "folder not in the manifest");
			continue;
		}
		if (bsearch(e[i].path, sorted, n, sizeof(*sorted), dfile_key_cmp) == NULL)
			note_bad(bad, first_bad, first_len, e[i].path, "file not in the manifest");
	}
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = sorted[i];
		const struct deploy_entry *d = bsearch(f->path, e, ne, sizeof(*e), entry_key_cmp);
		char path[DEPLOY_PATH_MAX * 2], hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;

		(*checked)++;
		pr.files_done++;
		if (d == NULL) {
			note_bad(bad, first_bad, first_len, f->path, "missing");
			continue;
		}
		if (f->kind == ROCMD_DEPLOY_SYMLINK) {
			if (d->kind != 'l' || strcmp(d->link, f->link != NULL ? f->link : "") != 0)
				note_bad(bad, first_bad, first_len, f->path,
				         "not the listed symlink");
			continue;
		}
		if (d->kind != 'f' || d->size != f->size) {
			note_bad(bad, first_bad, first_len, f->path, "wrong type or size");
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", root, f->path);
		if ((rc = deploy_hash_file(path, hex, &size)) < 0) {
			snprintf(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
			goto out;
		}
		if (size != f->size || strcmp(hex, f->sha256) != 0)
			note_bad(bad, first_bad, first_len, f->path, "content differs (SHA-256)");
		pr.bytes_done += size;
		if (progress != NULL && progress(&pr, ctx) != 0) {
			rc = ROCMD_ECANCELED;
			goto out;
		}
	}
	rc = 0;
out:
	free(sorted);
	deploy_entries_free(e, ne);
	return rc;
}

int
deploy_binary_resolve(const char *in, char *out, size_t len)
{
	char target[256];
	struct stat st;
	const char *slash = strrchr(in, '/');
	ssize_t n;

	if (lstat(in, &st) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode)) {
		if (!S_ISREG(st.st_mode))
			return ROCMD_EUNSAFE;
		return snprintf(out, len, "%s", in) < (int)len ? 0 : ROCMD_EINVAL;
	}
	n = readlink(in, target, sizeof(target) - 1);
	if (n <= 0 || slash == NULL)
		return ROCMD_EUNSAFE;
	target[n] = '\0';
	if (strchr(target, '/') != NULL || strcmp(target, "..") == 0 || strcmp(target, ".") == 0)
		return ROCMD_EUNSAFE;
	if (deploy_fmt(out, len, "%.*s/%s", (int)(slash - in), in, target) >= (int)len)
		return ROCMD_EINVAL;
	if (lstat(out, &st) < 0 || !S_ISREG(st.st_mode))
		return ROCMD_EUNSAFE;
	return 0;
}
