/*
 * Line pass, joint search and a surrogate model ("surr"). GEMM landscapes are
 * mostly additive in log(time): sizes (macro tile, depth) are smooth and
 * nearly separable, while a few short-listed switches of the kernel (thread
 * tile, unroll, vector width, prefetch) interact, so that the best kernel can
 * be a lone spike whose one-parameter neighbours are poor. The strategy:
 *
 *   1. a coordinate line pass from the best seed: each live parameter in a
 *      seeded random order, every value, the base moving to the best point
 *      after each parameter. A parameter whose best value on its line beats
 *      every other value by SURR_DECISIVE is "settled";
 *   2. a joint search: the unsettled parameters with the shortest value lists,
 *      as many as keep the product of their counts within SURR_JOINT, and
 *      every combination of their values at the best point (its "block": the
 *      other parameters), in the order of the model's score;
 *   3. the line pass again (the sizes that suit the new kernel);
 *   4. until the budget is spent: fit log(time) of every point measured so
 *      far as a mean plus one effect per parameter value plus one per value
 *      pair of two parameters (backfitting, each effect shrunk towards 0 by
 *      its count), and evaluate the unseen point with the lowest score among
 *      those that differ from one of the SURR_CENTERS best points in one or
 *      two parameters. A value or value pair never measured gets an
 *      optimistic credit. With probability SURR_EPS, or when no neighbour is
 *      left, a random fresh point is taken instead. After SURR_STALL
 *      evaluations without a new best, the joint search runs again at the
 *      best point whose block was not searched yet, then a line pass.
 *
 * Everything random comes from the search's seeded source and ties keep
 * candidate order, so a seed replays exactly. The constants were chosen on
 * replay seeds 101-130 of bench/data/ with the H200 fp32 landscape and the
 * second Xeon replicate held out; figures on seeds 1-100 in docs/PERF.md.
 */
#include "kernels/strategy.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define SURR_CENTERS 3       /* neighbourhoods of the best points scored each step */
#define SURR_TOPK 16         /* best-scored candidates kept per step */
#define SURR_LAMBDA_MAIN 1.0 /* shrinkage (pseudo-counts) of a value's effect */
#define SURR_LAMBDA_PAIR 2.0 /* of a value pair's effect */
#define SURR_BONUS_MAIN 0.20 /* log-time credit of a value never measured */
#define SURR_BONUS_PAIR 0.10 /* of a value pair never measured */
#define SURR_EPS 0.05        /* share of model steps that take a random fresh point */
#define SURR_SWEEPS 3        /* backfitting sweeps per refit */
#define SURR_DECISIVE 1.5    /* a line's best this much faster than all else: settled */
#define SURR_JOINT 48        /* most combinations one joint search evaluates */
#define SURR_STALL 40        /* evaluations without a new best before a restart */
#define SURR_MAX_BLOCKS 64   /* blocks remembered as joint-searched */
/* Values of one parameter the model indexes. Spaces of kernels stay within it;
 * a vendor library's candidate list (kernels/vendor.h) can be longer, and a
 * pairwise model over an unordered list of solutions would learn nothing:
 * such a space is searched by strategy_reanneal instead. */
#define SURR_MAXV 16

struct surr {
	int live[SPACE_MAX_PARAMS], nlive;
	int npairs;
	int pa[SPACE_MAX_PARAMS * SPACE_MAX_PARAMS / 2],
	    pb[SPACE_MAX_PARAMS * SPACE_MAX_PARAMS / 2];
	/* measured points (live parameters' value indexes) and their log time */
	uint8_t (*x)[SPACE_MAX_PARAMS];
	double *y, *res;
	int n, cap;
	double mu;
	/* effects: main[live][value], pair[pair][va * SURR_MAXV + vb] */
	double main[SPACE_MAX_PARAMS][SURR_MAXV];
	int nmain[SPACE_MAX_PARAMS][SURR_MAXV];
	double (*pair)[SURR_MAXV * SURR_MAXV];
	int (*npair)[SURR_MAXV * SURR_MAXV];
	/* the joint search: its parameters (indexes into live), the blocks done */
	int group[SPACE_MAX_PARAMS], ng, prod;
	uint64_t blocks[SURR_MAX_BLOCKS];
	int nblocks;
};

static int
surr_add(struct surr *m, const struct space_point *pt, double cost)
{
	int i;

	if (!isfinite(cost) || cost <= 0)
		return 0;
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 256;
		void *nx = realloc(m->x, (size_t)cap * sizeof(*m->x));
		double *ny, *nr;

		if (nx == NULL)
			return -1;
		m->x = nx;
		ny = realloc(m->y, (size_t)cap * sizeof(double));
		if (ny == NULL)
			return -1;
		m->y = ny;
		nr = realloc(m->res, (size_t)cap * sizeof(double));
		if (nr == NULL)
			return -1;
		m->res = nr;
		m->cap = cap;
	}
	for (i = 0; i < m->nlive; i++)
		m->x[m->n][i] = pt->idx[m->live[i]];
	m->y[m->n] = log(cost);
	m->n++;
	return 0;
}

/* The model's prediction for point X minus the residual it leaves out. */
static double
surr_predict(const struct surr *m, const uint8_t *x)
{
	double f = m->mu;
	int i;

	for (i = 0; i < m->nlive; i++)
		f += m->main[i][x[i]];
	for (i = 0; i < m->npairs; i++)
		f += m->pair[i][x[m->pa[i]] * SURR_MAXV + x[m->pb[i]]];
	return f;
}

/* Backfitting: each effect in turn becomes the shrunk mean of the residuals
 * of the points that have its value (or value pair). */
static void
surr_fit(struct surr *m)
{
	double sum[SURR_MAXV * SURR_MAXV];
	int sweep, i, j, k;

	memset(m->main, 0, sizeof(m->main));
	memset(m->nmain, 0, sizeof(m->nmain));
	memset(m->pair, 0, (size_t)m->npairs * sizeof(*m->pair));
	memset(m->npair, 0, (size_t)m->npairs * sizeof(*m->npair));
	m->mu = 0;
	for (j = 0; j < m->n; j++)
		m->mu += m->y[j] / m->n;
	for (j = 0; j < m->n; j++) {
		m->res[j] = m->y[j] - m->mu;
		for (i = 0; i < m->nlive; i++)
			m->nmain[i][m->x[j][i]]++;
		for (i = 0; i < m->npairs; i++)
			m->npair[i][m->x[j][m->pa[i]] * SURR_MAXV + m->x[j][m->pb[i]]]++;
	}
	for (sweep = 0; sweep < SURR_SWEEPS; sweep++) {
		for (i = 0; i < m->nlive; i++) {
			memset(sum, 0, SURR_MAXV * sizeof(double));
			for (j = 0; j < m->n; j++)
				sum[m->x[j][i]] += m->res[j] + m->main[i][m->x[j][i]];
			for (j = 0; j < m->n; j++)
				m->res[j] += m->main[i][m->x[j][i]];
			for (k = 0; k < SURR_MAXV; k++)
				m->main[i][k] = sum[k] / (m->nmain[i][k] + SURR_LAMBDA_MAIN);
			for (j = 0; j < m->n; j++)
				m->res[j] -= m->main[i][m->x[j][i]];
		}
		for (i = 0; i < m->npairs; i++) {
			double *g = m->pair[i];

			memset(sum, 0, sizeof(sum));
			for (j = 0; j < m->n; j++) {
				int c = m->x[j][m->pa[i]] * SURR_MAXV + m->x[j][m->pb[i]];

				sum[c] += m->res[j] + g[c];
				m->res[j] += g[c];
			}
			for (k = 0; k < SURR_MAXV * SURR_MAXV; k++)
				g[k] = m->npair[i][k] ? sum[k] / (m->npair[i][k] + SURR_LAMBDA_PAIR)
				                      : 0;
			for (j = 0; j < m->n; j++)
				m->res[j] -=
				    g[m->x[j][m->pa[i]] * SURR_MAXV + m->x[j][m->pb[i]]];
		}
	}
}

/* Lower is better: the predicted log time less the credit for what was never
 * measured. */
static double
surr_score(const struct surr *m, const uint8_t *x)
{
	double f = surr_predict(m, x);
	int i;

	for (i = 0; i < m->nlive; i++)
		if (m->nmain[i][x[i]] == 0)
			f -= SURR_BONUS_MAIN;
	for (i = 0; i < m->npairs; i++)
		if (m->npair[i][x[m->pa[i]] * SURR_MAXV + x[m->pb[i]]] == 0)
			f -= SURR_BONUS_PAIR;
	return f;
}

struct cand {
	double score;
	struct space_point pt;
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->score < y->score ? -1 : x->score > y->score;
}

struct cands {
	struct cand c[SURR_TOPK];
	size_t n;
};

struct seen_pt {
	uint64_t index;
	double cost;
};

static int
cmp_seen(const void *a, const void *b)
{
	const struct seen_pt *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/* The SURR_CENTERS best measured points (by their index in M). */
static int
best_centers(const struct surr *m, int *out)
{
	int i, j, k = 0;

	for (i = 0; i < m->n; i++) {
		for (j = k; j > 0 && m->y[out[j - 1]] > m->y[i]; j--)
			if (j < SURR_CENTERS)
				out[j] = out[j - 1];
		if (j < SURR_CENTERS) {
			out[j] = i;
			if (k < SURR_CENTERS)
				k++;
		}
	}
	return k;
}

/* Keeps the SURR_TOPK best-scored unseen points of a scan in CS (sorted). */
static void
cand_offer(struct tune_search *s, const struct surr *m, struct cands *cs,
           const struct space_point *pt)
{
	uint8_t x[SPACE_MAX_PARAMS];
	double f;
	size_t j;
	int i;

	for (i = 0; i < m->nlive; i++)
		x[i] = pt->idx[m->live[i]];
	f = surr_score(m, x);
	if (cs->n == SURR_TOPK && f >= cs->c[cs->n - 1].score)
		return;
	if (search_seen(s, pt, NULL))
		return;
	for (j = 0; j < cs->n; j++)
		if (!memcmp(&cs->c[j].pt, pt, sizeof(*pt)))
			return; /* offered twice (from two centers) */
	j = cs->n < SURR_TOPK ? cs->n++ : cs->n - 1;
	while (j > 0 && cs->c[j - 1].score > f) {
		cs->c[j] = cs->c[j - 1];
		j--;
	}
	cs->c[j].score = f;
	cs->c[j].pt = *pt;
}

/* The unseen points within two parameter changes of the best points. */
static void
scan_centers(struct tune_search *s, const struct surr *m, struct cands *cs)
{
	int centers[SURR_CENTERS], nc, c, a, b, va, vb;

	nc = best_centers(m, centers);
	for (c = 0; c < nc; c++) {
		struct space_point base;

		space_point_default(s->space, &base);
		for (a = 0; a < m->nlive; a++)
			base.idx[m->live[a]] = m->x[centers[c]][a];
		for (a = 0; a < m->nlive; a++) {
			int pa = m->live[a], na = s->space->params[pa].nvalues;

			for (va = 0; va < na; va++) {
				struct space_point q = base;

				if (va == base.idx[pa])
					continue;
				q.idx[pa] = (uint8_t)va;
				cand_offer(s, m, cs, &q);
				for (b = a + 1; b < m->nlive; b++) {
					int pb = m->live[b], nb = s->space->params[pb].nvalues;

					for (vb = 0; vb < nb; vb++) {
						struct space_point r = q;

						if (vb == base.idx[pb])
							continue;
						r.idx[pb] = (uint8_t)vb;
						cand_offer(s, m, cs, &r);
					}
				}
			}
		}
	}
}

/* Picks the next point: the best-scored unseen valid point within two
 * parameter changes of one of the best points. 0, or -1 when there is none. */
static int
surr_next(struct tune_search *s, struct surr *m, struct cands *cs, struct space_point *out)
{
	size_t j;

	surr_fit(m);
	cs->n = 0;
	scan_centers(s, m, cs);
	for (j = 0; j < cs->n; j++) {
		if (search_valid(s, &cs->c[j].pt)) {
			*out = cs->c[j].pt;
			return 0;
		}
		search_eval(s, &cs->c[j].pt); /* invalid: remembered, costs nothing */
	}
	return -1;
}

/* Every seen point with a finite cost (the seed set) goes into the model,
 * in index order so that the model never depends on the visited table's
 * layout. */
static int
surr_load_seen(struct tune_search *s, struct surr *m)
{
	struct seen_pt *v;
	size_t i, k = 0;
	int err = 0;

	if (s->vn == 0)
		return 0;
	v = malloc(s->vn * sizeof(*v));
	if (v == NULL)
		return -1;
	for (i = 0; i < s->vcap; i++) {
		if (s->vkeys[i] != 0 && isfinite(s->vcost[i])) {
			v[k].index = s->vkeys[i] - 1;
			v[k].cost = s->vcost[i];
			k++;
		}
	}
	qsort(v, k, sizeof(*v), cmp_seen);
	for (i = 0; i < k && err == 0; i++) {
		struct space_point pt;

		space_point_from_index(s->space, v[i].index, &pt);
		err = surr_add(m, &pt, v[i].cost);
	}
	free(v);
	return err;
}

static double
surr_eval(struct tune_search *s, struct surr *m, const struct space_point *pt)
{
	double c;

	if (search_seen(s, pt, &c))
		return c;
	c = search_eval(s, pt);
	if (surr_add(m, pt, c) < 0) {
		s->err = ROCMD_ENOMEM;
		s->stop = 1;
	}
	return c;
}

/* Coordinate line search from the best point, the parameters in a seeded
 * order, the base moving to the best point after each parameter. With
 * SETTLED, marks the parameters whose best value beats every other value of
 * the line by SURR_DECISIVE (the joint search leaves them alone). */
static void
line_pass(struct tune_search *s, struct surr *m, int *settled)
{
	int order[SPACE_MAX_PARAMS], i, v;

	for (i = 0; i < m->nlive; i++)
		order[i] = i;
	for (i = m->nlive - 1; i > 0; i--) {
		int k = (int)search_below(s, (uint64_t)i + 1), t = order[i];

		order[i] = order[k];
		order[k] = t;
	}
	for (i = 0; i < m->nlive && !search_stopped(s) && isfinite(s->best_cost); i++) {
		int p = m->live[order[i]], nv = s->space->params[p].nvalues;
		struct space_point base = s->best;
		double line[SURR_MAXV], second = INFINITY;

		for (v = 0; v < nv && !search_stopped(s); v++) {
			struct space_point q = base;

			q.idx[p] = (uint8_t)v;
			line[v] = surr_eval(s, m, &q);
		}
		if (settled == NULL || search_stopped(s))
			continue;
		for (v = 0; v < nv; v++)
			if (v != s->best.idx[p] && line[v] < second)
				second = line[v];
		/* Judged at the line's base: the best may have moved along it. */
		settled[order[i]] = s->best_cost * SURR_DECISIVE <= second;
	}
}

/*
 * The joint search: the live parameters that are not settled, shortest value
 * lists first (in GEMM spaces the short lists are the kernel's switches --
 * thread tile, unroll, vector width, prefetch -- whose values interact, while
 * long lists are sizes that a line search handles), as many as keep the
 * product of their value counts within SURR_JOINT. Every combination of their
 * values at the best point is evaluated, in the order of the model's score.
 */
static void
choose_group(struct tune_search *s, struct surr *m, const int *settled)
{
	int i, j;

	m->ng = 0;
	m->prod = 1;
	for (;;) {
		int pick = -1;

		for (i = 0; i < m->nlive; i++) {
			int nv = s->space->params[m->live[i]].nvalues, in = 0;

			for (j = 0; j < m->ng; j++)
				in |= m->group[j] == i;
			if (in || settled[i] || m->prod * nv > SURR_JOINT)
				continue;
			if (pick < 0 || nv < s->space->params[m->live[pick]].nvalues)
				pick = i;
		}
		if (pick < 0)
			break;
		m->group[m->ng++] = pick;
		m->prod *= s->space->params[m->live[pick]].nvalues;
	}
	if (m->ng < 2)
		m->ng = 0;
}

/* The index of PT with the group's parameters cleared: its "block". */
static uint64_t
block_of(const struct tune_search *s, const struct surr *m, const struct space_point *pt)
{
	struct space_point q = *pt;
	int j;

	for (j = 0; j < m->ng; j++)
		q.idx[m->live[m->group[j]]] = 0;
	return space_point_index(s->space, &q);
}

/* Every unseen combination of the group's values at BASE, best score first.
 * Returns 0, or -1 when BASE's block was searched before. */
static int
joint_at(struct tune_search *s, struct surr *m, const struct space_point *base)
{
	uint64_t blk = block_of(s, m, base);
	struct cand *all;
	int i, j, n = 0;

	for (i = 0; i < m->nblocks; i++)
		if (m->blocks[i] == blk)
			return -1;
	if (m->nblocks < SURR_MAX_BLOCKS)
		m->blocks[m->nblocks++] = blk;
	all = calloc((size_t)m->prod, sizeof(*all));
	if (all == NULL) {
		s->err = ROCMD_ENOMEM;
		s->stop = 1;
		return 0;
	}
	surr_fit(m);
	for (i = 0; i < m->prod; i++) {
		struct space_point q = *base;
		uint8_t x[SPACE_MAX_PARAMS];
		int r = i, k;

		for (j = 0; j < m->ng; j++) {
			int nv = s->space->params[m->live[m->group[j]]].nvalues;

			q.idx[m->live[m->group[j]]] = (uint8_t)(r % nv);
			r /= nv;
		}
		if (search_seen(s, &q, NULL))
			continue;
		for (k = 0; k < m->nlive; k++)
			x[k] = q.idx[m->live[k]];
		all[n].score = surr_score(m, x);
		all[n].pt = q;
		n++;
	}
	qsort(all, (size_t)n, sizeof(*all), cmp_cand);
	for (i = 0; i < n && !search_stopped(s); i++)
		surr_eval(s, m, &all[i].pt);
	free(all);
	return 0;
}

/* A restart: the joint search at the best measured point whose block has not
 * been searched yet. */
static void
joint_restart(struct tune_search *s, struct surr *m)
{
	int *order, i, j;

	if (m->ng == 0 || m->n == 0)
		return;
	order = malloc((size_t)m->n * sizeof(int));
	if (order == NULL)
		return;
	for (i = 0; i < m->n; i++)
		order[i] = i;
	/* Insertion sort by time: small n, stable, deterministic. */
	for (i = 1; i < m->n; i++) {
		int t = order[i];

		for (j = i; j > 0 && m->y[order[j - 1]] > m->y[t]; j--)
			order[j] = order[j - 1];
		order[j] = t;
	}
	for (i = 0; i < m->n && !search_stopped(s); i++) {
		struct space_point base;
		int k;

		space_point_default(s->space, &base);
		for (k = 0; k < m->nlive; k++)
			base.idx[m->live[k]] = m->x[order[i]][k];
		if (joint_at(s, m, &base) == 0)
			break;
	}
	free(order);
}

int
strategy_surrogate(struct tune_search *s)
{
	struct surr *m = calloc(1, sizeof(*m));
	struct cands *cs = calloc(1, sizeof(*cs));
	int i, j, last, settled[SPACE_MAX_PARAMS] = {0};

	if (m == NULL || cs == NULL) {
		free(m);
		free(cs);
		return ROCMD_ENOMEM;
	}
	for (i = 0; i < s->space->nparams; i++) {
		if (s->space->params[i].nvalues > SURR_MAXV) {
			free(m);
			free(cs);
			return strategy_reanneal(s);
		}
	}
	for (i = 0; i < s->space->nparams; i++)
		if (s->space->params[i].nvalues > 1)
			m->live[m->nlive++] = i;
	for (i = 0; i < m->nlive; i++)
		for (j = i + 1; j < m->nlive; j++) {
			m->pa[m->npairs] = i;
			m->pb[m->npairs] = j;
			m->npairs++;
		}
	m->pair = calloc(m->npairs ? m->npairs : 1, sizeof(*m->pair));
	m->npair = calloc(m->npairs ? m->npairs : 1, sizeof(*m->npair));
	if (m->pair == NULL || m->npair == NULL || surr_load_seen(s, m) < 0) {
		s->err = ROCMD_ENOMEM;
		goto out;
	}
	if (m->nlive == 0)
		goto out;
	if (!isfinite(s->best_cost)) {
		struct space_point pt;

		while (!search_stopped(s) && !isfinite(s->best_cost) &&
		       search_random_fresh(s, &pt) == 0)
			surr_eval(s, m, &pt);
	}
	/* 1. The line pass; 2. the joint search of the short-listed
	 * parameters; 3. the line pass again (the sizes that suit the new kernel). */
	line_pass(s, m, settled);
	choose_group(s, m, settled);
	if (m->ng > 0 && !search_stopped(s))
		joint_at(s, m, &s->best);
	line_pass(s, m, NULL);
	/* 4. The model. */
	last = s->best_eval;
	while (!search_stopped(s)) {
		struct space_point pt;

		if (s->best_eval > last)
			last = s->best_eval;
		if (s->evals - last >= SURR_STALL && m->ng > 0) {
			joint_restart(s, m);
			line_pass(s, m, NULL);
			last = s->evals;
			continue;
		}
		if (search_uniform(s) < SURR_EPS || surr_next(s, m, cs, &pt) < 0) {
			if (search_random_fresh(s, &pt) < 0)
				break;
		}
		surr_eval(s, m, &pt);
	}
out:
	free(cs);
	free(m->x);
	free(m->y);
	free(m->res);
	free(m->pair);
	free(m->npair);
	free(m);
	return s->err;
}
