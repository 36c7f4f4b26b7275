/*
 * Host-side GEMM helpers: problem layout, fp16/bf16 conversion, never-zero
 * random inputs, the double-precision reference and the tolerance check every
 * tuning candidate must pass before its time counts.
 */
#include "kernels/gemm.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static const char *const dtype_names[GEMM_DTYPE_COUNT] = {"fp32", "fp16", "bf16"};

const char *
gemm_dtype_name(enum gemm_dtype dt)
{
	if ((unsigned)dt >= GEMM_DTYPE_COUNT)
		return "?";
	return dtype_names[dt];
}

int
gemm_dtype_parse(const char *s, enum gemm_dtype *out)
{
	if (!strcmp(s, "fp32") || !strcmp(s, "f32") || !strcmp(s, "float") || !strcmp(s, "s"))
		*out = GEMM_FP32;
	else if (!strcmp(s, "fp16") || !strcmp(s, "f16") || !strcmp(s, "half") || !strcmp(s, "h"))
		*out = GEMM_FP16;
	else if (!strcmp(s, "bf16") || !strcmp(s, "bfloat16"))
		*out = GEMM_BF16;
	else
		return ROCMD_EINVAL;
	return 0;
}

size_t
gemm_dtype_size(enum gemm_dtype dt)
{
	return dt == GEMM_FP32 ? 4 : 2;
}

void
gemm_problem_init(struct gemm_problem *p, enum gemm_dtype dt, enum gemm_trans ta,
		  enum gemm_trans tb, int64_t m, int64_t n, int64_t k, int64_t batch)
{
	memset(p, 0, sizeof(*p));
	p->dtype = dt;
	p->ta = ta;
	p->tb = tb;
	p->m = m;
	p->n = n;
	p->k = k;
	p->batch = batch < 1 ? 1 : batch;
	p->lda = gemm_rows_a(p) > 0 ? gemm_rows_a(p) : 1;
	p->ldb = gemm_rows_b(p) > 0 ? gemm_rows_b(p) : 1;
	p->ldc = m > 0 ? m : 1;
	p->stride_a = p->lda * gemm_cols_a(p);
	p->stride_b = p->ldb * gemm_cols_b(p);
	p->stride_c = p->ldc * n;
	p->alpha = 1.0f;
	p->beta = 0.0f;
}

int64_t
gemm_rows_a(const struct gemm_problem *p)
{
	return p->ta == GEMM_N ? p->m : p->k;
}

int64_t
gemm_cols_a(const struct gemm_problem *p)
{
	return p->ta == GEMM_N ? p->k : p->m;
}

int64_t
gemm_rows_b(const struct gemm_problem *p)
{
	return p->tb == GEMM_N ? p->k : p->n;
}

int64_t
gemm_cols_b(const struct gemm_problem *p)
{
	return p->tb == GEMM_N ? p->n : p->k;
}

int64_t
gemm_elems_a(const struct gemm_problem *p)
{
	return (p->batch - 1) * p->stride_a + p->lda * gemm_cols_a(p);
}

int64_t
gemm_elems_b(const struct gemm_problem *p)
{
	return (p->batch - 1) * p->stride_b + p->ldb * gemm_cols_b(p);
}

int64_t
gemm_elems_c(const struct gemm_problem *p)
{
	return (p->batch - 1) * p->stride_c + p->ldc * p->n;
}

double
gemm_flops(const struct gemm_problem *p)
{
	return 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)p->batch;
}

int
gemm_problem_check(const struct gemm_problem *p, char *why, size_t whylen)
{
	const int64_t lim = (int64_t)1 << 31;

	if ((unsigned)p->dtype >= GEMM_DTYPE_COUNT || (p->ta != GEMM_N && p->ta != GEMM_T) ||
	    (p->tb != GEMM_N && p->tb != GEMM_T)) {
		snprintf(why, whylen, "unknown dtype or transpose");
		return ROCMD_EINVAL;
	}
	if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1 || p->m >= lim || p->n >= lim ||
	    p->k >= lim) {
		snprintf(why, whylen, "M, N, K and batch must be between 1 and 2^31-1");
		return ROCMD_EINVAL;
	}
	if (p->lda < gemm_rows_a(p) || p->ldb < gemm_rows_b(p) || p->ldc < p->m) {
		snprintf(why, whylen, "a leading dimension is smaller than its matrix's rows");
		return ROCMD_EINVAL;
	}
	if (p->batch > 1 &&
	    (p->stride_a < p->lda * gemm_cols_a(p) || p->stride_b < p->ldb * gemm_cols_b(p) ||
	     p->stride_c < p->ldc * p->n)) {
		snprintf(why, whylen, "batch strides overlap batch items");
		return ROCMD_EINVAL;
	}
	return 0;
}

int
gemm_problem_key(const struct gemm_problem *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s:%c%c:%" PRId64 "x%" PRId64 "x%" PRId64 ":b%" PRId64,
			 gemm_dtype_name(p->dtype), p->ta == GEMM_N ? 'N' : 'T',
			 p->tb == GEMM_N ? 'N' : 'T', p->m, p->n, p->k, p->batch);

	return n < 0 || (size_t)n >= len ? ROCMD_EINVAL : 0;
}

int
gemm_shape_parse(const char *s, int64_t *m, int64_t *n, int64_t *k, int64_t *batch)
{
	long long mm, nn, kk, bb = 1;
	int used = 0;

	if (sscanf(s, "%lldx%lldx%lld%n", &mm, &nn, &kk, &used) != 3)
		return ROCMD_EINVAL;
	if (s[used] == ':') {
		int u2 = 0;

		if (sscanf(s + used, ":b%lld%n", &bb, &u2) != 1)
			return ROCMD_EINVAL;
		used += u2;
	}
	if (s[used] != '\0' || mm < 1 || nn < 1 || kk < 1 || bb < 1)
		return ROCMD_EINVAL;
	/* Every dimension below 2^31 and every operand's bytes, batch included,
	 * within int64: the strides and sizes computed from them cannot overflow. */
	if (mm > GEMM_DIM_MAX || nn > GEMM_DIM_MAX || kk > GEMM_DIM_MAX || bb > GEMM_DIM_MAX)
		return ROCMD_EINVAL;
	{
		int64_t big = mm * kk, bytes;
		if (kk * nn > big)
			big = kk * nn;
		if (mm * nn > big)
			big = mm * nn;
		if (__builtin_mul_overflow(big, (int64_t)bb, &bytes) ||
		    __builtin_mul_overflow(bytes, (int64_t)8, &bytes))
			return ROCMD_EINVAL;
	}
	*m = mm;
	*n = nn;
	*k = kk;
	*batch = bb;
	return 0;
}

int
gemm_problem_parse(const char *key, struct gemm_problem *p)
{
	char dt[8], tr[3];
	const char *rest;
	enum gemm_dtype d;
	int64_t m, n, k, b;
	const char *c1 = strchr(key, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (c1 == NULL || c2 == NULL || c1 - key >= (long)sizeof(dt) || c2 - c1 != 3)
		return ROCMD_EINVAL;
	memcpy(dt, key, c1 - key);
	dt[c1 - key] = '\0';
	tr[0] = c1[1];
	tr[1] = c1[2];
	tr[2] = '\0';
	rest = c2 + 1;
	if (gemm_dtype_parse(dt, &d) < 0 || (tr[0] != 'N' && tr[0] != 'T') ||
	    (tr[1] != 'N' && tr[1] != 'T') || gemm_shape_parse(rest, &m, &n, &k, &b) < 0)
		return ROCMD_EINVAL;
	gemm_problem_init(p, d, tr[0] == 'N' ? GEMM_N : GEMM_T, tr[1] == 'N' ? GEMM_N : GEMM_T, m,
			  n, k, b);
	return 0;
}

static uint32_t
f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

uint16_t
gemm_f32_to_f16(float f)
{
	uint32_t x = f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t exp = (x >> 23) & 0xff;
	uint32_t mant = x & 0x7fffff;
	int e;

	if (exp == 0xff) /* Inf or NaN; NaN stays a (quiet) NaN */
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
	e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		/* Subnormal half or zero: shift the full mantissa, round to nearest even. */
		uint32_t m, shift, half, rest, r;

		if (e < -10)
			return (uint16_t)sign;
		m = mant | 0x800000;
		shift = (uint32_t)(14 - e);
		r = m >> shift;
		rest = m & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rest > half || (rest == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = ((uint32_t)e << 10) | (mant >> 13);
		uint32_t rest = mant & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++; /* may carry into the exponent, up to Inf: correct */
		return (uint16_t)(sign | r);
	}
}

float
gemm_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff;

	if (exp == 0x1f)
		return bits_f32(sign | 0x7f800000 | (mant << 13));
	if (exp == 0) {
		float v = ldexpf((float)mant, -24);

		return sign ? -v : v;
	}
	return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t
gemm_f32_to_bf16(float f)
{
	uint32_t x = f32_bits(f);

	if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff))
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

float
gemm_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

float
gemm_load(enum gemm_dtype dt, const void *buf, int64_t i)
{
	switch (dt) {
	case GEMM_FP16:
		return gemm_f16_to_f32(((const uint16_t *)buf)[i]);
	case GEMM_BF16:
		return gemm_bf16_to_f32(((const uint16_t *)buf)[i]);
	default:
		return ((const float *)buf)[i];
	}
}

void
gemm_store(enum gemm_dtype dt, void *buf, int64_t i, float v)
{
	switch (dt) {
	case GEMM_FP16:
		((uint16_t *)buf)[i] = gemm_f32_to_f16(v);
		break;
	case GEMM_BF16:
		((uint16_t *)buf)[i] = gemm_f32_to_bf16(v);
		break;
	default:
		((float *)buf)[i] = v;
	}
}

/* splitmix64: small, seedable, good enough for test data. */
static uint64_t
mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void
gemm_fill_random(enum gemm_dtype dt, void *buf, int64_t n, uint64_t seed)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
	int64_t i;

	for (i = 0; i < n; i++) {
		uint64_t r = mix64(&s);
		/* 0.1 + 0.9 * u, u in [0,1): magnitudes stay far from 0 in every dtype. */
		float mag = 0.1f + 0.9f * (float)((r >> 11) & 0xffffff) / 16777216.0f;

		gemm_store(dt, buf, i, (r & 1) ? -mag : mag);
	}
}

static int64_t
idx_a(const struct gemm_problem *p, int64_t bi, int64_t i, int64_t l)
{
	return bi * p->stride_a + (p->ta == GEMM_N ? i + l * p->lda : l + i * p->lda);
}

static int64_t
idx_b(const struct gemm_problem *p, int64_t bi, int64_t l, int64_t j)
{
	return bi * p->stride_b + (p->tb == GEMM_N ? l + j * p->ldb : j + l * p->ldb);
}

double
gemm_ref_entry(const struct gemm_problem *p, const void *a, const void *b, const void *c_in,
	       int64_t bi, int64_t i, int64_t j, double *scale)
{
	double acc = 0.0, mag = 0.0, c0;
	int64_t l;

	for (l = 0; l < p->k; l++) {
		double t = (double)gemm_load(p->dtype, a, idx_a(p, bi, i, l)) *
			   (double)gemm_load(p->dtype, b, idx_b(p, bi, l, j));

		acc += t;
		mag += fabs(t);
	}
	c0 = p->beta != 0.0f ? gemm_load(p->dtype, c_in, bi * p->stride_c + i + j * p->ldc) : 0.0;
	if (scale != NULL)
		*scale = fabs((double)p->alpha) * mag + fabs((double)p->beta * c0);
	return (double)p->alpha * acc + (double)p->beta * c0;
}

/*
 * The tolerance: fp32 accumulation of K products may lose about log2(K) + a
 * few units of 2^-24 relative to the sum of the terms' magnitudes (pairwise,
 * blocked and split-K orders all stay within it; TF32 or fp16 accumulation do
 * not), then the store rounds once more to the output dtype.
 */
int
gemm_within_tol(const struct gemm_problem *p, double got, double ref, double scale)
{
	return gemm_within_tol_of(p, got, ref, scale, 1.0);
}

int
gemm_within_tol_of(const struct gemm_problem *p, double got, double ref, double scale,
		   double factor)
{
	double u_acc = ldexp(1.0, -24);
	double u_out = p->dtype == GEMM_FP32 ? ldexp(1.0, -24)
		       : p->dtype == GEMM_FP16 ? ldexp(1.0, -11)
					       : ldexp(1.0, -8);
	double tol = factor * (u_acc * (8.0 + log2((double)p->k + 1.0)) * scale +
			       2.0 * u_out * fabs(ref)) +
		     1e-30;

	if (!isfinite(got))
		return 0;
	/* A reference beyond the dtype's range can only be matched by Inf: rule it bad. */
	return fabs(got - ref) <= tol;
}

int64_t
gemm_check(const struct gemm_problem *p, const void *a, const void *b, const void *c_in,
	   const void *c_out, double full_limit, int samples, uint64_t seed, double *worst)
{
	int64_t bad = 0, bi;
	double w = 0.0;
	uint64_t s = seed + 7;
	int full = (double)p->m * (double)p->n * (double)p->k * (double)p->batch <= full_limit;

	for (bi = 0; bi < p->batch; bi++) {
		int64_t cnt = full ? p->m * p->n : samples + 4, t;

		for (t = 0; t < cnt; t++) {
			int64_t i, j;
			double ref, scale, got;

			if (full) {
				i = t % p->m;
				j = t / p->m;
			} else if (t < 4) {
				i = (t & 1) ? p->m - 1 : 0;
				j = (t & 2) ? p->n - 1 : 0;
			} else {
				i = (int64_t)(mix64(&s) % (uint64_t)p->m);
				j = (int64_t)(mix64(&s) % (uint64_t)p->n);
			}
			ref = gemm_ref_entry(p, a, b, c_in, bi, i, j, &scale);
			got = gemm_load(p->dtype, c_out, bi * p->stride_c + i + j * p->ldc);
			if (!gemm_within_tol(p, got, ref, scale)) {
				double e = isfinite(got) ? fabs(got - ref) : INFINITY;

				bad++;
				if (e > w)
					w = e;
			}
		}
	}
	if (worst != NULL)
		*worst = w;
	return bad;
}

void
gemm_host_reference(const struct gemm_problem *p, const void *a, const void *b, void *c)
{
	int64_t bi, i, j;

	for (bi = 0; bi < p->batch; bi++)
		for (j = 0; j < p->n; j++)
			for (i = 0; i < p->m; i++) {
				double v = gemm_ref_entry(p, a, b, c, bi, i, j, NULL);

				gemm_store(p->dtype, c, bi * p->stride_c + i + j * p->ldc,
					   (float)v);
			}
}
