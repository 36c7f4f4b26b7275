/*
 * The public C API (include/rocmd/rocmd-gemm.h, librocmd-gemm) end to end:
 * a real tuning run on the backend fills a results store, the tuned library
 * is built from it (code objects compiled where the backend has them),
 * written to a folder and opened through the shared library; then GEMMs of
 * tuned sizes, of sizes served by the nearest tuned shape, and of untuned
 * sizes (other transposes and dtypes) run through the API and are checked
 * entry by entry against the double-precision reference, on random inputs
 * that are never zero, with padded leading dimensions and alpha/beta.
 *
 * Built twice: for the CPU backend (tests/unit, runs in CI) and for CUDA
 * (tests/gpu, ROCMD_TEST_BACKEND="cuda"), which exits 77 with the reason
 * when no CUDA device is available.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/tune.h"
#include "kernels/tunedlib.h"
#include "rocmd/rocmd-gemm.h"

#ifndef ROCMD_TEST_BACKEND
#define ROCMD_TEST_BACKEND "cpu"
#endif

struct shape {
	enum gemm_dtype dt;
	enum gemm_trans ta, tb;
	int64_t m, n, k;
};

/* Tuned for real at the start (small budgets: the point is the path, not the speed). */
static const struct shape tuned[] = {
    {GEMM_FP32, GEMM_N, GEMM_N, 96, 80, 64},
    {GEMM_FP16, GEMM_N, GEMM_T, 64, 48, 40},
    {GEMM_BF16, GEMM_T, GEMM_N, 72, 56, 48},
};

static char libdir[256];
static struct tunedlib *built; /* what was written, for the expectations */
static struct tune_key lib_id;

/* A CPU configuration valid for 300^3 but not below M = 257 (MT0 = 512). */
#define CPU_BIG "MT0=512;MT1=256;DU=128;TT0=8;TT1=4;UNROLL=4;VW=4;THREADS=1;PAR=0;PGR=0"
#define CPU_ODD1 "MT0=32;MT1=64;DU=16;TT0=4;TT1=2;UNROLL=2;VW=1;THREADS=1;PAR=0;PGR=1"
#define CPU_ODD2 "MT0=32;MT1=32;DU=16;TT0=16;TT1=8;UNROLL=8;VW=4;THREADS=1;PAR=0;PGR=0"

static int
tune_one(const struct backend_ops *ops, struct tune_store *st, const struct shape *s, int budget,
         char *why, size_t whylen)
{
	struct tune_measure_opts mo;
	struct tune_evaluator *ev = NULL;
	struct backend_device_info dev;
	struct space_def space;
	struct gemm_problem p;
	struct tune_key key;
	struct tune_opts o;
	struct tune_summary sum;
	char hash[17];
	int err;

	gemm_problem_init(&p, s->dt, s->ta, s->tb, s->m, s->n, s->k, 1);
	memset(&mo, 0, sizeof(mo));
	mo.runs = 3;
	mo.warmup_ms = 2;
	mo.isolate = -1;
	err = tune_evaluator_open(ops, 0, &p, &mo, &ev, &dev, &space, hash, why, whylen);
	if (err < 0)
		return err;
	tune_key_init(&key, &dev, hash, &p);
	memset(&o, 0, sizeof(o));
	o.strategy = "random";
	o.budget = budget;
	o.topk = 2;
	o.retime_rounds = 1;
	o.store = st;
	err = tune_run(ev, &key, &space, &p, &dev, &o, &sum, why, whylen);
	tune_evaluator_close(ev);
	lib_id = key;
	return err;
}

static int
setup_library(void **state)
{
	const struct backend_ops *ops = backend_find(ROCMD_TEST_BACKEND);
	struct tune_store st;
	char why[1024] = "";
	size_t i;

	snprintf(libdir, sizeof(libdir), "/tmp/test-gemm-api-XXXXXX");
	if (ops == NULL || mkdtemp(libdir) == NULL || tune_store_mem_new(&st) < 0)
		return -1;
	for (i = 0; i < sizeof(tuned) / sizeof(tuned[0]); i++) {
		if (tune_one(ops, &st, &tuned[i], 5, why, sizeof(why)) < 0) {
			fprintf(stderr, "tuning failed: %s\n", why);
			return -1;
		}
	}
	if (tunedlib_from_store(&st, &lib_id, &built, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s\n", why);
		return -1;
	}
	tune_store_mem_free(&st);
	if (tunedlib_count(built) != 3)
		return -1;
	/* Winners that differ from the default configuration (small tuning
	 * budgets often keep the default), so a tuned kernel really runs. */
	if (!strcmp(ROCMD_TEST_BACKEND, "cpu") &&
	    (tunedlib_add(built, "fp32:NN:300x300x300:b1", CPU_BIG, 10, 12, why, sizeof(why)) < 0 ||
	     tunedlib_add(built, "fp32:NN:128x128x128:b1", CPU_ODD1, 1, 2, why, sizeof(why)) < 0 ||
	     tunedlib_add(built, "fp16:TT:40x40x40:b1", CPU_ODD2, 1, 2, why, sizeof(why)) < 0))
		return -1;
	if (tunedlib_compile(built, NULL, why, sizeof(why)) < 0 ||
	    tunedlib_write(built, libdir, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s\n", why);
		return -1;
	}
	return 0;
}

static int
teardown_library(void **state)
{
	char cmd[300];

	tunedlib_free(built);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", libdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
check_code_objects(void **state)
{
	int i;

	for (i = 0; i < tunedlib_count(built); i++) {
		const struct tunedlib_entry *e = tunedlib_entry_at(built, i);

		if (!strcmp(ROCMD_TEST_BACKEND, "cuda")) {
			assert_string_equal(e->code_kind, "cubin");
			assert_true(e->code_len > 1000);
		} else {
			assert_null(e->code); /* the CPU backend has none: say so */
		}
	}
}

/*
 * Runs one GEMM of S through the API with padded leading dimensions, alpha
 * and beta, checks every entry against the reference, and checks the
 * selection (HOW, and the tuned shape used when TUNED_SHAPE is not NULL).
 */
static void
run_case(rocmd_gemm_t *h, const struct shape *s, enum rocmd_gemm_how how, const char *tuned_shape)
{
	struct gemm_problem p;
	struct rocmd_gemm_choice ch;
	size_t es, na, nb, nc;
	void *a, *b, *c_in, *c_out, *da = NULL, *db = NULL, *dc = NULL;
	double worst = 0;
	int64_t bad;

	gemm_problem_init(&p, s->dt, s->ta, s->tb, s->m, s->n, s->k, 1);
	if (!strcmp(ROCMD_TEST_BACKEND, "cpu")) {
		p.lda = gemm_rows_a(&p) + 3;
		p.ldb = gemm_rows_b(&p) + 5;
		p.ldc = p.m + 1;
	} else {
		/* Padded, but multiples of 8: the GPU's cp.async paths need that,
		 * and a kernel the predicate refuses would not be the tuned one. */
		p.lda = (gemm_rows_a(&p) + 7) / 8 * 8 + 8;
		p.ldb = (gemm_rows_b(&p) + 7) / 8 * 8 + 8;
		p.ldc = p.m + 1;
	}
	p.stride_a = p.lda * gemm_cols_a(&p);
	p.stride_b = p.ldb * gemm_cols_b(&p);
	p.stride_c = p.ldc * p.n;
	p.alpha = 0.75f;
	p.beta = -0.5f;
	es = gemm_dtype_size(s->dt);
	na = (size_t)gemm_elems_a(&p);
	nb = (size_t)gemm_elems_b(&p);
	nc = (size_t)gemm_elems_c(&p);
	a = malloc(na * es);
	b = malloc(nb * es);
	c_in = malloc(nc * es);
	c_out = malloc(nc * es);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c_in);
	assert_non_null(c_out);
	gemm_fill_random(s->dt, a, (int64_t)na, 11 + s->m);
	gemm_fill_random(s->dt, b, (int64_t)nb, 23 + s->n);
	gemm_fill_random(s->dt, c_in, (int64_t)nc, 37 + s->k);

	assert_int_equal(rocmd_gemm_query(h, (enum rocmd_gemm_dtype)s->dt,
	                                  (enum rocmd_gemm_op)s->ta, (enum rocmd_gemm_op)s->tb,
	                                  s->m, s->n, s->k, p.lda, p.ldb, p.ldc, &ch),
	                 0);
	print_message("%s:%c%c:%lldx%lldx%lld -> %d %s: %s\n", gemm_dtype_name(s->dt), "NT"[s->ta],
	              "NT"[s->tb], (long long)s -> m, (long long)s -> n, (long long)s -> k, ch.how,
	              ch.config, ch.reason);
	assert_int_equal(ch.how, how);
	if (tuned_shape != NULL)
		assert_string_equal(ch.tuned_shape, tuned_shape);
	if (how != ROCMD_GEMM_DEFAULT)
		assert_string_equal(ch.config, tunedlib_find(built, ch.tuned_shape)->config);

	assert_int_equal(rocmd_gemm_malloc(h, na * es, &da), 0);
	assert_int_equal(rocmd_gemm_malloc(h, nb * es, &db), 0);
	assert_int_equal(rocmd_gemm_malloc(h, nc * es, &dc), 0);
	assert_int_equal(rocmd_gemm_upload(h, da, a, na * es), 0);
	assert_int_equal(rocmd_gemm_upload(h, db, b, nb * es), 0);
	assert_int_equal(rocmd_gemm_upload(h, dc, c_in, nc * es), 0);
	if (s->dt == GEMM_FP32 && s->ta == GEMM_N)
		assert_int_equal(rocmd_sgemm(h, 'N', "nt"[s->tb], s -> m, s -> n, s -> k, p.alpha,
		                             da, p.lda, db, p.ldb, p.beta, dc, p.ldc),
		                 0);
	else
		assert_int_equal(rocmd_gemm(h, (enum rocmd_gemm_dtype)s->dt,
		                            (enum rocmd_gemm_op)s->ta, (enum rocmd_gemm_op)s->tb,
		                            s->m, s->n, s->k, p.alpha, da, p.lda, db, p.ldb, p.beta,
		                            dc, p.ldc),
		                 0);
	assert_int_equal(rocmd_gemm_synchronize(h), 0);
	assert_int_equal(rocmd_gemm_download(h, c_out, dc, nc * es), 0);
	bad = gemm_check(&p, a, b, c_in, c_out, 1e12, 0, 1, &worst);
	if (bad != 0)
		print_error("%lld wrong entries (worst %g)\n", (long long)bad, worst);
	assert_int_equal(bad, 0);
	/* The padding between columns is untouched. */
	assert_memory_equal((char *)c_out + (size_t)p.m * es, (char *)c_in + (size_t)p.m * es, es);
	rocmd_gemm_free(h, da);
	rocmd_gemm_free(h, db);
	rocmd_gemm_free(h, dc);
	free(a);
	free(b);
	free(c_in);
	free(c_out);
}

static rocmd_gemm_t *
open_api(void)
{
	rocmd_gemm_t *h = NULL;
	char err[512] = "";

	if (rocmd_gemm_open(libdir, ROCMD_TEST_BACKEND, 0, &h, err, sizeof(err)) < 0)
		print_error("rocmd_gemm_open: %s\n", err);
	assert_non_null(h);
	print_message("%s\n", rocmd_gemm_describe(h));
	return h;
}

static void
test_tuned_sizes(void **state)
{
	rocmd_gemm_t *h = open_api();
	size_t i;

	for (i = 0; i < sizeof(tuned) / sizeof(tuned[0]); i++) {
		char key[64];
		struct gemm_problem p;

		gemm_problem_init(&p, tuned[i].dt, tuned[i].ta, tuned[i].tb, tuned[i].m, tuned[i].n,
		                  tuned[i].k, 1);
		gemm_problem_key(&p, key, sizeof(key));
		run_case(h, &tuned[i], ROCMD_GEMM_EXACT, key);
	}
	rocmd_gemm_close(h);
}

static void
test_nearest_sizes(void **state)
{
	static const struct shape near[] = {
	    {GEMM_FP32, GEMM_N, GEMM_N, 100, 84, 60},
	    {GEMM_FP32, GEMM_N, GEMM_N, 90, 77, 61},
	    {GEMM_FP16, GEMM_N, GEMM_T, 70, 50, 36},
	    {GEMM_BF16, GEMM_T, GEMM_N, 80, 60, 50},
	};
	static const char *const from[] = {
	    "fp32:NN:96x80x64:b1",
	    "fp32:NN:96x80x64:b1",
	    "fp16:NT:64x48x40:b1",
	    "bf16:TN:72x56x48:b1",
	};
	rocmd_gemm_t *h = open_api();
	size_t i;

	for (i = 0; i < sizeof(near) / sizeof(near[0]); i++)
		run_case(h, &near[i], ROCMD_GEMM_NEAREST, from[i]);
	if (!strcmp(ROCMD_TEST_BACKEND, "cpu")) {
		/* 290x310x300 runs 300^3's MT0=512 kernel; 220^3 is nearer 300^3
		 * too, but that kernel is not valid for M = 220: 128^3's runs. */
		static const struct shape big = {GEMM_FP32, GEMM_N, GEMM_N, 290, 310, 300};
		static const struct shape mid = {GEMM_FP32, GEMM_N, GEMM_N, 220, 220, 220};

		static const struct shape odd[] = {
		    {GEMM_FP32, GEMM_N, GEMM_N, 128, 128, 128},
		    {GEMM_FP16, GEMM_T, GEMM_T, 40, 40, 40},
		};
		static const struct shape odd_near[] = {
		    {GEMM_FP32, GEMM_N, GEMM_N, 120, 130, 140},
		    {GEMM_FP16, GEMM_T, GEMM_T, 37, 44, 41},
		};

		run_case(h, &big, ROCMD_GEMM_NEAREST, "fp32:NN:300x300x300:b1");
		run_case(h, &mid, ROCMD_GEMM_NEAREST, "fp32:NN:128x128x128:b1");
		run_case(h, &odd[0], ROCMD_GEMM_EXACT, "fp32:NN:128x128x128:b1");
		run_case(h, &odd[1], ROCMD_GEMM_EXACT, "fp16:TT:40x40x40:b1");
		run_case(h, &odd_near[0], ROCMD_GEMM_NEAREST, "fp32:NN:128x128x128:b1");
		run_case(h, &odd_near[1], ROCMD_GEMM_NEAREST, "fp16:TT:40x40x40:b1");
	}
	rocmd_gemm_close(h);
}

static void
test_untuned_sizes(void **state)
{
	static const struct shape untuned[] = {
	    {GEMM_FP32, GEMM_T, GEMM_T, 50, 40, 30},  {GEMM_FP32, GEMM_N, GEMM_T, 33, 17, 129},
	    {GEMM_FP16, GEMM_N, GEMM_N, 64, 64, 64},  {GEMM_BF16, GEMM_T, GEMM_T, 31, 45, 27},
	    {GEMM_BF16, GEMM_N, GEMM_N, 200, 3, 100}, {GEMM_FP32, GEMM_T, GEMM_N, 1, 257, 65},
	};
	rocmd_gemm_t *h = open_api();
	size_t i;

	for (i = 0; i < sizeof(untuned) / sizeof(untuned[0]); i++)
		run_case(h, &untuned[i], ROCMD_GEMM_DEFAULT, NULL);
	rocmd_gemm_close(h);
}

/* Without a library every problem runs the default configuration, correctly. */
static void
test_no_library(void **state)
{
	rocmd_gemm_t *h = NULL;
	char err[512];

	assert_int_equal(rocmd_gemm_open(NULL, ROCMD_TEST_BACKEND, 0, &h, err, sizeof(err)), 0);
	run_case(h, &tuned[0], ROCMD_GEMM_DEFAULT, NULL);
	/* Bad arguments are refused with a sentence, not run. */
	assert_int_equal(
	    rocmd_sgemm(h, 'X', 'N', 4, 4, 4, 1, (float *)8, 4, (float *)8, 4, 0, (float *)8, 4),
	    ROCMD_EINVAL);
	assert_true(strlen(rocmd_gemm_error(h)) > 0);
	assert_int_equal(
	    rocmd_sgemm(h, 'N', 'N', 4, 4, 4, 1, (float *)8, 2, (float *)8, 4, 0, (float *)8, 4),
	    ROCMD_EINVAL);
	assert_true(strstr(rocmd_gemm_error(h), "leading dimension") != NULL);
	rocmd_gemm_close(h);
}

/*
 * The choice cache: a problem is selected (and its module compiled or
 * loaded) on its first call only, whatever other problems come between; a
 * new generation of the library reaches the handle through
 * rocmd_gemm_reload(), not before, and then replaces the cached choice.
 */
static void
test_choice_cache(void **state)
{
	static const struct shape odd = {GEMM_FP32, GEMM_N, GEMM_N, 128, 128, 128};
	const struct shape *first = !strcmp(ROCMD_TEST_BACKEND, "cpu") ? &odd : &tuned[0];
	rocmd_gemm_t *h = open_api();
	struct rocmd_gemm_stats st;
	struct gemm_problem p;
	char key[64];
	int i, changed = -1;

	gemm_problem_init(&p, first->dt, first->ta, first->tb, first->m, first->n, first->k, 1);
	gemm_problem_key(&p, key, sizeof(key));
	for (i = 0; i < 3; i++)
		run_case(h, first, ROCMD_GEMM_EXACT, key);
	assert_int_equal(rocmd_gemm_stats(h, &st), 0);
	assert_int_equal(st.calls, 3);
	assert_int_equal(st.selections, 1);
	assert_int_equal(st.modules, 1);
	assert_int_equal(st.generation, tunedlib_generation(built));
	run_case(h, &tuned[1], ROCMD_GEMM_EXACT, NULL);
	run_case(h, first, ROCMD_GEMM_EXACT, key);
	assert_int_equal(rocmd_gemm_stats(h, &st), 0);
	assert_int_equal(st.calls, 5);
	assert_int_equal(st.selections, 2);
	assert_int_equal(st.modules, 2);
	/* Nothing new in the folder: nothing changes. */
	assert_int_equal(rocmd_gemm_reload(h, &changed), 0);
	assert_int_equal(changed, 0);
	if (!strcmp(ROCMD_TEST_BACKEND, "cpu")) {
		static const char cfg[] =
		    "MT0=64;MT1=64;DU=16;TT0=4;TT1=2;UNROLL=2;VW=1;THREADS=1;PAR=0;PGR=1";
		struct rocmd_gemm_choice ch;
		char why[256];

		assert_int_equal(tunedlib_add(built, key, cfg, 1, 2, why, sizeof(why)), 0);
		assert_int_equal(tunedlib_write(built, libdir, why, sizeof(why)), 0);
		/* Until the reload the handle keeps its library and its choices. */
		assert_int_equal(rocmd_gemm_query(h, ROCMD_GEMM_F32, ROCMD_GEMM_OP_N, ROCMD_GEMM_OP_N,
		                                  128, 128, 128, 131, 133, 129, &ch),
		                 0);
		assert_string_equal(ch.config, CPU_ODD1);
		assert_int_equal(rocmd_gemm_reload(h, &changed), 0);
		assert_int_equal(changed, 1);
		run_case(h, first, ROCMD_GEMM_EXACT, key); /* checks the new configuration */
		assert_int_equal(rocmd_gemm_stats(h, &st), 0);
		assert_int_equal(st.generation, tunedlib_generation(built));
		assert_int_equal(st.selections, 3);
		assert_int_equal(st.calls, 6);
		assert_int_equal(rocmd_gemm_reload(h, &changed), 0);
		assert_int_equal(changed, 0);
	}
	rocmd_gemm_close(h);
}

/* A damaged library folder is refused at open, with the reason. */
static void
test_corrupt_library_refused(void **state)
{
	rocmd_gemm_t *h = NULL;
	char err[512] = "", path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/v%llu/index.json", libdir,
	         (unsigned long long)tunedlib_generation(built));
	chmod(path, 0644);
	f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 100), 0);
	fclose(f);
	assert_int_equal(rocmd_gemm_open(libdir, ROCMD_TEST_BACKEND, 0, &h, err, sizeof(err)),
	                 ROCMD_ECORRUPT);
	assert_null(h);
	assert_true(strstr(err, "index.json") != NULL);
	/* A library of another arch is refused too. */
	{
		struct tunedlib *other;
		struct tune_key id = lib_id;
		char why[256], dir[300];

		snprintf(id.arch, sizeof(id.arch), "gfx1103");
		snprintf(dir, sizeof(dir), "%s/other", libdir);
		assert_int_equal(tunedlib_new(&id, &other), 0);
		assert_int_equal(tunedlib_write(other, dir, why, sizeof(why)), 0);
		tunedlib_free(other);
		assert_int_equal(rocmd_gemm_open(dir, ROCMD_TEST_BACKEND, 0, &h, err, sizeof(err)),
		                 ROCMD_EINVAL);
		assert_true(strstr(err, "gfx1103") != NULL);
	}
}

/*
 * A library entry that is a vendor's solution (cuBLASLt's, tunedlib.h) runs
 * only through that vendor's backend with the very library build it was
 * tuned with; where it cannot (no cuBLASLt or no GPU here, another build of
 * it there: the digest below is no real library's), the problem runs rocmd's
 * own kernels, correctly, and the choice says why.
 */
static void
test_vendor_entry_fallback(void **state)
{
	static const struct shape vs = {GEMM_FP32, GEMM_N, GEMM_N, 96, 80, 72};
	struct tunedlib *lib = NULL;
	struct rocmd_gemm_choice ch;
	rocmd_gemm_t *h = NULL;
	char why[256], err[512], dir[300];

	snprintf(dir, sizeof(dir), "%s/with-vendor", libdir);
	assert_int_equal(tunedlib_new(&lib_id, &lib), 0);
	assert_int_equal(tunedlib_offer_vendor(lib, "fp32:NN:96x80x72:b1", "cublaslt",
	                                       "0123456789abcdef0123456789abcdef0123456789abcdef"
	                                       "0123456789abcdef",
	                                       "SOL=12345", 0.001, why, sizeof(why)),
	                 1);
	assert_int_equal(tunedlib_write(lib, dir, why, sizeof(why)), 0);
	tunedlib_free(lib);
	assert_int_equal(rocmd_gemm_open(dir, ROCMD_TEST_BACKEND, 0, &h, err, sizeof(err)), 0);
	assert_int_equal(rocmd_gemm_query(h, ROCMD_GEMM_F32, ROCMD_GEMM_OP_N, ROCMD_GEMM_OP_N, 96,
	                                  80, 72, 96, 72, 96, &ch),
	                 0);
	assert_int_equal(ch.how, ROCMD_GEMM_DEFAULT);
	assert_null(strstr(ch.config, "SOL="));
	assert_non_null(strstr(ch.reason, "the tuned cublaslt solution cannot run"));
	run_case(h, &vs, ROCMD_GEMM_DEFAULT, NULL); /* checked against the reference */
	rocmd_gemm_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(check_code_objects),
	    cmocka_unit_test(test_tuned_sizes),
	    cmocka_unit_test(test_nearest_sizes),
	    cmocka_unit_test(test_untuned_sizes),
	    cmocka_unit_test(test_no_library),
	    cmocka_unit_test(test_choice_cache),
	    cmocka_unit_test(test_vendor_entry_fallback),
	    cmocka_unit_test(test_corrupt_library_refused), /* last: it damages the folder */
	};
	const struct backend_ops *ops = backend_find(ROCMD_TEST_BACKEND);
	struct backend_device_info dev;
	struct backend_ctx *ctx = NULL;
	char why[512] = "";

	if (ops == NULL || ops->open(0, &ctx, &dev, why, sizeof(why)) < 0) {
		printf("SKIP: backend %s: %s\n", ROCMD_TEST_BACKEND,
		       ops == NULL ? "not in this build" : why);
		return 77;
	}
	ops->close(ctx);
	return cmocka_run_group_tests(tests, setup_library, teardown_library);
}
