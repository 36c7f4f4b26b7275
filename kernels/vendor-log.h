/*
 * The GEMMs a program ran, read from the logs the vendor libraries write for
 * it: rocBLAS's bench log (ROCBLAS_LAYER & 2: one `rocblas-bench` command line
 * per call), hipBLASLt's (HIPBLASLT_LOG_MASK & 32: one `hipblaslt-bench` line
 * per call) and PyTorch TunableOp's results CSV (a `GemmTunableOp_<type>_<AB>`
 * line per tuned GEMM, with its time), and librocmd-gemm's own log
 * (ROCMD_GEMM_LOG_PATH: rocmd's kernels, tuned into the tuned library, not a
 * vendor's override). `rocmctl tune capture` and `rocmctl
 * tune import-log` read them; the daemon queues what they find.
 *
 * A shape is what the library's override file matches on: the library, the
 * storage type (fp32, fp16, bf16, with fp32 accumulation), the transposes, M,
 * N, K, the batch and its strides, lda, ldb, ldc, alpha and beta. Each log line
 * is one call; equal shapes are counted together. A line of a format this
 * reads but of a GEMM the tuner does not tune (complex, double, int8, fp16
 * accumulation, mixed storage types, a pointer-array batch) is counted as
 * skipped with its reason, never guessed at.
 */
#ifndef ROCMD_KERNELS_VENDOR_LOG_H
#define ROCMD_KERNELS_VENDOR_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gemm.h"

struct vendor_shape {
	char library[16]; /* "rocblas", "hipblaslt", "rocmd-gemm", or "" (TunableOp's: either) */
	char source[16];  /* "rocblas-bench", "hipblaslt-bench", "tunableop", "rocmd-gemm" */
	struct gemm_problem p;
	int64_t calls;
	double ms; /* per call when the log says (TunableOp), else 0 */
};

struct vendor_shapes {
	struct vendor_shape *v;
	size_t n, cap;
	int64_t lines;    /* GEMM lines read */
	int64_t skipped;  /* of which not tunable here */
	char skip_why[160]; /* the first reason */
};

#define VENDOR_LOG_MAX_SHAPES 65536
#define VENDOR_LOG_MAX_LINE 8192
#define VENDOR_SHAPES_PER_CALL 4096 /* shapes in one tune.add_shapes call */

/* Reads one line of any of the three formats into S: 1 a GEMM counted, 0 not
 * a GEMM line, 2 a GEMM skipped (S->skip_why), ROCMD_ENOMEM or ROCMD_EINVAL
 * (more than VENDOR_LOG_MAX_SHAPES distinct shapes). */
int vendor_log_line(struct vendor_shapes *s, const char *line, size_t len);
/* Every line of TEXT. 0, or the first error. */
int vendor_log_parse(struct vendor_shapes *s, const char *text, size_t len);
void vendor_shapes_free(struct vendor_shapes *s);

#endif
