/*
 * The search core shared by all strategies: budget accounting, the visited
 * set, best-so-far tracking, the random source (splitmix64: deterministic
 * for a seed on every platform) and the strategy registry.
 */
#include "kernels/strategy.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"

static const char *const strategy_names[] = {"exhaustive", "random", "ls",   "ga",
                                             "sa",         "sar",    "surr", NULL};
static const tune_strategy_fn strategy_fns[] = {
    strategy_exhaustive, strategy_random,   strategy_local,    strategy_ga,
    strategy_anneal,     strategy_reanneal, strategy_surrogate};

tune_strategy_fn
tune_strategy_find(const char *name)
{
	int i;

	for (i = 0; strategy_names[i] != NULL; i++)
		if (!strcmp(name, strategy_names[i]))
			return strategy_fns[i];
	if (!strcmp(name, "local") || !strcmp(name, "greedy"))
		return strategy_local;
	if (!strcmp(name, "genetic"))
		return strategy_ga;
	if (!strcmp(name, "anneal"))
		return strategy_anneal;
	return NULL;
}

const char *const *
tune_strategy_names(void)
{
	return strategy_names;
}

static uint64_t
splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t
search_rand(struct tune_search *s)
{
	return splitmix(&s->rng);
}

double
search_uniform(struct tune_search *s)
{
	return (double)(search_rand(s) >> 11) / 9007199254740992.0;
}

uint64_t
search_below(struct tune_search *s, uint64_t n)
{
	return n == 0 ? 0 : search_rand(s) % n;
}

int
search_init(struct tune_search *s, const struct space_def *space, int budget, uint64_t seed)
{
	uint64_t x = seed;

	memset(s, 0, sizeof(*s));
	s->space = space;
	s->budget = budget;
	s->rng = splitmix(&x);
	(void)x;
	s->best_cost = INFINITY;
	s->best_eval = -1;
	s->hash = 0xcbf29ce484222325ULL;
	s->vcap = 1024;
	s->vkeys = calloc(s->vcap, sizeof(uint64_t));
	s->vcost = calloc(s->vcap, sizeof(double));
	if (s->vkeys == NULL || s->vcost == NULL) {
		search_free(s);
		return ROCMD_ENOMEM;
	}
	return 0;
}

void
search_free(struct tune_search *s)
{
	free(s->vkeys);
	free(s->vcost);
	s->vkeys = NULL;
	s->vcost = NULL;
}

static size_t
slot_of(const struct tune_search *s, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 20) & (s->vcap - 1);

	while (s->vkeys[i] != 0 && s->vkeys[i] != key)
		i = (i + 1) & (s->vcap - 1);
	return i;
}

static int
seen_put(struct tune_search *s, uint64_t index, double cost)
{
	size_t i;

	if ((s->vn + 1) * 2 > s->vcap) {
		size_t oldcap = s->vcap, j;
		uint64_t *ok = s->vkeys;
		double *oc = s->vcost;

		s->vcap *= 2;
		s->vkeys = calloc(s->vcap, sizeof(uint64_t));
		s->vcost = calloc(s->vcap, sizeof(double));
		if (s->vkeys == NULL || s->vcost == NULL) {
			free(s->vkeys);
			free(s->vcost);
			s->vkeys = ok;
			s->vcost = oc;
			s->vcap = oldcap;
			return ROCMD_ENOMEM;
		}
		for (j = 0; j < oldcap; j++) {
			if (ok[j] != 0) {
				size_t k = slot_of(s, ok[j]);

				s->vkeys[k] = ok[j];
				s->vcost[k] = oc[j];
			}
		}
		free(ok);
		free(oc);
	}
	i = slot_of(s, index + 1);
	if (s->vkeys[i] == 0)
		s->vn++;
	s->vkeys[i] = index + 1;
	s->vcost[i] = cost;
	return 0;
}

int
search_seen(struct tune_search *s, const struct space_point *pt, double *cost)
{
	size_t i = slot_of(s, space_point_index(s->space, pt) + 1);

	if (s->vkeys[i] == 0)
		return 0;
	if (cost != NULL)
		*cost = s->vcost[i];
	return 1;
}

int
search_valid(struct tune_search *s, const struct space_point *pt)
{
	if (s->valid != NULL)
		return s->valid(s, pt);
	return space_valid(s->space, pt, s->problem, s->dev, NULL, 0);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double
search_eval(struct tune_search *s, const struct space_point *pt)
{
	uint64_t index = space_point_index(s->space, pt);
	struct tune_result r;
	char key[SPACE_KEY_MAX];
	double cost;
	int err;

	if (s->stop)
		return INFINITY;
	if (search_seen(s, pt, &cost))
		return cost;
	if (!search_valid(s, pt)) {
		if (seen_put(s, index, INFINITY) < 0)
			s->stop = 1;
		return INFINITY;
	}
	if (s->evals >= s->budget || (s->cancel != NULL && *s->cancel) ||
	    (s->deadline_ms > 0 && now_ms() >= s->deadline_ms)) {
		s->stop = 1;
		return INFINITY;
	}
	space_key(s->space, pt, key, sizeof(key));
	memset(&r, 0, sizeof(r));
	err = s->oracle(s, pt, key, &r);
	if (err < 0) {
		s->err = err;
		s->stop = 1;
		return INFINITY;
	}
	if (err == TUNE_SEARCH_MISSING) {
		seen_put(s, index, INFINITY);
		return INFINITY;
	}
	cost = r.outcome == TUNE_OK && r.median_ms > 0 ? r.median_ms : INFINITY;
	if (seen_put(s, index, cost) < 0) {
		s->err = ROCMD_ENOMEM;
		s->stop = 1;
	}
	s->hash = (s->hash ^ index) * 0x100000001b3ULL;
	if (cost < s->best_cost) {
		s->best_cost = cost;
		s->best = *pt;
		s->best_eval = s->evals;
	}
	if (s->trace != NULL)
		s->trace[s->evals] = s->best_cost;
	s->evals++;
	if (s->evals >= s->budget)
		s->stop = 1;
	return cost;
}

int
search_random_fresh(struct tune_search *s, struct space_point *pt)
{
	uint64_t size = space_size(s->space);
	int tries, max_tries = 20000;

	if (s->sample == NULL && size <= 4096) {
		/* Small spaces: walk from a random start, so "nothing left" is certain. */
		uint64_t start = search_below(s, size), t;

		for (t = 0; t < size; t++) {
			space_point_from_index(s->space, (start + t) % size, pt);
			if (!search_seen(s, pt, NULL) && search_valid(s, pt))
				return 0;
		}
		return -1;
	}
	/* Drawing from N points, 50N tries miss the last unseen one with
	 * probability e^-50. */
	if (s->sample != NULL && s->sample_n < 400)
		max_tries = (int)(50 * s->sample_n + 100);
	for (tries = 0; tries < max_tries; tries++) {
		if (s->sample != NULL) {
			if (s->sample(s, pt) < 0)
				return -1;
		} else {
			space_point_from_index(s->space, search_below(s, size), pt);
		}
		if (!search_seen(s, pt, NULL) && search_valid(s, pt))
			return 0;
	}
	return -1;
}
