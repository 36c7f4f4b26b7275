/*
 * What strategies see (internal to kernels/): a search over one space with a
 * budget. Strategies only call search_eval(), which hides where results come
 * from (measurement, the store, a replayed landscape or a synthetic cost),
 * charges the budget once per distinct point, never for points the predicate
 * rules out, and remembers every point seen. A strategy loops until
 * search_stopped().
 */
#ifndef ROCMD_KERNELS_STRATEGY_H
#define ROCMD_KERNELS_STRATEGY_H

#include <math.h>
#include <stdint.h>

#include "kernels/tune.h"

/* The oracle: the result for a valid point. Returns 0, TUNE_SEARCH_MISSING
 * (replay: point not recorded, treated as invalid) or a negative error. */
#define TUNE_SEARCH_MISSING 1
typedef int (*search_oracle_fn)(struct tune_search *s, const struct space_point *pt,
				const char *key, struct tune_result *r);

struct tune_search {
	const struct space_def *space;
	const struct gemm_problem *problem;	 /* for the predicate; may be NULL */
	const struct backend_device_info *dev; /* for the predicate; may be NULL */
	search_oracle_fn oracle;
	/* Replaces the space predicate when set (replay: "recorded and not ruled out"). */
	int (*valid)(struct tune_search *s, const struct space_point *pt);
	/* Draws a random candidate when valid points are sparse (replay of a
	 * sampled landscape: a random recorded entry). 0, or -1. */
	int (*sample)(struct tune_search *s, struct space_point *pt);
	uint64_t sample_n; /* how many points sample() draws from */
	void *ctx;

	uint64_t rng;
	int budget;
	double deadline_ms; /* monotonic, 0: none */
	volatile int *cancel;

	int evals;
	int stop;
	int err;
	struct space_point best;
	double best_cost;
	int best_eval;
	double *trace; /* best cost after each evaluation (budget entries), may be NULL */
	uint64_t hash; /* of the sequence of evaluated points */

	/* visited points: open addressing, index + 1 as key (0 = empty) */
	uint64_t *vkeys;
	double *vcost;
	size_t vcap, vn;
};

int search_init(struct tune_search *s, const struct space_def *space, int budget, uint64_t seed);
void search_free(struct tune_search *s);

/* The cost (ms) of PT: INFINITY when not ok, invalid, or the search stopped. */
double search_eval(struct tune_search *s, const struct space_point *pt);
static inline int
search_stopped(const struct tune_search *s)
{
	return s->stop;
}
/* 1 and *COST when PT was seen (evaluated or ruled out). */
int search_seen(struct tune_search *s, const struct space_point *pt, double *cost);
int search_valid(struct tune_search *s, const struct space_point *pt);

uint64_t search_rand(struct tune_search *s);
/* Uniform in [0, 1). */
double search_uniform(struct tune_search *s);
/* Uniform in [0, n). */
uint64_t search_below(struct tune_search *s, uint64_t n);
/* A uniformly random valid point never seen before: 0, or -1 when none
 * was found in many tries (the space is exhausted or nearly all invalid). */
int search_random_fresh(struct tune_search *s, struct space_point *pt);

int strategy_exhaustive(struct tune_search *s);
int strategy_random(struct tune_search *s);
int strategy_local(struct tune_search *s);
int strategy_ga(struct tune_search *s);
int strategy_anneal(struct tune_search *s);
int strategy_reanneal(struct tune_search *s);
int strategy_surrogate(struct tune_search *s);

#endif
