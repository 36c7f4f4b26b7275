/*
 * The idle tune scheduler (see tune-sched.h).
 *
 * Threads. Each run (the device probe, a tuning job) is a job on the
 * daemon's job runner (daemon/core/jobs.h), so the tuner works on a worker
 * thread, never on the loop thread; its evaluator isolates each candidate in
 * a child process (kernels/measure.c), so the daemon itself never
 * initializes a GPU runtime. DESIGN's rule that only the loop thread writes
 * the database is kept by the store the worker is given: every call of its
 * lookup, record, set_winner, winners and count is handed to the loop thread
 * (rocmd_job_call), which runs it against the SQLite store on the daemon's
 * connection (tune_db_attach) while the worker waits. record() therefore returns only once the
 * evaluation is committed, which is what makes a kill -9 lose no finished evaluation. The cost is
 * one loop round trip per evaluation, small beside an evaluation.
 *
 * Yielding. User input arrives on the loop thread (idle-unix.c reads the
 * input devices with uv_poll); if a job runs, the loop thread sets the run's
 * cancel flag and calls tune_evaluator_abort(), which kills the evaluation in
 * flight; the worker's wait for the evaluation process sees the flag within
 * 10 ms (tune_measure_opts.cancel), the killed process is reaped in the
 * background (a CUDA context takes ~250 ms to tear down, with no kernel of
 * ours left to run), and tune_run() returns ROCMD_ECANCELED without
 * recording the killed evaluation. The time from the input event to the worker's return is kept
 * (`rocmctl tune status`: p50/p99/max) and is what
 * bench/tune-preempt/tune-preempt.sh measures. The job goes back to 'queued'; its finished evaluations are in
 * the store, so the next run resumes where it stopped.
 *
 * Wake-ups. While there is nothing to tune, or tuning is paused or off, no
 * timer runs and no input device is open. While tuning is wanted, a timer
 * samples the slow signals (power, GPU users, load, logind) every
 * tune.check_ms and the input devices are watched by events.
 *
 * The device. At start the worker opens the configured backend (or tries
 * hip, cuda, then cpu) in a child process to learn the device; the default
 * shapes for it are then queued (GPUs: LLM-inference shapes, fp16 NN, the
 * LLM 7B decode and prefill shapes of bench/gpu-gemm; the CPU backend: two small fp32 shapes, so a job
 * finishes in seconds in CI).
 *
 * SDK and driver changes. Jobs and results are keyed to the SDK in use (the present SDK
 * with the highest version, "none" without one): the SDK is folded into the
 * software part of the tuner's key (its runtime field), since the CPU
 * backend's own versions do not change with the SDK. On an sdk.* event the
 * scheduler reads the current SDK; if it changed, the jobs keyed to the old
 * one are marked stale and a re-tune of each is queued, seeded from it: the
 * tuner's seed set already takes this shape's winners under any earlier
 * software (tune.h), so the re-tune starts from the previous winners.
 * Jobs are keyed to the device's driver too (backend_device_info's
 * driver_version: the CUDA driver's version, hipDriverGetVersion for HIP;
 * the CPU backend has no driver and reports the OS kernel release, so a
 * kernel update re-tunes it). The tuner's key always held the driver; the
 * scheduler learns it from every evaluator it opens: at the probe (start-up)
 * and at each job's start, since every open is a new process that loads the
 * driver afresh. A job that finds another driver than the one it was queued
 * under does not run: the driver is adopted, and as for an SDK change the
 * jobs keyed to the old one go stale and seeded re-tunes are queued. A
 * driver that changes while nothing is queued is therefore noticed at the
 * next job or the next start of the daemon, not at once. Test hook:
 * ROCMD_TUNE_DRIVER=STRING replaces the driver the device reports, and
 * ROCMD_TUNE_DRIVER=@PATH with the first line of PATH, read at each open (a
 * driver update while the daemon runs); nothing else of the tuner changes.
 *
 * The tuned kernel library. When a job finishes, the worker (still off the
 * loop thread) builds the library of every winner for this device and
 * software from the store (through the same hand-off), compiles its code
 * objects where the backend has them, and writes it as a new generation of
 * <state_dir>/tuned/<arch>-<sdk>/ (kernels/tunedlib.h: atomic, versioned).
 */
#include "tune-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "daemon/sdk/sdk-version.h"
#include "daemon/sdk/sdk.h"
#include "db/db-sdk.h"
#include "db/db-tune.h"
#include "kernels/families.h"

/* ---- the loop side ---- */

static int
local_minutes(void)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	return tm.tm_hour * 60 + tm.tm_min;
}

struct best_sdk {
	char version[64];
};

static int
sdk_cb(const struct rocmd_db_sdk *s, void *ctx)
{
	struct best_sdk *b = ctx;

	if (s->version == NULL || strcmp(s->state, "present") != 0)
		return 0;
	if (b->version[0] == '\0' || rocmd_version_cmp(s->version, b->version) > 0)
		snprintf(b->version, sizeof(b->version), "%s", s->version);
	return 0;
}

/* The SDK results are keyed to: the present SDK with the highest version. */
static void
current_sdk(struct rocmd_tune *t, char *out, size_t len)
{
	struct best_sdk b = {""};
	struct rocmd_sdk_db *db = t->srv->sdk != NULL ? rocmd_sdk_db(t->srv->sdk) : NULL;

	if (db != NULL)
		rocmd_sdk_db_list(db, 0, NULL, sdk_cb, &b);
	snprintf(out, len, "%s", b.version[0] ? b.version : "none");
}

void
tune_job_fill_device(const struct rocmd_tune *t, struct rocmd_tune_job *j)
{
	snprintf(j->backend, sizeof(j->backend), "%s", t->backend);
	snprintf(j->arch, sizeof(j->arch), "%s", t->dev.arch);
	snprintf(j->device, sizeof(j->device), "%s", t->dev.name);
	snprintf(j->sdk, sizeof(j->sdk), "%s", t->sdk);
	snprintf(j->driver, sizeof(j->driver), "%s", t->dev.driver_version);
}

struct retune_ctx {
	struct rocmd_tune *t;
	int queued;
	int sdk, driver; /* what changed, over the stale jobs */
	char old_driver[64];
};

static void
on_stale(const struct rocmd_tune_job *old, void *ctx)
{
	struct retune_ctx *rc = ctx;
	struct rocmd_tune_job j = *old;
	int64_t id;
	int created;

	const char *driver = rc->t->dev.driver_version;

	snprintf(j.sdk, sizeof(j.sdk), "%s", rc->t->sdk);
	snprintf(j.driver, sizeof(j.driver), "%s", driver);
	snprintf(j.origin, sizeof(j.origin), "retune");
	j.seeded_from = old->id;
	if (strcmp(old->sdk, rc->t->sdk) != 0 && strcmp(old->driver, driver) != 0)
		snprintf(j.detail, sizeof(j.detail),
		         "re-tune after SDK %.40s -> %.40s, driver %.60s -> %.60s", old->sdk,
		         rc->t->sdk, old->driver, driver);
	else if (strcmp(old->sdk, rc->t->sdk) != 0)
		snprintf(j.detail, sizeof(j.detail), "re-tune after SDK %s -> %s", old->sdk,
		         rc->t->sdk);
	else
		snprintf(j.detail, sizeof(j.detail), "re-tune after driver %.100s -> %.100s",
		         old->driver, driver);
	if (strcmp(old->sdk, rc->t->sdk) != 0)
		rc->sdk = 1;
	if (strcmp(old->driver, driver) != 0) {
		rc->driver = 1;
		snprintf(rc->old_driver, sizeof(rc->old_driver), "%s", old->driver);
	}
	if (rocmd_tune_queue_add(rc->t->q, &j, rocmd_now_ms(), &id, &created) == 0 && created) {
		rc->queued++;
		/* As for tune.add: a paused queue stays paused. */
		if (rc->t->paused)
			rocmd_tune_queue_set_state(rc->t->q, id, "paused", NULL, rocmd_now_ms());
	}
}

/* Marks the jobs keyed to another SDK or driver stale and queues their
 * seeded re-tunes; the event and the status say which changed. */
static void
check_sdk(struct rocmd_tune *t)
{
	struct retune_ctx rc = {t, 0, 0, 0, ""};
	char msg[256];
	cJSON *d;
	int n = 0, err;

	if (!t->dev_known)
		return;
	err = rocmd_tune_queue_stale(t->q, t->backend, t->dev.arch, t->dev.name, t->sdk,
	                             t->dev.driver_version, rocmd_now_ms(), on_stale, &rc, &n);
	if (err < 0) {
		log_err("tune: cannot mark stale jobs: %s", rocmd_tune_queue_errmsg(t->q));
		return;
	}
	if (n == 0)
		return;
	if (rc.driver && rc.sdk)
		snprintf(msg, sizeof(msg), "SDK is now %.30s and driver %.60s (was %.60s)", t->sdk,
		         t->dev.driver_version, rc.old_driver);
	else if (rc.driver)
		snprintf(msg, sizeof(msg), "driver is now %.80s (was %.80s)", t->dev.driver_version,
		         rc.old_driver);
	else
		snprintf(msg, sizeof(msg), "SDK is now %s", t->sdk);
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "sdk", t->sdk);
	cJSON_AddStringToObject(d, "driver", t->dev.driver_version);
	cJSON_AddStringToObject(d, "changed",
	                        rc.driver && rc.sdk ? "sdk+driver"
	                        : rc.driver         ? "driver"
	                                            : "sdk");
	if (rc.driver)
		cJSON_AddStringToObject(d, "old_driver", rc.old_driver);
	cJSON_AddNumberToObject(d, "stale", n);
	cJSON_AddNumberToObject(d, "queued", rc.queued);
	rocmd_server_event(t->srv, "tune.stale", d,
	                   "%s: %d tuning job(s) stale, %d seeded re-tune(s) queued", msg, n,
	                   rc.queued);
	snprintf(t->change.message, sizeof(t->change.message), "%.200s", msg);
	t->change.at_ms = rocmd_now_ms();
	t->change.stale = n;
	t->change.queued = rc.queued;
}

/* One default kernel job (tune_job_fill_device's device) of problem P. */
static int
queue_default(struct rocmd_tune *t, const struct gemm_problem *p)
{
	struct rocmd_tune_job j;
	int64_t id;
	int created;

	memset(&j, 0, sizeof(j));
	tune_job_fill_device(t, &j);
	snprintf(j.dtype, sizeof(j.dtype), "%s", gemm_dtype_name(p->dtype));
	snprintf(j.trans, sizeof(j.trans), "%c%c", p->ta == GEMM_T ? 'T' : 'N',
	         p->tb == GEMM_T ? 'T' : 'N');
	snprintf(j.origin, sizeof(j.origin), "default");
	j.m = p->m;
	j.n = p->n;
	j.k = p->k;
	j.batch = 1;
	j.budget = t->cfg->tune_budget;
	return rocmd_tune_queue_add(t->q, &j, rocmd_now_ms(), &id, &created) == 0 && created;
}

/*
 * The default shapes: on a GPU the LLM shape families (kernels/families.h:
 * the linear layers of Llama 2/3, Mistral and Qwen 2 at decode and prefill
 * token counts, TN as those programs call them) in fp16 and fp32, and bf16
 * where the device has matrix cores; on the CPU backend two small fp32
 * shapes, so that a job finishes in seconds in CI.
 */
static void
queue_defaults(struct rocmd_tune *t)
{
	int added = 0;

	if (!strcmp(t->backend, "cpu")) {
		for (int i = 0; tune_cpu_shapes[i] != NULL; i++) {
			struct gemm_problem p;
			int64_t m, n, k, b;

			gemm_shape_parse(tune_cpu_shapes[i], &m, &n, &k, &b);
			gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, m, n, k, 1);
			added += queue_default(t, &p);
		}
	} else if (t->cfg->tune_families) {
		const enum gemm_dtype dts[] = {GEMM_FP16, GEMM_BF16, GEMM_FP32};
		const int64_t *lists[] = {tune_family_decode, tune_family_prefill};

		for (int gi = 0; tune_family_gemms[gi].family != NULL; gi++)
			for (int li = 0; li < 2; li++)
				for (int ti = 0; lists[li][ti] != 0; ti++)
					for (int di = 0; di < 3; di++) {
						struct gemm_problem p;

						if (dts[di] == GEMM_BF16 && !t->dev.matrix_cores)
							continue;
						tune_family_problem(&tune_family_gemms[gi],
						                    lists[li][ti], dts[di], &p);
						added += queue_default(t, &p);
					}
	}
	if (added > 0)
		log_notice("tune: %d default shape(s) queued for %s (%s)", added, t->dev.name,
		           t->backend);
}

/*
 * The job to run next: one cut short first (a crash or a yield), then the
 * vendor jobs (those of the programs someone captured or imported first:
 * their calls x time order them; then the LLM shape families), then rocmd's
 * own kernel jobs. A vendor library's override reaches the programs that
 * load it; rocmd's tuned library reaches only librocmd-gemm's callers. A
 * vendor whose winners reach no program either (cuBLASLt: they become
 * entries of rocmd's tuned library) takes turns with rocmd's own jobs, so
 * that its hundreds of family jobs do not hold back the library for hours.
 */
static int
job_waiting(struct rocmd_tune *t, struct rocmd_tune_job *j)
{
	struct rocmd_tune_job k, v;
	int hk, hv;

	if (!t->dev_known)
		return 0;
	hk = rocmd_tune_queue_next(t->q, t->backend, t->dev.arch, t->dev.name, t->sdk,
	                           t->dev.driver_version, &k) == 0;
	hv = rocmd_tune_queue_next_vendor(t->q, &v) == 0;
	/* A target whose library a deploy is replacing waits (all vendor jobs
	 * do, for the short while it takes: the queue's first is the one). */
	if (hv && strcmp(v.state, "running") != 0 && tune_fenced(t, v.target))
		hv = 0;
	if (hk && !strcmp(k.state, "running"))
		*j = k;
	else if (hv && hk && t->last_vendor && !tune_override_reaches_programs(v.backend))
		*j = k;
	else if (hv)
		*j = v;
	else if (hk)
		*j = k;
	else
		return 0;
	return 1;
}

static void
start_job(struct rocmd_tune *t, const struct rocmd_tune_job *j)
{
	memset(&t->run, 0, sizeof(t->run));
	t->run.job = *j;
	snprintf(t->run.backend, sizeof(t->run.backend), "%s", t->backend);
	snprintf(t->run.state_dir, sizeof(t->run.state_dir), "%s", t->cfg->state_dir);
	if (j->target[0] != '\0') {
		struct tune_target tg;

		if (tune_vendor_target_find(t, j->target, j->backend, &tg) < 0) {
			rocmd_tune_queue_finish(t->q, j->id, "failed", NULL, 0, 0,
			                        "the target's library is gone", rocmd_now_ms());
			tune_schedule(t);
			return;
		}
		snprintf(t->run.backend, sizeof(t->run.backend), "%s", j->backend);
		snprintf(t->run.library, sizeof(t->run.library), "%s", tg.library);
		snprintf(t->run.tensile_dir, sizeof(t->run.tensile_dir), "%s", tg.tensile_dir);
		snprintf(t->run.sysroot, sizeof(t->run.sysroot), "%.255s", t->root);
	}
	t->last_vendor = j->target[0] != '\0';
	rocmd_tune_queue_set_state(t->q, j->id, "running", NULL, rocmd_now_ms());
	log_info("tune: job %lld (%s%s%s %s %s %lldx%lldx%lld) starts: %s", (long long)j->id,
	         j->target, j->target[0] ? " " : "", j->backend, j->dtype, j->trans,
	         (long long)j->m, (long long)j->n, (long long)j->k, t->decision);
	tune_run_start(t);
}

/* Stops the running job now (loop thread). */
void
tune_preempt(struct rocmd_tune *t, const char *reason, uint64_t signal_ns, int64_t event_us)
{
	if (!t->running || t->run.probe || t->yielding)
		return;
	t->yielding = 1;
	t->yield_signal_ns = signal_ns;
	t->yield_event_us = event_us;
	snprintf(t->yield_reason, sizeof(t->yield_reason), "%.95s", reason);
	if (t->job != NULL)
		rocmd_job_cancel(&t->job->base);
}

static void
on_activity(void *ctx, uint64_t ns, int64_t event_us)
{
	struct rocmd_tune *t = ctx;

	if (t->running && !t->forced)
		tune_preempt(t, "user input", ns, event_us);
}

static void
record_latency(struct rocmd_tune *t, double ms)
{
	t->lat[t->lat_next] = ms;
	t->lat_next = (t->lat_next + 1) % LAT_KEEP;
	if (t->nlat < LAT_KEEP)
		t->nlat++;
	t->yields++;
}

static void
finish_probe(struct rocmd_tune *t)
{
	struct run *r = &t->run;

	if (r->rc < 0) {
		t->probe_failed = 1;
		snprintf(t->decision, sizeof(t->decision), "no tuning device: %.140s", r->why);
		log_err("tune: no backend opened: %s", r->why);
		return;
	}
	t->dev_known = 1;
	t->dev = r->dev;
	snprintf(t->hash, sizeof(t->hash), "%s", r->hash);
	snprintf(t->backend, sizeof(t->backend), "%s", r->backend);
	snprintf(t->passed, sizeof(t->passed), "%s", r->passed);
	log_notice("tune: device %s (%s, %s backend, %d compute units)", t->dev.name, t->dev.arch,
	           t->backend, t->dev.compute_units);
	if (t->passed[0] != '\0')
		log_notice("tune: passed over %s", t->passed);
	current_sdk(t, t->sdk, sizeof(t->sdk));
	rocmd_tune_queue_adopt_driver(t->q, t->backend, t->dev.arch, t->dev.name,
	                              t->dev.driver_version, rocmd_now_ms(), NULL);
	check_sdk(t);
	queue_defaults(t);
	tune_vendor_queue_families(t);
}

static void
finish_job(struct rocmd_tune *t)
{
	struct run *r = &t->run;
	struct rocmd_tune_job *j = &r->job;
	int64_t now = rocmd_now_ms();
	char detail[256];
	cJSON *d;

	if (r->driver_changed) {
		/* Nothing ran: the job and its peers are re-keyed to the new driver
		 * as after an SDK change (stale, seeded re-tunes queued). */
		log_notice("tune: job %lld: driver %s -> %s", (long long)j->id, j->driver,
		           r->dev.driver_version);
		snprintf(t->dev.driver_version, sizeof(t->dev.driver_version), "%s",
		         r->dev.driver_version);
		check_sdk(t);
		return;
	}
	rocmd_tune_queue_progress(t->q, j->id, r->sum.evals, r->sum.measured + j->measured,
	                          r->sum.best_ms, now);
	if (j->target[0] != '\0') {
		struct rocmd_tune_job cur;

		/* Made stale while it ran (its library changed): its re-tune is
		 * queued; this run's result is for a library that is gone. */
		if (rocmd_tune_queue_get(t->q, j->id, &cur) == 0 && !strcmp(cur.state, "stale"))
			return;
	}
	if (r->rc == ROCMD_ECANCELED) {
		double ms = (double)(r->stopped_ns - t->yield_signal_ns) / 1e6;
		double from_event = -1;

		if (t->yield_event_us > 0) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			/* The worker's stop time on the wall clock, from its hrtime. */
			from_event = ((double)ts.tv_sec * 1e6 + ts.tv_nsec / 1e3 -
			              (double)(uv_hrtime() - r->stopped_ns) / 1e3 -
			              (double)t->yield_event_us) /
			             1e3;
			if (from_event >= 0)
				ms = from_event;
		}
		if (t->yielding && t->yield_signal_ns > 0)
			record_latency(t, ms);
		snprintf(detail, sizeof(detail), "yielded (%s) after %d evaluations",
		         t->yield_reason, r->sum.evals);
		/* Cut short by an SDK change, it is stale (its re-tune is queued). */
		rocmd_tune_queue_set_state(
		    t->q, j->id,
		    j->target[0] == '\0' && (strcmp(j->sdk, t->sdk) ||
		                              strcmp(j->driver, t->dev.driver_version))
		        ? "stale"
		    : t->paused ? "paused"
		                : "queued",
		    detail, now);
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "job", (double)j->id);
		cJSON_AddStringToObject(d, "reason", t->yield_reason);
		cJSON_AddNumberToObject(d, "latency_ms", ms);
		/* From the daemon reading the input to the evaluation stopped; the
		 * rest of latency_ms is the wait for the loop to read it. */
		cJSON_AddNumberToObject(d, "after_read_ms",
		                        (double)(r->stopped_ns - t->yield_signal_ns) / 1e6);
		cJSON_AddNumberToObject(d, "evaluations", r->sum.evals);
		rocmd_server_event(t->srv, "tune.yielded", d,
		                   "tuning job %lld yielded (%s) in %.1f ms", (long long)j->id,
		                   t->yield_reason, ms);
		return;
	}
	if (r->rc < 0) {
		snprintf(detail, sizeof(detail), "%.250s",
		         r->why[0] ? r->why : rocmd_strerror(r->rc));
		rocmd_tune_queue_finish(t->q, j->id, "failed", NULL, 0, 0, detail, now);
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "job", (double)j->id);
		cJSON_AddStringToObject(d, "error", detail);
		rocmd_server_event(t->srv, "tune.failed", d, "tuning job %lld failed: %s",
		                   (long long)j->id, detail);
		return;
	}
	snprintf(detail, sizeof(detail), "best found at evaluation %d of %d (%d measured here)",
	         r->sum.evals_to_best, r->sum.evals, r->sum.measured);
	rocmd_tune_queue_finish(t->q, j->id, "done", r->sum.best, r->sum.best_ms, r->sum.default_ms,
	                        detail, now);
	if (j->target[0] != '\0')
		rocmd_tune_queue_spread(t->q, j->id, r->sum.best_hi_ms, r->sum.default_lo_ms,
		                        isfinite(r->sum.default_ms) ? r->sum.default_ms : 0, now);
	d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "job", (double)j->id);
	cJSON_AddStringToObject(d, "winner", r->sum.best);
	cJSON_AddNumberToObject(d, "best_ms", r->sum.best_ms);
	if (isfinite(r->sum.default_ms))
		cJSON_AddNumberToObject(d, "default_ms", r->sum.default_ms);
	cJSON_AddNumberToObject(d, "evaluations", r->sum.evals);
	cJSON_AddNumberToObject(d, "evals_to_best", r->sum.evals_to_best);
	rocmd_server_event(t->srv, "tune.done", d,
	                   "tuning job %lld done: %s at %.4f ms (%d evaluations, best at %d)",
	                   (long long)j->id, r->sum.best, r->sum.best_ms, r->sum.evals,
	                   r->sum.evals_to_best);
	if (j->target[0] != '\0') {
		tune_override_after_job(t);
		return;
	}
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "library", r->lib_why);
	cJSON_AddNumberToObject(d, "generation", r->lib_generation);
	if (r->lib_generation > 0)
		rocmd_server_event(t->srv, "tune.library", d, "tuned library written: %s",
		                   r->lib_why);
	else
		rocmd_server_event(t->srv, "tune.library_failed", d,
		                   "tuned library not written: %s", r->lib_why);
}

void
tune_run_ended(struct rocmd_tune *t)
{
	if (t->stopping) {
		/* The daemon stops: a job goes back to the queue, nothing else starts. */
		if (!t->run.probe) {
			t->yielding = 0;
			finish_job(t);
		}
		return;
	}
	if (t->run.probe)
		finish_probe(t);
	else
		finish_job(t);
	rocmd_server_counts_changed(t->srv);
	tune_schedule(t);
}

static void on_timer(uv_timer_t *h);

/* Samples the signals and decides (loop thread). */
static void
decide(struct rocmd_tune *t)
{
	double wait_s = 0;

	if (t->idle != NULL) {
		rocmd_idle_sample(t->idle, &t->sig);
	} else {
		memset(&t->sig, 0, sizeof(t->sig));
		t->sig.input_idle_s = t->sig.load1 = -1;
		t->sig.ac = t->sig.gpu_users = t->sig.logind_idle = t->sig.background_ok = -1;
	}
	t->sig_ms = rocmd_now_ms();
	if (t->forced) {
		t->decision_go = 1;
		snprintf(t->decision, sizeof(t->decision), "started by rocmctl tune start");
		return;
	}
	t->decision_go = rocmd_idle_decide(&t->policy, &t->sig, t->running, local_minutes(),
	                                   &wait_s, t->decision, sizeof(t->decision));
}

/*
 * The scheduler's one step: work out whether tuning is wanted (watch or
 * not), decide, and start or stop the worker. Runs after every change: a
 * timer tick, a finished job, a control command, an SDK event.
 */
void
tune_schedule(struct rocmd_tune *t)
{
	struct rocmd_tune_job j;
	int have_job, wanted;

	if (t->stopping)
		return;
	if (!t->dev_known) {
		if (!t->running && !t->probe_failed) {
			memset(&t->run, 0, sizeof(t->run));
			t->run.probe = 1;
			snprintf(t->run.backend, sizeof(t->run.backend), "%s",
			         t->cfg->tune_backend != NULL ? t->cfg->tune_backend : "");
			snprintf(t->decision, sizeof(t->decision), "probing the tuning device");
			tune_run_start(t);
		}
		return;
	}
	have_job = t->running || job_waiting(t, &j);
	wanted = have_job && !t->paused && (t->forced || t->cfg->tune_enabled);
	if (t->forced && !have_job)
		t->forced = 0;
	if (wanted != t->wanted) {
		t->wanted = wanted;
		rocmd_idle_watch(t->idle, wanted && !t->forced);
		if (wanted) {
			uv_timer_start(&t->timer, on_timer, (uint64_t)t->cfg->tune_check_ms,
			               (uint64_t)t->cfg->tune_check_ms);
			t->timer_on = 1;
		} else {
			uv_timer_stop(&t->timer);
			t->timer_on = 0;
		}
	}
	if (!wanted) {
		if (t->paused)
			snprintf(t->decision, sizeof(t->decision), "paused (rocmctl tune resume)");
		else if (!have_job)
			snprintf(t->decision, sizeof(t->decision), "nothing to tune");
		else
			snprintf(t->decision, sizeof(t->decision),
			         "tune.enabled is 0 (rocmctl tune start runs the queue)");
		t->decision_go = 0;
		return;
	}
	decide(t);
	if (t->running) {
		if (!t->decision_go && !t->run.probe)
			tune_preempt(t, t->decision, uv_hrtime(), 0);
		return;
	}
	if (t->decision_go && job_waiting(t, &j))
		start_job(t, &j);
}

static void
on_timer(uv_timer_t *h)
{
	tune_schedule(h->data);
}

int
rocmd_tune_start(struct rocmd_server *srv, const char *root, struct rocmd_tune **out, char *why,
                 size_t whylen)
{
	struct rocmd_tune *t;
	int rc, n = 0;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return ROCMD_ENOMEM;
	t->srv = srv;
	t->cfg = srv->cfg;
	t->policy.idle_s = t->cfg->tune_idle_s;
	t->policy.ac_only = (int)t->cfg->tune_ac_only;
	t->policy.max_cpu_load = t->cfg->tune_max_cpu_load;
	snprintf(t->sdk, sizeof(t->sdk), "none");
	rc = rocmd_idle_parse_quiet(t->cfg->tune_quiet_hours, &t->policy.quiet_from,
	                            &t->policy.quiet_to, why, whylen);
	if (rc < 0) {
		free(t);
		return rc;
	}
	if (root != NULL && strcmp(root, "/") != 0)
		snprintf(t->root, sizeof(t->root), "%s", root);
	rc = rocmd_tune_queue_attach(srv->db, &t->q);
	if (rc == 0)
		rc = tune_db_attach(srv->db, &t->store);
	if (rc == 0)
		rc = rocmd_tune_override_attach(srv->db, &t->odb);
	if (rc < 0) {
		snprintf(why, whylen, "cannot open the tuning queue: %s", rocmd_strerror(rc));
		rocmd_tune_queue_detach(t->q);
		free(t);
		return rc;
	}
	/* What programs see is checked first: an override whose library changed
	 * while rocmd was not running is withdrawn before anything else. */
	tune_override_recover(t);
	/* A pause outlives restarts: paused jobs mean the queue is paused. A
	 * job left running by a crash resumes first (queue_next prefers it). */
	rocmd_tune_queue_move_all(t->q, "paused", "paused", rocmd_now_ms(), &n);
	t->paused = n > 0;
	tune_run_proxy_init(t);
	uv_mutex_init(&t->lock);
	rocmd_jobs_init(&t->jobs, srv, "tuning", 0);
	uv_timer_init(srv->loop, &t->timer);
	t->timer.data = t;
	rc = rocmd_idle_open(srv->loop, root, on_activity, t, &t->idle, why, whylen);
	if (rc < 0)
		log_err("tune: idle monitor: %s", why);
	*out = t;
	tune_schedule(t);
	return 0;
}

void
rocmd_tune_stop(struct rocmd_tune *t)
{
	if (t == NULL || t->stopping)
		return;
	t->stopping = 1;
	if (t->running) {
		t->yield_signal_ns = uv_hrtime();
		t->yield_event_us = 0;
		snprintf(t->yield_reason, sizeof(t->yield_reason), "daemon stopping");
	}
	/* The run is canceled; its done hook records the job as queued again
	 * once the worker has returned (the loop runs until then). */
	rocmd_jobs_shutdown(&t->jobs);
	uv_close((uv_handle_t *)&t->timer, NULL);
	rocmd_idle_close(t->idle);
	t->idle = NULL;
}

void
rocmd_tune_free(struct rocmd_tune *t)
{
	if (t == NULL)
		return;
	tune_db_close(&t->store);
	rocmd_tune_override_detach(t->odb);
	rocmd_tune_queue_detach(t->q);
	uv_mutex_destroy(&t->lock);
	free(t);
}

void
rocmd_tune_on_event(struct rocmd_tune *t, const char *kind)
{
	char sdk[64];

	if (t == NULL || t->stopping)
		return;
	if (strncmp(kind, "lib.", 4) == 0 && t->nfence > 0 && strcmp(kind, "lib.deferred") != 0) {
		/* A deploy job ended (or recovery ran): its target's library is
		 * what it is now; the re-tunes may run, recovery checks the rest. */
		t->nfence = 0;
		tune_override_recover(t);
		tune_schedule(t);
		return;
	}
	if (strncmp(kind, "sdk.", 4) != 0)
		return;
	/* A library an SDK event may have changed: its override first. */
	tune_override_recover(t);
	if (!t->dev_known)
		return;
	tune_vendor_queue_families(t);
	current_sdk(t, sdk, sizeof(sdk));
	if (strcmp(sdk, t->sdk) == 0)
		return;
	log_notice("tune: SDK %s -> %s", t->sdk, sdk);
	snprintf(t->sdk, sizeof(t->sdk), "%s", sdk);
	if (t->running && !t->run.probe)
		tune_preempt(t, "SDK changed", uv_hrtime(), 0);
	check_sdk(t);
	tune_schedule(t);
}

/* ---- the engine ---- */

static void
engine_event(void *self, const char *kind)
{
	rocmd_tune_on_event(self, kind);
}

static void
engine_shutdown(void *self)
{
	rocmd_tune_stop(self);
}

static void
engine_free(void *self)
{
	rocmd_tune_free(self);
}

static void
engine_close(void *self)
{
	rocmd_jobs_close(&((struct rocmd_tune *)self)->jobs);
}

const struct rocmd_engine_ops rocmd_tune_engine = {
    .name = "idle tuning",
    .event = engine_event,
    .shutdown = engine_shutdown,
    .close = engine_close,
    .free = engine_free,
};
