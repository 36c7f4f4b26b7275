/*
 * The portable part of the file layer (fs.h): copying a file while
 * hashing it, hashing, walking a tree into a sorted list, relative path
 * checks, and durable files (new beside old, fsync, rename, fsync the
 * folder) with JSON on top. Everything that touches the system goes
 * through the single operations of fs-unix.c / fs-win.c, so the
 * failpoints and the no-following rules hold here too.
 */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "failpoint.h"

#define COPY_BUF (4u << 20)
#define TICK_BYTES (16u << 20)
#define WRITEBACK_BYTES (32u << 20)

int
rocmd_fs_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n;
}

int
rocmd_fs_relpath_ok(const char *path)
{
	const char *p = path;

	if (path == NULL || *path == '\0' || *path == '/')
		return ROCMD_EUNSAFE;
	for (const char *c = path; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == '\\' || *c == 0x7f || *c == ':')
			return ROCMD_EUNSAFE;
	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return ROCMD_EUNSAFE;
		if (len > 255)
			return ROCMD_EUNSAFE;
		p += len;
		if (*p == '/')
			p++;
		else
			break;
	}
	return path[strlen(path) - 1] == '/' ? ROCMD_EUNSAFE : 0;
}

/* Resolves a symlink's target against the folder of REL; ROCMD_EUNSAFE when it
 * leaves the root or is absolute. */
int
rocmd_fs_link_inside(const char *rel, const char *target)
{
	int depth = 0;
	const char *p;

	if (target[0] == '/' || target[0] == '\0' || rocmd_fs_path_root(target) > 0)
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

const char *
rocmd_fs_below(const char *root, const char *path)
{
	size_t n = strlen(root);
	const char *rel = path + n, *p;

	if (n == 0 || strncmp(path, root, n) != 0)
		return NULL;
	if (root[n - 1] != '/') {
		if (*rel == '\0')
			return rel;
		if (*rel != '/')
			return NULL;
		rel++;
	}
	for (p = rel; *p != '\0';) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return NULL;
		p += len;
		if (*p == '/' && *++p == '\0')
			return NULL; /* a trailing '/' */
	}
	return rel;
}

/* ---- the operations without a root: the _in ones with NULL (fs.h) ---- */

int
rocmd_fs_mkdir(const char *path, unsigned mode)
{
	return rocmd_fs_mkdir_in(NULL, path, mode);
}

int
rocmd_fs_open(const char *path, int flags, unsigned mode)
{
	return rocmd_fs_open_in(NULL, path, flags, mode);
}

int
rocmd_fs_fsync_dir(const char *path)
{
	return rocmd_fs_fsync_dir_in(NULL, path);
}

int
rocmd_fs_syncfs(const char *path)
{
	return rocmd_fs_syncfs_in(NULL, path);
}

int
rocmd_fs_rename(const char *from, const char *to)
{
	return rocmd_fs_rename_in(NULL, from, to);
}

int
rocmd_fs_unlink(const char *path)
{
	return rocmd_fs_unlink_in(NULL, path);
}

void
rocmd_fs_os_unlink(const char *path)
{
	rocmd_fs_os_unlink_in(NULL, path);
}

int
rocmd_fs_symlink(const char *target, const char *path)
{
	return rocmd_fs_symlink_in(NULL, target, path);
}

int
rocmd_fs_link(const char *from, const char *to)
{
	return rocmd_fs_link_in(NULL, from, to);
}

int
rocmd_fs_remove_tree(const char *path)
{
	return rocmd_fs_remove_tree_in(NULL, path, NULL);
}

int
rocmd_fs_set_writable(const char *path, int writable)
{
	return rocmd_fs_set_writable_in(NULL, path, writable);
}

int
rocmd_fs_kind(const char *path, uint64_t *size, int *exec)
{
	return rocmd_fs_kind_in(NULL, path, size, exec);
}

int
rocmd_fs_id_of(const char *path, struct rocmd_fs_id *id)
{
	return rocmd_fs_id_of_in(NULL, path, id);
}

int
rocmd_fs_readlink(const char *path, char *buf, size_t len)
{
	return rocmd_fs_readlink_in(NULL, path, buf, len);
}

int
rocmd_fs_exchange(const char *a, const char *b)
{
	return rocmd_fs_exchange_in(NULL, a, b);
}

int
rocmd_fs_remove_loaded(const char *path)
{
	return rocmd_fs_remove_loaded_in(NULL, path);
}

int
rocmd_fs_os_walk(const char *root, rocmd_fs_walk_fn add, void *ctx, char *why, size_t whylen)
{
	return rocmd_fs_os_walk_in(NULL, root, add, ctx, why, whylen);
}

int
rocmd_fs_hash_file(const char *path, char hex[ROCMD_SHA256_HEX], uint64_t *size)
{
	return rocmd_fs_hash_file_in(NULL, path, hex, size);
}

int
rocmd_fs_copy_file_in(const char *sroot, const char *src, const char *droot, const char *dst,
                      unsigned mode, uint64_t want_size, const char *want_hex,
                      char hex_out[ROCMD_SHA256_HEX], struct rocmd_fs_copy_stats *st)
{
	struct rocmd_sha256 *h = NULL;
	uint8_t digest[ROCMD_SHA256_LEN];
	char hex[ROCMD_SHA256_HEX];
	unsigned char *buf = NULL;
	int in = -1, out = -1, rc, cloned = 0, created = 0, regular = 0;
	uint64_t total = 0, since_tick = 0, src_size = 0;

	if ((in = rocmd_fs_open_in(sroot, src, O_RDONLY, 0)) < 0) {
		rc = in;
		goto out;
	}
	if ((rc = rocmd_fs_os_fstat(in, &src_size, &regular)) < 0)
		goto out;
	if (!regular) {
		rc = ROCMD_EUNSAFE;
		goto out;
	}
	if (want_hex != NULL && src_size != want_size) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if ((out = rocmd_fs_open_in(droot, dst, O_WRONLY | O_CREAT | O_EXCL, mode | 0200)) < 0) {
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
	if (st->reflink && src_size > 0) {
		rc = ROCMD_FAILPOINT("fs.clone");
		if (rc < 0)
			goto out;
		cloned = rocmd_fs_os_clone(in, out) == 0;
	}
	for (;;) {
		size_t got;
		if ((rc = rocmd_fs_read(in, buf, COPY_BUF, &got)) < 0)
			goto out;
		if (got == 0)
			break;
		rocmd_sha256_update(h, buf, got);
		if (!cloned && (rc = rocmd_fs_write_all(out, buf, got)) < 0)
			goto out;
		total += got;
		/* Start the write-back of each 32 MiB now (it does not wait), so the
		 * disk works while the rest is read and hashed and the final syncfs
		 * finds little left to do (dpkg does the same). */
		if (!cloned && (total & (WRITEBACK_BYTES - 1)) < got)
			rocmd_fs_os_writeback(out, (total - got) & ~(uint64_t)(WRITEBACK_BYTES - 1),
			                      WRITEBACK_BYTES);
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
	if ((st->fsync || !ROCMD_FS_HAS_SYNCFS) && (rc = rocmd_fs_fsync(out)) < 0)
		goto out;
	if (hex_out != NULL)
		memcpy(hex_out, hex, ROCMD_SHA256_HEX);
	rc = 0;
out:
	rocmd_sha256_free(h);
	free(buf);
	if (in >= 0)
		rocmd_fs_close(in);
	if (out >= 0) {
		int crc = rocmd_fs_close(out);
		if (crc < 0 && rc == 0)
			rc = crc;
	}
	/* The read-only bit last: the file had to be written first. */
	if (rc == 0 && !(mode & 0200))
		rc = rocmd_fs_set_writable_in(droot, dst, 0);
	if (rc < 0 && created)
		rocmd_fs_os_unlink_in(droot, dst);
	return rc;
}

int
rocmd_fs_copy_file(const char *src, const char *dst, unsigned mode, uint64_t want_size,
                   const char *want_hex, char hex_out[ROCMD_SHA256_HEX],
                   struct rocmd_fs_copy_stats *st)
{
	return rocmd_fs_copy_file_in(NULL, src, NULL, dst, mode, want_size, want_hex, hex_out, st);
}

/* Hashes the open regular file FD (no failpoint: the caller passed one). */
static int
hash_fd(int fd, uint8_t d[ROCMD_SHA256_LEN], uint64_t *size)
{
	struct rocmd_sha256 *h = NULL;
	unsigned char *buf = malloc(COPY_BUF);
	uint64_t total = 0;
	int rc;

	if (buf == NULL)
		return ROCMD_ENOMEM;
	if ((rc = rocmd_sha256_new(&h)) < 0)
		goto out;
	for (;;) {
		size_t got;
		if ((rc = rocmd_fs_os_read(fd, buf, COPY_BUF, &got)) < 0)
			goto out;
		if (got == 0)
			break;
		rocmd_sha256_update(h, buf, got);
		total += got;
	}
	rc = rocmd_sha256_final(h, d);
	h = NULL;
	if (size != NULL)
		*size = total;
out:
	rocmd_sha256_free(h);
	free(buf);
	return rc;
}

/* The hash of regular file PATH below ROOT; ROOT NULL: by name, as
 * rocmd_sha256_file reads it (after the check that it is not a link). */
static int
hash_in(const char *root, const char *path, uint8_t d[ROCMD_SHA256_LEN], uint64_t *size)
{
	uint64_t fsize;
	int fd, rc, regular = 0;

	if (root == NULL)
		return rocmd_sha256_file(path, d, size);
	if ((fd = rocmd_fs_os_open_in(root, path, O_RDONLY, 0)) < 0)
		return fd == -ELOOP ? ROCMD_EUNSAFE : fd;
	rc = rocmd_fs_os_fstat(fd, &fsize, &regular);
	if (rc == 0 && !regular)
		rc = ROCMD_EUNSAFE;
	if (rc == 0)
		rc = hash_fd(fd, d, size);
	rocmd_fs_close(fd);
	return rc;
}

int
rocmd_fs_hash_file_in(const char *root, const char *path, char hex[ROCMD_SHA256_HEX],
                      uint64_t *size)
{
	uint8_t d[ROCMD_SHA256_LEN];
	int rc, kind;

	if ((rc = ROCMD_FAILPOINT("fs.read")) < 0)
		return rc;
	if ((kind = rocmd_fs_kind_in(root, path, NULL, NULL)) < 0)
		return kind;
	if (kind == 0)
		return -ENOENT;
	if (kind != 'f')
		return ROCMD_EUNSAFE;
	if ((rc = hash_in(root, path, d, size)) < 0)
		return rc;
	rocmd_sha256_hex(d, hex);
	return 0;
}

/* ---- walking a tree ---- */

struct walk {
	struct rocmd_fs_entry *e;
	size_t n, cap;
};

static int
walk_add(void *ctx, const char *rel, int kind, int exec, uint64_t size, const char *link)
{
	struct walk *w = ctx;
	struct rocmd_fs_entry *e;

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

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_fs_entry *)a)->path,
	              ((const struct rocmd_fs_entry *)b)->path);
}

int
rocmd_fs_walk_in(const char *root, const char *dir, int hash, struct rocmd_fs_entry **out,
                 size_t *n, char *why, size_t whylen)
{
	struct walk w = {0};
	int rc;

	*out = NULL;
	*n = 0;
	rc = rocmd_fs_os_walk_in(root, dir, walk_add, &w, why, whylen);
	for (size_t i = 0; rc == 0 && hash && i < w.n; i++) {
		char path[ROCMD_FS_PATH_MAX * 2];
		uint8_t d[ROCMD_SHA256_LEN];
		uint64_t size;
		if (w.e[i].kind != 'f')
			continue;
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, w.e[i].path);
		if ((rc = ROCMD_FAILPOINT("fs.read")) < 0 ||
		    (rc = hash_in(root, path, d, &size)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
			break;
		}
		w.e[i].size = size;
		rocmd_sha256_hex(d, w.e[i].sha256);
	}
	if (rc < 0) {
		rocmd_fs_entries_free(w.e, w.n);
		return rc;
	}
	if (w.n > 0)
		qsort(w.e, w.n, sizeof(*w.e), entry_cmp);
	*out = w.e;
	*n = w.n;
	return 0;
}

int
rocmd_fs_walk(const char *root, int hash, struct rocmd_fs_entry **out, size_t *n, char *why,
              size_t whylen)
{
	return rocmd_fs_walk_in(NULL, root, hash, out, n, why, whylen);
}

void
rocmd_fs_entries_free(struct rocmd_fs_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].path);
		free(e[i].link);
	}
	free(e);
}

/* ---- durable files ---- */

int
rocmd_fs_write_new(const char *path, const void *data, size_t len, unsigned mode)
{
	int fd, rc, crc;

	/* Created writable: a read-only file is sealed once it is written. */
	if ((fd = rocmd_fs_open(path, O_WRONLY | O_CREAT | O_EXCL, mode | 0200)) < 0)
		return fd;
	rc = rocmd_fs_write_all(fd, data, len);
	if (rc == 0)
		rc = rocmd_fs_fsync(fd);
	crc = rocmd_fs_close(fd);
	if (rc == 0)
		rc = crc;
	if (rc == 0 && !(mode & 0200))
		rc = rocmd_fs_set_writable(path, 0);
	if (rc < 0)
		rocmd_fs_os_unlink(path);
	return rc;
}

int
rocmd_fs_rename_sync(const char *from, const char *to)
{
	char dir[ROCMD_FS_PATH_MAX];
	char *slash;
	int rc;

	if (rocmd_fs_fmt(dir, sizeof(dir), "%s", to) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if ((rc = rocmd_fs_rename(from, to)) < 0)
		return rc;
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return rocmd_fs_fsync_dir(".");
	/* "/x" and "C:/x": the folder is the root, its separator included. */
	if ((size_t)(slash - dir) < rocmd_fs_path_root(dir))
		slash++;
	*slash = '\0';
	return rocmd_fs_fsync_dir(dir);
}

int
rocmd_fs_replace(const char *path, const char *tmp, const void *data, size_t len, unsigned mode)
{
	char own[ROCMD_FS_PATH_MAX + 16];
	int rc;

	if (tmp == NULL) {
		if (rocmd_fs_fmt(own, sizeof(own), "%s.tmp", path) >= (int)sizeof(own))
			return -ENAMETOOLONG;
		tmp = own;
	}
	rocmd_fs_os_unlink(tmp);
	if ((rc = rocmd_fs_write_new(tmp, data, len, mode)) < 0)
		return rc;
	rc = rocmd_fs_rename_sync(tmp, path);
	if (rc < 0)
		rocmd_fs_os_unlink(tmp); /* gone already when only the folder's flush failed */
	return rc;
}

/* Opening a FIFO for reading waits for a writer: O_NONBLOCK returns at once,
 * and the regular-file check then refuses it (no FIFOs on Windows). */
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif

int
rocmd_fs_read_head(const char *path, char *buf, size_t len)
{
	uint64_t size = 0;
	size_t got = 0, n;
	int fd, rc, regular = 0;

	buf[0] = '\0';
	if ((fd = rocmd_fs_open(path, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return fd;
	if ((rc = rocmd_fs_os_fstat(fd, &size, &regular)) == 0 && !regular)
		rc = ROCMD_ECORRUPT;
	while (rc == 0 && got + 1 < len &&
	       (rc = rocmd_fs_read(fd, buf + got, len - 1 - got, &n)) == 0 && n > 0)
		got += n;
	buf[got] = '\0';
	rocmd_fs_close(fd);
	return rc;
}

int
rocmd_fs_read_file(const char *path, size_t max, char **out, size_t *len)
{
	uint64_t size = 0;
	size_t got = 0;
	char *buf = NULL;
	int fd, rc, regular = 0;

	*out = NULL;
	if (len != NULL)
		*len = 0;
	if ((fd = rocmd_fs_open(path, O_RDONLY | O_NONBLOCK, 0)) < 0)
		return fd;
	if ((rc = rocmd_fs_os_fstat(fd, &size, &regular)) < 0)
		goto out;
	if (!regular || size > max) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if ((buf = malloc((size_t)size + 1)) == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	while (got < size) {
		size_t n;
		if ((rc = rocmd_fs_read(fd, buf + got, (size_t)size - got, &n)) < 0)
			goto out;
		if (n == 0)
			break; /* shorter than it was a moment ago: what there is */
		got += n;
	}
	buf[got] = '\0';
	*out = buf;
	buf = NULL;
	if (len != NULL)
		*len = got;
out:
	free(buf);
	rocmd_fs_close(fd);
	return rc;
}

/* ---- durable JSON ---- */

int
rocmd_fs_json_write(const char *path, const cJSON *j)
{
	char *text = cJSON_Print(j), *line;
	size_t n;
	int rc;

	if (text == NULL)
		return ROCMD_ENOMEM;
	n = strlen(text);
	if ((line = realloc(text, n + 2)) == NULL) {
		free(text);
		return ROCMD_ENOMEM;
	}
	line[n++] = '\n';
	line[n] = '\0';
	rc = rocmd_fs_replace(path, NULL, line, n, 0644);
	free(line);
	return rc;
}

int
rocmd_fs_json_read(const char *path, cJSON **out)
{
	char *buf;
	int rc;

	*out = NULL;
	if ((rc = rocmd_fs_read_file(path, 256u << 20, &buf, NULL)) < 0)
		return rc;
	*out = cJSON_Parse(buf);
	free(buf);
	return *out == NULL ? ROCMD_ECORRUPT : 0;
}
