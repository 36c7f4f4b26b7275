/* Unit tests for the tuner: spaces (enumeration, keys, neighbours), strategies
 * on synthetic landscapes with a planted optimum, replay determinism, the
 * measurement's outcome classes (a planted wrong result, crash and hang in the
 * CPU backend) and a whole tuning run against the in-memory store. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/tune.h"

/* ---- spaces ---- */

static void
test_space_enumeration(void **state)
{
	const struct space_def *s = space_cpu();
	struct space_point pt, back, nb[2 * SPACE_MAX_PARAMS];
	char key[SPACE_KEY_MAX], json[SPACE_KEY_MAX];
	uint64_t size = space_size(s), i;
	int n;

	assert_true(size >= 10000 && size <= 1000000);
	for (i = 0; i < size; i += 997) {
		space_point_from_index(s, i, &pt);
		assert_int_equal(space_point_index(s, &pt), i);
		assert_int_equal(space_key(s, &pt, key, sizeof(key)), 0);
		assert_int_equal(space_key_parse(s, key, &back), 0);
		assert_memory_equal(&pt, &back, sizeof(pt));
	}
	space_point_default(s, &pt);
	assert_int_equal(space_key(s, &pt, key, sizeof(key)), 0);
	assert_non_null(strstr(key, "MT0=128;"));
	assert_int_equal(space_json(s, &pt, json, sizeof(json)), 0);
	assert_non_null(strstr(json, "\"MT0\":128"));
	assert_int_equal(space_json_parse(s, json, &back), 0);
	assert_memory_equal(&pt, &back, sizeof(pt));
	assert_int_not_equal(space_json_parse(s, "{\"MT0\":128}", &back), 0);
	assert_int_not_equal(space_json_parse(s, "[1]", &back), 0);
	assert_int_not_equal(space_key_parse(s, "MT0=128", &back), 0);	   /* incomplete */
	assert_int_not_equal(space_key_parse(s, "MT0=7;MT1=64", &back), 0); /* bad value */
	n = space_neighbours(s, &pt, nb, 2 * SPACE_MAX_PARAMS);
	assert_true(n >= s->nparams && n <= 2 * s->nparams);
	for (i = 0; i < (uint64_t)n; i++) {
		int diff = 0, k;

		for (k = 0; k < s->nparams; k++)
			diff += abs((int)nb[i].idx[k] - (int)pt.idx[k]);
		assert_int_equal(diff, 1);
	}
	/* The GPU space is of the size Tensile-style spaces have. */
	assert_true(space_size(space_gpu()) >= 10000);
}

static void
test_space_constraints(void **state)
{
	struct space_def s = *space_cpu();
	struct space_param parsed;
	struct space_point pt;
	struct gemm_problem p;
	char why[128], line[256];

	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 64, 64, 64, 1);
	/* TT0=16 does not divide MT0=... all do; TT1=8 with MT1=32 fine; tile over M is not. */
	assert_int_equal(space_key_parse(&s,
					 "MT0=512;MT1=64;DU=64;TT0=8;TT1=4;UNROLL=4;VW=4;THREADS=1;"
					 "PAR=0;PGR=0",
					 &pt),
			 0);
	assert_int_equal(space_valid(&s, &pt, &p, NULL, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "MT0"));
	assert_int_equal(space_default_for(&s, &p, NULL, &pt), 0);
	assert_int_equal(space_valid(&s, &pt, &p, NULL, NULL, 0), 1);
	/* Restriction and the landscape header form. */
	assert_int_equal(space_fix(&s, "THREADS", 2), 0);
	assert_int_equal(s.params[space_param_index(&s, "THREADS")].nvalues, 1);
	assert_int_equal(space_fix(&s, "NOPE", 2), ROCMD_ENOTFOUND);
	assert_int_equal(space_fix(&s, "MT0", 3), ROCMD_EINVAL);
	assert_int_equal(space_param_line(&s.params[0], line, sizeof(line)), 0);
	assert_string_equal(line, "MT0=32,64,*128,256,512");
	assert_int_equal(space_param_parse_line(line, &parsed), 0);
	assert_memory_equal(&parsed, &s.params[0], sizeof(parsed));
}

/* ---- synthetic landscapes ---- */

/* Six parameters of eight values: a tilted bowl with an interaction term,
 * plenty of deterministic local minima, a forbidden corner and a few "failed"
 * points; the optimum is planted at OPT. */
static const int opt[6] = {5, 2, 6, 1, 3, 4};

static int
synth_check(const struct space_def *s, const int64_t *v, const struct gemm_problem *p,
	    const struct backend_device_info *dev, char *why, size_t whylen)
{
	return !(v[0] + v[1] >= 13); /* the forbidden corner */
}

static struct space_def
synth_space(void)
{
	struct space_def s;
	int i, j;

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "synthetic");
	s.nparams = 6;
	for (i = 0; i < 6; i++) {
		snprintf(s.params[i].name, sizeof(s.params[i].name), "P%d", i);
		s.params[i].nvalues = 8;
		for (j = 0; j < 8; j++)
			s.params[i].values[j] = j;
		s.params[i].dflt = 0;
	}
	s.check = synth_check;
	return s;
}

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static double
synth_cost(void *ctx, const struct space_def *s, const struct space_point *pt)
{
	int64_t v[SPACE_MAX_PARAMS];
	uint64_t idx = 0;
	double c = 1.0;
	int i;

	space_point_values(s, pt, v);
	for (i = 5; i >= 0; i--)
		idx = idx * 8 + (uint64_t)v[i];
	if (v[0] == opt[0] && v[1] == opt[1] && v[2] == opt[2] && v[3] == opt[3] &&
	    v[4] == opt[4] && v[5] == opt[5])
		return 1.0;
	if (mix(idx) % 29 == 0)
		return INFINITY; /* a failed candidate */
	for (i = 0; i < 6; i++)
		c += 0.08 * (i + 1) * fabs((double)v[i] - opt[i]);
	c += 0.05 * fabs((double)(v[0] - opt[0]) * (v[2] - opt[2]));
	c += 0.15 * (double)(mix(idx * 7 + 1) % 100) / 100.0; /* ruggedness */
	return c;
}

static void
test_strategies_find_planted_optimum(void **state)
{
	struct space_def s = synth_space();
	const char *heur[] = {"ls", "ga", "sa", "sar", "surr"};
	int h, seed, found, evals;
	double rnd_sum = 0, heur_sum[5] = {0, 0, 0, 0, 0}, cost;
	struct space_point best;

	for (seed = 1; seed <= 10; seed++) {
		assert_int_equal(tune_search_synthetic(&s, synth_cost, NULL, "random", 300,
						       (uint64_t)seed, &best, &cost, &evals),
				 0);
		assert_int_equal(evals, 300);
		rnd_sum += cost;
	}
	for (h = 0; h < 5; h++) {
		found = 0;
		for (seed = 1; seed <= 10; seed++) {
			assert_int_equal(tune_search_synthetic(&s, synth_cost, NULL, heur[h], 300,
							       (uint64_t)seed, &best, &cost,
							       &evals),
					 0);
			heur_sum[h] += cost;
			if (cost == 1.0)
				found++;
		}
		/* The planted optimum, found in most runs; and better than random on average. */
		if (found < 7)
			print_error("%s found the optimum in %d of 10 runs\n", heur[h], found);
		assert_true(found >= 7);
		assert_true(heur_sum[h] < rnd_sum);
	}
}

/* A deceptive parameter: P0 gets slower from its default 0 up to 3, then
 * faster again down to its optimum at 7; the other parameters are bowls
 * around OPT. One-step moves from the default climb away from the optimum. */
static double
ridge_cost(void *ctx, const struct space_def *s, const struct space_point *pt)
{
	int64_t v[SPACE_MAX_PARAMS];
	double c = 1.0;
	int i;

	space_point_values(s, pt, v);
	c += v[0] <= 3 ? 0.1 * (double)v[0] : 0.1 * (double)(7 - v[0]);
	for (i = 1; i < 6; i++)
		c += 0.05 * fabs((double)v[i] - opt[i]);
	return c;
}

static void
test_reanneal_crosses_ridge(void **state)
{
	struct space_def s = synth_space();
	struct space_point best;
	double cost;
	int seed, found = 0, evals;

	s.check = NULL;
	for (seed = 1; seed <= 20; seed++) {
		assert_int_equal(tune_search_synthetic(&s, ridge_cost, NULL, "sar", 150,
						       (uint64_t)seed, &best, &cost, &evals),
				 0);
		assert_int_equal(evals, 150);
		if (cost == 1.0)
			found++;
	}
	/* The line pass sees P0=7 from the default; the walk finds the rest. */
	if (found < 18)
		print_error("sar found the planted optimum in %d of 20 runs\n", found);
	assert_true(found >= 18);
}

/* A GEMM-shaped landscape: two smooth "sizes" S0, S1 (bowl and slope), a
 * vector width V (0 is three times slower) and three interacting kernel
 * switches K0, K1, K2 whose best combination (2,1,0) is a lone spike: every
 * point one switch away from it is at least 35% slower, the other
 * combinations rugged in between. Time = size factor x kernel factor. */
static struct space_def
spike_space(void)
{
	static const int nv[6] = {6, 6, 3, 4, 4, 2}, dflt[6] = {2, 3, 1, 2, 2, 1};
	static const char *const names[6] = {"S0", "S1", "K0", "K1", "K2", "V"};
	struct space_def s;
	int i, j;

	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "spike");
	s.nparams = 6;
	for (i = 0; i < 6; i++) {
		snprintf(s.params[i].name, sizeof(s.params[i].name), "%s", names[i]);
		s.params[i].nvalues = nv[i];
		for (j = 0; j < nv[i]; j++)
			s.params[i].values[j] = j;
		s.params[i].dflt = dflt[i];
	}
	return s;
}

static double
spike_cost(void *ctx, const struct space_def *s, const struct space_point *pt)
{
	int64_t v[SPACE_MAX_PARAMS];
	double size, kern;
	int away;

	space_point_values(s, pt, v);
	size = 1.0 + 0.05 * fabs((double)v[0] - 4) + 0.06 * (double)(5 - v[1]);
	away = (v[2] != 2) + (v[3] != 1) + (v[4] != 0);
	if (away == 0)
		kern = 1.0;
	else if (away == 1)
		kern = 1.35 + 0.2 * (double)(mix((uint64_t)(v[2] * 16 + v[3] * 4 + v[4])) % 100) / 100;
	else
		kern = 1.15 + 0.5 * (double)(mix((uint64_t)(v[2] * 16 + v[3] * 4 + v[4])) % 100) / 100;
	return size * kern * (v[5] == 0 ? 3.0 : 1.0);
}

static void
test_surrogate_finds_lone_spike(void **state)
{
	struct space_def s = spike_space();
	struct space_point best;
	double cost;
	int seed, found = 0, evals;

	for (seed = 1; seed <= 20; seed++) {
		assert_int_equal(tune_search_synthetic(&s, spike_cost, NULL, "surr", 100,
						       (uint64_t)seed, &best, &cost, &evals),
				 0);
		assert_int_equal(evals, 100);
		if (cost == 1.0)
			found++;
	}
	/* The line pass settles V and finds the sizes; the joint search of the
	 * three short-listed switches (48 combinations) finds the spike that no
	 * one-parameter move leads to. */
	if (found < 19)
		print_error("surr found the planted spike in %d of 20 runs\n", found);
	assert_true(found >= 19);
}

static void
test_exhaustive_is_exact(void **state)
{
	struct space_def s = synth_space();
	struct space_point best;
	double cost;
	int evals, i;

	/* Narrow to 8*8*8 = 512 points so exhaustive covers it within budget. */
	for (i = 3; i < 6; i++)
		assert_int_equal(space_fix(&s, s.params[i].name, opt[i]), 0);
	assert_int_equal(tune_search_synthetic(&s, synth_cost, NULL, "exhaustive", 100000, 1,
					       &best, &cost, &evals),
			 0);
	assert_true(cost == 1.0);
	assert_true(evals < 512); /* the forbidden corner is free */
	assert_int_equal(best.idx[0], opt[0]);
}

/* ---- replay ---- */

static char landscape_path[64];

static void
write_synthetic_landscape(const char *path)
{
	struct space_def s = synth_space();
	struct tune_key key;
	struct space_point pt;
	FILE *f = fopen(path, "w");
	uint64_t i;

	assert_non_null(f);
	memset(&key, 0, sizeof(key));
	snprintf(key.backend, sizeof(key.backend), "synthetic");
	snprintf(key.problem, sizeof(key.problem), "fp32:NN:64x64x64:b1");
	s.check = NULL;
	assert_int_equal(tune_landscape_write_header(f, &key, &s), 0);
	for (i = 0; i < space_size(&s); i++) {
		struct tune_result r;
		char k[SPACE_KEY_MAX];
		double c;

		space_point_from_index(&s, i, &pt);
		if (!synth_check(&s, (int64_t[]){pt.idx[0], pt.idx[1]}, NULL, NULL, NULL, 0))
			continue;
		c = synth_cost(NULL, &s, &pt);
		memset(&r, 0, sizeof(r));
		r.outcome = isfinite(c) ? TUNE_OK : TUNE_WRONG_RESULT;
		r.median_ms = r.p20_ms = r.p80_ms = isfinite(c) ? c : 0;
		space_key(&s, &pt, k, sizeof(k));
		assert_int_equal(tune_landscape_write_entry(f, k, &r), 0);
	}
	fclose(f);
}

static void
test_replay_deterministic(void **state)
{
	struct tune_landscape *l = NULL;
	struct tune_replay_stats a, b, c;
	char why[256];
	const char *names[] = {"random", "ls", "ga", "sa", "sar", "surr"};
	int i;

	snprintf(landscape_path, sizeof(landscape_path), "/tmp/rocmd-test-land-%d.csv",
		 (int)getpid());
	write_synthetic_landscape(landscape_path);
	assert_int_equal(tune_landscape_load(landscape_path, &l, why, sizeof(why)), 0);
	assert_true(tune_landscape_best(l) == 1.0);
	assert_true(tune_landscape_count(l) > 200000);
	for (i = 0; i < 6; i++) {
		assert_int_equal(tune_replay(l, names[i], 5, 200, 42, &a, why, sizeof(why)), 0);
		assert_int_equal(tune_replay(l, names[i], 5, 200, 42, &b, why, sizeof(why)), 0);
		assert_int_equal(tune_replay(l, names[i], 5, 200, 43, &c, why, sizeof(why)), 0);
		assert_true(a.trace_hash == b.trace_hash);
		assert_memory_equal(a.median_to, b.median_to, sizeof(a.median_to));
		assert_true(a.trace_hash != c.trace_hash);
	}
	assert_int_equal(tune_replay(l, "nope", 5, 200, 42, &a, why, sizeof(why)), ROCMD_EINVAL);
	tune_landscape_free(l);
	unlink(landscape_path);
}

/* ---- measurement outcomes on the CPU backend ---- */

static const char *
key_with(const struct space_def *s, struct gemm_problem *p, const char *name, int64_t v,
	 char *buf, size_t len)
{
	struct space_point pt;
	int pi = space_param_index(s, name), i;

	assert_int_equal(space_default_for(s, p, NULL, &pt), 0);
	for (i = 0; i < s->params[pi].nvalues; i++)
		if (s->params[pi].values[i] == v)
			pt.idx[pi] = (uint8_t)i;
	space_key(s, &pt, buf, len);
	return buf;
}

static void
test_planted_wrong_result_caught(void **state)
{
	int dt;

	setenv("ROCMD_TUNE_PLANT", "wrong:UNROLL=2", 1);
	for (dt = 0; dt < GEMM_DTYPE_COUNT; dt++) {
		struct gemm_problem p;
		struct tune_measure_opts mo;
		struct tune_evaluator *ev;
		struct backend_device_info dev;
		struct space_def s;
		struct tune_result r;
		char hash[17], why[256], key[SPACE_KEY_MAX];

		gemm_problem_init(&p, (enum gemm_dtype)dt, GEMM_T, GEMM_N, 40, 24, 64, 2);
		memset(&mo, 0, sizeof(mo));
		mo.isolate = -1;
		mo.warmup_ms = 1;
		mo.runs = 3;
		assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s,
						     hash, why, sizeof(why)),
				 0);
		assert_int_equal(strlen(hash), 16);
		assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 2, key,
								  sizeof(key)),
						     0, &r),
				 0);
		assert_int_equal(r.outcome, TUNE_WRONG_RESULT);
		assert_non_null(strstr(r.detail, "wrong"));
		assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 4, key,
								  sizeof(key)),
						     0, &r),
				 0);
		assert_int_equal(r.outcome, TUNE_OK);
		assert_true(r.median_ms > 0 && r.p20_ms <= r.median_ms && r.median_ms <= r.p80_ms);
		assert_int_equal(tune_evaluator_eval(ev, "MT0=1", 0, &r), 0);
		assert_int_equal(r.outcome, TUNE_RULED_OUT);
		tune_evaluator_close(ev);
	}
	unsetenv("ROCMD_TUNE_PLANT");
}

/*
 * The evaluator's child must not keep the parent's descriptors. In the daemon
 * those are the listening socket and the state-folder lock, and a child that
 * outlived a killed daemon kept both (CI: test-ipc, test_kill9_is_unclean).
 * A pipe's write end made here without O_CLOEXEC stands for them: once the
 * parent closes its copy, the read end sees EOF only if no child holds one.
 */
static void
test_child_closes_inherited_fds(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_result r;
	char hash[17], why[256], key[SPACE_KEY_MAX], c;
	struct pollfd pfd;
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 32, 32, 32, 1);
	memset(&mo, 0, sizeof(mo));
	mo.isolate = 1;
	mo.warmup_ms = 1;
	mo.runs = 3;
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	/* One evaluation: the child is up and past its start. */
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 4, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_OK);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	/* Not a timing figure: EOF is immediate, or never while the child lives. */
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(read(fds[0], &c, 1), 0);
	tune_evaluator_close(ev);
	close(fds[0]);
}

static void
test_crash_and_hang_isolated(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_result r;
	char hash[17], why[256], key[SPACE_KEY_MAX];

	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 32, 32, 32, 1);
	memset(&mo, 0, sizeof(mo));
	mo.warmup_ms = 1;
	mo.runs = 3;
	mo.timeout_ms = 1500;
	setenv("ROCMD_TUNE_PLANT", "crash:UNROLL=1", 1);
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 1, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_CRASHED);
	assert_non_null(strstr(r.detail, "signal"));
	/* The next candidate runs in a fresh child. */
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 4, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_OK);
	/* A child that dies while idle is replaced, not blamed on the next candidate. */
	tune_evaluator_abort(ev);
	usleep(50 * 1000);
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 2, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_OK);
	tune_evaluator_close(ev);

	setenv("ROCMD_TUNE_PLANT", "hang:UNROLL=8", 1);
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 8, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_TIMEOUT);
	assert_int_equal(tune_evaluator_eval(ev, key_with(&s, &p, "UNROLL", 2, key, sizeof(key)),
					     0, &r),
			 0);
	assert_int_equal(r.outcome, TUNE_OK);
	tune_evaluator_close(ev);
	unsetenv("ROCMD_TUNE_PLANT");
}

static void
test_run_with_store_repeats_nothing(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_key key;
	struct tune_store st;
	struct tune_opts o;
	struct tune_summary sum;
	char hash[17], why[256];
	int64_t n = 0;

	gemm_problem_init(&p, GEMM_FP16, GEMM_N, GEMM_T, 48, 40, 32, 1);
	memset(&mo, 0, sizeof(mo));
	mo.isolate = -1;
	mo.warmup_ms = 1;
	mo.runs = 3;
	setenv("ROCMD_TUNE_PLANT", "wrong:TT1=2", 1);
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	tune_key_init(&key, &dev, hash, &p);
	assert_string_equal(key.problem, "fp16:NT:48x40x32:b1");
	assert_int_equal(tune_store_mem_new(&st), 0);
	memset(&o, 0, sizeof(o));
	o.strategy = "ls";
	o.budget = 12;
	o.store = &st;
	o.no_seeds = 1;
	assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)), 0);
	assert_int_equal(sum.evals, 12);
	assert_int_equal(sum.measured, 12);
	assert_true(sum.best_ms <= sum.default_ms);
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, 12);
	/* The same run again: everything comes from the store. */
	assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)), 0);
	assert_int_equal(sum.measured, 0);
	assert_int_equal(sum.from_store, 12);
	/* A bigger budget continues: only the new evaluations are measured. */
	o.budget = 20;
	assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)), 0);
	assert_int_equal(sum.from_store, 12);
	assert_int_equal(sum.measured, 8);
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, 20);
	tune_store_mem_free(&st);
	tune_evaluator_close(ev);
	unsetenv("ROCMD_TUNE_PLANT");
}

/* A job where nothing runs correctly says why: the outcomes counted and the
 * first failure's detail, not a bare count. */
static void
test_run_says_why_nothing_ran(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_key key;
	struct tune_opts o;
	struct tune_summary sum;
	char hash[17], why[512];

	(void)state;
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 24, 16, 8, 1);
	memset(&mo, 0, sizeof(mo));
	mo.isolate = -1;
	mo.warmup_ms = 1;
	mo.runs = 2;
	setenv("ROCMD_TUNE_PLANT", "wrong:", 1); /* every candidate wrong */
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	tune_key_init(&key, &dev, hash, &p);
	memset(&o, 0, sizeof(o));
	o.strategy = "random";
	o.budget = 5;
	o.no_seeds = 1;
	assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)),
			 ROCMD_ENOTFOUND);
	assert_int_equal(sum.outcomes.n[TUNE_WRONG_RESULT], 5);
	assert_non_null(strstr(why, "no configuration ran correctly: 5 evaluated (5 wrong_result)"));
	assert_non_null(strstr(why, "; first: wrong_result"));
	tune_evaluator_close(ev);
	unsetenv("ROCMD_TUNE_PLANT");
}

/*
 * A stored compile or launch failure (or ruled_out) was decided partly by
 * rocmd's host code, which a newer build may decide otherwise: the next run
 * evaluates it again and the store keeps the new result. A stored wrong
 * result is the kernel's own and comes from the store.
 */
static void
test_run_retries_host_outcomes(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_key key;
	struct tune_store st;
	struct tune_opts o;
	struct tune_summary sum;
	struct tune_result r;
	char hash[17], why[256], dk[SPACE_KEY_MAX];
	int i;

	(void)state;
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 32, 24, 16, 1);
	memset(&mo, 0, sizeof(mo));
	mo.isolate = -1;
	mo.warmup_ms = 1;
	mo.runs = 3;
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	tune_key_init(&key, &dev, hash, &p);
	memset(&o, 0, sizeof(o));
	o.strategy = "ls";
	o.budget = 1;
	o.no_seeds = 1;
	/* The one configuration a budget of 1 evaluates: the problem's default. */
	assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)), 0);
	snprintf(dk, sizeof(dk), "%s", sum.default_key);
	assert_true(dk[0] != '\0');
	for (i = 0; i < 2; i++) {
		enum tune_outcome stored = i == 0 ? TUNE_LAUNCH_FAILED : TUNE_WRONG_RESULT;

		assert_int_equal(tune_store_mem_new(&st), 0);
		o.store = &st;
		memset(&r, 0, sizeof(r));
		r.outcome = stored;
		assert_int_equal(st.record(st.ctx, &key, dk, &r), 0);
		/* (a second evaluation where the first stays wrong, so a winner exists) */
		o.budget = i == 0 ? 1 : 2;
		assert_int_equal(tune_run(ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)), 0);
		assert_int_equal(sum.evals, o.budget);
		assert_int_equal(st.lookup(st.ctx, &key, dk, &r), 0);
		if (i == 0) {
			assert_int_equal(sum.measured, 1);
			assert_int_equal(sum.from_store, 0);
			assert_int_equal(r.outcome, TUNE_OK);
			assert_true(r.median_ms > 0);
		} else {
			assert_int_equal(sum.measured, 1);
			assert_int_equal(sum.from_store, 1);
			assert_int_equal(r.outcome, TUNE_WRONG_RESULT);
		}
		tune_store_mem_free(&st);
	}
	tune_evaluator_close(ev);
}

struct seen_keys {
	char keys[64][SPACE_KEY_MAX];
	int n;
};

static void
note_key(void *ctx, const struct tune_progress *pr)
{
	struct seen_keys *sk = ctx;

	if (sk->n < 64)
		snprintf(sk->keys[sk->n++], SPACE_KEY_MAX, "%s", pr->config);
}

static void
test_seed_set(void **state)
{
	struct gemm_problem p1, p2;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev1, *ev2;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_key k1, k2;
	struct tune_store st;
	struct tune_opts o;
	struct tune_summary sum1, sum2;
	struct seen_keys sk;
	char hash[17], why[256], win[SPACE_KEY_MAX];

	gemm_problem_init(&p1, GEMM_FP32, GEMM_N, GEMM_N, 64, 64, 64, 1);
	gemm_problem_init(&p2, GEMM_FP32, GEMM_N, GEMM_N, 64, 64, 128, 1);
	memset(&mo, 0, sizeof(mo));
	mo.isolate = -1;
	mo.warmup_ms = 1;
	mo.runs = 3;
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p1, &mo, &ev1, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p2, &mo, &ev2, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	tune_key_init(&k1, &dev, hash, &p1);
	tune_key_init(&k2, &dev, hash, &p2);
	assert_int_equal(tune_store_mem_new(&st), 0);
	memset(&o, 0, sizeof(o));
	o.strategy = "random";
	o.store = &st;
	o.progress = note_key;
	o.progress_ctx = &sk;
	o.budget = 4;
	/* An earlier run declared WIN the winner of P1. */
	snprintf(win, sizeof(win),
		 "MT0=32;MT1=32;DU=32;TT0=4;TT1=2;UNROLL=2;VW=4;THREADS=1;PAR=1;PGR=1");
	assert_int_equal(st.set_winner(st.ctx, &k1, win, 1.0, 2.0), 0);
	/* A neighbouring shape starts with its default, then the neighbour's winner. */
	memset(&sk, 0, sizeof(sk));
	assert_int_equal(tune_run(ev2, &k2, &s, &p2, &dev, &o, &sum2, why, sizeof(why)), 0);
	assert_true(sk.n >= 2);
	assert_string_equal(sk.keys[0], sum2.default_key);
	assert_string_equal(sk.keys[1], win);
	/* After a "driver update" the old winner of the same shape seeds the new run,
	 * but none of the old key's results is reused as a result. */
	snprintf(k1.driver, sizeof(k1.driver), "a newer driver");
	memset(&sk, 0, sizeof(sk));
	assert_int_equal(tune_run(ev1, &k1, &s, &p1, &dev, &o, &sum1, why, sizeof(why)), 0);
	assert_int_equal(sum1.from_store, 0);
	assert_string_equal(sk.keys[0], sum1.default_key);
	assert_string_equal(sk.keys[1], win);
	/* With no_seeds, only the default comes first. */
	o.no_seeds = 1;
	snprintf(k1.driver, sizeof(k1.driver), "yet another driver");
	memset(&sk, 0, sizeof(sk));
	assert_int_equal(tune_run(ev1, &k1, &s, &p1, &dev, &o, &sum1, why, sizeof(why)), 0);
	assert_string_not_equal(sk.keys[1], win);
	tune_store_mem_free(&st);
	tune_evaluator_close(ev1);
	tune_evaluator_close(ev2);
}

struct aborter {
	struct tune_evaluator *ev;
	volatile int cancel;
};

static void *
abort_later(void *arg)
{
	struct aborter *ab = arg;

	usleep(300 * 1000);
	ab->cancel = 1;
	tune_evaluator_abort(ab->ev);
	return NULL;
}

static void
test_abort_records_nothing(void **state)
{
	struct gemm_problem p;
	struct tune_measure_opts mo;
	struct backend_device_info dev;
	struct space_def s;
	struct tune_key key;
	struct tune_store st;
	struct tune_opts o;
	struct tune_summary sum;
	struct aborter ab;
	pthread_t th;
	char hash[17], why[256];
	int64_t n = -1;

	/* Every configuration hangs: only the abort can end the first evaluation. */
	setenv("ROCMD_TUNE_PLANT", "hang:", 1);
	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 32, 32, 32, 1);
	memset(&mo, 0, sizeof(mo));
	mo.warmup_ms = 1;
	mo.runs = 3;
	mo.timeout_ms = 60000;
	memset(&ab, 0, sizeof(ab));
	assert_int_equal(tune_evaluator_open(&backend_cpu_ops, 0, &p, &mo, &ab.ev, &dev, &s, hash,
					     why, sizeof(why)),
			 0);
	tune_key_init(&key, &dev, hash, &p);
	assert_int_equal(tune_store_mem_new(&st), 0);
	memset(&o, 0, sizeof(o));
	o.strategy = "ls";
	o.budget = 10;
	o.store = &st;
	o.cancel = &ab.cancel;
	assert_int_equal(pthread_create(&th, NULL, abort_later, &ab), 0);
	assert_int_equal(tune_run(ab.ev, &key, &s, &p, &dev, &o, &sum, why, sizeof(why)),
			 ROCMD_ECANCELED);
	pthread_join(th, NULL);
	/* The killed evaluation is not blamed on the candidate. */
	assert_int_equal(st.count(st.ctx, &key, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sum.outcomes.n[TUNE_CRASHED], 0);
	tune_store_mem_free(&st);
	tune_evaluator_close(ab.ev);
	unsetenv("ROCMD_TUNE_PLANT");
}

/* ---- interleaved rounds ---- */

/*
 * Three items of the same cost timed in interleaved rounds on a clock that
 * slows by DRIFT per evaluation (a GPU warming to its power limit): in
 * tune_round_order's order with an even number of rounds, tune_round_figure
 * gives each the same figure; in one fixed order (the re-timing's before),
 * the later items read slower.
 */
static void
test_round_order_cancels_drift(void **state)
{
	const double cost = 1.0, drift = 0.01;
	double t[3][8], fixed[3][8];
	int seen[3], e = 0;

	(void)state;
	for (int r = 0; r < 8; r++) {
		memset(seen, 0, sizeof(seen));
		for (int i = 0; i < 3; i++) {
			int c = tune_round_order(r, i, 3);

			assert_true(c >= 0 && c < 3 && !seen[c]); /* each item once a round */
			seen[c] = 1;
			t[c][r] = cost + drift * e;
			fixed[i][r] = cost + drift * e++;
		}
	}
	for (int c = 1; c < 3; c++) {
		assert_true(fabs(tune_round_figure(t[c], 8) - tune_round_figure(t[0], 8)) < 1e-12);
		assert_true(tune_round_figure(fixed[c], 8) >
		            tune_round_figure(fixed[0], 8) + drift / 2);
	}
	/* Pairs' means, their median; a last odd round counts alone. */
	assert_true(fabs(tune_round_figure((double[]){1, 3, 10, 20, 2}, 5) - 2) < 1e-12);
	assert_true(fabs(tune_round_figure((double[]){1, 3, 5, 7}, 4) - 4) < 1e-12);
	assert_true(fabs(tune_round_figure((double[]){4}, 1) - 4) < 1e-12);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_order_cancels_drift),
	    cmocka_unit_test(test_space_enumeration),
	    cmocka_unit_test(test_space_constraints),
	    cmocka_unit_test(test_strategies_find_planted_optimum),
	    cmocka_unit_test(test_reanneal_crosses_ridge),
	    cmocka_unit_test(test_surrogate_finds_lone_spike),
	    cmocka_unit_test(test_exhaustive_is_exact),
	    cmocka_unit_test(test_replay_deterministic),
	    cmocka_unit_test(test_planted_wrong_result_caught),
	    cmocka_unit_test(test_crash_and_hang_isolated),
	    cmocka_unit_test(test_child_closes_inherited_fds),
	    cmocka_unit_test(test_run_with_store_repeats_nothing),
	    cmocka_unit_test(test_run_says_why_nothing_ran),
	    cmocka_unit_test(test_run_retries_host_outcomes),
	    cmocka_unit_test(test_seed_set),
	    cmocka_unit_test(test_abort_records_nothing),
	};
	int rc;

	/* The evaluation process is this program again (kernels/measure-proc.c). */
	if ((rc = tune_evaluator_child(argc, argv)) >= 0)
		return rc;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
