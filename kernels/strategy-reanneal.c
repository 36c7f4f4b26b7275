/*
 * Simulated annealing with wide steps and restarts ("sar"). It starts with
 * one pass of coordinate line search from the best point (every other value
 * of each parameter in turn). Then, like "sa", it walks on log(time) and
 * accepts a slower point with probability exp(-dlog/T), but:
 *   - a proposal changes one parameter, to an adjacent value or (with
 *     probability SAR_WIDE) to any other value of its list, so that the walk
 *     can cross a value that is poor on its own (thread tile 4 -> 16 past 8);
 *   - the parameter to change is drawn with weights that grow with the effect
 *     it has shown so far (the largest log-time difference seen along it),
 *     with a floor so that no parameter is starved;
 *   - T falls geometrically from SAR_T0 to SAR_T1 within each epoch, and an
 *     epoch ends after SAR_PATIENCE evaluations without a new best: the walk
 *     then restarts from the best point (reheated). On the recorded
 *     landscapes short epochs (60-100 evaluations) did worse than one long
 *     one, so restarts only happen in long runs.
 * When every proposal near the current point has been seen, the walk moves
 * along seen points for free; when stuck for long it jumps to a random fresh
 * point. The hyper-parameters were chosen on replay seeds 101-200 of the
 * landscapes in bench/data/ and are reported on seeds 1-100 (docs/PERF.md).
 */
#include "kernels/strategy.h"

#include <string.h>

#define SAR_T0 0.10 /* log-time: a 10% slower point is accepted with p = 1/e */
#define SAR_T1 0.005
#define SAR_WIDE 0.5      /* share of proposals to any value rather than a neighbour */
#define SAR_PATIENCE 1000 /* evaluations without a new best before a restart */
#define SAR_EPOCH 400     /* evaluations over which T falls from T0 to T1 */
#define SAR_FLOOR 0.05    /* minimum weight of a parameter, in log-time */
#define SAR_TRIES 64

struct sar {
	double effect[SPACE_MAX_PARAMS]; /* largest |dlog| seen along each parameter */
	int live[SPACE_MAX_PARAMS];      /* parameters with more than one value */
	int nlive;
};

static int
pick_param(struct tune_search *s, const struct sar *st)
{
	double w = 0, u;
	int i;

	for (i = 0; i < st->nlive; i++)
		w += st->effect[st->live[i]] + SAR_FLOOR;
	u = search_uniform(s) * w;
	for (i = 0; i < st->nlive; i++) {
		u -= st->effect[st->live[i]] + SAR_FLOOR;
		if (u < 0)
			return st->live[i];
	}
	return st->live[st->nlive - 1];
}

static void
propose(struct tune_search *s, const struct sar *st, const struct space_point *cur,
        struct space_point *out, int *param)
{
	int p = pick_param(s, st), nv = s->space->params[p].nvalues, v = cur->idx[p];

	*out = *cur;
	if (nv == 2 || search_uniform(s) >= SAR_WIDE) {
		v += search_uniform(s) < 0.5 ? -1 : 1;
		if (v < 0)
			v = 1;
		if (v >= nv)
			v = nv - 2;
	} else {
		int w = (int)search_below(s, (uint64_t)nv - 1);

		v = w >= v ? w + 1 : w;
	}
	out->idx[p] = (uint8_t)v;
	*param = p;
}

/* One pass of coordinate line search from the best point: every other value
 * of each parameter in turn. It measures each parameter's effect (the weights
 * of the walk) and gets the cheap part of the gain first. */
static void
line_pass(struct tune_search *s, struct sar *st)
{
	int i, v;

	for (i = 0; i < st->nlive && !search_stopped(s); i++) {
		int p = st->live[i];
		struct space_point base = s->best, q;

		for (v = 0; v < s->space->params[p].nvalues && !search_stopped(s); v++) {
			double c;

			if (v == base.idx[p])
				continue;
			q = base;
			q.idx[p] = (uint8_t)v;
			c = search_eval(s, &q);
			if (isfinite(c) && isfinite(s->best_cost) &&
			    fabs(log(c) - log(s->best_cost)) > st->effect[p])
				st->effect[p] = fabs(log(c) - log(s->best_cost));
		}
	}
}

int
strategy_reanneal(struct tune_search *s)
{
	struct sar st;
	struct space_point cur;
	double curc;
	int i, idle = 0, epoch_start, last_best;

	memset(&st, 0, sizeof(st));
	for (i = 0; i < s->space->nparams; i++)
		if (s->space->params[i].nvalues > 1)
			st.live[st.nlive++] = i;
	if (st.nlive == 0)
		return s->err;
	if (isfinite(s->best_cost))
		line_pass(s, &st);
	if (isfinite(s->best_cost)) {
		cur = s->best;
		curc = s->best_cost;
	} else {
		if (search_random_fresh(s, &cur) < 0)
			return s->err;
		curc = search_eval(s, &cur);
	}
	epoch_start = s->evals;
	last_best = s->evals;
	while (!search_stopped(s)) {
		struct space_point nb;
		double frac, T, c;
		int tries, p = 0, fresh = 0;

		if (s->best_eval >= last_best)
			last_best = s->best_eval;
		if (s->evals - last_best > SAR_PATIENCE && isfinite(s->best_cost)) {
			/* Reheat from the best point. */
			cur = s->best;
			curc = s->best_cost;
			epoch_start = s->evals;
			last_best = s->evals;
		}
		frac = (double)(s->evals - epoch_start) / SAR_EPOCH;
		if (frac > 1)
			frac = 1;
		T = SAR_T0 * pow(SAR_T1 / SAR_T0, frac);
		for (tries = 0; tries < SAR_TRIES; tries++) {
			propose(s, &st, &cur, &nb, &p);
			if (!search_seen(s, &nb, NULL) && search_valid(s, &nb)) {
				fresh = 1;
				break;
			}
		}
		if (!fresh) {
			/* Everything near here was seen: drift along seen valid points
			 * (free), or jump when stuck for long. */
			if (++idle > 50) {
				if (search_random_fresh(s, &cur) < 0)
					break;
				curc = search_eval(s, &cur);
				idle = 0;
				continue;
			}
			if (search_seen(s, &nb, &c) && isfinite(c) &&
			    (c < curc || search_uniform(s) < 0.5)) {
				cur = nb;
				curc = c;
			}
			continue;
		}
		idle = 0;
		c = search_eval(s, &nb);
		if (!isfinite(c))
			continue;
		if (isfinite(curc) && fabs(log(c) - log(curc)) > st.effect[p])
			st.effect[p] = fabs(log(c) - log(curc));
		if (!isfinite(curc) || c < curc ||
		    search_uniform(s) < exp(-(log(c) - log(curc)) / T)) {
			cur = nb;
			curc = c;
		}
	}
	return s->err;
}
