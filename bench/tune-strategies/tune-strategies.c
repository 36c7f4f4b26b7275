/*
 * bench-tune-strategies: how many evaluations each search strategy needs on
 * a recorded landscape. For each strategy it replays RUNS seeded searches
 * (no kernels run) and prints the median number of evaluations to reach 90,
 * 95 and 99% of the landscape's best, the share of runs that got there within
 * the budget, and the landscape's best vs its default configuration.
 *
 *   bench-tune-strategies [LANDSCAPE.csv] [--runs 50] [--budget 400] [--seed 1]
 *                         [--strategy random,ls,ga,sa,sar,surr] [--reference MS]
 *
 * --reference judges the levels against MS instead of the landscape's best:
 * a noise-corrected best (the best is the luckiest of many noisy medians).
 *
 * The default landscape is bench/data/cpu-fp32-256.csv (the CPU backend,
 * fp32 256^3, recorded exhaustively by rocmtune; see docs/PERF.md).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/tune.h"

#ifndef ROCMD_SOURCE_DIR
#define ROCMD_SOURCE_DIR "."
#endif

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* tune_replay() with the levels taken against REF rather than the best. */
static int
replay_against(const struct tune_landscape *l, const char *strategy, int runs, int budget,
               uint64_t seed, double ref, struct tune_replay_stats *out)
{
	static const double level[3] = {0.90, 0.95, 0.99};
	double *trace = malloc(budget * sizeof(double)), *to = malloc(3 * runs * sizeof(double));
	int r, t, e, err = 0;

	memset(out, 0, sizeof(*out));
	if (trace == NULL || to == NULL) {
		err = -1;
		goto out;
	}
	for (r = 0; r < runs; r++) {
		err =
		    tune_replay_one(l, strategy, budget, seed + (uint64_t)r, trace, NULL, NULL, 0);
		if (err < 0)
			goto out;
		for (t = 0; t < 3; t++) {
			to[t * runs + r] = budget + 1;
			for (e = 0; e < budget; e++) {
				if (trace[e] <= ref / level[t]) {
					to[t * runs + r] = e + 1;
					out->reached[t] += 1.0 / runs;
					break;
				}
			}
		}
		out->mean_final +=
		    (isfinite(trace[budget - 1]) ? ref / trace[budget - 1] : 0) / runs;
	}
	for (t = 0; t < 3; t++) {
		double *v = to + t * runs;

		qsort(v, runs, sizeof(double), cmp_dbl);
		out->median_to[t] = runs % 2 ? v[runs / 2] : 0.5 * (v[runs / 2 - 1] + v[runs / 2]);
	}
out:
	free(trace);
	free(to);
	return err;
}

int
main(int argc, char **argv)
{
	const char *path = ROCMD_SOURCE_DIR "/bench/data/cpu-fp32-256.csv";
	const char *strategies[16] = {"random", "ls", "ga", "sa", "sar", "surr"};
	char list[256];
	int nstrat = 6;
	struct tune_landscape *l = NULL;
	struct space_point dflt;
	struct tune_result dr;
	char why[512], key[SPACE_KEY_MAX];
	int runs = 50, budget = 400, i, ok = 0;
	uint64_t seed = 1;
	double ref = 0;
	int64_t n;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
			budget = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--reference") && i + 1 < argc)
			ref = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--strategy") && i + 1 < argc) {
			char *tok, *save = NULL;

			snprintf(list, sizeof(list), "%s", argv[++i]);
			nstrat = 0;
			for (tok = strtok_r(list, ",", &save); tok != NULL && nstrat < 16;
			     tok = strtok_r(NULL, ",", &save))
				strategies[nstrat++] = tok;
		} else if (argv[i][0] != '-')
			path = argv[i];
		else {
			fprintf(stderr,
			        "usage: %s [LANDSCAPE.csv] [--runs N] [--budget N] [--seed N] "
			        "[--strategy S,S...] [--reference MS]\n",
			        argv[0]);
			return 2;
		}
	}
	if (tune_landscape_load(path, &l, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-tune-strategies: %s\n", why);
		return 1;
	}
	n = tune_landscape_count(l);
	space_point_default(tune_landscape_space(l), &dflt);
	space_key(tune_landscape_space(l), &dflt, key, sizeof(key));
	printf("landscape %s\nproblem %s, %" PRId64 " configurations, best %.4f ms\n", path,
	       tune_landscape_problem(l), n, tune_landscape_best(l));
	if (tune_landscape_get(l, key, &dr) == 0 && dr.outcome == TUNE_OK)
		printf("default %s: %.4f ms, best is %.2fx faster\n", key, dr.median_ms,
		       dr.median_ms / tune_landscape_best(l));
	if (ref > 0)
		printf("levels judged against a reference of %.4f ms (%.3f of the best)\n", ref,
		       tune_landscape_best(l) / ref);
	printf("%d seeded runs per strategy (seeds %" PRIu64 "..%" PRIu64 "), budget %d "
	       "evaluations; '>%d' = not reached in half the runs\n\n",
	       runs, seed, seed + runs - 1, budget, budget);
	printf("%-8s %16s %16s %16s %10s\n", "strategy", "median to 90%", "median to 95%",
	       "median to 99%", "mean final");
	for (i = 0; i < nstrat; i++) {
		struct tune_replay_stats st;
		char cell[3][48];
		int t;

		if (ref > 0 ? replay_against(l, strategies[i], runs, budget, seed, ref, &st) < 0
		            : tune_replay(l, strategies[i], runs, budget, seed, &st, why,
		                          sizeof(why)) < 0) {
			fprintf(stderr, "bench-tune-strategies: %s: %s\n", strategies[i], why);
			tune_landscape_free(l);
			return 1;
		}
		for (t = 0; t < 3; t++) {
			if (st.median_to[t] > budget)
				snprintf(cell[t], sizeof(cell[t]), ">%d (%3.0f%%)", budget,
				         st.reached[t] * 100);
			else
				snprintf(cell[t], sizeof(cell[t]), "%g (%3.0f%%)", st.median_to[t],
				         st.reached[t] * 100);
		}
		printf("%-8s %16s %16s %16s %10.4f\n", strategies[i], cell[0], cell[1], cell[2],
		       st.mean_final);
		ok++;
	}
	printf("\n(%%) = share of runs reaching the level within the budget; mean final = "
	       "mean of best/found after the budget\n");
	tune_landscape_free(l);
	return ok == nstrat ? 0 : 1;
}
