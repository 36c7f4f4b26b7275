/*
 * Random search: uniformly random valid points, each at most once. The
 * baseline every heuristic must beat.
 */
#include "kernels/strategy.h"

int
strategy_random(struct tune_search *s)
{
	struct space_point pt;

	while (!search_stopped(s)) {
		if (search_random_fresh(s, &pt) < 0)
			break;
		search_eval(s, &pt);
	}
	return s->err;
}
