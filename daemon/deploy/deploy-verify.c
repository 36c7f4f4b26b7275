/*
 * Checking what a deploy put in place against its manifest: right after the
 * swap (deploy_verify_swapped, called by rocmd_deploy_run) and later, on
 * request (rocmd_deploy_verify): hashes, the binary, the arch served.
 */
#include "deploy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "deploy-internal.h"
#include "daemon/sdk/rocblas-library.h"

/* Which of the comma-separated ARCHS the library folder LIB does not serve
 * (rocmd_rocblas_serves: the rule package import uses), into LOST ("" all
 * served). */
static int
archs_served(const char *lib, unsigned flags, const char *archs, char *lost, size_t lostlen,
             char *why, size_t whylen)
{
	struct rocmd_rocblas_lib l;
	int rc;

	lost[0] = '\0';
	if ((rc = rocmd_rocblas_inspect(lib, flags, NULL, &l, why, whylen)) < 0)
		return rc;
	for (const char *a = archs; *a != '\0';) {
		size_t n = strcspn(a, ","), k = strlen(lost);
		char one[ROCMD_GFX_MAX];
		snprintf(one, sizeof(one), "%.*s", (int)n, a);
		a += n + (a[n] == ',');
		if (one[0] != '\0' && !rocmd_rocblas_serves(&l, one))
			snprintf(lost + k, lostlen - k, "%s%s", k ? ", " : "", one);
	}
	rocmd_rocblas_lib_free(&l);
	return 0;
}

/* Hashes the swapped-in tree and binary against the manifest and checks the
 * arch; 0 or ROCMD_ECORRUPT with WHY. */
int
deploy_verify_swapped(struct txn *t, const struct rocmd_deploy_request *req, char *why,
                      size_t whylen)
{
	char first[512], hex[ROCMD_SHA256_HEX], lost[256];
	uint64_t checked, bad, size;
	int rc;

	for (int i = t->keep0; i < t->nd; i++) {
		rc = deploy_check_tree(t->d[i].lroot, t->d[i].lib, i ? req->lt_files : req->files,
		                       i ? req->nlt_files : req->nfiles, &checked, &bad, first,
		                       sizeof(first), req->progress, req->ctx, "verify", why,
		                       whylen);
		if (rc < 0)
			return rc;
		if (bad > 0) {
			snprintf(why, whylen, "verification failed: %llu of %llu files differ (%s)",
			         (unsigned long long)bad, (unsigned long long)checked, first);
			return ROCMD_ECORRUPT;
		}
	}
	if (req->binary != NULL) {
		if ((rc = rocmd_fs_hash_file_in(t->broot, t->bin, hex, &size)) < 0) {
			snprintf(why, whylen, "cannot read %s: %s", t->bin, rocmd_strerror(rc));
			return rc;
		}
		if (size != req->binary->size || strcmp(hex, req->binary->sha256) != 0) {
			snprintf(why, whylen, "verification failed: %s is not the package's binary",
			         t->bin);
			return ROCMD_ECORRUPT;
		}
	}
	if (!t->keep0 && req->arch != NULL && req->arch[0] != '\0') {
		if ((rc = archs_served(t->d[0].lib, 0, req->arch, lost, sizeof(lost), why,
		                       whylen)) < 0)
			return rc;
		if (lost[0] != '\0') {
			snprintf(why, whylen,
			         "verification failed: the deployed library does not serve %s "
			         "(every GPU is asked)",
			         lost);
			return ROCMD_ECORRUPT;
		}
	}
	if (t->nd > 1 && req->lt_arch != NULL && req->lt_arch[0] != '\0') {
		if ((rc = archs_served(t->d[1].lib, ROCMD_ROCBLAS_ARCH_SUBDIRS, req->lt_arch, lost,
		                       sizeof(lost), why, whylen)) < 0)
			return rc;
		if (lost[0] != '\0') {
			snprintf(
			    why, whylen,
			    "verification failed: the deployed hipBLASLt library does not serve "
			    "%s, which the one it replaced served",
			    lost);
			return ROCMD_ECORRUPT;
		}
	}
	return 0;
}

int
rocmd_deploy_verify(const char *state_dir, const struct rocmd_deploy_target *tg, const char *arch,
                    rocmd_deploy_progress_fn progress, void *ctx,
                    struct rocmd_deploy_verify_report *rep, char *why, size_t whylen)
{
	struct txn t;
	struct rocmd_deploy_files f = {0};
	char path[DEPLOY_PATH_MAX + 16];
	cJSON *cur = NULL;
	int rc;

	memset(&t, 0, sizeof(t));
	memset(rep, 0, sizeof(*rep));
	rep->arch_ok = rep->pair_ok = -1;
	why[0] = '\0';
	if ((rc = deploy_txn_paths(&t, state_dir, tg, 0, 0, why, whylen)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/current.json", t.dir);
	if ((rc = rocmd_fs_json_read(path, &cur)) < 0) {
		if (rc == -ENOENT) {
			snprintf(why, whylen, "nothing was deployed to %s", t.name);
			return ROCMD_ENOTFOUND;
		}
		snprintf(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	if ((rc = deploy_manifest_parse(cur, NULL, NULL, &f)) < 0) {
		snprintf(why, whylen, "%s is damaged", path);
		goto out;
	}
	snprintf(rep->label, sizeof(rep->label), "%s", f.label);
	rc = deploy_check_tree(t.d[0].lroot, t.d[0].lib, f.files, f.n, &rep->files_checked,
	                       &rep->files_bad, rep->first_bad, sizeof(rep->first_bad), progress,
	                       ctx, "verify", why, whylen);
	if (rc < 0)
		goto out;
	if (f.has_lt && t.nd > 1) {
		/* hipBLASLt's folder, deployed with it: its files count the same. */
		uint64_t checked = 0, bad = 0;
		char first[512];
		if ((rc = deploy_check_tree(t.d[1].lroot, t.d[1].lib, f.lt_files, f.nlt, &checked,
		                            &bad, first, sizeof(first), progress, ctx, "verify",
		                            why, whylen)) < 0)
			goto out;
		if (rep->files_bad == 0 && bad > 0)
			snprintf(rep->first_bad, sizeof(rep->first_bad), "%.200s/%.300s",
			         t.d[1].lib, first);
		rep->files_checked += checked;
		rep->files_bad += bad;
		rep->lt_checked = 1;
	}
	if (f.binary != NULL && t.has_binary) {
		char hex[ROCMD_SHA256_HEX];
		uint64_t size = 0;
		rep->files_checked++;
		rc = rocmd_fs_hash_file_in(t.broot, t.bin, hex, &size);
		rep->pair_ok =
		    rc == 0 && size == f.binary->size && strcmp(hex, f.binary->sha256) == 0;
		if (!rep->pair_ok) {
			if (rep->files_bad == 0)
				snprintf(rep->first_bad, sizeof(rep->first_bad), "%.300s: %s",
				         t.bin,
				         rc < 0 ? rocmd_strerror(rc)
				                : "not the binary deployed with this library");
			rep->files_bad++;
		}
		rc = 0;
	}
	if (arch != NULL && arch[0] != '\0') {
		char lost[256];
		if ((rc = archs_served(t.d[0].lib, 0, arch, lost, sizeof(lost), why, whylen)) < 0)
			goto out;
		rep->arch_ok = lost[0] == '\0';
	}
	if (rep->files_bad > 0 || rep->arch_ok == 0 || rep->pair_ok == 0) {
		snprintf(why, whylen, "%s differs from what was deployed: %s", t.name,
		         rep->files_bad > 0 ? rep->first_bad
		                            : "the library does not cover the arch");
		rc = ROCMD_ECORRUPT;
	}
out:
	rocmd_deploy_files_free(&f);
	cJSON_Delete(cur);
	return rc;
}
