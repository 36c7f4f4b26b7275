/*
 * Deploy in the daemon as the server sees it (see deploy-service.h): starting
 * it (the tables opened, interrupted deploys recovered before anything is
 * served), its engine hooks for the shutdown, and the view auto-sync
 * (deploy-sync.c) takes of an SDK's target.
 */
#include "deploy-jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "deploy-jobs-os.h"

#define TICK_MS 250

int
rocmd_deploy_svc_start(struct rocmd_server *srv, const struct rocmd_deploy_svc_opts *o,
                       struct rocmd_deploy_service **out, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds;
	int rc;

	*out = NULL;
	if ((ds = calloc(1, sizeof(*ds))) == NULL)
		return ROCMD_ENOMEM;
	ds->srv = srv;
	deploy_copy(ds->root, sizeof(ds->root), o != NULL ? o->root : NULL);
	if (o != NULL && o->smoke != NULL)
		deploy_copy(ds->smoke, sizeof(ds->smoke), o->smoke);
	else
		rocmd_deploy_smoke_find(ds->smoke, sizeof(ds->smoke));
	snprintf(ds->store, sizeof(ds->store), "%s/store", srv->cfg->state_dir);
	if ((rc = rocmd_deploy_db_attach(srv->db, &ds->db)) < 0 ||
	    (rc = rocmd_pkg_db_attach(srv->db, &ds->pdb)) < 0) {
		snprintf(why, whylen, "cannot open the deploy tables: %s", rocmd_strerror(rc));
		rocmd_deploy_db_detach(ds->db);
		free(ds);
		return rc;
	}
	if ((rc = rocmd_jobs_init(&ds->jobs, srv, "deploy", TICK_MS)) < 0) {
		snprintf(why, whylen, "cannot set up the deploy queue: %s", rocmd_strerror(rc));
		rocmd_deploy_db_detach(ds->db);
		rocmd_pkg_db_detach(ds->pdb);
		free(ds);
		return rc;
	}
	rocmd_jobs_set_retry(&ds->jobs, (uint64_t)srv->cfg->deploy_defer_retry_s * 1000);
	uv_timer_init(srv->loop, &ds->record_timer);
	ds->record_timer.data = ds;
	deploy_seen_load(ds);
	rc = deploy_recover_all(ds, why, whylen);
	if (rc < 0)
		log_err("deploy recovery: %s", why);
	*out = ds;
	return 0;
}

static void
record_retry(uv_timer_t *t)
{
	struct rocmd_deploy_service *ds = t->data;

	if (deploy_reconcile_all(ds) > 0)
		return;
	ds->unrecorded = 0;
	uv_timer_stop(t);
	log_notice("deploy: the database records what every target holds again");
}

void
deploy_unrecorded(struct rocmd_deploy_service *ds)
{
	ds->unrecorded = 1;
	if (!uv_is_active((uv_handle_t *)&ds->record_timer))
		uv_timer_start(&ds->record_timer, record_retry, DEPLOY_RECORD_RETRY_S * 1000,
		               DEPLOY_RECORD_RETRY_S * 1000);
}

static void
engine_shutdown(void *self)
{
	struct rocmd_deploy_service *ds = self;

	uv_timer_stop(&ds->record_timer);
	rocmd_jobs_shutdown(&ds->jobs);
}

static void
engine_close(void *self)
{
	struct rocmd_deploy_service *ds = self;

	uv_close((uv_handle_t *)&ds->record_timer, NULL);
	rocmd_jobs_close(&ds->jobs);
}

static void
engine_free(void *self)
{
	struct rocmd_deploy_service *ds = self;

	rocmd_deploy_db_detach(ds->db);
	rocmd_pkg_db_detach(ds->pdb);
	free(ds);
}

const struct rocmd_engine_ops rocmd_deploy_engine = {
    .name = "deploy",
    .status = deploy_status_notes,
    .shutdown = engine_shutdown,
    .close = engine_close,
    .free = engine_free,
};

/* ---- auto-sync's view (deploy-sync.c) ---- */

int
rocmd_deploy_svc_sdk_view(struct rocmd_deploy_service *ds, int64_t sdk_id,
                          struct rocmd_deploy_sdk_view *out)
{
	struct deploy_tgt t;
	struct deploy_row row;
	int rc;

	memset(out, 0, sizeof(*out));
	if (ds == NULL)
		return ROCMD_ENOTFOUND;
	if ((rc = deploy_sdk_target(ds, sdk_id, 0, &t)) < 0)
		return rc;
	deploy_target_lookup(ds, t.name, &row);
	out->target_id = row.id;
	out->live_package_id = row.live_pkg;
	deploy_copy(out->live_fingerprint, sizeof(out->live_fingerprint), row.live_fp);
	deploy_copy(out->sdk_fingerprint, sizeof(out->sdk_fingerprint), t.sdk_fingerprint);
	deploy_copy(out->sdk_version, sizeof(out->sdk_version), t.sdk_version);
	deploy_copy(out->sdk_path, sizeof(out->sdk_path), t.sdk_path);
	out->queued = deploy_target_queued(ds, t.name);
	out->overlay = strcmp(t.kind, "overlay") == 0;
	deploy_copy(out->lt_fingerprint, sizeof(out->lt_fingerprint), t.lt_fingerprint);
	deploy_copy(out->lt_path, sizeof(out->lt_path), t.sys_lt);
	if (row.live_pkg > 0 && !out->overlay) {
		/* rocmd's hipBLASLt files, not the originals it put back. */
		struct rocmd_deploy_files cur;
		char why[256];
		if (rocmd_deploy_current_load(ds->srv->cfg->state_dir, t.name, &cur, why,
		                              sizeof(why)) == 0) {
			if (cur.has_lt && cur.nlt > 0 && strcmp(cur.label, "original") != 0)
				deploy_files_fingerprint(cur.lt_files, cur.nlt, 1,
				                         out->live_lt_fingerprint);
			rocmd_deploy_files_free(&cur);
		}
		/* A package row read only where it can matter (deploy-sync.c). */
		if (out->live_lt_fingerprint[0] == '\0')
			out->live_pkg_has_lt = deploy_pkg_has_lt(ds, row.live_pkg);
	}
	return 0;
}

int
rocmd_deploy_svc_match_sdk(struct rocmd_deploy_service *ds, int64_t sdk_id, int64_t *pkg_id,
                           char *name, size_t namelen, char *why, size_t whylen)
{
	struct deploy_tgt t;
	char arch[32];
	int rc;

	*pkg_id = 0;
	if ((rc = deploy_sdk_target(ds, sdk_id, 0, &t)) < 0) {
		snprintf(why, whylen, "SDK #%lld is not present", (long long)sdk_id);
		return rc;
	}
	return deploy_match_package(ds, &t, pkg_id, name, namelen, arch, sizeof(arch), why, whylen);
}

int
rocmd_deploy_svc_sdk_wants(struct rocmd_deploy_service *ds, int64_t sdk_id, char *version,
                           char *platform, char *arch, char *why, size_t whylen)
{
	struct deploy_gpu_archs g;
	struct deploy_tgt t;

	version[0] = platform[0] = arch[0] = '\0';
	if (deploy_sdk_target(ds, sdk_id, 0, &t) < 0) {
		snprintf(why, whylen, "SDK #%lld is not present", (long long)sdk_id);
		return ROCMD_ENOTFOUND;
	}
	deploy_gpu_archs(ds, &g);
	if (g.n == 0 || t.sdk_version[0] == '\0') {
		snprintf(why, whylen, "%s", g.n == 0 ? "no AMD GPU is known" : "the SDK's version is unknown");
		return ROCMD_ENOTFOUND;
	}
	deploy_copy(version, 32, t.sdk_version);
	deploy_copy(platform, 32, t.platform);
	deploy_copy(arch, 32, g.archs[0]);
	return 0;
}

int
rocmd_deploy_svc_queue_sdk(struct rocmd_deploy_service *ds, int64_t sdk_id, int64_t pkg_id,
                           const char *reason, char *why, size_t whylen)
{
	struct deploy_job *j = deploy_job_new(ds, JOB_DEPLOY);
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(j->reason, sizeof(j->reason), reason);
	if ((rc = deploy_sdk_target(ds, sdk_id, 0, &j->t)) < 0 ||
	    (rc = deploy_job_prepare(j, pkg_id, why, whylen)) < 0) {
		if (rc == ROCMD_ENOTFOUND && why[0] == '\0')
			snprintf(why, whylen, "SDK #%lld is not present", (long long)sdk_id);
		deploy_job_free(j);
		return rc;
	}
	return deploy_job_submit(j, NULL);
}
