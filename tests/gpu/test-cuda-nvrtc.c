/*
 * Compiles the GEMM kernel source through NVRTC for sm_80 and sm_90 with no
 * GPU and no driver: every code path (FMA in fp32/fp16/bf16, its cp.async
 * variant in fp32, GEMV in
 * fp32/fp16/bf16, mma.sync in fp16/bf16, wgmma in fp16/bf16 for sm_90a,
 * split-K) under all four
 * transposes, and the default configuration of every shape class. Exits 77 (skipped) when NVRTC is not installed, saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "kernels/backend-cuda.h"

static const char *const configs[] = {
    "MC=0 MT0=64 MT1=64 DU=8 TT0=4 TT1=4 VW=1 PGR=1 LDSPAD=0 GSU=1",
    "MC=0 MT0=128 MT1=128 DU=8 TT0=8 TT1=8 VW=4 PGR=1 LDSPAD=4 GSU=1 GROUP=8",
    "MC=0 MT0=32 MT1=64 DU=16 TT0=2 TT1=4 VW=2 PGR=0 LDSPAD=0 GSU=4",
    "MC=0 MT0=128 MT1=256 DU=8 TT0=16 TT1=8 VW=4 PGR=1 LDSPAD=4 GSU=1 GROUP=8 MINB=1",
    "MC=0 MT0=256 MT1=128 DU=16 TT0=8 TT1=16 VW=4 PGR=2 STAGES=3 LDSPAD=0 PLR=1 GROUP=8",
    "MC=0 MT0=64 MT1=64 DU=8 TT0=4 TT1=4 VW=4 PGR=1 PLR=2 GSU=2",
    "MC=0 MT0=256 MT1=128 DU=16 TT0=8 TT1=16 VW=4 PGR=2 STAGES=2 LDSPAD=4 GROUP=8 SK=1",
    /* GEMV path (GV=1) */
    "MC=0 GV=1 MT0=4 MT1=32 TT1=4 DU=8 VW=4 GSU=1",
    "MC=0 GV=1 MT0=8 MT1=64 TT1=2 DU=16 VW=2 GSU=4",
    "MC=1 MT0=128 MT1=128 DU=32 WM=2 WN=2 STAGES=3 SWZ=1 GSU=1",
    "MC=1 MT0=64 MT1=256 DU=64 WM=1 WN=4 STAGES=4 SWZ=0 LDSPAD=8 GSU=2 GROUP=4",
    "MC=1 MT0=16 MT1=64 DU=32 WM=1 WN=2 STAGES=5 SWZ=1 GSU=8",
    /* wgmma (sm_90a): compiled for sm_90 only, all four transposes */
    "MC=2 MT0=128 MT1=128 DU=64 WM=1 WN=2 STAGES=4 SWZ=1 GSU=1",
    "MC=2 MT0=256 MT1=128 DU=64 WM=1 WN=2 STAGES=3 SWZ=1 GSU=2 GROUP=8",
    "MC=2 MT0=64 MT1=64 DU=64 WM=1 WN=1 STAGES=5 SWZ=1 GSU=1",
};

static int
split(const char *cfg, char store[][40], const char **defs, const char *extra[3])
{
	char buf[256], *save = NULL, *tok;
	int n = 0, i;

	snprintf(buf, sizeof(buf), "%s", cfg);
	for (tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		snprintf(store[n], 40, "%s", tok);
		defs[n] = store[n];
		n++;
	}
	for (i = 0; i < 3; i++) {
		snprintf(store[n], 40, "%s", extra[i]);
		defs[n] = store[n];
		n++;
	}
	return n;
}

/*
 * The default configuration of every shape class (backend_cuda_space_dev:
 * what an untuned problem runs) compiles, on sm_90 and sm_80: one problem a
 * class, its layout as the programs call it. Returns the failures.
 */
static int
class_defaults(const char *src, size_t len, int *done)
{
	static const struct {
		enum gemm_dtype dt;
		const char *op;
		int64_t m, n, k, lda_pad;
	} cls[] = {
	    {GEMM_FP32, "TN", 1, 4096, 4096, 0},    {GEMM_FP16, "TN", 1, 4096, 4096, 0},
	    {GEMM_BF16, "TN", 64, 4096, 4096, 0},   {GEMM_FP32, "TN", 16, 4096, 14336, 0},
	    {GEMM_FP32, "NN", 4096, 16, 4096, 0},   {GEMM_FP16, "TN", 128, 4096, 4096, 0},
	    {GEMM_BF16, "TN", 512, 4096, 4096, 0},  {GEMM_FP16, "NN", 4096, 4096, 4096, 0},
	    {GEMM_FP32, "TN", 128, 4096, 4096, 0},  {GEMM_FP32, "NN", 1000, 1000, 1000, 0},
	    {GEMM_FP16, "NN", 1, 4096, 4096, 0},    {GEMM_FP16, "NN", 333, 4096, 4096, 0},
	    {GEMM_BF16, "NN", 3333, 2222, 1111, 0}, {GEMM_FP32, "NN", 200, 200, 200, 0},
	};
	static const char *const archs[] = {"sm_90", "sm_80"};
	int failed = 0;
	size_t a, c;

	for (a = 0; a < 2; a++) {
		struct backend_ctx *ctx = NULL;
		char why[256], log[8192];

		if (backend_cuda_open_nvrtc(archs[a], &ctx, why, sizeof(why)) < 0)
			return 1;
		for (c = 0; c < sizeof(cls) / sizeof(cls[0]); c++) {
			char store[SPACE_MAX_PARAMS][40], key[SPACE_KEY_MAX];
			const char *defs[SPACE_MAX_PARAMS];
			struct gemm_problem p;
			struct space_def sd;
			struct space_point pt;
			char *cubin = NULL;
			size_t clen = 0;
			int n, r;

			gemm_problem_init(&p, cls[c].dt, cls[c].op[0] == 'T' ? GEMM_T : GEMM_N,
			                  cls[c].op[1] == 'T' ? GEMM_T : GEMM_N, cls[c].m, cls[c].n,
			                  cls[c].k, 1);
			backend_cuda_space_dev(&sd, &p, a == 0 ? 2 : 1, a == 0 ? 132 : 108, 0);
			space_point_default(&sd, &pt);
			space_key(&sd, &pt, key, sizeof(key));
			n = space_defines(&sd, &pt, store, defs);
			r = backend_cuda_nvrtc(ctx, src, len, defs, n, &cubin, &clen, log, sizeof(log));
			(*done)++;
			if (r < 0 || clen == 0) {
				failed++;
				printf("FAIL class default %s %s:\n%s\n", archs[a], key, log);
			} else {
				printf("ok   class default %s %s %lldx%lldx%lld: %s\n", archs[a],
				       cls[c].op, (long long)p.m, (long long)p.n, (long long)p.k, key);
			}
			free(cubin);
		}
		backend_cuda_close_nvrtc(ctx);
	}
	return failed;
}

int
main(void)
{
	static const char *const archs[] = {"sm_80", "sm_90"};
	static const char *const dts[] = {"DT=0", "DT=1", "DT=2"};
	static const char *const tas[] = {"TA=0", "TA=1"};
	char why[256], log[8192];
	size_t len = 0;
	char *src = backend_cuda_source(&len);
	int failed = 0, done = 0;
	size_t a, c, d, t;

	if (src == NULL)
		return 1;
	for (a = 0; a < 2; a++) {
		struct backend_ctx *ctx = NULL;
		int r = backend_cuda_open_nvrtc(archs[a], &ctx, why, sizeof(why));

		if (r == ROCMD_EUNSUPPORTED) {
			printf("SKIP: %s\n", why);
			free(src);
			return 77;
		}
		if (r < 0) {
			printf("FAIL: %s\n", why);
			return 1;
		}
		for (c = 0; c < sizeof(configs) / sizeof(configs[0]); c++)
			for (d = 0; d < 3; d++)
				for (t = 0; t < 4; t++) {
					char store[SPACE_MAX_PARAMS][40];
					const char *defs[SPACE_MAX_PARAMS];
					const char *extra[3] = {dts[d], tas[t & 1],
					                        t & 2 ? "TB=1" : "TB=0"};
					char *cubin = NULL;
					size_t clen = 0;
					struct timespec t0, t1;
					int n;

					int wg = strstr(configs[c], "MC=2") != NULL;

					if ((wg || strstr(configs[c], "MC=1")) && d == 0)
						continue; /* no TF32: fp32 stays on FMA */
					if (strstr(configs[c], "PGR=2") && d != 0)
						continue; /* cp.async copies fp32 as it is */
					if (wg && a == 0)
						continue; /* wgmma is sm_90a only */
					/* Every config in every dtype, transposes on the first arch
					 * only (wgmma's on sm_90). */
					if (a == 1 && t != 0 && !wg)
						continue;
					n = split(configs[c], store, defs, extra);
					clock_gettime(CLOCK_MONOTONIC, &t0);
					r = backend_cuda_nvrtc(ctx, src, len, defs, n, &cubin,
					                       &clen, log, sizeof(log));
					clock_gettime(CLOCK_MONOTONIC, &t1);
					done++;
					if (r < 0 || clen == 0) {
						failed++;
						printf("FAIL %s %s %s %s %s:\n%s\n", archs[a],
						       configs[c], extra[0], extra[1], extra[2],
						       log);
					} else {
						printf(
						    "ok   %s %-70s %s %s %s  %zu bytes, %.2f s\n",
						    archs[a], configs[c], extra[0], extra[1],
						    extra[2], clen,
						    (t1.tv_sec - t0.tv_sec) +
						        (t1.tv_nsec - t0.tv_nsec) / 1e9);
					}
					free(cubin);
				}
		backend_cuda_close_nvrtc(ctx);
	}
	failed += class_defaults(src, len, &done);
	free(src);
	printf("%d of %d compilations failed\n", failed, done);
	return failed ? 1 : 0;
}
