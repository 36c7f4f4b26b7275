/*
 * The cublaslt vendor-solution backend (backend.h, vendor.h): cuBLASLt's own
 * algorithms for a GEMM on an NVIDIA GPU, from libcublasLt (dlopen'd, never
 * linked). Device memory, copies, events and the stream are the CUDA
 * backend's (backend-cuda.c opens the device's primary context; cuBLASLt runs
 * on its legacy default stream, stream 0, where the CUDA backend records its
 * events), so the tuner times cuBLASLt exactly as it times rocmd's kernels.
 *
 * Candidates, in this order: cublasLtMatmulAlgoGetHeuristic's first choice
 * for a request of one algorithm (the default: SOL 0, what a program asking
 * cuBLASLt for an algorithm gets), the rest of its answer to a request of
 * LT_REQUEST, then variants the enumeration API makes of the heuristic's best
 * (cublasLtMatmulAlgoConfigSetAttribute: other split-K counts with a
 * reduction the algorithm supports, the other CTA swizzle) and the first
 * tiles and stages of algorithm ids the heuristic did not return
 * (cublasLtMatmulAlgoGetIds, cublasLtMatmulAlgoInit), each kept only when
 * cublasLtMatmulAlgoCheck accepts it with the 32 MiB workspace. A candidate's
 * SOL is its configuration packed into 63 bits (sol_pack below), so that a
 * result (and a seed of a later run) names the algorithm itself, not its place
 * in one process's list. One more, first after the default where libcublas
 * sits beside libcublasLt (unbatched problems): cuBLAS's own choice,
 * cublasGemmEx with CUBLAS_GEMM_DEFAULT (SOL LT_SOL_CUBLAS, a value no packed
 * configuration takes), what a program calling cuBLAS gets: its heuristic is
 * not always cuBLASLt's first answer, so a tuned entry is never slower than
 * either.
 *
 * fp32 runs with CUBLAS_COMPUTE_32F (no TF32), fp16 and bf16 with fp32
 * accumulation: the tuner's tolerance, and what PyTorch's defaults ask for.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "kernels/backend-cuda.h"
#include "kernels/backend.h"
#include "kernels/vendor.h"

#define LT_R_32F 0
#define LT_R_16F 2
#define LT_R_16BF 14
#define LT_COMPUTE_32F 68
#define LT_OP_N 0
#define LT_OP_T 1
#define LT_DESC_TRANSA 3
#define LT_DESC_TRANSB 4
#define LT_LAYOUT_BATCH_COUNT 5
#define LT_LAYOUT_STRIDED_BATCH_OFFSET 6
#define LT_PREF_MAX_WORKSPACE_BYTES 1
#define LT_CFG_ID 0
#define LT_CFG_TILE 1
#define LT_CFG_SPLITK 2
#define LT_CFG_REDUCTION 3
#define LT_CFG_SWIZZLE 4
#define LT_CFG_CUSTOM 5
#define LT_CFG_STAGES 6
#define LT_CFG_INNER 7
#define LT_CFG_CLUSTER 8
#define LT_CAP_SPLITK 0
#define LT_CAP_REDUCTION_MASK 1
#define LT_CAP_SWIZZLE 2
#define LT_CAP_TILE_IDS 6
#define LT_CAP_STAGES_IDS 13
#define LT_RED_INPLACE 1
#define LT_RED_COMPUTE 2
#define LT_WORKSPACE (32u << 20)
#define LT_REQUEST 128
#define LT_MAX_CAND (SPACE_MAX_VALUES - 1)
#define LT_SOL_CUBLAS (INT64_C(1) << 62) /* past sol_pack's 61 bits */
#define CB_GEMM_DEFAULT (-1)

typedef int lt_status;

struct lt_algo {
	uint64_t data[8];
};

struct lt_result {
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
	size_t (*version)(void);
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
	lt_status (*get_ids)(void *, int, int, int, int, int, int, int, int *, int *);
	lt_status (*algo_init)(void *, int, int, int, int, int, int, int, struct lt_algo *);
	lt_status (*algo_check)(void *, void *, void *, void *, void *, void *,
	                        const struct lt_algo *, struct lt_result *);
	lt_status (*cap_get)(const struct lt_algo *, int, void *, size_t, size_t *);
	lt_status (*cfg_set)(struct lt_algo *, int, const void *, size_t);
	lt_status (*cfg_get)(const struct lt_algo *, int, void *, size_t, size_t *);
	lt_status (*matmul)(void *, void *, const void *, const void *, void *, const void *, void *,
	                    const void *, const void *, void *, void *, void *,
	                    const struct lt_algo *, void *, size_t, void *);
	/* cuBLAS beside it (optional: NULL cb_lib, no LT_SOL_CUBLAS candidate) */
	void *cb_lib, *cb_handle;
	lt_status (*cb_create)(void **);
	lt_status (*cb_destroy)(void *);
	lt_status (*cb_set_ws)(void *, void *, size_t);
	lt_status (*cb_gemm_ex)(void *, int, int, int, int, int, const void *, const void *, int,
	                        int, const void *, int, int, const void *, void *, int, int, int,
	                        int);
};

struct cand {
	int64_t sol;
	struct lt_algo algo;
};

/* One problem as cuBLASLt sees it: the operation and the three layouts. */
struct lt_plan {
	void *desc, *la, *lb, *lc;
};

struct backend_ctx {
	struct backend_ctx *cuda; /* the CUDA backend's own context (opaque here) */
	struct lt_api api;
	void *handle, *pref;
	struct lt_plan plan;      /* the problem last given to space() */
	struct gemm_problem prob; /* that problem */
	int type;
	int64_t default_sol; /* the default's packed configuration: not listed again */
	uint64_t ws;
	struct cand cand[LT_MAX_CAND + 1]; /* [0] the default */
	int ncand;
	struct backend_device_info info;
	char source[256];
	struct space_def space;
};

/* A candidate for one problem: its own plan and algorithm, so that modules of
 * several problems can run side by side (librocmd-gemm keeps one per shape). */
struct backend_module {
	int64_t sol;
	struct lt_plan plan;
	struct lt_algo algo;
	struct gemm_problem prob; /* the problem PLAN describes */
};

/* ---- the packed configuration ---- */

/* Bits (from bit 0): algo id + 1 (10), tile (10), stages (7), split-K (10),
 * reduction (3), swizzle (2), custom option (8), inner shape (4), cluster
 * shape (7): 61 bits, never 0. */
static const struct {
	int attr, bits, size; /* size of the attribute's type */
} fields[] = {
    {LT_CFG_ID, 10, 4},     {LT_CFG_TILE, 10, 4},   {LT_CFG_STAGES, 7, 4},
    {LT_CFG_SPLITK, 10, 4}, {LT_CFG_REDUCTION, 3, 4}, {LT_CFG_SWIZZLE, 2, 4},
    {LT_CFG_CUSTOM, 8, 4},  {LT_CFG_INNER, 4, 2},   {LT_CFG_CLUSTER, 7, 2},
};
#define NFIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

/* The SOL of ALGO, or 0 when a field does not fit. */
static int64_t
sol_pack(const struct lt_api *api, const struct lt_algo *algo)
{
	uint64_t sol = 0;
	int shift = 0;

	for (int i = 0; i < NFIELDS; i++) {
		uint32_t v32 = 0;
		uint16_t v16 = 0;
		size_t w = 0;
		uint64_t v;

		if (fields[i].size == 4) {
			if (api->cfg_get(algo, fields[i].attr, &v32, 4, &w) != 0)
				return 0;
			v = v32;
		} else {
			if (api->cfg_get(algo, fields[i].attr, &v16, 2, &w) != 0)
				return 0;
			v = v16;
		}
		if (fields[i].attr == LT_CFG_ID)
			v += 1;
		if (v >= (1ull << fields[i].bits))
			return 0;
		sol |= v << shift;
		shift += fields[i].bits;
	}
	return (int64_t)sol;
}

static uint32_t
sol_field(int64_t sol, int attr)
{
	int shift = 0;

	for (int i = 0; i < NFIELDS; i++) {
		if (fields[i].attr == attr)
			return (uint32_t)(((uint64_t)sol >> shift) & ((1ull << fields[i].bits) - 1));
		shift += fields[i].bits;
	}
	return 0;
}

void
backend_cublaslt_describe(int64_t sol, char *buf, size_t len)
{
	if (sol == LT_SOL_CUBLAS) {
		snprintf(buf, len, "cuBLAS's own choice (cublasGemmEx, CUBLAS_GEMM_DEFAULT)");
		return;
	}
	snprintf(buf, len,
	         "algo %u tile %u stages %u split-K %u reduction %u swizzle %u custom %u inner %u "
	         "cluster %u",
	         sol_field(sol, LT_CFG_ID) - 1, sol_field(sol, LT_CFG_TILE),
	         sol_field(sol, LT_CFG_STAGES), sol_field(sol, LT_CFG_SPLITK),
	         sol_field(sol, LT_CFG_REDUCTION), sol_field(sol, LT_CFG_SWIZZLE),
	         sol_field(sol, LT_CFG_CUSTOM), sol_field(sol, LT_CFG_INNER),
	         sol_field(sol, LT_CFG_CLUSTER));
}

/* ---- opening ---- */

#ifdef _WIN32
/* In the CUDA toolkit's folder (backend_cuda_toolkit_dir). */
static const char *const lt_names[] = {"cublasLt64_13.dll", "cublasLt64_12.dll",
                                       "cublasLt64_11.dll", NULL};
#else
static const char *const lt_names[] = {"libcublasLt.so.13",
                                       "libcublasLt.so.12",
                                       "libcublasLt.so",
                                       "/usr/local/cuda/lib64/libcublasLt.so.13",
                                       "/usr/local/cuda/lib64/libcublasLt.so.12",
                                       "/usr/local/cuda/lib64/libcublasLt.so",
                                       NULL};
#endif

static void
lt_plan_free(const struct lt_api *api, struct lt_plan *pl)
{
	void **l[] = {&pl->la, &pl->lb, &pl->lc};

	for (int i = 0; i < 3; i++)
		if (*l[i] != NULL) {
			api->layout_destroy(*l[i]);
			*l[i] = NULL;
		}
	if (pl->desc != NULL) {
		api->desc_destroy(pl->desc);
		pl->desc = NULL;
	}
}

static void
lt_descs_free(struct backend_ctx *ctx)
{
	lt_plan_free(&ctx->api, &ctx->plan);
	ctx->ncand = 0;
	ctx->default_sol = 0;
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
		if (ctx->api.cb_handle != NULL)
			ctx->api.cb_destroy(ctx->api.cb_handle);
	}
	if (ctx->cuda != NULL) {
		if (ctx->ws != 0)
			backend_cuda_ops.free(ctx->cuda, ctx->ws);
		backend_cuda_ops.close(ctx->cuda);
	}
	rocmd_dl_close(ctx->api.cb_lib);
	rocmd_dl_close(ctx->api.lib);
	free(ctx);
}

#define LLOAD(field, name)                                                                        \
	(*(void **)&ctx->api.field = rocmd_dl_sym(ctx->api.lib, name),                                    \
	 missing = missing || ctx->api.field == NULL)

static int
lt_load(struct backend_ctx *ctx, const char *want, char *why, size_t whylen)
{
	const char *env = getenv("ROCMD_CUBLASLT");
	const char *const one[] = {want != NULL && want[0] ? want : env, NULL};
	char err[320] = "";
	int missing = 0;

	char dir[1024];

	ctx->api.lib = NULL;
	if (one[0] == NULL || one[0][0] == '\0')
		for (int d = 0; ctx->api.lib == NULL && backend_cuda_toolkit_dir(d, dir, sizeof(dir)) == 0;
		     d++)
			ctx->api.lib = vendor_dlopen(dir, lt_names, ctx->info.library,
			                             sizeof(ctx->info.library), err, sizeof(err));
	if (ctx->api.lib == NULL)
		ctx->api.lib = vendor_dlopen(NULL, one[0] != NULL && one[0][0] ? one : lt_names,
		                             ctx->info.library, sizeof(ctx->info.library), err,
		                             sizeof(err));
	if (ctx->api.lib == NULL) {
		snprintf(why, whylen, "not available: no cuBLASLt (%.300s)", err);
		return ROCMD_EUNSUPPORTED;
	}
	LLOAD(create, "cublasLtCreate");
	LLOAD(destroy, "cublasLtDestroy");
	LLOAD(version, "cublasLtGetVersion");
	LLOAD(desc_create, "cublasLtMatmulDescCreate");
	LLOAD(desc_destroy, "cublasLtMatmulDescDestroy");
	LLOAD(desc_set, "cublasLtMatmulDescSetAttribute");
	LLOAD(layout_create, "cublasLtMatrixLayoutCreate");
	LLOAD(layout_destroy, "cublasLtMatrixLayoutDestroy");
	LLOAD(layout_set, "cublasLtMatrixLayoutSetAttribute");
	LLOAD(pref_create, "cublasLtMatmulPreferenceCreate");
	LLOAD(pref_destroy, "cublasLtMatmulPreferenceDestroy");
	LLOAD(pref_set, "cublasLtMatmulPreferenceSetAttribute");
	LLOAD(heuristic, "cublasLtMatmulAlgoGetHeuristic");
	LLOAD(get_ids, "cublasLtMatmulAlgoGetIds");
	LLOAD(algo_init, "cublasLtMatmulAlgoInit");
	LLOAD(algo_check, "cublasLtMatmulAlgoCheck");
	LLOAD(cap_get, "cublasLtMatmulAlgoCapGetAttribute");
	LLOAD(cfg_set, "cublasLtMatmulAlgoConfigSetAttribute");
	LLOAD(cfg_get, "cublasLtMatmulAlgoConfigGetAttribute");
	LLOAD(matmul, "cublasLtMatmul");
	if (missing) {
		snprintf(why, whylen, "not available: %.300s lacks a cuBLASLt entry point",
		         ctx->info.library);
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

/*
 * cuBLAS from the folder cuBLASLt came from (its file name without "Lt": the
 * same toolkit), its handle on the legacy default stream with cuBLASLt's
 * workspace. Optional: without it there is no LT_SOL_CUBLAS candidate.
 */
static void
cb_load(struct backend_ctx *ctx)
{
	char path[sizeof(ctx->info.library)], why[256];
	char *lt = strstr(ctx->info.library, "cublasLt");
	struct lt_api *a = &ctx->api;

	if (lt == NULL)
		return;
	snprintf(path, sizeof(path), "%.*scublas%s", (int)(lt - ctx->info.library),
	         ctx->info.library, lt + strlen("cublasLt"));
	if ((a->cb_lib = rocmd_dl_open(path, why, sizeof(why))) == NULL)
		return;
	*(void **)&a->cb_create = rocmd_dl_sym(a->cb_lib, "cublasCreate_v2");
	*(void **)&a->cb_destroy = rocmd_dl_sym(a->cb_lib, "cublasDestroy_v2");
	*(void **)&a->cb_set_ws = rocmd_dl_sym(a->cb_lib, "cublasSetWorkspace_v2");
	*(void **)&a->cb_gemm_ex = rocmd_dl_sym(a->cb_lib, "cublasGemmEx");
	if (a->cb_create == NULL || a->cb_destroy == NULL || a->cb_gemm_ex == NULL ||
	    a->cb_create(&a->cb_handle) != 0) {
		a->cb_handle = NULL;
		rocmd_dl_close(a->cb_lib);
		a->cb_lib = NULL;
		return;
	}
	if (a->cb_set_ws != NULL)
		a->cb_set_ws(a->cb_handle, (void *)(uintptr_t)ctx->ws, LT_WORKSPACE);
}

static int
lt_open_opts(int index, const struct backend_open_opts *oo, struct backend_ctx **out,
             struct backend_device_info *info, char *why, size_t whylen)
{
	struct backend_ctx *ctx = calloc(1, sizeof(*ctx));
	uint64_t wsb = LT_WORKSPACE;
	char library[512], digest[65];
	size_t v;
	int r;

	*out = NULL;
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	vendor_child_env(VENDOR_CUBLASLT, NULL);
	r = backend_cuda_ops.open(index, &ctx->cuda, &ctx->info, why, whylen);
	if (r < 0) {
		ctx->cuda = NULL;
		goto fail;
	}
	if ((r = lt_load(ctx, oo != NULL ? oo->library : NULL, why, whylen)) < 0)
		goto fail;
	snprintf(library, sizeof(library), "%s", ctx->info.library);
	if (ctx->api.create(&ctx->handle) != 0 || ctx->api.pref_create(&ctx->pref) != 0 ||
	    ctx->api.pref_set(ctx->pref, LT_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb)) != 0) {
		snprintf(why, whylen, "not available: cublasLtCreate failed");
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	v = ctx->api.version();
	snprintf(ctx->info.backend, sizeof(ctx->info.backend), "cublaslt");
	snprintf(ctx->info.runtime_version, sizeof(ctx->info.runtime_version), "cuBLASLt %zu", v);
	snprintf(ctx->info.compiler_version, sizeof(ctx->info.compiler_version), "cuBLASLt %zu", v);
	r = vendor_library_digest(VENDOR_CUBLASLT, library, NULL, digest, why, whylen);
	if (r < 0)
		goto fail;
	snprintf(ctx->info.library_digest, sizeof(ctx->info.library_digest), "%s", digest);
	snprintf(ctx->source, sizeof(ctx->source), "cublaslt %zu sha256:%s", v, digest);
	if ((r = backend_cuda_ops.alloc(ctx->cuda, LT_WORKSPACE, &ctx->ws)) < 0) {
		snprintf(why, whylen, "cannot allocate the workspace");
		goto fail;
	}
	cb_load(ctx);
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

/* ---- the problem and its candidates ---- */

static int
lt_type(enum gemm_dtype dt)
{
	return dt == GEMM_FP16 ? LT_R_16F : dt == GEMM_BF16 ? LT_R_16BF : LT_R_32F;
}

static int
lt_layout(struct backend_ctx *ctx, void **out, int64_t rows, int64_t cols, int64_t ld,
          int64_t batch, int64_t stride)
{
	int32_t nb = (int32_t)batch;

	if (ctx->api.layout_create(out, ctx->type, (uint64_t)rows, (uint64_t)cols, ld) != 0) {
		*out = NULL;
		return ROCMD_EINVAL;
	}
	if (batch > 1 &&
	    (ctx->api.layout_set(*out, LT_LAYOUT_BATCH_COUNT, &nb, sizeof(nb)) != 0 ||
	     ctx->api.layout_set(*out, LT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)) != 0))
		return ROCMD_EINVAL;
	return 0;
}

/* PL for problem P (PL empty before; freed by the caller on failure too). */
static int
lt_plan_make(struct backend_ctx *ctx, const struct gemm_problem *p, struct lt_plan *pl)
{
	int32_t ta = p->ta == GEMM_T ? LT_OP_T : LT_OP_N, tb = p->tb == GEMM_T ? LT_OP_T : LT_OP_N;

	ctx->type = lt_type(p->dtype);
	if (p->batch > INT32_MAX || ctx->api.desc_create(&pl->desc, LT_COMPUTE_32F, LT_R_32F) != 0) {
		pl->desc = NULL;
		return ROCMD_EINVAL;
	}
	if (ctx->api.desc_set(pl->desc, LT_DESC_TRANSA, &ta, sizeof(ta)) != 0 ||
	    ctx->api.desc_set(pl->desc, LT_DESC_TRANSB, &tb, sizeof(tb)) != 0)
		return ROCMD_EINVAL;
	if (lt_layout(ctx, &pl->la, gemm_rows_a(p), gemm_cols_a(p), p->lda, p->batch,
	              p->stride_a) < 0 ||
	    lt_layout(ctx, &pl->lb, gemm_rows_b(p), gemm_cols_b(p), p->ldb, p->batch,
	              p->stride_b) < 0 ||
	    lt_layout(ctx, &pl->lc, p->m, p->n, p->ldc, p->batch, p->stride_c) < 0)
		return ROCMD_EINVAL;
	return 0;
}

static int
lt_describe(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	lt_descs_free(ctx);
	ctx->prob = *p;
	return lt_plan_make(ctx, p, &ctx->plan);
}

/* Whether ALGO runs this problem within the workspace. */
static int
lt_check(struct backend_ctx *ctx, const struct lt_algo *algo)
{
	struct lt_result r;

	memset(&r, 0, sizeof(r));
	return ctx->api.algo_check(ctx->handle, ctx->plan.desc, ctx->plan.la, ctx->plan.lb, ctx->plan.lc, ctx->plan.lc, algo,
	                           &r) == 0 &&
	       r.workspace <= LT_WORKSPACE;
}

/* Adds ALGO to the list unless it is there or does not pack; 1 when added. */
static int
lt_add(struct backend_ctx *ctx, const struct lt_algo *algo)
{
	int64_t sol = sol_pack(&ctx->api, algo);

	if (sol == 0 || sol == ctx->default_sol || ctx->ncand > LT_MAX_CAND)
		return 0;
	for (int i = 1; i < ctx->ncand; i++)
		if (ctx->cand[i].sol == sol)
			return 0;
	ctx->cand[ctx->ncand].sol = sol;
	ctx->cand[ctx->ncand].algo = *algo;
	ctx->ncand++;
	return 1;
}

/* Split-K and swizzle variants of candidate BASE, where it supports them. */
static void
lt_variants(struct backend_ctx *ctx, const struct lt_algo *base)
{
	static const uint32_t splits[] = {2, 3, 4, 6, 8, 16};
	int32_t splitk = 0;
	uint32_t mask = 0, swz = 0, cur = 0;
	size_t w = 0;

	if (ctx->api.cap_get(base, LT_CAP_SPLITK, &splitk, sizeof(splitk), &w) == 0 && splitk &&
	    ctx->api.cap_get(base, LT_CAP_REDUCTION_MASK, &mask, sizeof(mask), &w) == 0) {
		uint32_t red = (mask & LT_RED_COMPUTE) ? LT_RED_COMPUTE
		               : (mask & LT_RED_INPLACE) ? LT_RED_INPLACE
		                                         : 0;

		for (size_t i = 0; red != 0 && i < sizeof(splits) / sizeof(splits[0]); i++) {
			struct lt_algo a = *base;

			if (ctx->api.cfg_set(&a, LT_CFG_SPLITK, &splits[i], sizeof(splits[i])) == 0 &&
			    ctx->api.cfg_set(&a, LT_CFG_REDUCTION, &red, sizeof(red)) == 0 &&
			    lt_check(ctx, &a))
				lt_add(ctx, &a);
		}
	}
	if (ctx->api.cap_get(base, LT_CAP_SWIZZLE, &swz, sizeof(swz), &w) == 0 && swz == 1 &&
	    ctx->api.cfg_get(base, LT_CFG_SWIZZLE, &cur, sizeof(cur), &w) == 0) {
		struct lt_algo a = *base;
		uint32_t other = cur ? 0 : 1;

		if (ctx->api.cfg_set(&a, LT_CFG_SWIZZLE, &other, sizeof(other)) == 0 &&
		    lt_check(ctx, &a))
			lt_add(ctx, &a);
	}
}

/* The first MAX values of a list capability (tile or stage ids) into OUT:
 * asked with size 0, the query says how many bytes the whole list takes. */
static size_t
lt_cap_list(struct backend_ctx *ctx, const struct lt_algo *a, int cap, uint32_t *out, size_t max)
{
	size_t need = 0, w = 0, n;
	uint32_t *all;

	if (ctx->api.cap_get(a, cap, NULL, 0, &need) != 0 || need < sizeof(uint32_t))
		return 0;
	if ((all = malloc(need)) == NULL)
		return 0;
	n = ctx->api.cap_get(a, cap, all, need, &w) == 0 ? w / sizeof(uint32_t) : 0;
	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(uint32_t));
	free(all);
	return n;
}

/* The first tiles and stages of algorithm ids the heuristic left out. */
static void
lt_other_ids(struct backend_ctx *ctx)
{
	int ids[64], n = 0, t = ctx->type;

	if (ctx->api.get_ids(ctx->handle, LT_COMPUTE_32F, LT_R_32F, t, t, t, t, 64, ids, &n) != 0)
		return;
	for (int i = 0; i < n && ctx->ncand <= LT_MAX_CAND; i++) {
		uint32_t tiles[8], stages[4];
		size_t tw = 0, sw = 0;
		struct lt_algo a;
		int seen = (int)sol_field(ctx->default_sol, LT_CFG_ID) == ids[i] + 1;

		for (int c = 1; c < ctx->ncand && !seen; c++)
			seen = (int)sol_field(ctx->cand[c].sol, LT_CFG_ID) == ids[i] + 1;
		if (seen || ctx->api.algo_init(ctx->handle, LT_COMPUTE_32F, LT_R_32F, t, t, t, t, ids[i],
		                               &a) != 0)
			continue;
		tw = lt_cap_list(ctx, &a, LT_CAP_TILE_IDS, tiles, 8);
		sw = lt_cap_list(ctx, &a, LT_CAP_STAGES_IDS, stages, 4);
		for (size_t ti = 0; ti < (tw ? tw : 1); ti++)
			for (size_t si = 0; si < (sw ? sw : 1); si++) {
				struct lt_algo b = a;

				if (tw)
					ctx->api.cfg_set(&b, LT_CFG_TILE, &tiles[ti], sizeof(uint32_t));
				if (sw)
					ctx->api.cfg_set(&b, LT_CFG_STAGES, &stages[si], sizeof(uint32_t));
				if (lt_check(ctx, &b))
					lt_add(ctx, &b);
			}
	}
}

static const struct space_def *
lt_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	struct lt_result *res = calloc(LT_REQUEST, sizeof(*res));
	int64_t sol[LT_MAX_CAND];
	int n = 0, top;

	vendor_space(&ctx->space, NULL, 0);
	if (res == NULL || lt_describe(ctx, p) < 0)
		goto out;
	/* The default: the heuristic's first choice when asked for one. */
	if (ctx->api.heuristic(ctx->handle, ctx->plan.desc, ctx->plan.la, ctx->plan.lb, ctx->plan.lc, ctx->plan.lc, ctx->pref,
	                       1, res, &n) != 0 ||
	    n < 1 || res[0].state != 0)
		goto out;
	ctx->cand[0].sol = 0;
	ctx->cand[0].algo = res[0].algo;
	ctx->ncand = 1;
	ctx->default_sol = sol_pack(&ctx->api, &res[0].algo);
	if (ctx->api.cb_handle != NULL && p->batch == 1 && p->m <= INT32_MAX && p->n <= INT32_MAX &&
	    p->k <= INT32_MAX && p->lda <= INT32_MAX && p->ldb <= INT32_MAX &&
	    p->ldc <= INT32_MAX) {
		memset(&ctx->cand[ctx->ncand], 0, sizeof(ctx->cand[0]));
		ctx->cand[ctx->ncand++].sol = LT_SOL_CUBLAS;
	}
	n = 0;
	if (ctx->api.heuristic(ctx->handle, ctx->plan.desc, ctx->plan.la, ctx->plan.lb, ctx->plan.lc, ctx->plan.lc, ctx->pref,
	                       LT_REQUEST, res, &n) != 0)
		n = 0;
	for (int i = 0; i < n; i++)
		if (res[i].state == 0 && res[i].workspace <= LT_WORKSPACE)
			lt_add(ctx, &res[i].algo);
	top = ctx->ncand < 9 ? ctx->ncand : 9;
	for (int i = 1; i < top; i++)
		if (ctx->cand[i].sol != LT_SOL_CUBLAS) /* no cuBLASLt algorithm to vary */
			lt_variants(ctx, &ctx->cand[i].algo);
	lt_other_ids(ctx);
	for (int i = 1; i < ctx->ncand; i++)
		sol[i - 1] = ctx->cand[i].sol;
	vendor_space(&ctx->space, sol, ctx->ncand - 1);
out:
	free(res);
	return &ctx->space;
}

static const char *
lt_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = strlen(ctx->source);
	return ctx->source;
}

/* The algo of SOL, one of the problem's candidates. */
static int
lt_algo_of(struct backend_ctx *ctx, int64_t sol, struct lt_algo *out)
{
	for (int i = 0; i < ctx->ncand; i++)
		if (ctx->cand[i].sol == sol) {
			*out = ctx->cand[i].algo;
			return 0;
		}
	return ROCMD_EINVAL;
}

static int
lt_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
           int ndefines, struct backend_module **out, char *log, size_t loglen)
{
	struct backend_module *m;
	struct lt_algo algo;
	int64_t sol;
	int r;

	(void)src;
	(void)len;
	*out = NULL;
	if ((r = vendor_defines_sol(defines, ndefines, &sol, log, loglen)) < 0)
		return r;
	if (ctx->plan.desc == NULL || ctx->ncand == 0 || lt_algo_of(ctx, sol, &algo) < 0) {
		snprintf(log, loglen, "SOL=%lld is not a candidate of the problem last described",
		         (long long)sol);
		return ROCMD_EINVAL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return ROCMD_ENOMEM;
	m->sol = sol;
	m->algo = algo;
	m->prob = ctx->prob;
	if (lt_plan_make(ctx, &ctx->prob, &m->plan) < 0) {
		lt_plan_free(&ctx->api, &m->plan);
		free(m);
		snprintf(log, loglen, "cuBLASLt refused the problem's layouts");
		return ROCMD_EINVAL;
	}
	*out = m;
	return 0;
}

static void
lt_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	if (mod == NULL)
		return;
	lt_plan_free(&ctx->api, &mod->plan);
	free(mod);
}

/* SOL's ALGO on problem P (plan PL): cuBLASLt's, or cuBLAS's own choice. */
static int
lt_call(struct backend_ctx *ctx, const struct lt_plan *pl, int64_t sol, const struct lt_algo *algo,
        const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	float alpha = p->alpha, beta = p->beta;
	void *c = (void *)(uintptr_t)bufs->c;
	int t = lt_type(p->dtype);

	if (sol == LT_SOL_CUBLAS)
		return ctx->api.cb_handle != NULL && p->batch == 1 &&
		               ctx->api.cb_gemm_ex(
		                   ctx->api.cb_handle, p->ta == GEMM_T ? LT_OP_T : LT_OP_N,
		                   p->tb == GEMM_T ? LT_OP_T : LT_OP_N, (int)p->m, (int)p->n,
		                   (int)p->k, &alpha, (void *)(uintptr_t)bufs->a, t, (int)p->lda,
		                   (void *)(uintptr_t)bufs->b, t, (int)p->ldb, &beta, c, t,
		                   (int)p->ldc, LT_COMPUTE_32F, CB_GEMM_DEFAULT) == 0
		           ? 0
		           : ROCMD_EIO;
	return ctx->api.matmul(ctx->handle, pl->desc, &alpha, (void *)(uintptr_t)bufs->a, pl->la,
	                       (void *)(uintptr_t)bufs->b, pl->lb, &beta, c, pl->lc, c, pl->lc,
	                       algo, (void *)(uintptr_t)ctx->ws, LT_WORKSPACE, NULL) == 0
	           ? 0
	           : ROCMD_EIO;
}

/* Whether A and B are the same problem to cuBLASLt (alpha and beta aside). */
static int
lt_same(const struct gemm_problem *a, const struct gemm_problem *b)
{
	return a->dtype == b->dtype && a->ta == b->ta && a->tb == b->tb && a->m == b->m &&
	       a->n == b->n && a->k == b->k && a->batch == b->batch && a->lda == b->lda &&
	       a->ldb == b->ldb && a->ldc == b->ldc && a->stride_a == b->stride_a &&
	       a->stride_b == b->stride_b && a->stride_c == b->stride_c;
}

/* MOD's own plan for the problem it was made for; a module the compile cache
 * hands out again for another problem (the tuner's measurer keeps its cache
 * across problems, and a candidate's defines are only its SOL) runs that SOL
 * in the plan of the problem last described. */
static int
lt_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
        const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	struct lt_algo algo;

	(void)cfg;
	if (lt_same(&mod->prob, p))
		return lt_call(ctx, &mod->plan, mod->sol, &mod->algo, p, bufs);
	if (ctx->plan.desc == NULL || !lt_same(&ctx->prob, p) || lt_algo_of(ctx, mod->sol, &algo) < 0)
		return ROCMD_EINVAL;
	return lt_call(ctx, &ctx->plan, mod->sol, &algo, p, bufs);
}

static int
lt_gemm_default(struct backend_ctx *ctx, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	if (ctx->plan.desc == NULL || ctx->ncand == 0)
		return ROCMD_EINVAL;
	return lt_call(ctx, &ctx->plan, 0, &ctx->cand[0].algo, p, bufs);
}

/* ---- the CUDA backend's memory, events and stream ---- */

static int
lt_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr)
{
	return backend_cuda_ops.alloc(ctx->cuda, bytes, dptr);
}

static void
lt_free(struct backend_ctx *ctx, uint64_t dptr)
{
	backend_cuda_ops.free(ctx->cuda, dptr);
}

static int
lt_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes)
{
	return backend_cuda_ops.copy_h2d(ctx->cuda, dst, src, bytes);
}

static int
lt_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes)
{
	return backend_cuda_ops.copy_d2h(ctx->cuda, dst, src, bytes);
}

static int
lt_event_create(struct backend_ctx *ctx, struct backend_event **out)
{
	return backend_cuda_ops.event_create(ctx->cuda, out);
}

static void
lt_event_destroy(struct backend_ctx *ctx, struct backend_event *ev)
{
	backend_cuda_ops.event_destroy(ctx->cuda, ev);
}

static int
lt_event_record(struct backend_ctx *ctx, struct backend_event *ev)
{
	return backend_cuda_ops.event_record(ctx->cuda, ev);
}

static int
lt_event_elapsed(struct backend_ctx *ctx, struct backend_event *a, struct backend_event *b,
                 double *ms)
{
	return backend_cuda_ops.event_elapsed(ctx->cuda, a, b, ms);
}

static int
lt_synchronize(struct backend_ctx *ctx)
{
	return backend_cuda_ops.synchronize(ctx->cuda);
}

const struct backend_ops backend_cublaslt_ops = {
    .name = "cublaslt",
    .open = lt_open,
    .open_opts = lt_open_opts,
    .vendor = 1,
    .close = lt_close,
    .space = lt_space,
    .kernel_source = lt_kernel_source,
    .compile = lt_compile,
    .module_unload = lt_module_unload,
    .kernel_info = NULL,
    .alloc = lt_alloc,
    .free = lt_free,
    .copy_h2d = lt_copy_h2d,
    .copy_d2h = lt_copy_d2h,
    .launch = NULL,
    .gemm = lt_gemm,
    .gemm_reference = lt_gemm_default,
    .event_create = lt_event_create,
    .event_destroy = lt_event_destroy,
    .event_record = lt_event_record,
    .event_elapsed = lt_event_elapsed,
    .synchronize = lt_synchronize,
};
