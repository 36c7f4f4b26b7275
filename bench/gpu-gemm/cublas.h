/*
 * cuBLAS, the reference bench/gpu-gemm times rocmd's kernels against, loaded
 * at run time (dlopen) like every GPU library rocmd uses: nothing is linked,
 * and the benchmark builds where no CUDA toolkit is installed.
 */
#ifndef ROCMD_BENCH_GPU_GEMM_CUBLAS_H
#define ROCMD_BENCH_GPU_GEMM_CUBLAS_H

#include <stddef.h>

#include "kernels/gemm.h"

/*
 * Loads cuBLAS ($ROCMD_CUBLAS, else libcublas.so.13, .12, the toolkit's) and
 * creates a handle in the current context on the legacy default stream, in
 * CUBLAS_DEFAULT_MATH (SGEMM stays fp32: no TF32). VERSION gets
 * "cuBLAS 130100". 0, or -1 with a sentence in WHY.
 */
int bench_cublas_open(char *version, size_t vlen, char *why, size_t whylen);
/* A measure_gemm_fn (kernels/measure.h): cublasSgemm for fp32, cublasGemmEx
 * with CUBLAS_COMPUTE_32F for fp16 and bf16. Batch 1 only. */
int bench_cublas_gemm(void *arg, const struct gemm_problem *p, const struct gemm_bufs *bufs);
void bench_cublas_close(void);

#endif
