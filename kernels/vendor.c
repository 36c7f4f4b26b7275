/*
 * What the vendor-solution backends share (see vendor.h): the candidate
 * space, the library digest, the evaluation process's environment and
 * loading a library from its target's folder.
 */
#include "kernels/vendor.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/hash.h"

void
vendor_space(struct space_def *out, const int64_t *sol, int n)
{
	struct space_param *sp = &out->params[0];

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", VENDOR_SPACE_NAME);
	out->nparams = 1;
	snprintf(sp->name, sizeof(sp->name), "SOL");
	sp->values[sp->nvalues++] = 0;
	for (int i = 0; i < n && sp->nvalues < SPACE_MAX_VALUES; i++) {
		int dup = sol[i] == 0;

		for (int j = 0; j < sp->nvalues && !dup; j++)
			dup = sp->values[j] == sol[i];
		if (!dup)
			sp->values[sp->nvalues++] = sol[i];
	}
	sp->dflt = 0;
	out->check = NULL;
}

int64_t
vendor_config_sol(const struct tune_config *cfg)
{
	return tune_config_get(cfg, "SOL", 0);
}

int
vendor_defines_sol(const char *const *defines, int ndefines, int64_t *sol, char *log,
                   size_t loglen)
{
	char *end;

	*sol = 0;
	for (int i = 0; i < ndefines; i++) {
		if (strncmp(defines[i], "SOL=", 4) != 0)
			continue;
		errno = 0;
		*sol = strtoll(defines[i] + 4, &end, 10);
		if (errno != 0 || *end != '\0' || end == defines[i] + 4) {
			snprintf(log, loglen, "bad solution %s", defines[i]);
			return ROCMD_EINVAL;
		}
		return 0;
	}
	snprintf(log, loglen, "no SOL in the configuration");
	return ROCMD_EINVAL;
}

void
vendor_dirname(const char *path, char *out, size_t outlen)
{
	const char *slash = strrchr(path, '/');

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

/* Appends "NAME SIZE SHA256\n" of file PATH to H. */
static int
digest_line(struct rocmd_sha256 *h, const char *name, const char *path, char *why, size_t whylen)
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
	return rocmd_sha256_update(h, line, n > 0 ? (size_t)n : 0);
}

/* The table files of folder DIR (and, when DEPTH, of its subfolders: the
 * arch folders), sorted, appended to H under PREFIX. */
static int
digest_tables(struct rocmd_sha256 *h, const char *dir, const char *prefix, int depth, char *why,
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
			err = digest_line(h, rel, path, why, whylen);
		else if (depth > 0 && is_dir(path)) {
			char sub[1200];

			rocmd_fs_fmt(sub, sizeof(sub), "%s/", rel);
			err = digest_tables(h, path, sub, depth - 1, why, whylen);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
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
	const char *base = strrchr(library, '/');
	int err, n;

	hex[0] = '\0';
	if ((err = rocmd_sha256_new(&h)) < 0)
		return err;
	n = snprintf(head, sizeof(head), "rocmd-vendor-digest 1 %s\n", kinds[kind]);
	err = rocmd_sha256_update(h, head, (size_t)n);
	if (err == 0)
		err = digest_line(h, base != NULL ? base + 1 : library, library, why, whylen);
	if (err == 0 && vendor_tensile_dir(kind, library, tensile_dir, dir, sizeof(dir)) == 0)
		err = digest_tables(h, dir, "", 1, why, whylen);
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

void
vendor_child_env(enum vendor_kind kind, const char *tensile_dir)
{
	static const char *const unset[] = {
	    "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH", "HIPBLASLT_TUNING_OVERRIDE_FILE",
	    "HIPBLASLT_TUNING_FILE", "ROCBLAS_LAYER", "ROCBLAS_LOG_BENCH_PATH",
	    "ROCBLAS_LOG_TRACE_PATH", "ROCBLAS_LOG_PROFILE_PATH", "HIPBLASLT_LOG_MASK",
	    "HIPBLASLT_LOG_LEVEL", "HIPBLASLT_LOG_FILE", "TENSILE_SOLUTION_INDEX",
	    "CUBLASLT_LOG_LEVEL", "CUBLASLT_LOG_MASK", NULL};

	for (int i = 0; unset[i] != NULL; i++)
		unsetenv(unset[i]);
	if (tensile_dir != NULL && tensile_dir[0] != '\0') {
		if (kind == VENDOR_ROCBLAS)
			setenv("ROCBLAS_TENSILE_LIBPATH", tensile_dir, 1);
		else if (kind == VENDOR_HIPBLASLT)
			setenv("HIPBLASLT_TENSILE_LIBPATH", tensile_dir, 1);
	}
}

void *
vendor_dlopen(const char *dir, const char *const *names, char *path, size_t pathlen, char *why,
              size_t whylen)
{
	char buf[1200], first[300] = "";
	void *h;

	for (int pass = dir != NULL && dir[0] ? 0 : 1; pass < 2; pass++) {
		for (int i = 0; names[i] != NULL; i++) {
			if (pass == 0)
				rocmd_fs_fmt(buf, sizeof(buf), "%s/%s", dir, names[i]);
			else
				snprintf(buf, sizeof(buf), "%s", names[i]);
			h = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
			if (h != NULL) {
				struct link_map *lm = NULL;

				/* The file the loader found, for a name it searched for. */
				if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
				    lm->l_name != NULL && lm->l_name[0] == '/')
					snprintf(path, pathlen, "%s", lm->l_name);
				else
					snprintf(path, pathlen, "%s", buf);
				return h;
			}
			if (first[0] == '\0')
				snprintf(first, sizeof(first), "%.290s", dlerror());
		}
	}
	snprintf(why, whylen, "%s", first);
	return NULL;
}
