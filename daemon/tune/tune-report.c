/*
 * tune.report (docs/PROTOCOL.md): what `rocmctl tune report --html` draws.
 * Every finished job (done, or stale once superseded, with "all") with its
 * evaluations in the order they ran: each configuration's median time or the
 * outcome that kept it from having one, so that a reader sees the search
 * converge; the problem's flops and bytes for its roofline position; and the
 * device the jobs ran on. Read-only, on the loop thread. A reply stays well
 * under the frame limit: at most REPORT_JOBS jobs and REPORT_POINTS
 * evaluations in all, shared out evenly (a job's first ones when it has more).
 */
#include "tune-methods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "db/db-tune-queue.h"
#include "tune-sched.h"

#define REPORT_JOBS 64
#define REPORT_POINTS 40000

struct report_ctx {
	struct rocmd_tune_job *jobs;
	int n, all;
};

static int
collect(const struct rocmd_tune_job *j, void *ctx)
{
	struct report_ctx *r = ctx;

	if (strcmp(j->state, "done") != 0 && !(r->all && strcmp(j->state, "stale") == 0))
		return 0;
	if (r->n < REPORT_JOBS)
		r->jobs[r->n++] = *j;
	return 0;
}

/* One evaluation: [median ms, or null when it did not run correctly; outcome]. */
static int
add_eval(void *ctx, const char *config, const char *outcome, double median_ms, double gflops)
{
	cJSON *arr = ctx, *e = cJSON_CreateArray();

	(void)config;
	(void)gflops;
	cJSON_AddItemToArray(e, strcmp(outcome, "ok") == 0 && median_ms > 0
	                            ? cJSON_CreateNumber(median_ms)
	                            : cJSON_CreateNull());
	cJSON_AddItemToArray(e, cJSON_CreateString(outcome));
	cJSON_AddItemToArray(arr, e);
	return 0;
}

static int
elem_bytes(const char *dtype)
{
	return strcmp(dtype, "fp32") == 0 ? 4 : 2;
}

int
rocmd_tune_m_report(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                    size_t whylen)
{
	static const char *const keys[] = {"all", NULL};
	struct report_ctx rc = {NULL, 0, 0};
	struct rocmd_tune *t = conn->srv->tune;
	cJSON *r, *arr, *st;
	int err, per;

	if ((err = rocmd_params_only(params, keys, why, whylen)) < 0)
		return err;
	err = rocmd_param_bool(params, "all", 0, &rc.all, why, whylen);
	if (err < 0 && err != ROCMD_ENOTFOUND)
		return err;
	if (t == NULL) {
		snprintf(why, whylen, "idle tuning is not running in this daemon");
		return ROCMD_EUNSUPPORTED;
	}
	if ((rc.jobs = calloc(REPORT_JOBS, sizeof(*rc.jobs))) == NULL)
		return ROCMD_ENOMEM;
	err = rocmd_tune_queue_list(rocmd_tune_queue_db(t), rc.all, collect, &rc);
	if (err < 0) {
		snprintf(why, whylen, "%s", rocmd_tune_queue_errmsg(rocmd_tune_queue_db(t)));
		free(rc.jobs);
		return err;
	}
	/* The device from tune.status; the rest of it is not the report's. */
	st = rocmd_tune_status(t);
	r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "device", cJSON_DetachItemFromObject(st, "device"));
	cJSON_Delete(st);
	arr = cJSON_AddArrayToObject(r, "jobs");
	per = rc.n > 0 ? REPORT_POINTS / rc.n : 0;
	for (int i = 0; i < rc.n; i++) {
		const struct rocmd_tune_job *j = &rc.jobs[i];
		cJSON *o = rocmd_tune_job_json(j);
		cJSON *ev = cJSON_AddArrayToObject(o, "evals");
		double flops = 2.0 * (double)j->m * (double)j->n * (double)j->k * (double)j->batch;
		double bytes = (double)elem_bytes(j->dtype) * (double)j->batch *
		               ((double)j->m * j->k + (double)j->k * j->n + (double)j->m * j->n);

		cJSON_AddNumberToObject(o, "flops", flops);
		cJSON_AddNumberToObject(o, "bytes", bytes);
		err = rocmd_tune_queue_evals(rocmd_tune_queue_db(t), j, per, add_eval, ev);
		cJSON_AddItemToArray(arr, o);
		if (err < 0) {
			snprintf(why, whylen, "%s", rocmd_tune_queue_errmsg(rocmd_tune_queue_db(t)));
			cJSON_Delete(r);
			free(rc.jobs);
			return err;
		}
	}
	free(rc.jobs);
	cJSON_AddBoolToObject(r, "truncated", rc.n >= REPORT_JOBS);
	*result = r;
	return 0;
}
