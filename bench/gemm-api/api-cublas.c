/*
 * bench-gemm-api-cublas: what an application gets through the public C API
 * (librocmd-gemm, rocmd_gemm()) against cuBLAS, in one process on the same
 * device buffers: the GPU GEMM suite (bench/gpu-gemm/suite.h, 38 problems per
 * dtype) and the host time per call.
 *
 * Suite: for each problem, one call of each is checked (rocmd's result
 * against the double-precision reference: 512 sampled entries and the
 * corners, the tuner's tolerance), then, after one untimed run of each,
 * ROUNDS interleaved rounds time a run of REPS back-to-back calls between two
 * synchronizations (REPS from a first timed call, about 20 ms of work), in
 * the order rocmd cuBLAS | cuBLAS rocmd | ... (tune_round_order): the GPU's
 * clock drifts over the rounds of a large problem as it nears its power
 * limit, and with that order the drift reaches both alike. A library's figure
 * is the median of its round pairs' mean per-call times (tune_round_figure). That is the time an
 * application sees per call, launch and host work included; inputs stay in L2 where they fit, for
 * both. The ratio is cuBLAS's time over rocmd's (above 1: rocmd is faster); geometric means per
 * dtype and overall; a problem that fails to run or is wrong counts as a failure.
 *
 * Host time per call: after each library's first call of the shape, CALLS
 * calls are enqueued back to back and the host's time for the loop alone is
 * divided by CALLS, for a few small shapes where launch cost matters: once
 * with the GPU running them (where a call's GPU time exceeds the host's, the
 * loop runs at the GPU's pace), once with the stream held from the host
 * (hold.h: the calls wait behind a stream wait, so that the figure is the
 * host's work alone; "(full)" where the queue filled and the hold timed out).
 *
 *   bench-gemm-api-cublas [--lib DIR | --best FILE] [--vendor BUDGET]
 *                         [--dtype fp32,fp16,bf16] [--rounds 4] [--calls 200]
 *                         [--no-suite] [--device N] [--backend cpu --limit MACS]
 *
 * --best FILE (bench/gpu-gemm/best-h200.txt: "problem config [ms]" lines)
 * writes those configurations as a tuned library into a temporary folder and
 * opens the handle on it: exact, nearest by predicted time or default, as an
 * application with that library gets them (no code objects: each compiled
 * on first use).
 *
 * --vendor BUDGET adds vendor candidates (vendor-lib.h): on every problem of
 * the suite rocmd's choice from the library so far and cuBLASLt's tuned
 * solution (up to BUDGET candidates) are measured by the tuner, the faster
 * becomes the problem's entry, and the suite runs on that library: cuBLASLt's
 * winners through librocmd-gemm's vendor path, the rest on rocmd's kernels.
 *
 * --backend cpu tries the program without a GPU: rocmd's CPU backend stands
 * in for both libraries, on the problems of at most MACS multiply-adds.
 *
 * Exits 77 when there is no CUDA device or no cuBLAS (the reason printed), 1
 * on a failure. It asserts nothing about speed.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gemm-api/hold.h"
#include "bench/gemm-api/vendor-lib.h"
#include "bench/gpu-gemm/cublas.h"
#include "bench/gpu-gemm/suite.h"
#include "kernels/gemm.h"
#include "kernels/tune.h"
#include "kernels/tunedlib.h"
#include "rocmd/rocmd-gemm.h"

#define MAX_ROUNDS 9
#define TARGET_MS 20.0

struct ctx {
	rocmd_gemm_t *h;
	void *a, *b, *c;     /* device buffers of the largest problem */
	void *ha, *hb, *hc;  /* host copies of A and B, C's download */
	int cpu;             /* --backend cpu: rocmd in cuBLAS's place */
	double limit;        /* problems of more multiply-adds are skipped */
	size_t bytes;        /* of each buffer */
	int filled;          /* the dtype the buffers hold, -1 none */
	int rounds, calls;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One call of library WHICH (0 rocmd, 1 cuBLAS) on P; 0 or an error. */
static int
call(struct ctx *c, int which, const struct gemm_problem *p)
{
	struct gemm_bufs b = {(uint64_t)(uintptr_t)c->a, (uint64_t)(uintptr_t)c->b,
	                      (uint64_t)(uintptr_t)c->c};

	if (which == 1 && !c->cpu)
		return bench_cublas_gemm(NULL, p, &b) != 0 ? -1 : 0;
	return rocmd_gemm(c->h, (enum rocmd_gemm_dtype)p->dtype, (enum rocmd_gemm_op)p->ta,
	                  (enum rocmd_gemm_op)p->tb, p->m, p->n, p->k, p->alpha, c->a, p->lda, c->b,
	                  p->ldb, p->beta, c->c, p->ldc);
}

/* Per-call ms of REPS calls between two synchronizations; < 0 on an error. */
static double
timed(struct ctx *c, int which, const struct gemm_problem *p, int reps)
{
	double t0;
	int i;

	if (rocmd_gemm_synchronize(c->h) < 0)
		return -1;
	t0 = now_ms();
	for (i = 0; i < reps; i++)
		if (call(c, which, p) < 0)
			return -1;
	if (rocmd_gemm_synchronize(c->h) < 0)
		return -1;
	return (now_ms() - t0) / reps;
}

/* Random inputs of dtype DT in A and B, host and device, as many elements as
 * the largest operand of the suite has (8192^2). C is not filled: beta is 0,
 * and neither library reads C then. */
static int
fill(struct ctx *c, enum gemm_dtype dt)
{
	size_t n = (size_t)8192 * 8192, bytes = n * gemm_dtype_size(dt);

	if (c->filled == (int)dt)
		return 0;
	c->filled = (int)dt;
	gemm_fill_random(dt, c->ha, (int64_t)n, 11 + dt);
	gemm_fill_random(dt, c->hb, (int64_t)n, 23 + dt);
	return rocmd_gemm_upload(c->h, c->a, c->ha, bytes) < 0 ||
	               rocmd_gemm_upload(c->h, c->b, c->hb, bytes) < 0
	           ? -1
	           : 0;
}

/* rocmd's result of P against the reference: the number of bad entries, -1 on an error. */
static int64_t
check(struct ctx *c, const struct gemm_problem *p)
{
	size_t nc = (size_t)gemm_elems_c(p) * gemm_dtype_size(p->dtype);

	if (call(c, 0, p) < 0 || rocmd_gemm_synchronize(c->h) < 0 ||
	    rocmd_gemm_download(c->h, c->hc, c->c, nc) < 0)
		return -1;
	/* beta 0: C's input does not enter; A and B are the uploaded prefixes. */
	return gemm_check(p, c->ha, c->hb, c->hc, c->hc, 0, 512, 5, NULL);
}

/* One problem: checked, then timed. 0 ok, 1 a failure (printed). */
static int
one_problem(struct ctx *c, const struct problem *pr, double *ratio)
{
	struct gemm_problem p;
	struct rocmd_gemm_choice ch;
	double t[2][MAX_ROUNDS], med[2], first;
	int64_t bad;
	int w, r, i, reps;

	gemm_problem_init(&p, pr->dt, pr->op[0] == 'T' ? GEMM_T : GEMM_N,
	                  pr->op[1] == 'T' ? GEMM_T : GEMM_N, pr->m, pr->n, pr->k, 1);
	printf("%-5s %-7s %s %-7s %5lld %5lld %5lld ", gemm_dtype_name(pr->dt), group_name[pr->g],
	       pr->op, pr->what[0] ? pr->what : "-", (long long)p.m, (long long)p.n,
	       (long long)p.k);
	fflush(stdout);
	bad = check(c, &p);
	if (bad != 0) {
		printf("FAIL: %s\n", bad < 0 ? rocmd_gemm_error(c->h) : "wrong result");
		return 1;
	}
	if (call(c, 1, &p) < 0 || (first = timed(c, 1, &p, 1)) < 0 || timed(c, 0, &p, 1) < 0) {
		printf("FAIL: %s\n", rocmd_gemm_error(c->h));
		return 1;
	}
	reps = first > 0 ? (int)(TARGET_MS / first) : 100;
	reps = reps < 2 ? 2 : reps > 500 ? 500 : reps;
	/* One untimed run of each brings the GPU to the clock of the rounds. */
	if (timed(c, 0, &p, reps) < 0 || timed(c, 1, &p, reps) < 0) {
		printf("FAIL: %s\n", rocmd_gemm_error(c->h));
		return 1;
	}
	for (r = 0; r < c->rounds; r++)
		for (i = 0; i < 2; i++) {
			w = tune_round_order(r, i, 2);
			if ((t[w][r] = timed(c, w, &p, reps)) < 0) {
				printf("FAIL: %s\n", rocmd_gemm_error(c->h));
				return 1;
			}
		}
	for (w = 0; w < 2; w++)
		med[w] = tune_round_figure(t[w], c->rounds);
	rocmd_gemm_query(c->h, (enum rocmd_gemm_dtype)p.dtype, (enum rocmd_gemm_op)p.ta,
	                 (enum rocmd_gemm_op)p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, &ch);
	*ratio = med[1] / med[0];
	printf("%9.4f %9.4f %6.3f  %s: %.200s\n", med[0], med[1], *ratio,
	       ch.how == ROCMD_GEMM_EXACT     ? "exact"
	       : ch.how == ROCMD_GEMM_NEAREST ? "nearest"
	                                      : "default",
	       ch.config);
	return 0;
}

/*
 * A library folder (created under /tmp, its name in DIR) holding FILE's
 * configurations for BACKEND's ARCH. 0, or -1 with the reason printed.
 */
static int
best_library(const char *file, const char *backend, const char *arch, char *dir, size_t dlen)
{
	char line[1024], prob[128], cfg[SPACE_KEY_MAX], why[256];
	struct tunedlib *lib = NULL;
	struct tune_key id;
	FILE *f = fopen(file, "r");
	double ms;
	int n, rc = -1;

	memset(&id, 0, sizeof(id));
	snprintf(id.backend, sizeof(id.backend), "%s", backend);
	snprintf(id.arch, sizeof(id.arch), "%s", arch);
	/* The API matches a library by backend and arch; the rest only names it. */
	snprintf(id.device, sizeof(id.device), "best-known configurations of %.60s", file);
	snprintf(id.source_hash, sizeof(id.source_hash), "0000000000000000");
	snprintf(dir, dlen, "/tmp/rocmd-best-XXXXXX");
	if (f == NULL || tunedlib_new(&id, &lib) < 0 || mkdtemp(dir) == NULL) {
		printf("bench-gemm-api-cublas: cannot read %s or make a library folder\n", file);
		goto out;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		ms = 1;
		n = sscanf(line, "%127s %511s %lf", prob, cfg, &ms);
		if (n < 2 || tunedlib_add(lib, prob, cfg, ms > 0 ? ms : 1, 0, why, sizeof(why)) < 0) {
			printf("bench-gemm-api-cublas: %s: bad line: %s", file, line);
			goto out;
		}
	}
	if (tunedlib_write(lib, dir, why, sizeof(why)) < 0) {
		printf("bench-gemm-api-cublas: %s\n", why);
		goto out;
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	tunedlib_free(lib);
	return rc;
}

static int
run_suite(struct ctx *c, const int *dtypes)
{
	double lsum_all = 0;
	int d, i, n_all = 0, failed = 0;

	static const enum gemm_dtype order[GEMM_DTYPE_COUNT] = {GEMM_FP16, GEMM_BF16, GEMM_FP32};
	double t0 = now_ms();
	int oi;

	printf("# dtype group   op what        M     N     K  rocmd ms cuBLAS ms  ratio  "
	       "choice: config (every result checked first)\n");
	for (oi = 0; oi < GEMM_DTYPE_COUNT; oi++) {
		struct problem prs[64];
		double lsum = 0, ratio;
		int n, ok = 0, skipped = 0;

		d = (int)order[oi];
		if (!dtypes[d])
			continue;
		if (fill(c, (enum gemm_dtype)d) < 0) {
			fprintf(stderr, "bench-gemm-api-cublas: %s\n", rocmd_gemm_error(c->h));
			return -1;
		}
		n = suite_problems((enum gemm_dtype)d, prs, 64);
		for (i = 0; i < n; i++) {
			if ((double)prs[i].m * (double)prs[i].n * (double)prs[i].k > c->limit) {
				skipped++;
				continue;
			}
			if (one_problem(c, &prs[i], &ratio) != 0) {
				failed++;
				continue;
			}
			lsum += log(ratio);
			ok++;
		}
		printf("# %s: %d problems, %d failed%s, geomean cuBLAS/rocmd %.3f\n",
		       gemm_dtype_name((enum gemm_dtype)d), n - skipped, n - skipped - ok,
		       skipped ? " (others over --limit)" : "", ok ? exp(lsum / ok) : 0.0);
		lsum_all += lsum;
		n_all += ok;
	}
	printf("# all: %d ran, %d failed, geomean cuBLAS/rocmd %.3f (%.0f s)\n", n_all, failed,
	       n_all ? exp(lsum_all / n_all) : 0.0, (now_ms() - t0) / 1e3);
	return failed;
}

/* Host microseconds per enqueued call, rocmd and cuBLAS, on a few small shapes. */
static int
run_host_cost(struct ctx *c)
{
	static const struct {
		enum gemm_dtype dt;
		char ta, tb;
		int64_t m, n, k;
	} shapes[] = {
	    /* fp16 last: the suite starts with it, on the same inputs */
	    {GEMM_FP32, 'N', 'N', 64, 64, 64},    {GEMM_BF16, 'T', 'N', 8, 4096, 4096},
	    {GEMM_FP16, 'N', 'N', 256, 256, 256}, {GEMM_FP16, 'T', 'N', 1, 4096, 4096},
	};
	struct rocmd_gemm_stats s0, s1;
	struct hold *hold = NULL;
	char why[160] = "";
	size_t i;
	int w;

	printf("# host time per call: %d calls enqueued back to back, the loop's host time / "
	       "calls; running: the GPU runs them meanwhile; held: the stream waits behind a "
	       "host-held wait\n# dtype op     M     N     K  running: rocmd us  cuBLAS us  held: "
	       "rocmd us  cuBLAS us  first rocmd call ms\n",
	       c->calls);
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct gemm_problem p;
		double us[2], held[2] = {-1, -1}, first = 0;
		int full[2] = {0, 0};

		gemm_problem_init(&p, shapes[i].dt, shapes[i].ta == 'T' ? GEMM_T : GEMM_N,
		                  shapes[i].tb == 'T' ? GEMM_T : GEMM_N, shapes[i].m, shapes[i].n,
		                  shapes[i].k, 1);
		/* The first call of a shape pays its selection and compile. */
		if (fill(c, p.dtype) < 0 || rocmd_gemm_synchronize(c->h) < 0)
			return -1;
		for (w = 0; w < 2; w++) {
			double t0 = now_ms();
			int k;

			if (call(c, w, &p) < 0 || rocmd_gemm_synchronize(c->h) < 0)
				return -1;
			if (w == 0)
				first = now_ms() - t0;
			rocmd_gemm_stats(c->h, &s0);
			t0 = now_ms();
			for (k = 0; k < c->calls; k++)
				if (call(c, w, &p) < 0)
					return -1;
			us[w] = (now_ms() - t0) * 1e3 / c->calls;
			if (rocmd_gemm_synchronize(c->h) < 0)
				return -1;
			if (hold == NULL && why[0] == '\0' && (hold = hold_open(why, sizeof(why))) == NULL)
				printf("# no held figures: %s\n", why);
			if (hold != NULL && hold_begin(hold) == 0) {
				t0 = now_ms();
				for (k = 0; k < c->calls; k++)
					if (call(c, w, &p) < 0)
						break;
				held[w] = (now_ms() - t0) * 1e3 / c->calls;
				full[w] = hold_release(hold);
				if (k < c->calls || rocmd_gemm_synchronize(c->h) < 0) {
					hold_close(hold);
					return -1;
				}
			}
			rocmd_gemm_stats(c->h, &s1);
			if (w == 0 && (s1.selections != s0.selections || s1.modules != s0.modules))
				printf("# (rocmd selected or compiled again in the loop)\n");
		}
		printf("%-5s %c%c %5lld %5lld %5lld           %8.2f  %9.2f        %8.2f%s  %9.2f%s  %.1f\n",
		       gemm_dtype_name(p.dtype), shapes[i].ta, shapes[i].tb, (long long)p.m,
		       (long long)p.n, (long long)p.k, us[0], us[1], held[0], full[0] ? " (full)" : "",
		       held[1], full[1] ? " (full)" : "", first);
	}
	hold_close(hold);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"lib", required_argument, NULL, 'l'},   {"dtype", required_argument, NULL, 'd'},
	    {"rounds", required_argument, NULL, 'r'}, {"calls", required_argument, NULL, 'c'},
	    {"no-suite", no_argument, NULL, 'n'},    {"device", required_argument, NULL, 'D'},
	    {"backend", required_argument, NULL, 'b'}, {"limit", required_argument, NULL, 'L'},
	    {"best", required_argument, NULL, 'B'},  {"vendor", required_argument, NULL, 'V'},
	    {"vendor-out", required_argument, NULL, 'O'}, {NULL, 0, NULL, 0},
	};
	struct ctx c = {.filled = -1, .rounds = 4, .calls = 200, .limit = 1e30};
	const char *backend = "cuda";
	const char *lib = NULL, *best = NULL;
	char err[512], ver[64], bestdir[64] = "", vdir[256] = "", *tok, *save = NULL;
	int dtypes[GEMM_DTYPE_COUNT] = {1, 1, 1}, suite = 1, device = 0, o, rc = 0, vbudget = 0;
	/* The largest operand of the suite: 8192 x 8192 fp32. */
	size_t bytes = (size_t)8192 * 8192 * 4;
	enum gemm_dtype dt;

	/* Line by line, so that a run cut short by a time limit shows how far it got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			lib = optarg;
			break;
		case 'd':
			memset(dtypes, 0, sizeof(dtypes));
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
			     tok = strtok_r(NULL, ",", &save)) {
				if (gemm_dtype_parse(tok, &dt) < 0)
					goto usage;
				dtypes[dt] = 1;
			}
			break;
		case 'r':
			c.rounds = atoi(optarg);
			break;
		case 'c':
			c.calls = atoi(optarg);
			break;
		case 'n':
			suite = 0;
			break;
		case 'D':
			device = atoi(optarg);
			break;
		case 'b':
			backend = optarg;
			break;
		case 'L':
			c.limit = atof(optarg);
			break;
		case 'B':
			best = optarg;
			break;
		case 'O':
			snprintf(vdir, sizeof(vdir), "%s", optarg);
			break;
		case 'V':
			vbudget = atoi(optarg);
			if (vbudget < 1)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (c.rounds < 1 || c.rounds > MAX_ROUNDS || c.calls < 1 || c.calls > 100000)
		goto usage;
	c.cpu = !strcmp(backend, "cpu");
	if (!c.cpu && strcmp(backend, "cuda") != 0)
		goto usage;
	if (rocmd_gemm_open(lib, backend, device, &c.h, err, sizeof(err)) < 0) {
		printf("bench-gemm-api-cublas: %s\n", err);
		return 77;
	}
	if (best != NULL && lib == NULL) {
		/* The device's arch: the second word of "cuda sm_90 NVIDIA H200, ...". */
		char arch[32] = "";

		sscanf(rocmd_gemm_describe(c.h), "%*s %31s", arch);
		rocmd_gemm_close(c.h);
		c.h = NULL;
		if (best_library(best, backend, arch, bestdir, sizeof(bestdir)) < 0)
			return 1;
		if (rocmd_gemm_open(bestdir, backend, device, &c.h, err, sizeof(err)) < 0) {
			printf("bench-gemm-api-cublas: %s\n", err);
			return 1;
		}
	}
	if (vbudget > 0 && !c.cpu) {
		if (vendor_library(c.h, bestdir[0] ? bestdir : lib, dtypes, c.limit, vbudget, vdir,
		                   sizeof(vdir)) < 0)
			return 1;
		rocmd_gemm_close(c.h);
		if (rocmd_gemm_open(vdir, backend, device, &c.h, err, sizeof(err)) < 0) {
			printf("bench-gemm-api-cublas: %s\n", err);
			return 1;
		}
	}
	if (c.cpu)
		snprintf(ver, sizeof(ver), "rocmd's CPU backend in cuBLAS's place");
	else if (bench_cublas_open(ver, sizeof(ver), err, sizeof(err)) < 0) {
		printf("bench-gemm-api-cublas: %s\n", err);
		rocmd_gemm_close(c.h);
		return 77;
	}
	printf("# %s; %s; %d rounds\n", rocmd_gemm_describe(c.h), ver, c.rounds);
	c.bytes = bytes;
	c.ha = malloc(bytes);
	c.hb = malloc(bytes);
	c.hc = malloc(bytes);
	if (c.ha == NULL || c.hb == NULL || c.hc == NULL || rocmd_gemm_malloc(c.h, bytes, &c.a) < 0 ||
	    rocmd_gemm_malloc(c.h, bytes, &c.b) < 0 || rocmd_gemm_malloc(c.h, bytes, &c.c) < 0) {
		fprintf(stderr, "bench-gemm-api-cublas: out of memory\n");
		return 1;
	}
	if (run_host_cost(&c) < 0) {
		printf("bench-gemm-api-cublas: %s\n", rocmd_gemm_error(c.h));
		rc = 1;
	}
	fflush(stdout);
	if (suite && run_suite(&c, dtypes) != 0)
		rc = 1;
	bench_cublas_close();
	rocmd_gemm_free(c.h, c.a);
	rocmd_gemm_free(c.h, c.b);
	rocmd_gemm_free(c.h, c.c);
	rocmd_gemm_close(c.h);
	for (o = 0; o < 2; o++) {
		const char *d = o ? vdir : bestdir;
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
		if (d[0] != '\0' && system(cmd) != 0)
			fprintf(stderr, "bench-gemm-api-cublas: %s left behind\n", d);
	}
	free(c.ha);
	free(c.hb);
	free(c.hc);
	return rc;
usage:
	fprintf(
	    stderr,
	    "usage: bench-gemm-api-cublas [--lib DIR | --best FILE] [--vendor BUDGET "
	    "[--vendor-out DIR]] [--dtype fp32,fp16,bf16] [--rounds 4] [--calls 200] [--no-suite] "
	    "[--device N] [--backend cpu --limit MACS]\n");
	return 2;
}
