/*
 * The CPU backend: a real, tunable GEMM so that every tuning path (space,
 * compile cache, measurement, isolation, strategies, storage) runs for real on
 * machines without a GPU, CI included.
 *
 * The kernel is GotoBLAS-shaped: for each MT1 (NC) column block of op(B) and
 * DU (KC) slice of K, a panel of op(B) is packed into TT1-wide micro-panels;
 * for each MT0 (MC) row block of op(A) a block is packed into TT0-tall
 * micro-panels; a TT0 x TT1 register micro-kernel, its K loop unrolled UNROLL
 * times, multiplies them. Packing converts fp16/bf16 to fp32 and absorbs the
 * transposes, so the micro-kernel only sees fp32. THREADS workers split either
 * the MT0 blocks (PAR=0) or the micro-panels of B (PAR=1); VW=1 selects
 * micro-kernels compiled without vectorization; PGR adds software prefetch.
 * "Compiling" a candidate parses its defines into these parameters.
 */
#include "kernels/backend.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/libc.h"
#include "kernels/cpu-info.h"

#define CPU_MAX_THREADS 4

struct backend_ctx {
	struct backend_device_info info;
	struct space_def space; /* the CPU space, as handed out */
};

typedef void (*ukernel_fn)(int64_t kc, const float *restrict a, const float *restrict b,
			   float *restrict c, int pgr);

struct cpu_params {
	int mt0, mt1, du, tt0, tt1, unroll, vw, threads, par, pgr;
};

struct backend_module {
	struct cpu_params prm;
	ukernel_fn uk;
	int plant; /* 0 none, 1 wrong, 2 crash, 3 hang */
};

struct backend_event {
	double t;
};

static const char cpu_source[] =
	"rocmd cpu gemm 1: packed GotoBLAS blocking MT0/MT1/DU, TT0xTT1 register micro-kernel, "
	"UNROLL, VW scalar/vector, THREADS split PAR, PGR prefetch; fp32 accumulate\n";

/*
 * Micro-kernels: C[TT1][TT0] += A panel (kc x TT0) * B panel (kc x TT1), one
 * function per (TT0, TT1, UNROLL, vectorized). VW=1 ones keep GCC from
 * vectorizing so the parameter changes the code, not just a label.
 */
#define UK_BODY(MR, NR, U)                                                                         \
	{                                                                                          \
		float acc[NR][MR];                                                                 \
		int64_t p = 0;                                                                     \
		int i, j, u;                                                                       \
		for (j = 0; j < NR; j++)                                                           \
			for (i = 0; i < MR; i++)                                                   \
				acc[j][i] = 0.0f;                                                  \
		for (; p + U <= kc; p += U) {                                                      \
			if (pgr)                                                                   \
				__builtin_prefetch(a + (p + 8 * U) * MR);                          \
			for (u = 0; u < U; u++) {                                                  \
				const float *ap = a + (p + u) * MR;                                \
				const float *bp = b + (p + u) * NR;                                \
				_Pragma("GCC unroll 8") for (j = 0; j < NR; j++)                   \
				{                                                                  \
					_Pragma("GCC unroll 16") for (i = 0; i < MR; i++)          \
						acc[j][i] += ap[i] * bp[j];                        \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		for (; p < kc; p++) {                                                              \
			const float *ap = a + p * MR;                                              \
			const float *bp = b + p * NR;                                              \
			for (j = 0; j < NR; j++)                                                   \
				for (i = 0; i < MR; i++)                                           \
					acc[j][i] += ap[i] * bp[j];                                \
		}                                                                                  \
		memcpy(c, acc, sizeof(acc));                                                       \
	}

#define UK_DEF(MR, NR, U)                                                                          \
	static void uk_v_##MR##_##NR##_##U(int64_t kc, const float *restrict a,                   \
					   const float *restrict b, float *restrict c, int pgr)    \
		UK_BODY(MR, NR, U) __attribute__((optimize("no-tree-vectorize"))) static void      \
			uk_s_##MR##_##NR##_##U(int64_t kc, const float *restrict a,                \
					       const float *restrict b, float *restrict c,         \
					       int pgr) UK_BODY(MR, NR, U)

#define UK_U(MR, NR) UK_DEF(MR, NR, 1) UK_DEF(MR, NR, 2) UK_DEF(MR, NR, 4) UK_DEF(MR, NR, 8)
#define UK_NR(MR) UK_U(MR, 1) UK_U(MR, 2) UK_U(MR, 4) UK_U(MR, 8)
UK_NR(4)
UK_NR(8)
UK_NR(16)

#define UK_ROW_U(MR, NR)                                                                           \
	{uk_s_##MR##_##NR##_1, uk_s_##MR##_##NR##_2, uk_s_##MR##_##NR##_4, uk_s_##MR##_##NR##_8,  \
	 uk_v_##MR##_##NR##_1, uk_v_##MR##_##NR##_2, uk_v_##MR##_##NR##_4, uk_v_##MR##_##NR##_8}
#define UK_ROW_NR(MR) {UK_ROW_U(MR, 1), UK_ROW_U(MR, 2), UK_ROW_U(MR, 4), UK_ROW_U(MR, 8)}

/* [TT0 4/8/16][TT1 1/2/4/8][vec * 4 + UNROLL 1/2/4/8] */
static const ukernel_fn uk_table[3][4][8] = {UK_ROW_NR(4), UK_ROW_NR(8), UK_ROW_NR(16)};

static int
log2_small(int v)
{
	int l = 0;

	while ((1 << l) < v)
		l++;
	return (1 << l) == v ? l : -1;
}

static ukernel_fn
uk_lookup(const struct cpu_params *prm)
{
	int r = log2_small(prm->tt0) - 2, c = log2_small(prm->tt1), u = log2_small(prm->unroll);

	if (r < 0 || r > 2 || c < 0 || c > 3 || u < 0 || u > 3)
		return NULL;
	return uk_table[r][c][(prm->vw > 1 ? 4 : 0) + u];
}

/* One GEMM call's shared state; workers see it read-only apart from the packs. */
struct cpu_job {
	const struct gemm_problem *p;
	const struct cpu_params *prm;
	ukernel_fn uk;
	const void *a, *b;
	void *c;
	float *w;	/* fp32 accumulation of C for fp16/bf16, ld = m */
	float *bpack;	/* DU x MT1 */
	float *apack[CPU_MAX_THREADS]; /* per worker for PAR=0; [0] shared for PAR=1 */
	pthread_barrier_t bar;
	int nthreads;
	int skip_last_k; /* planted wrong result */
};

static inline float
ld_elem(enum gemm_dtype dt, const void *buf, int64_t i)
{
	if (dt == GEMM_FP32)
		return ((const float *)buf)[i];
	if (dt == GEMM_FP16)
		return gemm_f16_to_f32(((const uint16_t *)buf)[i]);
	return gemm_bf16_to_f32(((const uint16_t *)buf)[i]);
}

/* Packs op(A)[i0:i0+mc, l0:l0+kc] micro-panels FIRST..LAST (step STEP) into AP. */
static void
pack_a(const struct cpu_job *j, int64_t bi, int64_t i0, int64_t mc, int64_t l0, int64_t kc,
       float *ap, int first, int step)
{
	const struct gemm_problem *p = j->p;
	int mr = j->prm->tt0;
	int64_t np = (mc + mr - 1) / mr, pi;
	int64_t base = bi * p->stride_a;

	for (pi = first; pi < np; pi += step) {
		float *dst = ap + pi * kc * mr;
		int64_t rows = mc - pi * mr < mr ? mc - pi * mr : mr, l, r;

		for (l = 0; l < kc; l++) {
			for (r = 0; r < rows; r++) {
				int64_t i = i0 + pi * mr + r;
				int64_t idx = p->ta == GEMM_N ? i + (l0 + l) * p->lda
							      : (l0 + l) + i * p->lda;

				dst[l * mr + r] = ld_elem(p->dtype, j->a, base + idx);
			}
			for (; r < mr; r++)
				dst[l * mr + r] = 0.0f;
		}
	}
}

/* Packs op(B)[l0:l0+kc, j0:j0+nc] micro-panels FIRST..LAST (step STEP) into BP. */
static void
pack_b(const struct cpu_job *j, int64_t bi, int64_t l0, int64_t kc, int64_t j0, int64_t nc,
       float *bp, int first, int step)
{
	const struct gemm_problem *p = j->p;
	int nr = j->prm->tt1;
	int64_t np = (nc + nr - 1) / nr, pi;
	int64_t base = bi * p->stride_b;

	for (pi = first; pi < np; pi += step) {
		float *dst = bp + pi * kc * nr;
		int64_t cols = nc - pi * nr < nr ? nc - pi * nr : nr, l, c;

		for (l = 0; l < kc; l++) {
			for (c = 0; c < cols; c++) {
				int64_t jj = j0 + pi * nr + c;
				int64_t idx = p->tb == GEMM_N ? (l0 + l) + jj * p->ldb
							      : jj + (l0 + l) * p->ldb;

				dst[l * nr + c] = ld_elem(p->dtype, j->b, base + idx);
			}
			for (; c < nr; c++)
				dst[l * nr + c] = 0.0f;
		}
	}
}

/* Adds alpha * tile into C (fp32, beta applied on the first K slice) or W. */
static void
store_tile(const struct cpu_job *j, int64_t bi, int64_t i0, int64_t j0, int64_t rows,
	   int64_t cols, const float *tile, int first)
{
	const struct gemm_problem *p = j->p;
	int mr = j->prm->tt0;
	float alpha = p->alpha, beta = p->beta;
	int64_t r, c;

	if (p->dtype == GEMM_FP32) {
		float *cc = (float *)j->c + bi * p->stride_c;

		for (c = 0; c < cols; c++) {
			float *col = cc + (j0 + c) * p->ldc + i0;
			const float *t = tile + c * mr;

			if (!first)
				for (r = 0; r < rows; r++)
					col[r] += alpha * t[r];
			else if (beta == 0.0f)
				for (r = 0; r < rows; r++)
					col[r] = alpha * t[r];
			else
				for (r = 0; r < rows; r++)
					col[r] = alpha * t[r] + beta * col[r];
		}
		return;
	}
	for (c = 0; c < cols; c++) {
		float *col = j->w + (j0 + c) * p->m + i0;
		const float *t = tile + c * mr;

		for (r = 0; r < rows; r++)
			col[r] = first ? alpha * t[r] : col[r] + alpha * t[r];
	}
}

/* The micro-kernel loop over one packed A block x the packed B panel. */
static void
macro_kernel(const struct cpu_job *j, int64_t bi, int64_t i0, int64_t mc, int64_t j0, int64_t nc,
	     int64_t kc, const float *ap, int first, int jfirst, int jstep)
{
	int mr = j->prm->tt0, nr = j->prm->tt1;
	int64_t npa = (mc + mr - 1) / mr, npb = (nc + nr - 1) / nr, pa, pb;
	float tile[16 * 8];

	for (pb = jfirst; pb < npb; pb += jstep) {
		const float *bp = j->bpack + pb * kc * nr;
		int64_t cols = nc - pb * nr < nr ? nc - pb * nr : nr;

		for (pa = 0; pa < npa; pa++) {
			int64_t rows = mc - pa * mr < mr ? mc - pa * mr : mr;

			if (j->prm->pgr && pa + 1 < npa)
				__builtin_prefetch(ap + (pa + 1) * kc * mr);
			j->uk(kc, ap + pa * kc * mr, bp, tile, j->prm->pgr);
			store_tile(j, bi, i0 + pa * mr, j0 + pb * nr, rows, cols, tile, first);
		}
	}
}

static void
run_worker(struct cpu_job *j, int tid)
{
	const struct gemm_problem *p = j->p;
	const struct cpu_params *prm = j->prm;
	int T = j->nthreads;
	int64_t bi, jc, pc, ic;

	for (bi = 0; bi < p->batch; bi++) {
		for (jc = 0; jc < p->n; jc += prm->mt1) {
			int64_t nc = p->n - jc < prm->mt1 ? p->n - jc : prm->mt1;

			for (pc = 0; pc < p->k; pc += prm->du) {
				int64_t kc = p->k - pc < prm->du ? p->k - pc : prm->du;
				int first = pc == 0;

				/* The planted fault: one term of every dot product lost. */
				if (j->skip_last_k && pc + kc >= p->k && kc > 1)
					kc--;
				pack_b(j, bi, pc, kc, jc, nc, j->bpack, tid, T);
				if (T > 1)
					pthread_barrier_wait(&j->bar);
				if (prm->par == 0) {
					int64_t blk = 0;

					for (ic = 0; ic < p->m; ic += prm->mt0, blk++) {
						int64_t mc = p->m - ic < prm->mt0 ? p->m - ic
										  : prm->mt0;

						if (blk % T != tid)
							continue;
						pack_a(j, bi, ic, mc, pc, kc, j->apack[tid], 0, 1);
						macro_kernel(j, bi, ic, mc, jc, nc, kc, j->apack[tid],
							     first, 0, 1);
					}
				} else {
					for (ic = 0; ic < p->m; ic += prm->mt0) {
						int64_t mc = p->m - ic < prm->mt0 ? p->m - ic
										  : prm->mt0;

						pack_a(j, bi, ic, mc, pc, kc, j->apack[0], tid, T);
						if (T > 1)
							pthread_barrier_wait(&j->bar);
						macro_kernel(j, bi, ic, mc, jc, nc, kc, j->apack[0],
							     first, tid, T);
						if (T > 1)
							pthread_barrier_wait(&j->bar);
					}
				}
				if (T > 1)
					pthread_barrier_wait(&j->bar);
			}
		}
		if (p->dtype != GEMM_FP32) {
			/* C = W + beta C, converting; columns split among workers. */
			int64_t col, r;
			void *c = (char *)j->c + bi * p->stride_c * 2;

			for (col = tid; col < p->n; col += T) {
				for (r = 0; r < p->m; r++) {
					float v = j->w[col * p->m + r];

					if (p->beta != 0.0f)
						v += p->beta * ld_elem(p->dtype, c, r + col * p->ldc);
					gemm_store(p->dtype, c, r + col * p->ldc, v);
				}
			}
			if (T > 1)
				pthread_barrier_wait(&j->bar);
		}
	}
}

struct worker_arg {
	struct cpu_job *job;
	int tid;
};

static void *
worker_main(void *arg)
{
	struct worker_arg *wa = arg;

	run_worker(wa->job, wa->tid);
	return NULL;
}

/* Runs one GEMM with parameters PRM on host memory. */
static int
cpu_gemm_run(const struct gemm_problem *p, const struct cpu_params *prm, ukernel_fn uk,
	     const void *a, const void *b, void *c, int skip_last_k)
{
	struct cpu_job j;
	pthread_t th[CPU_MAX_THREADS];
	struct worker_arg wa[CPU_MAX_THREADS];
	int t, started = 0, err = 0;
	size_t apsz = (size_t)prm->mt0 * prm->du * sizeof(float);

	memset(&j, 0, sizeof(j));
	j.p = p;
	j.prm = prm;
	j.uk = uk;
	j.a = a;
	j.b = b;
	j.c = c;
	j.skip_last_k = skip_last_k;
	j.nthreads = prm->threads < 1 ? 1 : prm->threads > CPU_MAX_THREADS ? CPU_MAX_THREADS
									    : prm->threads;
	j.bpack = rocmd_aligned_alloc(64, (size_t)prm->mt1 * prm->du * sizeof(float));
	for (t = 0; t < j.nthreads; t++)
		j.apack[t] = rocmd_aligned_alloc(64, apsz);
	if (p->dtype != GEMM_FP32)
		j.w = malloc((size_t)p->m * p->n * sizeof(float));
	if (j.bpack == NULL || j.apack[j.nthreads - 1] == NULL ||
	    (p->dtype != GEMM_FP32 && j.w == NULL)) {
		err = ROCMD_ENOMEM;
		goto out;
	}
	if (j.nthreads > 1 && pthread_barrier_init(&j.bar, NULL, (unsigned)j.nthreads) != 0) {
		err = ROCMD_EINTERNAL;
		goto out;
	}
	for (t = 1; t < j.nthreads; t++) {
		wa[t].job = &j;
		wa[t].tid = t;
		if (pthread_create(&th[t], NULL, worker_main, &wa[t]) != 0) {
			/* Fall back to what started: workers only wait on the barrier, so
			 * a partial start would deadlock; run serially instead. */
			err = ROCMD_EINTERNAL;
			break;
		}
		started++;
	}
	if (err == 0) {
		run_worker(&j, 0);
	}
	for (t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	if (j.nthreads > 1)
		pthread_barrier_destroy(&j.bar);
out:
	rocmd_aligned_free(j.bpack);
	for (t = 0; t < CPU_MAX_THREADS; t++)
		rocmd_aligned_free(j.apack[t]);
	free(j.w);
	return err;
}

static int
cpu_open(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
	 size_t whylen)
{
	struct backend_ctx *ctx;

	*out = NULL;
	if (index != 0) {
		snprintf(why, whylen, "not available: the CPU backend has one device");
		return ROCMD_EUNSUPPORTED;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	snprintf(ctx->info.backend, sizeof(ctx->info.backend), "cpu");
	/* Name, arch, CPUs, caches, memory; the CPU has no driver: the OS
	 * kernel's release stands in for it (cpu-info.h). */
	cpu_info_fill(&ctx->info);
	ctx->info.wave_size = 1;
	ctx->info.max_threads_per_block = 1;
	/* The micro-kernel's accumulators: 16 SIMD registers of 8 floats. */
	ctx->info.regs_per_block = 128;
	ctx->info.regs_per_cu = 128;
	if (ctx->info.llc_bytes == 0)
		ctx->info.llc_bytes = 32 * 1024 * 1024;
	snprintf(ctx->info.runtime_version, sizeof(ctx->info.runtime_version), "rocmd-cpu 1");
	snprintf(ctx->info.compiler_version, sizeof(ctx->info.compiler_version), "cc %s",
		 __VERSION__);
	ctx->space = *space_cpu();
	*info = ctx->info;
	*out = ctx;
	return 0;
}

static void
cpu_close(struct backend_ctx *ctx)
{
	free(ctx);
}

static const struct space_def *
cpu_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	return &ctx->space;
}

static const char *
cpu_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = sizeof(cpu_source) - 1;
	return cpu_source;
}

/* ROCMD_TUNE_PLANT="wrong:TT0=8,TT1=4": does the candidate match the plant? */
static int
plant_match(const struct cpu_params *prm)
{
	const char *env = getenv("ROCMD_TUNE_PLANT");
	const struct space_def *s = space_cpu();
	int kind;
	const char *p;

	if (env == NULL || *env == '\0')
		return 0;
	if (!strncmp(env, "wrong:", 6))
		kind = 1;
	else if (!strncmp(env, "crash:", 6))
		kind = 2;
	else if (!strncmp(env, "hang:", 5))
		kind = 3;
	else
		return 0;
	p = strchr(env, ':') + 1;
	while (*p != '\0') {
		char name[SPACE_NAME_MAX];
		const char *eq = strchr(p, '=');
		char *end;
		long long v;
		int pi;
		const int *field;

		if (eq == NULL || eq - p >= SPACE_NAME_MAX)
			return 0;
		memcpy(name, p, eq - p);
		name[eq - p] = '\0';
		v = strtoll(eq + 1, &end, 10);
		pi = space_param_index(s, name);
		if (pi < 0)
			return 0;
		field = &prm->mt0 + pi; /* struct cpu_params follows the space's order */
		if (*field != v)
			return 0;
		p = (*end == ',' || *end == ';') ? end + 1 : end;
	}
	return kind;
}

static int
cpu_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
	    int ndefines, struct backend_module **out, char *log, size_t loglen)
{
	const struct space_def *s = space_cpu();
	struct cpu_params prm;
	int seen[SPACE_MAX_PARAMS] = {0};
	struct backend_module *mod;
	int i;

	*out = NULL;
	for (i = 0; i < ndefines; i++) {
		const char *eq = strchr(defines[i], '=');
		char name[SPACE_NAME_MAX];
		char *end;
		long long v;
		int pi;

		if (eq == NULL || eq - defines[i] >= SPACE_NAME_MAX) {
			snprintf(log, loglen, "bad define '%s'", defines[i]);
			return ROCMD_EINVAL;
		}
		memcpy(name, defines[i], eq - defines[i]);
		name[eq - defines[i]] = '\0';
		pi = space_param_index(s, name);
		v = strtoll(eq + 1, &end, 10);
		if (pi < 0 || *end != '\0' || v < 0 || v > 1 << 20) {
			snprintf(log, loglen, "unknown define or value '%s'", defines[i]);
			return ROCMD_EINVAL;
		}
		(&prm.mt0)[pi] = (int)v;
		seen[pi] = 1;
	}
	for (i = 0; i < s->nparams; i++) {
		if (!seen[i]) {
			snprintf(log, loglen, "define %s missing", s->params[i].name);
			return ROCMD_EINVAL;
		}
	}
	if (prm.mt0 < 1 || prm.mt1 < 1 || prm.du < 1 || prm.threads < 1 ||
	    prm.threads > CPU_MAX_THREADS || uk_lookup(&prm) == NULL) {
		snprintf(log, loglen, "no micro-kernel for TT0=%d TT1=%d UNROLL=%d", prm.tt0,
			 prm.tt1, prm.unroll);
		return ROCMD_EINVAL;
	}
	mod = calloc(1, sizeof(*mod));
	if (mod == NULL)
		return ROCMD_ENOMEM;
	mod->prm = prm;
	mod->uk = uk_lookup(&prm);
	mod->plant = plant_match(&prm);
	*out = mod;
	return 0;
}

static void
cpu_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	free(mod);
}

static int
cpu_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr)
{
	void *p = rocmd_aligned_alloc(64, bytes);

	if (p == NULL)
		return ROCMD_ENOMEM;
	*dptr = (uint64_t)(uintptr_t)p;
	return 0;
}

static void
cpu_free(struct backend_ctx *ctx, uint64_t dptr)
{
	rocmd_aligned_free((void *)(uintptr_t)dptr);
}

static int
cpu_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes)
{
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return 0;
}

static int
cpu_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes)
{
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return 0;
}

static int
cpu_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
	 const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	if (mod->plant == 2)
		raise(SIGSEGV);
	if (mod->plant == 3)
		for (;;)
			sleep(60);
	return cpu_gemm_run(p, &mod->prm, mod->uk, (const void *)(uintptr_t)bufs->a,
			    (const void *)(uintptr_t)bufs->b, (void *)(uintptr_t)bufs->c,
			    mod->plant == 1);
}

/* The trusted reference: one dot product per entry, accumulated in double. */
static int
cpu_gemm_reference(struct backend_ctx *ctx, const struct gemm_problem *p,
		   const struct gemm_bufs *bufs)
{
	gemm_host_reference(p, (const void *)(uintptr_t)bufs->a, (const void *)(uintptr_t)bufs->b,
			    (void *)(uintptr_t)bufs->c);
	return 0;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
cpu_event_create(struct backend_ctx *ctx, struct backend_event **out)
{
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? ROCMD_ENOMEM : 0;
}

static void
cpu_event_destroy(struct backend_ctx *ctx, struct backend_event *ev)
{
	free(ev);
}

/* The CPU GEMM runs synchronously, so the wall clock at record time is exact. */
static int
cpu_event_record(struct backend_ctx *ctx, struct backend_event *ev)
{
	ev->t = now_ms();
	return 0;
}

static int
cpu_event_elapsed(struct backend_ctx *ctx, struct backend_event *start, struct backend_event *end,
		  double *ms)
{
	*ms = end->t - start->t;
	return 0;
}

static int
cpu_synchronize(struct backend_ctx *ctx)
{
	return 0;
}

const struct backend_ops backend_cpu_ops = {
	.name = "cpu",
	.open = cpu_open,
	.close = cpu_close,
	.space = cpu_space,
	.kernel_source = cpu_kernel_source,
	.compile = cpu_compile,
	.module_unload = cpu_module_unload,
	.kernel_info = NULL,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.copy_h2d = cpu_copy_h2d,
	.copy_d2h = cpu_copy_d2h,
	.launch = NULL,
	.gemm = cpu_gemm,
	.gemm_reference = cpu_gemm_reference,
	.event_create = cpu_event_create,
	.event_destroy = cpu_event_destroy,
	.event_record = cpu_event_record,
	.event_elapsed = cpu_event_elapsed,
	.synchronize = cpu_synchronize,
};
