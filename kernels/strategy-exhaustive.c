/*
 * Exhaustive search: every valid point in mixed-radix order until the budget
 * runs out. Used to record landscapes; the reference the others are judged by.
 */
#include "kernels/strategy.h"

int
strategy_exhaustive(struct tune_search *s)
{
	uint64_t n = space_size(s->space), i;
	struct space_point pt;

	for (i = 0; i < n && !search_stopped(s); i++) {
		space_point_from_index(s->space, i, &pt);
		search_eval(s, &pt);
	}
	return s->err;
}
