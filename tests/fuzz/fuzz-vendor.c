/*
 * Fuzz target for the vendor-tuning parsers: the GEMM logs rocmctl tune
 * capture and import-log read (kernels/vendor-log.h: rocblas-bench and
 * hipblaslt-bench lines, TunableOp CSV), and the override files rocmd writes
 * and reads back with rocBLAS's and hipBLASLt's rules
 * (kernels/vendor-override.h). Every shape read must be a problem the tuner
 * accepts, and its count positive; every override entry read must carry a
 * positive index, and writing what was read then reading it again must give
 * the same entries.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vendor-log.h"
#include "kernels/vendor-override.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vendor_shapes s;
	char why[256];

	memset(&s, 0, sizeof(s));
	if (vendor_log_parse(&s, (const char *)data, size) == 0) {
		for (size_t i = 0; i < s.n; i++)
			if (s.v[i].calls < 1 || gemm_problem_check(&s.v[i].p, why, sizeof(why)) != 0)
				abort();
		if ((int64_t)s.n > s.lines || s.skipped > s.lines)
			abort();
	}
	vendor_shapes_free(&s);
	for (int rocblas = 0; rocblas < 2; rocblas++) {
		struct vendor_override_entry *e = NULL, *back = NULL;
		struct vendor_override_id id;
		size_t n = 0, nb = 0, len = 0;
		char *text = NULL;

		vendor_override_identity((const char *)data, size, &id);
		if (vendor_override_read(rocblas, (const char *)data, size, &e, &n) != 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (e[i].index <= 0)
				abort();
		memset(&id, 0, sizeof(id));
		if (vendor_override_write(rocblas, &id, e, n, &text, &len) == 0 &&
		    vendor_override_read(rocblas, text, len, &back, &nb) == 0 && rocblas &&
		    nb != n)
			abort();
		free(text);
		free(back);
		free(e);
	}
	return 0;
}
