/*
 * Fuzz target for the tuner's parsers: landscape files (with a header or
 * headerless), configuration keys and JSON against the CPU space, problem
 * keys and shapes. A landscape that parses is also replayed briefly, so
 * whatever space a file describes, the search code must cope with it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/space.h"
#include "kernels/tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tune_landscape *l = NULL;
	struct space_point pt;
	struct gemm_problem p;
	char why[256], key[SPACE_KEY_MAX];
	char *s = malloc(size + 1);
	int64_t m, n, k, b;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (space_key_parse(space_cpu(), s, &pt) == 0) {
		space_key(space_cpu(), &pt, key, sizeof(key));
		if (space_key_parse(space_cpu(), key, &pt) != 0)
			abort();
	}
	if (space_json_parse(space_cpu(), s, &pt) == 0 &&
	    space_point_index(space_cpu(), &pt) >= space_size(space_cpu()))
		abort();
	if (gemm_problem_parse(s, &p) == 0 && gemm_problem_check(&p, why, sizeof(why)) == 0)
		gemm_problem_key(&p, key, sizeof(key));
	gemm_shape_parse(s, &m, &n, &k, &b);
	if (tune_landscape_load_buf((const char *)data, size, &l, why, sizeof(why)) == 0) {
		const struct space_def *sp = tune_landscape_space(l);
		double trace[16];
		uint64_t h;
		int64_t i;

		for (i = 0; i < tune_landscape_count(l) && i < 64; i++) {
			const char *ek;
			struct tune_result r;

			if (tune_landscape_entry(l, i, &ek, &r) == 0 &&
			    space_key_parse(sp, ek, &pt) == 0)
				space_key(sp, &pt, key, sizeof(key));
		}
		tune_replay_one(l, (size & 1) ? "ls" : "ga", 8, 1, trace, &h, key, sizeof(key));
		tune_landscape_free(l);
	}
	free(s);
	return 0;
}
