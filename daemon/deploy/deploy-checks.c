/*
 * The checks a package must pass before it is deployed to a target: one
 * path for the package matching chose and for the one a user names with
 * --package. The platform (a Windows rocblas.dll cannot serve a Linux SDK,
 * nor a librocblas.so a Windows one), the SDK generation the package was
 * built for, its rocBLAS binary (the soname the target's programs load and
 * the HIP runtime it needs, which the SDK must have) and the arch of the
 * machine's GPUs, every one of them. --force skips the checks it names,
 * never the platform. Loop thread (reads the package's row), but for
 * deploy_check_gpus, which lib verify's worker runs on the deployed folder.
 */
#include "deploy-jobs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "common/fs.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/rocblas-library.h"
#include "db/db-pkg.h"

static const struct {
	unsigned bit;
	const char *name;
} check_names[] = {
    {DEPLOY_CHECK_PLATFORM, "platform"},
    {DEPLOY_CHECK_SDK, "sdk"},
    {DEPLOY_CHECK_BINARY, "binary"},
    {DEPLOY_CHECK_ARCH, "arch"},
};

int
deploy_check_parse(const char *name, unsigned *bits, char *why, size_t whylen)
{
	for (size_t i = 0; i < sizeof(check_names) / sizeof(check_names[0]); i++) {
		if (strcmp(name, check_names[i].name) != 0)
			continue;
		if (check_names[i].bit == DEPLOY_CHECK_PLATFORM) {
			snprintf(why, whylen,
			         "the platform check cannot be forced: a rocBLAS built for another "
			         "system cannot run on this one");
			return ROCMD_EPARAMS;
		}
		*bits |= check_names[i].bit;
		return 0;
	}
	snprintf(why, whylen, "unknown check '%s' in param 'force' (sdk, binary or arch)", name);
	return ROCMD_EPARAMS;
}

/* What the checks read of a package. */
struct pkg_facts {
	int found;
	char name[256];
	char platform[8];
	char sdk[32];
	char archs[512];
	char binary[PATH_MAX];
	char soname[128];
	char hip[128];
	int lt_only; /* hipBLASLt's library folder alone (pkg-ident.c) */
};

static int
facts_row(const struct rocmd_db_pkg *p, void *arg)
{
	struct pkg_facts *f = arg;
	cJSON *id = cJSON_Parse(p->identity != NULL ? p->identity : "{}");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(id, "binary");
	const cJSON *so = cJSON_GetObjectItemCaseSensitive(b, "soname");
	const cJSON *hip = cJSON_GetObjectItemCaseSensitive(b, "hip_runtime");

	f->found = 1;
	deploy_copy(f->name, sizeof(f->name), p->name);
	deploy_copy(f->platform, sizeof(f->platform), p->platform);
	deploy_copy(f->sdk, sizeof(f->sdk), p->sdk);
	deploy_copy(f->archs, sizeof(f->archs), p->archs);
	deploy_copy(f->binary, sizeof(f->binary), p->binary);
	deploy_copy(f->soname, sizeof(f->soname), cJSON_IsString(so) ? so->valuestring : "");
	deploy_copy(f->hip, sizeof(f->hip), cJSON_IsString(hip) ? hip->valuestring : "");
	f->lt_only = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(id, "carries_rocblas"));
	cJSON_Delete(id);
	return 0;
}

int
deploy_arch_listed(const char *list, const char *arch)
{
	size_t n = strlen(arch);

	for (const char *p = list; p != NULL && *p != '\0';) {
		size_t l = strcspn(p, ",");
		if (l == n && strncmp(p, arch, n) == 0)
			return 1;
		p += l + (p[l] == ',');
	}
	return 0;
}

void
deploy_arch_minus(const char *all, const char *minus, char *out, size_t n)
{
	if (n > 0)
		out[0] = '\0';
	for (const char *a = all; a != NULL && *a != '\0';) {
		size_t l = strcspn(a, ","), k = strlen(out);
		char one[32];
		deploy_fmt(one, sizeof(one), "%.*s", (int)l, a);
		a += l + (a[l] == ',');
		if (one[0] != '\0' && !deploy_arch_listed(minus, one))
			deploy_fmt(out + k, n - k, "%s%s", k ? "," : "", one);
	}
}

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/'), *b = strrchr(p, '\\');

	if (b != NULL && (s == NULL || b > s))
		s = b;
	return s != NULL ? s + 1 : p;
}

/* Appends "CHECK check: WHAT" to the list of failures. */
static void
fail(char *out, size_t n, unsigned *failed, unsigned bit, const char *what)
{
	size_t l = strlen(out);
	const char *name = "";

	for (size_t i = 0; i < sizeof(check_names) / sizeof(check_names[0]); i++)
		if (check_names[i].bit == (bit == DEPLOY_CHECK_LOSS ? DEPLOY_CHECK_ARCH : bit))
			name = check_names[i].name;
	*failed |= bit;
	deploy_fmt(out + l, n - l, "%s%s check: %s", l ? "; " : "", name, what);
}

/* The binary check: the soname the target's programs load and the HIP
 * runtime it needs, which must be in the SDK's folder. */
static void
check_binary(const struct deploy_tgt *t, const struct pkg_facts *f, char *out, size_t n,
             unsigned *failed)
{
	char what[PATH_MAX + 256], dir[PATH_MAX], hip[PATH_MAX];

	if (f->binary[0] == '\0' || t->sys_bin[0] == '\0' || strcmp(f->platform, t->platform) != 0)
		return; /* the target's own binary stays */
	if (!t->windows && f->soname[0] != '\0' && strcmp(f->soname, base_name(t->sys_bin)) != 0) {
		deploy_fmt(what, sizeof(what),
		           "its binary is %s (SONAME), but the SDK's programs load %s", f->soname,
		           base_name(t->sys_bin));
		fail(out, n, failed, DEPLOY_CHECK_BINARY, what);
		return;
	}
	if (f->hip[0] == '\0' || t->host_hip[0] == '\0')
		return;
	deploy_sys_dirname(t->host_hip, dir, sizeof(dir));
	deploy_fmt(hip, sizeof(hip), "%s/%s", dir, f->hip);
	if (!deploy_exists(hip)) {
		deploy_fmt(
		    what, sizeof(what),
		    "its %s needs the HIP runtime %s, which the SDK does not have (it has %s)",
		    base_name(f->binary), f->hip, base_name(t->host_hip));
		fail(out, n, failed, DEPLOY_CHECK_BINARY, what);
	}
}

/* Whether comma-separated LIST names one of the comma-separated ARCHS. */
static int
serves_one(const char *list, const char *archs)
{
	for (const char *a = archs; a != NULL && *a != '\0';) {
		size_t l = strcspn(a, ",");
		char one[32];
		deploy_fmt(one, sizeof(one), "%.*s", (int)l, a);
		a += l + (a[l] == ',');
		if (one[0] != '\0' && deploy_arch_listed(list, one))
			return 1;
	}
	return 0;
}

/* Whether a merged library keeps arch ONE for target T: the library in
 * place serves it and the binary after the deploy was built for it (read
 * once into BIN, "-" when it cannot be told; why into BWHY). */
static int
mergeable(struct rocmd_deploy_service *ds, const struct deploy_tgt *t, int64_t pkg_id,
          const struct pkg_facts *f, const char *one, char *bin, size_t binlen, char *bname,
          size_t bnamelen, char *bwhy, size_t bwhylen)
{
	if (!deploy_arch_listed(t->sdk_archs, one))
		return 0;
	if (bin[0] == '\0' && deploy_merge_binary_archs(ds, t, pkg_id, f->binary, f->platform, bin,
	                                                binlen, bname, bnamelen, bwhy, bwhylen) < 0)
		deploy_copy(bin, binlen, "-");
	return deploy_arch_listed(bin, one);
}

int
deploy_check_package(struct rocmd_deploy_service *ds, const struct deploy_tgt *t, int64_t pkg_id,
                     const char *arch, unsigned force, int merge, char *merged, size_t mergedlen,
                     char *lost, size_t lostlen, char *why, size_t whylen)
{
	struct pkg_facts f = {0};
	char fails[1536] = "", what[768], gen[16] = "", pgen[16] = "";
	char bin[512] = "", bname[PATH_MAX + 16] = "", bwhy[PATH_MAX + 64] = "";
	unsigned failed = 0;
	int rc, can_merge;

	if (merged != NULL && mergedlen > 0)
		merged[0] = '\0';
	if (lost != NULL && lostlen > 0)
		lost[0] = '\0';
	rc = rocmd_pkg_db_list(ds->pdb, pkg_id, facts_row, &f);
	if (rc < 0 || !f.found) {
		snprintf(why, whylen, "no package #%lld in the store", (long long)pkg_id);
		return ROCMD_ENOTFOUND;
	}
	if (f.lt_only && (strcmp(t->kind, "app") == 0 || t->sys_lt[0] == '\0')) {
		/* An SDK's hipBLASLt folder, or its overlay's own (HIPBLASLT_TENSILE_
		 * LIBPATH); an application's copy gets no hipBLASLt from rocmd. */
		deploy_fmt(
		    why, whylen,
		    "refused: package #%lld (%s) carries only hipBLASLt's library, and %s %s: "
		    "there is nothing to deploy it to",
		    (long long)pkg_id, f.name, t->name,
		    strcmp(t->kind, "sdk") == 0 ? "has no hipBLASLt library folder"
		    : strcmp(t->kind, "overlay") == 0
		        ? "is the overlay of an SDK without a hipBLASLt library"
		        : "is an application's copy, whose hipBLASLt rocmd does not manage");
		return ROCMD_EINVAL;
	}
	if (strcmp(f.platform, "any") != 0 && strcmp(f.platform, t->platform) != 0) {
		deploy_fmt(what, sizeof(what), "it holds a %s rocBLAS binary (%s), and %s is %s",
		           f.platform, f.binary[0] ? f.binary : "?", t->name, t->platform);
		fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_PLATFORM, what);
	}
	if (t->sdk_version[0] == '\0' ||
	    rocmd_sdk_generation(t->sdk_version, gen, sizeof(gen)) < 0) {
		fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_SDK,
		     "the SDK's version is unknown, so no package is known to fit it");
	} else if (f.sdk[0] == '\0' || rocmd_sdk_generation(f.sdk, pgen, sizeof(pgen)) < 0) {
		fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_SDK,
		     "its SDK generation is unknown (import it again with --sdk)");
	} else if (strcmp(gen, pgen) != 0) {
		deploy_fmt(what, sizeof(what),
		           "it is built for SDK %s (generation %s), not %s (%s)", f.sdk, pgen, gen,
		           t->sdk_version);
		fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_SDK, what);
	}
	check_binary(t, &f, fails, sizeof(fails), &failed);
	/* A merge completes a package for some of the machine's GPUs; one that
	 * serves none of them is no package for this machine. */
	can_merge = merge && !f.lt_only && serves_one(f.archs, arch);
	/* Every GPU counts: each arch of the machine the package lacks fails. */
	for (const char *a = arch; a != NULL && *a != '\0';) {
		size_t l = strcspn(a, ",");
		char one[32];
		deploy_fmt(one, sizeof(one), "%.*s", (int)l, a);
		a += l + (a[l] == ',');
		if (one[0] == '\0' || deploy_arch_listed(f.archs, one))
			continue;
		if (f.lt_only) {
			/* rocBLAS stays; the hipBLASLt in place is kept where it
			 * serves the GPU (the deploy's verification asks it). */
			deploy_fmt(what, sizeof(what),
			           "its hipBLASLt library has no kernels for this machine's %s (it "
			           "has %s)",
			           one, f.archs[0] ? f.archs : "none");
			fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_ARCH, what);
			continue;
		}
		if (can_merge && mergeable(ds, t, pkg_id, &f, one, bin, sizeof(bin), bname,
		                           sizeof(bname), bwhy, sizeof(bwhy))) {
			/* The merged library keeps the files in place for it. */
			size_t k = merged != NULL ? strlen(merged) : 0;
			if (merged != NULL)
				deploy_fmt(merged + k, mergedlen - k, "%s%s", k ? "," : "", one);
			continue;
		}
		if (deploy_arch_listed(t->sdk_archs, one) && !merge) {
			/* A loss the user may confirm (DEPLOY_CHECK_LOSS). */
			size_t k = lost != NULL ? strlen(lost) : 0;
			if (lost != NULL)
				deploy_fmt(lost + k, lostlen - k, "%s%s", k ? "," : "", one);
			deploy_fmt(what, sizeof(what),
			           "it has no library for this machine's %s (it has %s), which the "
			           "library in place serves: that GPU would lose its kernels "
			           "(--no-merge: the whole folder is replaced)",
			           one, f.archs[0] ? f.archs : "none");
			fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_LOSS, what);
			continue;
		}
		if (deploy_arch_listed(t->sdk_archs, one) && !can_merge)
			deploy_fmt(what, sizeof(what),
			           "it has no library for this machine's %s (it has %s), which the "
			           "library in place serves: that GPU would lose its kernels",
			           one, f.archs[0] ? f.archs : "none");
		else if (deploy_arch_listed(t->sdk_archs, one) && strcmp(bin, "-") == 0)
			deploy_fmt(what, sizeof(what),
			           "it has no library for this machine's %s (it has %s), which the "
			           "library in place serves: that GPU would lose its kernels, and "
			           "no merged library can keep them: %s",
			           one, f.archs[0] ? f.archs : "none", bwhy);
		else if (deploy_arch_listed(t->sdk_archs, one))
			deploy_fmt(what, sizeof(what),
			           "it has no library for this machine's %s (it has %s), which the "
			           "library in place serves: that GPU would lose its kernels, and "
			           "no merged library can keep them: %s is not built for %s (it is "
			           "for %s)",
			           one, f.archs[0] ? f.archs : "none", bname, one, bin);
		else
			deploy_fmt(what, sizeof(what),
			           "it has no library for this machine's %s (it has %s)", one,
			           f.archs[0] ? f.archs : "none");
		fail(fails, sizeof(fails), &failed, DEPLOY_CHECK_ARCH, what);
	}
	/* Forcing the arch check waives a confirmed loss too. */
	if (force & DEPLOY_CHECK_ARCH)
		force |= DEPLOY_CHECK_LOSS;
	failed &= ~force;
	if (failed == 0)
		return 0;
	if (failed & DEPLOY_CHECK_PLATFORM)
		deploy_fmt(why, whylen,
		           "refused: package #%lld (%s) does not fit %s: %s; the platform check "
		           "cannot be forced",
		           (long long)pkg_id, f.name, t->name, fails);
	else if (failed == DEPLOY_CHECK_LOSS)
		deploy_fmt(why, whylen,
		           "refused: package #%lld (%s) does not fit %s: %s; -y confirms the loss "
		           "(rocmctl asks first on a terminal), or deploy without --no-merge for a "
		           "merged library",
		           (long long)pkg_id, f.name, t->name, fails);
	else {
		if (failed & DEPLOY_CHECK_LOSS)
			failed = (failed & ~DEPLOY_CHECK_LOSS) | DEPLOY_CHECK_ARCH;
		deploy_fmt(why, whylen,
		           "refused: package #%lld (%s) does not fit %s: %s; --force %s%s%s%s%s "
		           "deploys it anyway",
		           (long long)pkg_id, f.name, t->name, fails,
		           failed & DEPLOY_CHECK_SDK ? "sdk" : "",
		           (failed & DEPLOY_CHECK_SDK) && (failed & ~DEPLOY_CHECK_SDK) ? "," : "",
		           failed & DEPLOY_CHECK_BINARY ? "binary" : "",
		           (failed & DEPLOY_CHECK_BINARY) && (failed & DEPLOY_CHECK_ARCH) ? ","
		                                                                          : "",
		           failed & DEPLOY_CHECK_ARCH ? "arch" : "");
	}
	return ROCMD_EINVAL;
}

void
deploy_served_now(const char *dir, char *out, size_t n)
{
	struct rocmd_rocblas_lib lib;
	char why[256];

	if (n > 0)
		out[0] = '\0';
	if (rocmd_rocblas_inspect(dir, 0, NULL, &lib, why, sizeof(why)) < 0)
		return;
	for (size_t i = 0; i < lib.narchs; i++) {
		size_t k = strlen(out);
		if (rocmd_rocblas_serves(&lib, lib.archs[i]) && !deploy_arch_listed(out, lib.archs[i]))
			deploy_fmt(out + k, n - k, "%s%s", k ? "," : "", lib.archs[i]);
	}
	rocmd_rocblas_lib_free(&lib);
}

void
deploy_check_gpus(struct deploy_job *j)
{
	struct rocmd_rocblas_lib lib;
	char why[256], lost[256] = "";
	/* An overlay holding hipBLASLt's files alone: rocBLAS is the SDK's own,
	 * which rocmd did not deploy (reported from discovery, never failed). */
	int sdk_own = strcmp(j->t.kind, "overlay") == 0 && !deploy_dir_has_files(j->t.host_lib);

	if (j->gpus.n == 0)
		return;
	if (sdk_own) {
		for (int i = 0; i < j->gpus.n && i < 8; i++)
			j->gpu_covered[i] = deploy_arch_listed(j->t.sdk_archs, j->gpus.archs[i]);
	} else {
		if (rocmd_rocblas_inspect(j->t.host_lib, 0, NULL, &lib, why, sizeof(why)) < 0)
			return;
		for (int i = 0; i < j->gpus.n && i < 8; i++) {
			/* Served as package import says of a package (one rule). */
			j->gpu_covered[i] = rocmd_rocblas_serves(&lib, j->gpus.archs[i]);
			/* A loss the user confirmed is reported, not failed. */
			if (!j->gpu_covered[i] && !deploy_arch_listed(j->lost, j->gpus.archs[i])) {
				size_t l = strlen(lost);
				deploy_fmt(lost + l, sizeof(lost) - l, "%s%s", l ? ", " : "",
				           j->gpus.archs[i]);
			}
		}
		rocmd_rocblas_lib_free(&lib);
	}
	/* hipBLASLt beside it (an overlay's own once it holds files), by the
	 * same rule: reported per arch, never a failure of the deploy (its
	 * files, when rocmd deployed them, are checked by the engine). */
	if (j->t.host_lt[0] != '\0' &&
	    rocmd_rocblas_inspect(deploy_dir_has_files(j->t.ov_lt) ? j->t.ov_lt : j->t.host_lt,
	                          ROCMD_ROCBLAS_ARCH_SUBDIRS, NULL, &lib, why, sizeof(why)) == 0) {
		j->lt_checked = 1;
		for (int i = 0; i < j->gpus.n && i < 8; i++)
			j->lt_covered[i] = rocmd_rocblas_serves(&lib, j->gpus.archs[i]);
		rocmd_rocblas_lib_free(&lib);
	}
	if (lost[0] == '\0' || j->base.rc != 0 || (j->force & DEPLOY_CHECK_ARCH))
		return;
	j->base.rc = ROCMD_ECORRUPT;
	deploy_fmt(j->base.why, sizeof(j->base.why),
	           "the deployed library does not serve this machine's %s: that GPU has no kernels "
	           "(every GPU counts)",
	           lost);
}

/* ---- who owns a target's copy ---- */

/* Whether dpkg list LIST (its text) names SYS_LIB or a file in it. */
static int
list_names(const char *list, const char *sys_lib)
{
	size_t n = strlen(sys_lib);

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		if (len >= n && strncmp(p, sys_lib, n) == 0 && (len == n || p[n] == '/'))
			return 1;
		p = nl != NULL ? nl + 1 : NULL;
	}
	return 0;
}

/* The dpkg package whose list <HOST_INFO>/<package>.list names SYS_LIB, into PKG; 0 when
 * none. The answer is kept until the folder changes (dpkg rewrites it on
 * every install and removal), so lib status does not reread every list. */
static int
dpkg_owner(const char *host_info, const char *sys_lib, char *pkg, size_t pkglen)
{
	static struct {
		char info[PATH_MAX], lib[PATH_MAX], pkg[256];
		int64_t mtime_ns;
	} memo[8];
	static unsigned next;
	struct rocmd_fsinfo st;
	struct rocmd_dir *d;
	struct rocmd_dirent *de;

	pkg[0] = '\0';
	if (rocmd_fsinfo_get(host_info, 1, &st) != 0 || st.type != ROCMD_FS_DIR)
		return 0;
	for (size_t i = 0; i < sizeof(memo) / sizeof(memo[0]); i++)
		if (memo[i].mtime_ns == st.mtime_ns && strcmp(memo[i].info, host_info) == 0 &&
		    strcmp(memo[i].lib, sys_lib) == 0) {
			snprintf(pkg, pkglen, "%s", memo[i].pkg);
			return pkg[0] != '\0';
		}
	d = rocmd_dir_open(host_info);
	while (d != NULL && pkg[0] == '\0' && (de = rocmd_dir_read(d)) != NULL) {
		size_t n = strlen(de->d_name);
		char path[PATH_MAX], *text = NULL;
		size_t len;
		if (n < 6 || strcmp(de->d_name + n - 5, ".list") != 0)
			continue;
		deploy_fmt(path, sizeof(path), "%s/%s", host_info, de->d_name);
		if (rocmd_fs_read_file(path, 64u << 20, &text, &len) == 0 &&
		    list_names(text, sys_lib))
			snprintf(pkg, pkglen, "%.*s", (int)(n - 5), de->d_name);
		free(text);
	}
	if (d != NULL)
		rocmd_dir_close(d);
	deploy_copy(memo[next].info, sizeof(memo[next].info), host_info);
	deploy_copy(memo[next].lib, sizeof(memo[next].lib), sys_lib);
	deploy_copy(memo[next].pkg, sizeof(memo[next].pkg), pkg);
	memo[next].mtime_ns = st.mtime_ns;
	next = (next + 1) % (sizeof(memo) / sizeof(memo[0]));
	return pkg[0] != '\0';
}

void
deploy_check_owner(struct deploy_tgt *t, const char *owner, const char *record,
                   const char *host_dpkg_info)
{
	char pkg[256];

	t->owner[0] = t->route_why[0] = '\0';
	if (owner != NULL && strcmp(owner, "pip") == 0) {
		deploy_copy(t->owner, sizeof(t->owner), "pip");
		deploy_fmt(
		    t->route_why, sizeof(t->route_why),
		    "pip owns these files (%s lists them): served through the overlay, never "
		    "overwritten, so pip uninstall and the next pip install stay right",
		    record != NULL ? record : "its RECORD");
		return;
	}
	if (t->windows || host_dpkg_info == NULL || t->sys_lib[0] == '\0' ||
	    !dpkg_owner(host_dpkg_info, t->sys_lib, pkg, sizeof(pkg)))
		return;
	deploy_copy(t->owner, sizeof(t->owner), "dpkg");
	deploy_fmt(t->route_why, sizeof(t->route_why),
	           "dpkg owns these files (package %s lists %s): served through the overlay, "
	           "never overwritten, so dpkg --verify and the next upgrade stay right",
	           pkg, t->sys_lib);
}
