/*
 * The rocblas vendor-solution backend (backend.h, vendor.h): rocBLAS's own
 * Tensile solutions for a GEMM, from the librocblas of the target being tuned
 * (dlopen'd with the HIP runtime beside it, never linked).
 *
 * Candidates are what rocblas_gemm_ex_get_solutions (or its strided-batched
 * form) lists for the problem: Tensile solution index + 1 (tensile_host.cpp,
 * getAllSolutions: list_array[i] = solution->index + 1). The same number goes
 * to rocblas_gemm_ex with rocblas_gemm_algo_solution_index, which runs
 * getSolutionByIndex(solution_index - 1), and into the override CSV, whose
 * reader subtracts the same 1 (MasterSolutionLibrary::setOverridesFromFile);
 * SOL 0 is rocblas_gemm_algo_standard, the library's own choice. Values <= 0
 * that a library lists (rocBLAS 4.4's source GEMV entry) are not Tensile
 * solutions and are skipped.
 *
 * fp32 runs in fp32; fp16 and bf16 store in their type and accumulate in
 * fp32 (compute_type f32_r), as PyTorch and llama.cpp call rocBLAS.
 *
 * Status: written against rocBLAS 4.x's C API (rocblas-functions.h,
 * rocblas-beta.h) and tested against tests/fixtures/vendor/standin-rocblas.c
 * only: it has not run on an AMD GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "kernels/backend-hip.h"
#include "kernels/backend.h"
#include "kernels/vendor-hip.h"
#include "kernels/vendor.h"

#define RB_OP_N 111
#define RB_OP_T 112
#define RB_F16 150
#define RB_F32 151
#define RB_BF16 168
#define RB_ALGO_STANDARD 0
#define RB_ALGO_SOLUTION_INDEX 1
#define RB_MAX_LIST 4096

typedef int rb_status;

struct rb_api {
	void *lib;
	rb_status (*create_handle)(void **);
	rb_status (*destroy_handle)(void *);
	rb_status (*version_size)(size_t *);
	rb_status (*version)(char *, size_t);
	rb_status (*gemm_ex)(void *, int, int, int32_t, int32_t, int32_t, const void *,
	                     const void *, int, int32_t, const void *, int, int32_t, const void *,
	                     const void *, int, int32_t, void *, int, int32_t, int, int, int32_t,
	                     uint32_t);
	rb_status (*gemm_sb_ex)(void *, int, int, int32_t, int32_t, int32_t, const void *,
	                        const void *, int, int32_t, int64_t, const void *, int, int32_t,
	                        int64_t, const void *, const void *, int, int32_t, int64_t, void *,
	                        int, int32_t, int64_t, int32_t, int, int, int32_t, uint32_t);
	rb_status (*solutions)(void *, int, int, int32_t, int32_t, int32_t, const void *,
	                       const void *, int, int32_t, const void *, int, int32_t, const void *,
	                       const void *, int, int32_t, void *, int, int32_t, int, int, uint32_t,
	                       int32_t *, int32_t *);
	rb_status (*sb_solutions)(void *, int, int, int32_t, int32_t, int32_t, const void *,
	                          const void *, int, int32_t, int64_t, const void *, int, int32_t,
	                          int64_t, const void *, const void *, int, int32_t, int64_t, void *,
	                          int, int32_t, int64_t, int32_t, int, int, uint32_t, int32_t *,
	                          int32_t *);
};

struct backend_ctx {
	struct vendor_hip hip; /* first: vendor-hip.c's entries of the table */
	struct rb_api api;
	void *handle;
	struct backend_device_info info;
	char source[256];
	uint64_t probe; /* a small buffer for get_solutions' pointer checks */
	struct space_def space;
};

struct backend_module {
	int64_t sol;
};

#ifdef _WIN32
static const char *const rocblas_names[] = {"rocblas.dll", NULL};
#else
static const char *const rocblas_names[] = {"librocblas.so",   "librocblas.so.5",
                                            "librocblas.so.4", "librocblas.so.0", NULL};
#endif

static void
rb_close(struct backend_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->probe != 0)
		vendor_hip_free(ctx, ctx->probe);
	if (ctx->handle != NULL)
		ctx->api.destroy_handle(ctx->handle);
	rocmd_dl_close(ctx->api.lib);
	vendor_hip_close(&ctx->hip);
	free(ctx);
}

#define RLOAD(field, name)                                                                        \
	(*(void **)&ctx->api.field = rocmd_dl_sym(ctx->api.lib, name),                                    \
	 missing = missing || ctx->api.field == NULL)

/* Loads librocblas (and the HIP runtime beside it) into CTX; LIB gets its path. */
static int
rb_load(struct backend_ctx *ctx, const struct backend_open_opts *oo, int index, char *lib,
        size_t liblen, char *why, size_t whylen)
{
	const char *want = oo != NULL ? oo->library : NULL;
	const char *const one[] = {want, NULL};
	char dir[1024] = "", err[320] = "";
	int missing = 0, r;

	if (want != NULL && want[0] != '\0')
		vendor_dirname(want, dir, sizeof(dir));
	else
		backend_hip_sdk_dir(dir, sizeof(dir));
	r = vendor_hip_open(&ctx->hip, dir, index, oo != NULL ? oo->sysroot : NULL, "rocblas",
	                    &ctx->info, why, whylen);
	if (r < 0)
		return r;
	ctx->api.lib = want != NULL && want[0] != '\0'
	                   ? vendor_dlopen(NULL, one, lib, liblen, err, sizeof(err))
	                   : vendor_dlopen(dir, rocblas_names, lib, liblen, err, sizeof(err));
	if (ctx->api.lib == NULL) {
		snprintf(why, whylen, "not available: no rocBLAS (%.300s)", err);
		return ROCMD_EUNSUPPORTED;
	}
	RLOAD(create_handle, "rocblas_create_handle");
	RLOAD(destroy_handle, "rocblas_destroy_handle");
	RLOAD(version_size, "rocblas_get_version_string_size");
	RLOAD(version, "rocblas_get_version_string");
	RLOAD(gemm_ex, "rocblas_gemm_ex");
	RLOAD(gemm_sb_ex, "rocblas_gemm_strided_batched_ex");
	if (missing) {
		snprintf(why, whylen, "not available: %.300s lacks rocblas_gemm_ex", lib);
		return ROCMD_EUNSUPPORTED;
	}
	RLOAD(solutions, "rocblas_gemm_ex_get_solutions");
	RLOAD(sb_solutions, "rocblas_gemm_strided_batched_ex_get_solutions");
	if (missing) {
		snprintf(why, whylen,
		         "not available: %.300s has no rocblas_gemm_ex_get_solutions (rocBLAS "
		         "before 4.0 cannot list its solutions)",
		         lib);
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

static int
rb_open_opts(int index, const struct backend_open_opts *oo, struct backend_ctx **out,
             struct backend_device_info *info, char *why, size_t whylen)
{
	struct backend_ctx *ctx = calloc(1, sizeof(*ctx));
	char version[128] = "?", digest[65];
	size_t vl = 0;
	int r;

	*out = NULL;
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	/* The library measures its own choices: no override, no logging. */
	vendor_child_env(VENDOR_ROCBLAS, oo != NULL ? oo->tensile_dir : NULL);
	r = rb_load(ctx, oo, index, ctx->info.library, sizeof(ctx->info.library), why, whylen);
	if (r < 0)
		goto fail;
	if (ctx->api.create_handle(&ctx->handle) != 0) {
		ctx->handle = NULL;
		snprintf(why, whylen, "not available: rocblas_create_handle failed");
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	if (ctx->api.version_size(&vl) == 0 && vl > 0 && vl <= sizeof(version))
		ctx->api.version(version, sizeof(version));
	snprintf(ctx->info.runtime_version, sizeof(ctx->info.runtime_version), "rocBLAS %.50s",
	         version);
	r = vendor_library_digest(VENDOR_ROCBLAS, ctx->info.library,
	                          oo != NULL ? oo->tensile_dir : NULL, digest, why, whylen);
	if (r < 0)
		goto fail;
	snprintf(ctx->info.library_digest, sizeof(ctx->info.library_digest), "%s", digest);
	snprintf(ctx->source, sizeof(ctx->source), "rocblas %.100s sha256:%s", version, digest);
	if ((r = vendor_hip_alloc(ctx, 4096, &ctx->probe)) < 0) {
		snprintf(why, whylen, "cannot allocate device memory");
		goto fail;
	}
	if (info != NULL)
		*info = ctx->info;
	*out = ctx;
	return 0;
fail:
	rb_close(ctx);
	return r;
}

static int
rb_open(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
        size_t whylen)
{
	return rb_open_opts(index, NULL, out, info, why, whylen);
}

static int
rb_type(enum gemm_dtype dt)
{
	return dt == GEMM_FP16 ? RB_F16 : dt == GEMM_BF16 ? RB_BF16 : RB_F32;
}

static int
fits(const struct gemm_problem *p)
{
	return p->m <= INT32_MAX && p->n <= INT32_MAX && p->k <= INT32_MAX && p->lda <= INT32_MAX &&
	       p->ldb <= INT32_MAX && p->ldc <= INT32_MAX && p->batch <= INT32_MAX;
}

/* The candidate list of P: rocBLAS's solutions that can solve it. */
static const struct space_def *
rb_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	float alpha = p->alpha, beta = p->beta;
	int ta = p->ta == GEMM_T ? RB_OP_T : RB_OP_N, tb = p->tb == GEMM_T ? RB_OP_T : RB_OP_N;
	int t = rb_type(p->dtype);
	void *x = (void *)(uintptr_t)ctx->probe;
	int32_t n = 0, *list = NULL;
	int64_t *sol = NULL;
	int r, k = 0;

	vendor_space(&ctx->space, NULL, 0);
	if (!fits(p))
		return &ctx->space;
	for (int pass = 0; pass < 2; pass++) {
		if (p->batch == 1)
			r = ctx->api.solutions(ctx->handle, ta, tb, (int32_t)p->m, (int32_t)p->n,
			                       (int32_t)p->k, &alpha, x, t, (int32_t)p->lda, x, t,
			                       (int32_t)p->ldb, &beta, x, t, (int32_t)p->ldc, x, t,
			                       (int32_t)p->ldc, RB_F32, RB_ALGO_SOLUTION_INDEX, 0, list,
			                       &n);
		else
			r = ctx->api.sb_solutions(
			    ctx->handle, ta, tb, (int32_t)p->m, (int32_t)p->n, (int32_t)p->k, &alpha, x, t,
			    (int32_t)p->lda, p->stride_a, x, t, (int32_t)p->ldb, p->stride_b, &beta, x, t,
			    (int32_t)p->ldc, p->stride_c, x, t, (int32_t)p->ldc, p->stride_c,
			    (int32_t)p->batch, RB_F32, RB_ALGO_SOLUTION_INDEX, 0, list, &n);
		if (r != 0 || n <= 0)
			break;
		if (pass == 0) {
			if (n > RB_MAX_LIST)
				n = RB_MAX_LIST;
			list = calloc((size_t)n, sizeof(*list));
			if (list == NULL)
				break;
		}
	}
	if (list != NULL && (sol = calloc((size_t)n, sizeof(*sol))) != NULL) {
		for (int i = 0; i < n; i++)
			if (list[i] > 0)
				sol[k++] = list[i];
		vendor_space(&ctx->space, sol, k);
	}
	free(list);
	free(sol);
	return &ctx->space;
}

static const char *
rb_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = strlen(ctx->source);
	return ctx->source;
}

static int
rb_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
           int ndefines, struct backend_module **out, char *log, size_t loglen)
{
	struct backend_module *m;
	int64_t sol;
	int r;

	(void)ctx;
	(void)src;
	(void)len;
	*out = NULL;
	if ((r = vendor_defines_sol(defines, ndefines, &sol, log, loglen)) < 0)
		return r;
	if (sol < 0 || sol > INT32_MAX) {
		snprintf(log, loglen, "not a rocBLAS solution index: %lld", (long long)sol);
		return ROCMD_EINVAL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return ROCMD_ENOMEM;
	m->sol = sol;
	*out = m;
	return 0;
}

static void
rb_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	(void)ctx;
	free(mod);
}

/* One rocblas_gemm_ex (or its strided-batched form) with solution SOL. */
static int
rb_call(struct backend_ctx *ctx, int64_t sol, const struct gemm_problem *p,
        const struct gemm_bufs *bufs)
{
	float alpha = p->alpha, beta = p->beta;
	int ta = p->ta == GEMM_T ? RB_OP_T : RB_OP_N, tb = p->tb == GEMM_T ? RB_OP_T : RB_OP_N;
	int t = rb_type(p->dtype), algo = sol > 0 ? RB_ALGO_SOLUTION_INDEX : RB_ALGO_STANDARD;
	void *a = (void *)(uintptr_t)bufs->a, *b = (void *)(uintptr_t)bufs->b;
	void *c = (void *)(uintptr_t)bufs->c;
	rb_status st;

	if (!fits(p))
		return ROCMD_EINVAL;
	if (p->batch == 1)
		st = ctx->api.gemm_ex(ctx->handle, ta, tb, (int32_t)p->m, (int32_t)p->n,
		                      (int32_t)p->k, &alpha, a, t, (int32_t)p->lda, b, t,
		                      (int32_t)p->ldb, &beta, c, t, (int32_t)p->ldc, c, t,
		                      (int32_t)p->ldc, RB_F32, algo, (int32_t)sol, 0);
	else
		st = ctx->api.gemm_sb_ex(ctx->handle, ta, tb, (int32_t)p->m, (int32_t)p->n,
		                         (int32_t)p->k, &alpha, a, t, (int32_t)p->lda, p->stride_a, b, t,
		                         (int32_t)p->ldb, p->stride_b, &beta, c, t, (int32_t)p->ldc,
		                         p->stride_c, c, t, (int32_t)p->ldc, p->stride_c,
		                         (int32_t)p->batch, RB_F32, algo, (int32_t)sol, 0);
	return st == 0 ? 0 : ROCMD_EIO;
}

static int
rb_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
        const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	(void)cfg;
	return rb_call(ctx, mod->sol, p, bufs);
}

static int
rb_gemm_default(struct backend_ctx *ctx, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	return rb_call(ctx, 0, p, bufs);
}

const struct backend_ops backend_rocblas_ops = {
    .name = "rocblas",
    .open = rb_open,
    .open_opts = rb_open_opts,
    .vendor = 1,
    .close = rb_close,
    .space = rb_space,
    .kernel_source = rb_kernel_source,
    .compile = rb_compile,
    .module_unload = rb_module_unload,
    .kernel_info = NULL,
    .alloc = vendor_hip_alloc,
    .free = vendor_hip_free,
    .copy_h2d = vendor_hip_copy_h2d,
    .copy_d2h = vendor_hip_copy_d2h,
    .launch = NULL,
    .gemm = rb_gemm,
    .gemm_reference = rb_gemm_default,
    .event_create = vendor_hip_event_create,
    .event_destroy = vendor_hip_event_destroy,
    .event_record = vendor_hip_event_record,
    .event_elapsed = vendor_hip_event_elapsed,
    .synchronize = vendor_hip_synchronize,
};
