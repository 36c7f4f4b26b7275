/*
 * The tune scheduler's views and controls for the tune.* methods
 * (tune-methods.c): the status (device, decision, signals, queue, yield
 * latencies), pause/resume/start/stop, adding a shape, and the store and key
 * the results methods read.
 */
#include "tune-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "db/db-tune.h"
#include "kernels/vendor-log.h"

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
		/* The backends tried before this one, each with why it did not open. */
		if (t->passed[0] != '\0')
			cJSON_AddStringToObject(dev, "passed_over", t->passed);
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
			tune_preempt(t, "paused", uv_hrtime(), 0);
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
	tune_schedule(t);
	return 0;
}

/* Queues one job of rocmd's own kernels for DTYPE TRANS MxNxK (batch BATCH,
 * BUDGET or the configured one): origin "user", SOURCE and CALLS where a
 * program's calls asked for it. *ID, *CREATED (0: already queued). */
static int
queue_own(struct rocmd_tune *t, const char *dtype, const char *trans, int64_t m, int64_t n,
          int64_t k, int64_t batch, int64_t budget, const char *source, int64_t calls,
          const char *detail, int64_t *id, int *created, char *why, size_t whylen)
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
	tune_job_fill_device(t, &j);
	snprintf(j.dtype, sizeof(j.dtype), "%s", dtype);
	snprintf(j.trans, sizeof(j.trans), "%s", trans);
	snprintf(j.origin, sizeof(j.origin), "user");
	snprintf(j.source, sizeof(j.source), "%s", source);
	snprintf(j.detail, sizeof(j.detail), "%s", detail);
	j.calls = calls;
	j.m = m;
	j.n = n;
	j.k = k;
	j.batch = batch;
	j.budget = budget > 0 ? budget : t->cfg->tune_budget;
	if (tune_job_problem(&j, &p) < 0 || gemm_problem_check(&p, why, whylen) < 0) {
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
	return 0;
}

int
rocmd_tune_add(struct rocmd_tune *t, const char *dtype, const char *trans, int64_t m, int64_t n,
               int64_t k, int64_t batch, int64_t budget, int64_t *id, int *created, char *why,
               size_t whylen)
{
	int rc = queue_own(t, dtype, trans, m, n, k, batch, budget, "", 0, "", id, created, why,
	                   whylen);

	if (rc == 0)
		tune_schedule(t);
	return rc;
}

int
tune_add_own_shapes(struct rocmd_tune *t, const struct vendor_shapes *s, const char *source,
                    const char *detail, int *queued, int *existing, char *why, size_t whylen)
{
	*queued = *existing = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct vendor_shape *v = &s->v[i];
		char trans[3] = {v->p.ta == GEMM_T ? 'T' : 'N', v->p.tb == GEMM_T ? 'T' : 'N', 0};
		int64_t id;
		int created, rc;

		if (strcmp(v->library, "rocmd-gemm") != 0)
			continue;
		rc = queue_own(t, gemm_dtype_name(v->p.dtype), trans, v->p.m, v->p.n, v->p.k,
		               v->p.batch, 0, source, v->calls, detail, &id, &created, why, whylen);
		if (rc < 0)
			return rc;
		*queued += created;
		*existing += !created;
	}
	if (*queued > 0)
		tune_schedule(t);
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
	tune_id_key(&t->dev, t->hash, t->sdk, key);
	return 0;
}

int
rocmd_tune_input(struct rocmd_tune *t, long session, int64_t idle_ms, char *why, size_t whylen)
{
	if (t->idle == NULL) {
		snprintf(why, whylen, "the idle monitor is not running");
		return ROCMD_EUNSUPPORTED;
	}
	return rocmd_idle_report(t->idle, session, idle_ms, why, whylen);
}
