/*
 * gemm-cuda: the GEMM kernels of kernels/gpu/gemm.cu on an NVIDIA GPU, side by
 * side with cuBLAS in the same process, on the same inputs and the same
 * stream, timed the same way (device events around each launch, warm-up, the
 * median of many runs with p20/p80, inputs rotated past the L2 cache).
 *
 *   gemm-cuda check                       every path, dtype and transpose on odd
 *                                         shapes against a double host reference
 *   gemm-cuda sweep  --dtype D --trans TT --shape MxNxK [--only P=v,v ...]
 *                    [--max N] [--csv FILE]
 *                                         a landscape: every valid point of the
 *                                         (restricted) CUDA space, timed
 *   gemm-cuda tune   --dtype D --trans TT --shapes S1,S2,... [--only ...] [--max N]
 *                                         best point per shape vs the default
 *                                         point and cuBLAS
 *
 * The kernel runs through the CUDA backend (kernels/backend-cuda.c); libcuda,
 * NVRTC and cuBLAS are all dlopen'd. cuBLAS SGEMM runs in CUBLAS_DEFAULT_MATH
 * (no TF32); fp16/bf16 through cublasGemmEx with CUBLAS_COMPUTE_32F.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "kernels/backend-cuda.h"
#include "kernels/gemm.h"
#include "kernels/space.h"

/* ---------------------------------------------------------------- cuBLAS */

typedef struct cublasContext *cublasHandle_t;
static struct {
	void *lib;
	int (*create)(cublasHandle_t *);
	int (*set_math)(cublasHandle_t, int);
	int (*sgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
	             const float *, int, const float *, float *, int);
	int (*gemm_ex)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int,
	               int, const void *, int, int, const void *, void *, int, int, int, int);
	int (*version)(cublasHandle_t, int *);
	cublasHandle_t h;
} cb;

static int
cublas_open(void)
{
	static const char *const names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
	                                    "/usr/local/cuda/lib64/libcublas.so", NULL};
	const char *env = getenv("ROCMD_CUBLAS");
	int i, v = 0;

	if (env != NULL)
		cb.lib = dlopen(env, RTLD_NOW);
	for (i = 0; cb.lib == NULL && names[i] != NULL; i++)
		cb.lib = dlopen(names[i], RTLD_NOW);
	if (cb.lib == NULL) {
		fprintf(stderr, "gemm-cuda: cuBLAS not found: %s\n", dlerror());
		return -1;
	}
	*(void **)&cb.create = dlsym(cb.lib, "cublasCreate_v2");
	*(void **)&cb.set_math = dlsym(cb.lib, "cublasSetMathMode");
	*(void **)&cb.sgemm = dlsym(cb.lib, "cublasSgemm_v2");
	*(void **)&cb.gemm_ex = dlsym(cb.lib, "cublasGemmEx");
	*(void **)&cb.version = dlsym(cb.lib, "cublasGetVersion_v2");
	if (!cb.create || !cb.set_math || !cb.sgemm || !cb.gemm_ex || cb.create(&cb.h) != 0) {
		fprintf(stderr, "gemm-cuda: cuBLAS unusable\n");
		return -1;
	}
	/* CUBLAS_DEFAULT_MATH: SGEMM stays fp32 (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH). */
	cb.set_math(cb.h, 0);
	if (cb.version != NULL && cb.version(cb.h, &v) == 0)
		printf("cuBLAS %d, math mode CUBLAS_DEFAULT_MATH (no TF32)\n", v);
	return 0;
}

static int
cublas_gemm(const struct gemm_problem *p, const struct gemm_bufs *b)
{
	static const int cuda_type[] = {0 /* CUDA_R_32F */, 2 /* CUDA_R_16F */,
	                                14 /* CUDA_R_16BF */};
	float alpha = p->alpha, beta = p->beta;

	if (p->dtype == GEMM_FP32)
		return cb.sgemm(cb.h, p->ta, p->tb, (int)p->m, (int)p->n, (int)p->k, &alpha,
		                (const float *)(uintptr_t)b->a, (int)p->lda,
		                (const float *)(uintptr_t)b->b, (int)p->ldb, &beta,
		                (float *)(uintptr_t)b->c, (int)p->ldc);
	return cb.gemm_ex(cb.h, p->ta, p->tb, (int)p->m, (int)p->n, (int)p->k, &alpha,
	                  (const void *)(uintptr_t)b->a, cuda_type[p->dtype], (int)p->lda,
	                  (const void *)(uintptr_t)b->b, cuda_type[p->dtype], (int)p->ldb, &beta,
	                  (void *)(uintptr_t)b->c, cuda_type[p->dtype], (int)p->ldc,
	                  68 /* CUBLAS_COMPUTE_32F */, -1 /* CUBLAS_GEMM_DEFAULT */);
}

/* ----------------------------------------------------------------- state */

static const struct backend_ops *ops = &backend_cuda_ops;
static struct backend_ctx *ctx;
static struct backend_device_info dev;
static char *src;
static size_t src_len;
static int nthreads = 16;

#define MAX_SETS 16

/* One problem's operands: NSETS input/output sets on the device, rotated. */
struct operands {
	struct gemm_problem p;
	int nsets;
	struct gemm_bufs set[MAX_SETS];
	void *ha, *hb, *hc; /* host copies of set 0 */
	size_t ea, eb, ec;  /* bytes */
};

static void
die(const char *what, int r)
{
	fprintf(stderr, "gemm-cuda: %s: %s\n", what, rocmd_strerror(r));
	exit(1);
}

static void
operands_init(struct operands *o, const struct gemm_problem *p, uint64_t seed)
{
	size_t es = gemm_dtype_size(p->dtype);
	size_t total;
	int s, r;

	memset(o, 0, sizeof(*o));
	o->p = *p;
	o->ea = (size_t)gemm_elems_a(p) * es;
	o->eb = (size_t)gemm_elems_b(p) * es;
	o->ec = (size_t)gemm_elems_c(p) * es;
	total = o->ea + o->eb + o->ec;
	/* Enough sets that one pass over them is twice the L2. */
	o->nsets = (int)((2 * (size_t)dev.llc_bytes + total - 1) / total);
	if (o->nsets < 1)
		o->nsets = 1;
	if (o->nsets > MAX_SETS)
		o->nsets = MAX_SETS;
	o->ha = malloc(o->ea);
	o->hb = malloc(o->eb);
	o->hc = malloc(o->ec);
	if (!o->ha || !o->hb || !o->hc)
		die("host memory", ROCMD_ENOMEM);
	for (s = 0; s < o->nsets; s++) {
		gemm_fill_random(p->dtype, o->ha, (int64_t)(o->ea / es), seed + 3 * s);
		gemm_fill_random(p->dtype, o->hb, (int64_t)(o->eb / es), seed + 3 * s + 1);
		gemm_fill_random(p->dtype, o->hc, (int64_t)(o->ec / es), seed + 3 * s + 2);
		if ((r = ops->alloc(ctx, o->ea, &o->set[s].a)) < 0 ||
		    (r = ops->alloc(ctx, o->eb, &o->set[s].b)) < 0 ||
		    (r = ops->alloc(ctx, o->ec, &o->set[s].c)) < 0)
			die("device memory", r);
		ops->copy_h2d(ctx, o->set[s].a, o->ha, o->ea);
		ops->copy_h2d(ctx, o->set[s].b, o->hb, o->eb);
		ops->copy_h2d(ctx, o->set[s].c, o->hc, o->ec);
	}
	/* Leave set 0's host copies in ha/hb/hc (the last filled is set nsets-1: redo 0). */
	gemm_fill_random(p->dtype, o->ha, (int64_t)(o->ea / es), seed);
	gemm_fill_random(p->dtype, o->hb, (int64_t)(o->eb / es), seed + 1);
	gemm_fill_random(p->dtype, o->hc, (int64_t)(o->ec / es), seed + 2);
}

static void
operands_free(struct operands *o)
{
	int s;

	for (s = 0; s < o->nsets; s++) {
		ops->free(ctx, o->set[s].a);
		ops->free(ctx, o->set[s].b);
		ops->free(ctx, o->set[s].c);
	}
	free(o->ha);
	free(o->hb);
	free(o->hc);
}

/* Restores C of set 0 to its initial values (for checks with beta != 0). */
static void
operands_reset_c(struct operands *o)
{
	ops->copy_h2d(ctx, o->set[0].c, o->hc, o->ec);
}

/* ---------------------------------------------------------------- timing */

struct timing {
	double med, p20, p80;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A candidate: a compiled module, or NULL for cuBLAS. */
static int
run_one(struct backend_module *mod, const struct tune_config *cfg, struct operands *o, int set)
{
	if (mod == NULL)
		return cublas_gemm(&o->p, &o->set[set]) ? ROCMD_EIO : 0;
	return ops->gemm(ctx, mod, cfg, &o->p, &o->set[set]);
}

/*
 * Warm-up by time (at least WARM_MS and 2 runs), then REPS runs each between
 * its own pair of events, rotating the input sets. 0 or a negative code.
 */
static int
time_candidate(struct backend_module *mod, const struct tune_config *cfg, struct operands *o,
               int reps, double warm_ms, struct timing *t)
{
	static struct backend_event *ev[2 * 512];
	static int nev;
	double ms[512], one = 0;
	int i, r, runs = 0;

	if (reps > 512)
		reps = 512;
	while (nev < 2 * reps)
		if ((r = ops->event_create(ctx, &ev[nev++])) < 0)
			return r;
	/* Warm-up: time one run, then repeat until WARM_MS has passed on the device. */
	ops->event_record(ctx, ev[0]);
	if ((r = run_one(mod, cfg, o, 0)) < 0)
		return r;
	ops->event_record(ctx, ev[1]);
	if ((r = ops->event_elapsed(ctx, ev[0], ev[1], &one)) < 0)
		return r;
	runs = one > 0 ? (int)(warm_ms / one) : 2;
	if (runs < 2)
		runs = 2;
	if (runs > 1000)
		runs = 1000;
	for (i = 0; i < runs; i++)
		if ((r = run_one(mod, cfg, o, i % o->nsets)) < 0)
			return r;
	for (i = 0; i < reps; i++) {
		ops->event_record(ctx, ev[2 * i]);
		if ((r = run_one(mod, cfg, o, (i + 1) % o->nsets)) < 0)
			return r;
		ops->event_record(ctx, ev[2 * i + 1]);
	}
	for (i = 0; i < reps; i++)
		if ((r = ops->event_elapsed(ctx, ev[2 * i], ev[2 * i + 1], &ms[i])) < 0)
			return r;
	qsort(ms, (size_t)reps, sizeof(double), cmp_double);
	t->med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
	t->p20 = ms[(reps - 1) / 5];
	t->p80 = ms[(4 * (reps - 1)) / 5];
	return 0;
}

/*
 * Runs the candidate once on set 0 and checks the result on sampled entries
 * against the double host reference, plus every entry for NaN/Inf.
 * 1 right, 0 wrong, negative on a launch error.
 */
static int
check_candidate(struct backend_module *mod, const struct tune_config *cfg, struct operands *o,
                int samples, double *worst)
{
	void *out = malloc(o->ec);
	int64_t bad, i, n = (int64_t)(o->ec / gemm_dtype_size(o->p.dtype));
	int r;

	if (out == NULL)
		return ROCMD_ENOMEM;
	operands_reset_c(o);
	if ((r = run_one(mod, cfg, o, 0)) < 0 || (r = ops->synchronize(ctx)) < 0 ||
	    (r = ops->copy_d2h(ctx, out, o->set[0].c, o->ec)) < 0) {
		free(out);
		return r;
	}
	bad = gemm_check(&o->p, o->ha, o->hb, o->hc, out, 2e7, samples, 99, worst);
	/* No NaN or Inf anywhere (the inputs make none): exponent bits all ones. */
	if (o->p.dtype == GEMM_FP32) {
		const uint32_t *u = out;

		for (i = 0; i < n && !bad; i++)
			bad = (u[i] & 0x7f800000u) == 0x7f800000u;
	} else {
		const uint16_t *u = out;
		uint16_t e = o->p.dtype == GEMM_FP16 ? 0x7c00 : 0x7f80;

		for (i = 0; i < n && !bad; i++)
			bad = (u[i] & e) == e;
	}
	free(out);
	return bad == 0;
}

/* ------------------------------------------------------------ candidates */

struct cand {
	struct space_point pt;
	struct tune_config cfg;
	char key[SPACE_KEY_MAX];
	char *cubin;
	size_t cubin_len;
	int compile_rc;
	char log[512];
	struct backend_module *mod;
	/* per problem, filled by tune */
	int outcome; /* 0 ok, 1 compile, 2 launch, 3 wrong, 4 ruled out */
	struct timing t;
};

static const char *const outcome_name[] = {"ok", "compile_failed", "launch_failed", "wrong_result",
                                           "ruled_out"};

struct compile_job {
	struct cand *c;
	int n;
	const struct space_def *s;
	int next;
	pthread_mutex_t lock;
};

static uint64_t
fnv(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* An on-disk cubin cache ($ROCMD_CUBIN_CACHE), keyed by source, defines and arch. */
static int
cache_path(const char *const *defs, int nd, char *path, size_t len)
{
	const char *dir = getenv("ROCMD_CUBIN_CACHE");
	uint64_t h;
	int i;

	if (dir == NULL || *dir == '\0')
		return -1;
	h = fnv(src, src_len, 0xcbf29ce484222325ULL);
	h = fnv(dev.arch, strlen(dev.arch), h);
	for (i = 0; i < nd; i++)
		h = fnv(defs[i], strlen(defs[i]) + 1, h);
	snprintf(path, len, "%s/%016" PRIx64 ".cubin", dir, h);
	return 0;
}

static int
cache_get(const char *const *defs, int nd, char **cubin, size_t *n)
{
	char path[512];
	FILE *f;
	long sz;

	if (cache_path(defs, nd, path, sizeof(path)) < 0 || (f = fopen(path, "rb")) == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	rewind(f);
	*cubin = sz > 0 ? malloc((size_t)sz) : NULL;
	if (*cubin == NULL || fread(*cubin, 1, (size_t)sz, f) != (size_t)sz) {
		free(*cubin);
		*cubin = NULL;
		fclose(f);
		return -1;
	}
	fclose(f);
	*n = (size_t)sz;
	return 0;
}

static void
cache_put(const char *const *defs, int nd, const char *cubin, size_t n)
{
	char path[512], tmp[600];
	FILE *f;

	if (cache_path(defs, nd, path, sizeof(path)) < 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%lu.tmp", path, (unsigned long)pthread_self());
	f = fopen(tmp, "wb");
	if (f == NULL)
		return;
	if (fwrite(cubin, 1, n, f) == n && fclose(f) == 0)
		rename(tmp, path);
	else
		remove(tmp);
}

static void *
compile_worker(void *arg)
{
	struct compile_job *j = arg;

	for (;;) {
		char store[SPACE_MAX_PARAMS][40];
		const char *defs[SPACE_MAX_PARAMS];
		struct cand *c;
		int i, nd;

		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			return NULL;
		c = &j->c[i];
		nd = space_defines(j->s, &c->pt, store, defs);
		if (cache_get(defs, nd, &c->cubin, &c->cubin_len) == 0) {
			c->compile_rc = 0;
			continue;
		}
		c->compile_rc = backend_cuda_nvrtc(ctx, src, src_len, defs, nd, &c->cubin,
		                                   &c->cubin_len, c->log, sizeof(c->log));
		if (c->compile_rc == 0)
			cache_put(defs, nd, c->cubin, c->cubin_len);
	}
}

/* Compiles (NVRTC on NTHREADS threads) and loads every candidate. */
static void
compile_all(const struct space_def *s, struct cand *c, int n)
{
	struct compile_job j = {.c = c, .n = n, .s = s, .next = 0};
	pthread_t th[64];
	int i, nt = nthreads < 64 ? nthreads : 64, ok = 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_init(&j.lock, NULL);
	for (i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, compile_worker, &j);
	for (i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++) {
		if (c[i].compile_rc == 0) {
			int64_t v[SPACE_MAX_PARAMS];

			space_point_values(s, &c[i].pt, v);
			c[i].compile_rc =
			    backend_cuda_load(ctx, c[i].cubin, (int)v[space_param_index(s, "GSU")],
			                      &c[i].mod, c[i].log, sizeof(c[i].log));
		}
		free(c[i].cubin);
		c[i].cubin = NULL;
		ok += c[i].compile_rc == 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("compiled %d of %d candidates in %.1f s on %d threads\n", ok, n,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, nt);
}

/* --only NAME=v1,v2: restricts a copy of the space to those values. */
static int
restrict_space(struct space_def *s, const char *spec)
{
	char name[SPACE_NAME_MAX], *end;
	const char *eq = strchr(spec, '='), *q;
	struct space_param *sp;
	int64_t keep[SPACE_MAX_VALUES];
	int nk = 0, i, k, dflt = 0;

	if (eq == NULL || (size_t)(eq - spec) >= sizeof(name))
		return -1;
	memcpy(name, spec, (size_t)(eq - spec));
	name[eq - spec] = '\0';
	i = space_param_index(s, name);
	if (i < 0)
		return -1;
	sp = &s->params[i];
	for (q = eq + 1; *q != '\0' && nk < SPACE_MAX_VALUES;) {
		int64_t v = strtoll(q, &end, 10);

		if (end == q)
			return -1;
		for (k = 0; k < sp->nvalues; k++)
			if (sp->values[k] == v)
				break;
		if (k == sp->nvalues)
			return -1;
		if (k == sp->dflt)
			dflt = nk;
		keep[nk++] = v;
		q = *end == ',' ? end + 1 : end;
	}
	if (nk == 0)
		return -1;
	memcpy(sp->values, keep, sizeof(int64_t) * (size_t)nk);
	sp->nvalues = nk;
	sp->dflt = dflt;
	return 0;
}

static uint64_t
mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Points of S valid for at least one problem in P (constraint predicate with
 * the device), at most MAX (a seeded random subset), the default point first.
 */
static struct cand *
enumerate(const struct space_def *s, const struct gemm_problem *p, int np, int max, int *count,
          int *ruled)
{
	uint64_t size = space_size(s), i, seed = 12345;
	struct cand *c = NULL;
	struct space_point dp;
	int n = 0, cap = 0, k, valid;
	char why[128];

	*ruled = 0;
	space_point_default(s, &dp);
	for (i = 0; i <= size; i++) {
		struct space_point pt;

		if (i == size)
			break;
		space_point_from_index(s, i, &pt);
		valid = 0;
		for (k = 0; k < np && !valid; k++)
			valid = space_valid(s, &pt, &p[k], &dev, why, sizeof(why));
		if (!valid) {
			(*ruled)++;
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			c = realloc(c, sizeof(*c) * (size_t)cap);
		}
		memset(&c[n], 0, sizeof(c[n]));
		c[n].pt = pt;
		n++;
	}
	/* The default point goes first when it is valid, even if the restriction dropped it. */
	for (k = 0; k < n; k++)
		if (!memcmp(&c[k].pt, &dp, sizeof(dp))) {
			struct cand t = c[0];

			c[0] = c[k];
			c[k] = t;
			break;
		}
	/* Seeded Fisher-Yates over the rest, then cut. */
	if (max > 0 && n > max) {
		for (k = n - 1; k > 1; k--) {
			int j = 1 + (int)(mix(&seed) % (uint64_t)k);
			struct cand t = c[k];

			c[k] = c[j];
			c[j] = t;
		}
		n = max;
	}
	for (k = 0; k < n; k++) {
		space_config(s, &c[k].pt, &c[k].cfg);
		space_key(s, &c[k].pt, c[k].key, sizeof(c[k].key));
	}
	*count = n;
	return c;
}

/* A point of S from a "NAME=v;NAME=v" text over its default; 0 or -1. */
static int
point_parse(const struct space_def *s, const char *text, struct space_point *pt)
{
	char buf[SPACE_KEY_MAX], *tok, *save = NULL;

	space_point_default(s, pt);
	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');
		int pi, vi;

		if (eq == NULL)
			return -1;
		*eq = '\0';
		pi = space_param_index(s, tok);
		if (pi < 0)
			return -1;
		for (vi = 0; vi < s->params[pi].nvalues; vi++)
			if (s->params[pi].values[vi] == atoll(eq + 1))
				break;
		if (vi == s->params[pi].nvalues)
			return -1;
		pt->idx[pi] = (uint8_t)vi;
	}
	return 0;
}

/* Candidates from a file of configuration keys, one per line (a landscape's best). */
static struct cand *
read_keys(const struct space_def *s, const char *path, int *count, int *bad)
{
	FILE *f = fopen(path, "r");
	struct cand *c = NULL;
	char line[SPACE_KEY_MAX];
	int n = 0;

	*count = 0;
	*bad = 0;
	if (f == NULL) {
		perror(path);
		return NULL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		struct space_point pt;

		line[strcspn(line, ",\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		if (point_parse(s, line, &pt) < 0) {
			(*bad)++;
			continue;
		}
		c = realloc(c, sizeof(*c) * (size_t)(n + 1));
		memset(&c[n], 0, sizeof(c[n]));
		c[n].pt = pt;
		space_config(s, &pt, &c[n].cfg);
		space_key(s, &pt, c[n].key, sizeof(c[n].key));
		n++;
	}
	fclose(f);
	*count = n;
	return c;
}

/* ------------------------------------------------------------------ modes */

static void
problem_for(struct gemm_problem *p, enum gemm_dtype dt, const char *trans, int64_t m, int64_t n,
            int64_t k)
{
	gemm_problem_init(p, dt, trans[0] == 'T' ? GEMM_T : GEMM_N,
	                  trans[1] == 'T' ? GEMM_T : GEMM_N, m, n, k, 1);
	/* The mma path's cp.async wants 16-byte rows: pad ld of a 1-row operand to 8. */
	if (p->lda < 8)
		p->lda = 8;
	if (p->ldb < 8)
		p->ldb = 8;
	p->stride_a = p->lda * (p->ta ? m : k);
	p->stride_b = p->ldb * (p->tb ? k : n);
}

static double
tflops(const struct gemm_problem *p, double ms)
{
	return gemm_flops(p) / (ms * 1e-3) / 1e12;
}

/* check: every path, dtype and transpose on odd shapes, alpha/beta, batch. */
static int
mode_check(void)
{
	static const char *const cfgs[] = {
	    "", /* the default point */
	    "MC=0;MT0=128;MT1=128;DU=8;TT0=8;TT1=8;VW=4;PGR=1;LDSPAD=4",
	    "MC=0;MT0=32;MT1=64;DU=16;TT0=2;TT1=4;VW=2;PGR=0;GSU=4",
	    "MC=0;MT0=16;MT1=128;DU=32;TT0=1;TT1=8;VW=1;GSU=2;GROUP=4",
	    "MC=0;MT0=8;MT1=128;DU=16;TT0=1;TT1=4;VW=4;GSU=4",
	    "MC=0;MT0=128;MT1=256;DU=8;TT0=16;TT1=8;VW=4;LDSPAD=4;GROUP=8;PLR=1",
	    "MC=1;MT0=128;MT1=128;DU=32;WM=2;WN=2;STAGES=3;SWZ=1",
	    "MC=1;MT0=64;MT1=256;DU=64;WM=1;WN=4;STAGES=4;SWZ=0;LDSPAD=8;GSU=2;GROUP=4",
	    "MC=1;MT0=16;MT1=64;DU=32;WM=1;WN=2;STAGES=5;SWZ=1;GSU=8",
	    "MC=1;MT0=256;MT1=128;DU=32;WM=4;WN=2;STAGES=4;SWZ=1;GROUP=8",
	    "MC=1;MT0=128;MT1=256;DU=64;WM=2;WN=4;STAGES=4;SWZ=1;PLR=1;GROUP=8",
	    "MC=0;MT0=128;MT1=128;DU=8;TT0=8;TT1=8;VW=4;PGR=1;LDSPAD=4;WL=1;MINB=2",
	    /* (GROUP=8 needs 8 M-tiles: none of the shapes below has them) */
	    "MC=0;MT0=128;MT1=128;DU=16;TT0=8;TT1=8;VW=4;PGR=1;LDSPAD=4;MINB=2",
	    "MC=0;MT0=128;MT1=256;DU=8;TT0=16;TT1=8;VW=4;PGR=1;LDSPAD=4",
	    "MC=0;MT0=128;MT1=128;DU=8;TT0=8;TT1=8;VW=4;PGR=1;LDSPAD=4;MINB=2;PLR=1",
	    "MC=0;MT0=64;MT1=128;DU=8;TT0=4;TT1=8;VW=2;PGR=0;LDSPAD=0",
	    /* PLR 2 (fragments prefetched across k-tiles), and the sm_90 fp32 winner */
	    "MC=0;MT0=64;MT1=64;DU=8;TT0=4;TT1=4;VW=4;PGR=1;PLR=2;GSU=2",
	    "MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;VW=4;PGR=1;LDSPAD=0;PLR=2;WL=1",
	    "MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;VW=4;PGR=1;LDSPAD=0;PLR=1",
	    /* PGR 2: cp.async stages (fp32; the space drops it for fp16/bf16) */
	    "MC=0;MT0=256;MT1=128;DU=16;TT0=8;TT1=16;VW=4;PGR=2;STAGES=3;LDSPAD=0;PLR=1",
	    "MC=0;MT0=64;MT1=64;DU=16;TT0=4;TT1=4;VW=4;PGR=2;STAGES=2;LDSPAD=4;GSU=2",
	    "MC=0;MT0=32;MT1=64;DU=8;TT0=4;TT1=4;VW=4;PGR=2;STAGES=4;WL=1",
	    /* SK 1: stream-K, the grid sized to the device, tiles shared along K */
	    "MC=0;MT0=256;MT1=128;DU=16;TT0=16;TT1=8;VW=4;PGR=2;STAGES=2;LDSPAD=4;WL=1;SK=1",
	    "MC=0;MT0=64;MT1=64;DU=8;TT0=4;TT1=4;VW=4;PGR=1;SK=1",
	    "MC=0;MT0=32;MT1=64;DU=16;TT0=4;TT1=4;VW=4;PGR=1;PLR=2;MINB=2;SK=1",
	    /* exactly 48 KiB of stages plus stream-K's static flag: must opt in */
	    "MC=0;MT0=256;MT1=128;DU=16;TT0=16;TT1=4;VW=4;PGR=2;STAGES=2;LDSPAD=0;WL=1;SK=1",
	    /* GEMV (GV=1): vector and scalar loads, K tails, split-K, rows past M */
	    "MC=0;GV=1;MT0=1;MT1=32;TT1=4;DU=8;VW=4",
	    "MC=0;GV=1;MT0=8;MT1=16;TT1=2;DU=16;VW=8;GSU=4",
	    "MC=0;GV=1;MT0=4;MT1=64;TT1=8;DU=8;VW=2;GSU=2",
	    "MC=0;GV=1;MT0=2;MT1=8;TT1=1;DU=8;VW=1;MINB=2",
	    /* wgmma (sm_90 only; elsewhere the space check drops them) */
	    "MC=2;MT0=128;MT1=128;DU=64;WM=1;WN=2;STAGES=4;SWZ=1",
	    "MC=2;MT0=64;MT1=64;DU=64;WM=1;WN=1;STAGES=3;SWZ=1;GSU=4",
	    "MC=2;MT0=256;MT1=128;DU=64;WM=1;WN=2;STAGES=3;SWZ=1;GROUP=8",
	    "MC=2;MT0=128;MT1=256;DU=64;WM=1;WN=4;STAGES=3;SWZ=1;MINB=1",
	};
	enum { NC = sizeof(cfgs) / sizeof(cfgs[0]) };
	static const int64_t shapes[][3] = {
	    {77, 93, 61}, {128, 256, 512}, {1, 300, 1000}, {200, 8, 136}, {136, 200, 88}};
	enum { NSH = sizeof(shapes) / sizeof(shapes[0]) };
	const char *trs[] = {"NN", "NT", "TN", "TT"};
	int failed = 0, total = 0;
	int dt, tr, c, sh;

	for (dt = 0; dt < 3; dt++)
		for (tr = 0; tr < 4; tr++) {
			struct gemm_problem p0;
			struct space_def s;
			struct cand cand[NC];
			int nc = 0;
			char why[128];

			problem_for(&p0, (enum gemm_dtype)dt, trs[tr], 64, 64, 64);
			backend_cuda_space_for(&s, &p0, dev.matrix_cores, 1);
			memset(cand, 0, sizeof(cand));
			for (c = 0; c < NC; c++) {
				if (point_parse(&s, cfgs[c], &cand[nc].pt) < 0 ||
				    !space_valid(&s, &cand[nc].pt, NULL, &dev, why, sizeof(why)))
					continue;
				space_config(&s, &cand[nc].pt, &cand[nc].cfg);
				space_key(&s, &cand[nc].pt, cand[nc].key, sizeof(cand[nc].key));
				nc++;
			}
			compile_all(&s, cand, nc);
			for (sh = 0; sh < NSH; sh++) {
				struct gemm_problem p;
				struct operands o;
				double worst;

				problem_for(&p, (enum gemm_dtype)dt, trs[tr], shapes[sh][0],
				            shapes[sh][1], shapes[sh][2]);
				if (sh == 1) {
					/* Padded leading dimensions and a batch of 3. */
					p.lda += 8;
					p.ldb += 16;
					p.ldc += 3;
					p.batch = 3;
					p.stride_a = p.lda * (p.ta ? p.m : p.k) + 8;
					p.stride_b = p.ldb * (p.tb ? p.k : p.n) + 16;
					p.stride_c = p.ldc * p.n + 5;
				}
				p.alpha = 0.75f;
				p.beta = sh == 3 ? 0.0f : -0.5f;
				operands_init(&o, &p, 1000 + dt * 100 + tr * 10 + sh);
				for (c = 0; c < nc; c++) {
					char pk[64];
					int ok;

					if (!space_valid(&s, &cand[c].pt, &p, &dev, why,
					                 sizeof(why)))
						continue;
					total++;
					gemm_problem_key(&p, pk, sizeof(pk));
					if (cand[c].compile_rc < 0) {
						printf("FAIL compile %s\n%s\n", cand[c].key,
						       cand[c].log);
						failed++;
						continue;
					}
					ok = check_candidate(cand[c].mod, &cand[c].cfg, &o, 300,
					                     &worst);
					if (ok != 1) {
						printf("FAIL %s %s %s (worst error %g, rc %d)\n",
						       ok < 0 ? "launch" : "wrong", pk, cand[c].key,
						       worst, ok);
						failed++;
						if (ok < 0)
							exit(1);
					}
				}
				operands_free(&o);
			}
			for (c = 0; c < nc; c++)
				if (cand[c].mod != NULL)
					ops->module_unload(ctx, cand[c].mod);
		}
	printf("check: %d of %d (problem, config) pairs failed\n", failed, total);
	return failed ? 1 : 0;
}

/*
 * Screens CAND on O: check once, time with few reps; fills outcome and t.
 * The first candidate is the default point: it runs even where the shape
 * rules would prune it.
 */
static void
screen(struct cand *c, int n, struct operands *o, int reps, FILE *csv)
{
	int i;

	for (i = 0; i < n; i++) {
		double worst = 0;
		char why[128];
		int ok;

		c[i].outcome = 0;
		memset(&c[i].t, 0, sizeof(c[i].t));
		if (!space_valid(c[i].cfg.space, &c[i].pt, i == 0 ? NULL : &o->p, &dev, why,
		                 sizeof(why))) {
			c[i].outcome = 4;
		} else if (c[i].compile_rc < 0) {
			c[i].outcome = 1;
		} else if ((ok = check_candidate(c[i].mod, &c[i].cfg, o, 64, &worst)) < 0) {
			c[i].outcome = 2;
		} else if (ok == 0) {
			c[i].outcome = 3;
		} else if (time_candidate(c[i].mod, &c[i].cfg, o, reps, 5.0, &c[i].t) < 0) {
			c[i].outcome = 2;
		}
		if (c[i].outcome == 2) {
			fprintf(stderr,
			        "gemm-cuda: launch failed for %s; the context may be lost\n",
			        c[i].key);
			exit(1);
		}
		if (csv != NULL) {
			if (c[i].outcome == 0)
				fprintf(csv, "%s,ok,%.6f,%.6f,%.6f,%.2f\n", c[i].key, c[i].t.med,
				        c[i].t.p20, c[i].t.p80,
				        gemm_flops(&o->p) / (c[i].t.med * 1e6));
			else
				fprintf(csv, "%s,%s,,,,\n", c[i].key, outcome_name[c[i].outcome]);
		}
	}
}

static int
cmp_cand_time(const void *a, const void *b)
{
	const struct cand *x = *(struct cand *const *)a, *y = *(struct cand *const *)b;
	double tx = x->outcome ? 1e30 : x->t.med, ty = y->outcome ? 1e30 : y->t.med;

	return tx < ty ? -1 : tx > ty;
}

struct opts {
	enum gemm_dtype dt;
	char trans[3];
	char shapes[1024];
	char only[16][160];
	int nonly;
	int max;
	int reps;
	int top;
	const char *csv;
	const char *tag;
	const char *keys;
	int no_default;
};

static int
parse_shape(const char *s, int64_t *m, int64_t *n, int64_t *k)
{
	int64_t b;

	return gemm_shape_parse(s, m, n, k, &b);
}

/*
 * tune / sweep: enumerate the (restricted) space, compile, then per shape:
 * screen everything, re-time the top few interleaved with the default point
 * and cuBLAS, print the figures.
 */
static int
mode_tune(struct opts *op, int sweep)
{
	struct gemm_problem p[32];
	char shape_txt[32][32];
	int np = 0, i, n, ruled, s;
	struct space_def sp;
	struct cand *c;
	char buf[1024], *tok, *save = NULL;
	FILE *csv = NULL;
	double geo_tuned = 0, geo_dflt = 0;
	int geo_n = 0;
	struct space_def *keep = NULL; /* the full space, when its default point was added */

	snprintf(buf, sizeof(buf), "%s", op->shapes);
	for (tok = strtok_r(buf, ",", &save); tok && np < 32; tok = strtok_r(NULL, ",", &save)) {
		int64_t m, nn, k;

		if (parse_shape(tok, &m, &nn, &k) < 0) {
			fprintf(stderr, "gemm-cuda: bad shape %s\n", tok);
			return 2;
		}
		problem_for(&p[np], op->dt, op->trans, m, nn, k);
		snprintf(shape_txt[np], sizeof(shape_txt[np]), "%s", tok);
		np++;
	}
	if (np == 0)
		return 2;
	backend_cuda_space_for(&sp, &p[0], dev.matrix_cores, 1);
	for (i = 0; i < op->nonly; i++)
		if (restrict_space(&sp, op->only[i]) < 0) {
			fprintf(stderr, "gemm-cuda: bad --only %s\n", op->only[i]);
			return 2;
		}
	/* Candidates valid for every shape; the default point of the full space goes first. */
	{
		struct space_def full;
		struct space_point dp;
		int64_t dv[SPACE_MAX_PARAMS];

		backend_cuda_space_for(&full, &p[0], dev.matrix_cores, 1);
		space_point_default(&full, &dp);
		space_point_values(&full, &dp, dv);
		if (op->keys != NULL)
			c = read_keys(&sp, op->keys, &n, &ruled);
		else
			c = enumerate(&sp, p, np, op->max, &n, &ruled);
		if (c == NULL)
			return 1;
		/* Put the full space's default first, adding it when the restriction dropped it. */
		for (i = 0; i < n; i++) {
			int64_t v[SPACE_MAX_PARAMS];

			space_point_values(&sp, &c[i].pt, v);
			if (!memcmp(v, dv, sizeof(int64_t) * (size_t)sp.nparams))
				break;
		}
		if (op->no_default) {
			/* Profiling: launch only the listed points. */
		} else if (i < n) {
			struct cand t = c[0];

			c[0] = c[i];
			c[i] = t;
		} else {
			keep = malloc(sizeof(*keep));
			*keep = full;
			c = realloc(c, sizeof(*c) * (size_t)(n + 1));
			memmove(&c[1], &c[0], sizeof(*c) * (size_t)n);
			memset(&c[0], 0, sizeof(c[0]));
			c[0].pt = dp;
			space_config(keep, &dp, &c[0].cfg);
			space_key(keep, &dp, c[0].key, sizeof(c[0].key));
			n++;
		}
	}
	printf("%s %s: space %" PRIu64 " points after --only, %d ruled out, %d candidates\n",
	       gemm_dtype_name(op->dt), op->trans, space_size(&sp), ruled, n);
	if (keep != NULL) {
		compile_all(keep, c, 1);
		compile_all(&sp, c + 1, n - 1);
	} else {
		compile_all(&sp, c, n);
	}
	if (sweep && op->csv != NULL) {
		csv = fopen(op->csv, "w");
		if (csv == NULL) {
			perror(op->csv);
			return 1;
		}
		/* The tuner's landscape format (kernels/landscape.c): header, then one line a
		 * point. */
		{
			char pk[64], line[512];
			uint64_t h = fnv(src, src_len, 0xcbf29ce484222325ULL);

			gemm_problem_key(&p[0], pk, sizeof(pk));
			fprintf(csv, "# rocmd-landscape 1\n# backend=cuda\n# device=%s|%s|%d\n",
			        dev.arch, dev.name, dev.compute_units);
			fprintf(csv, "# software=%s|%s|%016" PRIx64 "\n# problem=%s\n# space=%s\n",
			        dev.driver_version, dev.compiler_version, h, pk, sp.name);
			for (i = 0; i < sp.nparams; i++)
				if (space_param_line(&sp.params[i], line, sizeof(line)) >= 0)
					fprintf(csv, "# param=%s\n", line);
		}
		fprintf(csv, "config,outcome,median_ms,p20_ms,p80_ms,gflops\n");
	}
	for (s = 0; s < np; s++) {
		struct operands o;
		struct cand **order = malloc(sizeof(*order) * (size_t)n);
		struct timing tb, tt, td;
		int k, top = op->top, best = -1;
		double best_ms = 1e30;
		char pk[64];

		operands_init(&o, &p[s], 777 + s);
		gemm_problem_key(&p[s], pk, sizeof(pk));
		screen(c, n, &o, op->reps, csv);
		for (i = 0; i < n; i++)
			order[i] = &c[i];
		qsort(order, (size_t)n, sizeof(*order), cmp_cand_time);
		if (top > n)
			top = n;
		/* Re-time the top few, the default and cuBLAS, interleaved, three rounds. */
		double acc_ms[64] = {0}, cub_ms = 0, dfl_ms = 0;
		int rounds = 3;
		for (k = 0; k < rounds; k++) {
			for (i = 0; i < top && i < 64; i++) {
				if (order[i]->outcome != 0)
					continue;
				time_candidate(order[i]->mod, &order[i]->cfg, &o, 30, 20.0, &tt);
				acc_ms[i] += tt.med / rounds;
			}
			time_candidate(NULL, NULL, &o, 30, 20.0, &tb);
			cub_ms += tb.med / rounds;
			if (c[0].outcome == 0) {
				time_candidate(c[0].mod, &c[0].cfg, &o, 30, 20.0, &td);
				dfl_ms += td.med / rounds;
			}
		}
		for (i = 0; i < top && i < 64; i++)
			if (order[i]->outcome == 0 && acc_ms[i] < best_ms) {
				best_ms = acc_ms[i];
				best = i;
			}
		{
			/* cuBLAS on the same inputs must itself pass the check. */
			double worst = 0;
			int okc = check_candidate(NULL, NULL, &o, 64, &worst);

			printf("\n[%s] %s  (%d input sets)  cuBLAS check: %s\n",
			       op->tag ? op->tag : "", pk, o.nsets, okc == 1 ? "ok" : "WRONG");
		}
		printf("  cuBLAS   %9.4f ms  %8.2f TFLOP/s\n", cub_ms, tflops(&p[s], cub_ms));
		if (c[0].outcome == 0)
			printf("  default  %9.4f ms  %8.2f TFLOP/s  %.3fx cuBLAS   %s\n", dfl_ms,
			       tflops(&p[s], dfl_ms), cub_ms / dfl_ms, c[0].key);
		if (best >= 0) {
			printf("  tuned    %9.4f ms  %8.2f TFLOP/s  %.3fx cuBLAS  %.2fx default   "
			       "%s\n",
			       best_ms, tflops(&p[s], best_ms), cub_ms / best_ms,
			       c[0].outcome == 0 ? dfl_ms / best_ms : 0.0, order[best]->key);
			printf("RESULT %s %s shape=%s cublas_ms=%.5f default_ms=%.5f tuned_ms=%.5f "
			       "ratio=%.4f speedup=%.4f cfg=%s\n",
			       op->tag ? op->tag : "-", pk, shape_txt[s], cub_ms, dfl_ms, best_ms,
			       cub_ms / best_ms, dfl_ms > 0 ? dfl_ms / best_ms : 0,
			       order[best]->key);
			geo_tuned += log(cub_ms / best_ms);
			if (dfl_ms > 0)
				geo_dflt += log(dfl_ms / best_ms);
			geo_n++;
		}
		{
			int counts[5] = {0};

			for (i = 0; i < n; i++)
				counts[c[i].outcome]++;
			printf("  outcomes: %d ok, %d compile failed, %d wrong, %d launch failed, "
			       "%d ruled out\n",
			       counts[0], counts[1], counts[3], counts[2], counts[4]);
			for (i = 0; i < n; i++)
				if (c[i].outcome == 1 || c[i].outcome == 3) {
					printf("  first failure: %s %s\n%s\n",
					       outcome_name[c[i].outcome], c[i].key, c[i].log);
					break;
				}
			printf("  screen top 5:");
			for (i = 0; i < 5 && i < n; i++)
				if (order[i]->outcome == 0)
					printf(" %.4f", order[i]->t.med);
			printf(" ms\n");
		}
		free(order);
		operands_free(&o);
		fflush(stdout);
	}
	if (geo_n > 1)
		printf("\nGEOMEAN [%s] %s %s over %d shapes: tuned/cuBLAS %.3f, tuned/default "
		       "speed-up %.3f\n",
		       op->tag ? op->tag : "-", gemm_dtype_name(op->dt), op->trans, geo_n,
		       exp(geo_tuned / geo_n), exp(geo_dflt / geo_n));
	if (csv != NULL)
		fclose(csv);
	for (i = 0; i < n; i++)
		if (c[i].mod != NULL)
			ops->module_unload(ctx, c[i].mod);
	free(c);
	free(keep);
	return 0;
}

static void
usage(void)
{
	fprintf(
	    stderr,
	    "usage: gemm-cuda check\n"
	    "       gemm-cuda sweep|tune --dtype fp32|fp16|bf16 --trans NN --shapes MxNxK[,...]\n"
	    "                 [--only NAME=v,v ...] [--max N] [--reps N] [--top N] [--csv FILE]\n"
	    "                 [--keys FILE] [--no-default 1] [--tag TEXT] [--threads N]\n");
}

int
main(int argc, char **argv)
{
	struct opts op;
	char why[256];
	int i, r;

	if (argc < 2) {
		usage();
		return 2;
	}
	memset(&op, 0, sizeof(op));
	op.dt = GEMM_FP32;
	snprintf(op.trans, sizeof(op.trans), "NN");
	op.reps = 7;
	op.top = 6;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL) {
			usage();
			return 2;
		}
		if (!strcmp(a, "--dtype")) {
			if (gemm_dtype_parse(v, &op.dt) < 0)
				return 2;
		} else if (!strcmp(a, "--trans")) {
			snprintf(op.trans, sizeof(op.trans), "%s", v);
		} else if (!strcmp(a, "--shapes") || !strcmp(a, "--shape")) {
			snprintf(op.shapes, sizeof(op.shapes), "%s", v);
		} else if (!strcmp(a, "--only")) {
			if (op.nonly < 16)
				snprintf(op.only[op.nonly++], sizeof(op.only[0]), "%s", v);
		} else if (!strcmp(a, "--max")) {
			op.max = atoi(v);
		} else if (!strcmp(a, "--reps")) {
			op.reps = atoi(v);
		} else if (!strcmp(a, "--top")) {
			op.top = atoi(v);
		} else if (!strcmp(a, "--csv")) {
			op.csv = v;
		} else if (!strcmp(a, "--no-default")) {
			op.no_default = atoi(v);
		} else if (!strcmp(a, "--keys")) {
			op.keys = v;
		} else if (!strcmp(a, "--tag")) {
			op.tag = v;
		} else if (!strcmp(a, "--threads")) {
			nthreads = atoi(v);
		} else {
			usage();
			return 2;
		}
		i++;
	}
	r = ops->open(0, &ctx, &dev, why, sizeof(why));
	if (r < 0) {
		printf("gemm-cuda: %s\n", why);
		return r == ROCMD_EUNSUPPORTED ? 77 : 1;
	}
	printf("device: %s (%s), %d SMs, L2 %" PRId64 " MiB, %s, %s\n", dev.name, dev.arch,
	       dev.compute_units, dev.llc_bytes >> 20, dev.driver_version, dev.compiler_version);
	src = backend_cuda_source(&src_len);
	if (cublas_open() < 0)
		return 1;
	if (!strcmp(argv[1], "check"))
		r = mode_check();
	else if (!strcmp(argv[1], "sweep"))
		r = mode_tune(&op, 1);
	else if (!strcmp(argv[1], "tune"))
		r = mode_tune(&op, 0);
	else {
		usage();
		r = 2;
	}
	ops->close(ctx);
	free(src);
	return r;
}
