/*
 * Measurement of one candidate configuration, and its isolation.
 *
 * measure_*: opens the backend for one problem, uploads several sets of
 * random (never zero) inputs so that timed runs rotate through more data than
 * the last-level cache holds (up to max_sets), precomputes the double
 * reference for the checked entries, then per candidate: predicate, compile
 * (cached), resource check, one checked run, warm-up by time, N timed runs
 * with device events -> median, p20, p80 (a run is a burst of back-to-back
 * calls where one call is short, timed per call).
 *
 * tune_evaluator_*: the same behind a pipe to a child process. The parent
 * sends a configuration key and waits for the result with a watchdog; a child
 * that dies is a "crashed" outcome, one that overruns the timeout is killed
 * and "timeout". Either way the next request starts a fresh child. The parent
 * never opens the backend itself, so GPU contexts are only ever created in
 * children. The child process is this same program started again with a
 * hidden argument (tune_evaluator_child), started and watched through the
 * child-process layer (common/spawn.h; measure-proc.c holds the hidden
 * argument); the parent's side here, and the child's loop
 * (measure_child_serve), are one code path.
 *
 * measure_local_*: the same measurement in the calling process, one device
 * context and compile cache kept across problems, for programs that time our
 * configurations and another library's GEMM side by side on the same inputs
 * (bench/gpu-gemm; kernels/measure.h).
 */
#include "kernels/measure.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/spawn.h"
#include "kernels/measure-proc.h"
#include "kernels/tune.h"

/* A timed run's burst of back-to-back calls: about this long, at most this
 * many calls (measure_run_timed). */
#define MEASURE_BURST_MS 0.25
#define MEASURE_BURST_MAX 64

#define MEASURE_MAX_SETS 64
#define MEASURE_FULL_CHECK (1 << 22) /* multiply-adds checked entry by entry */
#define MEASURE_SAMPLES 512	     /* entries per batch item otherwise */

struct measure {
	const struct backend_ops *ops;
	struct backend_ctx *ctx;
	struct backend_device_info info;
	const struct space_def *space;
	struct backend_cache *cache;
	struct gemm_problem p;
	struct tune_measure_opts o;
	const char *src;
	size_t srclen;
	char source_hash[17];
	size_t sa, sb, sc; /* bytes per operand */
	int nsets;
	struct gemm_bufs sets[MEASURE_MAX_SETS];
	void *hc_init, *hout;
	int64_t nchk;
	int64_t *chk_pos; /* element offsets into C */
	double *chk_ref, *chk_scale;
	struct backend_event *e0, *e1;
	int warmed;	/* the first timed evaluation of this process has run */
	double rel_err; /* of the last checked run: max |C - ref| / max |ref| */
};

/* Frees what measure_load() made: the input sets and the checked entries. */
static void
measure_unload(struct measure *m)
{
	int i;

	for (i = 0; i < m->nsets; i++) {
		if (m->sets[i].a)
			m->ops->free(m->ctx, m->sets[i].a);
		if (m->sets[i].b)
			m->ops->free(m->ctx, m->sets[i].b);
		if (m->sets[i].c)
			m->ops->free(m->ctx, m->sets[i].c);
	}
	memset(m->sets, 0, sizeof(m->sets));
	m->nsets = 0;
	free(m->hc_init);
	free(m->hout);
	free(m->chk_pos);
	free(m->chk_ref);
	free(m->chk_scale);
	m->hc_init = m->hout = NULL;
	m->chk_pos = NULL;
	m->chk_ref = m->chk_scale = NULL;
	m->nchk = 0;
}

static void
measure_close(struct measure *m)
{
	if (m == NULL)
		return;
	if (m->ctx != NULL) {
		measure_unload(m);
		backend_cache_free(m->cache);
		if (m->e0)
			m->ops->event_destroy(m->ctx, m->e0);
		if (m->e1)
			m->ops->event_destroy(m->ctx, m->e1);
		m->ops->close(m->ctx);
	}
	free(m);
}

/* Reference values for the entries every candidate is checked on. */
static int
measure_prepare_check(struct measure *m, const void *ha, const void *hb)
{
	const struct gemm_problem *p = &m->p;
	int full = (double)p->m * p->n * p->k * p->batch <= MEASURE_FULL_CHECK;
	int64_t per = full ? p->m * p->n : MEASURE_SAMPLES + 4, bi, t, n = 0;
	uint64_t s = m->o.seed * 977 + 3;

	m->nchk = per * p->batch;
	m->chk_pos = malloc(m->nchk * sizeof(int64_t));
	m->chk_ref = malloc(m->nchk * sizeof(double));
	m->chk_scale = malloc(m->nchk * sizeof(double));
	if (m->chk_pos == NULL || m->chk_ref == NULL || m->chk_scale == NULL)
		return ROCMD_ENOMEM;
	for (bi = 0; bi < p->batch; bi++) {
		for (t = 0; t < per; t++) {
			int64_t i, j;

			if (full) {
				i = t % p->m;
				j = t / p->m;
			} else if (t < 4) {
				i = (t & 1) ? p->m - 1 : 0;
				j = (t & 2) ? p->n - 1 : 0;
			} else {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				i = (int64_t)((s >> 33) % (uint64_t)p->m);
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				j = (int64_t)((s >> 33) % (uint64_t)p->n);
			}
			m->chk_pos[n] = bi * p->stride_c + i + j * p->ldc;
			m->chk_ref[n] = gemm_ref_entry(p, ha, hb, m->hc_init, bi, i, j,
						       &m->chk_scale[n]);
			n++;
		}
	}
	return 0;
}

/* Opens device INDEX of OPS: context, kernel source, compile cache, events. */
static int
measure_open_device(const struct backend_ops *ops, int index, const struct tune_measure_opts *o,
		    struct measure **out, char *why, size_t whylen)
{
	struct measure *m;
	int err;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return ROCMD_ENOMEM;
	m->ops = ops;
	m->o = *o;
	m->rel_err = -1.0;
	if (ops->open_opts != NULL) {
		struct backend_open_opts oo = {
		    .library = o->library[0] ? o->library : NULL,
		    .tensile_dir = o->tensile_dir[0] ? o->tensile_dir : NULL,
		    .sysroot = o->sysroot[0] ? o->sysroot : NULL,
		};

		err = ops->open_opts(index, &oo, &m->ctx, &m->info, why, whylen);
	} else {
		err = ops->open(index, &m->ctx, &m->info, why, whylen);
	}
	if (err < 0) {
		m->ctx = NULL;
		goto fail;
	}
	m->src = ops->kernel_source(m->ctx, &m->srclen);
	backend_source_hash(ops, m->ctx, m->source_hash);
	if ((err = backend_cache_new(ops, m->ctx, &m->info, &m->cache)) < 0 ||
	    (err = ops->event_create(m->ctx, &m->e0)) < 0 ||
	    (err = ops->event_create(m->ctx, &m->e1)) < 0)
		goto fail;
	*out = m;
	return 0;
fail:
	measure_close(m);
	return err;
}

/*
 * A vendor-solution backend's candidates are checked against the library's
 * own default choice on the same inputs (set 0): its output replaces the
 * double reference of every checked entry (whose term scale stays), and a
 * candidate may differ from it by twice the tolerance (measure_run_timed).
 * The default itself is first checked against the double reference, with the
 * tolerance rocmd's own kernels meet: a problem the vendor's default gets
 * wrong is refused, so no vendor entry is ever made for it.
 */
static int
measure_vendor_reference(struct measure *m, char *why, size_t whylen)
{
	int64_t k;
	int err;

	if (m->ops->gemm_reference == NULL)
		return 0;
	if ((err = m->ops->copy_h2d(m->ctx, m->sets[0].c, m->hc_init, m->sc)) < 0)
		return err;
	err = m->ops->gemm_reference(m->ctx, &m->p, &m->sets[0]);
	if (err == 0)
		err = m->ops->synchronize(m->ctx);
	if (err < 0) {
		snprintf(why, whylen, "the library's default solution does not run this problem");
		return err;
	}
	if ((err = m->ops->copy_d2h(m->ctx, m->hout, m->sets[0].c, m->sc)) < 0)
		return err;
	for (k = 0; k < m->nchk; k++) {
		double got = gemm_load(m->p.dtype, m->hout, m->chk_pos[k]);

		if (!gemm_within_tol_of(&m->p, got, m->chk_ref[k], m->chk_scale[k], 1.0)) {
			snprintf(why, whylen,
				 "the library's default solution gives a wrong result for this "
				 "problem (an entry %g, the double reference %g)",
				 got, m->chk_ref[k]);
			return ROCMD_ECORRUPT;
		}
	}
	for (k = 0; k < m->nchk; k++)
		m->chk_ref[k] = gemm_load(m->p.dtype, m->hout, m->chk_pos[k]);
	return m->ops->copy_h2d(m->ctx, m->sets[0].c, m->hc_init, m->sc);
}

/*
 * Makes P the problem measured: the backend's space for it, enough input sets
 * that one rotation spans twice the LLC (within limits), and the reference of
 * the checked entries. Whatever an earlier problem had is freed first.
 */
static int
measure_load(struct measure *m, const struct gemm_problem *p, char *why, size_t whylen)
{
	const struct tune_measure_opts *o = &m->o;
	const struct backend_ops *ops = m->ops;
	void *ha = NULL, *hb = NULL;
	size_t esz = gemm_dtype_size(p->dtype);
	double per_set;
	int err, i;

	measure_unload(m);
	err = gemm_problem_check(p, why, whylen);
	if (err < 0)
		return err;
	m->p = *p;
	m->space = ops->space(m->ctx, p);
	m->sa = (size_t)gemm_elems_a(p) * esz;
	m->sb = (size_t)gemm_elems_b(p) * esz;
	m->sc = (size_t)gemm_elems_c(p) * esz;
	per_set = (double)(m->sa + m->sb + m->sc);
	m->nsets = (int)ceil(2.0 * (double)m->info.llc_bytes / per_set);
	if (m->nsets < 2)
		m->nsets = 2;
	if (m->nsets > o->max_sets)
		m->nsets = o->max_sets;
	while (m->nsets > 1 && per_set * m->nsets > 1024.0 * 1024 * 1024)
		m->nsets--;
	ha = malloc(m->sa);
	hb = malloc(m->sb);
	m->hc_init = malloc(m->sc);
	m->hout = malloc(m->sc);
	if (ha == NULL || hb == NULL || m->hc_init == NULL || m->hout == NULL) {
		err = ROCMD_ENOMEM;
		goto fail;
	}
	for (i = 0; i < m->nsets; i++) {
		uint64_t sd = o->seed * 1000003 + (uint64_t)i * 3;

		gemm_fill_random(p->dtype, ha, gemm_elems_a(p), sd);
		gemm_fill_random(p->dtype, hb, gemm_elems_b(p), sd + 1);
		gemm_fill_random(p->dtype, m->hc_init, gemm_elems_c(p), sd + 2);
		if ((err = ops->alloc(m->ctx, m->sa, &m->sets[i].a)) < 0 ||
		    (err = ops->alloc(m->ctx, m->sb, &m->sets[i].b)) < 0 ||
		    (err = ops->alloc(m->ctx, m->sc, &m->sets[i].c)) < 0) {
			snprintf(why, whylen, "cannot allocate input set %d", i);
			goto fail;
		}
		if ((err = ops->copy_h2d(m->ctx, m->sets[i].a, ha, m->sa)) < 0 ||
		    (err = ops->copy_h2d(m->ctx, m->sets[i].b, hb, m->sb)) < 0 ||
		    (err = ops->copy_h2d(m->ctx, m->sets[i].c, m->hc_init, m->sc)) < 0)
			goto fail;
		if (i == 0) {
			err = measure_prepare_check(m, ha, hb);
			if (err < 0)
				goto fail;
		}
	}
	/* hc_init now holds the last set's C; the check runs on set 0: regenerate. */
	gemm_fill_random(p->dtype, m->hc_init, gemm_elems_c(p), o->seed * 1000003 + 2);
	if (ops->vendor && (err = measure_vendor_reference(m, why, whylen)) < 0)
		goto fail;
	free(ha);
	free(hb);
	return 0;
fail:
	free(ha);
	free(hb);
	measure_unload(m);
	return err;
}

static int
measure_open(const struct backend_ops *ops, int index, const struct gemm_problem *p,
	     const struct tune_measure_opts *o, struct measure **out, char *why, size_t whylen)
{
	struct measure *m;
	int err;

	*out = NULL;
	err = gemm_problem_check(p, why, whylen);
	if (err < 0)
		return err;
	err = measure_open_device(ops, index, o, &m, why, whylen);
	if (err < 0)
		return err;
	err = measure_load(m, p, why, whylen);
	if (err < 0) {
		measure_close(m);
		return err;
	}
	*out = m;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Linear interpolation between order statistics. */
static double
quantile(const double *sorted, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;

	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

static void
set_detail(struct tune_result *r, enum tune_outcome o, const char *fmt, const char *arg)
{
	r->outcome = o;
	snprintf(r->detail, sizeof(r->detail), fmt, arg);
}

/*
 * One GEMM on set BUFS of the measured problem, enqueued on the backend's
 * stream: one of our compiled configurations (run_module) or another
 * library's call (measure_local_eval_call).
 */
struct measure_run {
	int (*gemm)(void *arg, const struct gemm_problem *p, const struct gemm_bufs *bufs);
	void *arg;
};

struct module_run {
	struct measure *m;
	struct backend_module *mod;
	const struct tune_config *cfg;
};

static int
run_module(void *arg, const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	struct module_run *x = arg;

	return x->m->ops->gemm(x->m->ctx, x->mod, x->cfg, p, bufs);
}

static int
run_gemm(struct measure *m, const struct measure_run *run, int set)
{
	return run->gemm(run->arg, &m->p, &m->sets[set]);
}

/*
 * Checks RUN once against the reference (unless TUNE_EVAL_TIME_ONLY), warms
 * it up by time and times it: the result in R, m->rel_err set by the check.
 * Failures of the GEMM are outcomes in R; errors are the harness's own.
 */
static int
measure_run_timed(struct measure *m, const struct measure_run *run, int flags,
		  struct tune_result *r)
{
	const struct gemm_problem *p = &m->p;
	double t[256], start;
	int err, i, n, set = 0;

	m->rel_err = -1.0;
	if (!(flags & TUNE_EVAL_TIME_ONLY)) {
		int64_t bad = 0, k;
		double worst = 0.0, max_err = 0.0, max_ref = 0.0;

		if ((err = m->ops->copy_h2d(m->ctx, m->sets[0].c, m->hc_init, m->sc)) < 0)
			return err;
		err = run_gemm(m, run, 0);
		if (err == 0)
			err = m->ops->synchronize(m->ctx);
		if (err < 0) {
			set_detail(r, TUNE_LAUNCH_FAILED, "launch failed: error %s",
				   err == ROCMD_EIO ? "io" : "other");
			return 0;
		}
		if ((err = m->ops->copy_d2h(m->ctx, m->hout, m->sets[0].c, m->sc)) < 0)
			return err;
		for (k = 0; k < m->nchk; k++) {
			double got = gemm_load(p->dtype, m->hout, m->chk_pos[k]);
			double e = isfinite(got) ? fabs(got - m->chk_ref[k]) : INFINITY;

			if (e > max_err)
				max_err = e;
			if (fabs(m->chk_ref[k]) > max_ref)
				max_ref = fabs(m->chk_ref[k]);
			if (!gemm_within_tol_of(p, got, m->chk_ref[k], m->chk_scale[k],
						m->ops->vendor ? 2.0 : 1.0)) {
				bad++;
				if (e > worst)
					worst = e;
			}
		}
		m->rel_err = max_ref > 0 ? max_err / max_ref : max_err;
		if (bad > 0) {
			r->outcome = TUNE_WRONG_RESULT;
			snprintf(r->detail, sizeof(r->detail),
				 "%" PRId64 " of %" PRId64 " checked entries wrong, worst error %g",
				 bad, m->nchk, worst);
			return 0;
		}
	}
	/*
	 * Warm up by time (clocks, caches, lazy allocations), at least twice.
	 * The first evaluation of a process also pays for what no later one
	 * does (worker threads started, every input set's pages faulted in,
	 * clocks ramping up from idle): measured, it read ~35% slow, and it is
	 * always the default configuration. It therefore warms up ten times as
	 * long and runs over every input set first.
	 */
	double warm_ms = m->warmed ? m->o.warmup_ms : 10 * m->o.warmup_ms;
	int warm_min = m->warmed ? 2 : (m->nsets > 2 ? m->nsets : 2);

	m->warmed = 1;
	start = measure_mono_ms();
	for (i = 0; i < warm_min || measure_mono_ms() - start < warm_ms; i++) {
		set = (set + 1) % m->nsets;
		err = run_gemm(m, run, set);
		if (err == 0)
			err = m->ops->synchronize(m->ctx);
		if (err < 0) {
			set_detail(r, TUNE_LAUNCH_FAILED, "%s", "launch failed during warm-up");
			return 0;
		}
	}
	/*
	 * Each timed run is a burst of calls enqueued back to back between two
	 * events, as a program calls: one call alone between events would also
	 * time the device idling while the host enqueues it (3-15 us a call,
	 * the vendor libraries' more than ours), which is hidden behind the
	 * previous call in a program and is not the kernel's. The burst lasts
	 * about MEASURE_BURST_MS by the warm-up's pace (synchronized calls, an
	 * upper bound of a call's time), so long kernels run once a run.
	 */
	double pace = (measure_mono_ms() - start) / i;
	int burst = m->o.burst > 0 ? m->o.burst : pace > 0 ? (int)ceil(MEASURE_BURST_MS / pace) : 1, b;

	if (burst > MEASURE_BURST_MAX)
		burst = MEASURE_BURST_MAX;
	if (burst < 1)
		burst = 1;
	n = m->o.runs > 256 ? 256 : m->o.runs;
	for (i = 0; i < n; i++) {
		if ((err = m->ops->event_record(m->ctx, m->e0)) < 0)
			return err;
		for (b = 0, err = 0; b < burst && err == 0; b++) {
			set = (set + 1) % m->nsets;
			err = run_gemm(m, run, set);
		}
		if (err < 0) {
			set_detail(r, TUNE_LAUNCH_FAILED, "%s", "launch failed during timing");
			return 0;
		}
		if ((err = m->ops->event_record(m->ctx, m->e1)) < 0 ||
		    (err = m->ops->event_elapsed(m->ctx, m->e0, m->e1, &t[i])) < 0)
			return err;
		t[i] /= burst;
	}
	qsort(t, n, sizeof(double), cmp_double);
	r->outcome = TUNE_OK;
	r->runs = n;
	r->median_ms = quantile(t, n, 0.5);
	r->p20_ms = quantile(t, n, 0.2);
	r->p80_ms = quantile(t, n, 0.8);
	r->gflops = r->median_ms > 0 ? gemm_flops(p) / (r->median_ms * 1e6) : 0.0;
	return 0;
}

/*
 * Measures configuration KEY of SPACE: m->space (the tuner's space for the
 * problem), or another space of the same backend (measure_local_eval_in).
 */
static int
measure_eval(struct measure *m, const struct space_def *space, const char *key, int flags,
	     struct tune_result *r)
{
	const struct gemm_problem *p = &m->p;
	struct space_point pt;
	struct tune_config cfg;
	struct backend_module *mod = NULL;
	struct module_run mr;
	struct measure_run run;
	char defstore[SPACE_MAX_PARAMS][40];
	const char *defs[SPACE_MAX_PARAMS];
	char log[512] = "", why[160] = "";
	int nd, err;

	memset(r, 0, sizeof(*r));
	m->rel_err = -1.0;
	if (space_key_parse(space, key, &pt) < 0) {
		set_detail(r, TUNE_RULED_OUT, "not a point of the %s space", space->name);
		return 0;
	}
	if (!space_valid(space, &pt, p, &m->info, why, sizeof(why))) {
		set_detail(r, TUNE_RULED_OUT, "%s", why);
		return 0;
	}
	space_config(space, &pt, &cfg);
	nd = space_defines(space, &pt, defstore, defs);
	err = backend_compile_cached(m->cache, m->src, m->srclen, defs, nd, &mod, log, sizeof(log));
	if (err < 0 || mod == NULL) {
		set_detail(r, TUNE_COMPILE_FAILED, "%s", log[0] ? log : "compile failed");
		return 0;
	}
	if (m->ops->kernel_info != NULL) {
		struct backend_kernel_info ki;
		int64_t threads = tune_config_get(&cfg, "WG0", 1) * tune_config_get(&cfg, "WG1", 1);

		if (m->ops->kernel_info(m->ctx, mod, &ki) == 0) {
			if (m->info.shared_mem_per_block > 0 &&
			    ki.shared_mem > m->info.shared_mem_per_block) {
				set_detail(r, TUNE_RULED_OUT, "%s", "shared memory over budget");
				return 0;
			}
			if (m->info.regs_per_block > 0 && ki.regs_per_thread > 0 &&
			    ki.regs_per_thread * threads > m->info.regs_per_block) {
				set_detail(r, TUNE_RULED_OUT, "%s", "registers over budget");
				return 0;
			}
			if (ki.max_threads_per_block > 0 && threads > ki.max_threads_per_block) {
				set_detail(r, TUNE_RULED_OUT, "%s", "workgroup over the kernel limit");
				return 0;
			}
		}
	}
	mr.m = m;
	mr.mod = mod;
	mr.cfg = &cfg;
	run.gemm = run_module;
	run.arg = &mr;
	return measure_run_timed(m, &run, flags, r);
}

/* ---- isolation: the parent's side, one code path (measure-proc.h) ---- */

struct tune_evaluator {
	const struct backend_ops *ops;
	struct measure_spec spec;
	struct tune_measure_opts o;
	struct measure *m;	    /* in-process mode */
	int borrowed;		    /* m is the caller's (measure_local_evaluator) */
	struct rocmd_child *proc; /* isolated mode: the evaluation process */
	int starts;
};

struct child_hello {
	int err;
	char why[256];
	struct backend_device_info info;
	struct space_def space;
	char source_hash[17];
};

struct child_req {
	int flags;
	char key[SPACE_KEY_MAX];
};

struct child_reply {
	int err;
	struct tune_result r;
};

int
measure_child_serve(const struct measure_io *io)
{
	const struct backend_ops *ops;
	struct child_hello *h;
	struct measure_spec *spec = calloc(1, sizeof(*spec));
	struct tune_measure_opts o;
	struct measure *m = NULL;
	struct child_req req;
	struct child_reply rep;

	if (spec == NULL || io->read(io->ctx, spec, sizeof(*spec)) < 0) {
		free(spec);
		return 1;
	}
	spec->backend[sizeof(spec->backend) - 1] = '\0';
	ops = backend_find(spec->backend);
	o = spec->o;
	o.cancel = NULL;
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		free(spec);
		return 2;
	}
	if (ops == NULL) {
		h->err = ROCMD_EUNSUPPORTED;
		snprintf(h->why, sizeof(h->why), "not available: no backend %s in this build",
			 spec->backend);
	} else {
		h->err = measure_open(ops, spec->index, &spec->p, &o, &m, h->why, sizeof(h->why));
	}
	if (h->err == 0) {
		h->info = m->info;
		h->space = *m->space;
		memcpy(h->source_hash, m->source_hash, sizeof(h->source_hash));
	}
	if (io->write(io->ctx, h, sizeof(*h)) < 0 || h->err < 0) {
		free(h);
		measure_close(m);
		free(spec);
		return 1;
	}
	free(h);
	while (io->read(io->ctx, &req, sizeof(req)) == 0) {
		req.key[sizeof(req.key) - 1] = '\0';
		memset(&rep, 0, sizeof(rep));
		rep.err = measure_eval(m, m->space, req.key, req.flags, &rep.r);
		if (io->write(io->ctx, &rep, sizeof(rep)) < 0)
			break;
	}
	measure_close(m);
	free(spec);
	return 0;
}

static int
child_start(struct tune_evaluator *ev, struct child_hello *h)
{
	int err;

	err = measure_proc_start(ev->proc, &ev->spec, h->why, sizeof(h->why));
	if (err < 0)
		return err;
	ev->starts++;
	/* Opening a GPU runtime can take seconds; allow a minute. */
	err = rocmd_child_read(ev->proc, h, sizeof(*h), measure_mono_ms() + 60000.0, ev->o.cancel);
	if (err == ROCMD_ECANCELED) {
		rocmd_child_abandon(ev->proc);
		snprintf(h->why, sizeof(h->why), "canceled while the evaluation process started");
		return err;
	}
	if (err < 0) {
		rocmd_child_stop(ev->proc, 1);
		snprintf(h->why, sizeof(h->why), "the evaluation process did not start");
		return err;
	}
	if (h->err < 0) {
		rocmd_child_stop(ev->proc, 1);
		return h->err;
	}
	/* The predicate is code: its address in the child means nothing here. */
	h->space.name[sizeof(h->space.name) - 1] = '\0';
	if (backend_space_check(h->space.name, &h->space.check) < 0) {
		rocmd_child_stop(ev->proc, 1);
		snprintf(h->why, sizeof(h->why), "the evaluation process tunes in space '%s', "
						 "unknown to this program", h->space.name);
		return ROCMD_EPROTO;
	}
	return 0;
}

static void
opts_defaults(struct tune_measure_opts *o)
{
	if (o->warmup_ms <= 0)
		o->warmup_ms = 30;
	if (o->runs <= 0)
		o->runs = 9;
	if (o->timeout_ms <= 0)
		o->timeout_ms = 10000;
	if (o->max_sets <= 0 || o->max_sets > MEASURE_MAX_SETS)
		o->max_sets = o->max_sets > MEASURE_MAX_SETS ? MEASURE_MAX_SETS : 16;
	if (o->seed == 0)
		o->seed = 1;
}

int
tune_evaluator_open(const struct backend_ops *ops, int index, const struct gemm_problem *p,
		    const struct tune_measure_opts *o, struct tune_evaluator **out,
		    struct backend_device_info *dev, struct space_def *space, char source_hash[17],
		    char *why, size_t whylen)
{
	struct tune_evaluator *ev = calloc(1, sizeof(*ev));
	int err;

	*out = NULL;
	if (ev == NULL)
		return ROCMD_ENOMEM;
	ev->ops = ops;
	ev->o = *o;
	opts_defaults(&ev->o);
	snprintf(ev->spec.backend, sizeof(ev->spec.backend), "%s", ops->name);
	ev->spec.index = index;
	ev->spec.p = *p;
	ev->spec.o = ev->o;
	ev->spec.o.cancel = NULL;
	if (ev->o.isolate < 0) {
		err = measure_open(ops, index, p, &ev->o, &ev->m, why, whylen);
		if (err < 0) {
			free(ev);
			return err;
		}
		*dev = ev->m->info;
		*space = *ev->m->space;
		memcpy(source_hash, ev->m->source_hash, 17);
	} else {
		struct child_hello *h = calloc(1, sizeof(*h));

		if (h == NULL || (err = rocmd_child_new(&ev->proc)) < 0) {
			free(h);
			free(ev);
			return ROCMD_ENOMEM;
		}
		err = child_start(ev, h);
		if (err < 0) {
			snprintf(why, whylen, "%s", h->why);
			free(h);
			rocmd_child_free(ev->proc);
			free(ev);
			return err;
		}
		*dev = h->info;
		*space = h->space;
		memcpy(source_hash, h->source_hash, 17);
		free(h);
	}
	*out = ev;
	return 0;
}

int
tune_evaluator_eval(struct tune_evaluator *ev, const char *key, int flags, struct tune_result *r)
{
	struct child_req req;
	struct child_reply rep;
	char what[64] = "";
	int err;

	if (ev->m != NULL)
		return measure_eval(ev->m, ev->m->space, key, flags, r);
	if (!rocmd_child_alive(ev->proc)) {
		struct child_hello *h = calloc(1, sizeof(*h));

		if (h == NULL)
			return ROCMD_ENOMEM;
		err = child_start(ev, h);
		free(h);
		if (err < 0)
			return err;
	}
	memset(&req, 0, sizeof(req));
	req.flags = flags;
	snprintf(req.key, sizeof(req.key), "%s", key);
	err = rocmd_child_write(ev->proc, &req, sizeof(req));
	if (err < 0) {
		/* The child died while idle: the candidate never ran; start another. */
		struct child_hello *h = calloc(1, sizeof(*h));

		rocmd_child_stop(ev->proc, 1);
		if (h == NULL)
			return ROCMD_ENOMEM;
		err = child_start(ev, h);
		free(h);
		if (err < 0)
			return err;
		err = rocmd_child_write(ev->proc, &req, sizeof(req));
		if (err < 0)
			return err;
	}
	err = rocmd_child_read(ev->proc, &rep, sizeof(rep), measure_mono_ms() + ev->o.timeout_ms,
				ev->o.cancel);
	memset(r, 0, sizeof(*r));
	if (err == ROCMD_ECANCELED) {
		/* The caller set its cancel flag: this evaluation is not recorded. */
		rocmd_child_abandon(ev->proc);
		r->outcome = TUNE_CRASHED;
		snprintf(r->detail, sizeof(r->detail), "%s", "canceled: evaluation process killed");
		return 0;
	}
	if (err == ROCMD_ETIMEDOUT) {
		rocmd_child_stop(ev->proc, 1);
		r->outcome = TUNE_TIMEOUT;
		snprintf(r->detail, sizeof(r->detail), "no result within %.0f ms; killed",
			 ev->o.timeout_ms);
		return 0;
	}
	if (err < 0) {
		rocmd_child_describe(rocmd_child_stop(ev->proc, 0), what, sizeof(what));
		r->outcome = TUNE_CRASHED;
		snprintf(r->detail, sizeof(r->detail), "evaluation process %s", what);
		return 0;
	}
	*r = rep.r;
	return rep.err;
}

void
tune_evaluator_abort(struct tune_evaluator *ev)
{
	if (ev != NULL && ev->proc != NULL)
		rocmd_child_kill(ev->proc);
}

void
tune_evaluator_close(struct tune_evaluator *ev)
{
	if (ev == NULL)
		return;
	if (ev->m != NULL && !ev->borrowed)
		measure_close(ev->m);
	rocmd_child_free(ev->proc);
	free(ev);
}

/* ---- in this process (measure.h) ---- */

int
measure_local_open(const struct backend_ops *ops, int index, const struct tune_measure_opts *o,
		   struct measure **out, struct backend_device_info *dev, char source_hash[17],
		   char *why, size_t whylen)
{
	struct tune_measure_opts oo = *o;
	int err;

	oo.cancel = NULL;
	opts_defaults(&oo);
	err = measure_open_device(ops, index, &oo, out, why, whylen);
	if (err < 0)
		return err;
	*dev = (*out)->info;
	memcpy(source_hash, (*out)->source_hash, 17);
	return 0;
}

int
measure_local_set_problem(struct measure *m, const struct gemm_problem *p,
			  const struct space_def **space, char *why, size_t whylen)
{
	int err = measure_load(m, p, why, whylen);

	*space = err < 0 ? NULL : m->space;
	return err;
}

int
measure_local_evaluator(struct measure *m, const struct gemm_problem *p,
			struct tune_evaluator **out, struct space_def *space, char *why,
			size_t whylen)
{
	struct tune_evaluator *ev;
	int err;

	*out = NULL;
	if ((err = measure_load(m, p, why, whylen)) < 0)
		return err;
	if ((ev = calloc(1, sizeof(*ev))) == NULL)
		return ROCMD_ENOMEM;
	ev->ops = m->ops;
	ev->o = m->o;
	ev->m = m;
	ev->borrowed = 1;
	*space = *m->space;
	*out = ev;
	return 0;
}

int
measure_local_eval(struct measure *m, const char *key, int flags, struct tune_result *r,
		   double *rel_err)
{
	return measure_local_eval_in(m, m->space, key, flags, r, rel_err);
}

int
measure_local_eval_in(struct measure *m, const struct space_def *space, const char *key, int flags,
		      struct tune_result *r, double *rel_err)
{
	int err = m->nsets > 0 ? measure_eval(m, space, key, flags, r) : ROCMD_EINVAL;

	*rel_err = m->rel_err;
	return err;
}

int
measure_local_eval_call(struct measure *m, measure_gemm_fn fn, void *arg, int flags,
			struct tune_result *r, double *rel_err)
{
	struct measure_run run = {.gemm = fn, .arg = arg};
	int err;

	memset(r, 0, sizeof(*r));
	if (m->nsets == 0)
		return ROCMD_EINVAL;
	err = measure_run_timed(m, &run, flags, r);
	*rel_err = m->rel_err;
	return err;
}

void
measure_local_close(struct measure *m)
{
	measure_close(m);
}
