/*
 * Steady-state genetic algorithm ("ga"): a population of 10 (seeded with the
 * best points so far), tournament selection of 3, uniform crossover, and
 * mutation by one-step moves (mostly) or random values (rarely). Each child is
 * evaluated once and replaces the worst member if it is better. Children that
 * were seen or are invalid are re-drawn, so the budget goes to new points.
 */
#include "kernels/strategy.h"

#include <string.h>

#define GA_POP 10

struct member {
	struct space_point pt;
	double cost;
};

static int
tournament(struct tune_search *s, const struct member *pop, int n)
{
	int best = (int)search_below(s, (uint64_t)n), i;

	for (i = 0; i < 2; i++) {
		int c = (int)search_below(s, (uint64_t)n);

		if (pop[c].cost < pop[best].cost)
			best = c;
	}
	return best;
}

static void
make_child(struct tune_search *s, const struct member *pop, int n, struct space_point *child)
{
	const struct space_def *sp = s->space;
	const struct space_point *a = &pop[tournament(s, pop, n)].pt;
	const struct space_point *b = &pop[tournament(s, pop, n)].pt;
	double pm = 3.0 / sp->nparams;
	int i, mutated = 0;

	for (i = 0; i < sp->nparams; i++) {
		child->idx[i] = search_uniform(s) < 0.5 ? a->idx[i] : b->idx[i];
		if (sp->params[i].nvalues > 1 && search_uniform(s) < pm) {
			int nv = sp->params[i].nvalues, v = child->idx[i];

			if (search_uniform(s) < 0.8)
				v += search_uniform(s) < 0.5 ? -1 : 1;
			else
				v = (int)search_below(s, (uint64_t)nv);
			child->idx[i] = (uint8_t)(v < 0 ? 1 : v >= nv ? nv - 2 : v);
			mutated = 1;
		}
	}
	if (!mutated) {
		/* Never propose a parent again: force one step somewhere. */
		for (i = 0; i < 8; i++) {
			int pi = (int)search_below(s, (uint64_t)sp->nparams);
			int nv = sp->params[pi].nvalues, v = child->idx[pi];

			if (nv < 2)
				continue;
			v += search_uniform(s) < 0.5 ? -1 : 1;
			child->idx[pi] = (uint8_t)(v < 0 ? 1 : v >= nv ? nv - 2 : v);
			break;
		}
	}
}

int
strategy_ga(struct tune_search *s)
{
	struct member pop[GA_POP];
	int n = 0, i;

	memset(pop, 0, sizeof(pop));
	if (isfinite(s->best_cost)) {
		pop[n].pt = s->best;
		pop[n].cost = s->best_cost;
		n++;
	}
	while (n < GA_POP && !search_stopped(s)) {
		if (search_random_fresh(s, &pop[n].pt) < 0)
			break;
		pop[n].cost = search_eval(s, &pop[n].pt);
		n++;
	}
	if (n < 2)
		return s->err;
	while (!search_stopped(s)) {
		struct space_point child;
		int tries, worst = 0, fresh = 0;
		double c;

		for (tries = 0; tries < 60; tries++) {
			make_child(s, pop, n, &child);
			if (!search_seen(s, &child, NULL) && search_valid(s, &child)) {
				fresh = 1;
				break;
			}
		}
		if (!fresh && search_random_fresh(s, &child) < 0)
			break;
		c = search_eval(s, &child);
		for (i = 1; i < n; i++)
			if (pop[i].cost > pop[worst].cost)
				worst = i;
		if (c < pop[worst].cost || !isfinite(pop[worst].cost)) {
			pop[worst].pt = child;
			pop[worst].cost = c;
		}
	}
	return s->err;
}
