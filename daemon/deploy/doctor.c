/*
 * doctor.run (docs/PROTOCOL.md, "Doctor"): the checks of doctor.h as one job
 * on the deploy queue, so that no deploy changes a target while they look
 * at it. The start hook (loop thread) reads what the checks need of the
 * database and runs the checks that only read it; the work (worker thread)
 * runs those that read or hash files; the done hook (loop thread) applies
 * the fixes asked for and answers. A fix is a deploy job queued behind this
 * one (the matching package, or the live one again): the same checks,
 * backup, verification and rollback as any deploy, its outcome in lib
 * history. Reading is open to every user; fix needs an admin.
 */
#include "doctor.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "daemon/sdk/sdk.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "db/db-sdk.h"

static const char *const severities[] = {"info", "warning", "error"};
static const char *const fix_kinds[] = {"none", "deploy_matching", "redeploy", "recheck_overrides"};

cJSON *
doctor_add(struct doctor *d, const char *id, int severity, const struct doctor_target *dt,
           int fix, const char *fix_text, const char *fmt, ...)
{
	cJSON *f = cJSON_CreateObject();
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(f, "id", id);
	cJSON_AddStringToObject(f, "severity", severities[severity]);
	if (dt != NULL)
		cJSON_AddStringToObject(f, "target", dt->t.name);
	else
		cJSON_AddNullToObject(f, "target");
	cJSON_AddStringToObject(f, "explanation", text);
	if (fix_text != NULL)
		cJSON_AddStringToObject(f, "fix", fix_text);
	else
		cJSON_AddNullToObject(f, "fix");
	cJSON_AddBoolToObject(f, "fixable", fix != DOCTOR_FIX_NONE);
	cJSON_AddStringToObject(f, "fix_action", fix_kinds[fix]);
	cJSON_AddNullToObject(f, "fixed");
	cJSON_AddItemToArray(d->findings, f);
	return cJSON_AddObjectToObject(f, "evidence");
}

/* ---- what the checks read of the database (loop thread) ---- */

static int
pkg_row(const struct rocmd_db_pkg *p, void *arg)
{
	struct doctor_target *dt = arg;

	deploy_copy(dt->pkg_name, sizeof(dt->pkg_name), p->name);
	deploy_copy(dt->pkg_sdk, sizeof(dt->pkg_sdk), p->sdk);
	deploy_copy(dt->pkg_archs, sizeof(dt->pkg_archs), p->archs);
	deploy_copy(dt->pkg_source, sizeof(dt->pkg_source), p->source != NULL ? p->source : "");
	return 0;
}

/* The live deployment's SDK version (its result's target.sdk_version). */
static int
live_sdk(const struct rocmd_db_deployment *dep, void *arg)
{
	struct doctor_target *dt = arg;
	cJSON *det;
	const cJSON *v;

	if (strcmp(dep->state, "live") != 0)
		return 0;
	det = cJSON_Parse(dep->detail != NULL ? dep->detail : "{}");
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(det, "target"),
	                                     "sdk_version");
	if (cJSON_IsString(v))
		deploy_copy(dt->deployed_sdk, sizeof(dt->deployed_sdk), v->valuestring);
	cJSON_Delete(det);
	return 1;
}

/* The live package of DT and the SDK's version at its deploy. */
static void
gather_live(struct doctor *d, struct doctor_target *dt)
{
	if (!dt->row.found || dt->row.live_id == 0)
		return;
	if (dt->row.live_pkg > 0)
		rocmd_pkg_db_list(d->ds->pdb, dt->row.live_pkg, pkg_row, dt);
	rocmd_deploy_db_deployments(d->ds->db, dt->row.id, 0, live_sdk, dt);
}

/* An SDK target's overlay, when a package is deployed there. */
static void
gather_overlay(struct doctor *d, struct doctor_target *dt)
{
	struct deploy_tgt ov;
	struct deploy_row row;

	if (strcmp(dt->t.kind, "sdk") != 0 || deploy_sdk_target(d->ds, dt->t.sdk_id, 1, &ov) < 0)
		return;
	deploy_copy(dt->overlay_lib, sizeof(dt->overlay_lib), ov.sys_lib);
	deploy_target_lookup(d->ds, ov.name, &row);
	if (!row.found || row.live_id == 0 ||
	    (dt->overlay = calloc(1, sizeof(*dt->overlay))) == NULL)
		return;
	dt->overlay->t = ov;
	dt->overlay->row = row;
	gather_live(d, dt->overlay);
}

static void
gather_target(struct doctor *d, struct doctor_target *dt)
{
	struct rocmd_deploy_service *ds = d->ds;
	char arch[64];

	deploy_target_lookup(ds, dt->t.name, &dt->row);
	gather_overlay(d, dt);
	gather_live(d, dt);
	if (dt->row.found)
		dt->originals_changed = deploy_originals_changed(ds, &dt->t, &dt->row);
	if (dt->originals_changed)
		deploy_ours_load(ds, dt->t.name, dt->row.id, &dt->ours);
	if (deploy_match_package(ds, &dt->t, &dt->match_pkg, dt->match_name,
	                         sizeof(dt->match_name), arch, sizeof(arch), dt->match_why,
	                         sizeof(dt->match_why)) < 0)
		dt->match_pkg = 0;
}

static int
sdk_row(const struct rocmd_db_sdk *s, void *arg)
{
	struct doctor *d = arg;
	struct doctor_target *dt;

	if (strcmp(s->state, "present") != 0 || d->ntg >= DOCTOR_TARGETS_MAX)
		return 0;
	dt = &d->tg[d->ntg];
	memset(dt, 0, sizeof(*dt));
	if (deploy_sdk_target(d->ds, s->id, 0, &dt->t) < 0)
		return 0;
	d->ntg++;
	return 0;
}

static void
app_target(const struct deploy_tgt *t, void *arg)
{
	struct doctor *d = arg;

	if (d->ntg >= DOCTOR_TARGETS_MAX)
		return;
	memset(&d->tg[d->ntg], 0, sizeof(d->tg[0]));
	d->tg[d->ntg++].t = *t;
}

static int
gpu_row(const struct rocmd_db_gpu *g, void *arg)
{
	struct doctor *d = arg;
	struct doctor_gpu *o;
	cJSON *det;
	const cJSON *node;

	if (strcmp(g->state, "present") != 0 || d->ngpus >= DOCTOR_GPUS_MAX)
		return 0;
	o = &d->gpus[d->ngpus++];
	deploy_copy(o->arch, sizeof(o->arch), g->arch);
	deploy_copy(o->name, sizeof(o->name), g->name != NULL ? g->name : "");
	o->igpu = g->kind != NULL && strcmp(g->kind, "igpu") == 0;
	det = cJSON_Parse(g->detail != NULL ? g->detail : "{}");
	node = cJSON_GetObjectItemCaseSensitive(det, "kfd_node");
	o->node = cJSON_IsNumber(node) ? node->valueint : -1;
	o->order = d->ngpus;
	cJSON_Delete(det);
	return 0;
}

/* HIP numbers the GPUs in KFD node order (one seen by HIP only: last, as listed). */
static int
gpu_cmp(const void *a, const void *b)
{
	const struct doctor_gpu *x = a, *y = b;
	int nx = x->node < 0 ? INT_MAX : x->node, ny = y->node < 0 ? INT_MAX : y->node;

	return nx != ny ? (nx < ny ? -1 : 1) : x->order - y->order;
}

static void
run_checks(struct doctor *d, int worker)
{
	for (const struct doctor_check *c = doctor_checks_targets; c->id != NULL; c++)
		for (size_t i = 0; i < d->ntg && c->worker == worker; i++)
			c->target(d, &d->tg[i]);
	for (const struct doctor_check *c = doctor_checks_env; c->id != NULL; c++)
		if (c->worker == worker)
			c->global(d);
}

/* ---- the job ---- */

static int
doctor_start(struct rocmd_job *b)
{
	struct doctor *d = (struct doctor *)b;
	struct rocmd_sdk *sdk = d->ds->srv->sdk;

	if (sdk != NULL) {
		const char *rt = "";
		rocmd_sdk_db_list(rocmd_sdk_db(sdk), 0, NULL, sdk_row, d);
		rocmd_sdk_db_gpu_list(rocmd_sdk_db(sdk), gpu_row, d);
		deploy_copy(d->driver, sizeof(d->driver), rocmd_sdk_driver_version(sdk));
		d->hip_runtime_version = rocmd_sdk_hip_runtime(sdk, &rt, &d->hip_from_driver);
		deploy_copy(d->hip_runtime, sizeof(d->hip_runtime), rt);
	}
	if (rocmd_tune_override_views(d->ds->srv->tune, &d->ov, &d->nov) < 0)
		d->nov = 0;
	deploy_app_target_each(d->ds, app_target, d);
	qsort(d->gpus, (size_t)d->ngpus, sizeof(d->gpus[0]), gpu_cmp);
	for (size_t i = 0; i < d->ntg; i++)
		gather_target(d, &d->tg[i]);
	run_checks(d, 0);
	return 0;
}

static void
doctor_work(struct rocmd_job *b)
{
	run_checks((struct doctor *)b, 1);
}

static struct doctor_target *
target_named(struct doctor *d, const char *name)
{
	for (size_t i = 0; i < d->ntg; i++)
		if (strcmp(d->tg[i].t.name, name) == 0)
			return &d->tg[i];
	return NULL;
}

/* Queues the deploy that fixes finding F of target DT; what was done (or
 * why nothing was) into F. */
static void
apply_fix(struct doctor *d, cJSON *f, struct doctor_target *dt, const char *kind)
{
	int live = strcmp(kind, fix_kinds[DOCTOR_FIX_LIVE]) == 0;
	int64_t pkg = live ? dt->row.live_pkg : dt->match_pkg;
	char why[1024], did[1400];
	struct deploy_job *j;

	if (dt->fix_queued) {
		cJSON_ReplaceItemInObject(f, "fixed",
		                          cJSON_CreateString("by the deploy queued for this target "
		                                             "above"));
		return;
	}
	if (pkg <= 0) {
		deploy_fmt(why, sizeof(why), "no package to deploy: %s",
		           live ? "the live package is not in the store any more" : dt->match_why);
		cJSON_AddStringToObject(f, "fix_failed", why);
		return;
	}
	j = deploy_job_new(d->ds, JOB_DEPLOY);
	if (j == NULL) {
		cJSON_AddStringToObject(f, "fix_failed", "out of memory");
		return;
	}
	deploy_copy(j->reason, sizeof(j->reason), "user");
	j->t = dt->t;
	if (deploy_job_prepare(j, pkg, why, sizeof(why)) < 0) {
		deploy_job_free(j);
		cJSON_AddStringToObject(f, "fix_failed", why);
		return;
	}
	deploy_fmt(did, sizeof(did),
	           "queued a deploy of package #%lld (%s) to %s, with the checks, backup, "
	           "verification and rollback of any deploy; rocmctl lib history %s shows its "
	           "outcome",
	           (long long)pkg, j->pkg_name, dt->t.name, dt->t.name);
	deploy_job_submit(j, NULL);
	dt->fix_queued = 1;
	log_notice("doctor: %s", did);
	cJSON_ReplaceItemInObject(f, "fixed", cJSON_CreateString(did));
}

static int
doctor_done(struct rocmd_job *b, cJSON **result)
{
	struct doctor *d = (struct doctor *)b;
	cJSON *r = cJSON_CreateObject(), *f, *c;
	int errors = 0, warnings = 0, fixed = 0;

	cJSON_ArrayForEach(f, d->findings)
	{
		const char *sev = cJSON_GetObjectItemCaseSensitive(f, "severity")->valuestring;
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(f, "fix_action");
		const cJSON *tn = cJSON_GetObjectItemCaseSensitive(f, "target");
		struct doctor_target *dt = cJSON_IsString(tn) ? target_named(d, tn->valuestring) : NULL;
		errors += strcmp(sev, "error") == 0;
		warnings += strcmp(sev, "warning") == 0;
		if (d->fix && strcmp(kind->valuestring, fix_kinds[DOCTOR_FIX_OVERRIDE]) == 0)
			doctor_fix_override(d, f);
		else if (!d->fix || dt == NULL || strcmp(kind->valuestring, "none") == 0)
			continue;
		else
			apply_fix(d, f, dt, kind->valuestring);
		fixed += cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "fixed"));
	}
	cJSON_AddItemToObject(r, "findings", d->findings);
	d->findings = NULL;
	c = cJSON_AddObjectToObject(r, "counts");
	cJSON_AddNumberToObject(c, "error", errors);
	cJSON_AddNumberToObject(c, "warning", warnings);
	cJSON_AddNumberToObject(c, "fixes_queued", fixed);
	cJSON_AddNumberToObject(r, "targets", (double)d->ntg);
	cJSON_AddNumberToObject(r, "gpus", d->ngpus);
	*result = r;
	return 0;
}

static void
doctor_free(struct rocmd_job *b)
{
	struct doctor *d = (struct doctor *)b;

	cJSON_Delete(d->findings);
	for (size_t i = 0; d->tg != NULL && i < d->ntg; i++) {
		rocmd_deploy_files_free(&d->tg[i].ours);
		free(d->tg[i].overlay);
	}
	free(d->ov);
	free(d->tg);
	free(d->env.hsa_override);
	free(d->env.hip_visible);
	free(d->env.tensile_libpath);
	free(d->env.gemm_override);
	free(d->env.hipblaslt_override);
	rocmd_job_fini(&d->base);
	free(d);
}

static const struct rocmd_job_ops doctor_ops = {
    .what = "doctor",
    .start = doctor_start,
    .work = doctor_work,
    .done = doctor_done,
    .free = doctor_free,
};

/* ---- the method ---- */

/* Param "env": the caller's variables, strings, only those doctor reads. */
static int
parse_env(const cJSON *params, struct doctor_env *e, char *why, size_t whylen)
{
	static const char *const keys[] = {"platform",
	                                   "HSA_OVERRIDE_GFX_VERSION",
	                                   "HIP_VISIBLE_DEVICES",
	                                   "ROCBLAS_TENSILE_LIBPATH",
	                                   "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH",
	                                   "HIPBLASLT_TUNING_OVERRIDE_FILE",
	                                   NULL};
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(params, "env");
	const char *v = NULL;
	char **slot[] = {NULL,
	                 &e->hsa_override,
	                 &e->hip_visible,
	                 &e->tensile_libpath,
	                 &e->gemm_override,
	                 &e->hipblaslt_override};
	int rc;

#ifdef _WIN32
	deploy_copy(e->platform, sizeof(e->platform), "windows");
#else
	deploy_copy(e->platform, sizeof(e->platform), "linux");
#endif
	if (env == NULL)
		return 0;
	if (!cJSON_IsObject(env)) {
		snprintf(why, whylen, "param 'env' must be an object of strings");
		return ROCMD_EPARAMS;
	}
	if ((rc = rocmd_params_only(env, keys, why, whylen)) < 0)
		return rc;
	for (int i = 0; keys[i] != NULL; i++) {
		if ((rc = rocmd_param_string(env, keys[i], 0, &v, why, whylen)) == ROCMD_ENOTFOUND)
			continue;
		if (rc < 0)
			return rc;
		if (i == 0) {
			if (strcmp(v, "linux") != 0 && strcmp(v, "windows") != 0) {
				snprintf(why, whylen, "param 'env.platform' must be linux or windows");
				return ROCMD_EPARAMS;
			}
			deploy_copy(e->platform, sizeof(e->platform), v);
		} else if ((*slot[i] = strdup(v)) == NULL) {
			return ROCMD_ENOMEM;
		}
	}
	return 0;
}

static int
m_doctor(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"fix", "env", NULL};
	struct doctor *d;
	int fix = 0, rc;

	(void)result;
	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_bool(params, "fix", 0, &fix, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	/* Looking is open to everyone; fixing changes targets (the rule of the
	 * methods marked mutating, server.c). */
	if (fix && !conn->peer.admin) {
		snprintf(why, whylen,
		         "permission denied: 'doctor.run' with fix changes the daemon's state and "
		         "needs root or membership of group '%s'",
		         conn->srv->cfg->admin_group);
		return ROCMD_EPERM;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return ROCMD_ENOMEM;
	if (rocmd_job_init(&d->base, &doctor_ops) < 0) {
		free(d);
		return ROCMD_ENOMEM;
	}
	d->ds = ds;
	d->fix = fix;
	d->tg = calloc(DOCTOR_TARGETS_MAX, sizeof(*d->tg));
	d->findings = cJSON_CreateArray();
	if (d->tg == NULL || d->findings == NULL) {
		rc = ROCMD_ENOMEM;
		goto fail;
	}
	if ((rc = parse_env(params, &d->env, why, whylen)) < 0)
		goto fail;
	if ((rc = rocmd_job_defer_reply(&d->base, conn)) < 0)
		goto fail;
	rocmd_jobs_submit(&ds->jobs, &d->base);
	return rc;
fail:
	doctor_free(&d->base);
	return rc;
}

const struct rocmd_method rocmd_methods_doctor[] = {
    {"doctor.run", 0, m_doctor},
    {NULL, 0, NULL},
};
