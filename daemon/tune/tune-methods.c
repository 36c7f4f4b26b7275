/*
 * JSON-RPC methods of idle tuning (docs/PROTOCOL.md, "Tuning"): tune.status
 * (every idle signal, the policy, the decision and its reason, the queue and
 * the running job's progress, preemption latencies), tune.results, the
 * controls tune.start / tune.pause / tune.resume, tune.add, and tune.export /
 * tune.import of the tuned library's results. The scheduler (tune-sched.c)
 * holds the state; everything here runs on the loop thread.
 */
#include "tune-methods.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/proto.h"
#include "db/db-tune-override.h"
#include "db/db-tune-queue.h"
#include "kernels/gemm.h"
#include "kernels/tunedlib.h"
#include "daemon/core/server.h"
#include "tune-sched.h"

#define JOBS_MAX 1000 /* rows in one reply */

/* An optional param that is absent keeps its default. */
static int
opt(int rc)
{
	return rc == ROCMD_ENOTFOUND ? 0 : rc;
}

static int
need_tune(struct rocmd_conn *conn, struct rocmd_tune **t, char *why, size_t whylen)
{
	*t = conn->srv->tune;
	if (*t == NULL) {
		snprintf(why, whylen, "idle tuning is not running in this daemon");
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

cJSON *
rocmd_tune_job_json(const struct rocmd_tune_job *j)
{
	cJSON *o = cJSON_CreateObject();
	char shape[96];

	snprintf(shape, sizeof(shape), "%lldx%lldx%lld", (long long)j->m, (long long)j->n,
	         (long long)j->k);
	cJSON_AddNumberToObject(o, "id", (double)j->id);
	cJSON_AddStringToObject(o, "state", j->state);
	cJSON_AddStringToObject(o, "origin", j->origin);
	cJSON_AddStringToObject(o, "dtype", j->dtype);
	cJSON_AddStringToObject(o, "trans", j->trans);
	cJSON_AddStringToObject(o, "shape", shape);
	cJSON_AddNumberToObject(o, "batch", (double)j->batch);
	cJSON_AddStringToObject(o, "backend", j->backend);
	cJSON_AddStringToObject(o, "arch", j->arch);
	cJSON_AddStringToObject(o, "device", j->device);
	cJSON_AddStringToObject(o, "sdk", j->sdk);
	cJSON_AddStringToObject(o, "driver", j->driver);
	cJSON_AddNumberToObject(o, "budget", (double)j->budget);
	cJSON_AddNumberToObject(o, "evaluations", (double)j->evals);
	cJSON_AddNumberToObject(o, "measured", (double)j->measured);
	if (j->winner[0])
		cJSON_AddStringToObject(o, "winner", j->winner);
	else
		cJSON_AddNullToObject(o, "winner");
	if (j->best_ms > 0)
		cJSON_AddNumberToObject(o, "best_ms", j->best_ms);
	else
		cJSON_AddNullToObject(o, "best_ms");
	if (j->default_ms > 0)
		cJSON_AddNumberToObject(o, "default_ms", j->default_ms);
	else
		cJSON_AddNullToObject(o, "default_ms");
	if (j->best_ms > 0 && j->default_ms > 0)
		cJSON_AddNumberToObject(o, "speedup", j->default_ms / j->best_ms);
	if (j->seeded_from > 0)
		cJSON_AddNumberToObject(o, "seeded_from", (double)j->seeded_from);
	else
		cJSON_AddNullToObject(o, "seeded_from");
	cJSON_AddStringToObject(o, "detail", j->detail);
	cJSON_AddNumberToObject(o, "created_ms", (double)j->created_ms);
	cJSON_AddNumberToObject(o, "updated_ms", (double)j->updated_ms);
	if (j->finished_ms > 0)
		cJSON_AddNumberToObject(o, "finished_ms", (double)j->finished_ms);
	if (j->target[0] != '\0') {
		/* A vendor library's solutions for a deploy target. */
		cJSON_AddStringToObject(o, "target", j->target);
		cJSON_AddStringToObject(o, "library", j->library);
		cJSON_AddStringToObject(o, "lib_digest", j->lib_digest);
		cJSON_AddStringToObject(o, "source", j->source);
		cJSON_AddNumberToObject(o, "calls", (double)j->calls);
		cJSON_AddNumberToObject(o, "lda", (double)j->lda);
		cJSON_AddNumberToObject(o, "ldb", (double)j->ldb);
		cJSON_AddNumberToObject(o, "ldc", (double)j->ldc);
		if (j->batch > 1) {
			cJSON_AddNumberToObject(o, "stride_a", (double)j->stride_a);
			cJSON_AddNumberToObject(o, "stride_b", (double)j->stride_b);
			cJSON_AddNumberToObject(o, "stride_c", (double)j->stride_c);
		}
		cJSON_AddNumberToObject(o, "alpha", j->alpha);
		cJSON_AddNumberToObject(o, "beta", j->beta);
		cJSON_AddNumberToObject(o, "est_ms", j->est_ms);
		if (j->best_hi_ms > 0)
			cJSON_AddNumberToObject(o, "best_hi_ms", j->best_hi_ms);
		if (j->default_lo_ms > 0)
			cJSON_AddNumberToObject(o, "default_lo_ms", j->default_lo_ms);
		cJSON_AddBoolToObject(o, "written", rocmd_tune_entry_written(j));
	}
	return o;
}

struct list_ctx {
	cJSON *arr;
	int n;
	int done_only;
	const char *target; /* only this target's vendor jobs; NULL all */
	struct rocmd_tune *t;
};

static int
list_cb(const struct rocmd_tune_job *j, void *ctx)
{
	struct list_ctx *l = ctx;
	struct rocmd_tune_override ov;
	cJSON *o;

	if (l->done_only && strcmp(j->state, "done") && strcmp(j->state, "stale") &&
	    strcmp(j->state, "failed"))
		return 0;
	if (l->target != NULL && strcmp(j->target, l->target) != 0)
		return 0;
	if (l->n++ >= JOBS_MAX)
		return 0;
	o = rocmd_tune_job_json(j);
	if (l->t != NULL && j->target[0] != '\0') {
		/* Live: the entry is in an override programs see now. */
		int live = rocmd_tune_entry_written(j) &&
		           rocmd_tune_override_state(l->t, j->target, j->backend, &ov) == 0 &&
		           !strcmp(ov.state, "live") && !strcmp(ov.lib_digest, j->lib_digest);

		cJSON_AddBoolToObject(o, "live", live);
		if (rocmd_tune_override_state(l->t, j->target, j->backend, &ov) == 0)
			cJSON_AddStringToObject(o, "override", ov.state);
	}
	cJSON_AddItemToArray(l->arr, o);
	return 0;
}

static int
m_status(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct list_ctx l = {NULL, 0, 0, NULL, NULL};
	struct rocmd_tune *t;
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0)
		return rc;
	r = rocmd_tune_status(t);
	l.arr = cJSON_AddArrayToObject(r, "queue");
	rocmd_tune_queue_list(rocmd_tune_queue_db(t), 0, list_cb, &l);
	*result = r;
	return 0;
}

static int
m_results(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"all", "target", NULL};
	struct list_ctx l = {NULL, 0, 1, NULL, NULL};
	struct rocmd_tune *t;
	int all = 0, rc;
	cJSON *r;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = opt(rocmd_param_bool(params, "all", 0, &all, why, whylen))) < 0 ||
	    (rc = opt(rocmd_param_string(params, "target", 0, &l.target, why, whylen))) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0)
		return rc;
	l.t = t;
	r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "overrides", rocmd_tune_overrides(t));
	l.arr = cJSON_AddArrayToObject(r, "jobs");
	rc = rocmd_tune_queue_list(rocmd_tune_queue_db(t), all, list_cb, &l);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "%s", rocmd_tune_queue_errmsg(rocmd_tune_queue_db(t)));
		return rc;
	}
	cJSON_AddBoolToObject(r, "truncated", l.n > JOBS_MAX);
	*result = r;
	return 0;
}

static int
control(struct rocmd_conn *conn, const cJSON *params, const char *what, cJSON **result, char *why,
        size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_tune *t;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0 ||
	    (rc = rocmd_tune_control(t, what, why, whylen)) < 0)
		return rc;
	*result = rocmd_tune_status(t);
	return 0;
}

/*
 * tune.input: a user session's agent says how long its session has had no
 * input. Any local user may call it, as reading is: it speaks only for the
 * caller's own session (from its token, never from the params), and the
 * least idleness over the sessions wins, so no one can make another user's
 * session look idle.
 */
static int
m_input(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"idle_ms", NULL};
	struct rocmd_tune *t;
	int64_t idle_ms;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "idle_ms", 1, 0, (int64_t)1 << 40, &idle_ms, why,
	                          whylen)) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0 ||
	    (rc = rocmd_tune_input(t, conn->peer.session, idle_ms, why, whylen)) < 0)
		return rc;
	*result = cJSON_CreateObject();
	cJSON_AddNumberToObject(*result, "session", (double)conn->peer.session);
	return 0;
}

static int
m_start(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	return control(conn, params, "start", result, why, whylen);
}

static int
m_pause(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	return control(conn, params, "pause", result, why, whylen);
}

static int
m_resume(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	return control(conn, params, "resume", result, why, whylen);
}

static int
m_add(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"dtype", "trans", "m",      "n",
	                                   "k",     "batch", "budget", NULL};
	const char *dtype = "fp32", *trans = "NN";
	int64_t m, n, k, batch = 1, budget = 0, id;
	struct rocmd_tune *t;
	int created, rc;
	cJSON *r;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = opt(rocmd_param_string(params, "dtype", 0, &dtype, why, whylen))) < 0 ||
	    (rc = opt(rocmd_param_string(params, "trans", 0, &trans, why, whylen))) < 0 ||
	    (rc = rocmd_param_int(params, "m", 1, 1, 1 << 20, &m, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "n", 1, 1, 1 << 20, &n, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "k", 1, 1, 1 << 20, &k, why, whylen)) < 0 ||
	    (rc = opt(rocmd_param_int(params, "batch", 0, 1, 1 << 16, &batch, why, whylen))) < 0 ||
	    (rc = opt(rocmd_param_int(params, "budget", 0, 1, 100000, &budget, why, whylen))) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0)
		return rc;
	/* Checked here, in words, rather than by the queue table's CHECK constraint. */
	{
		enum gemm_dtype dt;
		if (gemm_dtype_parse(dtype, &dt) < 0) {
			snprintf(why, whylen, "param 'dtype' must be fp32, fp16 or bf16, not '%s'",
			         dtype);
			return ROCMD_EPARAMS;
		}
		if (strlen(trans) != 2 || strspn(trans, "NT") != 2) {
			snprintf(why, whylen, "param 'trans' must be NN, NT, TN or TT, not '%s'",
			         trans);
			return ROCMD_EPARAMS;
		}
	}
	rc = rocmd_tune_add(t, dtype, trans, m, n, k, batch, budget, &id, &created, why, whylen);
	if (rc < 0)
		return rc;
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "id", (double)id);
	cJSON_AddBoolToObject(r, "created", created);
	rocmd_server_counts_changed(conn->srv);
	*result = r;
	return 0;
}

/* tune.add_shapes: the GEMMs a program ran (rocmctl tune capture, import-log). */
static int
m_add_shapes(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
             size_t whylen)
{
	static const char *const keys[] = {"shapes", "source", "detail", NULL};
	const char *source = NULL, *detail = "";
	const cJSON *shapes;
	struct rocmd_tune *t;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "source", 1, &source, why, whylen)) < 0 ||
	    (rc = opt(rocmd_param_string(params, "detail", 0, &detail, why, whylen))) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0)
		return rc;
	shapes = cJSON_GetObjectItemCaseSensitive(params, "shapes");
	if (!cJSON_IsArray(shapes)) {
		snprintf(why, whylen, "param 'shapes' must be an array");
		return ROCMD_EPARAMS;
	}
	return rocmd_tune_add_shapes(t, shapes, source, detail, result, why, whylen);
}

/* tune.off / tune.on: a target's overrides withdrawn and kept off, or back. */
static int
switch_target(struct rocmd_conn *conn, const cJSON *params, int on, cJSON **result, char *why,
              size_t whylen)
{
	static const char *const keys[] = {"target", NULL};
	const char *target;
	struct rocmd_tune *t;
	int changed = 0, rc;
	char note[256] = "";

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "target", 1, &target, why, whylen)) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0 ||
	    (rc = rocmd_tune_switch(t, target, on, &changed, note, sizeof(note))) < 0) {
		if (note[0])
			snprintf(why, whylen, "%s", note);
		return rc;
	}
	*result = cJSON_CreateObject();
	cJSON_AddNumberToObject(*result, "changed", changed);
	if (note[0])
		cJSON_AddStringToObject(*result, "note", note);
	cJSON_AddItemToObject(*result, "overrides", rocmd_tune_overrides(t));
	return 0;
}

static int
m_off(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	return switch_target(conn, params, 0, result, why, whylen);
}

static int
m_on(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	return switch_target(conn, params, 1, result, why, whylen);
}

static int
m_export(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"format", NULL};
	const char *format = "json";
	struct tunedlib *lib = NULL;
	struct rocmd_tune *t;
	struct tune_key key;
	char *data = NULL;
	size_t len = 0;
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = opt(rocmd_param_string(params, "format", 0, &format, why, whylen))) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0)
		return rc;
	if (strcmp(format, "json") && strcmp(format, "csv")) {
		snprintf(why, whylen, "param 'format' must be \"json\" or \"csv\"");
		return ROCMD_EPARAMS;
	}
	if ((rc = rocmd_tune_id_key(t, &key, why, whylen)) < 0)
		return rc;
	rc = tunedlib_from_store(rocmd_tune_store(t), &key, &lib, why, whylen);
	if (rc == 0)
		rc = strcmp(format, "csv") ? tunedlib_export_json(lib, &data, &len)
		                           : tunedlib_export_csv(lib, &data, &len);
	if (rc == 0 && len + 8192 > (size_t)conn->srv->cfg->max_frame) {
		snprintf(why, whylen, "the export (%zu bytes) exceeds the frame limit", len);
		rc = ROCMD_EOVERLOAD;
	}
	if (rc < 0) {
		tunedlib_free(lib);
		free(data);
		return rc;
	}
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "format", format);
	cJSON_AddNumberToObject(r, "shapes", tunedlib_count(lib));
	cJSON_AddStringToObject(r, "data", data);
	tunedlib_free(lib);
	free(data);
	*result = r;
	return 0;
}

static int
m_import(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"data", NULL};
	struct tunedlib *lib = NULL;
	struct rocmd_tune *t;
	struct tune_key key;
	const char *data;
	int stored = 0, rc;
	cJSON *r;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "data", 1, &data, why, whylen)) < 0 ||
	    (rc = need_tune(conn, &t, why, whylen)) < 0 ||
	    (rc = rocmd_tune_id_key(t, &key, why, whylen)) < 0)
		return rc;
	rc = tunedlib_import(data, strlen(data), &key, &lib, why, whylen);
	if (rc == 0)
		rc = tunedlib_to_store(lib, rocmd_tune_store(t), &stored, why, whylen);
	tunedlib_free(lib);
	if (rc < 0)
		return rc;
	rocmd_server_event(conn->srv, "tune.imported", NULL, "%d tuned shape(s) imported by uid %u",
	                   stored, (unsigned)conn->peer.uid);
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "stored", stored);
	*result = r;
	return 0;
}

const struct rocmd_method rocmd_methods_tune[] = {
    {"tune.status", 0, m_status},
    {"tune.results", 0, m_results},
    {"tune.report", 0, rocmd_tune_m_report},
    {"tune.input", 0, m_input},
    {"tune.export", 0, m_export},
    {"tune.start", ROCMD_METHOD_MUTATING, m_start},
    {"tune.pause", ROCMD_METHOD_MUTATING, m_pause},
    {"tune.resume", ROCMD_METHOD_MUTATING, m_resume},
    {"tune.add", ROCMD_METHOD_MUTATING, m_add},
    {"tune.import", ROCMD_METHOD_MUTATING, m_import},
    {"tune.add_shapes", ROCMD_METHOD_MUTATING, m_add_shapes},
    {"tune.off", ROCMD_METHOD_MUTATING, m_off},
    {"tune.on", ROCMD_METHOD_MUTATING, m_on},
    {NULL, 0, NULL},
};
