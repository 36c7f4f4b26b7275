/*
 * A stand-in rocBLAS for testing rocmd-rocblas-smoke: sgemm and hgemm on the
 * CPU (column-major, no transposes), on the fake HIP runtime's host memory.
 * Built twice: correct, and with FAKE_WRONG, where one element of each result
 * is off, which the smoke test must catch. ROCMD_FAKE_ROCBLAS_LIBPATH_CHECK
 * makes rocblas_create_handle fail unless ROCBLAS_TENSILE_LIBPATH equals it
 * (the overlay case).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int rocblas_create_handle(void **h);
int rocblas_destroy_handle(void *h);
int rocblas_sgemm(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a,
                  int lda, const float *b, int ldb, const float *beta, float *c, int ldc);
int rocblas_hgemm(void *h, int ta, int tb, int m, int n, int k, const uint16_t *alpha,
                  const uint16_t *a, int lda, const uint16_t *b, int ldb, const uint16_t *beta,
                  uint16_t *c, int ldc);

static int handle;

int
rocblas_create_handle(void **h)
{
	const char *want = getenv("ROCMD_FAKE_ROCBLAS_LIBPATH_CHECK");
	const char *got = getenv("ROCBLAS_TENSILE_LIBPATH");

	if (want != NULL && (got == NULL || strcmp(want, got) != 0))
		return 1;
	*h = &handle;
	return 0;
}

int
rocblas_destroy_handle(void *h)
{
	return 0;
}

static float
h2f(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, x;
	float f;

	if (exp == 0)
		return sign ? -ldexpf((float)mant, -24) : ldexpf((float)mant, -24);
	x = sign | ((exp + 112) << 23) | (mant << 13);
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t
f2h(float f)
{
	uint32_t x, sign, exp, mant;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (x >> 23) & 0xff;
	mant = x & 0x7fffff;
	if (exp < 113)
		return (uint16_t)sign;
	mant += 0x1000;
	if (mant & 0x800000) {
		mant = 0;
		exp++;
	}
	return (uint16_t)(sign | ((exp - 112) << 10) | (mant >> 13));
}

int
rocblas_sgemm(void *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a,
              int lda, const float *b, int ldb, const float *beta, float *c, int ldc)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			float s = 0;
			for (int l = 0; l < k; l++)
				s += a[i + l * lda] * b[l + j * ldb];
			c[i + j * ldc] = *alpha * s + (*beta != 0 ? *beta * c[i + j * ldc] : 0);
		}
#ifdef FAKE_WRONG
	c[5] += 0.5f;
#endif
	return 0;
}

int
rocblas_hgemm(void *h, int ta, int tb, int m, int n, int k, const uint16_t *alpha,
              const uint16_t *a, int lda, const uint16_t *b, int ldb, const uint16_t *beta,
              uint16_t *c, int ldc)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			float s = 0;
			for (int l = 0; l < k; l++)
				s += h2f(a[i + l * lda]) * h2f(b[l + j * ldb]);
			c[i + j * ldc] = f2h(h2f(*alpha) * s);
		}
	return 0;
}
