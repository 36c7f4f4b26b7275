/*
 * The tune scheduler's worker side (see tune-sched.c for the design): each
 * run (the device probe or a tuning job) is a job on the daemon's job
 * runner. The worker opens the backend's evaluator (a child process per
 * candidate), runs the tuner against a store whose every call is handed to
 * the loop thread (only the loop thread writes the database), and writes the
 * tuned library of the device's winners when a job finishes.
 */
#include "tune-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "kernels/tunedlib.h"
#include "kernels/vendor.h"
#include "tune-os.h"

enum proxy_op { P_LOOKUP, P_RECORD, P_WINNER, P_WINNERS, P_COUNT, P_WINNER_DEFAULT };

/* One store call handed from the worker to the loop thread. */
struct proxy_req {
	enum proxy_op op;
	const struct tune_key *key;
	const char *config;
	const struct tune_result *r;
	struct tune_result *out;
	double median_ms, default_ms;
	int any_software;
	tune_winner_cb cb;
	void *cbctx;
	int64_t *n;
	double *out_ms;
	struct rocmd_tune *t;
	int rc;
};

/* ---- the store the worker sees ---- */

static void serve(struct rocmd_tune *t, struct proxy_req *r);

static void
serve_call(void *arg)
{
	struct proxy_req *r = arg;

	serve(r->t, r);
}

/* Runs R on the loop thread (directly when called there: tunedlib's winners
 * walk asks a store callback run by serve() for each winner's default time). */
static int
proxy_call(struct rocmd_tune *t, struct proxy_req *r)
{
	r->t = t;
	rocmd_job_call(&t->job->base, serve_call, r);
	return r->rc;
}

static int
px_lookup(void *ctx, const struct tune_key *key, const char *config, struct tune_result *out)
{
	struct proxy_req r = {.op = P_LOOKUP, .key = key, .config = config, .out = out};

	return proxy_call(ctx, &r);
}

static int
px_record(void *ctx, const struct tune_key *key, const char *config, const struct tune_result *res)
{
	struct proxy_req r = {.op = P_RECORD, .key = key, .config = config, .r = res};

	return proxy_call(ctx, &r);
}

static int
px_set_winner(void *ctx, const struct tune_key *key, const char *config, double median_ms,
              double default_ms)
{
	struct proxy_req r = {.op = P_WINNER,
	                      .key = key,
	                      .config = config,
	                      .median_ms = median_ms,
	                      .default_ms = default_ms};

	return proxy_call(ctx, &r);
}

static int
px_winners(void *ctx, const struct tune_key *key, int any_software, tune_winner_cb cb, void *cbctx)
{
	struct proxy_req r = {
	    .op = P_WINNERS, .key = key, .any_software = any_software, .cb = cb, .cbctx = cbctx};

	return proxy_call(ctx, &r);
}

static int
px_count(void *ctx, const struct tune_key *key, int64_t *n)
{
	struct proxy_req r = {.op = P_COUNT, .key = key, .n = n};

	return proxy_call(ctx, &r);
}

static int
px_winner_default(void *ctx, const struct tune_key *key, double *default_ms)
{
	struct proxy_req r = {.op = P_WINNER_DEFAULT, .key = key, .out_ms = default_ms};

	return proxy_call(ctx, &r);
}

/* On the loop thread: runs one request against the SQLite store. The worker
 * is blocked in proxy_call meanwhile, so its pointers are stable. */
static void
serve(struct rocmd_tune *t, struct proxy_req *r)
{
	struct tune_store *s = &t->store;

	switch (r->op) {
	case P_LOOKUP:
		r->rc = s->lookup(s->ctx, r->key, r->config, r->out);
		break;
	case P_RECORD:
		r->rc = s->record(s->ctx, r->key, r->config, r->r);
		break;
	case P_WINNER:
		r->rc = s->set_winner(s->ctx, r->key, r->config, r->median_ms, r->default_ms);
		break;
	case P_WINNERS:
		r->rc = s->winners(s->ctx, r->key, r->any_software, r->cb, r->cbctx);
		break;
	case P_COUNT:
		r->rc = s->count(s->ctx, r->key, r->n);
		break;
	case P_WINNER_DEFAULT:
		r->rc = s->winner_default != NULL ? s->winner_default(s->ctx, r->key, r->out_ms)
		                                  : ROCMD_ENOTFOUND;
		break;
	}
	if (r->rc < 0 && r->rc != ROCMD_ENOTFOUND && r->rc != ROCMD_EEXISTS)
		log_err("tune: store: %s", rocmd_strerror(r->rc));
}

void
tune_run_proxy_init(struct rocmd_tune *t)
{
	t->proxy.ctx = t;
	t->proxy.lookup = px_lookup;
	t->proxy.record = px_record;
	t->proxy.set_winner = px_set_winner;
	t->proxy.winners = px_winners;
	t->proxy.count = px_count;
	t->proxy.winner_default = px_winner_default;
}

/* ---- the worker ---- */

/* Default shapes: "MxNxK" for each backend kind. */
const char *const tune_cpu_shapes[] = {"8x256x256", "64x256x256", NULL};
const char *const tune_gpu_shapes[] = {
    "1x4096x4096",  "8x4096x4096",  "128x4096x4096",  "512x4096x4096",
    "1x11008x4096", "8x11008x4096", "128x11008x4096", "512x11008x4096",
    "1x4096x11008", "8x4096x11008", "128x4096x11008", "512x4096x11008",
    NULL,
};

/* Loop thread: the running job's progress into the queue. */
static void
flush_progress(void *arg)
{
	struct rocmd_tune *t = arg;
	int evals, measured;
	double best;

	uv_mutex_lock(&t->lock);
	evals = t->prog_evals;
	measured = t->prog_measured;
	best = t->prog_best;
	uv_mutex_unlock(&t->lock);
	if (t->running && !t->run.probe)
		rocmd_tune_queue_progress(t->q, t->run.job.id, evals,
		                          t->run.job.measured + measured, best, rocmd_now_ms());
}

static void
on_progress(void *ctx, const struct tune_progress *pr)
{
	struct rocmd_tune *t = ctx;

	uv_mutex_lock(&t->lock);
	t->prog_evals = pr->evals;
	t->prog_measured += pr->from_store ? 0 : 1;
	t->prog_best = pr->best_ms;
	uv_mutex_unlock(&t->lock);
	rocmd_job_call(&t->job->base, flush_progress, t);
}

int
tune_job_problem(const struct rocmd_tune_job *j, struct gemm_problem *p)
{
	enum gemm_dtype dt;

	if (gemm_dtype_parse(j->dtype, &dt) < 0 || strlen(j->trans) != 2)
		return ROCMD_EINVAL;
	gemm_problem_init(p, dt, j->trans[0] == 'T' ? GEMM_T : GEMM_N,
	                  j->trans[1] == 'T' ? GEMM_T : GEMM_N, j->m, j->n, j->k, j->batch);
	return 0;
}

void
tune_id_key(const struct backend_device_info *dev, const char *hash, const char *sdk,
            struct tune_key *key)
{
	struct gemm_problem p;

	gemm_problem_init(&p, GEMM_FP32, GEMM_N, GEMM_N, 1, 1, 1, 1);
	tune_key_init(key, dev, hash, &p);
	key->problem[0] = '\0';
	snprintf(key->runtime, sizeof(key->runtime), "%.40s; sdk %.16s", dev->runtime_version, sdk);
}

/* The test hook ROCMD_TUNE_DRIVER (see the file comment): no backend can
 * change its driver on a test machine. Runs on the worker, after each open. */
static void
driver_override(struct backend_device_info *dev)
{
	const char *v = getenv("ROCMD_TUNE_DRIVER");
	char line[64] = "";
	FILE *f;

	if (v == NULL || v[0] == '\0')
		return;
	if (v[0] != '@') {
		snprintf(dev->driver_version, sizeof(dev->driver_version), "%s", v);
		return;
	}
	f = fopen(v + 1, "r");
	if (f == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] != '\0')
			snprintf(dev->driver_version, sizeof(dev->driver_version), "%s", line);
	}
	fclose(f);
}

/* Whether two keys are of one device (arch, name, units, driver). */
static int
same_device(const struct tune_key *a, const struct tune_key *b)
{
	return !strcmp(a->arch, b->arch) && !strcmp(a->device, b->device) &&
	       a->compute_units == b->compute_units && !strcmp(a->driver, b->driver);
}

/* On the worker: every winner of this device and software into a new
 * generation of the tuned library, with the vendor's winners of the same
 * device where they are faster (tunedlib_merge_vendor). Failures are
 * reported, not fatal: the results stay in the store and the next job writes
 * the library again. */
static void
write_library(struct rocmd_tune *t, const struct tune_key *key)
{
	struct run *r = &t->run;
	struct tunedlib *lib = NULL;
	char name[128], dir[1200], why[256] = "";
	int rc, taken = 0;

	t->lib_key = *key;
	t->lib_key.problem[0] = '\0';
	t->have_lib_key = 1;
	rc = tunedlib_from_store(&t->proxy, key, &lib, why, sizeof(why));
	if (rc == 0 && t->have_vendor && same_device(&t->vendor_key, key))
		rc = tunedlib_merge_vendor(lib, &t->proxy, &t->vendor_key, t->vendor_name,
		                           t->vendor_sha, &taken, why, sizeof(why));
	if (rc == 0)
		rc = tunedlib_compile(lib, NULL, why, sizeof(why));
	if (rc == 0)
		rc = tunedlib_dir_name(key, name, sizeof(name));
	if (rc == 0) {
		snprintf(dir, sizeof(dir), "%s/tuned/%s", r->state_dir, name);
		rc = tunedlib_write(lib, dir, why, sizeof(why));
	}
	if (rc == 0) {
		r->lib_generation = (int)tunedlib_generation(lib);
		snprintf(r->lib_why, sizeof(r->lib_why),
		         "%.160s (generation %d, %d shapes, %d of them %.15s's solutions)", dir,
		         r->lib_generation, tunedlib_count(lib), taken,
		         taken ? t->vendor_name : "a vendor");
	} else {
		r->lib_generation = -1;
		snprintf(r->lib_why, sizeof(r->lib_why), "%.250s",
		         why[0] ? why : rocmd_strerror(rc));
	}
	tunedlib_free(lib);
}

static void
vendor_opened(void *arg)
{
	tune_vendor_opened(arg);
}

static void
worker(struct rocmd_job *job)
{
	struct rocmd_tune *t = ((struct tune_job *)job)->t;
	struct run *r = &t->run;
	const char *order[] = {"hip", "cuda", "cpu", NULL};
	char wanted[16];
	const char *one[] = {wanted, NULL};
	const char *const *names = r->backend[0] ? one : order;
	struct tune_measure_opts mo;
	struct tune_evaluator *ev = NULL;
	struct space_def space;
	struct gemm_problem p;
	struct tune_key key;
	struct tune_opts o;
	char hash[17];
	int64_t m, n, k, b;

	snprintf(wanted, sizeof(wanted), "%s", r->backend);
	if (!r->probe && r->job.target[0] != '\0') {
		/* A vendor job: its library's backend, on the target's library. */
		snprintf(wanted, sizeof(wanted), "%s", r->job.backend);
		names = one;
	}
	uv_mutex_lock(&t->lock);
	t->worker_tid = rocmd_tune_os_thread_id();
	uv_mutex_unlock(&t->lock);
	memset(&mo, 0, sizeof(mo));
	mo.seed = 1;
	mo.cancel = &job->canceled;
	snprintf(mo.library, sizeof(mo.library), "%s", r->library);
	snprintf(mo.tensile_dir, sizeof(mo.tensile_dir), "%s", r->tensile_dir);
	snprintf(mo.sysroot, sizeof(mo.sysroot), "%s", r->sysroot);
	r->rc = ROCMD_EUNSUPPORTED;
	r->passed[0] = '\0';
	for (int i = 0; names[i] != NULL && r->rc < 0 && !job->canceled; i++) {
		const struct backend_ops *ops = backend_find(names[i]);

		if (ops == NULL) {
			snprintf(r->why, sizeof(r->why), "no backend %s in this build", names[i]);
			continue;
		}
		if (r->probe) {
			const char *shape =
			    strcmp(names[i], "cpu") ? tune_gpu_shapes[0] : tune_cpu_shapes[0];

			gemm_shape_parse(shape, &m, &n, &k, &b);
			gemm_problem_init(&p, strcmp(names[i], "cpu") ? GEMM_FP16 : GEMM_FP32,
			                  GEMM_N, GEMM_N, m, n, k, 1);
		} else if (tune_vendor_job_problem(&r->job, &p) < 0) {
			snprintf(r->why, sizeof(r->why), "bad problem in job %lld",
			         (long long)r->job.id);
			r->rc = ROCMD_EINVAL;
			break;
		}
		r->why[0] = '\0';
		r->rc = tune_evaluator_open(ops, 0, &p, &mo, &ev, &r->dev, &space, hash, r->why,
		                            sizeof(r->why));
		if (r->rc == 0) {
			snprintf(r->backend, sizeof(r->backend), "%s", names[i]);
			driver_override(&r->dev);
		} else if (r->probe && names[i + 1] != NULL) {
			size_t used = strlen(r->passed);

			snprintf(r->passed + used, sizeof(r->passed) - used, "%s%s: %.300s",
			         used ? "; " : "", names[i], r->why);
		}
	}
	uv_mutex_lock(&t->lock);
	t->worker_tid = 0;
	uv_mutex_unlock(&t->lock);
	/* An open cut short by a yield (see preempt) is a yield, not a failure. */
	if (r->rc < 0 && !r->probe && job->canceled)
		r->rc = ROCMD_ECANCELED;
	if (r->rc == 0 && !r->probe) {
		int cancelled;

		/* A yield that came while the evaluator was opening found no
		 * evaluation to abort: honour it before the first one starts. */
		uv_mutex_lock(&t->lock);
		t->ev = ev;
		cancelled = job->canceled;
		uv_mutex_unlock(&t->lock);
		if (cancelled) {
			r->rc = ROCMD_ECANCELED;
			snprintf(r->why, sizeof(r->why), "cancelled while the evaluator opened");
		}
	}
	if (r->rc == 0 && !r->probe && r->job.target[0] != '\0') {
		/* The loop thread records what was opened (and withdraws what a
		 * change of library or driver made stale) before anything runs. */
		rocmd_job_call(&t->job->base, vendor_opened, t);
	} else if (r->rc == 0 && !r->probe &&
	           strcmp(r->dev.driver_version, r->job.driver) != 0) {
		/* Another driver than the job's: the loop thread re-keys the queue. */
		r->driver_changed = 1;
		r->rc = ROCMD_ECANCELED;
		snprintf(r->why, sizeof(r->why), "the driver changed from %.60s to %.60s",
		         r->job.driver, r->dev.driver_version);
	}
	if (r->rc == 0 && !r->probe) {
		memset(&o, 0, sizeof(o));
		if (r->job.target[0] != '\0') {
			/* The library's digest is the key's source hash, the
			 * program's layout part of its problem (vendor.h); a short
			 * candidate list is searched exhaustively. */
			tune_key_init(&key, &r->dev, hash, &p);
			vendor_problem_key(&p, key.problem, sizeof(key.problem));
			o.strategy = tune_strategy_for(&space, (int)r->job.budget, "sar");
		} else {
			/* The SDK is part of the software key (see the file comment). */
			tune_id_key(&r->dev, hash, r->job.sdk, &key);
			gemm_problem_key(&p, key.problem, sizeof(key.problem));
			o.strategy = "sar";
		}
		o.budget = (int)r->job.budget;
		o.seed = 1;
		o.store = &t->proxy;
		o.cancel = &job->canceled;
		o.progress = on_progress;
		o.progress_ctx = t;
		r->rc =
		    tune_run(ev, &key, &space, &p, &r->dev, &o, &r->sum, r->why, sizeof(r->why));
	}
	if (r->rc == 0)
		snprintf(r->hash, sizeof(r->hash), "%s", hash);
	if (r->rc == 0 && !r->probe && r->job.target[0] == '\0')
		write_library(t, &key);
	if (r->rc == 0 && !r->probe && r->job.target[0] != '\0' && r->dev.library_digest[0]) {
		/* A vendor's winners: offered to rocmd's library of this device. */
		t->vendor_key = key;
		t->vendor_key.problem[0] = '\0';
		snprintf(t->vendor_name, sizeof(t->vendor_name), "%s", r->backend);
		snprintf(t->vendor_sha, sizeof(t->vendor_sha), "%s", r->dev.library_digest);
		t->have_vendor = 1;
		if (t->have_lib_key && same_device(&t->lib_key, &key))
			write_library(t, &t->lib_key);
	}
	r->stopped_ns = uv_hrtime();
	uv_mutex_lock(&t->lock);
	t->ev = NULL;
	uv_mutex_unlock(&t->lock);
	if (ev != NULL)
		tune_evaluator_close(ev);
}

/* ---- the run as a job ---- */

/* Loop thread: a yield or the daemon stopping cuts the run short. The
 * worker polls the cancel flag; this ends the evaluation in flight, or the
 * evaluation process the worker is starting. */
static void
run_cancel(struct rocmd_job *b)
{
	struct rocmd_tune *t = ((struct tune_job *)b)->t;

	uv_mutex_lock(&t->lock);
	if (t->ev != NULL)
		tune_evaluator_abort(t->ev);
	else if (t->worker_tid > 0)
		rocmd_tune_os_kill_opening(t->worker_tid);
	uv_mutex_unlock(&t->lock);
}

static int
run_done(struct rocmd_job *b, cJSON **out)
{
	struct rocmd_tune *t = ((struct tune_job *)b)->t;

	t->job = NULL;
	t->running = 0;
	tune_run_ended(t);
	return 0;
}

static void
run_free(struct rocmd_job *b)
{
	rocmd_job_fini(b);
	free(b);
}

static const struct rocmd_job_ops run_ops = {
    .what = "tune",
    .work = worker,
    .done = run_done,
    .cancel = run_cancel,
    .free = run_free,
};

void
tune_run_start(struct rocmd_tune *t)
{
	struct tune_job *j = calloc(1, sizeof(*j));

	t->prog_evals = t->prog_measured = 0;
	t->prog_best = INFINITY;
	t->yielding = 0;
	t->run_started_ms = rocmd_now_ms();
	if (j == NULL || rocmd_job_init(&j->base, &run_ops) < 0) {
		free(j);
		log_err("tune: cannot start a run: out of memory");
		return;
	}
	j->t = t;
	t->job = j;
	t->running = 1;
	rocmd_jobs_submit(&t->jobs, &j->base);
}
