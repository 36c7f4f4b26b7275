/*
 * Deploy's targets (see deploy-service.h): a "target" param resolved to the
 * SDK's, the application's or the overlay's folders (system paths from
 * discovery or the configuration, host paths under --root), what the
 * database says each holds, this machine's GPUs, and the package that
 * matches a target. Loop thread only: everything here reads the database.
 */
#include "deploy-jobs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg-service.h"
#include "common/fs.h"
#include "daemon/sdk/sdk.h"
#include "daemon/sdk/sysroot.h"
#include "daemon/sdk/rocblas-library.h"
#include "db/db-deploy.h"
#include "db/db-sdk.h"
#include "deploy-jobs-os.h"

/* ---- small helpers ---- */

void
deploy_fmt(char *dst, size_t n, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(dst, n, f, ap);
	va_end(ap);
}

void
deploy_copy(char *dst, size_t n, const char *src)
{
	size_t l = src != NULL ? strlen(src) : 0;

	if (n == 0)
		return;
	if (l >= n)
		l = n - 1;
	if (l > 0)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

int
deploy_exists(const char *host)
{
	struct rocmd_fsinfo fi;

	return host[0] != '\0' && rocmd_fsinfo_get(host, 0, &fi) == 0;
}

void
deploy_sys_dirname(const char *p, char *out, size_t n)
{
	const char *s = strrchr(p, '/'), *b = strrchr(p, '\\');

	if (b != NULL && (s == NULL || b > s))
		s = b;
	deploy_fmt(out, n, "%.*s", s != NULL ? (int)(s - p) : 0, p);
}

static void
sys_join(char *out, size_t n, const char *dir, const char *rest, int windows)
{
	size_t l = strlen(dir);
	int sep = l > 0 && (dir[l - 1] == '/' || dir[l - 1] == '\\');

	deploy_fmt(out, n, "%s%s%s", dir, sep ? "" : windows ? "\\" : "/", rest);
}

static int
map(struct rocmd_deploy_service *ds, const char *sys, char *out, size_t n)
{
	if (sys[0] == '\0') {
		out[0] = '\0';
		return 0;
	}
	return rocmd_sysroot_map(ds->root[0] ? ds->root : NULL, sys, out, n);
}

static int
hex_to_bytes(const char *hex, uint8_t out[ROCMD_SHA256_LEN])
{
	if (hex == NULL || strlen(hex) != 2 * ROCMD_SHA256_LEN)
		return -1;
	for (int i = 0; i < ROCMD_SHA256_LEN; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* ---- targets ---- */

struct sdk_find {
	struct rocmd_deploy_service *ds;
	int64_t id;
	const char *path;
	struct deploy_tgt *t;
	int found;
};

/* Fills an SDK target from discovery's row. */
static int
sdk_row(const struct rocmd_db_sdk *s, void *arg)
{
	struct sdk_find *f = arg;
	struct rocmd_deploy_service *ds = f->ds;
	struct deploy_tgt *t = f->t;
	char dir[PATH_MAX];

	if (strcmp(s->state, "present") != 0)
		return 0;
	f->found = 1;
	t->sdk_id = s->id;
	deploy_copy(t->sdk_path, sizeof(t->sdk_path), s->path);
	deploy_copy(t->sdk_version, sizeof(t->sdk_version), s->version);
	t->windows = rocmd_sysroot_is_windows_path(s->path);
	deploy_copy(t->platform, sizeof(t->platform), t->windows ? "windows" : "linux");
	deploy_copy(t->sys_bin, sizeof(t->sys_bin), s->rocblas_binary);
	deploy_copy(t->sdk_fingerprint, sizeof(t->sdk_fingerprint), s->lib_fingerprint);
	t->sdk_fingerprint_ms = s->lib_first_seen_ms;
	/* What the library in place serves, by the rule lib verify and package
	 * import use (its index's archs with code objects for them). */
	rocmd_rocblas_served_csv(s->lib_archs, s->lib_co_archs, t->sdk_archs, sizeof(t->sdk_archs));
	if (s->lib_path != NULL) {
		deploy_copy(t->sys_lib, sizeof(t->sys_lib), s->lib_path);
	} else if (t->windows) {
		sys_join(t->sys_lib, sizeof(t->sys_lib), s->path, "bin\\rocblas\\library", 1);
	} else if (s->rocblas_binary != NULL) {
		/* AMD's layout: lib/librocblas.so.N beside lib/rocblas/library. */
		deploy_sys_dirname(s->rocblas_binary, dir, sizeof(dir));
		sys_join(t->sys_lib, sizeof(t->sys_lib), dir, "rocblas/library", 0);
	} else {
		sys_join(t->sys_lib, sizeof(t->sys_lib), s->path, "lib/rocblas/library", 0);
	}
	if (s->hip_runtime != NULL)
		map(ds, s->hip_runtime, t->host_hip, sizeof(t->host_hip));
	map(ds, s->path, t->host_root, sizeof(t->host_root));
	{
		/* The last scan's hipBLASLt folder and owner. */
		cJSON *d = s->detail != NULL ? cJSON_Parse(s->detail) : NULL;
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(d, "hipblaslt");
		const cJSON *own = cJSON_GetObjectItemCaseSensitive(d, "owner");
		const cJSON *ltdir = cJSON_GetObjectItemCaseSensitive(lt, "dir");
		const cJSON *by = cJSON_GetObjectItemCaseSensitive(own, "by");
		const cJSON *rec = cJSON_GetObjectItemCaseSensitive(own, "record");
		char info[PATH_MAX];
		if (cJSON_IsString(ltdir) &&
		    map(ds, ltdir->valuestring, t->host_lt, sizeof(t->host_lt)) == 0) {
			deploy_copy(t->sys_lt, sizeof(t->sys_lt), ltdir->valuestring);
			rocmd_rocblas_served_json(lt, t->lt_archs, sizeof(t->lt_archs));
			const cJSON *fp = cJSON_GetObjectItemCaseSensitive(lt, "fingerprint");
			const cJSON *since = cJSON_GetObjectItemCaseSensitive(lt, "since_ms");
			deploy_copy(t->lt_fingerprint, sizeof(t->lt_fingerprint),
			            cJSON_IsString(fp) ? fp->valuestring : "");
			t->lt_since_ms = cJSON_IsNumber(since) ? (int64_t)since->valuedouble : 0;
		} else {
			t->host_lt[0] = '\0';
		}
		deploy_check_owner(t, cJSON_IsString(by) ? by->valuestring : NULL,
		                   cJSON_IsString(rec) ? rec->valuestring : NULL,
		                   map(ds, "/var/lib/dpkg/info", info, sizeof(info)) == 0 ? info
		                                                                          : NULL);
		cJSON_Delete(d);
	}
	return 1;
}

static int
find_sdk(struct rocmd_deploy_service *ds, int64_t id, const char *path, struct deploy_tgt *t)
{
	struct sdk_find f = {ds, id, path, t, 0};
	int rc;

	if (ds->srv->sdk == NULL)
		return ROCMD_ENOTFOUND;
	rc = rocmd_sdk_db_list(rocmd_sdk_db(ds->srv->sdk), id, path, sdk_row, &f);
	if (rc < 0 && rc != ROCMD_ENOTFOUND)
		return rc;
	return f.found ? 0 : ROCMD_ENOTFOUND;
}

/* Host paths of a target whose system paths are set. */
static int
target_host_paths(struct rocmd_deploy_service *ds, struct deploy_tgt *t)
{
	int rc;

	t->user_owned_ok = ds->srv->cfg->deploy_allow_user_owned_targets != 0;
	if ((rc = map(ds, t->sys_lib, t->host_lib, sizeof(t->host_lib))) < 0 ||
	    (rc = map(ds, t->sys_bin, t->host_bin, sizeof(t->host_bin))) < 0)
		return rc;
	/* librocblas.so.0 is usually a symlink to .so.0.N: replace the file
	 * itself, when it lives in the same folder. */
	rocmd_deploy_binary_resolve(t->host_bin, sizeof(t->host_bin));
	if (t->host_bin[0] != '\0' && !deploy_exists(t->host_bin))
		t->host_bin[0] = '\0';
	deploy_copy(t->host_smoke_bin, sizeof(t->host_smoke_bin), t->host_bin);
	return 0;
}

static int
sdk_target(struct rocmd_deploy_service *ds, int64_t sdk_id, const char *path, int overlay,
           struct deploy_tgt *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = find_sdk(ds, sdk_id, path, t)) < 0)
		return rc;
	if ((rc = target_host_paths(ds, t)) < 0)
		return rc;
	/* A copy a package manager owns is served by the overlay (route_why). */
	if (!overlay && t->owner[0] == '\0') {
		deploy_copy(t->kind, sizeof(t->kind), "sdk");
		snprintf(t->name, sizeof(t->name), "sdk-%lld", (long long)t->sdk_id);
		return 0;
	}
	deploy_copy(t->kind, sizeof(t->kind), "overlay");
	snprintf(t->name, sizeof(t->name), "overlay-%lld", (long long)t->sdk_id);
	/* rocmd's own folder: a host path, and its system path is the same. */
	if (rocmd_deploy_native_windows)
		snprintf(t->host_lib, sizeof(t->host_lib), "%s\\overlay\\%lld\\library",
		         ds->srv->cfg->state_dir, (long long)t->sdk_id);
	else
		snprintf(t->host_lib, sizeof(t->host_lib), "%s/overlay/%lld/library",
		         ds->srv->cfg->state_dir, (long long)t->sdk_id);
	deploy_copy(t->sys_lib, sizeof(t->sys_lib), t->host_lib);
	deploy_copy(t->host_root, sizeof(t->host_root), ds->srv->cfg->state_dir);
	if (t->host_lt[0] != '\0')
		snprintf(t->ov_lt, sizeof(t->ov_lt),
		         rocmd_deploy_native_windows ? "%s\\overlay\\%lld\\hipblaslt\\library"
		                                     : "%s/overlay/%lld/hipblaslt/library",
		         ds->srv->cfg->state_dir, (long long)t->sdk_id);
	t->sys_bin[0] = '\0';
	t->host_bin[0] = '\0';
	return 0;
}

int
deploy_sdk_target(struct rocmd_deploy_service *ds, int64_t sdk_id, int overlay,
                  struct deploy_tgt *t)
{
	return sdk_target(ds, sdk_id, NULL, overlay, t);
}

int
rocmd_deploy_svc_apps(struct rocmd_deploy_service *ds,
                      int (*cb)(const struct rocmd_deploy_app_view *a, void *ctx), void *ctx)
{
	const char *s = ds->srv->cfg->deploy_app_targets;
	struct deploy_tgt *t = malloc(sizeof(*t));
	int rc = 0;

	if (t == NULL)
		return ROCMD_ENOMEM;
	while (rc == 0 && s != NULL && *s != '\0') {
		size_t n = strcspn(s, ";"), e = strcspn(s, "=");
		char name[ROCMD_DEPLOY_NAME_MAX + 1];
		snprintf(name, sizeof(name), "%.*s", (int)(e < n ? e : n), s);
		s += n + (s[n] == ';');
		if (e < n && deploy_app_target(ds, name, t) == 0) {
			struct rocmd_deploy_app_view a = {t->name,   t->host_bin,    t->sys_bin,
			                                  t->host_lib, t->sdk_version, t->windows};
			rc = cb(&a, ctx);
		}
	}
	free(t);
	return rc;
}

int
deploy_app_target_each(struct rocmd_deploy_service *ds,
                       void (*fn)(const struct deploy_tgt *t, void *ctx), void *ctx)
{
	const char *s = ds->srv->cfg->deploy_app_targets;
	struct deploy_tgt *t = malloc(sizeof(*t));

	if (t == NULL)
		return ROCMD_ENOMEM;
	while (s != NULL && *s != '\0') {
		size_t n = strcspn(s, ";");
		char name[128];
		const char *eq = memchr(s, '=', n);
		if (eq != NULL) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
			if (deploy_app_target(ds, name, t) == 0)
				fn(t, ctx);
		}
		s += n + (s[n] == ';');
	}
	free(t);
	return 0;
}

/* Finds NAME's entry in deploy.app_targets: "NAME=DIR@SDK;...". */
int
deploy_app_target(struct rocmd_deploy_service *ds, const char *name, struct deploy_tgt *t)
{
	const char *s = ds->srv->cfg->deploy_app_targets;
	char entry[PATH_MAX + 128];

	memset(t, 0, sizeof(*t));
	while (s != NULL && *s != '\0') {
		size_t n = strcspn(s, ";");
		char *eq, *at;
		snprintf(entry, sizeof(entry), "%.*s", (int)n, s);
		s += n + (s[n] == ';');
		eq = strchr(entry, '=');
		at = strrchr(entry, '@');
		if (eq == NULL || at == NULL || at < eq)
			continue;
		*eq = '\0';
		*at = '\0';
		if (strcmp(entry, name) != 0)
			continue;
		deploy_copy(t->kind, sizeof(t->kind), "app");
		snprintf(t->name, sizeof(t->name), "app-%s", name);
		if (rocmd_deploy_name_check(t->name) < 0)
			return ROCMD_EINVAL;
		deploy_copy(t->sdk_version, sizeof(t->sdk_version), at + 1);
		t->windows = rocmd_sysroot_is_windows_path(eq + 1);
		deploy_copy(t->platform, sizeof(t->platform), t->windows ? "windows" : "linux");
		map(ds, eq + 1, t->host_root, sizeof(t->host_root));
		sys_join(t->sys_lib, sizeof(t->sys_lib), eq + 1,
		         t->windows ? "rocblas\\library" : "rocblas/library", t->windows);
		if (t->windows) {
			sys_join(t->sys_bin, sizeof(t->sys_bin), eq + 1, "rocblas.dll", 1);
		} else {
			/* The first librocblas.so.N in DIR, if any. */
			char host[PATH_MAX], cand[PATH_MAX];
			map(ds, eq + 1, host, sizeof(host));
			for (int v = 0; v < 10; v++) {
				snprintf(cand, sizeof(cand), "%s/librocblas.so.%d", host, v);
				if (deploy_exists(cand)) {
					snprintf(t->sys_bin, sizeof(t->sys_bin),
					         "%s/librocblas.so.%d", eq + 1, v);
					break;
				}
			}
		}
		return target_host_paths(ds, t);
	}
	return ROCMD_ENOTFOUND;
}

/*
 * Resolves a "target" param: "sdk-N", "overlay-N", "app-NAME", an SDK's path
 * or id; with OVERLAY an SDK names its overlay. NULL: the only present SDK.
 */
struct only_sdk {
	int64_t id;
	int n;
};

static int
count_sdk(const struct rocmd_db_sdk *s, void *arg)
{
	struct only_sdk *o = arg;

	if (strcmp(s->state, "present") == 0) {
		o->id = s->id;
		o->n++;
	}
	return 0;
}

int
deploy_resolve_target(struct rocmd_deploy_service *ds, const char *spec, int overlay,
                      struct deploy_tgt *t, char *why, size_t whylen)
{
	char *end;
	long long id;
	int rc;

	if (spec == NULL || spec[0] == '\0') {
		struct only_sdk o = {0};
		if (ds->srv->sdk != NULL)
			rocmd_sdk_db_list(rocmd_sdk_db(ds->srv->sdk), 0, NULL, count_sdk, &o);
		if (o.n != 1) {
			snprintf(why, whylen,
			         o.n == 0 ? "no HIP SDK is present: nothing to deploy to"
			                  : "%d HIP SDKs are present: name one with --target "
			                    "(see rocmctl lib status)",
			         o.n);
			return o.n == 0 ? ROCMD_ENOTFOUND : ROCMD_EPARAMS;
		}
		rc = sdk_target(ds, o.id, NULL, overlay, t);
	} else if (strncmp(spec, "app-", 4) == 0) {
		rc = deploy_app_target(ds, spec + 4, t);
		if (rc == ROCMD_ENOTFOUND) {
			snprintf(why, whylen, "no application target '%s' in deploy.app_targets",
			         spec + 4);
			return rc;
		}
	} else if (strncmp(spec, "sdk-", 4) == 0 || strncmp(spec, "overlay-", 8) == 0) {
		int ov = spec[0] == 'o';
		id = strtoll(spec + (ov ? 8 : 4), &end, 10);
		if (*end != '\0' || id <= 0) {
			snprintf(why, whylen, "no target '%s'", spec);
			return ROCMD_EPARAMS;
		}
		rc = sdk_target(ds, id, NULL, ov || overlay, t);
	} else {
		id = strtoll(spec, &end, 10);
		rc = *end == '\0' && id > 0 ? sdk_target(ds, id, NULL, overlay, t)
		                            : sdk_target(ds, 0, spec, overlay, t);
	}
	if (rc == ROCMD_ENOTFOUND)
		snprintf(why, whylen, "no present HIP SDK or target '%s' (see rocmctl lib status)",
		         spec != NULL ? spec : "");
	else if (rc < 0)
		snprintf(why, whylen, "cannot resolve target '%s': %s", spec != NULL ? spec : "",
		         rocmd_strerror(rc));
	return rc;
}

void
deploy_target_engine(const struct deploy_tgt *t, struct rocmd_deploy_target *e)
{
	e->name = t->name;
	e->lib_dir = t->host_lib;
	e->binary = t->host_bin[0] != '\0' ? t->host_bin : NULL;
	e->windows = t->windows;
	e->root = t->host_root[0] != '\0' ? t->host_root : NULL;
	e->user_owned_ok = t->user_owned_ok;
	/* hipBLASLt's folder: an SDK's own, an overlay's own (beside its
	 * library); an application's copy has none rocmd deploys to. */
	e->lt_dir = strcmp(t->kind, "sdk") == 0 && t->host_lt[0] != '\0' ? t->host_lt
	            : t->ov_lt[0] != '\0'                                ? t->ov_lt
	                                                                 : NULL;
}

int
deploy_dir_has_files(const char *dir)
{
	struct rocmd_dir *d = dir != NULL && dir[0] != '\0' ? rocmd_dir_open(dir) : NULL;
	struct rocmd_dirent *de;
	int files = 0;

	while (d != NULL && !files && (de = rocmd_dir_read(d)) != NULL)
		files = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	if (d != NULL)
		rocmd_dir_close(d);
	return files;
}

void
deploy_overlay_env(const char *lib, const char *lt, char *out, size_t n)
{
	/* A variable naming an empty folder would leave that library without
	 * kernels (rocBLAS aborts): a folder holding nothing is not named. */
	int has_lib = deploy_dir_has_files(lib), has_lt = deploy_dir_has_files(lt);

	deploy_fmt(out, n, "%s%s%s%s%s", has_lib ? "ROCBLAS_TENSILE_LIBPATH=" : "",
	           has_lib ? lib : "", has_lib && has_lt ? " " : "",
	           has_lt ? "HIPBLASLT_TENSILE_LIBPATH=" : "", has_lt ? lt : "");
}

int
deploy_target_record(struct rocmd_deploy_service *ds, const struct deploy_tgt *t, int64_t *id)
{
	struct rocmd_db_target row = {
	    .kind = t->kind,
	    .name = t->name,
	    .sdk_id = t->sdk_id,
	    .platform = t->platform,
	    .sdk_version = t->sdk_version[0] ? t->sdk_version : NULL,
	    .binary_path = t->sys_bin[0] ? t->sys_bin : NULL,
	    .library_path = t->sys_lib,
	};

	return rocmd_deploy_db_target_put(ds->db, &row, rocmd_now_ms(), id);
}

/* ---- GPUs and matching ---- */

static int
gpu_row(const struct rocmd_db_gpu *g, void *arg)
{
	struct deploy_gpu_archs *a = arg;

	if (strcmp(g->state, "present") != 0 || a->n >= 8)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->archs[i], g->arch) == 0)
			return 0;
	deploy_copy(a->archs[a->n++], sizeof(a->archs[0]), g->arch);
	return 0;
}

void
deploy_gpu_archs(struct rocmd_deploy_service *ds, struct deploy_gpu_archs *a)
{
	memset(a, 0, sizeof(*a));
	if (ds->srv->sdk != NULL)
		rocmd_sdk_db_gpu_list(rocmd_sdk_db(ds->srv->sdk), gpu_row, a);
}

void
deploy_gpu_list(const struct deploy_gpu_archs *a, char *out, size_t n)
{
	out[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		size_t l = strlen(out);
		deploy_fmt(out + l, n - l, "%s%s", i ? "," : "", a->archs[i]);
	}
}

/* The package for target T and this machine's GPUs: the rules' choice for
 * the first GPU that passes the deploy checks for every GPU's arch. */
int
deploy_match_package(struct rocmd_deploy_service *ds, const struct deploy_tgt *t, int64_t *pkg_id,
                     char *name, size_t namelen, char *arch, size_t archlen, char *why,
                     size_t whylen)
{
	struct rocmd_pkg_candidates l = {0};
	struct deploy_gpu_archs g;
	char all[512], first_refusal[1024] = "";
	int chosen = -1, rc;

	*pkg_id = 0;
	deploy_gpu_archs(ds, &g);
	if (g.n == 0) {
		snprintf(why, whylen,
		         "no AMD GPU is known, so no package can be matched: name one with "
		         "--package ID");
		return ROCMD_ENOTFOUND;
	}
	if (t->sdk_version[0] == '\0') {
		snprintf(why, whylen,
		         "the SDK's version is unknown: name a package with --package ID");
		return ROCMD_ENOTFOUND;
	}
	deploy_gpu_list(&g, all, sizeof(all));
	rc = rocmd_pkg_candidates_load(ds->pdb, &l, why, whylen);
	if (rc < 0)
		goto out;
	/* The rules' choice, less those that fail a deploy check the rules do
	 * not make (the binary's): the next one in their order is taken. */
	for (size_t m = l.n;;) {
		char cwhy[1024];
		rc = rocmd_pkg_match(t->sdk_version, t->platform, g.archs[0], l.c, m,
		                     ds->srv->cfg->store_match_rules, &chosen, NULL, why, whylen);
		if (rc < 0)
			goto out;
		if (chosen < 0 || deploy_check_package(ds, t, l.c[chosen].id, all, 0, 1, NULL, 0, NULL, 0,
		                                       cwhy, sizeof(cwhy)) == 0)
			break;
		log_debug("%s: not matched: %s", t->name, cwhy);
		if (first_refusal[0] == '\0')
			deploy_copy(first_refusal, sizeof(first_refusal), cwhy);
		{
			struct rocmd_pkg_candidate tmp = l.c[chosen];
			l.c[chosen] = l.c[m - 1];
			l.c[m - 1] = tmp;
		}
		m--;
	}
	if (chosen < 0 && first_refusal[0] != '\0') {
		deploy_fmt(why, whylen,
		           "no stored package fits SDK %s and every GPU (%s): the best "
		           "match was %s",
		           t->sdk_version, all, first_refusal);
		rc = ROCMD_ENOTFOUND;
		goto out;
	}
	if (chosen < 0) {
		snprintf(
		    why, whylen,
		    "no stored package matches SDK %s (%s) for %s (see rocmctl pkg match --sdk "
		    "%s --arch %s)",
		    t->sdk_version, t->platform, g.archs[0], t->sdk_version, g.archs[0]);
		rc = ROCMD_ENOTFOUND;
		goto out;
	}
	rc = 0;
	*pkg_id = l.c[chosen].id;
	deploy_copy(name, namelen, l.c[chosen].name);
	deploy_copy(arch, archlen, g.archs[0]);
out:
	rocmd_pkg_candidates_free(&l);
	return rc;
}

/* ---- reading what a target holds ---- */

static int
target_row_cb(const struct rocmd_db_target *t, void *arg)
{
	struct deploy_row *r = arg;

	r->found = 1;
	r->id = t->id;
	r->live_id = t->live_id;
	r->live_pkg = t->live_package_id;
	r->live_finished_ms = t->live_finished_ms;
	deploy_copy(r->live_fp, sizeof(r->live_fp), t->live_fingerprint);
	r->has_backup = t->backup_path != NULL;
	return 0;
}

void
deploy_target_lookup(struct rocmd_deploy_service *ds, const char *name, struct deploy_row *r)
{
	memset(r, 0, sizeof(*r));
	rocmd_deploy_db_targets(ds->db, 0, name, target_row_cb, r);
}

static int
same_fp(const struct rocmd_db_deployment *d, void *arg)
{
	return strcmp(d->state, "failed") != 0 && d->fingerprint != NULL &&
	       strcmp(d->fingerprint, arg) == 0;
}

/* The originals in use at target NAME: the backup's, or, while a new
 * generation was cut short after the earlier one was renamed aside (no
 * complete backup/), the newest backup.<N>'s, so that the next deploy is told
 * the same and makes that generation again. */
static int
originals_load(struct rocmd_deploy_service *ds, const char *name, struct rocmd_deploy_files *out)
{
	struct rocmd_deploy_generation g[ROCMD_DEPLOY_GENERATIONS_MAX];
	const char *state = ds->srv->cfg->state_dir;
	char why[256];
	size_t n = 0;
	int rc = rocmd_deploy_backup_load(state, name, out, why, sizeof(why));

	if (rc != ROCMD_ENOTFOUND)
		return rc;
	if (rocmd_deploy_generations(state, name, g, ROCMD_DEPLOY_GENERATIONS_MAX, &n) < 0 ||
	    n == 0)
		return ROCMD_ENOTFOUND;
	return rocmd_deploy_backup_load_gen(state, name, g[n - 1].gen, out, why, sizeof(why));
}

/*
 * An SDK update replaced what is at SDK target T since rocmd last wrote
 * there: discovery's fingerprint of its library is neither that of a
 * deployment rocmd put in place there (the live one, or an earlier one that
 * discovery has not re-read since rocmd's last write) nor that of the
 * backed-up originals (an update that put back the very same files is no
 * news). The files in place are then the vendor's new originals (I1: they
 * must be backed up before anything replaces them, and never rolled back to
 * older ones).
 */
int
deploy_originals_changed(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                         const struct deploy_row *row)
{
	struct rocmd_deploy_files b;
	char fp[72];

	if (strcmp(t->kind, "sdk") != 0 || !row->has_backup || t->sdk_fingerprint[0] == '\0')
		return 0;
	/* Discovery has not read the library since rocmd's last deploy there:
	 * what it holds is from before that write, no news. */
	if (row->live_id != 0 && t->sdk_fingerprint_ms <= row->live_finished_ms)
		return 0;
	if (rocmd_deploy_db_deployments(ds->db, row->id, 0, same_fp, (void *)t->sdk_fingerprint) >
	    0)
		return 0;
	if (originals_load(ds, t->name, &b) < 0)
		return 0;
	deploy_files_fingerprint(b.files, b.n, 0, fp);
	rocmd_deploy_files_free(&b);
	return fp[0] != '\0' && strcmp(fp, t->sdk_fingerprint) != 0;
}

/*
 * The same for hipBLASLt's folder of SDK target T: discovery's reading of it,
 * made after rocmd last wrote the target (its live deployment finished, or
 * current.json was written: a rollback), is neither what rocmd put there
 * (current.json's hipBLASLt files) nor the backed-up originals'. A backup
 * without hipBLASLt's originals gets them from the folder as it is
 * (deploy_backup_add_lt): no new generation for that.
 */
int
deploy_lt_originals_changed(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                            const struct deploy_row *row)
{
	struct rocmd_deploy_files b, cur;
	struct rocmd_fsinfo fi;
	char fp[72] = "", path[PATH_MAX], why[256];
	int64_t last = row->live_id != 0 ? row->live_finished_ms : 0;
	const char *state = ds->srv->cfg->state_dir;

	if (strcmp(t->kind, "sdk") != 0 || !row->has_backup || t->lt_fingerprint[0] == '\0')
		return 0;
	snprintf(path, sizeof(path), "%s/deploy/%s/current.json", state, t->name);
	if (rocmd_fsinfo_get(path, 0, &fi) == 0 && fi.mtime_ns / 1000000 > last)
		last = fi.mtime_ns / 1000000;
	if (t->lt_since_ms <= last)
		return 0; /* read before rocmd's last write: what was there then */
	if (originals_load(ds, t->name, &b) < 0)
		return 0;
	if (b.has_lt)
		deploy_files_fingerprint(b.lt_files, b.nlt, 0, fp);
	rocmd_deploy_files_free(&b);
	if (fp[0] == '\0' || strcmp(fp, t->lt_fingerprint) == 0)
		return 0;
	if (rocmd_deploy_current_load(state, t->name, &cur, why, sizeof(why)) == 0) {
		fp[0] = '\0';
		if (cur.has_lt)
			deploy_files_fingerprint(cur.lt_files, cur.nlt, 1, fp);
		rocmd_deploy_files_free(&cur);
		if (strcmp(fp, t->lt_fingerprint) == 0)
			return 0;
	}
	return 1;
}

/* ---- fingerprints ---- */

int
deploy_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_deploy_file *)a)->path,
	              ((const struct rocmd_deploy_file *)b)->path);
}

/* The hash of the regular file a library path names, following symlinks
 * inside the list (as rocblas-library.c does on disk). */
static const struct rocmd_deploy_file *
resolve_file(const struct rocmd_deploy_file *files, size_t n, const char *path, int depth)
{
	struct rocmd_deploy_file key = {.path = path};
	const struct rocmd_deploy_file *f;
	char buf[PATH_MAX], out[PATH_MAX], why[64];

	f = bsearch(&key, files, n, sizeof(*files), deploy_file_cmp);
	if (f == NULL || f->kind == ROCMD_DEPLOY_FILE || depth > 8)
		return f;
	deploy_copy(buf, sizeof(buf), f->link);
	if (rocmd_pkg_link_resolve(f->path, buf, out, sizeof(out), why, sizeof(why)) < 0)
		return NULL;
	return resolve_file(files, n, out, depth + 1);
}

/* SHA-256 over each file's path, a NUL and its SHA-256, in byte order (FILES
 * sorted by path); with FOLLOW a symlink counts as the file it leads to. */
void
deploy_files_fingerprint(const struct rocmd_deploy_file *files, size_t n, int follow, char out[72])
{
	struct rocmd_sha256 *h = NULL;
	uint8_t d[ROCMD_SHA256_LEN];

	out[0] = '\0';
	if (rocmd_sha256_new(&h) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f =
		    follow ? resolve_file(files, n, files[i].path, 0) : &files[i];
		if (f == NULL || f->kind != ROCMD_DEPLOY_FILE || hex_to_bytes(f->sha256, d) < 0)
			continue;
		rocmd_sha256_update(h, files[i].path, strlen(files[i].path) + 1);
		rocmd_sha256_update(h, d, sizeof(d));
	}
	if (rocmd_sha256_final(h, d) == 0)
		rocmd_sha256_hex(d, out);
}
