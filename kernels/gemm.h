/*
 * The GEMM problem every backend and the tuner agree on, and the host-side
 * helpers around it: fp16/bf16 conversion, random inputs, the double-precision
 * reference and the per-dtype tolerance a candidate's result must meet.
 *
 * All matrices are column-major, as in BLAS and rocBLAS:
 *   C = alpha * op(A) * op(B) + beta * C,  op(X) = X or X^T,
 * where op(A) is M x K, op(B) is K x N and C is M x N. A, B and C share one
 * storage dtype (fp32, fp16 or bf16); accumulation is always fp32 and alpha and
 * beta are fp32. A batch holds BATCH independent problems at fixed strides.
 */
#ifndef ROCMD_KERNELS_GEMM_H
#define ROCMD_KERNELS_GEMM_H

#include <stddef.h>
#include <stdint.h>

enum gemm_dtype {
	GEMM_FP32 = 0,
	GEMM_FP16 = 1,
	GEMM_BF16 = 2,
};
#define GEMM_DTYPE_COUNT 3
/* The largest M, N, K or batch a shape may name (gemm_shape_parse). */
#define GEMM_DIM_MAX INT64_C(2147483647)

enum gemm_trans {
	GEMM_N = 0,
	GEMM_T = 1,
};

struct gemm_problem {
	enum gemm_dtype dtype;
	enum gemm_trans ta, tb;
	int64_t m, n, k;
	int64_t lda, ldb, ldc;		      /* leading dimensions, in elements */
	int64_t stride_a, stride_b, stride_c; /* elements from one batch item to the next */
	int64_t batch;			      /* >= 1 */
	float alpha, beta;
	/* 1 when an operand's address is not 16-byte aligned (the API sets it from
	 * the pointers it is given): the paths that copy 16-byte chunks (cp.async,
	 * mma.sync, wgmma, WMMA) cannot run it. 0 from gemm_problem_init. */
	int unaligned;
};

/* Device (or host, for the CPU backend) addresses of one problem's operands. */
struct gemm_bufs {
	uint64_t a, b, c;
};

const char *gemm_dtype_name(enum gemm_dtype dt);
/* "fp32", "f32", "float", "fp16", "half", "bf16": 0 and *out, or ROCMD_EINVAL. */
int gemm_dtype_parse(const char *s, enum gemm_dtype *out);
size_t gemm_dtype_size(enum gemm_dtype dt);

/* Fills a tight problem (lda = rows of A as stored, ...), alpha 1, beta 0. */
void gemm_problem_init(struct gemm_problem *p, enum gemm_dtype dt, enum gemm_trans ta,
		       enum gemm_trans tb, int64_t m, int64_t n, int64_t k, int64_t batch);
/* 0, or ROCMD_EINVAL with a sentence in WHY (sizes, leading dimensions, strides). */
int gemm_problem_check(const struct gemm_problem *p, char *why, size_t whylen);
/* Rows and columns of A, B and C as stored (before op()). */
int64_t gemm_rows_a(const struct gemm_problem *p);
int64_t gemm_cols_a(const struct gemm_problem *p);
int64_t gemm_rows_b(const struct gemm_problem *p);
int64_t gemm_cols_b(const struct gemm_problem *p);
/* Elements spanned by the whole batch of each operand (what to allocate). */
int64_t gemm_elems_a(const struct gemm_problem *p);
int64_t gemm_elems_b(const struct gemm_problem *p);
int64_t gemm_elems_c(const struct gemm_problem *p);
/* 2*M*N*K*batch. */
double gemm_flops(const struct gemm_problem *p);

/* The problem part of a tuning key: "fp32:NT:1024x512x256:b1". */
int gemm_problem_key(const struct gemm_problem *p, char *buf, size_t len);
/* Parses "MxNxK" or "MxNxK:b4" (batch) into M, N, K and batch. */
int gemm_shape_parse(const char *s, int64_t *m, int64_t *n, int64_t *k, int64_t *batch);
/* Parses a problem key back ("fp32:NT:1024x512x256:b1"); tight layout. */
int gemm_problem_parse(const char *key, struct gemm_problem *p);

/* IEEE binary16 and bfloat16 conversion, round to nearest even, NaN kept NaN. */
uint16_t gemm_f32_to_f16(float f);
float gemm_f16_to_f32(uint16_t h);
uint16_t gemm_f32_to_bf16(float f);
float gemm_bf16_to_f32(uint16_t h);

/* Element I of a buffer of dtype DT, as float; and the store back. */
float gemm_load(enum gemm_dtype dt, const void *buf, int64_t i);
void gemm_store(enum gemm_dtype dt, void *buf, int64_t i, float v);

/*
 * Fills N elements with uniform values in [-1,-0.1] U [0.1,1]: never zero, so
 * a kernel that skips a product or a tile cannot pass by accident. Same SEED,
 * same values.
 */
void gemm_fill_random(enum gemm_dtype dt, void *buf, int64_t n, uint64_t seed);

/*
 * The exact (double) value of C(i,j) of batch item BI, from host copies of A,
 * B and the C *before* the GEMM. *SCALE (may be NULL) gets the sum of the
 * magnitudes of the terms, which the tolerance is relative to.
 */
double gemm_ref_entry(const struct gemm_problem *p, const void *a, const void *b,
		      const void *c_in, int64_t bi, int64_t i, int64_t j, double *scale);
/* Whether GOT (as stored in dtype) is within tolerance of REF with term scale SCALE.
 * NaN and Inf never pass. */
int gemm_within_tol(const struct gemm_problem *p, double got, double ref, double scale);
/* The same with FACTOR times the tolerance: a result compared with another
 * library's result rather than the exact one (each may be off by one
 * tolerance), as vendor solutions are checked against their default's. */
int gemm_within_tol_of(const struct gemm_problem *p, double got, double ref, double scale,
		       double factor);

/*
 * Compares C_OUT against the reference. Problems up to FULL_LIMIT multiply-adds
 * are checked entry by entry; larger ones on SAMPLES random entries plus the
 * four corners of every batch item. Returns the number of bad entries found;
 * *worst (may be NULL) gets the largest error over tolerance seen.
 */
int64_t gemm_check(const struct gemm_problem *p, const void *a, const void *b, const void *c_in,
		   const void *c_out, double full_limit, int samples, uint64_t seed,
		   double *worst);

/* A straightforward host GEMM in double accumulation, storing into C: for tests. */
void gemm_host_reference(const struct gemm_problem *p, const void *a, const void *b, void *c);

#endif
