/*
 * cuBLAS through dlopen (cublas.h). The few entry points the benchmark calls
 * are declared here with the ABI's plain types; the enum values are cuBLAS's
 * and CUDA's own (cublas_api.h, library_types.h).
 */
#include "bench/gpu-gemm/cublas.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CUBLAS_DEFAULT_MATH 0
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_GEMM_DEFAULT (-1)
#define CUDA_R_32F 0
#define CUDA_R_16F 2
#define CUDA_R_16BF 14

struct cublas_handle;

static struct {
	void *lib;
	int (*create)(struct cublas_handle **);
	int (*destroy)(struct cublas_handle *);
	int (*set_math)(struct cublas_handle *, int);
	int (*version)(struct cublas_handle *, int *);
	int (*sgemm)(struct cublas_handle *, int, int, int, int, int, const float *, const float *,
	             int, const float *, int, const float *, float *, int);
	int (*gemm_ex)(struct cublas_handle *, int, int, int, int, int, const void *, const void *,
	               int, int, const void *, int, int, const void *, void *, int, int, int, int);
	struct cublas_handle *h;
} cb;

int
bench_cublas_open(char *version, size_t vlen, char *why, size_t whylen)
{
	static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
	                                    "/usr/local/cuda/lib64/libcublas.so", NULL};
	const char *env = getenv("ROCMD_CUBLAS");
	int i, v = 0;

	if (env != NULL && *env != '\0')
		cb.lib = dlopen(env, RTLD_NOW);
	for (i = 0; cb.lib == NULL && names[i] != NULL; i++)
		cb.lib = dlopen(names[i], RTLD_NOW);
	if (cb.lib == NULL) {
		snprintf(why, whylen, "cuBLAS not found (%s)", dlerror());
		return -1;
	}
	*(void **)&cb.create = dlsym(cb.lib, "cublasCreate_v2");
	*(void **)&cb.destroy = dlsym(cb.lib, "cublasDestroy_v2");
	*(void **)&cb.set_math = dlsym(cb.lib, "cublasSetMathMode");
	*(void **)&cb.version = dlsym(cb.lib, "cublasGetVersion_v2");
	*(void **)&cb.sgemm = dlsym(cb.lib, "cublasSgemm_v2");
	*(void **)&cb.gemm_ex = dlsym(cb.lib, "cublasGemmEx");
	if (cb.create == NULL || cb.set_math == NULL || cb.sgemm == NULL || cb.gemm_ex == NULL) {
		snprintf(why, whylen, "cuBLAS lacks cublasCreate_v2, cublasSgemm_v2 or cublasGemmEx");
		goto fail;
	}
	if (cb.create(&cb.h) != 0 || cb.set_math(cb.h, CUBLAS_DEFAULT_MATH) != 0) {
		snprintf(why, whylen, "cublasCreate failed");
		goto fail;
	}
	if (cb.version == NULL || cb.version(cb.h, &v) != 0)
		v = 0;
	snprintf(version, vlen, "cuBLAS %d", v);
	return 0;
fail:
	dlclose(cb.lib);
	cb.lib = NULL;
	return -1;
}

int
bench_cublas_gemm(void *arg, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	static const int type[GEMM_DTYPE_COUNT] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF};
	float alpha = p->alpha, beta = p->beta;

	if (cb.h == NULL || p->batch != 1)
		return -1;
	if (p->dtype == GEMM_FP32)
		return cb.sgemm(cb.h, p->ta, p->tb, (int)p->m, (int)p->n, (int)p->k, &alpha,
		                (const float *)(uintptr_t)bufs->a, (int)p->lda,
		                (const float *)(uintptr_t)bufs->b, (int)p->ldb, &beta,
		                (float *)(uintptr_t)bufs->c, (int)p->ldc);
	return cb.gemm_ex(cb.h, p->ta, p->tb, (int)p->m, (int)p->n, (int)p->k, &alpha,
	                  (const void *)(uintptr_t)bufs->a, type[p->dtype], (int)p->lda,
	                  (const void *)(uintptr_t)bufs->b, type[p->dtype], (int)p->ldb, &beta,
	                  (void *)(uintptr_t)bufs->c, type[p->dtype], (int)p->ldc,
	                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

void
bench_cublas_close(void)
{
	if (cb.h != NULL && cb.destroy != NULL)
		cb.destroy(cb.h);
	cb.h = NULL;
	/* The library stays loaded: it tears itself down at exit. */
}
