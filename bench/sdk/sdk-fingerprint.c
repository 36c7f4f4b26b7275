/*
 * sdk-fingerprint: times rocBLAS library inspection with a content
 * fingerprint (every file hashed, no cache) on one folder, for bench/sdk/sdk.sh,
 * which compares it with sha256sum over the same files in the same run.
 *
 * Usage: sdk-fingerprint DIR [RUNS]
 * Prints one line per run: files, bytes, seconds, MB/s, fingerprint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/hash.h"
#include "daemon/sdk/rocblas-library.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 1;

	if (argc < 2) {
		fprintf(stderr, "usage: sdk-fingerprint DIR [RUNS]\n");
		return 2;
	}
	for (int r = 0; r < runs; r++) {
		struct rocmd_rocblas_lib lib;
		char why[1024], hex[ROCMD_SHA256_HEX];
		double t0 = now_s(), dt;
		int rc = rocmd_rocblas_inspect(argv[1],
		                               ROCMD_ROCBLAS_FINGERPRINT | ROCMD_ROCBLAS_SKIP_DAT,
		                               NULL, &lib, why, sizeof(why));
		if (rc < 0) {
			fprintf(stderr, "sdk-fingerprint: %s\n", why);
			return 1;
		}
		dt = now_s() - t0;
		rocmd_sha256_hex(lib.fingerprint, hex);
		printf("files %zu bytes %llu seconds %.3f MB/s %.0f fingerprint %s\n", lib.nfiles,
		       (unsigned long long)lib.total_size, dt, lib.total_size / dt / 1e6, hex);
		rocmd_rocblas_lib_free(&lib);
	}
	return 0;
}
