/*
 * The lib.* methods (docs/PROTOCOL.md, "Deploy"): parameters checked, the
 * target resolved (deploy-targets.c), a job queued (deploy-jobs.c) or a reply
 * shaped from the database. Loop thread only.
 */
#include "deploy-jobs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/sdk/rocblas-library.h"
#include "common/log.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "daemon/sdk/sdk.h"
#include "db/db-deploy.h"
#include "db/db-sdk.h"

#define HISTORY_DEFAULT 50
#define HISTORY_MAX 1000

static int
m_deploy(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target",   "package",     "overlay", "force",
	                                   "dry_run",  "no_merge",    "accept_loss", NULL};
	const cJSON *force = cJSON_GetObjectItemCaseSensitive(params, "force"), *it;
	const char *spec = NULL;
	unsigned forced = 0;
	int64_t pkg = 0;
	int overlay = 0, dry = 0, no_merge = 0, accept = 0, rc;
	struct deploy_job *j;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_bool(params, "no_merge", 0, &no_merge, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "accept_loss", 0, &accept, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "package", 0, 1, INT64_MAX, &pkg, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "overlay", 0, &overlay, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "dry_run", 0, &dry, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (accept && !no_merge) {
		snprintf(why, whylen, "param 'accept_loss' confirms a --no-merge deploy: give "
		                      "'no_merge' too");
		return ROCMD_EPARAMS;
	}
	if (force != NULL && !cJSON_IsArray(force)) {
		snprintf(why, whylen, "param 'force' must be an array of check names");
		return ROCMD_EPARAMS;
	}
	cJSON_ArrayForEach(it, force)
	{
		if (!cJSON_IsString(it)) {
			snprintf(why, whylen, "param 'force' must be an array of check names");
			return ROCMD_EPARAMS;
		}
		if ((rc = deploy_check_parse(it->valuestring, &forced, why, whylen)) < 0)
			return rc;
	}
	j = deploy_job_new(ds, JOB_DEPLOY);
	if (j == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(j->reason, sizeof(j->reason), "user");
	j->force = forced;
	j->dry_run = dry;
	j->no_merge = no_merge;
	j->accept_loss = accept;
	if ((rc = deploy_resolve_target(ds, spec, overlay, &j->t, why, whylen)) < 0 ||
	    (rc = deploy_job_prepare(j, pkg, why, whylen)) < 0) {
		deploy_job_free(j);
		return rc;
	}
	if (dry) {
		*result = deploy_dry_run(j);
		deploy_job_free(j);
		return 0;
	}
	return deploy_job_submit(j, conn);
}

/* A rollback with nothing to do: said so, exit 0, no job. */
static cJSON *
nothing_to_do(const struct deploy_tgt *t, const char *what)
{
	cJSON *r = cJSON_CreateObject(), *o = cJSON_AddObjectToObject(r, "target");

	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "kind", t->kind);
	cJSON_AddStringToObject(o, "library", t->sys_lib);
	cJSON_AddBoolToObject(r, "nothing_to_do", 1);
	cJSON_AddStringToObject(r, "message", what);
	return r;
}

static int
m_rollback(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target", "to", "overlay", "generation", NULL};
	const char *spec = NULL, *to = "previous";
	struct deploy_row row;
	int64_t gen = 0;
	int overlay = 0, rc;
	struct deploy_job *j;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "to", 0, &to, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "overlay", 0, &overlay, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (strcmp(to, "original") != 0 && strcmp(to, "previous") != 0) {
		snprintf(why, whylen, "param 'to' must be original or previous");
		return ROCMD_EPARAMS;
	}
	if ((rc = rocmd_param_int(params, "generation", 0, 1, 999, &gen, why, whylen)) < 0 &&
	    rc != ROCMD_ENOTFOUND)
		return rc;
	if (gen > 0 && strcmp(to, "original") != 0) {
		snprintf(why, whylen, "param 'generation' goes with 'to' original");
		return ROCMD_EPARAMS;
	}
	j = deploy_job_new(ds, JOB_ROLLBACK);
	if (j == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(j->reason, sizeof(j->reason), "user");
	j->generation = (int)gen;
	if ((rc = deploy_resolve_target(ds, spec, overlay, &j->t, why, whylen)) < 0)
		goto fail;
	deploy_target_lookup(ds, j->t.name, &row);
	if ((!row.found || row.live_id == 0) && gen == 0) {
		char what[512];
		deploy_fmt(what, sizeof(what),
		           "nothing to roll back: nothing rocmd deployed is in place at %s, which "
		           "holds %s",
		           j->t.name, row.found ? "its originals" : "what it always did");
		*result = nothing_to_do(&j->t, what);
		deploy_job_free(j);
		return 0;
	}
	j->target_id = row.id;
	if (gen == 0 && deploy_originals_changed(ds, &j->t, &row)) {
		snprintf(
		    why, whylen,
		    "an SDK update replaced what rocmd deployed at %s: the files there are the "
		    "SDK's own now, and a rollback would put back older ones; deploy a package "
		    "(the new originals are backed up first) or leave it as it is",
		    j->t.name);
		rc = ROCMD_EINVAL;
		goto fail;
	}
	if (gen == 0 && j->t.host_lt[0] != '\0' && deploy_lt_originals_changed(ds, &j->t, &row)) {
		snprintf(
		    why, whylen,
		    "an update replaced the hipBLASLt library rocmd deployed at %s: the files "
		    "there are the update's now, and a rollback would put back older ones; "
		    "deploy a package (the new originals are backed up first) or leave it as it is",
		    j->t.name);
		rc = ROCMD_EINVAL;
		goto fail;
	}
	if (strcmp(to, "previous") == 0) {
		/* One step back along the history (deploy-history.c), not a
		 * toggle between the last two. */
		struct deploy_steps st;
		int64_t prev = 0;
		if ((rc = deploy_steps_load(ds, row.id, &st)) < 0) {
			snprintf(why, whylen, "cannot read the history of %s: %s", j->t.name,
			         rocmd_deploy_db_errmsg(ds->db));
			goto fail;
		}
		if (st.previous.present && st.previous.removed) {
			snprintf(
			    why, whylen,
			    "the package deployed before at %s (%s) was removed from the store: "
			    "import it again, or roll back --to original",
			    j->t.name, st.previous.name[0] ? st.previous.name : "see lib history");
			deploy_steps_free(&st);
			rc = ROCMD_ENOTFOUND;
			goto fail;
		}
		prev = st.previous.present ? st.previous.id : 0;
		deploy_steps_free(&st);
		if (prev > 0) {
			deploy_copy(j->to, sizeof(j->to), "previous");
			/* It was in place before: only the platform is judged again. */
			j->force = DEPLOY_CHECK_SDK | DEPLOY_CHECK_BINARY | DEPLOY_CHECK_ARCH;
			if ((rc = deploy_job_prepare(j, prev, why, whylen)) < 0)
				goto fail;
			deploy_copy(j->reason, sizeof(j->reason), "rollback");
			return deploy_job_submit(j, conn);
		}
		/* The live deployment was the first: the previous state is the originals. */
	}
	deploy_copy(j->to, sizeof(j->to), "original");
	if (strcmp(j->t.kind, "overlay") == 0)
		j->remove_overlay = 1;
	return deploy_job_submit(j, conn);
fail:
	deploy_job_free(j);
	return rc;
}

/* The live deployment's "forced" checks and the archs whose loss was
 * confirmed ("lost", its detail) into the verify job. */
static int
live_forced(const struct rocmd_db_deployment *d, void *arg)
{
	struct deploy_job *j = arg;
	cJSON *det, *it;

	if (strcmp(d->state, "live") != 0)
		return 0;
	det = cJSON_Parse(d->detail != NULL ? d->detail : "{}");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(det, "forced"))
	{
		if (cJSON_IsString(it) && strcmp(it->valuestring, "arch") == 0)
			j->force |= DEPLOY_CHECK_ARCH;
	}
	it = cJSON_GetObjectItemCaseSensitive(det, "lost");
	if (cJSON_IsString(it))
		deploy_copy(j->lost, sizeof(j->lost), it->valuestring);
	cJSON_Delete(det);
	return 1;
}

static int
m_verify(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target", "overlay", NULL};
	const char *spec = NULL;
	struct deploy_row row;
	struct deploy_gpu_archs g;
	int overlay = 0, rc;
	struct deploy_job *j;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "overlay", 0, &overlay, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	j = deploy_job_new(ds, JOB_VERIFY);
	if (j == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(j->reason, sizeof(j->reason), "user");
	if ((rc = deploy_resolve_target(ds, spec, overlay, &j->t, why, whylen)) < 0) {
		deploy_job_free(j);
		return rc;
	}
	deploy_target_lookup(ds, j->t.name, &row);
	if (!row.found || row.live_id == 0) {
		snprintf(why, whylen, "nothing rocmd deployed is in place at %s", j->t.name);
		deploy_job_free(j);
		return ROCMD_ENOTFOUND;
	}
	j->target_id = row.id;
	j->pkg_id = row.live_pkg;
	deploy_gpu_archs(ds, &g);
	j->gpus = g;
	/* A deploy that forced the arch check is not failed for it now, nor
	 * for an arch whose loss was confirmed. */
	rocmd_deploy_db_deployments(ds->db, row.id, 0, live_forced, j);
	{
		char all[512];
		deploy_gpu_list(&g, all, sizeof(all)); /* every GPU's */
		deploy_arch_minus((j->force & DEPLOY_CHECK_ARCH) ? "" : all, j->lost, j->arch,
		                  sizeof(j->arch));
	}
	return deploy_job_submit(j, conn);
}

/* Adds NAME to recover job J. */
static int
recover_add(struct deploy_job *j, const char *name)
{
	struct deploy_recover_item *p = realloc(j->recover, (j->nrecover + 1) * sizeof(*p));

	if (p == NULL)
		return ROCMD_ENOMEM;
	j->recover = p;
	memset(&p[j->nrecover], 0, sizeof(*p));
	deploy_copy(p[j->nrecover].name, sizeof(p->name), name);
	j->nrecover++;
	return 0;
}

/*
 * lib.recover: the engine's recovery for TARGET now (every target with a
 * journal when it is left out), as at start-up, on the deploy queue. A
 * target that is not present any more (its SDK removed) is named as
 * "sdk-N": recovery needs only its journal.
 */
static int
m_recover(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target", NULL};
	const char *spec = NULL;
	struct deploy_job *j;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	j = deploy_job_new(ds, JOB_RECOVER);
	if (j == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(j->reason, sizeof(j->reason), "user");
	if (spec != NULL && spec[0] != '\0') {
		if ((rc = deploy_resolve_target(ds, spec, 0, &j->t, why, whylen)) < 0 &&
		    rocmd_deploy_name_check(spec) == 0) {
			memset(&j->t, 0, sizeof(j->t));
			deploy_copy(j->t.name, sizeof(j->t.name), spec);
			rc = 0;
		}
		if (rc == 0)
			rc = recover_add(j, j->t.name);
	} else {
		char **names = NULL;
		size_t n = 0;
		if ((rc = rocmd_deploy_pending(ds->srv->cfg->state_dir, &names, &n)) < 0)
			snprintf(why, whylen, "cannot list unfinished deploys: %s",
			         rocmd_strerror(rc));
		for (size_t i = 0; i < n; i++) {
			if (rc == 0)
				rc = recover_add(j, names[i]);
			free(names[i]);
		}
		free(names);
	}
	if (rc < 0) {
		deploy_job_free(j);
		return rc;
	}
	return deploy_job_submit(j, conn);
}

struct status_ctx {
	struct rocmd_deploy_service *ds;
	cJSON *targets;
	int64_t id;
};

/* The live deployment's "merged", and what it did to rocBLAS's and
 * hipBLASLt's folders ("rocblas", "hipblaslt": its report's notes), from its
 * detail into the status object. */
static int
live_merged(const struct rocmd_db_deployment *d, void *arg)
{
	cJSON *live = arg, *det;

	if (strcmp(d->state, "live") != 0)
		return 0;
	det = cJSON_Parse(d->detail != NULL ? d->detail : "{}");
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(det, "merged")))
		cJSON_AddItemToObject(live, "merged", cJSON_DetachItemFromObject(det, "merged"));
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(det, "rocblas")))
		cJSON_AddItemToObject(live, "rocblas", cJSON_DetachItemFromObject(det, "rocblas"));
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(det, "hipblaslt")))
		cJSON_AddItemToObject(live, "hipblaslt",
		                      cJSON_DetachItemFromObject(det, "hipblaslt"));
	cJSON_Delete(det);
	return 1;
}

static void
add_live(struct rocmd_deploy_service *ds, cJSON *o, const struct rocmd_db_target *t)
{
	cJSON *live;

	if (t->live_id == 0) {
		cJSON_AddNullToObject(o, "deployed");
		return;
	}
	live = cJSON_AddObjectToObject(o, "deployed");
	cJSON_AddNumberToObject(live, "deployment", (double)t->live_id);
	cJSON_AddNumberToObject(live, "package", (double)t->live_package_id);
	cJSON_AddNumberToObject(live, "since_ms", (double)t->live_finished_ms);
	if (t->live_fingerprint != NULL)
		cJSON_AddStringToObject(live, "fingerprint", t->live_fingerprint);
	rocmd_deploy_db_deployments(ds->db, t->id, 0, live_merged, live);
}

static cJSON *
find_by_name(cJSON *a, const char *name)
{
	cJSON *it;

	cJSON_ArrayForEach(it, a)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return it;
	}
	return NULL;
}

/*
 * Drift of target O's hipBLASLt folder (T its row, a deployment live): rocmd
 * put hipBLASLt files there (current.json names them) and discovery's
 * reading of the folder, made after that deployment finished, is not theirs,
 * or the folder is gone. A reading from before rocmd's own write is what was
 * there before: no drift (as for rocBLAS's).
 */
static int
lt_drift(struct rocmd_deploy_service *ds, const cJSON *o, const struct rocmd_db_target *t)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o, "hipblaslt");
	const cJSON *fp = cJSON_GetObjectItemCaseSensitive(lt, "fingerprint");
	const cJSON *since = cJSON_GetObjectItemCaseSensitive(lt, "since_ms");
	struct rocmd_deploy_files cur;
	char live[72] = "", why[256];

	if (rocmd_deploy_current_load(ds->srv->cfg->state_dir, t->name, &cur, why, sizeof(why)) < 0)
		return 0;
	if (cur.has_lt && cur.nlt > 0 && strcmp(cur.label, "original") != 0)
		deploy_files_fingerprint(cur.lt_files, cur.nlt, 1, live);
	rocmd_deploy_files_free(&cur);
	if (live[0] == '\0')
		return 0; /* none of rocmd's hipBLASLt files there */
	if (!cJSON_IsObject(lt))
		return 1; /* the folder is gone */
	return cJSON_IsString(fp) && strcmp(fp->valuestring, live) != 0 && cJSON_IsNumber(since) &&
	       since->valuedouble > (double)t->live_finished_ms;
}

static int
status_target(const struct rocmd_db_target *t, void *arg)
{
	struct status_ctx *c = arg;
	cJSON *o = find_by_name(c->targets, t->name), *b;

	if (o == NULL) {
		/* Known from earlier deploys, not present now (an SDK removed). */
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "kind", t->kind);
		cJSON_AddBoolToObject(o, "present", 0);
		cJSON_AddStringToObject(o, "library", t->library_path);
		cJSON_AddItemToArray(c->targets, o);
	}
	cJSON_DeleteItemFromObject(o, "deployed");
	add_live(c->ds, o, t);
	if (t->backup_path != NULL) {
		b = cJSON_AddObjectToObject(o, "backup");
		cJSON_AddStringToObject(b, "path", t->backup_path);
		cJSON_AddNumberToObject(b, "files", (double)t->backup_nfiles);
		cJSON_AddNumberToObject(b, "bytes", (double)t->backup_total_size);
		if (t->backup_adopted != NULL)
			cJSON_AddStringToObject(b, "adopted_from", t->backup_adopted);
		{
			/* Every generation kept, and the disk they use. */
			cJSON *g = deploy_backups_json(c->ds, t->name);
			if (g != NULL)
				cJSON_AddItemToObject(b, "generations", g);
		}
	}
	/* Drift: discovery's fingerprint of the library is not the deployed one,
	 * and discovery saw it after the deploy finished. Until discovery has
	 * read the library again after rocmd's own write, it holds what was
	 * there before: that is not drift (it showed as such for seconds after
	 * each deploy). */
	{
		const cJSON *sfp = cJSON_GetObjectItemCaseSensitive(o, "library_fingerprint");
		const cJSON *since = cJSON_GetObjectItemCaseSensitive(o, "library_since_ms");
		int rb = t->live_id != 0 && t->live_fingerprint != NULL && cJSON_IsString(sfp) &&
		         strcmp(sfp->valuestring, t->live_fingerprint) != 0 &&
		         cJSON_IsNumber(since) && since->valuedouble > (double)t->live_finished_ms;
		int lt = t->live_id != 0 && strcmp(t->kind, "sdk") == 0 && lt_drift(c->ds, o, t);
		cJSON *which = cJSON_CreateArray();
		if (rb)
			cJSON_AddItemToArray(which, cJSON_CreateString("rocblas"));
		if (lt)
			cJSON_AddItemToArray(which, cJSON_CreateString("hipblaslt"));
		cJSON_AddBoolToObject(o, "drift", rb || lt);
		cJSON_AddItemToObject(o, "drift_libraries", which);
	}
	return 0;
}

static cJSON *
target_json(const struct deploy_tgt *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "kind", t->kind);
	cJSON_AddBoolToObject(o, "present", 1);
	if (t->sdk_path[0])
		cJSON_AddStringToObject(o, "sdk", t->sdk_path);
	if (t->sdk_version[0])
		cJSON_AddStringToObject(o, "sdk_version", t->sdk_version);
	cJSON_AddStringToObject(o, "platform", t->platform);
	cJSON_AddStringToObject(o, "library", t->sys_lib);
	if (t->sys_bin[0])
		cJSON_AddStringToObject(o, "binary", t->sys_bin);
	else
		cJSON_AddNullToObject(o, "binary");
	if (t->sdk_fingerprint[0] && strcmp(t->kind, "sdk") == 0) {
		cJSON_AddStringToObject(o, "library_fingerprint", t->sdk_fingerprint);
		cJSON_AddNumberToObject(o, "library_since_ms", (double)t->sdk_fingerprint_ms);
	}
	if (strcmp(t->kind, "overlay") == 0) {
		char line[2 * PATH_MAX + 64];
		deploy_overlay_env(t->host_lib, t->ov_lt, line, sizeof(line));
		cJSON_AddStringToObject(o, "environment", line);
	}
	/* Which route serves the target's copy, and why (deploy_check_owner). */
	{
		cJSON *rt = cJSON_AddObjectToObject(o, "route");
		int own = t->owner[0] != '\0';
		cJSON_AddStringToObject(rt, "by",
		                        strcmp(t->kind, "overlay") == 0 ? "overlay" : "in place");
		if (own)
			cJSON_AddStringToObject(rt, "owner", t->owner);
		cJSON_AddStringToObject(
		    rt, "why",
		    own ? t->route_why
		    : strcmp(t->kind, "overlay") == 0
		        ? "asked for (--overlay): the SDK's own copy is untouched"
		    : strcmp(t->kind, "app") == 0
		        ? "an application's private copy (deploy.app_targets): the transactional "
		          "deploy replaces it in place"
		        : "owned by the user or the SDK's installer: the "
		          "transactional deploy replaces it in place");
	}
	if (t->sdk_archs[0] != '\0' || t->sys_lt[0] != '\0') {
		cJSON_AddStringToObject(o, "serves", t->sdk_archs);
	}
	if (t->sys_lt[0] != '\0') {
		cJSON *lt = cJSON_AddObjectToObject(o, "hipblaslt");
		cJSON_AddStringToObject(lt, "library", t->sys_lt);
		cJSON_AddStringToObject(lt, "serves", t->lt_archs);
		if (t->lt_fingerprint[0] != '\0' && strcmp(t->kind, "sdk") == 0) {
			/* Discovery's reading, and since when (drift: lt_drift). */
			cJSON_AddStringToObject(lt, "fingerprint", t->lt_fingerprint);
			cJSON_AddNumberToObject(lt, "since_ms", (double)t->lt_since_ms);
		}
		cJSON_AddStringToObject(lt, "note",
		                        strcmp(t->kind, "sdk") == 0
		                            ? "deployed with rocBLAS's when a package carries "
		                              "hipBLASLt's folder, else left as it is"
		                            : "the overlay's own hipBLASLt folder serves instead "
		                              "once a package with hipBLASLt's folder is deployed "
		                              "(HIPBLASLT_TENSILE_LIBPATH)");
	}
	cJSON_AddNullToObject(o, "deployed");
	return o;
}

/* Per GPU arch of G, whether target O's rocBLAS and hipBLASLt serve it. */
static void
add_coverage(cJSON *o, const struct deploy_gpu_archs *g)
{
	const cJSON *sv = cJSON_GetObjectItemCaseSensitive(o, "serves");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o, "hipblaslt");
	const cJSON *ltsv = cJSON_GetObjectItemCaseSensitive(lt, "serves");
	cJSON *cov;

	if (!cJSON_IsString(sv) || g->n == 0)
		return;
	cov = cJSON_AddArrayToObject(o, "gpu_coverage");
	for (int i = 0; i < g->n; i++) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "arch", g->archs[i]);
		cJSON_AddBoolToObject(c, "rocblas",
		                      rocmd_archs_csv_has(sv->valuestring, g->archs[i]));
		if (cJSON_IsString(ltsv))
			cJSON_AddBoolToObject(c, "hipblaslt",
			                      rocmd_archs_csv_has(ltsv->valuestring, g->archs[i]));
		else
			cJSON_AddNullToObject(c, "hipblaslt");
		cJSON_AddItemToArray(cov, c);
	}
}

static int
status_sdk(const struct rocmd_db_sdk *s, void *arg)
{
	struct status_ctx *c = arg;
	struct deploy_tgt t;
	int64_t pkg = 0;
	char name[256] = "", arch[32], why[512];
	cJSON *o;

	if (strcmp(s->state, "present") != 0)
		return 0;
	if (deploy_sdk_target(c->ds, s->id, 0, &t) < 0)
		return 0;
	o = target_json(&t);
	if (deploy_match_package(c->ds, &t, &pkg, name, sizeof(name), arch, sizeof(arch), why,
	                         sizeof(why)) == 0) {
		cJSON *m = cJSON_AddObjectToObject(o, "match");
		cJSON_AddNumberToObject(m, "package", (double)pkg);
		cJSON_AddStringToObject(m, "name", name);
		cJSON_AddStringToObject(m, "arch", arch);
	} else {
		cJSON_AddStringToObject(o, "match_problem", why);
	}
	cJSON_AddItemToArray(c->targets, o);
	return 0;
}

static void
status_app(const struct deploy_tgt *t, void *targets)
{
	cJSON_AddItemToArray(targets, target_json(t));
}

static int
m_status(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {NULL};
	struct status_ctx c = {.ds = ds};
	struct deploy_gpu_archs g;
	cJSON *r, *ga;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	r = cJSON_CreateObject();
	c.targets = cJSON_AddArrayToObject(r, "targets");
	if (ds->srv->sdk != NULL)
		rocmd_sdk_db_list(rocmd_sdk_db(ds->srv->sdk), 0, NULL, status_sdk, &c);
	deploy_app_target_each(ds, status_app, c.targets);
	/* Overlays and targets from earlier deploys. */
	rc = rocmd_deploy_db_targets(ds->db, 0, NULL, status_target, &c);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read targets: %s", rocmd_deploy_db_errmsg(ds->db));
		return rc;
	}
	{
		/* A target whose journal stays says so; an overlay listed for an SDK
		 * that is present shows where it lives. */
		cJSON *it;
		cJSON_ArrayForEach(it, c.targets)
		{
			deploy_status_interrupted(ds, it);
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
			if (cJSON_IsString(n) && strncmp(n->valuestring, "overlay-", 8) == 0 &&
			    !cJSON_HasObjectItem(it, "environment")) {
				char line[PATH_MAX + 64];
				const cJSON *lib = cJSON_GetObjectItemCaseSensitive(it, "library");
				snprintf(line, sizeof(line), "ROCBLAS_TENSILE_LIBPATH=%s",
				         cJSON_IsString(lib) ? lib->valuestring : "");
				cJSON_AddStringToObject(it, "environment", line);
			}
		}
	}
	deploy_gpu_archs(ds, &g);
	{
		cJSON *it;
		cJSON_ArrayForEach(it, c.targets) add_coverage(it, &g);
	}
	ga = cJSON_AddArrayToObject(r, "gpu_archs");
	for (int i = 0; i < g.n; i++)
		cJSON_AddItemToArray(ga, cJSON_CreateString(g.archs[i]));
	cJSON_AddStringToObject(r, "gpu_busy_policy", ds->srv->cfg->deploy_gpu_busy);
	cJSON_AddStringToObject(r, "sync_policy", ds->srv->cfg->deploy_sync);
	deploy_problems(ds, cJSON_AddArrayToObject(r, "problems"));
	cJSON_AddNumberToObject(r, "queued",
	                        (double)((ds->jobs.running != NULL) + (ds->jobs.head != NULL)));
	*result = r;
	return 0;
}

struct hist_ctx {
	cJSON *a;
	int64_t last;
	const struct deploy_steps *steps;
};

/* A step's side: null for the originals, else the package. */
static cJSON *
ref_json(const struct deploy_pkg_ref *r)
{
	cJSON *o;

	if (!r->present)
		return cJSON_CreateString("originals");
	o = cJSON_CreateObject();
	if (r->id > 0)
		cJSON_AddNumberToObject(o, "package", (double)r->id);
	else
		cJSON_AddNullToObject(o, "package");
	cJSON_AddStringToObject(o, "name", r->name);
	if (r->version[0])
		cJSON_AddStringToObject(o, "version", r->version);
	cJSON_AddBoolToObject(o, "removed", r->removed);
	return o;
}

static int
hist_one(const struct rocmd_db_history *h, void *arg)
{
	struct hist_ctx *c = arg;
	cJSON *o = cJSON_CreateObject(), *d = NULL;

	cJSON_AddNumberToObject(o, "id", (double)h->id);
	cJSON_AddNumberToObject(o, "target_id", (double)h->target_id);
	if (h->deployment_id > 0)
		cJSON_AddNumberToObject(o, "deployment", (double)h->deployment_id);
	else
		cJSON_AddNullToObject(o, "deployment");
	cJSON_AddNumberToObject(o, "time_ms", (double)h->time_ms);
	cJSON_AddStringToObject(o, "action", h->action);
	cJSON_AddStringToObject(o, "outcome", h->outcome);
	cJSON_AddStringToObject(o, "message", h->message);
	if (h->package_name != NULL || h->package_id > 0) {
		/* What the deployment put in place, also after pkg rm removed it. */
		cJSON *p = cJSON_AddObjectToObject(o, "package");
		if (h->package_id > 0)
			cJSON_AddNumberToObject(p, "id", (double)h->package_id);
		else
			cJSON_AddNullToObject(p, "id");
		if (h->package_name != NULL)
			cJSON_AddStringToObject(p, "name", h->package_name);
		if (h->package_digest != NULL)
			cJSON_AddStringToObject(p, "digest", h->package_digest);
	}
	if (h->reason != NULL)
		cJSON_AddStringToObject(o, "reason", h->reason);
	{
		const struct deploy_step *st = deploy_steps_find(c->steps, h->id);
		if (st != NULL && st->changed) {
			cJSON_AddItemToObject(o, "from", ref_json(&st->from));
			cJSON_AddItemToObject(o, "to", ref_json(&st->to));
		}
	}
	if (h->detail != NULL)
		d = cJSON_Parse(h->detail);
	cJSON_AddItemToObject(o, "detail", d != NULL ? d : cJSON_CreateNull());
	cJSON_AddItemToArray(c->a, o);
	c->last = h->id;
	return 0;
}

struct name_ctx {
	cJSON *names;
};

static int
name_one(const struct rocmd_db_target *t, void *arg)
{
	struct name_ctx *c = arg;

	char id[24];

	snprintf(id, sizeof(id), "%lld", (long long)t->id);
	cJSON_AddStringToObject(c->names, id, t->name);
	return 0;
}

static int
m_history(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target", "limit", "before_id", NULL};
	const char *spec = NULL;
	int64_t limit = HISTORY_DEFAULT, before = 0, tid = 0;
	struct hist_ctx c = {0};
	struct deploy_steps steps;
	struct name_ctx nc;
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "limit", 0, 1, HISTORY_MAX, &limit, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "before_id", 0, 0, INT64_MAX, &before, why, whylen)) <
	         0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (spec != NULL && spec[0] != '\0') {
		struct deploy_tgt t;
		struct deploy_row row;
		const char *name = spec;
		if (deploy_resolve_target(ds, spec, 0, &t, why, whylen) == 0)
			name = t.name;
		deploy_target_lookup(ds, name, &row);
		if (!row.found) {
			snprintf(why, whylen, "rocmd never deployed to '%s'", spec);
			return ROCMD_ENOTFOUND;
		}
		tid = row.id;
	}
	if ((rc = deploy_steps_load(ds, tid, &steps)) < 0) {
		snprintf(why, whylen, "cannot read the history: %s",
		         rocmd_deploy_db_errmsg(ds->db));
		return rc;
	}
	c.steps = &steps;
	r = cJSON_CreateObject();
	c.a = cJSON_AddArrayToObject(r, "history");
	rc = rocmd_deploy_db_history(ds->db, tid, before, limit, hist_one, &c);
	deploy_steps_free(&steps);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read the history: %s",
		         rocmd_deploy_db_errmsg(ds->db));
		return rc;
	}
	/* Target names by id, for printing. */
	nc.names = cJSON_AddObjectToObject(r, "targets");
	rocmd_deploy_db_targets(ds->db, 0, NULL, name_one, &nc);
	cJSON_AddNumberToObject(r, "last_id", (double)c.last);
	*result = r;
	return 0;
}

const struct rocmd_method rocmd_methods_lib[] = {
    {"lib.status", 0, m_status},
    {"lib.deploy", ROCMD_METHOD_MUTATING, m_deploy},
    {"lib.verify", ROCMD_METHOD_MUTATING, m_verify},
    {"lib.history", 0, m_history},
    {"lib.rollback", ROCMD_METHOD_MUTATING, m_rollback},
    {"lib.recover", ROCMD_METHOD_MUTATING, m_recover},
    {"lib.ack", ROCMD_METHOD_MUTATING, deploy_m_ack},
    {"lib.forget", ROCMD_METHOD_MUTATING, deploy_m_forget},
    {NULL, 0, NULL},
};
