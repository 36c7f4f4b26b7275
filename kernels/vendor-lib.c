/*
 * A vendor library's identity (see vendor.h): its solution-table folder, the
 * content digest of it and its tables, a cheap fingerprint of their sizes and
 * times, and whether its binary names an environment variable. Portable:
 * the daemon uses it on every platform (daemon/tune/tune-override.c).
 */
#include "kernels/vendor.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"

/* The last separator of PATH (Windows: '\\' too, C:\SDK\bin\rocblas.dll), or NULL. */
static const char *
last_sep(const char *path)
{
	const char *slash = strrchr(path, '/');
#ifdef _WIN32
	const char *back = strrchr(path, '\\');

	if (back != NULL && (slash == NULL || back > slash))
		slash = back;
#endif
	return slash;
}

const char *
vendor_basename(const char *path)
{
	const char *slash = last_sep(path);

	return slash != NULL ? slash + 1 : path;
}

void
vendor_dirname(const char *path, char *out, size_t outlen)
{
	const char *slash = last_sep(path);

#ifdef _WIN32
	if (slash != NULL && slash == path + 2 && path[1] == ':') {
		snprintf(out, outlen, "%.3s", path); /* C:\ */
		return;
	}
#endif
	if (slash == NULL)
		snprintf(out, outlen, ".");
	else if (slash == path)
		snprintf(out, outlen, "/");
	else
		snprintf(out, outlen, "%.*s", (int)(slash - path), path);
}

static int
is_dir(const char *path)
{
	struct rocmd_fsinfo fi;

	return rocmd_fsinfo_get(path, 1, &fi) == 0 && fi.type == ROCMD_FS_DIR;
}

int
vendor_tensile_dir(enum vendor_kind kind, const char *library, const char *tensile_dir,
                   char *out, size_t outlen)
{
	static const char *const rocblas_rel[] = {"../../Tensile/library", "library",
	                                          "../rocblas/library", "rocblas/library", NULL};
	static const char *const hipblaslt_rel[] = {"hipblaslt/library", NULL};
	const char *const *rel = kind == VENDOR_ROCBLAS     ? rocblas_rel
	                         : kind == VENDOR_HIPBLASLT ? hipblaslt_rel
	                                                    : NULL;
	char dir[1024];

	out[0] = '\0';
	if (tensile_dir != NULL && tensile_dir[0] != '\0') {
		snprintf(out, outlen, "%s", tensile_dir);
		return is_dir(out) ? 0 : ROCMD_ENOTFOUND;
	}
	if (rel == NULL || library == NULL)
		return ROCMD_ENOTFOUND;
	vendor_dirname(library, dir, sizeof(dir));
	for (int i = 0; rel[i] != NULL; i++) {
		rocmd_fs_fmt(out, outlen, "%s/%s", dir, rel[i]);
		if (is_dir(out))
			return 0;
	}
	out[0] = '\0';
	return ROCMD_ENOTFOUND;
}

/* A file of the solution tables: what the indices of a build refer to. */
static int
table_file(const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(name, "TensileManifest", 15))
		return 1;
	if (strncmp(name, "TensileLibrary", 14) != 0)
		return 0;
	return (n > 4 && !strcmp(name + n - 4, ".dat")) || (n > 5 && !strcmp(name + n - 5, ".yaml"));
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef int (*table_fn)(void *ctx, const char *rel, const char *path, char *why, size_t whylen);

/* Calls FN for each table file of folder DIR (and, when DEPTH, of its
 * subfolders: the arch folders) in sorted order, named under PREFIX. */
static int
walk_tables(const char *dir, const char *prefix, int depth, table_fn fn, void *ctx, char *why,
            size_t whylen)
{
	struct rocmd_dir *d = rocmd_dir_open(dir);
	struct rocmd_dirent *e;
	char **names = NULL, path[2048], rel[1200];
	size_t n = 0, cap = 0;
	int err = 0;

	if (d == NULL)
		return 0;
	while ((e = rocmd_dir_read(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **g = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*g));

			if (g == NULL) {
				err = ROCMD_ENOMEM;
				break;
			}
			names = g;
		}
		if ((names[n] = strdup(e->d_name)) == NULL) {
			err = ROCMD_ENOMEM;
			break;
		}
		n++;
	}
	rocmd_dir_close(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && err == 0; i++) {
		rocmd_fs_fmt(path, sizeof(path), "%s/%s", dir, names[i]);
		rocmd_fs_fmt(rel, sizeof(rel), "%s%s", prefix, names[i]);
		if (table_file(names[i]))
			err = fn(ctx, rel, path, why, whylen);
		else if (depth > 0 && is_dir(path)) {
			char sub[1200];

			rocmd_fs_fmt(sub, sizeof(sub), "%s/", rel);
			err = walk_tables(path, sub, depth - 1, fn, ctx, why, whylen);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

/* Appends "NAME SIZE SHA256\n" of file PATH to the digest CTX. */
static int
digest_line(void *ctx, const char *name, const char *path, char *why, size_t whylen)
{
	uint8_t d[ROCMD_SHA256_LEN];
	char hex[ROCMD_SHA256_HEX], line[1400];
	uint64_t size = 0;
	int err, n;

	if ((err = rocmd_sha256_file(path, d, &size)) < 0) {
		snprintf(why, whylen, "cannot read %.900s", path);
		return err;
	}
	rocmd_sha256_hex(d, hex);
	n = snprintf(line, sizeof(line), "%s %" PRIu64 " %s\n", name, size, hex);
	return rocmd_sha256_update(ctx, line, n > 0 ? (size_t)n : 0);
}

/* Folds "NAME SIZE MTIME" of file PATH into the FNV-1a hash CTX. */
static int
stat_line(void *ctx, const char *name, const char *path, char *why, size_t whylen)
{
	uint64_t *h = ctx;
	struct rocmd_fsinfo fi;
	char line[1400];
	int n;

	if (rocmd_fsinfo_get(path, 1, &fi) < 0) {
		snprintf(why, whylen, "cannot read %.900s", path);
		return ROCMD_ENOTFOUND;
	}
	n = snprintf(line, sizeof(line), "%s %" PRIu64 " %" PRId64 "\n", name, fi.size,
	             fi.mtime_ns);
	for (int i = 0; i < n; i++) {
		*h ^= (unsigned char)line[i];
		*h *= 0x100000001b3ULL;
	}
	return 0;
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

int
vendor_library_stat(enum vendor_kind kind, const char *library, const char *tensile_dir,
                    char out[17], char *why, size_t whylen)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char dir[1024];
	int err;

	out[0] = '\0';
	err = stat_line(&h, base_name(library), library, why, whylen);
	if (err == 0 && vendor_tensile_dir(kind, library, tensile_dir, dir, sizeof(dir)) == 0)
		err = walk_tables(dir, "", 1, stat_line, &h, why, whylen);
	if (err == 0)
		snprintf(out, 17, "%016" PRIx64, h);
	return err;
}

int
vendor_library_digest(enum vendor_kind kind, const char *library, const char *tensile_dir,
                      char hex[65], char *why, size_t whylen)
{
	static const char *const kinds[] = {"rocblas", "hipblaslt", "cublaslt"};
	struct rocmd_sha256 *h = NULL;
	uint8_t d[ROCMD_SHA256_LEN];
	char dir[1024], head[64];
	int err, n;

	hex[0] = '\0';
	if ((err = rocmd_sha256_new(&h)) < 0)
		return err;
	n = snprintf(head, sizeof(head), "rocmd-vendor-digest 1 %s\n", kinds[kind]);
	err = rocmd_sha256_update(h, head, (size_t)n);
	if (err == 0)
		err = digest_line(h, base_name(library), library, why, whylen);
	if (err == 0 && vendor_tensile_dir(kind, library, tensile_dir, dir, sizeof(dir)) == 0)
		err = walk_tables(dir, "", 1, digest_line, h, why, whylen);
	if (err < 0) {
		rocmd_sha256_free(h);
		return err;
	}
	if ((err = rocmd_sha256_final(h, d)) < 0)
		return err;
	rocmd_sha256_hex(d, hex);
	return 0;
}

int
vendor_binary_has_string(const char *library, const char *name)
{
	FILE *f = rocmd_fs_fopen(library, "rb");
	size_t nl = strlen(name), have = 0, got;
	char buf[1 << 16];
	int found = 0;

	if (f == NULL)
		return -errno;
	if (nl == 0 || nl >= sizeof(buf) / 2) {
		fclose(f);
		return ROCMD_EINVAL;
	}
	/* Keep the last NL-1 bytes of each block: a match may straddle two. */
	while (!found && (got = fread(buf + have, 1, sizeof(buf) - have, f)) > 0) {
		size_t len = have + got;

		for (size_t i = 0; i + nl <= len && !found; i++)
			found = buf[i] == name[0] && memcmp(buf + i, name, nl) == 0;
		have = len < nl - 1 ? len : nl - 1;
		memmove(buf, buf + len - have, have);
	}
	fclose(f);
	return found;
}


int
vendor_problem_key(const struct gemm_problem *p, char *buf, size_t len)
{
	struct gemm_problem t;
	size_t o;
	int n;

	if (gemm_problem_key(p, buf, len) < 0)
		return ROCMD_EINVAL;
	gemm_problem_init(&t, p->dtype, p->ta, p->tb, p->m, p->n, p->k, p->batch);
	o = strlen(buf);
	if (p->lda != t.lda || p->ldb != t.ldb || p->ldc != t.ldc) {
		n = snprintf(buf + o, len - o, "@ld=%" PRId64 ".%" PRId64 ".%" PRId64, p->lda, p->ldb,
		             p->ldc);
		if (n < 0 || (size_t)n >= len - o)
			return ROCMD_EINVAL;
		o += (size_t)n;
	}
	if (p->batch > 1 && (p->stride_a != p->lda * gemm_cols_a(p) ||
	                     p->stride_b != p->ldb * gemm_cols_b(p) ||
	                     p->stride_c != p->ldc * p->n)) {
		n = snprintf(buf + o, len - o, "@st=%" PRId64 ".%" PRId64 ".%" PRId64, p->stride_a,
		             p->stride_b, p->stride_c);
		if (n < 0 || (size_t)n >= len - o)
			return ROCMD_EINVAL;
		o += (size_t)n;
	}
	if (p->beta != 0.0f) {
		n = snprintf(buf + o, len - o, "@beta=%g", (double)p->beta);
		if (n < 0 || (size_t)n >= len - o)
			return ROCMD_EINVAL;
	}
	return 0;
}
