/*
 * Simulated annealing ("sa") on log(time): from the best point so far, a
 * random unseen valid neighbour is proposed and accepted if faster, or with
 * probability exp(-dlog/T) if slower; T falls geometrically from 0.1 to 0.01
 * over the budget. When every neighbour has been seen the walk moves along
 * seen points for free; after a long stretch without anything new it jumps to
 * a random fresh point.
 */
#include "kernels/strategy.h"

#define SA_MAX_NB (2 * SPACE_MAX_PARAMS)

int
strategy_anneal(struct tune_search *s)
{
	struct space_point cur, nb[SA_MAX_NB];
	double curc, t0 = 0.1, t1 = 0.01;
	int idle = 0;

	if (isfinite(s->best_cost)) {
		cur = s->best;
		curc = s->best_cost;
	} else {
		if (search_random_fresh(s, &cur) < 0)
			return s->err;
		curc = search_eval(s, &cur);
	}
	while (!search_stopped(s)) {
		int n = space_neighbours(s->space, &cur, nb, SA_MAX_NB), tries, pick = -1;
		double frac = s->budget > 0 ? (double)s->evals / s->budget : 1.0;
		double T = t0 * pow(t1 / t0, frac), c;

		for (tries = 0; tries < 3 * n && n > 0; tries++) {
			int i = (int)search_below(s, (uint64_t)n);

			if (!search_seen(s, &nb[i], NULL) && search_valid(s, &nb[i])) {
				pick = i;
				break;
			}
		}
		if (pick < 0) {
			/* Walk on seen, valid ground, or jump when stuck too long. */
			if (++idle > 50 || n == 0) {
				if (search_random_fresh(s, &cur) < 0)
					break;
				curc = search_eval(s, &cur);
				idle = 0;
				continue;
			}
			pick = (int)search_below(s, (uint64_t)n);
			if (!search_valid(s, &nb[pick]))
				continue;
		} else {
			idle = 0;
		}
		c = search_eval(s, &nb[pick]);
		if (!isfinite(c))
			continue;
		if (!isfinite(curc) || c < curc || search_uniform(s) < exp(-(log(c) - log(curc)) / T)) {
			cur = nb[pick];
			curc = c;
		}
	}
	return s->err;
}
