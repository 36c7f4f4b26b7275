/*
 * doctor's checks of each target (doctor.h): the deployed package against
 * the SDK's version, an SDK upgraded since the deploy, every GPU's arch in
 * the library in place, the backup of the originals (hashed again, as lib
 * verify does), files in the library folder that neither the deployed
 * package nor rocmd put there, a binary not deployed with the library in
 * place (lib verify's comparison), application copies that are not the
 * deployed package, and (Linux) programs still running the replaced
 * rocBLAS. Those that read only the database run on the loop thread, the
 * others on the worker.
 */
#include "doctor.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/hash.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/rocblas-library.h"

#define STALE_SHOWN 20

static void
evidence_package(cJSON *ev, const struct doctor_target *dt)
{
	cJSON *p = cJSON_AddObjectToObject(ev, "package");

	cJSON_AddNumberToObject(p, "id", (double)dt->row.live_pkg);
	cJSON_AddStringToObject(p, "name", dt->pkg_name);
	cJSON_AddStringToObject(p, "sdk", dt->pkg_sdk);
}

static void
evidence_sdk(cJSON *ev, const struct doctor_target *dt)
{
	cJSON *s = cJSON_AddObjectToObject(ev, "sdk");

	cJSON_AddStringToObject(s, "path", dt->t.sdk_path);
	cJSON_AddStringToObject(s, "version", dt->t.sdk_version);
	cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
}

int
doctor_matching_fix(const struct doctor_target *dt, int same)
{
	return dt->match_pkg > 0 &&
	               (same || dt->row.live_id == 0 || dt->match_pkg != dt->row.live_pkg)
	           ? DOCTOR_FIX_MATCHING
	           : DOCTOR_FIX_NONE;
}

const char *
doctor_matching_text(const struct doctor_target *dt, int same, char *buf, size_t len,
                     const char *otherwise)
{
	if (doctor_matching_fix(dt, same) != DOCTOR_FIX_NONE)
		deploy_fmt(buf, len, "deploy the package that matches now, #%lld (%s): rocmctl lib "
		           "deploy %s (--fix does)",
		           (long long)dt->match_pkg, dt->match_name, dt->t.name);
	else
		deploy_fmt(buf, len, "%s (no stored package fits: %s)", otherwise,
		           dt->match_why[0] ? dt->match_why : "none matches");
	return buf;
}

/* 1. The package in place was built for another SDK generation. */
static void
check_package_sdk(struct doctor *d, struct doctor_target *dt)
{
	char gen[16], pgen[16], fix[1536];
	cJSON *ev;

	if (!dt->row.found || dt->row.live_id == 0 || dt->row.live_pkg <= 0 ||
	    dt->originals_changed || dt->t.sdk_version[0] == '\0' ||
	    rocmd_sdk_generation(dt->t.sdk_version, gen, sizeof(gen)) < 0)
		return;
	if (dt->pkg_sdk[0] == '\0' || rocmd_sdk_generation(dt->pkg_sdk, pgen, sizeof(pgen)) < 0) {
		ev = doctor_add(d, "package-sdk", DOCTOR_WARNING, dt, DOCTOR_FIX_NONE,
		                "import the package again with --sdk X.Y, then rocmctl doctor",
		                "the package deployed at %s, #%lld (%s), does not say which SDK it "
		                "was built for, so nothing tells that it fits SDK %s",
		                dt->t.name, (long long)dt->row.live_pkg, dt->pkg_name,
		                dt->t.sdk_version);
		evidence_package(ev, dt);
		evidence_sdk(ev, dt);
		return;
	}
	if (strcmp(gen, pgen) == 0)
		return;
	ev = doctor_add(d, "package-sdk", DOCTOR_ERROR, dt, doctor_matching_fix(dt, 0),
	                doctor_matching_text(dt, 0, fix, sizeof(fix),
	                                     "import a package built for this SDK, or roll back: "
	                                     "rocmctl lib rollback --to original"),
	                "the package deployed at %s, #%lld (%s), was built for SDK %s, but the "
	                "SDK is %s: a rocBLAS library of another SDK generation may fail to load "
	                "or crash programs",
	                dt->t.name, (long long)dt->row.live_pkg, dt->pkg_name, dt->pkg_sdk,
	                dt->t.sdk_version);
	evidence_package(ev, dt);
	evidence_sdk(ev, dt);
}

/* 2. The SDK changed since the deploy: its version, or its own files over rocmd's. */
static void
check_sdk_upgraded(struct doctor *d, struct doctor_target *dt)
{
	char fix[1536];
	cJSON *ev;

	if (!dt->row.found || strcmp(dt->t.kind, "sdk") != 0)
		return;
	if (dt->originals_changed) {
		ev = doctor_add(
		    d, "sdk-upgraded", DOCTOR_WARNING, dt, doctor_matching_fix(dt, 1),
		    doctor_matching_text(dt, 1, fix, sizeof(fix),
		                         "import a package built for this SDK and deploy it"),
		    "an SDK update replaced the library rocmd had deployed at %s with the "
		    "SDK's own files (SDK %s now): what rocmd deployed there is no longer "
		    "in place",
		    dt->t.name, dt->t.sdk_version[0] ? dt->t.sdk_version : "unknown");
		evidence_sdk(ev, dt);
		if (dt->deployed_sdk[0])
			cJSON_AddStringToObject(ev, "sdk_at_deploy", dt->deployed_sdk);
		return;
	}
	if (dt->row.live_id == 0 || dt->deployed_sdk[0] == '\0' || dt->t.sdk_version[0] == '\0' ||
	    strcmp(dt->deployed_sdk, dt->t.sdk_version) == 0)
		return;
	ev = doctor_add(d, "sdk-upgraded", DOCTOR_WARNING, dt, doctor_matching_fix(dt, 1),
	                doctor_matching_text(dt, 1, fix, sizeof(fix),
	                                     "check that the package fits the new SDK (rocmctl pkg "
	                                     "match), else roll back"),
	                "the SDK at %s was upgraded from %s to %s since package #%lld (%s) was "
	                "deployed, and the upgrade left rocmd's files in place",
	                dt->t.sdk_path, dt->deployed_sdk, dt->t.sdk_version,
	                (long long)dt->row.live_pkg, dt->pkg_name);
	evidence_sdk(ev, dt);
	cJSON_AddStringToObject(ev, "sdk_at_deploy", dt->deployed_sdk);
	evidence_package(ev, dt);
}

/* 3. Every GPU's arch is served by the library in place (lib verify's rule). */
static void
check_gpu_arch(struct doctor *d, struct doctor_target *dt)
{
	struct rocmd_rocblas_lib lib;
	char why[512], fix[1536], want[256];

	if (d->ngpus == 0 || rocmd_rocblas_inspect(dt->t.host_lib, 0, NULL, &lib, why,
	                                           sizeof(why)) < 0)
		return;
	for (int i = 0; i < d->ngpus; i++) {
		const struct doctor_gpu *g = &d->gpus[i];
		cJSON *ev, *a;
		if (rocmd_rocblas_serves(&lib, g->arch))
			continue;
		deploy_fmt(want, sizeof(want), "import a package built for %s and SDK %s, then "
		           "rocmctl lib deploy", g->arch, dt->t.sdk_version);
		ev =
		    doctor_add(d, "gpu-arch", DOCTOR_ERROR, dt, doctor_matching_fix(dt, 0),
		               doctor_matching_text(dt, 0, fix, sizeof(fix), want),
		               "the library at %s has no kernels for the %s (%s): rocBLAS finds no "
		               "Tensile library for that GPU, so its GEMMs fail there",
		               dt->t.sys_lib, g->name[0] ? g->name : "GPU", g->arch);
		cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
		cJSON_AddStringToObject(ev, "gpu_arch", g->arch);
		cJSON_AddStringToObject(ev, "gpu_name", g->name);
		a = cJSON_AddArrayToObject(ev, "library_archs");
		for (size_t k = 0; k < lib.narchs; k++)
			cJSON_AddItemToArray(a, cJSON_CreateString(lib.archs[k]));
	}
	rocmd_rocblas_lib_free(&lib);
}

/* 4. The backup of the originals is there and hashes as its manifest says. */
static void
check_backup(struct doctor *d, struct doctor_target *dt)
{
	const char *state = d->ds->srv->cfg->state_dir;
	struct rocmd_deploy_backup_info info = {0};
	struct rocmd_deploy_backup_check c = {0};
	char why[512];
	cJSON *ev;
	int rc;

	if (!dt->row.found || !dt->row.has_backup)
		return;
	if (rocmd_deploy_backup_info(state, dt->t.name, &info) < 0 || !info.exists) {
		ev = doctor_add(d, "backup", DOCTOR_ERROR, dt, DOCTOR_FIX_NONE,
		                "rocmd cannot make the vendor's files again: reinstall the SDK's "
		                "rocBLAS (its package or installer) to get them back; the next "
		                "rocmctl lib deploy then backs them up",
		                "the backup of %s's original rocBLAS is missing: a rollback to the "
		                "originals is not possible",
		                dt->t.name);
		cJSON_AddStringToObject(ev, "backup", state);
		cJSON_AddStringToObject(ev, "target", dt->t.name);
		return;
	}
	rc = rocmd_deploy_backup_check(state, dt->t.name, 0, &c, why, sizeof(why));
	if (rc == 0 && c.bad == 0)
		return;
	ev = doctor_add(d, "backup", DOCTOR_ERROR, dt, DOCTOR_FIX_NONE,
	                "rocmd cannot make the vendor's files again: keep what is deployed, "
	                "reinstall the SDK's rocBLAS to get the originals back (the next rocmctl "
	                "lib deploy backs them up), or roll back to an older generation that is "
	                "intact (rocmctl lib status lists them)",
	                "the backup of %s's original rocBLAS is damaged (%llu of %llu files "
	                "differ from its manifest%s%s): a rollback to it would not give the "
	                "vendor's files back",
	                dt->t.name, (unsigned long long)c.bad, (unsigned long long)c.checked,
	                c.first_bad[0] ? ", first " : "", c.first_bad[0] ? c.first_bad : why);
	cJSON_AddNumberToObject(ev, "files_checked", (double)c.checked);
	cJSON_AddNumberToObject(ev, "files_bad", (double)c.bad);
	cJSON_AddStringToObject(ev, "first_bad", c.first_bad[0] ? c.first_bad : why);
}

/* A file beside the deployed package's: not in its list L. */
static int
not_listed(const char *path, const char *rel, const struct rocmd_deploy_files *l)
{
	struct rocmd_deploy_file key = {.path = rel};

	(void)path;
	return bsearch(&key, l->files, l->n, sizeof(*l->files), deploy_file_cmp) == NULL;
}

/* A file rocmd put there that an SDK update left: in L (what rocmd ever
 * deployed, never the originals) with the same content. */
static int
left_by_rocmd(const char *path, const char *rel, const struct rocmd_deploy_files *l)
{
	struct rocmd_deploy_file key = {.path = rel};
	const struct rocmd_deploy_file *f =
	    bsearch(&key, l->files, l->n, sizeof(*l->files), deploy_file_cmp);
	uint8_t dg[ROCMD_SHA256_LEN];
	char hex[ROCMD_SHA256_HEX];
	uint64_t size = 0;

	/* deploy_ours_load gives path and hash (no size). */
	if (f == NULL || f->kind != ROCMD_DEPLOY_FILE || rocmd_sha256_file(path, dg, &size) < 0)
		return 0;
	rocmd_sha256_hex(dg, hex);
	return strcmp(hex, f->sha256) == 0;
}

/* Lists the files below folder HOST/REL for which IS_STALE holds into
 * STALE; the count. Folders are walked, never followed. */
static size_t
stale_walk(const char *host, const char *rel, const struct rocmd_deploy_files *l,
           int (*is_stale)(const char *, const char *, const struct rocmd_deploy_files *),
           cJSON *stale, int depth)
{
	char dir[PATH_MAX], path[PATH_MAX], sub[PATH_MAX];
	struct dirent *e;
	size_t n = 0;
	DIR *dp;

	deploy_fmt(dir, sizeof(dir), "%s%s%s", host, rel[0] ? "/" : "", rel);
	if (depth > 8 || (dp = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		deploy_fmt(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
		deploy_fmt(path, sizeof(path), "%s/%s", dir, e->d_name);
#ifdef _WIN32
		if (stat(path, &st) != 0)
#else
		if (lstat(path, &st) != 0)
#endif
			continue;
		if (S_ISDIR(st.st_mode)) {
			n += stale_walk(host, sub, l, is_stale, stale, depth + 1);
			continue;
		}
		if (!is_stale(path, sub, l))
			continue;
		if (n++ < STALE_SHOWN)
			cJSON_AddItemToArray(stale, cJSON_CreateString(sub));
	}
	closedir(dp);
	return n;
}

/* 5. Files in the library folder from neither the package in place nor the
 * vendor: beside the deployed package's, or (after an SDK update replaced
 * rocmd's files) those of rocmd's that the update left. */
static void
check_stale(struct doctor *d, struct doctor_target *dt)
{
	struct rocmd_deploy_files cur = {0};
	int left = dt->originals_changed;
	char why[512];
	cJSON *stale, *ev;
	size_t n;

	if (!dt->row.found || (!left && dt->row.live_id == 0))
		return;
	if (!left && rocmd_deploy_current_load(d->ds->srv->cfg->state_dir, dt->t.name, &cur, why,
	                                       sizeof(why)) < 0)
		return;
	if (left && dt->ours.n == 0)
		return;
	if (left)
		qsort(dt->ours.files, dt->ours.n, sizeof(*dt->ours.files), deploy_file_cmp);
	else
		qsort(cur.files, cur.n, sizeof(*cur.files), deploy_file_cmp);
	stale = cJSON_CreateArray();
	n = stale_walk(dt->t.host_lib, "", left ? &dt->ours : &cur,
	               left ? left_by_rocmd : not_listed, stale, 0);
	rocmd_deploy_files_free(&cur);
	if (n == 0) {
		cJSON_Delete(stale);
		return;
	}
	if (left) {
		char fix[1536];
		ev = doctor_add(
		    d, "stale-files", DOCTOR_WARNING, dt, doctor_matching_fix(dt, 1),
		    doctor_matching_text(dt, 1, fix, sizeof(fix),
		                         "remove them (rocmd put them there; the vendor's "
		                         "files do not need them)"),
		    "%zu file%s in the library folder %s %s rocmd's, left by the SDK "
		    "update that replaced the rest with the vendor's files: the "
		    "vendor's library now holds files of a package",
		    n, n == 1 ? "" : "s", dt->t.sys_lib, n == 1 ? "is" : "are");
	} else {
		ev = doctor_add(d, "stale-files", DOCTOR_WARNING, dt,
		                dt->row.live_pkg > 0 ? DOCTOR_FIX_LIVE : DOCTOR_FIX_NONE,
		                "deploy the package in place again: the whole folder is replaced by "
		                "its files (--fix does), or remove them",
		                "%zu file%s in the library folder %s %s from neither the deployed "
		                "package #%lld (%s) nor the vendor's originals: rocBLAS may load "
		                "them (a library file of another package or SDK) in place of the "
		                "package's",
		                n, n == 1 ? "" : "s", dt->t.sys_lib, n == 1 ? "is" : "are",
		                (long long)dt->row.live_pkg, dt->pkg_name);
	}
	cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
	cJSON_AddItemToObject(ev, "files", stale);
	cJSON_AddNumberToObject(ev, "count", (double)n);
}

/* 6 and 9: what is in place against what rocmd deployed there (lib verify's
 * comparison with current.json): a rocBLAS binary that is not the one
 * deployed with the library (a half-replaced install), an application's
 * copy changed since. */
static void
check_deployed(struct doctor *d, struct doctor_target *dt)
{
	struct rocmd_deploy_target e;
	struct rocmd_deploy_verify_report rep;
	char why[1024];
	cJSON *ev;
	int app = strcmp(dt->t.kind, "app") == 0;

	if (!dt->row.found || dt->row.live_id == 0 || dt->originals_changed)
		return;
	deploy_target_engine(&dt->t, &e);
	if (rocmd_deploy_verify(d->ds->srv->cfg->state_dir, &e, NULL, NULL, NULL, &rep, why,
	                        sizeof(why)) != ROCMD_ECORRUPT)
		return;
	if (rep.pair_ok == 0 && rep.files_bad == 1) {
		ev = doctor_add(d, "half-replaced", DOCTOR_ERROR, dt,
		                dt->row.live_pkg > 0 ? DOCTOR_FIX_LIVE : DOCTOR_FIX_NONE,
		                "deploy the package in place again, binary and library together "
		                "(--fix does)",
		                "the rocBLAS binary %s is not the one deployed with the library at %s "
		                "(package #%lld, %s): binary and library come from different "
		                "packages, and rocBLAS may fail to load its kernels or crash",
		                dt->t.sys_bin, dt->t.sys_lib, (long long)dt->row.live_pkg,
		                dt->pkg_name);
		cJSON_AddStringToObject(ev, "binary", dt->t.sys_bin);
		cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
		evidence_package(ev, dt);
		return;
	}
	if (!app)
		return;
	ev = doctor_add(d, "app-copy", DOCTOR_WARNING, dt,
	                dt->row.live_pkg > 0 ? DOCTOR_FIX_LIVE : DOCTOR_FIX_NONE,
	                "deploy the package there again (--fix does); an application update that "
	                "brought its own rocBLAS replaces it again",
	                "the application's rocBLAS copy at %s differs from package #%lld (%s) that "
	                "rocmd deployed there (%llu of %llu files; first %s)",
	                dt->t.sys_lib, (long long)dt->row.live_pkg, dt->pkg_name,
	                (unsigned long long)rep.files_bad, (unsigned long long)rep.files_checked,
	                rep.first_bad);
	cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
	cJSON_AddStringToObject(ev, "first_difference", rep.first_bad);
	evidence_package(ev, dt);
}

/* 9: an application's own rocBLAS copy while an SDK has a package deployed:
 * the application does not use it. */
static void
check_app_undeployed(struct doctor *d, struct doctor_target *dt)
{
	const struct doctor_target *sdk = NULL;
	char fix[1536];
	cJSON *ev;

	if (strcmp(dt->t.kind, "app") != 0 || (dt->row.found && dt->row.live_id != 0) ||
	    !deploy_exists(dt->t.host_lib))
		return;
	for (size_t i = 0; i < d->ntg && sdk == NULL; i++)
		if (strcmp(d->tg[i].t.kind, "sdk") == 0 && d->tg[i].row.live_id != 0 &&
		    !d->tg[i].originals_changed)
			sdk = &d->tg[i];
	if (sdk == NULL)
		return;
	ev = doctor_add(
	    d, "app-copy", DOCTOR_WARNING, dt, doctor_matching_fix(dt, 0),
	    doctor_matching_text(dt, 0, fix, sizeof(fix),
	                         "import a package for the application's SDK and deploy it "
	                         "there"),
	    "the application's own rocBLAS at %s is not package #%lld (%s) that rocmd "
	    "deployed to %s: the application loads its copy, not the package",
	    dt->t.sys_lib, (long long)sdk->row.live_pkg, sdk->pkg_name, sdk->t.name);
	cJSON_AddStringToObject(ev, "library", dt->t.sys_lib);
	cJSON_AddStringToObject(ev, "deployed_to", sdk->t.name);
	cJSON_AddNumberToObject(ev, "deployed_package", (double)sdk->row.live_pkg);
}

const struct doctor_check doctor_checks_targets[] = {
    {"package-sdk", 0, check_package_sdk, NULL},
    {"sdk-upgraded", 0, check_sdk_upgraded, NULL},
    {"gpu-arch", 1, check_gpu_arch, NULL},
    {"backup", 1, check_backup, NULL},
    {"stale-files", 1, check_stale, NULL},
    {"half-replaced", 1, check_deployed, NULL},
    {"app-copy", 0, check_app_undeployed, NULL},
    {"hip-runtime", 0, doctor_check_runtime, NULL},
#ifndef _WIN32
    {"old-library-mapped", 1, doctor_check_old_mapped, NULL},
#endif
    {NULL, 0, NULL, NULL},
};
