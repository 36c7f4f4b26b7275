/*
 * Fuzz target for the path checks and the no-follow resolution beneath a
 * root (common/fs.h), against a model of what each promises. A sandbox is
 * made once in a temporary folder: a root holding files, folders and
 * symlinks that stay inside, climb out (../.., ../secret) or are absolute,
 * and a "secret" file beside the root. The first byte picks the check, the
 * rest is its input:
 *   0  rocmd_fs_open_beneath(root, REL, O_RDONLY [| O_DIRECTORY]): an
 *      opened file is inside the root (its /proc/self/fd name) and REL's
 *      walk from the root meets no symlink and never climbs above it; a
 *      plain REL (no "..", ".", empty component, link or missing name) to
 *      an existing entry opens;
 *   1  rocmd_fs_relpath_ok(PATH): accepts exactly the clean relative paths
 *      its comment describes;
 *   2  rocmd_fs_link_inside(REL, TARGET) ("REL\0TARGET"): accepts exactly
 *      the targets whose lexical resolution from REL's folder stays inside;
 *   3  rocmd_fs_path_root / rocmd_fs_path_norm: bounded, and normalizing
 *      twice changes nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sandbox[64], root[128], root_real[PATH_MAX];

static void
cleanup(void)
{
	static const char *const files[] = {
	    "root/a/b/file", "root/a/file", "root/a/up", "root/a/in", "root/a/abs",
	    "root/a/fl",     "root/esc",    "root/loop", "secret",    NULL};
	static const char *const dirs[] = {"root/a/b", "root/a", "root/d", "root", NULL};
	char p[256];

	for (int i = 0; files[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s/%s", sandbox, files[i]);
		unlink(p);
	}
	for (int i = 0; dirs[i] != NULL; i++) {
		snprintf(p, sizeof(p), "%s/%s", sandbox, dirs[i]);
		rmdir(p);
	}
	rmdir(sandbox);
}

static void
make(const char *rel, const char *link)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", sandbox, rel);
	if (link != NULL) {
		if (symlink(link, p) != 0)
			abort();
	} else if (rel[strlen(rel) - 1] == '/') {
		if (mkdir(p, 0755) != 0)
			abort();
	} else {
		FILE *f = fopen(p, "w");
		if (f == NULL)
			abort();
		fputs(rel, f);
		fclose(f);
	}
}

static void
setup(void)
{
	snprintf(sandbox, sizeof(sandbox), "/tmp/rocmd-fuzz-path.XXXXXX");
	if (mkdtemp(sandbox) == NULL)
		abort();
	atexit(cleanup);
	make("secret", NULL);
	make("root/", NULL);
	make("root/a/", NULL);
	make("root/a/b/", NULL);
	make("root/d/", NULL);
	make("root/a/b/file", NULL);
	make("root/a/file", NULL);
	make("root/a/up", "../..");
	make("root/a/in", "b");
	make("root/a/abs", "/");
	make("root/a/fl", "file");
	make("root/esc", "../secret");
	make("root/loop", "loop");
	snprintf(root, sizeof(root), "%s/root", sandbox);
	if (realpath(root, root_real) == NULL)
		abort();
}

/* The model's verdict on REL below the root. */
enum walk { W_PLAIN, W_DOTS, W_LINK, W_ABOVE, W_MISSING, W_NOTDIR, W_BAD };

static enum walk
model_walk(const char *rel, int want_dir, int *is_dir)
{
	char stack[64][256], p[PATH_MAX];
	int depth = 0, dots = 0;
	const char *s = rel;
	struct stat st;

	*is_dir = 1;
	if (*rel == '\0' || *rel == '/')
		return W_BAD;
	while (*s != '\0') {
		const char *slash = strchr(s, '/');
		size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.')) {
			dots = 1;
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			dots = 1;
			if (--depth < 0)
				return W_ABOVE;
		} else {
			size_t off;
			if (len >= 256 || depth >= 64)
				return W_BAD;
			if (!*is_dir)
				return W_NOTDIR;
			memcpy(stack[depth], s, len);
			stack[depth][len] = '\0';
			depth++;
			off = (size_t)snprintf(p, sizeof(p), "%s", root);
			for (int i = 0; i < depth && off < sizeof(p); i++)
				off += (size_t)snprintf(p + off, sizeof(p) - off, "/%s", stack[i]);
			if (off >= sizeof(p))
				return W_BAD;
			if (lstat(p, &st) != 0)
				return W_MISSING;
			if (S_ISLNK(st.st_mode))
				return W_LINK;
			*is_dir = S_ISDIR(st.st_mode);
		}
		s += len;
		if (*s == '/') {
			s++;
			if (*s == '\0')
				dots = 1; /* a trailing slash */
		}
	}
	if (want_dir && !*is_dir)
		return W_NOTDIR;
	return dots ? W_DOTS : W_PLAIN;
}

static void
check_open(const char *rel, int want_dir)
{
	int is_dir, fd = rocmd_fs_open_beneath(root, rel, O_RDONLY | (want_dir ? O_DIRECTORY : 0));
	enum walk w = model_walk(rel, want_dir, &is_dir);

	if (fd >= 0) {
		char link[64], where[PATH_MAX];
		ssize_t n;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, where, sizeof(where) - 1);
		if (n < 0)
			abort();
		where[n] = '\0';
		/* Never outside the root, never through a link. */
		if (strncmp(where, root_real, strlen(root_real)) != 0 ||
		    (where[strlen(root_real)] != '\0' && where[strlen(root_real)] != '/'))
			abort();
		if (w == W_LINK || w == W_ABOVE || w == W_MISSING || w == W_BAD)
			abort();
		close(fd);
	} else if (w == W_PLAIN && strlen(rel) < 1024) {
		abort(); /* a plain path to an existing entry opens */
	}
}

/* What rocmd_fs_relpath_ok's comment promises. */
static int
model_relpath(const char *path)
{
	const char *s = path;

	if (*path == '\0' || *path == '/')
		return 0;
	for (const char *c = path; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\' || *c == ':')
			return 0;
	for (;;) {
		const char *slash = strchr(s, '/');
		size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (len == 0 || len > 255 || (len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		if (slash == NULL)
			return 1;
		s = slash + 1;
	}
}

/* Whether TARGET, a symlink at relative path REL, resolves inside. */
static int
model_inside(const char *rel, const char *target)
{
	int depth = 0;
	const char *s = target;

	if (*target == '\0' || *target == '/' || rocmd_fs_path_root(target) > 0)
		return 0;
	for (const char *c = rel; *c != '\0'; c++)
		depth += *c == '/';
	while (*s != '\0') {
		const char *slash = strchr(s, '/');
		size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
		if (len == 2 && s[0] == '.' && s[1] == '.') {
			if (--depth < 0)
				return 0;
		} else if (len > 0 && !(len == 1 && s[0] == '.')) {
			depth++;
		}
		s += len;
		if (*s == '/')
			s++;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *second, norm[ROCMD_FS_PATH_MAX], again[ROCMD_FS_PATH_MAX];
	uint8_t op;

	if (size < 1)
		return 0;
	if (sandbox[0] == '\0')
		setup();
	op = data[0];
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	second = text + strlen(text);
	if (second < text + size - 1)
		second++; /* the part after the first NUL */
	switch (op % 4) {
	case 0:
		check_open(text, (op & 0x10) != 0);
		break;
	case 1:
		if ((rocmd_fs_relpath_ok(text) == 0) != model_relpath(text))
			abort();
		break;
	case 2:
		if (rocmd_fs_relpath_ok(text) == 0 &&
		    (rocmd_fs_link_inside(text, second) == 0) != model_inside(text, second))
			abort();
		break;
	default: {
		size_t r = rocmd_fs_path_root(text);
		if (r > strlen(text))
			abort();
		if (rocmd_fs_path_norm(text, norm, sizeof(norm)) == 0) {
			if (memchr(norm, '\0', sizeof(norm)) == NULL ||
			    rocmd_fs_path_norm(norm, again, sizeof(again)) != 0 || strcmp(norm, again) != 0)
				abort();
		}
		break;
	}
	}
	free(text);
	return 0;
}
