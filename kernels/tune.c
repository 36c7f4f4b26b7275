/*
 * The tuning session and what surrounds it: outcome names, the tuning key, an
 * in-memory results store, the seed set, the run oracle (store first, then a
 * measurement recorded before the next one starts), the interleaved re-timing
 * of the top K, replay against a landscape and synthetic searches for tests.
 */
#include "kernels/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "kernels/strategy.h"

static const char *const outcome_names[TUNE_OUTCOME_COUNT] = {
	"ok", "compile_failed", "launch_failed", "wrong_result", "timeout", "ruled_out", "crashed",
};

const char *
tune_outcome_name(enum tune_outcome o)
{
	return (unsigned)o < TUNE_OUTCOME_COUNT ? outcome_names[o] : "?";
}

int
tune_outcome_parse(const char *s, enum tune_outcome *out)
{
	int i;

	for (i = 0; i < TUNE_OUTCOME_COUNT; i++) {
		if (!strcmp(s, outcome_names[i])) {
			*out = (enum tune_outcome)i;
			return 0;
		}
	}
	return ROCMD_EINVAL;
}

int
tune_outcome_retried(enum tune_outcome o)
{
	return o == TUNE_COMPILE_FAILED || o == TUNE_LAUNCH_FAILED || o == TUNE_RULED_OUT;
}

void
tune_key_init(struct tune_key *k, const struct backend_device_info *dev, const char *source_hash,
	      const struct gemm_problem *p)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->backend, sizeof(k->backend), "%s", dev->backend);
	snprintf(k->arch, sizeof(k->arch), "%s", dev->arch);
	snprintf(k->device, sizeof(k->device), "%s", dev->name);
	k->compute_units = dev->compute_units;
	snprintf(k->driver, sizeof(k->driver), "%s", dev->driver_version);
	snprintf(k->runtime, sizeof(k->runtime), "%s", dev->runtime_version);
	snprintf(k->compiler, sizeof(k->compiler), "%s", dev->compiler_version);
	snprintf(k->source_hash, sizeof(k->source_hash), "%s", source_hash);
	gemm_problem_key(p, k->problem, sizeof(k->problem));
}

/* ---- in-memory store ---- */

struct mem_entry {
	char *dev;     /* device + software */
	char *problem;
	char *config;  /* NULL for a winner row */
	struct tune_result r;
	int winner;
};

struct mem_store {
	struct mem_entry *e;
	size_t n, cap;
};

static char *
dev_string(const struct tune_key *k)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s|%s|%s|%d|%s|%s|%s|%s", k->backend, k->arch, k->device,
		 k->compute_units, k->driver, k->runtime, k->compiler, k->source_hash);
	return strdup(buf);
}

static struct mem_entry *
mem_find(struct mem_store *m, const struct tune_key *k, const char *config, int winner)
{
	char *d = dev_string(k);
	size_t i;

	if (d == NULL)
		return NULL;
	for (i = 0; i < m->n; i++) {
		struct mem_entry *e = &m->e[i];

		if (e->winner == winner && !strcmp(e->dev, d) && !strcmp(e->problem, k->problem) &&
		    (winner || !strcmp(e->config, config))) {
			free(d);
			return e;
		}
	}
	free(d);
	return NULL;
}

static int
mem_add(struct mem_store *m, const struct tune_key *k, const char *config,
	const struct tune_result *r, int winner)
{
	struct mem_entry *e;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct mem_entry *ne = realloc(m->e, cap * sizeof(*ne));

		if (ne == NULL)
			return ROCMD_ENOMEM;
		m->e = ne;
		m->cap = cap;
	}
	e = &m->e[m->n];
	memset(e, 0, sizeof(*e));
	e->dev = dev_string(k);
	e->problem = strdup(k->problem);
	e->config = strdup(config);
	e->r = *r;
	e->winner = winner;
	if (e->dev == NULL || e->problem == NULL || e->config == NULL) {
		free(e->dev);
		free(e->problem);
		free(e->config);
		return ROCMD_ENOMEM;
	}
	m->n++;
	return 0;
}

static int
mem_lookup(void *ctx, const struct tune_key *key, const char *config, struct tune_result *out)
{
	struct mem_entry *e = mem_find(ctx, key, config, 0);

	if (e == NULL)
		return ROCMD_ENOTFOUND;
	*out = e->r;
	return 0;
}

static int
mem_record(void *ctx, const struct tune_key *key, const char *config, const struct tune_result *r)
{
	struct mem_entry *e = mem_find(ctx, key, config, 0);

	if (e != NULL && !tune_outcome_retried(e->r.outcome))
		return ROCMD_EEXISTS;
	if (e != NULL) {
		e->r = *r;
		return 0;
	}
	return mem_add(ctx, key, config, r, 0);
}

static int
mem_set_winner(void *ctx, const struct tune_key *key, const char *config, double median_ms,
	       double default_ms)
{
	struct mem_entry *e = mem_find(ctx, key, NULL, 1);
	struct tune_result r;

	memset(&r, 0, sizeof(r));
	r.median_ms = median_ms;
	r.p20_ms = default_ms;
	if (e != NULL) {
		char *c = strdup(config);

		if (c == NULL)
			return ROCMD_ENOMEM;
		free(e->config);
		e->config = c;
		e->r = r;
		return 0;
	}
	return mem_add(ctx, key, config, &r, 1);
}

/* Length of the device part of dev_string(): up to the 4th '|'. */
static size_t
device_prefix(const char *d)
{
	size_t n = 0;
	int bars = 0;

	while (d[n] != '\0' && bars < 4)
		if (d[n++] == '|')
			bars++;
	return n;
}

static int
mem_winners(void *ctx, const struct tune_key *key, int any_software, tune_winner_cb cb,
	    void *cbctx)
{
	struct mem_store *m = ctx;
	char *d = dev_string(key);
	size_t i, pre;
	int rc = 0;

	if (d == NULL)
		return ROCMD_ENOMEM;
	pre = device_prefix(d);
	for (i = 0; i < m->n && rc == 0; i++) {
		const char *e = m->e[i].dev;

		if (!m->e[i].winner)
			continue;
		if (any_software ? (device_prefix(e) != pre || strncmp(e, d, pre)) : strcmp(e, d))
			continue;
		rc = cb(cbctx, m->e[i].problem, m->e[i].config, m->e[i].r.median_ms);
	}
	free(d);
	return rc;
}

static int
mem_count(void *ctx, const struct tune_key *key, int64_t *n)
{
	struct mem_store *m = ctx;
	char *d = dev_string(key);
	size_t i;

	if (d == NULL)
		return ROCMD_ENOMEM;
	*n = 0;
	for (i = 0; i < m->n; i++)
		if (!m->e[i].winner && !strcmp(m->e[i].dev, d) &&
		    !strcmp(m->e[i].problem, key->problem))
			(*n)++;
	free(d);
	return 0;
}

static int
mem_winner_default(void *ctx, const struct tune_key *key, double *default_ms)
{
	struct mem_entry *e = mem_find(ctx, key, NULL, 1);

	*default_ms = 0;
	if (e == NULL)
		return ROCMD_ENOTFOUND;
	*default_ms = e->r.p20_ms; /* mem_set_winner() keeps the default's time there */
	return 0;
}

int
tune_store_mem_new(struct tune_store *out)
{
	memset(out, 0, sizeof(*out));
	out->ctx = calloc(1, sizeof(struct mem_store));
	if (out->ctx == NULL)
		return ROCMD_ENOMEM;
	out->lookup = mem_lookup;
	out->record = mem_record;
	out->set_winner = mem_set_winner;
	out->winners = mem_winners;
	out->count = mem_count;
	out->winner_default = mem_winner_default;
	return 0;
}

void
tune_store_mem_free(struct tune_store *st)
{
	struct mem_store *m = st->ctx;
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->e[i].dev);
		free(m->e[i].problem);
		free(m->e[i].config);
	}
	free(m->e);
	free(m);
	st->ctx = NULL;
}

/* ---- a tuning run ---- */

struct run_ctx {
	struct tune_evaluator *ev;
	const struct tune_key *key;
	const struct tune_opts *o;
	struct tune_summary *sum;
	struct tune_search *s;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
run_oracle(struct tune_search *s, const struct space_point *pt, const char *key,
	   struct tune_result *r)
{
	struct run_ctx *rc = s->ctx;
	const struct tune_opts *o = rc->o;
	struct tune_progress pr;
	int from_store = 0, err;

	if (o->store != NULL && o->store->lookup(o->store->ctx, rc->key, key, r) == 0 &&
	    !tune_outcome_retried(r->outcome)) {
		from_store = 1;
	} else {
		err = tune_evaluator_eval(rc->ev, key, 0, r);
		if (err < 0)
			return err;
		/* Cancelled meanwhile, and tune_evaluator_abort() may have killed
		 * the child: such a crash says nothing about the candidate. */
		if (o->cancel != NULL && *o->cancel &&
		    (r->outcome == TUNE_CRASHED || r->outcome == TUNE_TIMEOUT))
			return ROCMD_ECANCELED;
		/* Durable first: a kill after this line never repeats the work. */
		if (o->store != NULL) {
			err = o->store->record(o->store->ctx, rc->key, key, r);
			if (err < 0 && err != ROCMD_EEXISTS)
				return err;
		}
		if (o->record != NULL)
			tune_landscape_write_entry(o->record, key, r);
	}
	rc->sum->outcomes.n[r->outcome]++;
	if (r->outcome != TUNE_OK && rc->sum->first_failure[0] == '\0')
		snprintf(rc->sum->first_failure, sizeof(rc->sum->first_failure), "%s%s%.150s",
			 tune_outcome_name(r->outcome), r->detail[0] ? ": " : "", r->detail);
	if (from_store)
		rc->sum->from_store++;
	else
		rc->sum->measured++;
	if (o->progress != NULL) {
		double c = r->outcome == TUNE_OK ? r->median_ms : INFINITY;

		memset(&pr, 0, sizeof(pr));
		pr.evals = s->evals + 1;
		pr.budget = s->budget;
		pr.config = key;
		pr.r = r;
		pr.from_store = from_store;
		pr.best_ms = c < s->best_cost ? c : s->best_cost;
		o->progress(o->progress_ctx, &pr);
	}
	return 0;
}

void
tune_summary_failures(const struct tune_summary *s, char *buf, size_t len)
{
	size_t n;
	int sep = 0;

	if (s->evals == 0) {
		snprintf(buf, len, "no configuration of the space is valid for this problem");
		return;
	}
	n = (size_t)snprintf(buf, len, "%d evaluated (", s->evals);
	for (int o = TUNE_OK + 1; o < TUNE_OUTCOME_COUNT && n < len; o++) {
		if (s->outcomes.n[o] == 0)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%d %s", sep++ ? ", " : "",
				      s->outcomes.n[o], tune_outcome_name((enum tune_outcome)o));
	}
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s)", sep ? "" : "no outcome recorded");
	if (n < len && s->first_failure[0] != '\0')
		snprintf(buf + n, len - n, "; first: %s", s->first_failure);
}

/* Log-distance between two shapes of the same dtype and transposes. */
static double
shape_distance(const struct gemm_problem *a, const struct gemm_problem *b)
{
	if (a->dtype != b->dtype || a->ta != b->ta || a->tb != b->tb)
		return INFINITY;
	return fabs(log2((double)a->m / b->m)) + fabs(log2((double)a->n / b->n)) +
	       fabs(log2((double)a->k / b->k)) + fabs(log2((double)a->batch / b->batch));
}

#define MAX_SEEDS 4

struct seed_collect {
	const struct space_def *space;
	const struct gemm_problem *p;
	const char *problem; /* the key's: a vendor problem's layout suffix parses nowhere */
	struct space_point same[MAX_SEEDS];
	int nsame;
	struct space_point near[MAX_SEEDS];
	double dist[MAX_SEEDS];
	int nnear;
};

static int
seed_cb(void *ctx, const char *problem, const char *config, double median_ms)
{
	struct seed_collect *sc = ctx;
	struct gemm_problem q;
	struct space_point pt;
	double d;
	int i;

	if (space_key_parse(sc->space, config, &pt) < 0)
		return 0;
	if (!strcmp(problem, sc->problem))
		d = 0.0;
	else if (gemm_problem_parse(problem, &q) < 0)
		return 0;
	else
		d = shape_distance(sc->p, &q);
	if (d == 0.0) {
		/* Newest last in the walk: keep the last MAX_SEEDS. */
		if (sc->nsame == MAX_SEEDS) {
			memmove(sc->same, sc->same + 1, (MAX_SEEDS - 1) * sizeof(sc->same[0]));
			sc->nsame--;
		}
		sc->same[sc->nsame++] = pt;
		return 0;
	}
	if (!isfinite(d))
		return 0;
	/* Keep the MAX_SEEDS nearest, sorted. */
	for (i = sc->nnear; i > 0 && sc->dist[i - 1] > d; i--) {
		if (i < MAX_SEEDS) {
			sc->near[i] = sc->near[i - 1];
			sc->dist[i] = sc->dist[i - 1];
		}
	}
	if (i < MAX_SEEDS) {
		sc->near[i] = pt;
		sc->dist[i] = d;
		if (sc->nnear < MAX_SEEDS)
			sc->nnear++;
	}
	return 0;
}

struct ranked {
	uint64_t index;
	double cost;
};

static int
cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

const char *
tune_strategy_for(const struct space_def *space, int budget, const char *preferred)
{
	return budget > 0 && space_size(space) <= (uint64_t)budget ? "exhaustive" : preferred;
}

/* The zero fields of a run's options take their defaults (tune.h). */
static void
run_opts_defaults(struct tune_opts *o)
{
	if (o->strategy == NULL)
		o->strategy = "ga";
	if (o->budget <= 0)
		o->budget = 100;
	if (o->seed == 0)
		o->seed = 1;
	if (o->topk == 0)
		o->topk = 3;
	if (o->retime_rounds <= 0)
		o->retime_rounds = 4;
}

/* The seed set after the default: this shape's previous winners (any
 * software), then the nearest shapes' winners. */
static void
run_seeds(struct tune_search *s, const struct tune_opts *o, const struct tune_key *key,
	  const struct space_def *space, const struct gemm_problem *p)
{
	struct seed_collect sc;
	int k;

	if (o->no_seeds || o->store == NULL || o->store->winners == NULL)
		return;
	memset(&sc, 0, sizeof(sc));
	sc.space = space;
	sc.p = p;
	sc.problem = key->problem;
	o->store->winners(o->store->ctx, key, 1, seed_cb, &sc);
	for (k = sc.nsame - 1; k >= 0; k--)
		search_eval(s, &sc.same[k]);
	for (k = 0; k < sc.nnear; k++)
		search_eval(s, &sc.near[k]);
}

#define RETIME_MAX (MAX_SEEDS * 4 + 1)

/*
 * The keys re-timed before a winner is declared: the TOPK best of the points
 * the search measured (RANK, sorted), then the default when it ran and is
 * not among them. Returns how many; *NDF gets the default's place, or -1.
 */
static int
retime_keys(const struct space_def *space, const struct ranked *rank, size_t nrank,
	    const struct space_point *dflt, double dflt_cost, const char *default_key, int topk,
	    char keys[RETIME_MAX][SPACE_KEY_MAX], int *ndf)
{
	int k = (int)nrank < topk ? (int)nrank : topk, c, nc;
	uint64_t didx = space_point_index(space, dflt);

	*ndf = -1;
	if (k > MAX_SEEDS * 4)
		k = MAX_SEEDS * 4;
	nc = k;
	for (c = 0; c < k; c++) {
		struct space_point pt;

		space_point_from_index(space, rank[c].index, &pt);
		space_key(space, &pt, keys[c], SPACE_KEY_MAX);
		if (rank[c].index == didx)
			*ndf = c;
	}
	if (*ndf < 0 && isfinite(dflt_cost)) {
		snprintf(keys[nc], SPACE_KEY_MAX, "%s", default_key);
		*ndf = nc++;
	}
	return nc;
}

int
tune_round_order(int r, int i, int n)
{
	return r % 2 ? n - 1 - i : i;
}

double
tune_round_figure(const double *t, int rounds)
{
	double m[16];
	int n = 0;

	for (int r = 0; r < rounds && n < 16; r += 2)
		m[n++] = r + 1 < rounds ? (t[r] + t[r + 1]) / 2 : t[r];
	if (n == 0)
		return 0;
	qsort(m, (size_t)n, sizeof(double), cmp_dbl);
	return n % 2 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2;
}

/* Quantile Q of N sorted round times (linear between order statistics). */
static double
spread_at(const double *sorted, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos, hi = lo + 1 < n ? lo + 1 : lo;

	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/*
 * Times KEYS in ROUNDS interleaved rounds (TUNE_EVAL_TIME_ONLY, the order
 * reversed every other round: tune_round_order); a key's figure is
 * tune_round_figure's of its rounds, and one that fails a round drops out. The
 * fastest becomes OUT's best, and key NDF's figure its default_ms.
 */
static int
retime_rounds(struct tune_evaluator *ev, char keys[RETIME_MAX][SPACE_KEY_MAX], int nc, int ndf,
	      int rounds, struct tune_summary *out)
{
	double times[RETIME_MAX][16], bestt = INFINITY, t, dlo = 0, dhi = INFINITY;
	int ok[RETIME_MAX], c, r, bestc = -1, err;

	if (rounds > 16)
		rounds = 16;
	for (c = 0; c < nc; c++)
		ok[c] = 1;
	for (r = 0; r < rounds; r++) {
		for (int i = 0; i < nc; i++) {
			struct tune_result tr;

			c = tune_round_order(r, i, nc);
			if (!ok[c])
				continue;
			err = tune_evaluator_eval(ev, keys[c], TUNE_EVAL_TIME_ONLY, &tr);
			if (err < 0)
				return err;
			if (tr.outcome != TUNE_OK)
				ok[c] = 0;
			times[c][r] = tr.median_ms;
		}
	}
	for (c = 0; c < nc; c++) {
		if (!ok[c])
			continue;
		t = tune_round_figure(times[c], rounds);
		qsort(times[c], rounds, sizeof(double), cmp_dbl);
		if (c == ndf) {
			out->default_ms = t;
			dlo = spread_at(times[c], rounds, 0.2);
			dhi = spread_at(times[c], rounds, 0.8);
		}
		if (t < bestt) {
			bestt = t;
			bestc = c;
		}
	}
	if (bestc >= 0) {
		snprintf(out->best, sizeof(out->best), "%s", keys[bestc]);
		out->best_ms = bestt;
		out->best_hi_ms = spread_at(times[bestc], rounds, 0.8);
		out->default_lo_ms = dlo;
		if (bestc == ndf)
			out->best_hi_ms = dhi;
	}
	return 0;
}

/* Re-times the top K of search S and the default DFLT, interleaved (o->topk,
 * o->retime_rounds), before a winner is declared: OUT's best and default_ms. */
static int
retime_top(struct tune_evaluator *ev, const struct space_def *space, const struct tune_search *s,
	   const struct space_point *dflt, double dflt_cost, const struct tune_opts *o,
	   struct tune_summary *out)
{
	struct ranked *rank = malloc(s->vcap * sizeof(*rank));
	char keys[RETIME_MAX][SPACE_KEY_MAX];
	size_t nrank = 0, i;
	int nc, ndf, err = 0;

	if (rank == NULL)
		return ROCMD_ENOMEM;
	for (i = 0; i < s->vcap; i++)
		if (s->vkeys[i] != 0 && isfinite(s->vcost[i]))
			rank[nrank++] = (struct ranked){s->vkeys[i] - 1, s->vcost[i]};
	qsort(rank, nrank, sizeof(*rank), cmp_ranked);
	if (o->topk > 0 && (o->cancel == NULL || !*o->cancel)) {
		nc = retime_keys(space, rank, nrank, dflt, dflt_cost, out->default_key, o->topk,
				 keys, &ndf);
		err = retime_rounds(ev, keys, nc, ndf, o->retime_rounds, out);
	}
	free(rank);
	return err;
}

/* Declares OUT's best the winner (never one slower than the default it would
 * replace) and stores it. */
static int
declare_winner(const struct tune_opts *o, const struct tune_key *key,
	       const struct gemm_problem *p, struct tune_summary *out, char *why, size_t whylen)
{
	int err = 0;

	if (isfinite(out->default_ms) && out->default_ms < out->best_ms) {
		snprintf(out->best, sizeof(out->best), "%s", out->default_key);
		out->best_ms = out->default_ms;
	}
	if (!strcmp(out->best, out->default_key))
		out->best_hi_ms = INFINITY; /* nothing beat the default */
	out->gflops = gemm_flops(p) / (out->best_ms * 1e6);
	if (o->store != NULL && o->store->set_winner != NULL) {
		err = o->store->set_winner(o->store->ctx, key, out->best, out->best_ms,
					   out->default_ms);
		if (err < 0)
			snprintf(why, whylen, "cannot store the winner");
	}
	return err;
}

int
tune_run(struct tune_evaluator *ev, const struct tune_key *key, const struct space_def *space,
	 const struct gemm_problem *p, const struct backend_device_info *dev,
	 const struct tune_opts *oin, struct tune_summary *out, char *why, size_t whylen)
{
	struct tune_opts o = *oin;
	struct tune_search s;
	struct run_ctx rc;
	struct space_point dflt;
	tune_strategy_fn fn;
	double dflt_cost;
	int err;

	memset(out, 0, sizeof(*out));
	out->best_ms = INFINITY;
	out->default_ms = INFINITY;
	out->best_hi_ms = INFINITY;
	out->default_lo_ms = 0;
	run_opts_defaults(&o);
	fn = tune_strategy_find(o.strategy);
	if (fn == NULL) {
		snprintf(why, whylen, "unknown strategy '%s'", o.strategy);
		return ROCMD_EINVAL;
	}
	err = search_init(&s, space, o.budget, o.seed);
	if (err < 0)
		return err;
	memset(&rc, 0, sizeof(rc));
	rc.ev = ev;
	rc.key = key;
	rc.o = &o;
	rc.sum = out;
	rc.s = &s;
	s.problem = p;
	s.dev = dev;
	s.oracle = run_oracle;
	s.ctx = &rc;
	s.cancel = o.cancel;
	if (o.seconds > 0)
		s.deadline_ms = now_ms() + o.seconds * 1e3;

	/* The seed set: the default first, then the winners run_seeds() finds. */
	if (space_default_for(space, p, dev, &dflt) < 0)
		space_point_default(space, &dflt);
	space_key(space, &dflt, out->default_key, sizeof(out->default_key));
	dflt_cost = search_eval(&s, &dflt);
	run_seeds(&s, &o, key, space, p);
	err = fn(&s);
	if (err == 0)
		err = s.err;
	out->evals = s.evals;
	if (err == ROCMD_ECANCELED || (err == 0 && o.cancel != NULL && *o.cancel)) {
		/* Stopped from outside: report what was found, declare nothing. */
		if (isfinite(s.best_cost)) {
			out->evals_to_best = s.best_eval + 1;
			space_key(space, &s.best, out->best, sizeof(out->best));
			out->best_ms = s.best_cost;
			out->gflops = gemm_flops(p) / (out->best_ms * 1e6);
		}
		out->default_ms = dflt_cost;
		snprintf(why, whylen, "cancelled after %d evaluations", s.evals);
		err = ROCMD_ECANCELED;
		goto out;
	}
	if (err < 0) {
		snprintf(why, whylen, "the search stopped on an error");
		goto out;
	}
	if (!isfinite(s.best_cost)) {
		char counts[300];

		tune_summary_failures(out, counts, sizeof(counts));
		snprintf(why, whylen, "no configuration ran correctly: %s", counts);
		err = ROCMD_ENOTFOUND;
		goto out;
	}
	out->evals_to_best = s.best_eval + 1;
	space_key(space, &s.best, out->best, sizeof(out->best));
	out->best_ms = s.best_cost;
	out->default_ms = dflt_cost;
	err = retime_top(ev, space, &s, &dflt, dflt_cost, &o, out);
	if (err == 0)
		err = declare_winner(&o, key, p, out, why, whylen);
out:
	search_free(&s);
	return err;
}

/* ---- replay ---- */

struct replay_ctx {
	const struct tune_landscape *l;
};

static int
replay_valid(struct tune_search *s, const struct space_point *pt)
{
	struct replay_ctx *rc = s->ctx;
	struct tune_result r;
	char key[SPACE_KEY_MAX];

	if (space_key(s->space, pt, key, sizeof(key)) < 0 ||
	    tune_landscape_get(rc->l, key, &r) < 0)
		return 0;
	return r.outcome != TUNE_RULED_OUT;
}

static int
replay_oracle(struct tune_search *s, const struct space_point *pt, const char *key,
	      struct tune_result *r)
{
	struct replay_ctx *rc = s->ctx;

	if (tune_landscape_get(rc->l, key, r) < 0 || r->outcome == TUNE_RULED_OUT)
		return TUNE_SEARCH_MISSING;
	return 0;
}

static int
replay_sample(struct tune_search *s, struct space_point *pt)
{
	struct replay_ctx *rc = s->ctx;
	int64_t n = tune_landscape_count(rc->l);
	const char *key;
	struct tune_result r;

	if (n == 0 ||
	    tune_landscape_entry(rc->l, (int64_t)search_below(s, (uint64_t)n), &key, &r) < 0)
		return -1;
	return space_key_parse(s->space, key, pt) < 0 ? -1 : 0;
}

int
tune_replay_one(const struct tune_landscape *l, const char *strategy, int budget, uint64_t seed,
		double *trace, uint64_t *hash, char *best, size_t bestlen)
{
	const struct space_def *space = tune_landscape_space(l);
	tune_strategy_fn fn = tune_strategy_find(strategy);
	struct replay_ctx rc = {l};
	struct tune_search s;
	struct space_point dflt;
	int err, i;

	if (fn == NULL)
		return ROCMD_EINVAL;
	err = search_init(&s, space, budget, seed);
	if (err < 0)
		return err;
	s.oracle = replay_oracle;
	s.valid = replay_valid;
	s.ctx = &rc;
	/* A sampled landscape covers a sliver of its space: draw from its entries. */
	if ((double)tune_landscape_count(l) < 0.5 * (double)space_size(space)) {
		s.sample = replay_sample;
		s.sample_n = (uint64_t)tune_landscape_count(l);
	}
	s.trace = trace;
	for (i = 0; i < budget; i++)
		trace[i] = INFINITY;
	/* As in a real run, the default configuration is evaluated first. */
	space_point_default(space, &dflt);
	search_eval(&s, &dflt);
	err = fn(&s);
	if (err == 0)
		err = s.err;
	/* A strategy that stopped early keeps its best for the remaining budget. */
	for (i = s.evals; i < budget; i++)
		trace[i] = s.best_cost;
	if (hash != NULL)
		*hash = s.hash;
	if (best != NULL && bestlen > 0) {
		best[0] = '\0';
		if (isfinite(s.best_cost))
			space_key(space, &s.best, best, bestlen);
	}
	search_free(&s);
	return err;
}

int
tune_replay_seeded(const struct tune_landscape *l, const char *strategy, int budget,
		   uint64_t seed, const char *const *seeds, int nseeds, double *trace,
		   uint64_t *hash, char *best, size_t bestlen)
{
	const struct space_def *space = tune_landscape_space(l);
	tune_strategy_fn fn = tune_strategy_find(strategy);
	struct replay_ctx rc = {l};
	struct tune_search s;
	struct space_point dflt, pt;
	int err, i;

	if (fn == NULL)
		return ROCMD_EINVAL;
	err = search_init(&s, space, budget, seed);
	if (err < 0)
		return err;
	s.oracle = replay_oracle;
	s.valid = replay_valid;
	s.ctx = &rc;
	if ((double)tune_landscape_count(l) < 0.5 * (double)space_size(space)) {
		s.sample = replay_sample;
		s.sample_n = (uint64_t)tune_landscape_count(l);
	}
	s.trace = trace;
	for (i = 0; i < budget; i++)
		trace[i] = INFINITY;
	/* As tune_run(): the default first, then the seed set. */
	space_point_default(space, &dflt);
	search_eval(&s, &dflt);
	for (i = 0; i < nseeds; i++)
		if (space_key_parse(space, seeds[i], &pt) == 0)
			search_eval(&s, &pt);
	err = fn(&s);
	if (err == 0)
		err = s.err;
	for (i = s.evals; i < budget; i++)
		trace[i] = s.best_cost;
	if (hash != NULL)
		*hash = s.hash;
	if (best != NULL && bestlen > 0) {
		best[0] = '\0';
		if (isfinite(s.best_cost))
			space_key(space, &s.best, best, bestlen);
	}
	search_free(&s);
	return err;
}

int
tune_replay(const struct tune_landscape *l, const char *strategy, int runs, int budget,
	    uint64_t seed, struct tune_replay_stats *out, char *why, size_t whylen)
{
	static const double level[3] = {0.90, 0.95, 0.99};
	double best = tune_landscape_best(l), *trace, *to[3];
	int r, t, err = 0;

	memset(out, 0, sizeof(*out));
	if (tune_strategy_find(strategy) == NULL) {
		snprintf(why, whylen, "unknown strategy '%s'", strategy);
		return ROCMD_EINVAL;
	}
	if (!isfinite(best)) {
		snprintf(why, whylen, "the landscape has no ok entry");
		return ROCMD_EINVAL;
	}
	if (runs < 1 || budget < 1) {
		snprintf(why, whylen, "runs and budget must be positive");
		return ROCMD_EINVAL;
	}
	trace = malloc(budget * sizeof(double));
	for (t = 0; t < 3; t++)
		to[t] = malloc(runs * sizeof(double));
	if (trace == NULL || to[0] == NULL || to[1] == NULL || to[2] == NULL) {
		err = ROCMD_ENOMEM;
		goto out;
	}
	out->runs = runs;
	out->budget = budget;
	out->trace_hash = 0xcbf29ce484222325ULL;
	for (r = 0; r < runs; r++) {
		uint64_t h = 0;
		int e;

		err = tune_replay_one(l, strategy, budget, seed + (uint64_t)r, trace, &h, NULL, 0);
		if (err < 0)
			goto out;
		out->trace_hash = (out->trace_hash ^ h) * 0x100000001b3ULL;
		for (t = 0; t < 3; t++) {
			to[t][r] = budget + 1;
			for (e = 0; e < budget; e++) {
				if (trace[e] <= best / level[t]) {
					to[t][r] = e + 1;
					out->reached[t] += 1.0 / runs;
					break;
				}
			}
		}
		out->mean_final += (isfinite(trace[budget - 1]) ? best / trace[budget - 1] : 0.0) / runs;
	}
	for (t = 0; t < 3; t++) {
		qsort(to[t], runs, sizeof(double), cmp_dbl);
		out->median_to[t] = runs % 2 ? to[t][runs / 2]
					     : 0.5 * (to[t][runs / 2 - 1] + to[t][runs / 2]);
	}
out:
	free(trace);
	for (t = 0; t < 3; t++)
		free(to[t]);
	return err;
}

/* ---- synthetic searches (tests) ---- */

struct synth_ctx {
	tune_cost_fn cost;
	void *ctx;
};

static int
synth_oracle(struct tune_search *s, const struct space_point *pt, const char *key,
	     struct tune_result *r)
{
	struct synth_ctx *sc = s->ctx;
	double c = sc->cost(sc->ctx, s->space, pt);

	memset(r, 0, sizeof(*r));
	if (c > 0 && isfinite(c)) {
		r->outcome = TUNE_OK;
		r->median_ms = r->p20_ms = r->p80_ms = c;
	} else {
		r->outcome = TUNE_WRONG_RESULT;
	}
	return 0;
}

int
tune_search_synthetic(const struct space_def *space, tune_cost_fn cost, void *ctx,
		      const char *strategy, int budget, uint64_t seed, struct space_point *best,
		      double *best_cost, int *evals_used)
{
	tune_strategy_fn fn = tune_strategy_find(strategy);
	struct synth_ctx sc = {cost, ctx};
	struct tune_search s;
	struct space_point dflt;
	int err;

	if (fn == NULL)
		return ROCMD_EINVAL;
	err = search_init(&s, space, budget, seed);
	if (err < 0)
		return err;
	s.oracle = synth_oracle;
	s.ctx = &sc;
	space_point_default(space, &dflt);
	search_eval(&s, &dflt);
	err = fn(&s);
	if (err == 0)
		err = s.err;
	*best = s.best;
	*best_cost = s.best_cost;
	if (evals_used != NULL)
		*evals_used = s.evals;
	search_free(&s);
	return err;
}
