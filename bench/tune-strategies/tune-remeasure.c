/*
 * bench-tune-remeasure: how much of a recorded landscape is noise. It takes
 * the TOP best configurations of a landscape and RANDOM others (seeded), and
 * measures them again on the backend in ROUNDS interleaved rounds (a fresh
 * shuffled order each round, so drift and load hit every point alike). One
 * CSV line per configuration goes to stdout:
 *
 *   config,rank,recorded_ms,round1_ms,...,roundN_ms
 *
 * rank is the configuration's rank in the landscape (1 = the recorded best).
 * The comparison (rank correlation, spread between rounds, how far the
 * recorded best falls) is plain arithmetic on that file (docs/PERF.md).
 *
 *   bench-tune-remeasure LANDSCAPE.csv [--top 100] [--random 200] [--rounds 3]
 *                        [--runs 15] [--warmup 50] [--seed 1] [--backend cpu]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/tune.h"

struct pick {
	const char *key;
	double recorded;
	int rank;
	double *ms;
};

static int
cmp_recorded(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	return x->recorded < y->recorded ? -1 : x->recorded > y->recorded;
}

static uint64_t
next_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int
main(int argc, char **argv)
{
	const char *path = NULL, *backend = "cpu";
	int top = 100, nrandom = 200, rounds = 3, i, j, r, ret = 1;
	struct tune_measure_opts mo = {.runs = 15, .warmup_ms = 50};
	struct tune_landscape *l = NULL;
	struct tune_evaluator *ev = NULL;
	struct backend_device_info dev;
	struct space_def space;
	struct gemm_problem p;
	struct pick *all = NULL, *sel = NULL;
	int *order = NULL;
	char why[512], hash[17];
	uint64_t seed = 1, rng;
	int64_t n, nok = 0, nsel = 0;
	const struct backend_ops *ops;

	/* The evaluation process is this program again (kernels/measure-proc.c). */
	if ((ret = tune_evaluator_child(argc, argv)) >= 0)
		return ret;
	ret = 1;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--top") && i + 1 < argc)
			top = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--random") && i + 1 < argc)
			nrandom = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			mo.runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			mo.warmup_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			backend = argv[++i];
		else if (argv[i][0] != '-' && path == NULL)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (path == NULL || top < 0 || nrandom < 0 || rounds < 1 || mo.runs < 1) {
		fprintf(stderr,
		        "usage: %s LANDSCAPE.csv [--top N] [--random N] [--rounds N] [--runs N] "
		        "[--warmup MS] [--seed N] [--backend cpu]\n",
		        argv[0]);
		return 2;
	}
	if (tune_landscape_load(path, &l, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-tune-remeasure: %s\n", why);
		goto out;
	}
	if (gemm_problem_parse(tune_landscape_problem(l), &p) < 0 ||
	    (ops = backend_find(backend)) == NULL) {
		fprintf(stderr, "bench-tune-remeasure: bad problem '%s' or backend '%s'\n",
		        tune_landscape_problem(l), backend);
		goto out;
	}
	n = tune_landscape_count(l);
	all = calloc(n > 0 ? n : 1, sizeof(*all));
	if (all == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		struct tune_result res;
		const char *key;

		tune_landscape_entry(l, i, &key, &res);
		if (res.outcome != TUNE_OK || res.median_ms <= 0)
			continue;
		all[nok].key = key;
		all[nok].recorded = res.median_ms;
		nok++;
	}
	qsort(all, nok, sizeof(*all), cmp_recorded);
	for (i = 0; i < nok; i++)
		all[i].rank = i + 1;
	if (top > nok)
		top = (int)nok;
	if (nrandom > nok - top)
		nrandom = (int)(nok - top);
	/* The random part: a seeded partial shuffle of the rest. */
	rng = seed;
	for (i = 0; i < nrandom; i++) {
		int64_t k = top + i + (int64_t)(next_rand(&rng) % (uint64_t)(nok - top - i));
		struct pick t = all[top + i];

		all[top + i] = all[k];
		all[k] = t;
	}
	nsel = top + nrandom;
	sel = all;
	order = calloc(nsel > 0 ? nsel : 1, sizeof(int));
	if (order == NULL)
		goto out;
	for (i = 0; i < nsel; i++) {
		sel[i].ms = calloc(rounds, sizeof(double));
		if (sel[i].ms == NULL)
			goto out;
	}
	mo.isolate = -1; /* in process: no fork per evaluation, nothing planted here */
	if (tune_evaluator_open(ops, 0, &p, &mo, &ev, &dev, &space, hash, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-tune-remeasure: backend %s: %s\n", backend, why);
		goto out;
	}
	fprintf(stderr, "bench-tune-remeasure: %s on %s (%d CPUs): %d best + %d random, %d rounds\n",
	        tune_landscape_problem(l), dev.name, dev.compute_units, top, nrandom, rounds);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < nsel; i++)
			order[i] = i;
		for (i = (int)nsel - 1; i > 0; i--) {
			int k = (int)(next_rand(&rng) % (uint64_t)(i + 1)), t = order[i];

			order[i] = order[k];
			order[k] = t;
		}
		for (j = 0; j < nsel; j++) {
			struct tune_result res;
			struct pick *pk = &sel[order[j]];

			if (tune_evaluator_eval(ev, pk->key, r ? TUNE_EVAL_TIME_ONLY : 0, &res) < 0) {
				fprintf(stderr, "bench-tune-remeasure: %s: harness failure\n", pk->key);
				goto out;
			}
			pk->ms[r] = res.outcome == TUNE_OK ? res.median_ms : -1;
		}
		fprintf(stderr, "bench-tune-remeasure: round %d done\n", r + 1);
	}
	printf("config,rank,recorded_ms");
	for (r = 0; r < rounds; r++)
		printf(",round%d_ms", r + 1);
	printf("\n");
	for (i = 0; i < nsel; i++) {
		printf("%s,%d,%.6g", sel[i].key, sel[i].rank, sel[i].recorded);
		for (r = 0; r < rounds; r++)
			printf(",%.6g", sel[i].ms[r]);
		printf("\n");
	}
	ret = 0;
out:
	if (ev != NULL)
		tune_evaluator_close(ev);
	if (all != NULL)
		for (i = 0; i < nsel && i < nok; i++)
			free(all[i].ms);
	free(all);
	free(order);
	tune_landscape_free(l);
	return ret;
}
