/*
 * The readers of the vendors' GEMM logs (kernels/vendor-log.h): rocblas-bench
 * lines of every GEMM function rocBLAS logs, hipblaslt-bench lines, PyTorch
 * TunableOp's CSV in its old and new signatures; equal calls counted
 * together, and what is not tunable here skipped with its reason. And the
 * override files (kernels/vendor-override.h): written in rocBLAS's and
 * hipBLASLt's formats and read back with their readers' rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernels/vendor-log.h"
#include "kernels/vendor-override.h"

#include <stdlib.h>

static const struct vendor_shape *
find(const struct vendor_shapes *s, const char *library, int64_t m, int64_t n, int64_t k)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].library, library) && s->v[i].p.m == m && s->v[i].p.n == n &&
		    s->v[i].p.k == k)
			return &s->v[i];
	return NULL;
}

static void
test_rocblas_bench(void **state)
{
	static const char log[] =
	    "./rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 4096 -n 16 -k 4096 --alpha 1 "
	    "--a_type f16_r --lda 4096 --b_type f16_r --ldb 4096 --beta 0 --c_type f16_r --ldc 4096 "
	    "--d_type f16_r --ldd 4096 --compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
	    "./rocblas-bench -f gemm_ex --transposeA T --transposeB N -m 4096 -n 16 -k 4096 --alpha 1 "
	    "--a_type f16_r --lda 4096 --b_type f16_r --ldb 4096 --beta 0 --c_type f16_r --ldc 4096 "
	    "--d_type f16_r --ldd 4096 --compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
	    "./rocblas-bench --api 1 -f gemm -r f32_r --transposeA N --transposeB N -m 96 -n 96 -k 96 "
	    "--alpha 0.5 --lda 128 --ldb 96 --beta 1 --ldc 96\n"
	    "./rocblas-bench -f gemm_strided_batched_ex --transposeA N --transposeB T -m 64 -n 64 -k "
	    "32 --alpha 1 --a_type bf16_r --lda 64 --stride_a 2048 --b_type bf16_r --ldb 64 "
	    "--stride_b 2048 --beta 0 --c_type bf16_r --ldc 64 --stride_c 4096 --d_type bf16_r --ldd "
	    "64 --stride_d 4096 --batch_count 12 --compute_type f32_r --algo 0 --solution_index 0 "
	    "--flags 0\n"
	    /* not tunable here, each for its own reason */
	    "./rocblas-bench -f gemm -r f16_r --transposeA N --transposeB N -m 8 -n 8 -k 8 --alpha 1 "
	    "--lda 8 --ldb 8 --beta 0 --ldc 8\n"
	    "./rocblas-bench -f gemm_ex --transposeA N --transposeB N -m 8 -n 8 -k 8 --alpha 1 "
	    "--a_type f16_r --lda 8 --b_type f16_r --ldb 8 --beta 0 --c_type f32_r --ldc 8 --d_type "
	    "f32_r --ldd 8 --compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
	    "./rocblas-bench -f gemm_strided_batched_ex --transposeA N --transposeB N -m 8 -n 8 -k 8 "
	    "--alpha 1 --a_type f32_r --lda 8 --stride_a 64 --b_type f32_r --ldb 8 --stride_b 0 "
	    "--beta 0 --c_type f32_r --ldc 8 --stride_c 64 --d_type f32_r --ldd 8 --stride_d 64 "
	    "--batch_count 3 --compute_type f32_r --algo 0 --solution_index 0 --flags 0\n"
	    "./rocblas-bench -f gemm -r f32_c --transposeA C --transposeB N -m 8 -n 8 -k 8\n"
	    "./rocblas-bench -f trsm -r f32_r --side L\n"
	    "rocblas info: nothing here\n";
	struct vendor_shapes s;
	const struct vendor_shape *v;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(vendor_log_parse(&s, log, strlen(log)), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.lines, 8); /* the trsm line is no GEMM */
	assert_int_equal(s.skipped, 4);
	assert_non_null(strstr(s.skip_why, "hgemm"));
	v = find(&s, "rocblas", 4096, 16, 4096);
	assert_non_null(v);
	assert_int_equal(v->calls, 2);
	assert_int_equal(v->p.dtype, GEMM_FP16);
	assert_int_equal(v->p.ta, GEMM_T);
	assert_int_equal(v->p.tb, GEMM_N);
	assert_int_equal(v->p.lda, 4096);
	assert_int_equal(v->p.ldc, 4096);
	v = find(&s, "rocblas", 96, 96, 96);
	assert_non_null(v);
	assert_int_equal(v->p.dtype, GEMM_FP32);
	assert_int_equal(v->p.lda, 128);
	assert_true(v->p.alpha == 0.5f && v->p.beta == 1.0f);
	v = find(&s, "rocblas", 64, 64, 32);
	assert_non_null(v);
	assert_int_equal(v->p.dtype, GEMM_BF16);
	assert_int_equal(v->p.batch, 12);
	assert_int_equal(v->p.stride_b, 2048);
	assert_int_equal(v->p.stride_c, 4096);
	vendor_shapes_free(&s);
}

static void
test_hipblaslt_bench(void **state)
{
	static const char log[] =
	    "hipblaslt-bench --api_method c -m 1024 -n 512 -k 1024 --lda 1024 --ldb 1024 --ldc 1024 "
	    "--ldd 1024  --stride_a 0 --stride_b 0 --stride_c 0 --stride_d 0  --alpha 1.000000 "
	    "--beta 1.000000 --transA N --transB N --batch_count 1  --a_type f16_r --b_type f16_r "
	    "--c_type f16_r --d_type f16_r --scale_type f32_r --bias_type f32_r   --compute_type "
	    "f32_r --algo_method index --solution_index 56073\n"
	    "[2024-10-01 12:00:00] hipblaslt-bench --api_method c -m 1024 -n 512 -k 1024 --lda 1024 "
	    "--ldb 1024 --ldc 1024 --ldd 1024 --alpha 1.0 --beta 1.0 --transA N --transB N "
	    "--batch_count 1 --a_type f16_r --b_type f16_r --c_type f16_r --d_type f16_r "
	    "--compute_type f32_r\n"
	    "hipblaslt-bench --api_method c -m 64 -n 64 -k 64 --lda 64 --ldb 64 --ldc 64 --ldd 64 "
	    "--alpha 1 --beta 0 --transA N --transB N --batch_count 1 --a_type f32_r --b_type f32_r "
	    "--c_type f32_r --d_type f32_r --compute_type xf32_r\n";
	struct vendor_shapes s;
	const struct vendor_shape *v;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(vendor_log_parse(&s, log, strlen(log)), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.skipped, 1); /* TF32 accumulation */
	v = find(&s, "hipblaslt", 1024, 512, 1024);
	assert_non_null(v);
	assert_int_equal(v->calls, 2);
	assert_true(v->p.beta == 1.0f);
	assert_string_equal(v->source, "hipblaslt-bench");
	vendor_shapes_free(&s);
}

static void
test_tunableop(void **state)
{
	static const char csv[] =
	    "Validator,PT_VERSION,2.5.0\n"
	    "Validator,ROCM_VERSION,6.2.41133-dd7f95766\n"
	    "GemmTunableOp_Half_TN,tn_4096_16_4096_ld_4096_4096_4096,Gemm_Hipblaslt_1219,0.0152\n"
	    "GemmTunableOp_float_NT,nt_25088_4096_64,Gemm_Rocblas_1216,1.262\n"
	    "GemmStridedBatchedTunableOp_BFloat16_NN,nn_64_64_128_B_32_ld_64_128_64,Default,0.01\n"
	    "GemmTunableOp_double_NN,nn_8_8_8,Gemm_Rocblas_1,0.1\n"
	    "GemmAndBiasTunableOp_Half_TN,tn_64_64_64_ld_64_64_64,Gemm_Hipblaslt_3,0.01\n";
	struct vendor_shapes s;
	const struct vendor_shape *v;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(vendor_log_parse(&s, csv, strlen(csv)), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.skipped, 2);
	v = find(&s, "hipblaslt", 4096, 16, 4096);
	assert_non_null(v);
	assert_int_equal(v->p.dtype, GEMM_FP16);
	assert_int_equal(v->p.ta, GEMM_T);
	assert_true(v->ms > 0.015 && v->ms < 0.016);
	v = find(&s, "rocblas", 25088, 4096, 64);
	assert_non_null(v);
	assert_int_equal(v->p.lda, 25088); /* no ld in the old signature: tight */
	v = find(&s, "", 64, 64, 128);
	assert_non_null(v);
	assert_int_equal(v->p.batch, 32);
	assert_int_equal(v->p.ldb, 128);
	assert_int_equal(v->p.stride_a, 64 * 128);
	vendor_shapes_free(&s);
}

static void
entry(struct vendor_override_entry *e, enum gemm_dtype dt, int64_t m, int64_t n, int64_t k,
      int64_t batch, int64_t index)
{
	memset(e, 0, sizeof(*e));
	gemm_problem_init(&e->p, dt, GEMM_T, GEMM_N, m, n, k, batch);
	e->index = index;
	e->ms = 0.25;
}

static const struct vendor_override_id id = {
    .library = "librocblas.so.4",
    .digest = "4f1c0000000000000000000000000000000000000000000000000000000000aa",
    .stat = "0123456789abcdef",
    .arch = "gfx1103",
    .compute_units = 12,
    .driver = "HIP driver 60241134",
    .written_ms = 1764626400000,
};

/* librocmd-gemm's own log: a line at a shape's first call, one with the calls
 * since; a bad count is skipped with its reason, a line's text is never a
 * rocBLAS shape. */
static void
test_rocmd_gemm(void **state)
{
	static const char log[] =
	    "rocmd-gemm -f gemm_ex --transposeA T --transposeB N -m 4096 -n 1 -k 4096 --alpha 1 "
	    "--lda 4096 --ldb 4096 --beta 0 --ldc 4096 --a_type bf16_r --compute_type f32_r "
	    "--calls 1\n"
	    "rocmd-gemm -f gemm_ex --transposeA T --transposeB N -m 4096 -n 1 -k 4096 --alpha 1 "
	    "--lda 4096 --ldb 4096 --beta 0 --ldc 4096 --a_type bf16_r --compute_type f32_r "
	    "--calls 41\n"
	    "rocmd-gemm -f gemm_ex --transposeA N --transposeB N -m 8 -n 8 -k 8 --alpha 1 --lda 8 "
	    "--ldb 8 --beta 0 --ldc 8 --a_type f32_r --compute_type f32_r --calls -3\n";
	struct vendor_shapes s;
	const struct vendor_shape *v;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(vendor_log_parse(&s, log, sizeof(log) - 1), 0);
	assert_int_equal(s.lines, 3);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.skipped, 1);
	assert_non_null(strstr(s.skip_why, "call count"));
	v = find(&s, "rocmd-gemm", 4096, 1, 4096);
	assert_non_null(v);
	assert_string_equal(v->source, "rocmd-gemm");
	assert_int_equal(v->calls, 42);
	assert_int_equal(v->p.dtype, GEMM_BF16);
	assert_int_equal(v->p.ta, GEMM_T);
	assert_null(find(&s, "rocblas", 4096, 1, 4096));
	vendor_shapes_free(&s);
}

static void
test_override_rocblas(void **state)
{
	struct vendor_override_entry in[3], *out = NULL;
	struct vendor_override_id got;
	size_t len, n;
	char *text;

	(void)state;
	entry(&in[0], GEMM_FP16, 4096, 16, 4096, 1, 5);
	in[0].p.lda = 4100; /* as the program called it */
	entry(&in[1], GEMM_BF16, 64, 64, 32, 12, 3);
	in[1].p.stride_b = 4096; /* not tight: the 18-field section */
	entry(&in[2], GEMM_FP32, 96, 96, 96, 1, 2);
	in[2].p.beta = 1.0f;
	assert_int_equal(vendor_override_write(1, &id, in, 3, &text, &len), 0);
	/* rocblas-gemm-tune's two sections, each after its header */
	assert_non_null(strstr(text, "transA,transB,M,N,batch_count,K,alpha,beta,lda,ldb,ldc,"
	                             "input_type,output_type,compute_type,solution_index\n"));
	assert_non_null(strstr(text, "T,N,4096,16,1,4096,1,0,4100,4096,4096,f16_r,f16_r,f32_r,5\n"));
	assert_non_null(strstr(text, "T,N,64,64,12,32,1,0,32,32,64,2048,4096,4096,bf16_r,bf16_r,"
	                             "f32_r,3\n"));
	assert_int_equal(vendor_override_read(1, text, len, &out, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].index, 5);
	assert_int_equal(out[0].p.lda, 4100);
	assert_int_equal(out[0].p.dtype, GEMM_FP16);
	assert_int_equal(out[2].p.stride_b, 4096); /* order: gemm_ex, then batched */
	assert_int_equal(out[2].p.batch, 12);
	assert_true(out[1].p.beta == 1.0f);
	assert_int_equal(vendor_override_identity(text, len, &got), 0);
	assert_string_equal(got.digest, id.digest);
	assert_string_equal(got.driver, "HIP_driver_60241134");
	assert_int_equal(got.compute_units, 12);
	free(out);
	free(text);
	/* Withdrawn: the identity alone, which the reader skips. */
	assert_int_equal(vendor_override_write(1, &id, NULL, 0, &text, &len), 0);
	assert_int_equal(vendor_override_read(1, text, len, &out, &n), 0);
	assert_int_equal(n, 0);
	free(text);
}

static void
test_override_hipblaslt(void **state)
{
	struct vendor_override_entry in[3], *out = NULL;
	size_t len, n;
	char *text, *line2;
	int commas = 0;

	(void)state;
	entry(&in[0], GEMM_FP16, 4096, 16, 4096, 1, 1223);
	entry(&in[1], GEMM_FP16, 4096, 16, 4096, 1, 1241); /* the same problem to hipBLASLt */
	in[1].p.lda = 8192;
	entry(&in[2], GEMM_FP32, 96, 96, 96, 1, 1204);
	assert_int_equal(vendor_override_write(0, &id, in, 3, &text, &len), 0);
	line2 = strchr(text, '\n') + 1;
	for (char *p = line2; *p != '\n'; p++)
		commas += *p == ',';
	assert_int_equal(commas, 36); /* 37 fields */
	assert_int_equal(vendor_override_read(0, text, len, &out, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].index, 1223);
	assert_int_equal(out[0].p.m, 4096);
	assert_int_equal(out[1].index, 1204);
	assert_int_equal(out[1].p.dtype, GEMM_FP32);
	free(out);
	free(text);
	/* hipBLASLt's rules: leading blanks, "Git Version" lines, 37 fields. */
	{
		static const char t[] =
		    "Git Version: 1.2.3,abc\n"
		    "   N,N,0,1,64,64,64,1,64,0,0,64,0,64,0,64,0,f16_r,f16_r,f16_r,f16_r,f32_r,0,0,0,0,0,"
		    "none,0,f32_r,0,1,2,3,77,gfx1103,12\n"
		    "N,N,0,1,64,64,64,1,64,0,0,64,0,64,0,64,0,f16_r,f16_r,f16_r,f16_r,f32_r,0,0,0,0,0,"
		    "none,0,f32_r,0,1,2,3,0,gfx1103,12\n"
		    "N,N,1,64,64,64\n";

		assert_int_equal(vendor_override_read(0, t, sizeof(t) - 1, &out, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(out[0].index, 77);
		free(out);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rocblas_bench),
	    cmocka_unit_test(test_hipblaslt_bench),
	    cmocka_unit_test(test_tunableop),
	    cmocka_unit_test(test_rocmd_gemm),
	    cmocka_unit_test(test_override_rocblas),
	    cmocka_unit_test(test_override_hipblaslt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
