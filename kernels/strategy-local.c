/*
 * Greedy multi-start local search ("ls"): first-improvement hill climbing
 * over the points that differ in one parameter (any other value, visited in
 * random order), started from the
 * best point so far. At a local optimum it restarts: half the time from a
 * random fresh point, half the time from the best point perturbed by a few
 * random steps (iterated local search), which keeps exploring near good
 * regions without being trapped in them.
 */
#include "kernels/strategy.h"

#define LS_MAX_NB (SPACE_MAX_PARAMS * SPACE_MAX_VALUES)

/* The neighbourhood: one parameter set to any other value of its list. Wider
 * than one step, it lets a climb jump across values that are bad on their own
 * (UNROLL 4 -> 1 past a poor 2), which one-step moves cannot. */
static int
all_values(const struct space_def *sp, const struct space_point *pt, struct space_point *out)
{
	int n = 0, i, v;

	for (i = 0; i < sp->nparams; i++)
		for (v = 0; v < sp->params[i].nvalues; v++)
			if (v != pt->idx[i]) {
				out[n] = *pt;
				out[n].idx[i] = (uint8_t)v;
				n++;
			}
	return n;
}

static void
shuffle(struct tune_search *s, struct space_point *v, int n)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int j = (int)search_below(s, (uint64_t)i + 1);
		struct space_point t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/* The best point moved by 2-3 random valid one-step moves. */
static int
perturb(struct tune_search *s, struct space_point *pt)
{
	struct space_point nb[LS_MAX_NB];
	int steps = 2 + (int)search_below(s, 2), tries;

	*pt = s->best;
	for (tries = 0; tries < 50 && steps > 0; tries++) {
		int n = space_neighbours(s->space, pt, nb, LS_MAX_NB);
		struct space_point c;

		if (n == 0)
			return -1;
		c = nb[search_below(s, (uint64_t)n)];
		if (!search_valid(s, &c))
			continue;
		*pt = c;
		steps--;
	}
	return search_seen(s, pt, NULL) ? -1 : 0;
}

int
strategy_local(struct tune_search *s)
{
	struct space_point cur, nb[LS_MAX_NB];
	double curc;
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
		int n = all_values(s->space, &cur, nb), i, moved = 0;
		int before = s->evals;

		shuffle(s, nb, n);
		for (i = 0; i < n && !search_stopped(s); i++) {
			double c = search_eval(s, &nb[i]);

			if (c < curc) {
				cur = nb[i];
				curc = c;
				moved = 1;
				break;
			}
		}
		if (moved)
			continue;
		/* A local optimum: restart. */
		if (!isfinite(s->best_cost) || search_uniform(s) < 0.5 || perturb(s, &cur) < 0) {
			if (search_random_fresh(s, &cur) < 0)
				break;
		}
		curc = search_eval(s, &cur);
		idle = s->evals == before ? idle + 1 : 0;
		if (idle > 1000)
			break;
	}
	return s->err;
}
