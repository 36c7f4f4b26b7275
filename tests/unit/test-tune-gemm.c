/* Unit tests for the GEMM helpers and the CPU backend: fp16/bf16 conversion,
 * and the CPU GEMM against the double reference for every transpose, dtype,
 * leading dimension and batch, over many tuning configurations. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/gemm.h"

static void
test_half_conversion(void **state)
{
	assert_int_equal(gemm_f32_to_f16(1.0f), 0x3c00);
	assert_int_equal(gemm_f32_to_f16(-2.0f), 0xc000);
	assert_int_equal(gemm_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(gemm_f32_to_f16(1e6f), 0x7c00);
	assert_int_equal(gemm_f32_to_f16(0.0f), 0x0000);
	assert_true(gemm_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
	assert_int_equal(gemm_f32_to_f16(ldexpf(1.0f, -24)), 0x0001);
	assert_true(isnan(gemm_f16_to_f32(gemm_f32_to_f16(NAN))));
	assert_int_equal(gemm_f32_to_bf16(1.0f), 0x3f80);
	assert_true(isnan(gemm_bf16_to_f32(gemm_f32_to_bf16(NAN))));
	/* Round to nearest even: 1 + 2^-11 is a tie between 1 and 1 + 2^-10. */
	assert_int_equal(gemm_f32_to_f16(1.0f + ldexpf(1.0f, -11)), 0x3c00);
	assert_int_equal(gemm_f32_to_f16(1.0f + 3 * ldexpf(1.0f, -11)), 0x3c02);
	/* Every half round-trips exactly. */
	for (uint32_t h = 0; h < 0x10000; h++) {
		float f = gemm_f16_to_f32((uint16_t)h);

		if (!isnan(f))
			assert_int_equal(gemm_f32_to_f16(f), h);
	}
}

static void
test_random_never_zero(void **state)
{
	float buf[4096];
	int i;

	gemm_fill_random(GEMM_FP32, buf, 4096, 42);
	for (i = 0; i < 4096; i++)
		assert_true(fabsf(buf[i]) >= 0.1f && fabsf(buf[i]) <= 1.0f);
}

static void
test_problem_keys(void **state)
{
	struct gemm_problem p, q;
	char key[64];

	gemm_problem_init(&p, GEMM_BF16, GEMM_T, GEMM_N, 100, 200, 300, 4);
	assert_int_equal(gemm_problem_key(&p, key, sizeof(key)), 0);
	assert_string_equal(key, "bf16:TN:100x200x300:b4");
	assert_int_equal(gemm_problem_parse(key, &q), 0);
	assert_int_equal(q.m, 100);
	assert_int_equal(q.k, 300);
	assert_int_equal(q.batch, 4);
	assert_int_equal(q.ta, GEMM_T);
	assert_int_equal(q.lda, 300);
	assert_int_not_equal(gemm_problem_parse("fp32:XN:1x1x1:b1", &q), 0);
}

/* Runs the CPU backend with configuration KEY on P and checks every entry. */
static void
run_and_check(struct backend_ctx *ctx, const struct space_def *s, const struct space_point *pt,
	      const struct gemm_problem *p, uint64_t seed)
{
	const struct backend_ops *ops = &backend_cpu_ops;
	size_t esz = gemm_dtype_size(p->dtype);
	size_t sa = gemm_elems_a(p) * esz, sb = gemm_elems_b(p) * esz, sc = gemm_elems_c(p) * esz;
	void *a = malloc(sa), *b = malloc(sb), *c0 = malloc(sc), *c = malloc(sc);
	char store[SPACE_MAX_PARAMS][40], log[256], key[SPACE_KEY_MAX];
	const char *defs[SPACE_MAX_PARAMS];
	struct backend_module *mod = NULL;
	struct tune_config cfg;
	struct gemm_bufs bufs;
	size_t len;
	const char *src = ops->kernel_source(ctx, &len);
	int nd = space_defines(s, pt, store, defs);
	int64_t bad;

	assert_non_null(a);
	assert_non_null(c);
	gemm_fill_random(p->dtype, a, gemm_elems_a(p), seed);
	gemm_fill_random(p->dtype, b, gemm_elems_b(p), seed + 1);
	gemm_fill_random(p->dtype, c0, gemm_elems_c(p), seed + 2);
	memcpy(c, c0, sc);
	assert_int_equal(ops->compile(ctx, src, len, defs, nd, &mod, log, sizeof(log)), 0);
	space_config(s, pt, &cfg);
	bufs.a = (uint64_t)(uintptr_t)a;
	bufs.b = (uint64_t)(uintptr_t)b;
	bufs.c = (uint64_t)(uintptr_t)c;
	assert_int_equal(ops->gemm(ctx, mod, &cfg, p, &bufs), 0);
	bad = gemm_check(p, a, b, c0, c, 1e12, 0, 1, NULL);
	if (seed % 7 == 0) {
		/* The backend's reference GEMM passes the same check. */
		void *r = malloc(sc);

		memcpy(r, c0, sc);
		bufs.c = (uint64_t)(uintptr_t)r;
		assert_int_equal(ops->gemm_reference(ctx, p, &bufs), 0);
		assert_int_equal(gemm_check(p, a, b, c0, r, 1e12, 0, 1, NULL), 0);
		free(r);
	}
	if (bad != 0) {
		char pk[64];

		space_key(s, pt, key, sizeof(key));
		gemm_problem_key(p, pk, sizeof(pk));
		print_error("%s with %s: %lld wrong entries\n", pk, key, (long long)bad);
	}
	assert_int_equal(bad, 0);
	ops->module_unload(ctx, mod);
	free(a);
	free(b);
	free(c0);
	free(c);
}

static void
test_cpu_gemm_all_variants(void **state)
{
	const struct backend_ops *ops = &backend_cpu_ops;
	struct backend_ctx *ctx;
	struct backend_device_info info;
	const struct space_def *s;
	char why[256];
	uint64_t seed = 5, rnd = 12345;
	int dt, ta, tb, lay, cfgi;

	assert_int_equal(ops->open(0, &ctx, &info, why, sizeof(why)), 0);
	s = space_cpu();
	for (dt = 0; dt < GEMM_DTYPE_COUNT; dt++)
		for (ta = 0; ta < 2; ta++)
			for (tb = 0; tb < 2; tb++)
				for (lay = 0; lay < 2; lay++) {
					struct gemm_problem p;

					/* Odd sizes so every edge path runs. */
					gemm_problem_init(&p, (enum gemm_dtype)dt,
							  (enum gemm_trans)ta, (enum gemm_trans)tb,
							  37, 29, 41, lay ? 3 : 1);
					if (lay) {
						/* Padded leading dimensions and gaps between batch items. */
						p.lda += 5;
						p.ldb += 3;
						p.ldc += 7;
						p.stride_a = p.lda * gemm_cols_a(&p) + 11;
						p.stride_b = p.ldb * gemm_cols_b(&p) + 13;
						p.stride_c = p.ldc * p.n + 17;
						p.alpha = -0.75f;
						p.beta = 0.5f;
					}
					for (cfgi = 0; cfgi < 6; cfgi++) {
						struct space_point pt;

						if (cfgi == 0) {
							space_point_default(s, &pt);
						} else {
							/* Random valid points, small blocks included. */
							do {
								rnd = rnd * 6364136223846793005ULL +
								      1442695040888963407ULL;
								space_point_from_index(
									s, (rnd >> 20) % space_size(s),
									&pt);
							} while (!space_valid(s, &pt, NULL, NULL, NULL,
									      0) ||
								 s->params[7].values[pt.idx[7]] > 2);
						}
						run_and_check(ctx, s, &pt, &p, seed++);
					}
				}
	ops->close(ctx);
}

static void
test_cpu_compile_rejects(void **state)
{
	const struct backend_ops *ops = &backend_cpu_ops;
	struct backend_ctx *ctx;
	struct backend_device_info info;
	struct backend_module *mod = NULL;
	const char *bad[] = {"MT0=64", "NOPE=1"};
	char why[256], log[256];
	size_t len;
	const char *src;

	assert_int_equal(ops->open(0, &ctx, &info, why, sizeof(why)), 0);
	assert_true(info.compute_units >= 1);
	assert_string_equal(info.backend, "cpu");
	src = ops->kernel_source(ctx, &len);
	assert_int_equal(ops->compile(ctx, src, len, bad, 2, &mod, log, sizeof(log)), ROCMD_EINVAL);
	assert_null(mod);
	ops->close(ctx);
	assert_int_equal(ops->open(1, &ctx, &info, why, sizeof(why)), ROCMD_EUNSUPPORTED);
	assert_null(ctx);
	assert_non_null(strstr(why, "not available"));
}

/* Rounds to TF32 (10 explicit mantissa bits), as a tensor core would. */
static float
to_tf32(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u = (u + 0x1000) & ~0x1fffu;
	memcpy(&f, &u, 4);
	return f;
}

/*
 * The tolerance separates what is allowed from what is not: fp32 accumulation
 * in the worst (sequential) order passes; TF32 inputs, fp16 accumulation,
 * NaN and Inf do not.
 */
static void
test_tolerance_discriminates(void **state)
{
	enum { M = 8, N = 8, K = 4096 };
	struct gemm_problem p, ph;
	float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
	uint16_t *ah = malloc(2 * M * K), *bh = malloc(2 * K * N);
	int i, j, l, fp32_bad = 0, tf32_bad = 0, half_bad = 0;

	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, M, N, K, 1);
	gemm_problem_init(&ph, GEMM_FP16, GEMM_N, GEMM_N, M, N, 1024, 1);
	gemm_fill_random(GEMM_FP32, a, M * K, 3);
	gemm_fill_random(GEMM_FP32, b, K * N, 4);
	gemm_fill_random(GEMM_FP16, ah, M * 1024, 5);
	gemm_fill_random(GEMM_FP16, bh, 1024 * N, 6);
	for (j = 0; j < N; j++) {
		for (i = 0; i < M; i++) {
			double scale, ref = gemm_ref_entry(&p, a, b, NULL, 0, i, j, &scale);
			double sh, refh = gemm_ref_entry(&ph, ah, bh, NULL, 0, i, j, &sh);
			float s32 = 0.0f, stf = 0.0f;
			uint16_t s16 = 0;

			for (l = 0; l < K; l++) {
				s32 += a[i + l * M] * b[l + j * K];
				stf += to_tf32(a[i + l * M]) * to_tf32(b[l + j * K]);
			}
			for (l = 0; l < 1024; l++)
				s16 = gemm_f32_to_f16(gemm_f16_to_f32(s16) +
						      gemm_f16_to_f32(ah[i + l * M]) *
							      gemm_f16_to_f32(bh[l + j * 1024]));
			fp32_bad += !gemm_within_tol(&p, s32, ref, scale);
			tf32_bad += !gemm_within_tol(&p, stf, ref, scale);
			half_bad += !gemm_within_tol(&ph, gemm_f16_to_f32(s16), refh, sh);
		}
	}
	print_message("bad: fp32 %d, tf32 %d, fp16-accumulate %d of %d\n", fp32_bad, tf32_bad, half_bad, M * N);
	assert_int_equal(fp32_bad, 0);
	assert_true(tf32_bad > M * N / 2);
	assert_true(half_bad > M * N / 2);
	assert_false(gemm_within_tol(&p, NAN, 1.0, 1.0));
	assert_false(gemm_within_tol(&p, INFINITY, INFINITY, 1.0));
	assert_false(gemm_within_tol(&p, -INFINITY, 1.0, 1e300));
	free(a);
	free(b);
	free(ah);
	free(bh);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_half_conversion),
		cmocka_unit_test(test_random_never_zero),
		cmocka_unit_test(test_problem_keys),
		cmocka_unit_test(test_cpu_gemm_all_variants),
		cmocka_unit_test(test_cpu_compile_rejects),
		cmocka_unit_test(test_tolerance_discriminates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
