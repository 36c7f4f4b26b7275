/*
 * The backups of the originals as the daemon manages them (the engine's side
 * is deploy-generations.c): generations beyond deploy.keep_generations pruned
 * after an SDK update made a new one, lib verify hashing the backup in use
 * and offering an older intact generation when a file of it is damaged,
 * lib status's disk use, and lib forget for a target whose SDK is gone (its
 * backups, records and rows). The prune and the check run on the job's
 * worker; the rest on the loop thread.
 */
#include "deploy-jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "db/db-deploy.h"

void
deploy_backups_prune(struct deploy_job *j)
{
	char why[512];
	int keep = (int)j->ds->srv->cfg->deploy_keep_generations;

	if (rocmd_deploy_generations_prune(j->ds->srv->cfg->state_dir, j->t.name, keep, &j->pruned,
	                                   why, sizeof(why)) < 0)
		log_warn("%s: pruning the older originals failed: %s", j->t.name, why);
}

/* "backup.1 (backed up 2026-12-02 00:40)" of generation G into OUT. */
static void
gen_words(const struct rocmd_deploy_generation *g, char *out, size_t n)
{
	char when[32] = "?";
	time_t t = (time_t)g->created_unix;
	struct tm tm;

	if (g->created_unix > 0 && localtime_r(&t, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	deploy_fmt(out, n, "backup.%d (backed up %s)", g->gen, when);
}

void
deploy_backups_verify(struct deploy_job *j)
{
	const char *state = j->ds->srv->cfg->state_dir;
	struct rocmd_deploy_generation g[ROCMD_DEPLOY_GENERATIONS_MAX];
	char why[512], older[128] = "";
	size_t n = 0;

	j->older_gen = 0;
	if (rocmd_deploy_backup_check(state, j->t.name, 0, &j->bcheck, why, sizeof(why)) < 0) {
		j->bcheck.checked = 0; /* none (an overlay), or unreadable: said below */
		return;
	}
	if (j->bcheck.bad == 0)
		return;
	/* The newest older generation that is whole. */
	rocmd_deploy_generations(state, j->t.name, g, ROCMD_DEPLOY_GENERATIONS_MAX, &n);
	for (size_t i = n; i-- > 0;) {
		struct rocmd_deploy_backup_check c;
		if (g[i].gen == 0 ||
		    rocmd_deploy_backup_check(state, j->t.name, g[i].gen, &c, why, sizeof(why)) <
		        0 ||
		    c.bad > 0)
			continue;
		j->older_gen = g[i].gen;
		gen_words(&g[i], older, sizeof(older));
		break;
	}
	j->backup_bad = 1;
	if (j->base.rc != 0) {
		/* What is deployed failed too: that comes first. */
		size_t l = strlen(j->base.why);
		deploy_fmt(j->base.why + l, sizeof(j->base.why) - l,
		           "; the backup of the originals is damaged too (%s), so it is not rolled "
		           "back to them",
		           j->bcheck.first_bad);
		return;
	}
	j->base.rc = ROCMD_ECORRUPT;
	if (older[0])
		deploy_fmt(
		    why, sizeof(why),
		    "%s is intact: rocmctl lib rollback --to original --generation %d restores "
		    "those older originals, or ",
		    older, j->older_gen);
	else
		deploy_copy(why, sizeof(why), "no older generation is intact; ");
	deploy_fmt(j->base.why, sizeof(j->base.why),
	           "what is deployed at %s is intact, but the backup of its originals is damaged: "
	           "%s no longer matches the SHA-256 its manifest recorded (%llu of %llu files "
	           "differ), so a rollback to the originals would be refused; %sreinstalling the "
	           "SDK's rocBLAS (its package or installer) brings the vendor's files back",
	           j->t.name, j->bcheck.first_bad, (unsigned long long)j->bcheck.bad,
	           (unsigned long long)j->bcheck.checked, why);
}

cJSON *
deploy_backups_json(struct rocmd_deploy_service *ds, const char *name)
{
	struct rocmd_deploy_generation g[ROCMD_DEPLOY_GENERATIONS_MAX];
	size_t n = 0;
	uint64_t bytes = 0;
	cJSON *o, *a;

	if (rocmd_deploy_generations(ds->srv->cfg->state_dir, name, g, ROCMD_DEPLOY_GENERATIONS_MAX,
	                             &n) < 0 ||
	    n == 0)
		return NULL;
	o = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(o, "list");
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "generation", g[i].gen);
		cJSON_AddBoolToObject(e, "in_use", g[i].gen == 0);
		cJSON_AddNumberToObject(e, "created_unix", (double)g[i].created_unix);
		cJSON_AddNumberToObject(e, "files", (double)g[i].files);
		cJSON_AddNumberToObject(e, "bytes", (double)g[i].bytes);
		cJSON_AddItemToArray(a, e);
		bytes += g[i].bytes;
	}
	cJSON_AddNumberToObject(o, "count", (double)n);
	cJSON_AddNumberToObject(o, "disk_bytes", (double)bytes);
	cJSON_AddNumberToObject(o, "keep", (double)ds->srv->cfg->deploy_keep_generations);
	return o;
}

/* lib.forget: a target whose SDK is gone, with its backups and records. */
int
deploy_m_forget(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"target", NULL};
	const char *spec = NULL;
	char dir[PATH_MAX], jpath[PATH_MAX + 16], ewhy[256];
	struct deploy_tgt t;
	struct deploy_row row;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "target", 1, &spec, why, whylen)) < 0)
		return rc;
	if (deploy_resolve_target(ds, spec, 0, &t, ewhy, sizeof(ewhy)) == 0) {
		snprintf(why, whylen,
		         "%s is still there (%s): lib forget is for a target whose SDK or "
		         "application is gone; roll it back --to original instead",
		         t.name, t.sdk_path[0] ? t.sdk_path : t.sys_lib);
		return ROCMD_EBUSY;
	}
	deploy_target_lookup(ds, spec, &row);
	if (!row.found || rocmd_deploy_name_check(spec) < 0) {
		snprintf(why, whylen, "rocmd knows no target '%s' (see rocmctl lib status)", spec);
		return ROCMD_ENOTFOUND;
	}
	if (deploy_target_queued(ds, spec)) {
		snprintf(why, whylen, "a job for %s is queued or running", spec);
		return ROCMD_EBUSY;
	}
	snprintf(dir, sizeof(dir), "%s/deploy/%s", ds->srv->cfg->state_dir, spec);
	snprintf(jpath, sizeof(jpath), "%s/journal", dir);
	if (deploy_exists(jpath)) {
		snprintf(why, whylen,
		         "a deploy to %s is unfinished (its journal): run rocmctl lib recover %s "
		         "first",
		         spec, spec);
		return ROCMD_EBUSY;
	}
	/* The rows first: a crash after them leaves a folder nothing refers
	 * to, which the next lib forget cannot reach but harms nothing; the
	 * other way round, rows would point at backups that are gone. */
	if ((rc = rocmd_deploy_db_target_forget(ds->db, row.id)) < 0) {
		snprintf(why, whylen, "cannot remove %s's records: %s", spec,
		         rocmd_deploy_db_errmsg(ds->db));
		return rc;
	}
	if ((rc = rocmd_fs_remove_tree(dir)) < 0) {
		snprintf(why, whylen, "%s's records are gone, but %s could not be removed: %s",
		         spec, dir, rocmd_strerror(rc));
		return rc;
	}
	deploy_say(conn->srv, ROCMD_LOG_NOTICE, "lib.forgotten", NULL,
	           "%s forgotten: its backups of the originals (%s) and its history removed", spec,
	           dir);
	rocmd_server_counts_changed(conn->srv);
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "target", spec);
	cJSON_AddStringToObject(*result, "removed", dir);
	return 0;
}
