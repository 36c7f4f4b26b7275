/*
 * Every GEMM kernel path on an NVIDIA GPU against a double-precision host
 * reference: the FMA path with register staging and with cp.async stages,
 * GEMV, split-K, stream-K, mma.sync and wgmma, in fp32, fp16 and bf16, under
 * the four layouts, on odd shapes, padded leading dimensions and strides, a
 * batch of 3, beta 0 and beta != 0. What bench/gemm-cuda.c's `check` mode did
 * before the benchmarks became bench/gpu-gemm, now through the product's own
 * code: the tuner's in-process measurement (kernels/measure.h) on the CUDA
 * backend, configurations given in the backend's whole space
 * (backend_cuda_space_for(..., 1)), and each problem's default configuration
 * in the space the tuner searches it in (what an untuned program runs).
 *
 * A pair (problem, configuration) counts when the space's predicate lets it
 * run on this device; it passes when the measurement's checked run matches
 * the reference within gemm_within_tol()'s tolerance for the dtype (random
 * inputs in +-[0.1, 1], C filled with random values before each run, so an
 * entry left unwritten fails too; small problems are checked on every
 * entry, the batched one on 516 entries per batch item). A compile or launch
 * failure, or a configuration the backend refuses after compiling it, fails
 * the pair too. One line per failing pair, one per dtype and layout, and a
 * summary; exit 1 if any pair failed.
 *
 * The (dtype, layout) groups are checked on worker threads, each with its own
 * measurement and CUDA context handle (one device, one primary context), so
 * that NVRTC compiles in parallel; the GPU work itself is serialized on the
 * context's default stream.
 *
 *   test-gemm-gpu [--dtype D]... [--threads N] [--seed N] [--plant NAME=V]
 *                 [--list] [-v]
 *
 * --dtype checks that dtype only (fp32, fp16, bf16; more than one may be given).
 * --plant NAME=V scales alpha by 17/16 on the GPU for the configurations with
 * NAME=V (MC=2: every wgmma pair): those pairs must fail. --list prints the
 * pairs an H200 (sm_90) would check, without a device. Exit 77 (skipped),
 * with the reason, where there is no CUDA driver or device.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "kernels/backend-cuda.h"
#include "kernels/gemm.h"
#include "kernels/measure.h"
#include "kernels/space.h"
#include "kernels/tune.h"

/* Over the default point of the whole CUDA space of the dtype and layout. */
static const char *const configs[] = {
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
    "MC=0;GV=1;MT0=2;MT1=16;TT1=1;DU=8;VW=1;MINB=2",
    /* wgmma (sm_90 only; elsewhere the space check drops them) */
    "MC=2;MT0=128;MT1=128;DU=64;WM=1;WN=2;STAGES=4;SWZ=1",
    "MC=2;MT0=64;MT1=64;DU=64;WM=1;WN=1;STAGES=3;SWZ=1;GSU=4",
    "MC=2;MT0=256;MT1=128;DU=64;WM=1;WN=2;STAGES=3;SWZ=1;GROUP=8",
    "MC=2;MT0=128;MT1=256;DU=64;WM=1;WN=4;STAGES=3;SWZ=1;MINB=1",
};
#define NCONFIGS (int)(sizeof(configs) / sizeof(configs[0]))

/* M, N, K. The second is padded and batched, the fourth has beta 0, the
 * sixth batched with odd leading dimensions and strides (the matrix-core
 * paths repack its A and B, as they do the first's). */
static const int64_t shapes[][3] = {{77, 93, 61},  {128, 256, 512}, {1, 300, 1000},
                                    {200, 8, 136}, {136, 200, 88},  {96, 72, 40}};
#define NSHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))

static const char *const layouts[4] = {"NN", "NT", "TN", "TT"};
#define NGROUPS (GEMM_DTYPE_COUNT * 4)

/* One dtype and layout: its results. */
struct group {
	enum gemm_dtype dt;
	int layout;
	int pairs, failed, planted;
	double worst_rel_err; /* of the pairs that passed */
	double seconds;
};

struct check {
	const struct backend_ops *ops;
	struct tune_measure_opts o;
	struct group g[NGROUPS];
	int ngroups;
	int next; /* the next group to take */
	volatile int stop; /* a launch failed: the context may be lost */
	int errors;
	int verbose, list;
	int dtypes; /* bit mask of the dtypes checked */
	struct backend_device_info dev;
	pthread_mutex_t lock;
};

/* --plant: the configurations whose GEMMs get a wrong alpha. */
static char plant_name[SPACE_NAME_MAX];
static int64_t plant_value;
static const struct backend_ops *real_ops;
static struct backend_ops planted_ops;

static int
planted(const struct tune_config *cfg)
{
	return plant_name[0] != '\0' && tune_config_get(cfg, plant_name, INT64_MIN) == plant_value;
}

static int
planted_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
	     const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	struct gemm_problem q = *p;

	if (planted(cfg))
		q.alpha *= 17.0f / 16.0f;
	return real_ops->gemm(ctx, mod, cfg, &q, bufs);
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* bench/gemm-cuda.c's problems: a 1-row operand's leading dimension padded to 8,
 * shape 1 padded and batched, shape 5 batched unaligned. */
static void
problem_for(struct gemm_problem *p, enum gemm_dtype dt, int layout, int shape)
{
	const char *tr = layouts[layout];
	int64_t m = shapes[shape][0], n = shapes[shape][1], k = shapes[shape][2];

	gemm_problem_init(p, dt, tr[0] == 'T' ? GEMM_T : GEMM_N, tr[1] == 'T' ? GEMM_T : GEMM_N, m,
			  n, k, 1);
	if (p->lda < 8)
		p->lda = 8;
	if (p->ldb < 8)
		p->ldb = 8;
	p->stride_a = p->lda * (p->ta ? m : k);
	p->stride_b = p->ldb * (p->tb ? k : n);
	if (shape == 1) {
		p->lda += 8;
		p->ldb += 16;
		p->ldc += 3;
		p->batch = 3;
		p->stride_a = p->lda * (p->ta ? m : k) + 8;
		p->stride_b = p->ldb * (p->tb ? k : n) + 16;
		p->stride_c = p->ldc * n + 5;
	} else if (shape == 5) {
		p->lda += 1;
		p->ldb += 3;
		p->batch = 2;
		p->stride_a = p->lda * (p->ta ? m : k) + 1;
		p->stride_b = p->ldb * (p->tb ? k : n) + 5;
		p->stride_c = p->ldc * n + 2;
	}
	p->alpha = 0.75f;
	p->beta = shape == 3 ? 0.0f : -0.5f;
}

/* The point TEXT ("NAME=v;NAME=v") sets over the default of S: 0, or ROCMD_EINVAL. */
static int
point_over_default(const struct space_def *s, const char *text, struct space_point *pt)
{
	const char *q = text;

	space_point_default(s, pt);
	while (*q != '\0') {
		char name[SPACE_NAME_MAX], *end;
		const char *eq = strchr(q, '=');
		int pi, vi;
		int64_t v;

		if (eq == NULL || eq - q >= SPACE_NAME_MAX)
			return ROCMD_EINVAL;
		memcpy(name, q, (size_t)(eq - q));
		name[eq - q] = '\0';
		v = strtoll(eq + 1, &end, 10);
		if ((pi = space_param_index(s, name)) < 0)
			return ROCMD_EINVAL;
		for (vi = 0; vi < s->params[pi].nvalues && s->params[pi].values[vi] != v; vi++)
			;
		if (vi == s->params[pi].nvalues)
			return ROCMD_EINVAL;
		pt->idx[pi] = (uint8_t)vi;
		q = *end == ';' ? end + 1 : end;
	}
	return 0;
}

/* What a thread reports on the shared stdout, whole lines at a time. */
static void __attribute__((format(printf, 2, 3)))
say(struct check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pthread_mutex_lock(&c->lock);
	vprintf(fmt, ap);
	fflush(stdout);
	pthread_mutex_unlock(&c->lock);
	va_end(ap);
}

/* Measures one pair, configuration PT (KEY) of SPACE on problem PK, into G. */
static void
check_pair(struct check *c, struct measure *m, struct group *g, const struct space_def *space,
	   const struct space_point *pt, const char *key, const char *pk)
{
	struct tune_result r;
	struct tune_config cfg;
	char line[sizeof(r.detail) + 64];
	double rel = -1;
	int err;

	g->pairs++;
	space_config(space, pt, &cfg);
	g->planted += planted(&cfg);
	if (c->list) {
		say(c, "pair %s %s\n", pk, key);
		return;
	}
	err = measure_local_eval_in(m, space, key, 0, &r, &rel);
	if (err == 0 && r.outcome == TUNE_OK) {
		if (rel > g->worst_rel_err)
			g->worst_rel_err = rel;
		if (c->verbose)
			say(c, "ok   %s %s\n", pk, key);
		return;
	}
	g->failed++;
	if (err < 0)
		snprintf(line, sizeof(line), "error %s", rocmd_strerror(err));
	else
		snprintf(line, sizeof(line), "%s (%s), relative error %.3g",
			 tune_outcome_name(r.outcome), r.detail, rel);
	say(c, "FAIL %s %s: %s\n", pk, key, line);
	if (err < 0 || r.outcome == TUNE_LAUNCH_FAILED || r.outcome == TUNE_CRASHED) {
		pthread_mutex_lock(&c->lock);
		c->stop = 1;
		pthread_mutex_unlock(&c->lock);
	}
}

/* The keys of the configurations that may run in this group, in the whole space S. */
static int
group_keys(struct check *c, const struct space_def *s, struct space_point *pts,
	   char (*keys)[SPACE_KEY_MAX], const char *gname)
{
	char why[160];
	int i, n = 0;

	for (i = 0; i < NCONFIGS; i++) {
		if (point_over_default(s, configs[i], &pts[n]) < 0) {
			say(c, "FAIL %s: '%s' is not a point of the %s space\n", gname, configs[i],
			    s->name);
			pthread_mutex_lock(&c->lock);
			c->errors++;
			pthread_mutex_unlock(&c->lock);
			continue;
		}
		if (!space_valid(s, &pts[n], NULL, &c->dev, why, sizeof(why)))
			continue;
		space_key(s, &pts[n], keys[n], SPACE_KEY_MAX);
		n++;
	}
	return n;
}

/* Every shape of group G with every configuration that may run on it. */
static void
check_group(struct check *c, struct measure *m, struct group *g)
{
	struct space_def full;
	struct space_point pts[NCONFIGS];
	char keys[NCONFIGS][SPACE_KEY_MAX], gname[16], pk[64], why[256];
	struct gemm_problem p;
	double t0 = now_s();
	int sh, i, n;

	snprintf(gname, sizeof(gname), "%s %s", gemm_dtype_name(g->dt), layouts[g->layout]);
	problem_for(&p, g->dt, g->layout, 0);
	backend_cuda_space_for(&full, &p, c->dev.matrix_cores, 1);
	n = group_keys(c, &full, pts, keys, gname);
	for (sh = 0; sh < NSHAPES && !c->stop; sh++) {
		const struct space_def *tspace = NULL;
		struct space_def tstore;
		struct space_point dp;
		char dkey[SPACE_KEY_MAX];

		problem_for(&p, g->dt, g->layout, sh);
		gemm_problem_key(&p, pk, sizeof(pk));
		if (c->list) {
			tspace = backend_cuda_space_for(&tstore, &p, 2, 0);
		} else if (measure_local_set_problem(m, &p, &tspace, why, sizeof(why)) < 0) {
			say(c, "FAIL %s: cannot set the problem up: %s\n", pk, why);
			g->failed++;
			continue;
		}
		/* The default configuration of the tuner's space for this problem. */
		if (space_default_for(tspace, &p, &c->dev, &dp) == 0) {
			space_key(tspace, &dp, dkey, sizeof(dkey));
			check_pair(c, m, g, tspace, &dp, dkey, pk);
		}
		for (i = 0; i < n && !c->stop; i++)
			if (space_valid(&full, &pts[i], &p, &c->dev, why, sizeof(why)))
				check_pair(c, m, g, &full, &pts[i], keys[i], pk);
	}
	g->seconds = now_s() - t0;
}

static void *
worker(void *arg)
{
	struct check *c = arg;
	struct measure *m = NULL;
	struct backend_device_info dev;
	char hash[17], why[256];
	int err = 0;

	if (!c->list)
		err = measure_local_open(c->ops, 0, &c->o, &m, &dev, hash, why, sizeof(why));
	for (;;) {
		struct group *g = NULL;

		pthread_mutex_lock(&c->lock);
		if (err < 0) {
			printf("FAIL: cannot open the device: %s\n", why);
			c->errors++;
		} else if (c->next < c->ngroups && !c->stop) {
			g = &c->g[c->next++];
		}
		pthread_mutex_unlock(&c->lock);
		if (g == NULL)
			break;
		check_group(c, m, g);
		pthread_mutex_lock(&c->lock);
		printf("%s %s: %d pairs, %d failed, worst relative error %.2g, %.1f s\n",
		       gemm_dtype_name(g->dt), layouts[g->layout], g->pairs, g->failed,
		       g->worst_rel_err, g->seconds);
		fflush(stdout);
		pthread_mutex_unlock(&c->lock);
	}
	if (m != NULL)
		measure_local_close(m);
	return NULL;
}

/* An H200 as the CUDA backend describes it, for --list. */
static const struct backend_device_info h200_info = {
    .backend = "cuda",
    .name = "NVIDIA H200 (described, --list)",
    .arch = "sm_90",
    .compute_units = 132,
    .wave_size = 32,
    .max_threads_per_block = 1024,
    .shared_mem_per_block = 232448,
    .shared_mem_per_cu = 233472,
    .regs_per_block = 65536,
    .regs_per_cu = 65536,
    .llc_bytes = 60 << 20,
    .matrix_cores = 1,
};

static int
usage(void)
{
	fprintf(stderr, "usage: test-gemm-gpu [--dtype D]... [--threads N] [--seed N] "
			"[--plant NAME=V] [--list] [-v]\n");
	return 2;
}

/* Options; 0, or 2 on a bad one. */
static int
parse_args(int argc, char **argv, struct check *c, int *threads)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-v")) {
			c->verbose = 1;
		} else if (!strcmp(a, "--list")) {
			c->list = 1;
		} else if (v != NULL && !strcmp(a, "--threads")) {
			*threads = atoi(v);
			i++;
		} else if (v != NULL && !strcmp(a, "--dtype")) {
			enum gemm_dtype dt;

			if (gemm_dtype_parse(v, &dt) < 0)
				return usage();
			c->dtypes |= 1 << dt;
			i++;
		} else if (v != NULL && !strcmp(a, "--seed")) {
			c->o.seed = strtoull(v, NULL, 10);
			i++;
		} else if (v != NULL && !strcmp(a, "--plant") && strchr(v, '=') != NULL &&
			   strchr(v, '=') - v < SPACE_NAME_MAX) {
			snprintf(plant_name, sizeof(plant_name), "%.*s", (int)(strchr(v, '=') - v),
				 v);
			plant_value = strtoll(strchr(v, '=') + 1, NULL, 10);
			i++;
		} else {
			return usage();
		}
	}
	return 0;
}

/*
 * A code object of another launch protocol (rk_gemm_info[7]: one whose split-K
 * wrote partial sums for a second launch to add) is refused by the loader,
 * naming the protocol; the current one loads. 0 when both hold.
 */
static int
protocol_refused(const struct backend_ops *ops)
{
	static const char *const old[] = {"PROTOCOL=1", "GSU=2"}, *const cur[] = {"GSU=2"};
	struct backend_device_info info;
	struct backend_ctx *ctx = NULL;
	struct backend_module *mod = NULL;
	char log[2048] = "", why[256] = "";
	const char *src;
	size_t len;
	int err, bad = 0;

	if (ops->open(0, &ctx, &info, why, sizeof(why)) < 0) {
		printf("FAIL: protocol check: cannot open the device: %s\n", why);
		return 1;
	}
	src = ops->kernel_source(ctx, &len);
	err = ops->compile(ctx, src, len, old, 2, &mod, log, sizeof(log));
	if (err >= 0 || strstr(log, "older launch protocol") == NULL) {
		printf("FAIL: a code object of launch protocol 1 was %s (%s)\n",
		       err >= 0 ? "loaded" : "refused for another reason", log);
		bad = 1;
	}
	if (err >= 0)
		ops->module_unload(ctx, mod);
	mod = NULL;
	if (ops->compile(ctx, src, len, cur, 1, &mod, log, sizeof(log)) < 0) {
		printf("FAIL: the current launch protocol's code object was refused: %s\n", log);
		bad = 1;
	} else {
		ops->module_unload(ctx, mod);
	}
	ops->close(ctx);
	if (!bad)
		printf("ok: a code object of an older launch protocol is refused\n");
	return bad;
}

/* Opens the device once to see that there is one: 0, 77 (skip) or 1. */
static int
probe(struct check *c)
{
	struct measure *m = NULL;
	char hash[17], why[256] = "";
	int err;

	if (c->list) {
		c->dev = h200_info;
		return 0;
	}
	if (c->ops == NULL) {
		printf("SKIP: no CUDA backend in this build\n");
		return 77;
	}
	err = measure_local_open(c->ops, 0, &c->o, &m, &c->dev, hash, why, sizeof(why));
	if (err == ROCMD_EUNSUPPORTED) {
		printf("SKIP: CUDA %s\n", why);
		return 77;
	}
	if (err < 0) {
		printf("FAIL: cannot open CUDA device 0: %s (%s)\n", why, rocmd_strerror(err));
		return 1;
	}
	measure_local_close(m);
	printf("device: %s (%s), %d SMs, %s, %s, kernel source %s\n", c->dev.name, c->dev.arch,
	       c->dev.compute_units, c->dev.driver_version, c->dev.compiler_version, hash);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct check c;
	pthread_t th[NGROUPS];
	int threads = 0, started = 0, i, pairs = 0, failed = 0, plants = 0, rc;
	double t0 = now_s(), worst[GEMM_DTYPE_COUNT] = {0};

	/* A check, not a timing: one warm-up pass, one timed run. */
	c.o.warmup_ms = 0.001;
	c.o.runs = 1;
	c.o.max_sets = 2;
	c.o.seed = 20240611;
	c.o.isolate = -1;
	if ((rc = parse_args(argc, argv, &c, &threads)) != 0)
		return rc;
	c.ops = backend_find("cuda");
	if (plant_name[0] != '\0' && c.ops != NULL) {
		real_ops = c.ops;
		planted_ops = *c.ops;
		planted_ops.gemm = planted_gemm;
		c.ops = &planted_ops;
	}
	if ((rc = probe(&c)) != 0)
		return rc;
	if (!c.list && protocol_refused(c.ops) != 0)
		c.errors++;
	for (i = 0; i < NGROUPS; i++) {
		enum gemm_dtype dt = (enum gemm_dtype)(i / 4);

		if (c.dtypes == 0 || (c.dtypes & (1 << dt))) {
			c.g[c.ngroups].dt = dt;
			c.g[c.ngroups++].layout = i % 4;
		}
	}
	if (threads <= 0)
		threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (threads < 1 || c.list)
		threads = 1;
	if (threads > c.ngroups)
		threads = c.ngroups;
	pthread_mutex_init(&c.lock, NULL);
	for (i = 0; i < threads; i++)
		started += pthread_create(&th[started], NULL, worker, &c) == 0;
	if (started == 0)
		worker(&c);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < c.ngroups; i++) {
		pairs += c.g[i].pairs;
		failed += c.g[i].failed;
		plants += c.g[i].planted;
		if (c.g[i].worst_rel_err > worst[c.g[i].dt])
			worst[c.g[i].dt] = c.g[i].worst_rel_err;
	}
	if (c.list) {
		printf("%d (problem, configuration) pairs on an sm_90 device\n", pairs);
		return 0;
	}
	if (c.stop)
		printf("stopped early: a launch failed, the device context may be lost\n");
	printf("worst relative error of a passing pair: fp32 %.2g, fp16 %.2g, bf16 %.2g\n",
	       worst[GEMM_FP32], worst[GEMM_FP16], worst[GEMM_BF16]);
	if (plant_name[0] != '\0')
		printf("planted: alpha x 17/16 for %s=%" PRId64 " in %d pairs\n", plant_name,
		       plant_value, plants);
	printf("test-gemm-gpu: %d (problem, configuration) pairs checked, %d failed, %.1f s, "
	       "%d threads, %s\n",
	       pairs, failed, now_s() - t0, started ? started : 1, c.dev.name);
	return failed > 0 || c.errors > 0 || c.stop || pairs == 0 ? 1 : 0;
}
