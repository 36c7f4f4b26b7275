/*
 * The tuned library with vendor candidates, for bench-gemm-api-cublas
 * --vendor: rocmd's choice and cuBLASLt's tuned solution measured on every
 * problem of the suite, each problem's entry the faster of the two
 * (tunedlib_offer_vendor, the rule the daemon applies to its results).
 */
#ifndef ROCMD_BENCH_GEMM_API_VENDOR_LIB_H
#define ROCMD_BENCH_GEMM_API_VENDOR_LIB_H

#include <stddef.h>

#include "kernels/gemm.h"
#include "rocmd/rocmd-gemm.h"

/*
 * For every suite problem of the dtypes flagged in DTYPES (of at most LIMIT
 * multiply-adds): BASE's choice for it (exact, nearest or default) timed by
 * the tuner's measurement on the CUDA backend; cuBLASLt's candidates tuned by
 * tune_run (exhaustive up to BUDGET, the best three re-timed); the two
 * offered to a library that starts as BASE's (LIBDIR, or none); rocmd's and
 * cuBLASLt's re-timed side by side in alternating rounds before the offer.
 * Written into DIR when it names a folder (--vendor-out), else into a new
 * folder under /tmp, its name in DIR. One line per problem on stdout.
 * 0, or -1 with the reason printed.
 */
int vendor_library(rocmd_gemm_t *base, const char *libdir, const int *dtypes, double limit,
                   int budget, char *dir, size_t dlen);

#endif
