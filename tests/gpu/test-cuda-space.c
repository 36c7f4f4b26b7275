/*
 * The CUDA backend's tuning space as the tuner sees it (no GPU needed): for
 * every dtype, on a device with and without matrix cores, the space stays
 * small enough to enumerate (< 10^7 points), enough of it is valid to sample
 * (> 5 %), the default point is valid, keys round-trip, and the wgmma path
 * (MC=2) is in the fp16/bf16 space, valid on sm_90 only. A space of ~10^9
 * points once made `rocmtune space --backend cuda` run for minutes.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/backend-cuda.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

int
main(void)
{
	struct backend_device_info dev;
	int dt, mc;

	memset(&dev, 0, sizeof(dev));
	dev.max_threads_per_block = 1024;
	dev.shared_mem_per_block = 232448; /* sm_90 opt-in limit */
	dev.regs_per_block = 65536;
	snprintf(dev.arch, sizeof(dev.arch), "sm_90");
	for (mc = 0; mc <= 1; mc++)
		for (dt = 0; dt < 3; dt++) {
			struct gemm_problem p;
			struct space_def s;
			struct space_point pt, back;
			char key[SPACE_KEY_MAX], why[128];
			uint64_t n, i, valid = 0, step;

			dev.matrix_cores = mc;
			gemm_problem_init(&p, (enum gemm_dtype)dt, GEMM_T, GEMM_N, 512, 4096, 4096,
			                  1);
			backend_cuda_space_for(&s, &p, mc, 0);
			n = space_size(&s);
			/* Every 7th point: a sample that keeps the test quick. */
			step = 7;
			for (i = 0; i < n; i += step) {
				space_point_from_index(&s, i, &pt);
				valid += space_valid(&s, &pt, &p, &dev, why, sizeof(why));
			}
			space_point_default(&s, &pt);
			space_key(&s, &pt, key, sizeof(key));
			printf("%s, matrix cores %d: %llu points, ~%.1f %% valid, default %s\n",
			       gemm_dtype_name((enum gemm_dtype)dt), mc, (unsigned long long)n,
			       100.0 * (double)valid * step / (double)n, key);
			CHECK(n < 10000000ULL, "space of %llu points", (unsigned long long)n);
			CHECK((double)valid * step > 0.05 * (double)n,
			      "only %llu of %llu sampled valid", (unsigned long long)valid,
			      (unsigned long long)(n / step));
			CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
			      "default invalid: %s", why);
			CHECK(strstr(key, (dt != 0 && mc) ? "MC=1" : "MC=0") != NULL,
			      "default path for dtype %d, matrix cores %d: %s", dt, mc, key);
			CHECK(space_key_parse(&s, key, &back) == 0 &&
			          !memcmp(&back, &pt, sizeof(pt)),
			      "key %s does not round-trip", key);
		}
	/* The wgmma path (MC=2) is in the tuner's fp16/bf16 space, valid on sm_90 only. */
	{
		struct gemm_problem p;
		struct space_def s;
		struct space_point pt;
		char why[128];
		const char *wg = "DT=1;TA=0;TB=0;MC=2;MT0=128;MT1=128;DU=64;TT0=4;TT1=4;VW=1;PGR=1;"
		                 "LDSPAD=0;WM=1;WN=2;STAGES=4;SWZ=1;GSU=1;GROUP=1;PLR=0;WL=0;MINB=1";

		dev.matrix_cores = 1;
		gemm_problem_init(&p, GEMM_FP16, GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
		backend_cuda_space_for(&s, &p, 1, 0);
		CHECK(space_key_parse(&s, wg, &pt) == 0, "no wgmma point in the tuner's space");
		CHECK(space_valid(&s, &pt, &p, &dev, why, sizeof(why)), "wgmma point invalid: %s",
		      why);
		snprintf(dev.arch, sizeof(dev.arch), "sm_80");
		CHECK(!space_valid(&s, &pt, &p, &dev, why, sizeof(why)), "wgmma valid on sm_80");
		snprintf(dev.arch, sizeof(dev.arch), "sm_90");
		CHECK(space_key_parse(&s, "DT=1;TA=0;TB=0;MC=2;MT0=128;MT1=256;DU=64;TT0=4;TT1=4;"
		                         "VW=1;PGR=1;LDSPAD=0;WM=1;WN=2;STAGES=4;SWZ=1;GSU=1;"
		                         "GROUP=1;PLR=0;WL=0;MINB=1",
		                         &pt) == 0 &&
		          !space_valid(&s, &pt, &p, &dev, why, sizeof(why)),
		      "wgmma with MT1 != 64 x WN accepted");
		printf("wgmma: %s\n", why);
	}
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
