/*
 * A vendor library's own solutions against its default choice, on the LLM
 * shape families (kernels/families.h), in one process: for each problem the
 * tuner's run (tune_run over the library's candidate list, exhaustive up to
 * --budget candidates, every candidate checked against the default's output
 * on the same random inputs, the best three and the default re-timed in
 * interleaved rounds) through the vendor-solution backend, on one device
 * context. A winner counts ("written": what the daemon would put in an
 * override) only when it beat the default by more than the rounds' spread
 * (p80 of its rounds under p20 of the default's); otherwise the default
 * stands and the problem's speed-up is 1.0. With cuBLASLt, cuBLAS's own
 * cublasGemmEx / cublasSgemm is timed too, on the same buffers, the same way.
 *
 *   bench-vendor-gemm [--backend cublaslt|rocblas|hipblaslt] [--library PATH]
 *       [--sysroot DIR] [--dtype fp16,bf16,fp32] [--tokens 1,16,512,4096]
 *       [--layer gate_up] [--budget 64] [--runs 5] [--rounds 5]
 *       [--warmup-ms 10] [--seconds S] [--shuffle] [--csv FILE] [--no-cublas]
 *
 * Problems run tokens by tokens, each layer in each dtype; --shuffle runs
 * them in a fixed shuffled order instead, so that a run --seconds cuts short
 * still samples every kind.
 *
 * One line per problem, then the geometric means of the speed-ups (all
 * problems, and the written ones) and the least written speed-up.
 * docs/PERF.md ("Vendor solutions") has the H200's figures and the command.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gpu-gemm/cublas.h"
#include "common/error.h"
#include "kernels/families.h"
#include "kernels/measure.h"
#include "kernels/tune.h"
#include "kernels/vendor.h"

struct opts {
	const char *backend, *library, *sysroot, *dtypes, *tokens, *layer, *csv;
	int budget, runs, rounds, cublas, shuffle;
	double warmup_ms, seconds;
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
usage(void)
{
	fprintf(stderr, "usage: bench-vendor-gemm [--backend NAME] [--library PATH] [--sysroot DIR] "
	                "[--dtype LIST] [--tokens LIST] [--layer NAME] [--budget N] [--runs N] "
	                "[--rounds N] [--warmup-ms MS] [--seconds S] [--shuffle] [--csv FILE] "
	                "[--no-cublas]\n");
	return 2;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cublaslt";
	o->dtypes = "fp16,bf16,fp32";
	o->budget = 64;
	o->runs = 5;
	o->rounds = 5;
	o->warmup_ms = 10;
	o->cublas = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-cublas")) {
			o->cublas = 0;
			continue;
		}
		if (!strcmp(a, "--shuffle")) {
			o->shuffle = 1;
			continue;
		}
		if (v == NULL)
			return usage();
		i++;
		if (!strcmp(a, "--backend"))
			o->backend = v;
		else if (!strcmp(a, "--library"))
			o->library = v;
		else if (!strcmp(a, "--sysroot"))
			o->sysroot = v;
		else if (!strcmp(a, "--dtype"))
			o->dtypes = v;
		else if (!strcmp(a, "--tokens"))
			o->tokens = v;
		else if (!strcmp(a, "--layer"))
			o->layer = v;
		else if (!strcmp(a, "--csv"))
			o->csv = v;
		else if (!strcmp(a, "--budget"))
			o->budget = atoi(v);
		else if (!strcmp(a, "--runs"))
			o->runs = atoi(v);
		else if (!strcmp(a, "--rounds"))
			o->rounds = atoi(v);
		else if (!strcmp(a, "--warmup-ms"))
			o->warmup_ms = atof(v);
		else if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else
			return usage();
	}
	return o->budget > 0 && o->runs > 0 && o->rounds > 0 ? 0 : usage();
}

/* The token counts asked for, or every family count: decode, then prefill. */
static int
token_list(const char *s, int64_t *out, int max)
{
	int n = 0;

	if (s == NULL) {
		for (int i = 0; tune_family_decode[i] && n < max; i++)
			out[n++] = tune_family_decode[i];
		for (int i = 0; tune_family_prefill[i] && n < max; i++)
			out[n++] = tune_family_prefill[i];
		return n;
	}
	while (*s && n < max) {
		char *end;
		long long v = strtoll(s, &end, 10);

		if (end == s || v <= 0)
			return -1;
		out[n++] = v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

struct totals {
	int problems, written, wrong, failed;
	double log_all, log_written, min_written, max_written;
};

/* Tunes one problem; prints its line. */
static void
one(struct measure *m, const struct backend_device_info *dev, const char *hash,
    const struct opts *o, const struct tune_family_gemm *g, int64_t tokens, enum gemm_dtype dt,
    FILE *csv, struct totals *t)
{
	struct gemm_problem p;
	struct tune_evaluator *ev = NULL;
	struct space_def *space = malloc(sizeof(*space));
	struct tune_store st;
	struct tune_key key;
	struct tune_opts to;
	struct tune_summary sum;
	struct tune_result cr;
	char why[512] = "", shape[64], win[SPACE_KEY_MAX] = "-";
	double rel = -1, cublas_ms = NAN, speedup = 1.0;
	int written = 0, rc;

	tune_family_problem(g, tokens, dt, &p);
	snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)p.m, (long long)p.n,
	         (long long)p.k);
	if (space == NULL || tune_store_mem_new(&st) < 0) {
		free(space);
		return;
	}
	rc = measure_local_evaluator(m, &p, &ev, space, why, sizeof(why));
	if (rc == 0) {
		tune_key_init(&key, dev, hash, &p);
		memset(&to, 0, sizeof(to));
		to.strategy = "exhaustive";
		to.budget = o->budget;
		to.topk = 3;
		to.retime_rounds = o->rounds;
		to.store = &st;
		rc = tune_run(ev, &key, space, &p, dev, &to, &sum, why, sizeof(why));
	}
	if (rc == 0 && o->cublas && !strcmp(o->backend, "cublaslt") &&
	    measure_local_eval_call(m, bench_cublas_gemm, NULL, 0, &cr, &rel) == 0 &&
	    cr.outcome == TUNE_OK)
		cublas_ms = cr.median_ms;
	t->problems++;
	if (rc < 0) {
		t->failed++;
		printf("%-5s TN %-17s %-32s %-7s failed: %s\n", gemm_dtype_name(dt), shape, g->family,
		       g->layer, why);
		goto out;
	}
	t->wrong += sum.outcomes.n[TUNE_WRONG_RESULT];
	written = strcmp(sum.best, "SOL=0") != 0 && sum.best_hi_ms < sum.default_lo_ms;
	if (written) {
		speedup = sum.default_ms / sum.best_ms;
		t->written++;
		t->log_written += log(speedup);
		if (t->written == 1 || speedup < t->min_written)
			t->min_written = speedup;
		if (speedup > t->max_written)
			t->max_written = speedup;
		snprintf(win, sizeof(win), "%s", sum.best);
		if (!strcmp(o->backend, "cublaslt")) {
			int64_t sol = atoll(sum.best + 4);

			backend_cublaslt_describe(sol, win, sizeof(win));
		}
	}
	t->log_all += log(speedup);
	printf("%-5s TN %-17s %-32s %-7s %3d cand %2d wrong  default %9.4f  cublas %9.4f  best "
	       "%9.4f  x%.3f %s %s\n",
	       gemm_dtype_name(dt), shape, g->family, g->layer, space->params[0].nvalues,
	       sum.outcomes.n[TUNE_WRONG_RESULT], sum.default_ms, cublas_ms, sum.best_ms, speedup,
	       written ? "written" : "default stands", win);
	if (csv != NULL)
		fprintf(csv, "%s,TN,%s,\"%s\",%s,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%d,%s\n",
		        gemm_dtype_name(dt), shape, g->family, g->layer, space->params[0].nvalues,
		        sum.outcomes.n[TUNE_WRONG_RESULT], sum.default_ms, sum.default_lo_ms,
		        sum.best_ms, sum.best_hi_ms, cublas_ms, speedup, written, sum.best);
out:
	fflush(stdout);
	tune_evaluator_close(ev);
	tune_store_mem_free(&st);
	free(space);
}

int
main(int argc, char **argv)
{
	const struct backend_ops *ops;
	struct tune_measure_opts mo;
	struct backend_device_info dev;
	struct measure *m;
	struct totals t;
	struct opts o;
	int64_t tokens[32];
	enum gemm_dtype dts[GEMM_DTYPE_COUNT];
	char hash[17], why[512] = "", cbv[64] = "";
	int ntok, ndt = 0, rc;
	FILE *csv = NULL;
	double start = now_s();

	if ((rc = tune_evaluator_child(argc, argv)) >= 0)
		return rc;
	if (parse(argc, argv, &o) < 0)
		return 2;
	if ((ntok = token_list(o.tokens, tokens, 32)) <= 0)
		return usage();
	for (const char *s = o.dtypes; *s && ndt < GEMM_DTYPE_COUNT;) {
		char name[16];
		size_t n = strcspn(s, ",");

		snprintf(name, sizeof(name), "%.*s", (int)n, s);
		if (gemm_dtype_parse(name, &dts[ndt]) < 0)
			return usage();
		ndt++;
		s += n + (s[n] == ',');
	}
	ops = backend_find(o.backend);
	if (ops == NULL || !ops->vendor) {
		fprintf(stderr, "bench-vendor-gemm: %s is not a vendor-solution backend here\n",
		        o.backend);
		return 2;
	}
	memset(&mo, 0, sizeof(mo));
	mo.runs = o.runs;
	mo.warmup_ms = o.warmup_ms;
	mo.seed = 7;
	if (o.library)
		snprintf(mo.library, sizeof(mo.library), "%s", o.library);
	if (o.sysroot)
		snprintf(mo.sysroot, sizeof(mo.sysroot), "%s", o.sysroot);
	if (measure_local_open(ops, 0, &mo, &m, &dev, hash, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-vendor-gemm: %s\n", why);
		return 77;
	}
	if (o.cublas && !strcmp(o.backend, "cublaslt") &&
	    bench_cublas_open(cbv, sizeof(cbv), why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-vendor-gemm: no cuBLAS column: %s\n", why);
		o.cublas = 0;
	}
	printf("# %s on %s (%s, %d compute units), %s; %s; library %s sha256:%.16s\n", o.backend,
	       dev.name, dev.arch, dev.compute_units, dev.driver_version, dev.runtime_version,
	       dev.library, dev.library_digest);
	printf("# budget %d candidates, %d runs, %d interleaved rounds; times in ms (median); %s\n",
	       o.budget, o.runs, o.rounds, o.cublas ? cbv : "no cuBLAS column");
	if (o.csv != NULL && (csv = fopen(o.csv, "w")) != NULL)
		fprintf(csv, "dtype,trans,shape,family,layer,candidates,wrong,default_ms,default_p20_"
		             "ms,best_ms,best_p80_ms,cublas_ms,speedup,written,winner\n");
	memset(&t, 0, sizeof(t));
	{
		/* Every (tokens, layer, dtype), in a fixed shuffled order: a run cut
		 * short by --seconds still samples every kind of problem. */
		int cap = ntok * 16 * ndt, n = 0, (*job)[3] = malloc((size_t)cap * sizeof(*job));
		uint64_t seed = 1;

		if (job == NULL)
			return 1;
		for (int ti = 0; ti < ntok; ti++)
			for (int gi = 0; tune_family_gemms[gi].family != NULL; gi++)
				for (int di = 0; di < ndt && n < cap; di++)
					if (o.layer == NULL || !strcmp(o.layer, tune_family_gemms[gi].layer)) {
						job[n][0] = ti;
						job[n][1] = gi;
						job[n][2] = di;
						n++;
					}
		for (int i = n - 1; o.shuffle && i > 0; i--) {
			int j, tmp[3];

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			j = (int)((seed >> 33) % (uint64_t)(i + 1));
			memcpy(tmp, job[i], sizeof(tmp));
			memcpy(job[i], job[j], sizeof(tmp));
			memcpy(job[j], tmp, sizeof(tmp));
		}
		for (int i = 0; i < n; i++) {
			if (o.seconds > 0 && now_s() - start > o.seconds)
				break;
			one(m, &dev, hash, &o, &tune_family_gemms[job[i][1]], tokens[job[i][0]],
			    dts[job[i][2]], csv, &t);
		}
		free(job);
	}
	printf("# %d problems (%d failed), %d written; geometric mean speed-up %.4f over all "
	       "(1.0 where the default stands), %.4f over the written; written from x%.3f to "
	       "x%.3f; %d wrong results caught; %.0f s\n",
	       t.problems, t.failed, t.written,
	       t.problems - t.failed > 0 ? exp(t.log_all / (t.problems - t.failed)) : 1.0,
	       t.written > 0 ? exp(t.log_written / t.written) : 1.0, t.written ? t.min_written : 1.0,
	       t.written ? t.max_written : 1.0, t.wrong, now_s() - start);
	if (csv != NULL)
		fclose(csv);
	if (o.cublas && !strcmp(o.backend, "cublaslt"))
		bench_cublas_close();
	measure_local_close(m);
	return t.failed > 0 && t.failed == t.problems ? 1 : 0;
}
