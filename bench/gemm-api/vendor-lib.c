/*
 * bench-gemm-api-cublas --vendor: the tuned library with vendor candidates
 * (vendor-lib.h). Both sides are measured the same way, by the tuner's own
 * measurement in this process (kernels/measure.h: input sets rotated past the
 * L2, checked against the double reference, median of timed runs), rocmd's on
 * the CUDA backend and cuBLASLt's on the cublaslt backend, both on the
 * device's primary context. The final side-by-side runs twice: with the
 * input sets rotated (operands out of the L2, as a program's next layer
 * finds them) and on one set (back-to-back calls on the same operands, the
 * L2 warm); the regime where rocmd's choice compares worse decides, so an
 * entry is never slower than the vendor's in either. cuBLASLt's side is its
 * heuristic's first choice unless a tuned solution beat it clearly
 * (vendor_pick).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gemm-api/vendor-lib.h"
#include "bench/gpu-gemm/suite.h"
#include "kernels/backend.h"
#include "kernels/measure.h"
#include "kernels/tunedlib.h"

/* The library to extend: LIBDIR's, else an empty one for DEV. */
static int
start_library(const char *libdir, const struct backend_device_info *dev, const char *hash,
              struct tunedlib **lib, char *why, size_t whylen)
{
	struct gemm_problem any;
	struct tune_key id;

	if (libdir != NULL)
		return tunedlib_open(libdir, lib, why, whylen);
	gemm_problem_init(&any, GEMM_FP32, GEMM_N, GEMM_N, 1, 1, 1, 1);
	tune_key_init(&id, dev, hash, &any);
	return tunedlib_new(&id, lib);
}

/* rocmd's choice for P (BASE's query) measured on MC: its median ms, or < 0. */
static double
own_ms(rocmd_gemm_t *base, struct measure *mc, const struct gemm_problem *p, char *cfg,
       size_t cfglen)
{
	const struct space_def *space;
	struct rocmd_gemm_choice ch;
	struct tune_result r;
	char why[256];
	double rel;

	if (rocmd_gemm_query(base, (enum rocmd_gemm_dtype)p->dtype, (enum rocmd_gemm_op)p->ta,
	                     (enum rocmd_gemm_op)p->tb, p->m, p->n, p->k, p->lda, p->ldb, p->ldc,
	                     &ch) < 0 ||
	    measure_local_set_problem(mc, p, &space, why, sizeof(why)) < 0 ||
	    measure_local_eval(mc, ch.config, 0, &r, &rel) < 0 || r.outcome != TUNE_OK)
		return -1;
	snprintf(cfg, cfglen, "%s", ch.config);
	return r.median_ms;
}

/* rocmd's CFG on MC and the vendor's VCFG on MV (both loaded with the same
 * problem) timed in ROUNDS interleaved rounds, the order reversed every other
 * round (tune_round_order): each side's figure of its rounds' medians
 * (tune_round_figure) into *OWN and *VEN, so that clock drift over the
 * rounds reaches both alike. 0, or -1 when either failed to run. */
static int
ab_ms(struct measure *mc, const char *cfg, struct measure *mv, const char *vcfg, int rounds,
      double *own, double *ven)
{
	struct measure *m[2] = {mc, mv};
	const char *key[2] = {cfg, vcfg};
	double t[2][16], rel;
	struct tune_result r;
	int i, w, n;

	for (n = 0; n < rounds && n < 16; n++)
		for (i = 0; i < 2; i++) {
			w = tune_round_order(n, i, 2);
			if (measure_local_eval(m[w], key[w], TUNE_EVAL_TIME_ONLY, &r, &rel) < 0 ||
			    r.outcome != TUNE_OK)
				return -1;
			t[w][n] = r.median_ms;
		}
	*own = tune_round_figure(t[0], n);
	*ven = tune_round_figure(t[1], n);
	return 0;
}

/* The side-by-side of ab_ms() on the rotated sets (MC, MV) and on one set
 * (MC1, MV1, which load P here): the pair of the regime where rocmd's CFG
 * compares worse to the vendor's VCFG, its name into *REGIME. */
static int
ab_regimes(struct measure *mc, struct measure *mv, struct measure *mc1, struct measure *mv1,
           const struct gemm_problem *p, const char *key, const char *cfg, const char *vcfg,
           double *own, double *ven, const char **regime)
{
	const struct space_def *space;
	double own1, ven1;
	char why[256];

	if (ab_ms(mc, cfg, mv, vcfg, 6, own, ven) < 0)
		return -1;
	*regime = "rotated";
	if (measure_local_set_problem(mc1, p, &space, why, sizeof(why)) < 0 ||
	    measure_local_set_problem(mv1, p, &space, why, sizeof(why)) < 0 ||
	    ab_ms(mc1, cfg, mv1, vcfg, 6, &own1, &ven1) < 0)
		return 0;
	printf("# %-24s side by side: rocmd %9.4f  cuBLASLt %9.4f rotated, %9.4f  %9.4f one set\n",
	       key, *own, *ven, own1, ven1);
	if (own1 / ven1 > *own / *ven) {
		*own = own1;
		*ven = ven1;
		*regime = "one set";
	}
	return 0;
}

/*
 * cuBLASLt's solution for P from the tuning in *SUM: its heuristic's first
 * choice (what cublasGemmEx runs) unless a tuned one beat it by more than the
 * re-timing's spread (the daemon's rule for a vendor override,
 * daemon/tune/tune-override.c) and is not slower on one set either (MV1, P
 * loaded here). Its median ms into *MS.
 */
static const char *
vendor_pick(struct measure *mv1, const struct gemm_problem *p, const struct tune_summary *sum,
            double *ms)
{
	const struct space_def *space;
	double tuned, dflt;
	char why[256];

	*ms = sum->default_ms;
	if (!strcmp(sum->best, sum->default_key) || !(sum->best_hi_ms < sum->default_lo_ms))
		return sum->default_key;
	if (measure_local_set_problem(mv1, p, &space, why, sizeof(why)) < 0 ||
	    ab_ms(mv1, sum->best, mv1, sum->default_key, 6, &tuned, &dflt) < 0 || tuned > dflt)
		return sum->default_key;
	*ms = sum->best_ms;
	return sum->best;
}

/* cuBLASLt's candidates for P tuned on MV into *SUM. */
static int
vendor_tune(struct measure *mv, const struct backend_device_info *vdev, const char *vhash,
            const struct gemm_problem *p, int budget, struct tune_summary *sum, char *why,
            size_t whylen)
{
	struct space_def *space = malloc(sizeof(*space));
	struct tune_evaluator *ev = NULL;
	struct tune_store st;
	struct tune_key key;
	struct tune_opts to;
	int rc;

	if (space == NULL || tune_store_mem_new(&st) < 0) {
		free(space);
		return -1;
	}
	rc = measure_local_evaluator(mv, p, &ev, space, why, whylen);
	if (rc == 0) {
		tune_key_init(&key, vdev, vhash, p);
		memset(&to, 0, sizeof(to));
		to.strategy = "exhaustive";
		to.budget = budget;
		to.topk = 3;
		to.store = &st;
		rc = tune_run(ev, &key, space, p, vdev, &to, sum, why, whylen);
	}
	tune_evaluator_close(ev);
	tune_store_mem_free(&st);
	free(space);
	return rc;
}

int
vendor_library(rocmd_gemm_t *base, const char *libdir, const int *dtypes, double limit,
               int budget, char *dir, size_t dlen)
{
	const struct backend_ops *cuda = backend_find("cuda"), *lt = backend_find("cublaslt");
	struct backend_device_info dev, vdev;
	struct measure *mc = NULL, *mv = NULL, *mc1 = NULL, *mv1 = NULL;
	struct tune_measure_opts mo, mo1;
	struct tunedlib *lib = NULL;
	char hash[17], vhash[17], why[512] = "";
	int d, i, n, rc = -1, taken = 0, total = 0;

	memset(&mo, 0, sizeof(mo));
	mo.seed = 5;
	mo1 = mo;
	mo1.max_sets = 1;
	if (cuda == NULL || lt == NULL) {
		printf("bench-gemm-api-cublas: no cuda or cublaslt backend in this build\n");
		return -1;
	}
	if (measure_local_open(cuda, 0, &mo, &mc, &dev, hash, why, sizeof(why)) < 0 ||
	    measure_local_open(lt, 0, &mo, &mv, &vdev, vhash, why, sizeof(why)) < 0 ||
	    measure_local_open(cuda, 0, &mo1, &mc1, &dev, hash, why, sizeof(why)) < 0 ||
	    measure_local_open(lt, 0, &mo1, &mv1, &vdev, vhash, why, sizeof(why)) < 0 ||
	    start_library(libdir, &dev, hash, &lib, why, sizeof(why)) < 0) {
		printf("bench-gemm-api-cublas: %s\n", why);
		goto out;
	}
	printf("# vendor candidates: rocmd's choice and %s's tuned solution (exhaustive up to %d, "
	       "best 3 re-timed), both by the tuner's measurement; %s sha256:%.16s\n",
	       vdev.runtime_version, budget, vdev.library, vdev.library_digest);
	for (d = 0; d < GEMM_DTYPE_COUNT; d++) {
		struct problem prs[64];

		if (!dtypes[d])
			continue;
		n = suite_problems((enum gemm_dtype)d, prs, 64);
		for (i = 0; i < n; i++) {
			struct gemm_problem p;
			struct tune_summary sum;
			char key[64], cfg[SPACE_KEY_MAX];
			const char *regime = "", *vcfg;
			double own, aown, ven;
			int r;

			if ((double)prs[i].m * (double)prs[i].n * (double)prs[i].k > limit)
				continue;
			gemm_problem_init(&p, prs[i].dt, prs[i].op[0] == 'T' ? GEMM_T : GEMM_N,
			                  prs[i].op[1] == 'T' ? GEMM_T : GEMM_N, prs[i].m, prs[i].n,
			                  prs[i].k, 1);
			gemm_problem_key(&p, key, sizeof(key));
			total++;
			own = own_ms(base, mc, &p, cfg, sizeof(cfg));
			if (own > 0 && tunedlib_add(lib, key, cfg, own, 0, why, sizeof(why)) < 0)
				own = -1;
			memset(&sum, 0, sizeof(sum));
			if (vendor_tune(mv, &vdev, vhash, &p, budget, &sum, why, sizeof(why)) < 0) {
				printf("# %-24s rocmd %9.4f  cuBLASLt failed: %.200s\n", key, own, why);
				continue;
			}
			/* The two re-timed side by side: what decides (and what the
			 * library records) is measured in the same rounds. */
			vcfg = vendor_pick(mv1, &p, &sum, &ven);
			if (own > 0 && ab_regimes(mc, mv, mc1, mv1, &p, key, cfg, vcfg, &aown, &ven,
			                          &regime) == 0) {
				printf("# %-24s side by side (%s decides): rocmd %9.4f  cuBLASLt %9.4f\n",
				       key, regime, aown, ven);
				tunedlib_add(lib, key, cfg, aown, 0, why, sizeof(why));
				own = aown;
			}
			r = tunedlib_offer_vendor(lib, key, "cublaslt", vdev.library_digest, vcfg,
			                          ven, why, sizeof(why));
			taken += r > 0;
			printf("# %-24s rocmd %9.4f  cuBLASLt %9.4f (%s, %s)  -> %s\n", key, own,
			       ven, vcfg, vcfg == sum.best ? "tuned" : "its heuristic's",
			       r > 0    ? "cuBLASLt"
			       : r == 0 ? "rocmd"
			                : why);
		}
	}
	printf("# vendor candidates: %d problems, cuBLASLt's solution taken for %d\n", total, taken);
	if (dir[0] == '\0')
		snprintf(dir, dlen, "/tmp/rocmd-vendor-XXXXXX");
	if ((strncmp(dir, "/tmp/rocmd-vendor-", 18) == 0 && mkdtemp(dir) == NULL) ||
	    tunedlib_write(lib, dir, why, sizeof(why)) < 0) {
		printf("bench-gemm-api-cublas: cannot write the library: %s\n", why);
		dir[0] = '\0';
		goto out;
	}
	rc = 0;
out:
	tunedlib_free(lib);
	measure_local_close(mv1);
	measure_local_close(mc1);
	measure_local_close(mv);
	measure_local_close(mc);
	return rc;
}
