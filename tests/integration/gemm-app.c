/*
 * A program of a user's that calls librocmd-gemm's public API (CPU backend,
 * no tuned library): fp32 TN 64x8x32 three times and fp16 NN 16x16x16 twice.
 * test-tune-vendor runs it under `rocmctl tune capture`, which queues the
 * shapes a program ran through librocmd-gemm as jobs of rocmd's kernels.
 */
#include <stdio.h>
#include <string.h>

#include "rocmd/rocmd-gemm.h"

int
main(void)
{
	rocmd_gemm_t *h;
	char err[512];
	void *a, *b, *c;
	int i, calls = 0;

	if (rocmd_gemm_open(NULL, "cpu", 0, &h, err, sizeof(err)) != 0) {
		fprintf(stderr, "gemm-app: %s\n", err);
		return 1;
	}
	if (rocmd_gemm_malloc(h, 64 * 64 * 4, &a) != 0 || rocmd_gemm_malloc(h, 64 * 64 * 4, &b) != 0 ||
	    rocmd_gemm_malloc(h, 64 * 64 * 4, &c) != 0)
		return 1;
	memset(a, 0, 64 * 64 * 4);
	memset(b, 0, 64 * 64 * 4);
	for (i = 0; i < 3; i++)
		calls += rocmd_gemm(h, ROCMD_GEMM_F32, ROCMD_GEMM_OP_T, ROCMD_GEMM_OP_N, 64, 8, 32, 1.0f,
		                    a, 32, b, 32, 0.0f, c, 64) == 0;
	for (i = 0; i < 2; i++)
		calls += rocmd_gemm(h, ROCMD_GEMM_F16, ROCMD_GEMM_OP_N, ROCMD_GEMM_OP_N, 16, 16, 16,
		                    1.0f, a, 16, b, 16, 0.5f, c, 16) == 0;
	printf("gemm-app: %d calls ran\n", calls);
	rocmd_gemm_free(h, a);
	rocmd_gemm_free(h, b);
	rocmd_gemm_free(h, c);
	rocmd_gemm_close(h);
	return calls == 5 ? 0 : 1;
}
