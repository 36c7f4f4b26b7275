/*
 * The vendor-solution backends (kernels/vendor.h) against the stand-in
 * libraries of tests/fixtures/vendor (no AMD GPU here): what the rocblas and
 * hipblaslt backends report of the device and the library, the candidate
 * lists in each library's own numbering, every outcome a candidate can have
 * (ok, the wrong one caught against the default's output, one that cannot
 * run the problem), a whole tuning run in an evaluation process whose winner
 * beats the library's default by more than the re-timing's spread, the
 * library digest (content, not path; another build differs) and the search
 * of a binary for an environment variable's name; and the measurement's
 * burst of back-to-back calls a timed run, through another library's call.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/measure.h"
#include "kernels/tune.h"
#include "kernels/vendor.h"

#ifndef VENDOR_DIR
#error "VENDOR_DIR: the stand-ins' build folder"
#endif

static void
lib_path(char *out, size_t len, const char *tree, const char *file)
{
	snprintf(out, len, "%s/sdk-%s/lib/%s", VENDOR_DIR, tree, file);
}

static void
opts(struct tune_measure_opts *o, const char *tree, const char *file)
{
	memset(o, 0, sizeof(*o));
	o->warmup_ms = 5;
	o->runs = 5;
	o->seed = 3;
	o->max_sets = 2;
	lib_path(o->library, sizeof(o->library), tree, file);
	snprintf(o->sysroot, sizeof(o->sysroot), "%s/sysroot", VENDOR_DIR);
}

static void
problem(struct gemm_problem *p, enum gemm_dtype dt, int64_t m, int64_t n, int64_t k)
{
	gemm_problem_init(p, dt, GEMM_T, GEMM_N, m, n, k, 1);
}

/* Every candidate of fp16 TN 256x16x256 on the stand-in rocBLAS, measured. */
static void
test_rocblas_candidates(void **state)
{
	const struct backend_ops *ops = backend_find("rocblas");
	const struct space_def *sp;
	struct tune_measure_opts o;
	struct backend_device_info dev;
	struct gemm_problem p;
	struct measure *m;
	struct tune_result r;
	char hash[17], why[512] = "", key[64];
	double rel;
	int ok = 0;

	(void)state;
	assert_non_null(ops);
	assert_true(ops->vendor);
	opts(&o, "a", "librocblas.so.4");
	assert_int_equal(measure_local_open(ops, 0, &o, &m, &dev, hash, why, sizeof(why)), 0);
	assert_string_equal(dev.backend, "rocblas");
	assert_string_equal(dev.arch, "gfx1103");
	assert_int_equal(dev.compute_units, 12);
	assert_non_null(strstr(dev.name, "stand-in"));
	assert_string_equal(dev.runtime_version, "rocBLAS 4.2.4.rocmd-standin");
	assert_string_equal(dev.driver_version, "HIP driver 60241134");
	assert_int_equal(strlen(dev.library_digest), 64);
	assert_non_null(strstr(dev.library, "sdk-a/lib/librocblas.so.4"));
	problem(&p, GEMM_FP16, 256, 16, 256);
	assert_int_equal(measure_local_set_problem(m, &p, &sp, why, sizeof(why)), 0);
	/* The default, then rocBLAS's seven solutions by Tensile index + 1. */
	assert_string_equal(sp->name, VENDOR_SPACE_NAME);
	assert_int_equal(sp->nparams, 1);
	assert_int_equal(sp->params[0].nvalues, 8);
	assert_int_equal(sp->params[0].values[0], 0);
	assert_int_equal(sp->params[0].values[1], 1);
	assert_int_equal(sp->params[0].values[7], 7);
	for (int i = 0; i < sp->params[0].nvalues; i++) {
		int64_t sol = sp->params[0].values[i];

		snprintf(key, sizeof(key), "SOL=%lld", (long long)sol);
		assert_int_equal(measure_local_eval(m, key, 0, &r, &rel), 0);
		if (sol == 7) /* drops a K term: caught against the default's output */
			assert_int_equal(r.outcome, TUNE_WRONG_RESULT);
		else if (sol == 6) /* solves only M, N >= 64 */
			assert_int_equal(r.outcome, TUNE_LAUNCH_FAILED);
		else {
			assert_int_equal(r.outcome, TUNE_OK);
			assert_true(r.median_ms > 0);
			ok++;
		}
	}
	assert_int_equal(ok, 6);
	measure_local_close(m);
}

/* A whole run in an evaluation process: exhaustive over the short list, the
 * winner beats the default by more than the spread of the re-timing. */
static void
tune_one(const char *backend, const char *file, enum gemm_dtype dt, int64_t mm, int64_t n,
         int64_t k, int64_t forbidden)
{
	const struct backend_ops *ops = backend_find(backend);
	struct tune_measure_opts o;
	struct backend_device_info dev;
	struct space_def space;
	struct gemm_problem p;
	struct tune_evaluator *ev;
	struct tune_store st;
	struct tune_key key;
	struct tune_opts to;
	struct tune_summary sum;
	char hash[17], why[512] = "";

	opts(&o, "a", file);
	o.runs = 7;
	problem(&p, dt, mm, n, k);
	assert_int_equal(tune_evaluator_open(ops, 0, &p, &o, &ev, &dev, &space, hash, why,
	                                     sizeof(why)),
	                 0);
	assert_int_equal(tune_store_mem_new(&st), 0);
	tune_key_init(&key, &dev, hash, &p);
	memset(&to, 0, sizeof(to));
	to.budget = 64;
	to.strategy = tune_strategy_for(&space, to.budget, "sar");
	assert_string_equal(to.strategy, "exhaustive");
	to.topk = 3;
	to.retime_rounds = 5;
	to.store = &st;
	assert_int_equal(tune_run(ev, &key, &space, &p, &dev, &to, &sum, why, sizeof(why)), 0);
	fprintf(stderr, "%s: %s %.4f ms (p80 of the rounds %.4f), default %.4f ms (p20 %.4f)\n",
	        backend, sum.best, sum.best_ms, sum.best_hi_ms, sum.default_ms, sum.default_lo_ms);
	assert_int_equal(sum.evals, space.params[0].nvalues);
	assert_string_not_equal(sum.best, "SOL=0");
	assert_true(sum.best_ms < sum.default_ms);
	assert_true(sum.best_hi_ms < sum.default_lo_ms);
	{
		char bad[32];

		snprintf(bad, sizeof(bad), "SOL=%lld", (long long)forbidden);
		assert_string_not_equal(sum.best, bad); /* the wrong solution never wins */
	}
	tune_evaluator_close(ev);
	tune_store_mem_free(&st);
}

static void
test_rocblas_tune(void **state)
{
	(void)state;
	tune_one("rocblas", "librocblas.so.4", GEMM_FP32, 192, 96, 192, 7);
}

static void
test_hipblaslt_tune(void **state)
{
	(void)state;
	/* The stand-in's wrong solution is index 1301: SOL 1302. */
	tune_one("hipblaslt", "libhipblaslt.so.0", GEMM_BF16, 192, 64, 256, 1302);
}

static void
test_hipblaslt_candidates(void **state)
{
	const struct backend_ops *ops = backend_find("hipblaslt");
	const struct space_def *sp;
	struct tune_measure_opts o;
	struct backend_device_info dev;
	struct gemm_problem p;
	struct measure *m;
	struct tune_result r;
	char hash[17], why[512] = "";
	double rel;

	(void)state;
	opts(&o, "b", "libhipblaslt.so.0");
	assert_int_equal(measure_local_open(ops, 0, &o, &m, &dev, hash, why, sizeof(why)), 0);
	assert_string_equal(dev.backend, "hipblaslt");
	assert_string_equal(dev.runtime_version, "hipBLASLt 900");
	problem(&p, GEMM_FP16, 32, 8, 64);
	assert_int_equal(measure_local_set_problem(m, &p, &sp, why, sizeof(why)), 0);
	/* Build 2 numbers from 5400; the heuristic's first (5411) is the default, not
	 * listed again; the 64-tile (5488) cannot run M, N < 64 and is not offered. */
	assert_int_equal(sp->params[0].nvalues, 6);
	assert_int_equal(sp->params[0].values[0], 0);
	assert_int_equal(sp->params[0].values[1], 5404);
	for (int i = 0; i < sp->params[0].nvalues; i++)
		assert_int_not_equal(sp->params[0].values[i], 5489);
	assert_int_equal(measure_local_eval(m, "SOL=5502", 0, &r, &rel), 0);
	assert_int_equal(r.outcome, TUNE_WRONG_RESULT);
	assert_int_equal(measure_local_eval(m, "SOL=5423", 0, &r, &rel), 0);
	assert_int_equal(r.outcome, TUNE_OK);
	/* What the library did not list for this problem is not a candidate. */
	assert_int_equal(measure_local_eval(m, "SOL=5489", 0, &r, &rel), 0);
	assert_int_equal(r.outcome, TUNE_RULED_OUT);
	measure_local_close(m);
}

static void
test_digest(void **state)
{
	char a[1024], b[1024], copy[1200], dir[256], cmd[4200], ha[65], hb[65], hc[65], why[256];

	(void)state;
	lib_path(a, sizeof(a), "a", "librocblas.so.4");
	lib_path(b, sizeof(b), "b", "librocblas.so.4");
	assert_int_equal(vendor_library_digest(VENDOR_ROCBLAS, a, NULL, ha, why, sizeof(why)), 0);
	assert_int_equal(vendor_library_digest(VENDOR_ROCBLAS, b, NULL, hb, why, sizeof(why)), 0);
	assert_string_not_equal(ha, hb);
	/* The same files elsewhere: the same library. */
	snprintf(dir, sizeof(dir), "/tmp/rocmd-test-vendor-%ld", (long)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s && cp -a %s/sdk-a/lib/. %s/", dir, dir,
	         VENDOR_DIR, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(copy, sizeof(copy), "%s/librocblas.so.4", dir);
	assert_int_equal(vendor_library_digest(VENDOR_ROCBLAS, copy, NULL, hc, why, sizeof(why)), 0);
	assert_string_equal(ha, hc);
	/* A changed solution table (a deploy) is another library. */
	snprintf(cmd, sizeof(cmd), "echo more >> %s/rocblas/library/TensileLibrary_lazy_gfx1103.dat",
	         dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(vendor_library_digest(VENDOR_ROCBLAS, copy, NULL, hc, why, sizeof(why)), 0);
	assert_string_not_equal(ha, hc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void
test_binary_strings(void **state)
{
	char rb[1024], lt[1024], hip[1024];

	(void)state;
	lib_path(rb, sizeof(rb), "a", "librocblas.so.4");
	lib_path(lt, sizeof(lt), "a", "libhipblaslt.so.0");
	lib_path(hip, sizeof(hip), "a", "libamdhip64.so.6");
	assert_int_equal(vendor_binary_has_string(rb, "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH"), 1);
	assert_int_equal(vendor_binary_has_string(lt, "HIPBLASLT_TUNING_OVERRIDE_FILE"), 1);
	assert_int_equal(vendor_binary_has_string(hip, "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH"), 0);
	assert_true(vendor_binary_has_string("/nonexistent/librocblas.so", "X") < 0);
}

/* No library where one is asked for: "not available", with the reason. */
static void
test_missing(void **state)
{
	const struct backend_ops *ops = backend_find("rocblas");
	struct tune_measure_opts o;
	struct backend_device_info dev;
	struct measure *m = NULL;
	char hash[17], why[512] = "";

	(void)state;
	opts(&o, "a", "librocblas.so.4");
	snprintf(o.library, sizeof(o.library), "%s/sdk-a/lib/librocblas-missing.so", VENDOR_DIR);
	assert_int_equal(measure_local_open(ops, 0, &o, &m, &dev, hash, why, sizeof(why)),
	                 ROCMD_EUNSUPPORTED);
	assert_non_null(strstr(why, "not available"));
	snprintf(o.sysroot, sizeof(o.sysroot), "/nonexistent");
	lib_path(o.library, sizeof(o.library), "a", "librocblas.so.4");
	assert_int_equal(measure_local_open(ops, 0, &o, &m, &dev, hash, why, sizeof(why)),
	                 ROCMD_EUNSUPPORTED);
	assert_non_null(strstr(why, "KFD"));
}

/* A library's GEMM that only counts its calls. */
static int
count_call(void *arg, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	(void)p;
	(void)bufs;
	++*(int *)arg;
	return 0;
}

/*
 * A timed run enqueues a burst of calls between its two events and reports
 * the time per call: one call alone between events timed the device idling
 * while the host enqueued it. With the burst fixed at 4 and a warm-up of two
 * calls (two input sets, a warm-up far shorter than a call), 5 timed runs
 * make 2 + 5 x 4 calls; one call a run made 2 + 5.
 */
static void
test_burst(void **state)
{
	const struct backend_ops *ops = backend_find("cpu");
	const struct space_def *sp;
	struct tune_measure_opts o;
	struct backend_device_info dev;
	struct gemm_problem p;
	struct measure *m;
	struct tune_result r;
	char hash[17], why[512] = "";
	double rel;
	int calls = 0;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.warmup_ms = 1e-9;
	o.runs = 5;
	o.max_sets = 2;
	o.burst = 4;
	assert_int_equal(measure_local_open(ops, 0, &o, &m, &dev, hash, why, sizeof(why)), 0);
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 8, 8, 8, 1);
	assert_int_equal(measure_local_set_problem(m, &p, &sp, why, sizeof(why)), 0);
	assert_int_equal(measure_local_eval_call(m, count_call, &calls, TUNE_EVAL_TIME_ONLY, &r, &rel),
	                 0);
	assert_int_equal(r.outcome, TUNE_OK);
	assert_int_equal(r.runs, 5);
	assert_int_equal(calls, 2 + 5 * 4);
	measure_local_close(m);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rocblas_candidates), cmocka_unit_test(test_hipblaslt_candidates),
	    cmocka_unit_test(test_rocblas_tune),       cmocka_unit_test(test_hipblaslt_tune),
	    cmocka_unit_test(test_digest),             cmocka_unit_test(test_binary_strings),
	    cmocka_unit_test(test_missing),            cmocka_unit_test(test_burst),
	};
	int rc;

	if ((rc = tune_evaluator_child(argc, argv)) >= 0)
		return rc;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
