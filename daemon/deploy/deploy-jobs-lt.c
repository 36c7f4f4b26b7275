/*
 * hipBLASLt's part of a deploy job (see deploy-jobs.h): what the job does to
 * the target's hipBLASLt folder (deploys the package's, puts the originals
 * back, empties an overlay's or leaves it), and the request of a package that
 * carries hipBLASLt's folder alone.
 */
#include "deploy-jobs.h"

#include <string.h>

#include "common/error.h"
#include "daemon/core/server.h"

/* The hipBLASLt part of REQ (deploy-jobs.h). */
void
deploy_lt_choose(struct deploy_job *j, struct rocmd_deploy_request *req)
{
	const char *state = req->state_dir;
	struct rocmd_deploy_files cur;
	struct rocmd_deploy_backup_info bi;
	char why[512];
	int placed = 0, to_original = j->type == JOB_ROLLBACK && strcmp(j->to, "original") == 0;
	int new_lt = (req->flags & ROCMD_DEPLOY_NEW_LT_ORIGINALS) != 0;

	j->lt_state = LT_LEFT;
	j->lt_backup_first = 0;
	if (req->target.lt_dir == NULL) {
		if (j->pkg_has_lt && j->type == JOB_DEPLOY)
			j->lt_state = LT_NO_TARGET;
		return;
	}
	if (rocmd_deploy_current_load(state, j->t.name, &cur, why, sizeof(why)) == 0) {
		/* rocmd's hipBLASLt files, not the originals it put back. */
		placed = cur.has_lt && strcmp(cur.label, "original") != 0;
		rocmd_deploy_files_free(&cur);
	}
	if (rocmd_deploy_backup_info(state, j->t.name, &bi) < 0)
		memset(&bi, 0, sizeof(bi)); /* damaged: the engine says so */
	if (j->nlt_files > 0 && !to_original) {
		/* A backup made without hipBLASLt's folder gets its originals
		 * first (deploy_backup_add_lt); one made by this run has them. */
		j->lt_backup_first =
		    bi.exists && !bi.has_lt &&
		    !(req->flags & (ROCMD_DEPLOY_NEW_ORIGINALS | ROCMD_DEPLOY_NEW_LT_ORIGINALS)) &&
		    strcmp(j->t.kind, "overlay") != 0;
		/* The GPUs' archs the hipBLASLt in place serves: kept. */
		deploy_arch_minus(j->arch, j->t.lt_archs, why, sizeof(why));
		deploy_arch_minus(j->arch, why, j->lt_arch, sizeof(j->lt_arch));
		req->lt = 1;
		req->lt_files = j->lt_files;
		req->nlt_files = j->nlt_files;
		req->lt_arch = j->lt_arch[0] ? j->lt_arch : NULL;
		j->lt_state = LT_DEPLOYED;
		return;
	}
	/* After an update of hipBLASLt's folder (its new originals) what it
	 * holds is the vendor's; an update of rocBLAS's alone leaves rocmd's
	 * hipBLASLt files there, which go as for any deploy. */
	if (!placed || new_lt)
		return;
	if (strcmp(j->t.kind, "overlay") == 0) {
		/* An overlay's originals are nothing: emptied, the SDK's own serves. */
		req->lt = 1;
		req->lt_files = NULL;
		req->nlt_files = 0;
		j->lt_state = LT_EMPTIED;
		return;
	}
	if (!to_original) {
		rocmd_deploy_files_free(&j->loaded); /* a deferred job's earlier run */
		if (rocmd_deploy_backup_load(state, j->t.name, &j->loaded, why, sizeof(why)) < 0)
			return;
	}
	if (!j->loaded.has_lt) {
		j->lt_state = LT_NO_BACKUP;
		return;
	}
	req->lt = 1;
	req->lt_files = j->loaded.lt_files;
	req->nlt_files = j->loaded.nlt;
	req->lt_arch = NULL; /* the vendor's, as it was */
	j->lt_state = LT_RESTORED;
}

/* A package of hipBLASLt's folder alone (deploy-jobs.h). */
int
deploy_lt_only_request(struct deploy_job *j, struct rocmd_deploy_request *req)
{
	char note[PATH_MAX + 300];

	req->keep_lib = 1;
	req->binary = NULL;
	req->arch = NULL;
	if (req->lt)
		return 0;
	deploy_lt_note(j, note, sizeof(note));
	deploy_fmt(j->base.why, sizeof(j->base.why),
	           "package #%lld carries only hipBLASLt's library, and nothing was deployed%s",
	           (long long)j->pkg_id, note);
	return ROCMD_EINVAL;
}

/* The rocBLAS fingerprint of a hipBLASLt-only deploy (deploy-jobs.h). */
void
deploy_lt_only_fingerprint(struct deploy_job *j)
{
	struct rocmd_deploy_files cur;
	char why[256];

	if (rocmd_deploy_current_load(j->ds->srv->cfg->state_dir, j->t.name, &cur, why,
	                              sizeof(why)) < 0)
		return;
	deploy_files_fingerprint(cur.files, cur.n, 1, j->fingerprint);
	rocmd_deploy_files_free(&cur);
}
