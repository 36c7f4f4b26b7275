/*
 * The idle tune scheduler (see tune-sched.h).
 *
 * Threads. The tuner runs on one worker thread per job (uv_thread), never on
 * the loop thread; its evaluator isolates each candidate in a child process
 * (kernels/measure.c), so the daemon itself never initializes a GPU runtime.
 * DESIGN's rule that only the loop thread writes the database is kept by the
 * store the worker is given: every call of its lookup, record, set_winner,
 * winners and count is handed to the loop thread (a request slot, a mutex,
 * uv_async_send) and the worker waits on a condition variable until the loop
 * thread has run it against the SQLite store on the daemon's connection
 * (tune_db_attach). record() therefore returns only once the evaluation is
 * committed, which is what makes a kill -9 lose no finished evaluation. The
 * cost is one loop round trip per evaluation, small beside an evaluation.
 *
 * Yielding. User input arrives on the loop thread (idle-unix.c reads the
 * input devices with uv_poll); if a job runs, the loop thread sets the run's
 * cancel flag and calls tune_evaluator_abort(), which kills the evaluation in
 * flight; the worker's wait for the evaluation process sees the flag within
 * 10 ms (tune_measure_opts.cancel), the killed process is reaped in the
 * background (a CUDA context takes ~250 ms to tear down, with no kernel of
 * ours left to run), and tune_run() returns ROCMD_ECANCELED without
 * recording the killed evaluation. The time from the input event to the worker's return is kept
 * (`rocmctl tune status`: p50/p99/max) and is what bench/tune-preempt.sh
 * measures. The job goes back to 'queued'; its finished evaluations are in
 * the store, so the next run resumes where it stopped.
 *
 * Wake-ups. While there is nothing to tune, or tuning is paused or off, no
 * timer runs and no input device is open. While tuning is wanted, a timer
 * samples the slow signals (power, GPU users, load, logind) every
 * tune.check_ms and the input devices are watched by events.
 *
 * The device. At start the worker opens the configured backend (or tries
 * hip, cuda, then cpu) in a child process to learn the device; the default
 * shapes for it are then queued (GPUs: LLM-inference shapes, fp16 NN, as
 * bench/h200.sh's llm set; the CPU backend: two small fp32 shapes, so a job
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
#include "tune-sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include "common/error.h"
#include "common/log.h"
#include "db/db-sdk.h"
#include "db/db-tune-queue.h"
#include "db/db-tune.h"
#include "idle.h"
#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/tune.h"
#include "kernels/tunedlib.h"
#include "daemon/sdk/sdk-version.h"
#include "daemon/sdk/sdk.h"
#include "daemon/core/server.h"
#include "tune-os.h"

#define LAT_KEEP 4096 /* preemption latencies kept for the status */

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
	int rc;
	int done;
};

/* What the worker is asked to do and what it found. */
struct run {
	int probe; /* 1: only open the backend to learn the device */
	char backend[16];
	struct rocmd_tune_job job;
	/* results */
	int rc;
	char why[512];
	struct backend_device_info dev;
	struct tune_summary sum;
	uint64_t stopped_ns;
	char hash[17];        /* the kernel source's */
	char state_dir[1024]; /* where the tuned library goes */
	char lib_why[256];    /* the library write's outcome */
	int lib_generation;
	int driver_changed; /* the device's driver is not the job's: not run */
};

/* The last change of SDK or driver that made jobs stale, for the status. */
struct sw_change {
	char message[256];
	int64_t at_ms;
	int stale, queued;
};

struct rocmd_tune {
	struct rocmd_server *srv;
	struct rocmd_config *cfg;
	struct rocmd_tune_queue_db *q;
	struct tune_store store; /* SQLite, loop thread only */
	struct tune_store proxy; /* what the worker gets */
	struct rocmd_idle *idle;
	struct rocmd_idle_policy policy;
	uv_timer_t timer;
	uv_async_t async;
	int timer_on;
	int stopping;

	/* the device */
	int dev_known;
	int probe_failed;
	char backend[16];
	struct backend_device_info dev;
	char sdk[64];
	char hash[17]; /* the kernel source's, from the probe */
	struct sw_change change;

	/* control */
	int forced; /* `tune start`: ignore the idle policy */
	int paused; /* `tune pause` */
	int wanted; /* watching: there is work and tuning may happen */
	char decision[160];
	int decision_go;
	struct rocmd_idle_signals sig;
	int64_t sig_ms;

	/* the worker */
	uv_thread_t loop_thread;
	uv_thread_t thread;
	int running; /* a thread exists (join pending) */
	struct run run;
	int64_t run_started_ms;
	int yielding;
	uint64_t yield_signal_ns; /* when the input that stopped it was read */
	int64_t yield_event_us;   /* the input event's own time stamp */
	char yield_reason[96];

	/* shared with the worker, under lock */
	uv_mutex_t lock;
	uv_cond_t cond;
	struct proxy_req *req;
	int finished;
	int prog_dirty;
	int prog_evals, prog_measured;
	double prog_best;
	struct tune_evaluator *ev;
	long worker_tid; /* the worker thread, while it opens an evaluator */
	volatile int cancel;

	/* preemption latencies (ms), a ring */
	double lat[LAT_KEEP];
	int nlat, lat_next;
	int64_t yields;
};

static void schedule(struct rocmd_tune *t);

/* ---- the store the worker sees ---- */

static void serve(struct rocmd_tune *t, struct proxy_req *r);

static int
proxy_call(struct rocmd_tune *t, struct proxy_req *r)
{
	uv_thread_t self = uv_thread_self();

	/* A store callback run by serve() (tunedlib's winners walk asks for each
	 * winner's default time) is already on the loop thread. */
	if (uv_thread_equal(&self, &t->loop_thread)) {
		serve(t, r);
		return r->rc;
	}
	uv_mutex_lock(&t->lock);
	while (t->req != NULL)
		uv_cond_wait(&t->cond, &t->lock);
	t->req = r;
	uv_cond_broadcast(&t->cond); /* rocmd_tune_stop may be waiting on the loop thread */
	uv_async_send(&t->async);
	while (!r->done)
		uv_cond_wait(&t->cond, &t->lock);
	uv_mutex_unlock(&t->lock);
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

/* ---- the worker ---- */

/* Default shapes: "MxNxK" for each backend kind. */
static const char *const cpu_shapes[] = {"8x256x256", "64x256x256", NULL};
static const char *const gpu_shapes[] = {
    "1x4096x4096",  "8x4096x4096",  "128x4096x4096",  "512x4096x4096",
    "1x11008x4096", "8x11008x4096", "128x11008x4096", "512x11008x4096",
    "1x4096x11008", "8x4096x11008", "128x4096x11008", "512x4096x11008",
    NULL,
};

static void
on_progress(void *ctx, const struct tune_progress *pr)
{
	struct rocmd_tune *t = ctx;

	uv_mutex_lock(&t->lock);
	t->prog_evals = pr->evals;
	t->prog_measured += pr->from_store ? 0 : 1;
	t->prog_best = pr->best_ms;
	t->prog_dirty = 1;
	uv_mutex_unlock(&t->lock);
	uv_async_send(&t->async);
}

static int
job_problem(const struct rocmd_tune_job *j, struct gemm_problem *p)
{
	enum gemm_dtype dt;

	if (gemm_dtype_parse(j->dtype, &dt) < 0 || strlen(j->trans) != 2)
		return ROCMD_EINVAL;
	gemm_problem_init(p, dt, j->trans[0] == 'T' ? GEMM_T : GEMM_N,
	                  j->trans[1] == 'T' ? GEMM_T : GEMM_N, j->m, j->n, j->k, j->batch);
	return 0;
}

/* The sdk-folded software key of a device: the tuned library's identity. */
static void
id_key(const struct backend_device_info *dev, const char *hash, const char *sdk,
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

/* On the worker: every winner of this device and software into a new
 * generation of the tuned library. Failures are reported, not fatal: the
 * results stay in the store and the next job writes the library again. */
static void
write_library(struct rocmd_tune *t, const struct tune_key *key)
{
	struct run *r = &t->run;
	struct tunedlib *lib = NULL;
	char name[128], dir[1200], why[256] = "";
	int rc;

	rc = tunedlib_from_store(&t->proxy, key, &lib, why, sizeof(why));
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
		snprintf(r->lib_why, sizeof(r->lib_why), "%.200s (generation %d, %d shapes)", dir,
		         r->lib_generation, tunedlib_count(lib));
	} else {
		r->lib_generation = -1;
		snprintf(r->lib_why, sizeof(r->lib_why), "%.250s",
		         why[0] ? why : rocmd_strerror(rc));
	}
	tunedlib_free(lib);
}

static void
worker(void *arg)
{
	struct rocmd_tune *t = arg;
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
	uv_mutex_lock(&t->lock);
	t->worker_tid = rocmd_tune_os_thread_id();
	uv_mutex_unlock(&t->lock);
	memset(&mo, 0, sizeof(mo));
	mo.seed = 1;
	mo.cancel = &t->cancel;
	r->rc = ROCMD_EUNSUPPORTED;
	for (int i = 0; names[i] != NULL && r->rc < 0 && !t->cancel; i++) {
		const struct backend_ops *ops = backend_find(names[i]);

		if (ops == NULL) {
			snprintf(r->why, sizeof(r->why), "no backend %s in this build", names[i]);
			continue;
		}
		if (r->probe) {
			const char *shape = strcmp(names[i], "cpu") ? gpu_shapes[0] : cpu_shapes[0];

			gemm_shape_parse(shape, &m, &n, &k, &b);
			gemm_problem_init(&p, strcmp(names[i], "cpu") ? GEMM_FP16 : GEMM_FP32,
			                  GEMM_N, GEMM_N, m, n, k, 1);
		} else if (job_problem(&r->job, &p) < 0) {
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
		}
	}
	uv_mutex_lock(&t->lock);
	t->worker_tid = 0;
	uv_mutex_unlock(&t->lock);
	/* An open cut short by a yield (see preempt) is a yield, not a failure. */
	if (r->rc < 0 && !r->probe && t->cancel)
		r->rc = ROCMD_ECANCELED;
	if (r->rc == 0 && !r->probe) {
		int cancelled;

		/* A yield that came while the evaluator was opening found no
		 * evaluation to abort: honour it before the first one starts. */
		uv_mutex_lock(&t->lock);
		t->ev = ev;
		cancelled = t->cancel;
		uv_mutex_unlock(&t->lock);
		if (cancelled) {
			r->rc = ROCMD_ECANCELED;
			snprintf(r->why, sizeof(r->why), "cancelled while the evaluator opened");
		}
	}
	if (r->rc == 0 && !r->probe && strcmp(r->dev.driver_version, r->job.driver) != 0) {
		/* Another driver than the job's: the loop thread re-keys the queue. */
		r->driver_changed = 1;
		r->rc = ROCMD_ECANCELED;
		snprintf(r->why, sizeof(r->why), "the driver changed from %.60s to %.60s",
		         r->job.driver, r->dev.driver_version);
	}
	if (r->rc == 0 && !r->probe) {
		/* The SDK is part of the software key (see the file comment). */
		id_key(&r->dev, hash, r->job.sdk, &key);
		gemm_problem_key(&p, key.problem, sizeof(key.problem));
		memset(&o, 0, sizeof(o));
		o.strategy = "sar";
		o.budget = (int)r->job.budget;
		o.seed = 1;
		o.store = &t->proxy;
		o.cancel = &t->cancel;
		o.progress = on_progress;
		o.progress_ctx = t;
		r->rc =
		    tune_run(ev, &key, &space, &p, &r->dev, &o, &r->sum, r->why, sizeof(r->why));
	}
	if (r->rc == 0)
		snprintf(r->hash, sizeof(r->hash), "%s", hash);
	if (r->rc == 0 && !r->probe)
		write_library(t, &key);
	r->stopped_ns = uv_hrtime();
	uv_mutex_lock(&t->lock);
	t->ev = NULL;
	uv_mutex_unlock(&t->lock);
	if (ev != NULL)
		tune_evaluator_close(ev);
	uv_mutex_lock(&t->lock);
	t->finished = 1;
	uv_cond_broadcast(&t->cond);
	uv_mutex_unlock(&t->lock);
	uv_async_send(&t->async);
}

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

static void
job_fill_device(const struct rocmd_tune *t, struct rocmd_tune_job *j)
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

static void
queue_defaults(struct rocmd_tune *t)
{
	const char *const *shapes = strcmp(t->backend, "cpu") ? gpu_shapes : cpu_shapes;
	struct rocmd_tune_job j;
	int64_t id, b;
	int created, added = 0;

	for (int i = 0; shapes[i] != NULL; i++) {
		memset(&j, 0, sizeof(j));
		job_fill_device(t, &j);
		snprintf(j.dtype, sizeof(j.dtype), "%s",
		         strcmp(t->backend, "cpu") ? "fp16" : "fp32");
		snprintf(j.trans, sizeof(j.trans), "NN");
		snprintf(j.origin, sizeof(j.origin), "default");
		gemm_shape_parse(shapes[i], &j.m, &j.n, &j.k, &b);
		j.batch = 1;
		j.budget = t->cfg->tune_budget;
		if (rocmd_tune_queue_add(t->q, &j, rocmd_now_ms(), &id, &created) == 0 && created)
			added++;
	}
	if (added > 0)
		log_notice("tune: %d default shape(s) queued for %s (%s)", added, t->dev.name,
		           t->backend);
}

static int
job_waiting(struct rocmd_tune *t, struct rocmd_tune_job *j)
{
	if (!t->dev_known)
		return 0;
	return rocmd_tune_queue_next(t->q, t->backend, t->dev.arch, t->dev.name, t->sdk,
	                             t->dev.driver_version, j) == 0;
}

static void
start_worker(struct rocmd_tune *t)
{
	t->cancel = 0;
	t->finished = 0;
	t->prog_evals = t->prog_measured = 0;
	t->prog_best = INFINITY;
	t->yielding = 0;
	t->run_started_ms = rocmd_now_ms();
	if (uv_thread_create(&t->thread, worker, t) != 0) {
		log_err("tune: cannot start a worker thread");
		return;
	}
	t->running = 1;
}

static void
start_job(struct rocmd_tune *t, const struct rocmd_tune_job *j)
{
	memset(&t->run, 0, sizeof(t->run));
	t->run.job = *j;
	snprintf(t->run.backend, sizeof(t->run.backend), "%s", t->backend);
	snprintf(t->run.state_dir, sizeof(t->run.state_dir), "%s", t->cfg->state_dir);
	rocmd_tune_queue_set_state(t->q, j->id, "running", NULL, rocmd_now_ms());
	log_info("tune: job %lld (%s %s %lldx%lldx%lld) starts: %s", (long long)j->id, j->dtype,
	         j->trans, (long long)j->m, (long long)j->n, (long long)j->k, t->decision);
	start_worker(t);
}

/* Stops the running job now (loop thread). */
static void
preempt(struct rocmd_tune *t, const char *reason, uint64_t signal_ns, int64_t event_us)
{
	if (!t->running || t->run.probe || t->yielding)
		return;
	t->yielding = 1;
	t->yield_signal_ns = signal_ns;
	t->yield_event_us = event_us;
	snprintf(t->yield_reason, sizeof(t->yield_reason), "%s", reason);
	t->cancel = 1;
	uv_mutex_lock(&t->lock);
	if (t->ev != NULL)
		tune_evaluator_abort(t->ev);
	else if (t->worker_tid > 0)
		rocmd_tune_os_kill_opening(t->worker_tid);
	uv_mutex_unlock(&t->lock);
}

static void
on_activity(void *ctx, uint64_t ns, int64_t event_us)
{
	struct rocmd_tune *t = ctx;

	if (t->running && !t->forced)
		preempt(t, "user input", ns, event_us);
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
	log_notice("tune: device %s (%s, %s backend, %d compute units)", t->dev.name, t->dev.arch,
	           t->backend, t->dev.compute_units);
	current_sdk(t, t->sdk, sizeof(t->sdk));
	rocmd_tune_queue_adopt_driver(t->q, t->backend, t->dev.arch, t->dev.name,
	                              t->dev.driver_version, rocmd_now_ms(), NULL);
	check_sdk(t);
	queue_defaults(t);
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
		    strcmp(j->sdk, t->sdk) || strcmp(j->driver, t->dev.driver_version) ? "stale"
		    : t->paused                                                        ? "paused"
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

static void
on_async(uv_async_t *a)
{
	struct rocmd_tune *t = a->data;
	struct proxy_req *req;
	int finished, dirty, evals = 0, measured = 0;
	double best = 0;

	uv_mutex_lock(&t->lock);
	req = t->req;
	finished = t->finished;
	dirty = t->prog_dirty;
	if (dirty) {
		evals = t->prog_evals;
		measured = t->prog_measured;
		best = t->prog_best;
		t->prog_dirty = 0;
	}
	uv_mutex_unlock(&t->lock);
	if (req != NULL) {
		serve(t, req);
		uv_mutex_lock(&t->lock);
		req->done = 1;
		t->req = NULL;
		uv_cond_broadcast(&t->cond);
		uv_mutex_unlock(&t->lock);
	}
	if (dirty && t->running && !t->run.probe)
		rocmd_tune_queue_progress(t->q, t->run.job.id, evals,
		                          t->run.job.measured + measured, best, rocmd_now_ms());
	if (finished && t->running) {
		uv_thread_join(&t->thread);
		t->running = 0;
		t->finished = 0;
		if (t->run.probe)
			finish_probe(t);
		else
			finish_job(t);
		rocmd_server_counts_changed(t->srv);
		if (!t->stopping)
			schedule(t);
	}
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
static void
schedule(struct rocmd_tune *t)
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
			start_worker(t);
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
			preempt(t, t->decision, uv_hrtime(), 0);
		return;
	}
	if (t->decision_go && job_waiting(t, &j))
		start_job(t, &j);
}

static void
on_timer(uv_timer_t *h)
{
	schedule(h->data);
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
	rc = rocmd_tune_queue_attach(srv->db, &t->q);
	if (rc == 0)
		rc = tune_db_attach(srv->db, &t->store);
	if (rc < 0) {
		snprintf(why, whylen, "cannot open the tuning queue: %s", rocmd_strerror(rc));
		rocmd_tune_queue_detach(t->q);
		free(t);
		return rc;
	}
	/* A pause outlives restarts: paused jobs mean the queue is paused. A
	 * job left running by a crash resumes first (queue_next prefers it). */
	rocmd_tune_queue_move_all(t->q, "paused", "paused", rocmd_now_ms(), &n);
	t->paused = n > 0;
	t->loop_thread = uv_thread_self();
	t->proxy.ctx = t;
	t->proxy.lookup = px_lookup;
	t->proxy.record = px_record;
	t->proxy.set_winner = px_set_winner;
	t->proxy.winners = px_winners;
	t->proxy.count = px_count;
	t->proxy.winner_default = px_winner_default;
	uv_mutex_init(&t->lock);
	uv_cond_init(&t->cond);
	uv_async_init(srv->loop, &t->async, on_async);
	t->async.data = t;
	uv_timer_init(srv->loop, &t->timer);
	t->timer.data = t;
	rc = rocmd_idle_open(srv->loop, root, on_activity, t, &t->idle, why, whylen);
	if (rc < 0)
		log_err("tune: idle monitor: %s", why);
	*out = t;
	schedule(t);
	return 0;
}

void
rocmd_tune_stop(struct rocmd_tune *t)
{
	if (t == NULL || t->stopping)
		return;
	t->stopping = 1;
	if (t->running) {
		t->cancel = 1;
		t->yield_signal_ns = uv_hrtime();
		t->yield_event_us = 0;
		snprintf(t->yield_reason, sizeof(t->yield_reason), "daemon stopping");
		uv_mutex_lock(&t->lock);
		if (t->ev != NULL)
			tune_evaluator_abort(t->ev);
		else if (t->worker_tid > 0)
			rocmd_tune_os_kill_opening(t->worker_tid);
		/* Serve the worker's store calls until it has returned. */
		while (!t->finished) {
			if (t->req != NULL) {
				struct proxy_req *req = t->req;

				uv_mutex_unlock(&t->lock);
				serve(t, req);
				uv_mutex_lock(&t->lock);
				req->done = 1;
				t->req = NULL;
				uv_cond_broadcast(&t->cond);
				continue;
			}
			uv_cond_wait(&t->cond, &t->lock);
		}
		uv_mutex_unlock(&t->lock);
		uv_thread_join(&t->thread);
		t->running = 0;
		if (!t->run.probe) {
			t->yielding = 0;
			finish_job(t);
		}
	}
	uv_close((uv_handle_t *)&t->timer, NULL);
	uv_close((uv_handle_t *)&t->async, NULL);
	rocmd_idle_close(t->idle);
	t->idle = NULL;
}

void
rocmd_tune_free(struct rocmd_tune *t)
{
	if (t == NULL)
		return;
	tune_db_close(&t->store);
	rocmd_tune_queue_detach(t->q);
	uv_mutex_destroy(&t->lock);
	uv_cond_destroy(&t->cond);
	free(t);
}

void
rocmd_tune_on_event(struct rocmd_tune *t, const char *kind)
{
	char sdk[64];

	if (t == NULL || t->stopping || strncmp(kind, "sdk.", 4) != 0 || !t->dev_known)
		return;
	current_sdk(t, sdk, sizeof(sdk));
	if (strcmp(sdk, t->sdk) == 0)
		return;
	log_notice("tune: SDK %s -> %s", t->sdk, sdk);
	snprintf(t->sdk, sizeof(t->sdk), "%s", sdk);
	if (t->running && !t->run.probe)
		preempt(t, "SDK changed", uv_hrtime(), 0);
	check_sdk(t);
	schedule(t);
}

/* ---- for the methods ---- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static cJSON *
latency_json(const struct rocmd_tune *t)
{
	cJSON *l = cJSON_CreateObject();
	double *v;
	int n = t->nlat;

	cJSON_AddNumberToObject(l, "yields", (double)t->yields);
	cJSON_AddNumberToObject(l, "samples", n);
	if (n == 0)
		return l;
	v = malloc(sizeof(double) * (size_t)n);
	if (v == NULL)
		return l;
	memcpy(v, t->lat, sizeof(double) * (size_t)n);
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	cJSON_AddNumberToObject(l, "p50_ms", v[(n - 1) / 2]);
	cJSON_AddNumberToObject(l, "p99_ms", v[(int)ceil(0.99 * n) - 1]);
	cJSON_AddNumberToObject(l, "max_ms", v[n - 1]);
	free(v);
	return l;
}

static cJSON *
signals_json(const struct rocmd_tune *t)
{
	const struct rocmd_idle_signals *s = &t->sig;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "sampled_ms", (double)t->sig_ms);
	cJSON_AddStringToObject(o, "input_source", s->input_source);
	if (s->input_idle_s >= 0)
		cJSON_AddNumberToObject(o, "input_idle_s", s->input_idle_s);
	else
		cJSON_AddNullToObject(o, "input_idle_s");
	cJSON_AddNumberToObject(o, "input_devices", s->input_devices);
	if (s->logind_idle >= 0)
		cJSON_AddBoolToObject(o, "logind_idle", s->logind_idle);
	else
		cJSON_AddNullToObject(o, "logind_idle");
	if (s->ac >= 0)
		cJSON_AddBoolToObject(o, "ac", s->ac);
	else
		cJSON_AddNullToObject(o, "ac");
	cJSON_AddStringToObject(o, "power", s->power);
	if (s->gpu_users >= 0)
		cJSON_AddNumberToObject(o, "gpu_users", s->gpu_users);
	else
		cJSON_AddNullToObject(o, "gpu_users");
	if (s->load1 >= 0)
		cJSON_AddNumberToObject(o, "load1", s->load1);
	else
		cJSON_AddNullToObject(o, "load1");
	cJSON_AddNumberToObject(o, "cpus", s->ncpu);
	if (s->background_ok >= 0)
		cJSON_AddBoolToObject(o, "background_ok", s->background_ok);
	return o;
}

struct counts {
	int n[6];
};

static const char *const states[] = {"queued", "running", "paused", "done", "failed", "stale"};

static int
count_cb(const struct rocmd_tune_job *j, void *ctx)
{
	struct counts *c = ctx;

	for (int i = 0; i < 6; i++)
		if (!strcmp(j->state, states[i]))
			c->n[i]++;
	return 0;
}

cJSON *
rocmd_tune_status(struct rocmd_tune *t)
{
	cJSON *r = cJSON_CreateObject(), *dev, *pol, *jobs, *cur;
	struct counts c;
	const char *state;

	/* Status shows the signals as of now, not the last tick. */
	if (t->idle != NULL) {
		rocmd_idle_sample(t->idle, &t->sig);
		t->sig_ms = rocmd_now_ms();
	}
	if (t->running && !t->run.probe)
		state = t->yielding ? "yielding" : "tuning";
	else if (t->running)
		state = "probing";
	else if (t->paused)
		state = "paused";
	else if (t->wanted)
		state = "waiting";
	else
		state = "idle";
	cJSON_AddStringToObject(r, "state", state);
	cJSON_AddStringToObject(r, "decision", t->decision);
	cJSON_AddBoolToObject(r, "enabled", t->cfg->tune_enabled != 0);
	cJSON_AddBoolToObject(r, "forced", t->forced);
	cJSON_AddBoolToObject(r, "watching", t->wanted);
	dev = cJSON_AddObjectToObject(r, "device");
	if (t->dev_known) {
		cJSON_AddStringToObject(dev, "backend", t->backend);
		cJSON_AddStringToObject(dev, "arch", t->dev.arch);
		cJSON_AddStringToObject(dev, "name", t->dev.name);
		cJSON_AddNumberToObject(dev, "compute_units", t->dev.compute_units);
	}
	cJSON_AddStringToObject(r, "sdk", t->sdk);
	if (t->dev_known)
		cJSON_AddStringToObject(r, "driver", t->dev.driver_version);
	else
		cJSON_AddNullToObject(r, "driver");
	if (t->change.at_ms > 0) {
		cJSON *ch = cJSON_AddObjectToObject(r, "retune");

		cJSON_AddStringToObject(ch, "reason", t->change.message);
		cJSON_AddNumberToObject(ch, "at_ms", (double)t->change.at_ms);
		cJSON_AddNumberToObject(ch, "stale", t->change.stale);
		cJSON_AddNumberToObject(ch, "queued", t->change.queued);
	}
	cJSON_AddItemToObject(r, "signals", signals_json(t));
	pol = cJSON_AddObjectToObject(r, "policy");
	cJSON_AddNumberToObject(pol, "idle_s", (double)t->policy.idle_s);
	cJSON_AddBoolToObject(pol, "ac_only", t->policy.ac_only);
	cJSON_AddNumberToObject(pol, "max_cpu_load", (double)t->policy.max_cpu_load);
	if (t->cfg->tune_quiet_hours != NULL)
		cJSON_AddStringToObject(pol, "quiet_hours", t->cfg->tune_quiet_hours);
	else
		cJSON_AddNullToObject(pol, "quiet_hours");
	memset(&c, 0, sizeof(c));
	rocmd_tune_queue_list(t->q, 1, count_cb, &c);
	jobs = cJSON_AddObjectToObject(r, "jobs");
	for (int i = 0; i < 6; i++)
		cJSON_AddNumberToObject(jobs, states[i], c.n[i]);
	if (t->running && !t->run.probe) {
		uv_mutex_lock(&t->lock);
		cur = cJSON_AddObjectToObject(r, "current");
		cJSON_AddNumberToObject(cur, "job", (double)t->run.job.id);
		cJSON_AddNumberToObject(cur, "evaluations", t->prog_evals);
		cJSON_AddNumberToObject(cur, "budget", (double)t->run.job.budget);
		if (isfinite(t->prog_best))
			cJSON_AddNumberToObject(cur, "best_ms", t->prog_best);
		cJSON_AddNumberToObject(cur, "since_ms", (double)t->run_started_ms);
		uv_mutex_unlock(&t->lock);
	}
	cJSON_AddItemToObject(r, "preemption", latency_json(t));
	return r;
}

int
rocmd_tune_control(struct rocmd_tune *t, const char *what, char *why, size_t whylen)
{
	int64_t now = rocmd_now_ms();
	int n = 0;

	if (!strcmp(what, "pause")) {
		t->paused = 1;
		t->forced = 0;
		rocmd_tune_queue_move_all(t->q, "queued", "paused", now, &n);
		if (t->running && !t->run.probe)
			preempt(t, "paused", uv_hrtime(), 0);
	} else if (!strcmp(what, "resume")) {
		t->paused = 0;
		rocmd_tune_queue_move_all(t->q, "paused", "queued", now, &n);
	} else if (!strcmp(what, "start")) {
		if (t->probe_failed) {
			snprintf(why, whylen, "%s", t->decision);
			return ROCMD_EUNSUPPORTED;
		}
		t->paused = 0;
		rocmd_tune_queue_move_all(t->q, "paused", "queued", now, &n);
		t->forced = 1;
		t->wanted = 0; /* re-evaluate: forced runs do not watch input */
		rocmd_idle_watch(t->idle, 0);
	} else {
		snprintf(why, whylen, "unknown control %s", what);
		return ROCMD_EINVAL;
	}
	schedule(t);
	return 0;
}

int
rocmd_tune_add(struct rocmd_tune *t, const char *dtype, const char *trans, int64_t m, int64_t n,
               int64_t k, int64_t batch, int64_t budget, int64_t *id, int *created, char *why,
               size_t whylen)
{
	struct rocmd_tune_job j;
	struct gemm_problem p;
	int rc;

	if (!t->dev_known) {
		snprintf(why, whylen, "%s",
		         t->probe_failed ? t->decision
		                         : "the tuning device is still being probed; "
		                           "try again in a moment");
		return t->probe_failed ? ROCMD_EUNSUPPORTED : ROCMD_EBUSY;
	}
	memset(&j, 0, sizeof(j));
	job_fill_device(t, &j);
	snprintf(j.dtype, sizeof(j.dtype), "%s", dtype);
	snprintf(j.trans, sizeof(j.trans), "%s", trans);
	snprintf(j.origin, sizeof(j.origin), "user");
	j.m = m;
	j.n = n;
	j.k = k;
	j.batch = batch;
	j.budget = budget > 0 ? budget : t->cfg->tune_budget;
	if (job_problem(&j, &p) < 0 || gemm_problem_check(&p, why, whylen) < 0) {
		if (why[0] == '\0')
			snprintf(why, whylen,
			         "dtype must be fp32, fp16 or bf16 and trans NN, NT, "
			         "TN or TT");
		return ROCMD_EINVAL;
	}
	rc = rocmd_tune_queue_add(t->q, &j, rocmd_now_ms(), id, created);
	if (rc < 0) {
		snprintf(why, whylen, "cannot queue: %s", rocmd_tune_queue_errmsg(t->q));
		return rc;
	}
	if (*created && t->paused)
		rocmd_tune_queue_set_state(t->q, *id, "paused", NULL, rocmd_now_ms());
	schedule(t);
	return 0;
}

struct rocmd_tune_queue_db *
rocmd_tune_queue_db(struct rocmd_tune *t)
{
	return t->q;
}

struct tune_store *
rocmd_tune_store(struct rocmd_tune *t)
{
	return &t->store;
}

int
rocmd_tune_id_key(struct rocmd_tune *t, struct tune_key *key, char *why, size_t whylen)
{
	if (!t->dev_known) {
		snprintf(why, whylen, "%s",
		         t->probe_failed ? t->decision : "the tuning device is still being probed");
		return t->probe_failed ? ROCMD_EUNSUPPORTED : ROCMD_EBUSY;
	}
	id_key(&t->dev, t->hash, t->sdk, key);
	return 0;
}
