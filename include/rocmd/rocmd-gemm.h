/*
 * rocmd-gemm: the public C API of rocmd's tuned GEMM kernels (librocmd-gemm).
 *
 * An application opens a tuned kernel library folder — the one rocmd's daemon
 * keeps for this GPU and SDK under <state>/tuned/<arch>-<sdk>/, or one built
 * by `rocmtune lib build` — and runs GEMMs with the configuration tuned for
 * each shape:
 *
 *     C = alpha * op(A) * op(B) + beta * C        (column-major, as BLAS)
 *
 * with op(X) = X or X^T, fp32, fp16 or bf16 storage and fp32 accumulation,
 * and any leading dimensions. For each problem the library picks, in order:
 * the tuned shape that matches exactly; else the tuned shape (same dtype and
 * transposes) whose kernel is valid for the problem and predicted fastest on
 * it (on a GPU, a cost model scales its measured time; on the CPU, the
 * nearest by Σ|log2 ratio| of M, N, K); else the default configuration of the problem's
 * shape class on the device (GEMV, skinny with split-K, tensor-core tiles
 * sized to fill the GPU, ...). rocmd_gemm_query() says which one would run
 * and why.
 *
 * Backends: "cpu" (a blocked, threaded host GEMM; pointers are host memory)
 * and "cuda" (pointers are device memory from rocmd_gemm_malloc() or the CUDA
 * driver). GPU runtimes are loaded at run time, never linked: the library
 * loads and reports "not available: ..." on a machine without them.
 *
 * A handle is used by one thread at a time. Functions return 0 or a negative
 * error code; rocmd_gemm_error() gives the last error's sentence.
 */
#ifndef ROCMD_GEMM_H
#define ROCMD_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#if defined(ROCMD_GEMM_BUILD)
#define ROCMD_GEMM_API __declspec(dllexport)
#else
#define ROCMD_GEMM_API __declspec(dllimport)
#endif
#else
#define ROCMD_GEMM_API __attribute__((visibility("default")))
#endif

#define ROCMD_GEMM_API_VERSION 1

typedef struct rocmd_gemm rocmd_gemm_t;

enum rocmd_gemm_dtype {
	ROCMD_GEMM_F32 = 0,
	ROCMD_GEMM_F16 = 1,  /* IEEE binary16, as uint16_t */
	ROCMD_GEMM_BF16 = 2, /* bfloat16, as uint16_t */
};

enum rocmd_gemm_op {
	ROCMD_GEMM_OP_N = 0,
	ROCMD_GEMM_OP_T = 1,
};

/* How a configuration was chosen. */
enum rocmd_gemm_how {
	ROCMD_GEMM_EXACT = 0,
	ROCMD_GEMM_NEAREST = 1,
	ROCMD_GEMM_DEFAULT = 2,
};

/*
 * Opens device DEVICE of BACKEND ("cpu", "cuda"; NULL: the library's own
 * backend, or "cpu" without a library) with the tuned library in folder
 * LIBDIR (NULL: default configurations only). A library for another backend
 * or arch than the device is refused. On failure *OUT is NULL and, where
 * ERRBUF is not NULL, a sentence is written there.
 */
ROCMD_GEMM_API int rocmd_gemm_open(const char *libdir, const char *backend, int device,
                                   rocmd_gemm_t **out, char *errbuf, size_t errlen);
ROCMD_GEMM_API void rocmd_gemm_close(rocmd_gemm_t *h);
/* The last error's sentence on this handle ("" when none). */
ROCMD_GEMM_API const char *rocmd_gemm_error(const rocmd_gemm_t *h);
/* What the device and library are: "cuda sm_90 NVIDIA H200, library v3 (12 shapes)". */
ROCMD_GEMM_API const char *rocmd_gemm_describe(const rocmd_gemm_t *h);

/* Memory in the backend's address space (host memory for "cpu"). */
ROCMD_GEMM_API int rocmd_gemm_malloc(rocmd_gemm_t *h, size_t bytes, void **ptr);
ROCMD_GEMM_API void rocmd_gemm_free(rocmd_gemm_t *h, void *ptr);
ROCMD_GEMM_API int rocmd_gemm_upload(rocmd_gemm_t *h, void *dst, const void *src, size_t bytes);
ROCMD_GEMM_API int rocmd_gemm_download(rocmd_gemm_t *h, void *dst, const void *src, size_t bytes);
/* Waits for every GEMM enqueued on H. */
ROCMD_GEMM_API int rocmd_gemm_synchronize(rocmd_gemm_t *h);

/*
 * C = alpha op(A) op(B) + beta C. A is stored lda x (K or M), B ldb x (N or
 * K), C ldc x N, column-major, in the backend's address space. The call may
 * return before the GEMM finishes on a GPU (rocmd_gemm_synchronize()).
 */
ROCMD_GEMM_API int rocmd_gemm(rocmd_gemm_t *h, enum rocmd_gemm_dtype dtype, enum rocmd_gemm_op opa,
                              enum rocmd_gemm_op opb, int64_t m, int64_t n, int64_t k, float alpha,
                              const void *a, int64_t lda, const void *b, int64_t ldb, float beta,
                              void *c, int64_t ldc);
/* BLAS-style wrappers: TRANSA/TRANSB 'N' or 'T' (lower case accepted). */
ROCMD_GEMM_API int rocmd_sgemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n,
                               int64_t k, float alpha, const float *a, int64_t lda, const float *b,
                               int64_t ldb, float beta, float *c, int64_t ldc);
ROCMD_GEMM_API int rocmd_hgemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n,
                               int64_t k, float alpha, const uint16_t *a, int64_t lda,
                               const uint16_t *b, int64_t ldb, float beta, uint16_t *c,
                               int64_t ldc);
ROCMD_GEMM_API int rocmd_bf16gemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n,
                                  int64_t k, float alpha, const uint16_t *a, int64_t lda,
                                  const uint16_t *b, int64_t ldb, float beta, uint16_t *c,
                                  int64_t ldc);

/* Which configuration a GEMM of this problem would run, and why. */
struct rocmd_gemm_choice {
	enum rocmd_gemm_how how;
	char config[512];     /* "MT0=64;MT1=64;..." */
	char tuned_shape[64]; /* the library entry used ("fp32:NN:1024x1024x1024:b1"), or "" */
	double tuned_ms;      /* that entry's measured time, 0 for the default */
	double default_ms;    /* the default's time on that shape, 0 when unknown */
	double distance;      /* Σ|log2 ratio| to the tuned shape */
	char reason[256];     /* a sentence */
};
ROCMD_GEMM_API int rocmd_gemm_query(rocmd_gemm_t *h, enum rocmd_gemm_dtype dtype,
                                    enum rocmd_gemm_op opa, enum rocmd_gemm_op opb, int64_t m,
                                    int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc,
                                    struct rocmd_gemm_choice *out);

/*
 * What the handle has done: GEMM calls, selections made (one per problem and
 * alignment while the handle's choice cache holds it: later calls of the
 * same problem reuse it) and module lookups (compile or load, one per
 * selection at most), and the library generation in use (0: none).
 */
struct rocmd_gemm_stats {
	uint64_t calls;
	uint64_t selections;
	uint64_t modules;
	uint64_t generation;
};
ROCMD_GEMM_API int rocmd_gemm_stats(const rocmd_gemm_t *h, struct rocmd_gemm_stats *out);
/*
 * Reads the library folder given at open again. When it holds a new
 * generation, the handle uses it from the next call on: cached choices and
 * the old entries' modules are dropped (*CHANGED 1). On an error the handle
 * keeps the library it had. A handle opened without a library: 0, nothing.
 */
ROCMD_GEMM_API int rocmd_gemm_reload(rocmd_gemm_t *h, int *changed);

#ifdef __cplusplus
}
#endif

#endif
