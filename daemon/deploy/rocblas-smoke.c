/*
 * rocmd-rocblas-smoke: the GEMM smoke test of a deployed rocBLAS, run by the
 * daemon (deploy-methods.c) in a child process with a time limit, because
 * loading a mismatched rocBLAS or Tensile library can crash or abort the
 * whole process (rocBLAS aborts when no TensileLibrary loads).
 *
 *   rocmd-rocblas-smoke ROCBLAS HIP-RUNTIME [TENSILE-LIBPATH]
 *
 * Loads the SDK's HIP runtime, asks for a GPU, loads the deployed rocBLAS
 * (with ROCBLAS_TENSILE_LIBPATH set to TENSILE-LIBPATH when given: overlay
 * targets), runs a 64x48x40 sgemm and hgemm on random non-zero inputs and
 * compares each with a double-precision CPU reference. Prints one line:
 *   ok: sgemm max_rel_err=... hgemm max_rel_err=...       (exit 0)
 *   skipped: no GPU/runtime: <reason>                      (exit 77)
 *   failed: <what>                                         (exit 1)
 * Never run on AMD hardware: no AMD GPU was available where it was written
 * and tested, so only its skip path is tested (docs/PROTOCOL.md, lib.*).
 *
 * The libraries are loaded through dl.h: dlopen on Linux; on Windows
 * (rocmd-rocblas-smoke.exe, beside rocmd.exe) LoadLibraryExW of the SDK's
 * bin\amdhip64_6.dll and the deployed bin\rocblas.dll, each finding the DLLs
 * it needs in its own folder first, with the paths read from the wide
 * command line. ROCBLAS_TENSILE_LIBPATH is set before anything is loaded, so
 * a DLL's own C runtime, which copies the environment when it starts, sees it.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"

#define M 64
#define N 48
#define K 40
#define EXIT_SKIP 77

/* The few HIP and rocBLAS entry points used, with their C ABI. */
typedef int (*hip_count_fn)(int *);
typedef const char *(*hip_errstr_fn)(int);
typedef int (*hip_malloc_fn)(void **, size_t);
typedef int (*hip_free_fn)(void *);
typedef int (*hip_memcpy_fn)(void *, const void *, size_t, int);
typedef int (*hip_sync_fn)(void);
typedef int (*rb_create_fn)(void **);
typedef int (*rb_destroy_fn)(void *);
typedef int (*rb_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int,
                           const float *, int, const float *, float *, int);
typedef int (*rb_hgemm_fn)(void *, int, int, int, int, int, const uint16_t *, const uint16_t *, int,
                           const uint16_t *, int, const uint16_t *, uint16_t *, int);

#define HIP_H2D 1
#define HIP_D2H 2
#define RB_OP_NONE 111

static uint16_t
to_half(float f)
{
	uint32_t x;
	uint32_t sign, exp, mant;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xff;
	mant = x & 0x7fffff;
	if (exp < 113) /* too small for a normal half: our inputs never are */
		return (uint16_t)sign;
	if (exp > 142)
		return (uint16_t)(sign | 0x7c00);
	/* round to nearest */
	mant += 0x1000;
	if (mant & 0x800000) {
		mant = 0;
		exp++;
	}
	return (uint16_t)(sign | ((exp - 112) << 10) | (mant >> 13));
}

static float
from_half(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
	float f;

	if (exp == 0)
		return sign ? -ldexpf((float)mant, -24) : ldexpf((float)mant, -24);
	if (exp == 31)
		x = sign | 0x7f800000 | (mant << 13);
	else
		x = sign | ((exp + 112) << 23) | (mant << 13);
	memcpy(&f, &x, 4);
	return f;
}

/* Random in [0.25, 1) with a random sign: never zero. */
static float
rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	float v = 0.25f + 0.75f * (float)((*s >> 8) & 0xffff) / 65536.0f;
	return (*s & 0x10000) ? -v : v;
}

struct hip {
	hip_malloc_fn malloc_;
	hip_free_fn free_;
	hip_memcpy_fn memcpy_;
	hip_sync_fn sync;
};

static int
upload(const struct hip *h, void **dev, const void *host, size_t bytes)
{
	if (h->malloc_(dev, bytes) != 0)
		return -1;
	return host != NULL && h->memcpy_(*dev, host, bytes, HIP_H2D) != 0 ? -1 : 0;
}

/* Random inputs in fp32 and their fp16 copies, column-major as BLAS (A is
 * MxK, B is KxN), and the product of the fp32 inputs in double. */
static void
make_inputs(float *a, uint16_t *ha, float *b, uint16_t *hb, double *ref)
{
	unsigned seed = 12345;

	for (int i = 0; i < M * K; i++) {
		a[i] = rnd(&seed);
		ha[i] = to_half(a[i]);
	}
	for (int i = 0; i < K * N; i++) {
		b[i] = rnd(&seed);
		hb[i] = to_half(b[i]);
	}
	for (int j = 0; j < N; j++)
		for (int i = 0; i < M; i++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)a[i + k * M] * b[k + j * K];
			ref[i + j * M] = s;
		}
}

int
main(int argc, char **argv)
{
	static float a[M * K], b[K * N], c[M * N];
	static double ref[M * N];
	static uint16_t ha[M * K], hb[K * N], hc[M * N];
	void *hip = NULL, *rb = NULL, *handle = NULL, *da = NULL, *db = NULL, *dc = NULL;
	const char *rb_path, *hip_path;
	struct hip h;
	hip_count_fn count;
	hip_errstr_fn errstr;
	char why[1024];
	rb_create_fn create;
	rb_destroy_fn destroy;
	rb_sgemm_fn sgemm;
	rb_hgemm_fn hgemm;
	double serr = 0, herr = 0;
	int n = 0, rc = 1, err;
	float one = 1.0f, zero = 0.0f;
	uint16_t hone = to_half(1.0f), hzero = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr,
		        "usage: rocmd-rocblas-smoke ROCBLAS HIP-RUNTIME [TENSILE-LIBPATH]\n");
		return 2;
	}
	rb_path = rocmd_dl_arg(argv, 1);
	hip_path = rocmd_dl_arg(argv, 2);
	if (argc == 4 && setenv("ROCBLAS_TENSILE_LIBPATH", rocmd_dl_arg(argv, 3), 1) != 0) {
		printf("failed: cannot set ROCBLAS_TENSILE_LIBPATH\n");
		return 1;
	}
	hip = rocmd_dl_open(hip_path, why, sizeof(why));
	if (hip == NULL) {
		printf("skipped: no GPU/runtime: cannot load %s\n", why);
		return EXIT_SKIP;
	}
	/* Whether there is a GPU at all comes first: a runtime without one may
	 * well lack the rest (or fail in it). */
	count = (hip_count_fn)rocmd_dl_sym(hip, "hipGetDeviceCount");
	errstr = (hip_errstr_fn)rocmd_dl_sym(hip, "hipGetErrorString");
	if (count == NULL) {
		printf("skipped: no GPU/runtime: %s lacks hipGetDeviceCount\n", hip_path);
		return EXIT_SKIP;
	}
	if ((err = count(&n)) != 0 || n <= 0) {
		const char *text = err != 0 && errstr != NULL ? errstr(err) : NULL;
		if (err != 0)
			printf("skipped: no GPU/runtime: the HIP runtime sees no GPU "
			       "(hipGetDeviceCount: error %d%s%s)\n",
			       err, text != NULL ? ", " : "", text != NULL ? text : "");
		else
			printf("skipped: no GPU/runtime: the HIP runtime sees no GPU\n");
		return EXIT_SKIP;
	}
	h.malloc_ = (hip_malloc_fn)rocmd_dl_sym(hip, "hipMalloc");
	h.free_ = (hip_free_fn)rocmd_dl_sym(hip, "hipFree");
	h.memcpy_ = (hip_memcpy_fn)rocmd_dl_sym(hip, "hipMemcpy");
	h.sync = (hip_sync_fn)rocmd_dl_sym(hip, "hipDeviceSynchronize");
	if (h.malloc_ == NULL || h.free_ == NULL || h.memcpy_ == NULL || h.sync == NULL) {
		printf("skipped: no GPU/runtime: %s lacks the HIP entry points\n", hip_path);
		return EXIT_SKIP;
	}
	rb = rocmd_dl_open(rb_path, why, sizeof(why));
	if (rb == NULL) {
		printf("failed: cannot load the deployed rocBLAS %s\n", why);
		return 1;
	}
	create = (rb_create_fn)rocmd_dl_sym(rb, "rocblas_create_handle");
	destroy = (rb_destroy_fn)rocmd_dl_sym(rb, "rocblas_destroy_handle");
	sgemm = (rb_sgemm_fn)rocmd_dl_sym(rb, "rocblas_sgemm");
	hgemm = (rb_hgemm_fn)rocmd_dl_sym(rb, "rocblas_hgemm");
	if (create == NULL || destroy == NULL || sgemm == NULL || hgemm == NULL) {
		printf("failed: %s lacks rocblas_create_handle/sgemm/hgemm\n", rb_path);
		return 1;
	}
	if (create(&handle) != 0) {
		printf("failed: rocblas_create_handle failed\n");
		return 1;
	}
	make_inputs(a, ha, b, hb, ref);
	if (upload(&h, &da, a, sizeof(a)) || upload(&h, &db, b, sizeof(b)) ||
	    upload(&h, &dc, NULL, sizeof(c))) {
		printf("failed: cannot allocate or copy to GPU memory\n");
		goto out;
	}
	if (sgemm(handle, RB_OP_NONE, RB_OP_NONE, M, N, K, &one, da, M, db, K, &zero, dc, M) != 0 ||
	    h.sync() != 0 || h.memcpy_(c, dc, sizeof(c), HIP_D2H) != 0) {
		printf("failed: rocblas_sgemm returned an error\n");
		goto out;
	}
	for (int i = 0; i < M * N; i++) {
		double e = fabs(c[i] - ref[i]) / (fabs(ref[i]) + 1.0);
		if (!(e <= serr))
			serr = e;
	}
	if (!(serr < 1e-4)) {
		printf("failed: sgemm result wrong (max relative error %.3g)\n", serr);
		goto out;
	}
	h.free_(da);
	h.free_(db);
	h.free_(dc);
	da = db = dc = NULL;
	if (upload(&h, &da, ha, sizeof(ha)) || upload(&h, &db, hb, sizeof(hb)) ||
	    upload(&h, &dc, NULL, sizeof(hc))) {
		printf("failed: cannot allocate or copy to GPU memory\n");
		goto out;
	}
	if (hgemm(handle, RB_OP_NONE, RB_OP_NONE, M, N, K, &hone, da, M, db, K, &hzero, dc, M) !=
	        0 ||
	    h.sync() != 0 || h.memcpy_(hc, dc, sizeof(hc), HIP_D2H) != 0) {
		printf("failed: rocblas_hgemm returned an error\n");
		goto out;
	}
	for (int i = 0; i < M * N; i++) {
		double e = fabs(from_half(hc[i]) - ref[i]) / (fabs(ref[i]) + 1.0);
		if (!(e <= herr))
			herr = e;
	}
	/* fp16 inputs and accumulation over K=40: a few units in the last place. */
	if (!(herr < 2e-2)) {
		printf("failed: hgemm result wrong (max relative error %.3g)\n", herr);
		goto out;
	}
	printf("ok: sgemm max_rel_err=%.3g hgemm max_rel_err=%.3g on %d GPU(s)\n", serr, herr, n);
	rc = 0;
out:
	if (da != NULL)
		h.free_(da);
	if (db != NULL)
		h.free_(db);
	if (dc != NULL)
		h.free_(dc);
	destroy(handle);
	/* The libraries stay loaded: unloading a HIP runtime at exit is a known crash. */
	return rc;
}
