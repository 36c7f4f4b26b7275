/*
 * bench-retune: how many evaluations a re-tune after a software update (an
 * SDK, driver or kernel-source change: a new tuning key) needs when seeded
 * with the previous winners, next to a cold tune of the same key. Two modes:
 *
 *   bench-retune live --shape MxNxK[,...] [--backend cpu] [--dtype fp32] [--budget 40]
 *                     [--runs 3] [--strategy ga]
 *       Real measurements on a backend (CPU by default; "cuda" on a GPU). For each shape and run: a
 * cold tune under key K1 into a results store; then the software part of the key changes (K2:
 * runtime "+update", as an SDK update changes it) and the shape is tuned under K2 twice with the
 * same strategy seed: seeded (the store's winners under any software, as the daemon's re-tune does)
 * and cold (no seeds, a fresh store). Reference: the best time either K2 run measured. Prints
 * evaluations to 90/95/99% of it, and the evaluation at which each run found its own final best.
 *
 *   bench-retune replay --old A.csv --new B.csv [--budget 200] [--runs 100]
 *                       [--strategy sa] [--top 1 | --prev-budget N]
 *       Landscape replay: A was recorded under the old software, B under
 *       the new one, same device and problem. The seeds are A's TOP best
 *       configurations, or with --prev-budget the winner of an N-evaluation
 *       tune replayed on A (a different one per run: what a previous tune
 *       really leaves behind), mapped into B's space (a parameter B has and A
 *       lacks takes B's default). A = B models an update that does not change
 *       the kernel's speed (the CPU backend: its kernel is compiled into
 *       rocmd, an SDK update leaves it as it was). Each run replays the strategy on B cold and
 *       seeded, with the same seed; evaluations to 90/95/99/100% of B's best,
 *       medians over RUNS seeds. Sound where B's recorded points are what the
 *       new software would measure (a landscape is a sample; the strategy
 *       draws from its points, as bench-tune-strategies does).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/tune.h"

#define MAX_EVALS 4096

struct args {
	const char *mode, *shapes, *old_path, *new_path, *strategy, *backend, *dtype;
	int budget, runs, top, prev_budget;
};

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_dbl);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* First evaluation (1-based) whose best-so-far is within LEVEL of REF; budget+1 if none. */
static int
evals_to(const double *trace, int n, double ref, double level)
{
	int i;

	for (i = 0; i < n; i++)
		if (trace[i] <= ref / level * (1 + 1e-12))
			return i + 1;
	return n + 1;
}

/* ---- cpu: real measurements ---- */

struct trace_ctx {
	double *trace;
	int n, cap;
};

static void
on_progress(void *ctx, const struct tune_progress *pr)
{
	struct trace_ctx *t = ctx;

	if (t->n < t->cap)
		t->trace[t->n++] = pr->best_ms;
}

static int
tune_once(const struct gemm_problem *p, struct tune_store *st, const char *tag, int no_seeds,
          const struct args *a, uint64_t seed, double *trace, int *ntrace, struct tune_summary *sum)
{
	struct tune_measure_opts mo;
	struct tune_evaluator *ev = NULL;
	struct backend_device_info dev;
	struct space_def space;
	struct tune_key key;
	struct tune_opts o;
	struct trace_ctx tc = {trace, 0, MAX_EVALS};
	char hash[17], why[512] = "";
	int err;

	memset(&mo, 0, sizeof(mo));
	mo.runs = 5;
	mo.warmup_ms = 5;
	err = tune_evaluator_open(backend_find(a->backend), 0, p, &mo, &ev, &dev, &space, hash, why,
	                          sizeof(why));
	if (err < 0) {
		fprintf(stderr, "bench-retune: %s\n", why);
		return err;
	}
	tune_key_init(&key, &dev, hash, p);
	/* The software part of the key, as an SDK update changes it. */
	if (tag != NULL)
		snprintf(key.runtime + strlen(key.runtime),
		         sizeof(key.runtime) - strlen(key.runtime), "%s", tag);
	memset(&o, 0, sizeof(o));
	o.strategy = a->strategy;
	o.budget = a->budget;
	o.seed = seed;
	o.no_seeds = no_seeds;
	o.store = st;
	o.progress = on_progress;
	o.progress_ctx = &tc;
	err = tune_run(ev, &key, &space, p, &dev, &o, sum, why, sizeof(why));
	tune_evaluator_close(ev);
	*ntrace = tc.n;
	if (err < 0)
		fprintf(stderr, "bench-retune: %s\n", why);
	return err;
}

static int
mode_cpu(const struct args *a)
{
	static double t_seed[MAX_EVALS], t_cold[MAX_EVALS], t_first[MAX_EVALS];
	char *shapes = strdup(a->shapes), *tok, *save = NULL;
	double *to[2][3], *own[2];
	int nres = 0, cap = 256, r, l, err = 0;

	for (r = 0; r < 2; r++) {
		for (l = 0; l < 3; l++)
			to[r][l] = calloc(cap, sizeof(double));
		own[r] = calloc(cap, sizeof(double));
	}
	printf("# bench-retune live: backend %s, %s NN, strategy %s, budget %d per tune, %d runs "
	       "per shape\n",
	       a->backend, a->dtype, a->strategy, a->budget, a->runs);
	printf("# shape run  | cold K1 | K2 seeded: to90 to95 to99 own-best | K2 cold: to90 to95 "
	       "to99 own-best | best ms seeded/cold\n");
	for (tok = strtok_r(shapes, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		int64_t m, n, k, b;
		struct gemm_problem p;

		if (gemm_shape_parse(tok, &m, &n, &k, &b) < 0) {
			fprintf(stderr, "bench-retune: bad shape '%s'\n", tok);
			err = ROCMD_EINVAL;
			goto out;
		}
		enum gemm_dtype dt = GEMM_FP32;

		gemm_dtype_parse(a->dtype, &dt);
		gemm_problem_init(&p, dt, GEMM_N, GEMM_N, m, n, k, b);
		for (r = 0; r < a->runs && nres < cap; r++) {
			struct tune_store st, fresh;
			struct tune_summary s1, s2, s3;
			int n1 = 0, n2 = 0, n3 = 0;
			double ref;

			if (tune_store_mem_new(&st) < 0 || tune_store_mem_new(&fresh) < 0)
				return 1;
			/* Before the update: a cold tune under K1 (its winner lands in ST). */
			err = tune_once(&p, &st, NULL, 1, a, 1000 + r, t_first, &n1, &s1);
			/* After: K2, seeded from ST, and cold in a fresh store, same seed. */
			if (err == 0)
				err = tune_once(&p, &st, " +update", 0, a, 2000 + r, t_seed, &n2,
				                &s2);
			if (err == 0)
				err = tune_once(&p, &fresh, " +update", 1, a, 2000 + r, t_cold, &n3,
				                &s3);
			tune_store_mem_free(&st);
			tune_store_mem_free(&fresh);
			if (err < 0)
				goto out;
			ref = fmin(t_seed[n2 - 1], t_cold[n3 - 1]);
			for (l = 0; l < 3; l++) {
				static const double lv[3] = {0.90, 0.95, 0.99};

				to[0][l][nres] = evals_to(t_seed, n2, ref, lv[l]);
				to[1][l][nres] = evals_to(t_cold, n3, ref, lv[l]);
			}
			own[0][nres] = s2.evals_to_best;
			own[1][nres] = s3.evals_to_best;
			printf("%s %d | %d evals | %4.0f %4.0f %4.0f %4.0f | %4.0f %4.0f %4.0f "
			       "%4.0f | "
			       "%.4f/%.4f\n",
			       tok, r, s1.evals, to[0][0][nres], to[0][1][nres], to[0][2][nres],
			       own[0][nres], to[1][0][nres], to[1][1][nres], to[1][2][nres],
			       own[1][nres], t_seed[n2 - 1], t_cold[n3 - 1]);
			fflush(stdout);
			nres++;
		}
	}
	printf("median over %d re-tunes (budget %d; %d = never):\n", nres, a->budget,
	       a->budget + 1);
	printf("  %-8s  to90  to95  to99  to-own-best\n", "");
	for (r = 0; r < 2; r++)
		printf("  %-8s %5.1f %5.1f %5.1f %7.1f\n", r ? "cold" : "seeded",
		       median(to[r][0], nres), median(to[r][1], nres), median(to[r][2], nres),
		       median(own[r], nres));
out:
	for (r = 0; r < 2; r++) {
		for (l = 0; l < 3; l++)
			free(to[r][l]);
		free(own[r]);
	}
	free(shapes);
	return err < 0 ? 1 : 0;
}

/* ---- replay: recorded landscapes ---- */

/* KEY of A's space written in B's: B's parameters in order, A's value where A
 * has the parameter, else B's default. Empty when a value is not in B's list. */
static void
map_key(const struct space_def *sa, const char *key, const struct space_def *sb, char *out,
        size_t len)
{
	struct space_point pa, pb;
	int i, j;

	out[0] = '\0';
	if (space_key_parse(sa, key, &pa) < 0)
		return;
	space_point_default(sb, &pb);
	for (i = 0; i < sb->nparams; i++) {
		int ia = space_param_index(sa, sb->params[i].name);

		if (ia < 0)
			continue;
		for (j = 0; j < sb->params[i].nvalues; j++)
			if (sb->params[i].values[j] == sa->params[ia].values[pa.idx[ia]])
				break;
		if (j == sb->params[i].nvalues)
			return;
		pb.idx[i] = (uint8_t)j;
	}
	space_key(sb, &pb, out, len);
}

struct ranked {
	const char *key;
	double ms;
};

static int
cmp_ranked(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	return a->ms < b->ms ? -1 : a->ms > b->ms;
}

static int
mode_replay(const struct args *a)
{
	static const double lv[4] = {0.90, 0.95, 0.99, 1.0};
	struct tune_landscape *la = NULL, *lb = NULL;
	struct ranked *rk = NULL;
	char why[512], (*seeds)[SPACE_KEY_MAX] = NULL;
	const char **sp = NULL;
	double *trace = NULL, *to[2][4], reached[2][4];
	int64_t i, n, nrk = 0;
	int ns = 0, r, l, v, ret = 1;

	memset(to, 0, sizeof(to));
	memset(reached, 0, sizeof(reached));
	if (tune_landscape_load(a->old_path, &la, why, sizeof(why)) < 0 ||
	    tune_landscape_load(a->new_path, &lb, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-retune: %s\n", why);
		goto out;
	}
	n = tune_landscape_count(la);
	rk = calloc((size_t)n + 1, sizeof(*rk));
	seeds = calloc((size_t)a->top + 1, sizeof(*seeds));
	sp = calloc((size_t)a->top + 1, sizeof(*sp));
	trace = calloc((size_t)a->budget, sizeof(double));
	if (rk == NULL || seeds == NULL || sp == NULL || trace == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		struct tune_result res;
		const char *key;

		if (tune_landscape_entry(la, i, &key, &res) == 0 && res.outcome == TUNE_OK)
			rk[nrk++] = (struct ranked){key, res.median_ms};
	}
	qsort(rk, (size_t)nrk, sizeof(*rk), cmp_ranked);
	printf("# bench-retune replay: old %s (%lld points, best %.4f ms), new %s (%lld points, "
	       "best %.4f ms)\n",
	       a->old_path, (long long)n, tune_landscape_best(la), a->new_path,
	       (long long)tune_landscape_count(lb), tune_landscape_best(lb));
	for (i = 0; i < nrk && ns < a->top && a->prev_budget == 0; i++) {
		struct tune_result res;

		map_key(tune_landscape_space(la), rk[i].key, tune_landscape_space(lb), seeds[ns],
		        SPACE_KEY_MAX);
		if (seeds[ns][0] == '\0')
			continue;
		if (tune_landscape_get(lb, seeds[ns], &res) == 0 && res.outcome == TUNE_OK)
			printf("# seed %d: old %.4f ms, new %.4f ms (%.1f%% of the new best): %s\n",
			       ns + 1, rk[i].ms, res.median_ms,
			       100 * tune_landscape_best(lb) / res.median_ms, seeds[ns]);
		else
			printf("# seed %d: old %.4f ms, not recorded in the new landscape: %s\n",
			       ns + 1, rk[i].ms, seeds[ns]);
		sp[ns] = seeds[ns];
		ns++;
	}
	for (v = 0; v < 2; v++)
		for (l = 0; l < 4; l++)
			to[v][l] = calloc((size_t)a->runs, sizeof(double));
	for (r = 0; r < a->runs; r++) {
		char prev[SPACE_KEY_MAX], mapped[SPACE_KEY_MAX];
		const char *one = mapped;

		if (a->prev_budget > 0) {
			/* The previous winner is what a tune of PREV_BUDGET evaluations
			 * found on the old landscape (its own seed), not the optimum. */
			double *pt = calloc((size_t)a->prev_budget, sizeof(double));

			if (pt == NULL)
				goto out;
			tune_replay_one(la, a->strategy, a->prev_budget, 1000 + (uint64_t)r, pt,
			                NULL, prev, sizeof(prev));
			free(pt);
			map_key(tune_landscape_space(la), prev, tune_landscape_space(lb), mapped,
			        sizeof(mapped));
		}
		for (v = 0; v < 2; v++) {
			int err = tune_replay_seeded(lb, a->strategy, a->budget, 1 + (uint64_t)r,
			                             v == 1               ? NULL
			                             : a->prev_budget > 0 ? &one
			                                                  : sp,
			                             v == 1               ? 0
			                             : a->prev_budget > 0 ? (mapped[0] != '\0')
			                                                  : ns,
			                             trace, NULL, NULL, 0);

			if (err < 0) {
				fprintf(stderr, "bench-retune: replay failed (%s)\n",
				        rocmd_strerror(err));
				goto out;
			}
			for (l = 0; l < 4; l++) {
				to[v][l][r] =
				    evals_to(trace, a->budget, tune_landscape_best(lb), lv[l]);
				reached[v][l] += to[v][l][r] <= a->budget ? 1.0 / a->runs : 0;
			}
		}
	}
	if (a->prev_budget > 0)
		printf(
		    "strategy %s, budget %d, %d runs (seeds 1..%d); seed of run r: the winner of "
		    "a %d-evaluation tune on the old landscape (seed 1000+r)\n",
		    a->strategy, a->budget, a->runs, a->runs, a->prev_budget);
	else
		printf("strategy %s, budget %d, %d runs (seeds 1..%d), the old landscape's %d best "
		       "as seeds\n",
		       a->strategy, a->budget, a->runs, a->runs, ns);
	printf("median evaluations (%d = never) [share of runs that got there], of the new "
	       "landscape's best:\n",
	       a->budget + 1);
	printf("  %-8s %14s %14s %14s %14s\n", "", "to 90%", "to 95%", "to 99%", "to best");
	for (v = 0; v < 2; v++) {
		printf("  %-8s", v == 0 ? "seeded" : "cold");
		for (l = 0; l < 4; l++)
			printf(" %7.1f [%3.0f%%]", median(to[v][l], a->runs), 100 * reached[v][l]);
		printf("\n");
	}
	ret = 0;
out:
	for (v = 0; v < 2; v++)
		for (l = 0; l < 4; l++)
			free(to[v][l]);
	free(trace);
	free(sp);
	free(seeds);
	free(rk);
	tune_landscape_free(la);
	tune_landscape_free(lb);
	return ret;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"shape", required_argument, NULL, 's'},
	    {"budget", required_argument, NULL, 'b'},
	    {"runs", required_argument, NULL, 'r'},
	    {"strategy", required_argument, NULL, 'S'},
	    {"old", required_argument, NULL, 'o'},
	    {"new", required_argument, NULL, 'n'},
	    {"top", required_argument, NULL, 't'},
	    {"prev-budget", required_argument, NULL, 'p'},
	    {"backend", required_argument, NULL, 'B'},
	    {"dtype", required_argument, NULL, 'd'},
	    {NULL, 0, NULL, 0},
	};
	struct args a;
	int c;

	/* The evaluation process is this program again (kernels/measure-proc.c). */
	if ((c = tune_evaluator_child(argc, argv)) >= 0)
		return c;
	memset(&a, 0, sizeof(a));
	a.top = 1;
	if (argc < 2)
		goto usage;
	a.mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			a.shapes = optarg;
			break;
		case 'b':
			a.budget = atoi(optarg);
			break;
		case 'r':
			a.runs = atoi(optarg);
			break;
		case 'S':
			a.strategy = optarg;
			break;
		case 'o':
			a.old_path = optarg;
			break;
		case 'n':
			a.new_path = optarg;
			break;
		case 't':
			a.top = atoi(optarg);
			break;
		case 'p':
			a.prev_budget = atoi(optarg);
			break;
		case 'B':
			a.backend = optarg;
			break;
		case 'd':
			a.dtype = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (a.top < 0 || a.top > 64)
		goto usage;
	if ((!strcmp(a.mode, "live") || !strcmp(a.mode, "cpu")) && a.shapes != NULL) {
		enum gemm_dtype dt;

		a.backend = a.backend ? a.backend : "cpu";
		a.dtype = a.dtype ? a.dtype : "fp32";
		if (backend_find(a.backend) == NULL || gemm_dtype_parse(a.dtype, &dt) < 0)
			goto usage;
		a.strategy = a.strategy ? a.strategy : "ga";
		a.budget = a.budget > 0 && a.budget < MAX_EVALS ? a.budget : 40;
		a.runs = a.runs > 0 ? a.runs : 3;
		return mode_cpu(&a);
	}
	if (!strcmp(a.mode, "replay") && a.old_path != NULL && a.new_path != NULL) {
		a.strategy = a.strategy ? a.strategy : "sa";
		a.budget = a.budget > 0 ? a.budget : 200;
		a.runs = a.runs > 0 ? a.runs : 100;
		if (tune_strategy_find(a.strategy) == NULL)
			goto usage;
		return mode_replay(&a);
	}
usage:
	fprintf(stderr,
	        "usage: bench-retune live --shape MxNxK[,MxNxK...] [--backend cpu] [--dtype fp32] "
	        "[--budget 40] [--runs 3] [--strategy ga]\n"
	        "       bench-retune replay --old A.csv --new B.csv [--budget 200] [--runs 100] "
	        "[--strategy sa] [--top 1 | --prev-budget N]\n");
	return 2;
}
