/*
 * The hipblaslt vendor-solution backend (backend.h, vendor.h): hipBLASLt's
 * own solutions for a GEMM, from the libhipblaslt of the target being tuned
 * (dlopen'd with the HIP runtime beside it, never linked).
 *
 * Candidates are what hipblasLtMatmulAlgoGetHeuristic returns when asked for
 * many (hipBLASLt ranks its heuristic's choices first and, when more are
 * requested, appends every solution that can solve the problem: the C API's
 * form of hipblaslt_ext::getAllAlgos), in that order. A candidate is its
 * solution index, the first int of hipblasLtMatmulAlgo_t.data
 * (hipblaslt_ext::getIndexFromAlgo); SOL holds index + 1 so that 0 stays the
 * library's own choice, the heuristic's first, which is not listed again.
 * Only what the library listed for the problem is run (a seed from an earlier
 * run that it no longer lists is not a point of the space). D is C (in
 * place), alpha and beta fp32 on the host,
 * compute type HIPBLAS_COMPUTE_32F, a 32 MiB workspace.
 *
 * Status: written against hipBLASLt's C API (hipblaslt.h, ROCm 6.x) and
 * tested against tests/fixtures/vendor/standin-hipblaslt.c only: it has not
 * run on an AMD GPU.
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

#define LT_R_32F 0
#define LT_R_16F 2
#define LT_R_16BF 14
#define LT_COMPUTE_32F 2
#define LT_OP_N 111
#define LT_OP_T 112
#define LT_DESC_TRANSA 0
#define LT_DESC_TRANSB 1
#define LT_LAYOUT_BATCH_COUNT 0
#define LT_LAYOUT_STRIDED_BATCH_OFFSET 1
#define LT_PREF_MAX_WORKSPACE_BYTES 1
#define LT_WORKSPACE (32u << 20)
#define LT_REQUEST SPACE_MAX_VALUES

typedef int lt_status;

struct lt_algo { /* hipblasLtMatmulAlgo_t */
	uint8_t data[16];
	size_t max_workspace_bytes;
};

struct lt_result { /* hipblasLtMatmulHeuristicResult_t */
	struct lt_algo algo;
	size_t workspace;
	lt_status state;
	float waves;
	int reserved[4];
};

struct lt_api {
	void *lib;
	lt_status (*create)(void **);
	lt_status (*destroy)(void *);
	lt_status (*version)(void *, int *);
	lt_status (*desc_create)(void **, int, int);
	lt_status (*desc_destroy)(void *);
	lt_status (*desc_set)(void *, int, const void *, size_t);
	lt_status (*layout_create)(void **, int, uint64_t, uint64_t, int64_t);
	lt_status (*layout_destroy)(void *);
	lt_status (*layout_set)(void *, int, const void *, size_t);
	lt_status (*pref_create)(void **);
	lt_status (*pref_destroy)(void *);
	lt_status (*pref_set)(void *, int, const void *, size_t);
	lt_status (*heuristic)(void *, void *, void *, void *, void *, void *, void *, int,
	                       struct lt_result *, int *);
	lt_status (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
	                    const void *, const void *, void *, void *, void *,
	                    const struct lt_algo *, void *, size_t, void *);
};

struct cand {
	int64_t sol;
	struct lt_algo algo;
};

struct backend_ctx {
	struct vendor_hip hip; /* first: vendor-hip.c's entries of the table */
	struct lt_api api;
	void *handle, *desc, *la, *lb, *lc, *pref;
	uint64_t ws;
	struct cand cand[LT_REQUEST];
	int ncand;
	struct backend_device_info info;
	char source[256];
	struct space_def space;
};

struct backend_module {
	int64_t sol;
};

#ifdef _WIN32
static const char *const lt_names[] = {"hipblaslt.dll", "libhipblaslt.dll", NULL};
#else
static const char *const lt_names[] = {"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0",
                                       NULL};
#endif

static void
lt_descs_free(struct backend_ctx *ctx)
{
	void **l[] = {&ctx->la, &ctx->lb, &ctx->lc};

	for (int i = 0; i < 3; i++)
		if (*l[i] != NULL) {
			ctx->api.layout_destroy(*l[i]);
			*l[i] = NULL;
		}
	if (ctx->desc != NULL) {
		ctx->api.desc_destroy(ctx->desc);
		ctx->desc = NULL;
	}
	ctx->ncand = 0;
}

static void
lt_close(struct backend_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->api.lib != NULL) {
		lt_descs_free(ctx);
		if (ctx->pref != NULL)
			ctx->api.pref_destroy(ctx->pref);
		if (ctx->handle != NULL)
			ctx->api.destroy(ctx->handle);
	}
	if (ctx->ws != 0)
		vendor_hip_free(ctx, ctx->ws);
	rocmd_dl_close(ctx->api.lib);
	vendor_hip_close(&ctx->hip);
	free(ctx);
}

#define LLOAD(field, name)                                                                        \
	(*(void **)&ctx->api.field = rocmd_dl_sym(ctx->api.lib, name),                                    \
	 missing = missing || ctx->api.field == NULL)

static int
lt_load(struct backend_ctx *ctx, const struct backend_open_opts *oo, int index, char *why,
        size_t whylen)
{
	const char *want = oo != NULL ? oo->library : NULL;
	const char *const one[] = {want, NULL};
	char dir[1024] = "", err[320] = "";
	int missing = 0, r;

	if (want != NULL && want[0] != '\0')
		vendor_dirname(want, dir, sizeof(dir));
	else
		backend_hip_sdk_dir(dir, sizeof(dir));
	r = vendor_hip_open(&ctx->hip, dir, index, oo != NULL ? oo->sysroot : NULL, "hipblaslt",
	                    &ctx->info, why, whylen);
	if (r < 0)
		return r;
	ctx->api.lib = want != NULL && want[0] != '\0'
	                   ? vendor_dlopen(NULL, one, ctx->info.library, sizeof(ctx->info.library),
	                                   err, sizeof(err))
	                   : vendor_dlopen(dir, lt_names, ctx->info.library,
	                                   sizeof(ctx->info.library), err, sizeof(err));
	if (ctx->api.lib == NULL) {
		snprintf(why, whylen, "not available: no hipBLASLt (%.300s)", err);
		return ROCMD_EUNSUPPORTED;
	}
	LLOAD(create, "hipblasLtCreate");
	LLOAD(destroy, "hipblasLtDestroy");
	LLOAD(version, "hipblasLtGetVersion");
	LLOAD(desc_create, "hipblasLtMatmulDescCreate");
	LLOAD(desc_destroy, "hipblasLtMatmulDescDestroy");
	LLOAD(desc_set, "hipblasLtMatmulDescSetAttribute");
	LLOAD(layout_create, "hipblasLtMatrixLayoutCreate");
	LLOAD(layout_destroy, "hipblasLtMatrixLayoutDestroy");
	LLOAD(layout_set, "hipblasLtMatrixLayoutSetAttribute");
	LLOAD(pref_create, "hipblasLtMatmulPreferenceCreate");
	LLOAD(pref_destroy, "hipblasLtMatmulPreferenceDestroy");
	LLOAD(pref_set, "hipblasLtMatmulPreferenceSetAttribute");
	LLOAD(heuristic, "hipblasLtMatmulAlgoGetHeuristic");
	LLOAD(matmul, "hipblasLtMatmul");
	if (missing) {
		snprintf(why, whylen, "not available: %.300s lacks a hipBLASLt entry point",
		         ctx->info.library);
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

static int
lt_open_opts(int index, const struct backend_open_opts *oo, struct backend_ctx **out,
             struct backend_device_info *info, char *why, size_t whylen)
{
	struct backend_ctx *ctx = calloc(1, sizeof(*ctx));
	uint64_t wsb = LT_WORKSPACE;
	char digest[65];
	int r, v = 0;

	*out = NULL;
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	vendor_child_env(VENDOR_HIPBLASLT, oo != NULL ? oo->tensile_dir : NULL);
	if ((r = lt_load(ctx, oo, index, why, whylen)) < 0)
		goto fail;
	if (ctx->api.create(&ctx->handle) != 0 || ctx->api.pref_create(&ctx->pref) != 0 ||
	    ctx->api.pref_set(ctx->pref, LT_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb)) != 0) {
		snprintf(why, whylen, "not available: hipblasLtCreate failed");
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	ctx->api.version(ctx->handle, &v);
	snprintf(ctx->info.runtime_version, sizeof(ctx->info.runtime_version), "hipBLASLt %d", v);
	r = vendor_library_digest(VENDOR_HIPBLASLT, ctx->info.library,
	                          oo != NULL ? oo->tensile_dir : NULL, digest, why, whylen);
	if (r < 0)
		goto fail;
	snprintf(ctx->info.library_digest, sizeof(ctx->info.library_digest), "%s", digest);
	snprintf(ctx->source, sizeof(ctx->source), "hipblaslt %d sha256:%s", v, digest);
	if ((r = vendor_hip_alloc(ctx, LT_WORKSPACE, &ctx->ws)) < 0) {
		snprintf(why, whylen, "cannot allocate the workspace");
		goto fail;
	}
	if (info != NULL)
		*info = ctx->info;
	*out = ctx;
	return 0;
fail:
	lt_close(ctx);
	return r;
}

static int
lt_open(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
        size_t whylen)
{
	return lt_open_opts(index, NULL, out, info, why, whylen);
}

static int
lt_type(enum gemm_dtype dt)
{
	return dt == GEMM_FP16 ? LT_R_16F : dt == GEMM_BF16 ? LT_R_16BF : LT_R_32F;
}

/* One matrix layout: ROWS x COLS with LD, and the batch. */
static int
lt_layout(struct backend_ctx *ctx, void **out, int type, int64_t rows, int64_t cols, int64_t ld,
          int64_t batch, int64_t stride)
{
	int32_t nb = (int32_t)batch;

	if (ctx->api.layout_create(out, type, (uint64_t)rows, (uint64_t)cols, ld) != 0) {
		*out = NULL;
		return ROCMD_EINVAL;
	}
	if (batch > 1 &&
	    (ctx->api.layout_set(*out, LT_LAYOUT_BATCH_COUNT, &nb, sizeof(nb)) != 0 ||
	     ctx->api.layout_set(*out, LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)) != 0))
		return ROCMD_EINVAL;
	return 0;
}

/* The descriptors of P, kept for its GEMMs. */
static int
lt_describe(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	int32_t ta = p->ta == GEMM_T ? LT_OP_T : LT_OP_N, tb = p->tb == GEMM_T ? LT_OP_T : LT_OP_N;
	int t = lt_type(p->dtype);

	lt_descs_free(ctx);
	if (p->batch > INT32_MAX || ctx->api.desc_create(&ctx->desc, LT_COMPUTE_32F, LT_R_32F) != 0) {
		ctx->desc = NULL;
		return ROCMD_EINVAL;
	}
	if (ctx->api.desc_set(ctx->desc, LT_DESC_TRANSA, &ta, sizeof(ta)) != 0 ||
	    ctx->api.desc_set(ctx->desc, LT_DESC_TRANSB, &tb, sizeof(tb)) != 0)
		return ROCMD_EINVAL;
	if (lt_layout(ctx, &ctx->la, t, gemm_rows_a(p), gemm_cols_a(p), p->lda, p->batch,
	              p->stride_a) < 0 ||
	    lt_layout(ctx, &ctx->lb, t, gemm_rows_b(p), gemm_cols_b(p), p->ldb, p->batch,
	              p->stride_b) < 0 ||
	    lt_layout(ctx, &ctx->lc, t, p->m, p->n, p->ldc, p->batch, p->stride_c) < 0)
		return ROCMD_EINVAL;
	return 0;
}

static const struct space_def *
lt_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	struct lt_result *res = calloc(LT_REQUEST, sizeof(*res));
	int64_t sol[LT_REQUEST];
	int n = 0, k = 0;

	vendor_space(&ctx->space, NULL, 0);
	if (res == NULL || lt_describe(ctx, p) < 0 ||
	    ctx->api.heuristic(ctx->handle, ctx->desc, ctx->la, ctx->lb, ctx->lc, ctx->lc, ctx->pref,
	                       LT_REQUEST, res, &n) != 0)
		n = 0;
	for (int i = 0; i < n && i < LT_REQUEST; i++) {
		int32_t index;

		if (res[i].state != 0)
			continue;
		memcpy(&index, res[i].algo.data, sizeof(index));
		if (index < 0)
			continue;
		ctx->cand[ctx->ncand].sol = (int64_t)index + 1;
		ctx->cand[ctx->ncand].algo = res[i].algo;
		/* The first is the default (SOL 0): not listed a second time. */
		if (ctx->ncand > 0)
			sol[k++] = (int64_t)index + 1;
		ctx->ncand++;
	}
	vendor_space(&ctx->space, sol, k);
	free(res);
	return &ctx->space;
}

static const char *
lt_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = strlen(ctx->source);
	return ctx->source;
}

static int
lt_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
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
	if (sol < 0 || sol > (int64_t)INT32_MAX + 1) {
		snprintf(log, loglen, "not a hipBLASLt solution: %lld", (long long)sol);
		return ROCMD_EINVAL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return ROCMD_ENOMEM;
	m->sol = sol;
	*out = m;
	return 0;
}

static void
lt_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	(void)ctx;
	free(mod);
}

static int
lt_call(struct backend_ctx *ctx, int64_t sol, const struct gemm_problem *p,
        const struct gemm_bufs *bufs)
{
	float alpha = p->alpha, beta = p->beta;
	struct lt_algo algo;
	void *c = (void *)(uintptr_t)bufs->c;
	int i;

	(void)p;
	if (ctx->desc == NULL || ctx->ncand == 0)
		return ROCMD_EINVAL;
	for (i = 0; sol != 0 && i < ctx->ncand && ctx->cand[i].sol != sol; i++)
		;
	if (i == ctx->ncand)
		return ROCMD_EINVAL;
	algo = ctx->cand[i].algo;
	return ctx->api.matmul(ctx->handle, ctx->desc, &alpha, (void *)(uintptr_t)bufs->a, ctx->la,
	                       (void *)(uintptr_t)bufs->b, ctx->lb, &beta, c, ctx->lc, c, ctx->lc,
	                       &algo, (void *)(uintptr_t)ctx->ws, LT_WORKSPACE, NULL) == 0
	           ? 0
	           : ROCMD_EIO;
}

static int
lt_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
        const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	(void)cfg;
	return lt_call(ctx, mod->sol, p, bufs);
}

static int
lt_gemm_default(struct backend_ctx *ctx, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	return lt_call(ctx, 0, p, bufs);
}

const struct backend_ops backend_hipblaslt_ops = {
    .name = "hipblaslt",
    .open = lt_open,
    .open_opts = lt_open_opts,
    .vendor = 1,
    .close = lt_close,
    .space = lt_space,
    .kernel_source = lt_kernel_source,
    .compile = lt_compile,
    .module_unload = lt_module_unload,
    .kernel_info = NULL,
    .alloc = vendor_hip_alloc,
    .free = vendor_hip_free,
    .copy_h2d = vendor_hip_copy_h2d,
    .copy_d2h = vendor_hip_copy_d2h,
    .launch = NULL,
    .gemm = lt_gemm,
    .gemm_reference = lt_gemm_default,
    .event_create = vendor_hip_event_create,
    .event_destroy = vendor_hip_event_destroy,
    .event_record = vendor_hip_event_record,
    .event_elapsed = vendor_hip_event_elapsed,
    .synchronize = vendor_hip_synchronize,
};
