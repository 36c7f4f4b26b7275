/*
 * What the vendor-solution backends share (see vendor.h): the candidate
 * space, the evaluation process's environment and loading a library from its
 * target's folder. The library's identity (digest, fingerprint, Tensile
 * folder) is vendor-lib.c's, which every platform builds.
 */
#include "kernels/vendor.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "common/fs.h"

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
	char buf[1200], first[300] = "", err[1024];
	void *h;

	for (int pass = dir != NULL && dir[0] ? 0 : 1; pass < 2; pass++) {
		for (int i = 0; names[i] != NULL; i++) {
			if (pass == 0)
				rocmd_fs_fmt(buf, sizeof(buf), "%s/%s", dir, names[i]);
			else
				snprintf(buf, sizeof(buf), "%s", names[i]);
			h = rocmd_dl_open(buf, err, sizeof(err));
			if (h != NULL) {
				/* The file the loader found, for a name it searched for. */
				rocmd_dl_path(h, path, pathlen);
				if (path[0] == '\0')
					snprintf(path, pathlen, "%s", buf);
				return h;
			}
			if (first[0] == '\0')
				snprintf(first, sizeof(first), "%.290s", err);
		}
	}
	snprintf(why, whylen, "%s", first);
	return NULL;
}
