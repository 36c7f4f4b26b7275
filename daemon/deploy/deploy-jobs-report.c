/*
 * A deploy job's report: the result a client gets for a deploy, rollback or
 * verify (deploy_result_json), lib.recover's result, and the note on what a
 * job did to hipBLASLt beside the target. Loop thread, from the done hook.
 */
#include "deploy-jobs.h"

#include <string.h>

/* What a deploy or rollback did to hipBLASLt beside the target (J->lt_state),
 * said as "; hipBLASLt at ... <what>" ("" when there is nothing to say). */
void
deploy_lt_note(const struct deploy_job *j, char *out, size_t outlen)
{
	const char *lt = j->t.sys_lt;

	out[0] = '\0';
	switch (j->lt_state) {
	case LT_DEPLOYED:
		if (j->lt_only && j->t.ov_lt[0] != '\0' && !deploy_dir_has_files(j->t.host_lib))
			/* An overlay holding no rocBLAS: its environment names none. */
			deploy_fmt(
			    out, outlen,
			    "; hipBLASLt at %s deployed: the package's hipBLASLt folder (%zu "
			    "files, one transaction); rocBLAS: the SDK's own serves "
			    "(ROCBLAS_TENSILE_LIBPATH not set): the package carries no rocBLAS "
			    "library",
			    j->t.ov_lt, j->nlt_files);
		else if (j->lt_only)
			deploy_fmt(
			    out, outlen,
			    "; hipBLASLt at %s deployed: the package's hipBLASLt folder (%zu "
			    "files, one transaction); rocBLAS at %s left as it is: the "
			    "package carries no rocBLAS library",
			    j->t.ov_lt[0] != '\0' ? j->t.ov_lt : lt, j->nlt_files, j->t.sys_lib);
		else
			deploy_fmt(out, outlen,
			           "; hipBLASLt at %s deployed with it: the package's hipBLASLt "
			           "folder (%zu files, one transaction)",
			           j->t.ov_lt[0] != '\0' ? j->t.ov_lt : lt, j->nlt_files);
		if (j->dry_run ? j->lt_backup_first : j->res.lt_backup_added) {
			size_t l = strlen(out);
			deploy_fmt(out + l, outlen - l,
			           "; hipBLASLt's originals backed up first (the backup of the "
			           "originals was made without them)");
		}
		break;
	case LT_RESTORED:
		deploy_fmt(out, outlen,
		           "; hipBLASLt at %s back to its originals (from the backup, with "
		           "rocBLAS's)%s",
		           lt,
		           j->type == JOB_DEPLOY
		               ? ": the package carries no hipBLASLt library, and the one rocmd "
		                 "deployed there before came with another package's rocBLAS"
		               : "");
		break;
	case LT_NO_BACKUP:
		deploy_fmt(out, outlen,
		           "; hipBLASLt at %s left as it is: the backup of the originals was made "
		           "without hipBLASLt's folder, so a rollback could not restore it "
		           "(rocmctl lib forget, then deploy again, makes a new backup)",
		           lt);
		break;
	case LT_EMPTIED:
		deploy_fmt(out, outlen,
		           "; the overlay's hipBLASLt folder %s emptied: the SDK's own hipBLASLt "
		           "serves again (unset HIPBLASLT_TENSILE_LIBPATH)",
		           j->t.ov_lt);
		break;
	case LT_NO_TARGET:
		deploy_fmt(out, outlen, "; the package's hipBLASLt folder was not deployed: %s",
		           lt[0] != '\0' ? "rocmd deploys hipBLASLt to an SDK's own folder or its "
		                           "overlay, not to an application's copy"
		                         : "the target has no hipBLASLt library");
		break;
	default:
		if (lt[0] != '\0')
			deploy_fmt(out, outlen, "; hipBLASLt at %s left as it is: %s", lt,
			           j->type == JOB_ROLLBACK
			               ? "rocmd had not deployed to it"
			               : "the package carries no hipBLASLt library");
	}
}

cJSON *
deploy_result_json(const struct deploy_job *j)
{
	cJSON *r = cJSON_CreateObject(), *t, *s, *m;

	t = cJSON_AddObjectToObject(r, "target");
	cJSON_AddStringToObject(t, "name", j->t.name);
	cJSON_AddStringToObject(t, "kind", j->t.kind);
	cJSON_AddStringToObject(t, "library", j->t.sys_lib);
	if (j->t.sys_bin[0])
		cJSON_AddStringToObject(t, "binary", j->t.sys_bin);
	else
		cJSON_AddNullToObject(t, "binary");
	if (j->t.sdk_path[0])
		cJSON_AddStringToObject(t, "sdk", j->t.sdk_path);
	/* The SDK's version at deploy time: doctor tells an SDK upgraded since. */
	if (j->t.sdk_version[0])
		cJSON_AddStringToObject(t, "sdk_version", j->t.sdk_version);
	if (j->pkg_id > 0) {
		cJSON_AddNumberToObject(r, "package", (double)j->pkg_id);
		cJSON_AddStringToObject(r, "package_name", j->pkg_name);
	}
	/* A package of hipBLASLt's folder alone: rocBLAS's stays. */
	if (j->lt_only && j->type != JOB_VERIFY)
		cJSON_AddStringToObject(r, "rocblas", "left as it is: the package carries no "
		                                      "rocBLAS library");
	if (j->arch[0])
		cJSON_AddStringToObject(r, "arch", j->arch);
	if (j->type != JOB_VERIFY && (m = deploy_merge_json(j)) != NULL)
		cJSON_AddItemToObject(r, "merged", m);
	if (j->no_merge && j->type == JOB_DEPLOY)
		cJSON_AddBoolToObject(r, "no_merge", 1);
	if (j->lost[0] != '\0' && j->type == JOB_DEPLOY)
		cJSON_AddStringToObject(r, "lost", j->lost); /* confirmed: verify reports them */
	if (j->type == JOB_DEPLOY)
		deploy_forced_json(r, j->force);
	cJSON_AddStringToObject(r, "reason", j->reason);
	if (j->type != JOB_VERIFY) {
		cJSON_AddNumberToObject(r, "files", (double)j->res.files);
		cJSON_AddNumberToObject(r, "bytes", (double)j->res.bytes);
		cJSON_AddNumberToObject(r, "bytes_copied", (double)j->res.bytes_copied);
		cJSON_AddBoolToObject(r, "backup_made", j->res.backup_made);
		cJSON_AddBoolToObject(r, "backup_adopted", j->res.backup_adopted);
		cJSON_AddBoolToObject(r, "atomic_exchange", j->res.exchange);
		cJSON_AddBoolToObject(r, "rolled_back", j->res.rolled_back);
		cJSON_AddNumberToObject(r, "stage_us", (double)j->res.stage_us);
		cJSON_AddNumberToObject(r, "swap_us", (double)j->res.swap_us);
		cJSON_AddNumberToObject(r, "verify_us", (double)j->res.verify_us);
		cJSON_AddNumberToObject(r, "pair_window_ns", (double)j->res.pair_window_ns);
		if (j->res.manifest[0])
			cJSON_AddStringToObject(r, "manifest", j->res.manifest);
	} else {
		cJSON_AddNumberToObject(r, "files_checked", (double)j->vrep.files_checked);
		cJSON_AddNumberToObject(r, "files_bad", (double)j->vrep.files_bad);
		if (j->vrep.first_bad[0])
			cJSON_AddStringToObject(r, "first_bad", j->vrep.first_bad);
		if (j->vrep.arch_ok >= 0)
			cJSON_AddBoolToObject(r, "arch_ok", j->vrep.arch_ok);
		else
			cJSON_AddNullToObject(r, "arch_ok");
		if (j->vrep.pair_ok >= 0)
			cJSON_AddBoolToObject(r, "pair_ok", j->vrep.pair_ok);
		else
			cJSON_AddNullToObject(r, "pair_ok");
		cJSON_AddStringToObject(r, "label", j->vrep.label);
		if (j->lt_checked)
			cJSON_AddStringToObject(r, "hipblaslt_library", j->t.sys_lt);
		cJSON_AddBoolToObject(r, "hipblaslt_deployed", j->vrep.lt_checked);
		if (j->gpus.n > 0) {
			cJSON *ga = cJSON_AddArrayToObject(r, "gpus");
			for (int i = 0; i < j->gpus.n && i < 8; i++) {
				cJSON *o = cJSON_CreateObject();
				cJSON_AddStringToObject(o, "arch", j->gpus.archs[i]);
				cJSON_AddBoolToObject(o, "covered", j->gpu_covered[i]);
				if (j->lt_checked)
					cJSON_AddBoolToObject(o, "hipblaslt_covered",
					                      j->lt_covered[i]);
				cJSON_AddItemToArray(ga, o);
			}
		}
		if (j->bcheck.checked > 0) {
			cJSON *b = cJSON_AddObjectToObject(r, "backup");
			cJSON_AddNumberToObject(b, "files_checked", (double)j->bcheck.checked);
			cJSON_AddNumberToObject(b, "files_bad", (double)j->bcheck.bad);
			if (j->bcheck.first_bad[0])
				cJSON_AddStringToObject(b, "first_bad", j->bcheck.first_bad);
			if (j->older_gen > 0)
				cJSON_AddNumberToObject(b, "older_intact", j->older_gen);
		}
	}
	if (j->fingerprint[0])
		cJSON_AddStringToObject(r, "fingerprint", j->fingerprint);
	s = cJSON_AddObjectToObject(r, "smoke_test");
	cJSON_AddStringToObject(s, "state",
	                        j->smoke_state == 1   ? "ok"
	                        : j->smoke_state == 2 ? "skipped"
	                        : j->smoke_state == 3 ? "failed"
	                                              : "not_run");
	cJSON_AddStringToObject(s, "detail", j->smoke[0] ? j->smoke : "not run");
	if (strcmp(j->t.kind, "overlay") == 0 && j->type == JOB_DEPLOY) {
		char line[2 * PATH_MAX + 64];
		deploy_overlay_env(j->t.host_lib, j->t.ov_lt, line, sizeof(line));
		cJSON_AddStringToObject(r, "environment", line);
	}
	if (j->type == JOB_DEPLOY && j->t.route_why[0])
		cJSON_AddStringToObject(r, "route_why", j->t.route_why);
	if (j->type == JOB_DEPLOY || j->type == JOB_ROLLBACK) {
		char note[PATH_MAX + 300];
		deploy_lt_note(j, note, sizeof(note));
		if (note[0] != '\0')
			cJSON_AddStringToObject(r, "hipblaslt", note + 2);
	}
	if (j->users[0])
		cJSON_AddStringToObject(r, "gpu_users", j->users);
	if (j->warning[0])
		cJSON_AddStringToObject(r, "warning", j->warning);
	return r;
}

/* lib.recover's result: what recovery did at each target. */
cJSON *
deploy_recover_json(const struct deploy_job *j)
{
	static const char *const actions[] = {"none", "undone", "finished"};
	cJSON *r = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(r, "targets");

	for (size_t i = 0; i < j->nrecover; i++) {
		const struct deploy_recover_item *it = &j->recover[i];
		cJSON *o = cJSON_CreateObject();
		int act = it->rec.action;
		cJSON_AddStringToObject(o, "name", it->name);
		cJSON_AddStringToObject(o, "action",
		                        it->rc < 0             ? "failed"
		                        : act >= 0 && act <= 2 ? actions[act]
		                                               : "none");
		cJSON_AddStringToObject(o, "step", it->rec.step);
		cJSON_AddStringToObject(o, "label", it->rec.label);
		cJSON_AddStringToObject(o, "message",
		                        it->rc < 0 ? it->why
		                        : act == ROCMD_DEPLOY_RECOVER_NONE
		                            ? "nothing to recover: no deploy was left unfinished"
		                            : it->rec.what);
		cJSON_AddItemToArray(a, o);
	}
	return r;
}

void
deploy_forced_json(cJSON *r, unsigned force)
{
	cJSON *f;

	if (force == 0)
		return;
	f = cJSON_AddArrayToObject(r, "forced");
	if (force & DEPLOY_CHECK_SDK)
		cJSON_AddItemToArray(f, cJSON_CreateString("sdk"));
	if (force & DEPLOY_CHECK_BINARY)
		cJSON_AddItemToArray(f, cJSON_CreateString("binary"));
	if (force & DEPLOY_CHECK_ARCH)
		cJSON_AddItemToArray(f, cJSON_CreateString("arch"));
}
