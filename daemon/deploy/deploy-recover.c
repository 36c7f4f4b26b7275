/*
 * Deploy's recovery (see deploy-service.h): at start-up, every journaled
 * transaction the engine left (a crash, a failed undo) is finished or undone
 * from what is on disk, idempotently, and the database is brought in line
 * with what each target holds (the engine's label in current.json); while a
 * journal stays (recovery failed), lib.status says what the target holds; after a
 * verification that failed, the target goes back to its originals unless an
 * SDK update made the files there the vendor's new ones.
 */
#include "deploy-jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "db/db-deploy.h"
#include "deploy-jobs-os.h"

/* ---- after a failed verification ---- */

void
deploy_queue_auto_rollback(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                           int64_t target_id, const char *why)
{
	struct deploy_job *j;
	struct deploy_row row;

	deploy_target_lookup(ds, t->name, &row);
	if (deploy_originals_changed(ds, t, &row)) {
		/* Not ours any more: putting back the older originals would break
		 * the updated SDK. */
		rocmd_server_event(ds->srv, "lib.drift", NULL,
		                   "%s holds an SDK update's new library, not what rocmd deployed "
		                   "(%s); left as it is, no rollback to older originals",
		                   t->name, why);
		return;
	}
	if (t->host_lt[0] != '\0' && deploy_lt_originals_changed(ds, t, &row)) {
		rocmd_server_event(ds->srv, "lib.drift", NULL,
		                   "%s holds an update's new hipBLASLt library, not what rocmd "
		                   "deployed (%s); left as it is, no rollback to older originals",
		                   t->name, why);
		return;
	}
	j = deploy_job_new(ds, JOB_ROLLBACK);
	if (j == NULL)
		return;
	j->t = *t;
	j->target_id = target_id;
	deploy_copy(j->reason, sizeof(j->reason), "verify");
	deploy_copy(j->to, sizeof(j->to), "original");
	log_notice("%s: verification failed (%s); rolling back to the originals", t->name, why);
	deploy_job_submit(j, NULL);
}

/* ---- a journal that stays ---- */

void
deploy_status_interrupted(struct rocmd_deploy_service *ds, cJSON *o)
{
	static const char *const holds[] = {"unknown", "old", "new", "mixed"};
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
	struct rocmd_deploy_journal_state js;
	long long pkg;
	cJSON *i, *d;
	int rc;

	if (!cJSON_IsString(n))
		return;
	rc = rocmd_deploy_journal_state(ds->srv->cfg->state_dir, n->valuestring, &js);
	if (rc == ROCMD_ENOTFOUND || rc == ROCMD_EINVAL)
		return;
	i = cJSON_AddObjectToObject(o, "interrupted");
	cJSON_AddStringToObject(i, "step", js.step);
	cJSON_AddStringToObject(i, "label", js.label);
	cJSON_AddStringToObject(i, "holds", holds[js.holds]);
	if (rc < 0)
		cJSON_AddStringToObject(i, "problem", rocmd_strerror(rc));
	if (js.holds == ROCMD_DEPLOY_HOLDS_NEW) {
		/* The interrupted deploy's content is in place: that is what the
		 * target holds, whatever the database recorded before it. */
		cJSON_DeleteItemFromObject(o, "deployed");
		if (sscanf(js.label, "pkg %lld", &pkg) == 1) {
			d = cJSON_AddObjectToObject(o, "deployed");
			cJSON_AddNumberToObject(d, "package", (double)pkg);
		} else {
			cJSON_AddNullToObject(o, "deployed");
		}
		/* Not an SDK update: the library differs from the recorded one
		 * because of the deploy. */
		cJSON_DeleteItemFromObject(o, "drift");
		cJSON_AddBoolToObject(o, "drift", 0);
	}
	d = cJSON_GetObjectItemCaseSensitive(o, "deployed");
	if (cJSON_IsObject(d))
		cJSON_AddBoolToObject(d, "interrupted", 1);
}

/* ---- start-up ---- */

/* The backup of NAME's originals, when the database lacks its row (its
 * write failed with the deploy's). */
static int
reconcile_backup(struct rocmd_deploy_service *ds, const char *name, const struct deploy_row *row)
{
	struct rocmd_deploy_backup_info b;
	char path[PATH_MAX];
	int rc;

	if (row->has_backup || rocmd_deploy_backup_info(ds->srv->cfg->state_dir, name, &b) < 0 ||
	    !b.exists)
		return 0;
	snprintf(path, sizeof(path),
	         rocmd_deploy_native_windows ? "%s\\deploy\\%s\\backup" : "%s/deploy/%s/backup",
	         ds->srv->cfg->state_dir, name);
	rc = rocmd_deploy_db_backup_put(ds->db, row->id, path, b.manifest, (int64_t)b.files,
	                                (int64_t)b.bytes, b.adopted ? "rocblas_backup" : NULL,
	                                rocmd_now_ms());
	return rc == ROCMD_EEXISTS ? 0 : rc;
}

/* Brings the database in line with what the engine says target NAME holds;
 * 0, or the error (the database's, or one reading current.json). */
static int
reconcile(struct rocmd_deploy_service *ds, const char *name)
{
	struct rocmd_deploy_files cur = {0};
	struct deploy_row row;
	char why[512];
	long long pkg = 0;
	int rc;

	deploy_target_lookup(ds, name, &row);
	if (!row.found)
		return 0;
	if ((rc = rocmd_deploy_current_load(ds->srv->cfg->state_dir, name, &cur, why,
	                                    sizeof(why))) < 0) {
		if (rc == ROCMD_ENOTFOUND || rc == ROCMD_ECORRUPT)
			return 0;
		/* A read that failed (EIO): tried again with the database's. */
		log_warn("%s: cannot read what it holds yet: %s", name, why);
		return rc;
	}
	rc = reconcile_backup(ds, name, &row);
	if (rc == 0 && cur.label != NULL && strcmp(cur.label, "original") == 0) {
		if (row.live_id != 0) {
			rc =
			    rocmd_deploy_db_end_live(ds->db, row.id, rocmd_now_ms(),
			                             "recovered: the originals are in place", NULL);
			if (rc == 0)
				rocmd_server_event(ds->srv, "lib.recovered", NULL,
				                   "%s holds the originals: database updated",
				                   name);
			else if (rc == ROCMD_ENOTFOUND)
				rc = 0;
		}
	} else if (rc == 0 && cur.label != NULL && sscanf(cur.label, "pkg %lld", &pkg) == 1 &&
	           pkg != row.live_pkg) {
		char fp[72];
		struct rocmd_db_deployment d = {.target_id = row.id,
		                                .package_id = pkg,
		                                .state = "live",
		                                .reason = "recover",
		                                .started_ms = rocmd_now_ms(),
		                                .finished_ms = rocmd_now_ms()};
		int64_t id;
		/* The fingerprint discovery will see, as a deploy records it. */
		qsort(cur.files, cur.n, sizeof(*cur.files), deploy_file_cmp);
		deploy_files_fingerprint(cur.files, cur.n, 1, fp);
		d.fingerprint = fp[0] != '\0' ? fp : NULL;
		rc = rocmd_deploy_db_record(ds->db, &d, "superseded", "recover", "ok",
		                            "recovered: the deploy had completed on disk", &id);
		if (rc == 0)
			rocmd_server_event(ds->srv, "lib.recovered", NULL,
			                   "%s holds package #%lld: database updated", name, pkg);
	}
	if (rc < 0)
		log_warn("%s: the database cannot record what it holds yet: %s", name,
		         rocmd_deploy_db_errmsg(ds->db));
	rocmd_deploy_files_free(&cur);
	return rc;
}

static int
reconcile_one(const struct rocmd_db_target *t, void *arg)
{
	char ***names = arg;
	size_t n = 0;

	while ((*names)[n] != NULL)
		n++;
	(*names)[n] = strdup(t->name);
	return (*names)[n] == NULL ? ROCMD_ENOMEM : 0;
}

static int
count_targets(const struct rocmd_db_target *t, void *arg)
{
	(*(size_t *)arg)++;
	return 0;
}

int
deploy_recover_all(struct rocmd_deploy_service *ds, char *why, size_t whylen)
{
	char **names = NULL;
	size_t n = 0;
	int rc;

	rc = rocmd_deploy_pending(ds->srv->cfg->state_dir, &names, &n);
	if (rc < 0 && rc != ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "cannot list interrupted deploys: %s", rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		struct rocmd_deploy_recovery r = {0};
		char w[512] = "";
		rc = rocmd_deploy_recover(ds->srv->cfg->state_dir, names[i], &r, w, sizeof(w));
		if (rc < 0) {
			/* The target stays refused (its journal stays); the daemon runs. */
			log_err("deploy recovery of %s failed: %s", names[i], w);
			rocmd_server_event(ds->srv, "lib.recover_failed", NULL,
			                   "recovery of %s failed: %s", names[i], w);
		} else if (r.action != ROCMD_DEPLOY_RECOVER_NONE) {
			struct deploy_row row;
			rocmd_server_event(ds->srv, "lib.recovered", NULL, "%s: %s", names[i],
			                   r.what);
			deploy_target_lookup(ds, names[i], &row);
			if (row.found) {
				struct rocmd_db_history h = {.target_id = row.id,
				                             .time_ms = rocmd_now_ms(),
				                             .action = "recover",
				                             .outcome = "ok",
				                             .message = r.what};
				rocmd_deploy_db_history_add(ds->db, &h, NULL);
			}
		}
		free(names[i]);
	}
	free(names);
	/* Then every known target's database rows against its current.json. */
	if (deploy_reconcile_all(ds) > 0)
		deploy_unrecorded(ds);
	return 0;
}

int
deploy_reconcile_all(struct rocmd_deploy_service *ds)
{
	char **all = NULL;
	size_t total = 0;
	int failed = 0;

	rocmd_deploy_db_targets(ds->db, 0, NULL, count_targets, &total);
	all = calloc(total + 1, sizeof(*all));
	if (all == NULL)
		return 1;
	rocmd_deploy_db_targets(ds->db, 0, NULL, reconcile_one, &all);
	for (size_t i = 0; all[i] != NULL; i++) {
		failed += reconcile(ds, all[i]) < 0;
		free(all[i]);
	}
	free(all);
	return failed;
}
