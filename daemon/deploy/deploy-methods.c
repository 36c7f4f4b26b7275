/*
 * Deploy's methods, targets and background work (see deploy-methods.h).
 *
 * Everything that reads the database happens on the loop thread before a job
 * is queued: the target is resolved (system paths from discovery, mapped to
 * host paths under --root), the package chosen (rocmd_pkg_match for the SDK
 * version, platform and this machine's GPUs, or --package), and its files
 * turned into the engine's file list with store objects as sources. The
 * worker then asks who holds the GPU or the target's files (gpu-users.h; the
 * deploy.gpu_busy policy refuses or defers), runs the engine, and inside the
 * transaction the GEMM smoke test (rocmd-rocblas-smoke in a child process).
 * The after-work callback, on the loop thread again, writes the outcome
 * (db-deploy.h), emits the event and finishes the client's reply. Writes
 * into an SDK are announced to discovery (rocmd_sdk_suppress_begin/end) so
 * they are not mistaken for an SDK update.
 *
 * The engine's label in current.json ("pkg <id> <digest>" or "original") is
 * how start-up recovery brings the database in line with the disk after a
 * crash between the engine's commit and the database write.
 */
#include "deploy-methods.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "common/spawn.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/proto.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "db/db-sdk.h"
#include "deploy.h"
#include "daemon/sdk/fsinfo.h"
#include "gpu-users.h"
#include "deploy-jobs-os.h"
#include "daemon/pkg/pkg-methods.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/sdk.h"
#include "daemon/core/server.h"
#include "daemon/sdk/sysroot.h"

#define TICK_MS 250
#define HISTORY_DEFAULT 50
#define HISTORY_MAX 1000

struct lib_target {
	char name[ROCMD_DEPLOY_NAME_MAX + 1];
	char kind[8]; /* sdk, app, overlay */
	int64_t sdk_id;
	char sdk_path[PATH_MAX];
	char sdk_version[32];
	char platform[8];
	char sys_lib[PATH_MAX], sys_bin[PATH_MAX]; /* system paths; sys_bin "" none */
	char host_lib[PATH_MAX], host_bin[PATH_MAX];
	char host_hip[PATH_MAX];       /* the SDK's HIP runtime, for the smoke test; "" none */
	char host_smoke_bin[PATH_MAX]; /* the rocBLAS binary the smoke test loads */
	char sdk_fingerprint[72];
	int windows;
};

enum job_type { JOB_DEPLOY, JOB_ROLLBACK, JOB_VERIFY };

struct lib_job {
	enum job_type type;
	struct lib_job *next;
	uv_work_t work;
	struct rocmd_pending *pending; /* NULL: nobody waits (auto-sync, auto-rollback) */
	struct lib_target t;
	int64_t target_id;
	char reason[16];
	char to[16]; /* rollback: "original" or "previous" */
	int64_t pkg_id;
	char pkg_name[256];
	char arch[32];
	/* the engine's request */
	struct rocmd_deploy_file *files;
	size_t nfiles;
	struct rocmd_deploy_file *binary;
	struct rocmd_deploy_files loaded; /* rollback to the originals */
	char label[160];
	char fingerprint[72];
	unsigned flags;
	int remove_overlay; /* overlay back to "original": remove rocmd's own folder */
	int smoke_timeout_ms;
	int gpu_busy_defer;
	int suppress[2];
	/* outcome */
	int rc;
	char why[1024];
	int deferred;
	int deferrals; /* times it was deferred; the first is an event */
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report vrep;
	struct rocmd_deploy_backup_info binfo;
	char users[1024];
	char smoke[512];
	int smoke_state; /* 0 not run, 1 ok, 2 skipped, 3 failed */
	int64_t started_ms;
	/* shared with the worker */
	uv_mutex_t lock;
	char step[16];
	uint64_t bytes_done, bytes_total, files_done, files_total;
	int cancel;
};

static struct lib_state {
	struct rocmd_server *srv;
	struct rocmd_deploy_db *db;
	struct rocmd_pkg_db *pdb;
	char root[PATH_MAX];
	char smoke[PATH_MAX];
	char store[PATH_MAX];
	struct lib_job *head, *tail, *running, *deferred;
	uv_timer_t tick, retry;
	int started;
} L;

static void job_start_next(void);

/* ---- small helpers ---- */

/* Formats into a fixed buffer, cutting what does not fit (paths are
 * checked against PATH_MAX where it matters; messages may be cut). */
static void fmt(char *dst, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));

static void
fmt(char *dst, size_t n, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(dst, n, f, ap);
	va_end(ap);
}

static void
copy(char *dst, size_t n, const char *src)
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

static int
exists(const char *host)
{
	struct rocmd_fsinfo fi;

	return host[0] != '\0' && rocmd_fsinfo_get(host, 0, &fi) == 0;
}

/* The folder of system path P (Windows or POSIX separators) into OUT. */
static void
sys_dirname(const char *p, char *out, size_t n)
{
	const char *s = strrchr(p, '/'), *b = strrchr(p, '\\');

	if (b != NULL && (s == NULL || b > s))
		s = b;
	fmt(out, n, "%.*s", s != NULL ? (int)(s - p) : 0, p);
}

static void
sys_join(char *out, size_t n, const char *dir, const char *rest, int windows)
{
	size_t l = strlen(dir);
	int sep = l > 0 && (dir[l - 1] == '/' || dir[l - 1] == '\\');

	fmt(out, n, "%s%s%s", dir, sep ? "" : windows ? "\\" : "/", rest);
}

static int
map(const char *sys, char *out, size_t n)
{
	if (sys[0] == '\0') {
		out[0] = '\0';
		return 0;
	}
	return rocmd_sysroot_map(L.root[0] ? L.root : NULL, sys, out, n);
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
	int64_t id;
	const char *path;
	struct lib_target *t;
	int found;
};

/* Fills an SDK target from discovery's row. */
static int
sdk_row(const struct rocmd_db_sdk *s, void *arg)
{
	struct sdk_find *f = arg;
	struct lib_target *t = f->t;
	char dir[PATH_MAX];

	if (strcmp(s->state, "present") != 0)
		return 0;
	f->found = 1;
	t->sdk_id = s->id;
	copy(t->sdk_path, sizeof(t->sdk_path), s->path);
	copy(t->sdk_version, sizeof(t->sdk_version), s->version);
	t->windows = rocmd_sysroot_is_windows_path(s->path);
	copy(t->platform, sizeof(t->platform), t->windows ? "windows" : "linux");
	copy(t->sys_bin, sizeof(t->sys_bin), s->rocblas_binary);
	copy(t->sdk_fingerprint, sizeof(t->sdk_fingerprint), s->lib_fingerprint);
	if (s->lib_path != NULL) {
		copy(t->sys_lib, sizeof(t->sys_lib), s->lib_path);
	} else if (t->windows) {
		sys_join(t->sys_lib, sizeof(t->sys_lib), s->path, "bin\\rocblas\\library", 1);
	} else if (s->rocblas_binary != NULL) {
		/* AMD's layout: lib/librocblas.so.N beside lib/rocblas/library. */
		sys_dirname(s->rocblas_binary, dir, sizeof(dir));
		sys_join(t->sys_lib, sizeof(t->sys_lib), dir, "rocblas/library", 0);
	} else {
		sys_join(t->sys_lib, sizeof(t->sys_lib), s->path, "lib/rocblas/library", 0);
	}
	if (s->hip_runtime != NULL)
		map(s->hip_runtime, t->host_hip, sizeof(t->host_hip));
	return 1;
}

static int
find_sdk(int64_t id, const char *path, struct lib_target *t)
{
	struct sdk_find f = {id, path, t, 0};
	int rc;

	if (L.srv->sdk == NULL)
		return ROCMD_ENOTFOUND;
	rc = rocmd_sdk_db_list(rocmd_sdk_db(L.srv->sdk), id, path, sdk_row, &f);
	if (rc < 0 && rc != ROCMD_ENOTFOUND)
		return rc;
	return f.found ? 0 : ROCMD_ENOTFOUND;
}

/* Host paths of a target whose system paths are set. */
static int
target_host_paths(struct lib_target *t)
{
	int rc;

	if ((rc = map(t->sys_lib, t->host_lib, sizeof(t->host_lib))) < 0 ||
	    (rc = map(t->sys_bin, t->host_bin, sizeof(t->host_bin))) < 0)
		return rc;
	/* librocblas.so.0 is usually a symlink to .so.0.N: replace the file
	 * itself, when it lives in the same folder. */
	rocmd_lib_binary_resolve(t->host_bin, sizeof(t->host_bin));
	if (t->host_bin[0] != '\0' && !exists(t->host_bin))
		t->host_bin[0] = '\0';
	copy(t->host_smoke_bin, sizeof(t->host_smoke_bin), t->host_bin);
	return 0;
}

static int
sdk_target(int64_t sdk_id, const char *path, int overlay, struct lib_target *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = find_sdk(sdk_id, path, t)) < 0)
		return rc;
	if ((rc = target_host_paths(t)) < 0)
		return rc;
	if (!overlay) {
		copy(t->kind, sizeof(t->kind), "sdk");
		snprintf(t->name, sizeof(t->name), "sdk-%lld", (long long)t->sdk_id);
		return 0;
	}
	copy(t->kind, sizeof(t->kind), "overlay");
	snprintf(t->name, sizeof(t->name), "overlay-%lld", (long long)t->sdk_id);
	/* rocmd's own folder: a host path, and its system path is the same. */
	if (rocmd_lib_native_windows)
		snprintf(t->host_lib, sizeof(t->host_lib), "%s\\overlay\\%lld\\library",
		         L.srv->cfg->state_dir, (long long)t->sdk_id);
	else
		snprintf(t->host_lib, sizeof(t->host_lib), "%s/overlay/%lld/library",
		         L.srv->cfg->state_dir, (long long)t->sdk_id);
	copy(t->sys_lib, sizeof(t->sys_lib), t->host_lib);
	t->sys_bin[0] = '\0';
	t->host_bin[0] = '\0';
	return 0;
}

/* Finds NAME's entry in deploy.app_targets: "NAME=DIR@SDK;...". */
static int
app_target(const char *name, struct lib_target *t)
{
	const char *s = L.srv->cfg->deploy_app_targets;
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
		copy(t->kind, sizeof(t->kind), "app");
		snprintf(t->name, sizeof(t->name), "app-%s", name);
		if (rocmd_deploy_name_check(t->name) < 0)
			return ROCMD_EINVAL;
		copy(t->sdk_version, sizeof(t->sdk_version), at + 1);
		t->windows = rocmd_sysroot_is_windows_path(eq + 1);
		copy(t->platform, sizeof(t->platform), t->windows ? "windows" : "linux");
		sys_join(t->sys_lib, sizeof(t->sys_lib), eq + 1,
		         t->windows ? "rocblas\\library" : "rocblas/library", t->windows);
		if (t->windows) {
			sys_join(t->sys_bin, sizeof(t->sys_bin), eq + 1, "rocblas.dll", 1);
		} else {
			/* The first librocblas.so.N in DIR, if any. */
			char host[PATH_MAX], cand[PATH_MAX];
			map(eq + 1, host, sizeof(host));
			for (int v = 0; v < 10; v++) {
				snprintf(cand, sizeof(cand), "%s/librocblas.so.%d", host, v);
				if (exists(cand)) {
					snprintf(t->sys_bin, sizeof(t->sys_bin),
					         "%s/librocblas.so.%d", eq + 1, v);
					break;
				}
			}
		}
		return target_host_paths(t);
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

static int
resolve_target(const char *spec, int overlay, struct lib_target *t, char *why, size_t whylen)
{
	char *end;
	long long id;
	int rc;

	if (spec == NULL || spec[0] == '\0') {
		struct only_sdk o = {0};
		if (L.srv->sdk != NULL)
			rocmd_sdk_db_list(rocmd_sdk_db(L.srv->sdk), 0, NULL, count_sdk, &o);
		if (o.n != 1) {
			snprintf(why, whylen,
			         o.n == 0 ? "no HIP SDK is present: nothing to deploy to"
			                  : "%d HIP SDKs are present: name one with --target "
			                    "(see rocmctl lib status)",
			         o.n);
			return o.n == 0 ? ROCMD_ENOTFOUND : ROCMD_EPARAMS;
		}
		rc = sdk_target(o.id, NULL, overlay, t);
	} else if (strncmp(spec, "app-", 4) == 0) {
		rc = app_target(spec + 4, t);
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
		rc = sdk_target(id, NULL, ov || overlay, t);
	} else {
		id = strtoll(spec, &end, 10);
		rc = *end == '\0' && id > 0 ? sdk_target(id, NULL, overlay, t)
		                            : sdk_target(0, spec, overlay, t);
	}
	if (rc == ROCMD_ENOTFOUND)
		snprintf(why, whylen, "no present HIP SDK or target '%s' (see rocmctl lib status)",
		         spec != NULL ? spec : "");
	else if (rc < 0)
		snprintf(why, whylen, "cannot resolve target '%s': %s", spec != NULL ? spec : "",
		         rocmd_strerror(rc));
	return rc;
}

static void
target_engine(const struct lib_target *t, struct rocmd_deploy_target *e)
{
	e->name = t->name;
	e->lib_dir = t->host_lib;
	e->binary = t->host_bin[0] != '\0' ? t->host_bin : NULL;
	e->windows = t->windows;
}

static int
target_record(const struct lib_target *t, int64_t *id)
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

	return rocmd_deploy_db_target_put(L.db, &row, rocmd_now_ms(), id);
}

/* ---- GPUs and matching ---- */

struct gpu_archs {
	char archs[8][32];
	int n;
};

static int
gpu_row(const struct rocmd_db_gpu *g, void *arg)
{
	struct gpu_archs *a = arg;

	if (strcmp(g->state, "present") != 0 || a->n >= 8)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->archs[i], g->arch) == 0)
			return 0;
	copy(a->archs[a->n++], sizeof(a->archs[0]), g->arch);
	return 0;
}

static void
gpu_archs(struct gpu_archs *a)
{
	memset(a, 0, sizeof(*a));
	if (L.srv->sdk != NULL)
		rocmd_sdk_db_gpu_list(rocmd_sdk_db(L.srv->sdk), gpu_row, a);
}

/* The package for target T and this machine's GPUs: the first GPU's match,
 * which must not be refused for any other GPU's arch. */
static int
match_package(const struct lib_target *t, int64_t *pkg_id, char *name, size_t namelen, char *arch,
              size_t archlen, char *why, size_t whylen)
{
	struct rocmd_pkg_candidates l = {0};
	struct gpu_archs g;
	int chosen = -1, rc;

	*pkg_id = 0;
	gpu_archs(&g);
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
	rc = rocmd_pkg_candidates_load(L.pdb, &l, why, whylen);
	if (rc < 0)
		goto out;
	rc = rocmd_pkg_match(t->sdk_version, t->platform, g.archs[0], l.c, l.n,
	                     L.srv->cfg->store_match_rules, &chosen, NULL, why, whylen);
	if (rc < 0)
		goto out;
	if (chosen < 0) {
		snprintf(
		    why, whylen,
		    "no stored package matches SDK %s (%s) for %s (see rocmctl pkg match --sdk "
		    "%s --arch %s)",
		    t->sdk_version, t->platform, g.archs[0], t->sdk_version, g.archs[0]);
		rc = ROCMD_ENOTFOUND;
		goto out;
	}
	for (int i = 1; i < g.n; i++) {
		int other = -1;
		rc = rocmd_pkg_match(t->sdk_version, t->platform, g.archs[i], l.c + chosen, 1,
		                     L.srv->cfg->store_match_rules, &other, NULL, why, whylen);
		if (rc == 0 && other < 0)
			log_notice("package #%lld does not serve this machine's %s too",
			           (long long)l.c[chosen].id, g.archs[i]);
	}
	rc = 0;
	*pkg_id = l.c[chosen].id;
	copy(name, namelen, l.c[chosen].name);
	copy(arch, archlen, g.archs[0]);
out:
	rocmd_pkg_candidates_free(&l);
	return rc;
}

/* ---- a package as the engine's file list ---- */

struct pkg_meta {
	char name[256];
	char digest[72];
	char platform[8];
	char libdir[PATH_MAX];
	char binary[PATH_MAX];
	int found;
};

static int
pkg_row(const struct rocmd_db_pkg *p, void *arg)
{
	struct pkg_meta *m = arg;
	cJSON *id = cJSON_Parse(p->identity != NULL ? p->identity : "{}");
	const cJSON *lib = cJSON_GetObjectItemCaseSensitive(id, "library");

	m->found = 1;
	copy(m->name, sizeof(m->name), p->name);
	copy(m->digest, sizeof(m->digest), p->digest);
	copy(m->platform, sizeof(m->platform), p->platform);
	copy(m->libdir, sizeof(m->libdir), cJSON_IsString(lib) ? lib->valuestring : "");
	copy(m->binary, sizeof(m->binary), p->binary);
	cJSON_Delete(id);
	return 0;
}

struct file_build {
	struct lib_job *j;
	const struct pkg_meta *m;
	size_t cap;
	int use_binary;
	int rc;
};

static void
file_free(struct rocmd_deploy_file *f)
{
	free((char *)f->path);
	free((char *)f->link);
	free((char *)f->source);
}

static int
fill_file(struct rocmd_deploy_file *d, const struct rocmd_db_pkg_file *f, const char *rel)
{
	char src[PATH_MAX];

	memset(d, 0, sizeof(*d));
	d->kind = f->kind == 'l' ? ROCMD_DEPLOY_SYMLINK : ROCMD_DEPLOY_FILE;
	d->exec = f->exec;
	d->size = (uint64_t)f->size;
	d->path = strdup(rel);
	if (f->kind == 'l') {
		d->link = strdup(f->link != NULL ? f->link : "");
		return d->path != NULL && d->link != NULL ? 0 : ROCMD_ENOMEM;
	}
	copy(d->sha256, sizeof(d->sha256), f->sha256);
	if (rocmd_store_object_path(L.store, f->sha256, src, sizeof(src)) < 0)
		return ROCMD_EINVAL;
	d->source = strdup(src);
	return d->path != NULL && d->source != NULL ? 0 : ROCMD_ENOMEM;
}

static int
file_one(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct file_build *b = arg;
	struct lib_job *j = b->j;
	size_t n = strlen(b->m->libdir);
	const char *rel;

	if (b->m->binary[0] != '\0' && strcmp(f->path, b->m->binary) == 0) {
		if (!b->use_binary || f->kind != 'f' || j->binary != NULL)
			return 0;
		j->binary = calloc(1, sizeof(*j->binary));
		if (j->binary == NULL)
			return ROCMD_ENOMEM;
		return fill_file(j->binary, f, "binary");
	}
	if (n == 0)
		rel = f->path;
	else if (strncmp(f->path, b->m->libdir, n) == 0 && f->path[n] == '/')
		rel = f->path + n + 1;
	else
		return 0; /* not part of the library folder (a readme, another binary) */
	if (j->nfiles == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 64;
		void *p = realloc(j->files, ncap * sizeof(*j->files));
		if (p == NULL)
			return ROCMD_ENOMEM;
		j->files = p;
		b->cap = ncap;
	}
	if (fill_file(&j->files[j->nfiles], f, rel) < 0) {
		file_free(&j->files[j->nfiles]);
		return ROCMD_ENOMEM;
	}
	j->nfiles++;
	return 0;
}

static int
cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_deploy_file *)a)->path,
	              ((const struct rocmd_deploy_file *)b)->path);
}

/* The hash of the regular file a library path names, following symlinks
 * inside the list (as rocblas-library.c does on disk). */
static const struct rocmd_deploy_file *
resolve_file(const struct lib_job *j, const char *path, int depth)
{
	struct rocmd_deploy_file key = {.path = path};
	const struct rocmd_deploy_file *f;
	char buf[PATH_MAX], out[PATH_MAX], why[64];

	f = bsearch(&key, j->files, j->nfiles, sizeof(*j->files), cmp_file);
	if (f == NULL || f->kind == ROCMD_DEPLOY_FILE || depth > 8)
		return f;
	copy(buf, sizeof(buf), f->link);
	if (rocmd_pkg_link_resolve(f->path, buf, out, sizeof(out), why, sizeof(why)) < 0)
		return NULL;
	return resolve_file(j, out, depth + 1);
}

/* The fingerprint discovery computes for a library folder holding FILES:
 * SHA-256 over each file's path, a NUL and its SHA-256, in byte order. A
 * symlink counts as the file it leads to when J (may be NULL) resolves it. */
static void
files_fingerprint(const struct rocmd_deploy_file *files, size_t n, struct lib_job *j,
                  char out[72])
{
	struct rocmd_sha256 *h = NULL;
	uint8_t d[ROCMD_SHA256_LEN];

	out[0] = '\0';
	if (rocmd_sha256_new(&h) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f =
		    j != NULL ? resolve_file(j, files[i].path, 0) : &files[i];
		if (f == NULL || f->kind != ROCMD_DEPLOY_FILE || hex_to_bytes(f->sha256, d) < 0)
			continue;
		rocmd_sha256_update(h, files[i].path, strlen(files[i].path) + 1);
		rocmd_sha256_update(h, d, sizeof(d));
	}
	if (rocmd_sha256_final(h, d) == 0)
		rocmd_sha256_hex(d, out);
}

static void
job_fingerprint(struct lib_job *j)
{
	files_fingerprint(j->files, j->nfiles, j, j->fingerprint);
}

/* Fills J's file list from package J->pkg_id. */
static int
build_files(struct lib_job *j, char *why, size_t whylen)
{
	struct pkg_meta m = {0};
	struct file_build b = {.j = j, .m = &m};
	int rc;

	rc = rocmd_pkg_db_list(L.pdb, j->pkg_id, pkg_row, &m);
	if (rc < 0 || !m.found) {
		snprintf(why, whylen, "no package #%lld in the store", (long long)j->pkg_id);
		return ROCMD_ENOTFOUND;
	}
	copy(j->pkg_name, sizeof(j->pkg_name), m.name);
	/* A package's binary replaces the target's only on the same platform. */
	b.use_binary = j->t.host_bin[0] != '\0' &&
	               (strcmp(m.platform, "any") == 0 || strcmp(m.platform, j->t.platform) == 0);
	rc = rocmd_pkg_db_files(L.pdb, j->pkg_id, 0, 0, file_one, &b);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld's files: %s", (long long)j->pkg_id,
		         rocmd_strerror(rc));
		return rc;
	}
	if (j->nfiles == 0) {
		snprintf(why, whylen, "package #%lld has no library files", (long long)j->pkg_id);
		return ROCMD_EINVAL;
	}
	qsort(j->files, j->nfiles, sizeof(*j->files), cmp_file);
	job_fingerprint(j);
	snprintf(j->label, sizeof(j->label), "pkg %lld %s", (long long)j->pkg_id, m.digest);
	return 0;
}

/* ---- jobs ---- */

static void
job_free(struct lib_job *j)
{
	for (size_t i = 0; i < j->nfiles; i++)
		file_free(&j->files[i]);
	free(j->files);
	if (j->binary != NULL)
		file_free(j->binary);
	free(j->binary);
	rocmd_deploy_files_free(&j->loaded);
	uv_mutex_destroy(&j->lock);
	free(j);
}

static struct lib_job *
job_new(enum job_type type)
{
	struct lib_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	if (uv_mutex_init(&j->lock) < 0) {
		free(j);
		return NULL;
	}
	j->type = type;
	j->work.data = j;
	j->smoke_timeout_ms = (int)L.srv->cfg->deploy_smoke_timeout_ms;
	j->gpu_busy_defer = strcmp(L.srv->cfg->deploy_gpu_busy, "defer") == 0;
	return j;
}

static int
on_progress(const struct rocmd_deploy_progress *p, void *ctx)
{
	struct lib_job *j = ctx;
	int c;

	uv_mutex_lock(&j->lock);
	copy(j->step, sizeof(j->step), p->step);
	j->bytes_done = p->bytes_done;
	j->bytes_total = p->bytes_total;
	j->files_done = p->files_done;
	j->files_total = p->files_total;
	c = j->cancel;
	uv_mutex_unlock(&j->lock);
	return c;
}

static void
set_step(struct lib_job *j, const char *step)
{
	uv_mutex_lock(&j->lock);
	copy(j->step, sizeof(j->step), step);
	uv_mutex_unlock(&j->lock);
}

/* The GEMM smoke test in a child; 0 unless it ran and failed. */
static int
smoke_run(struct lib_job *j)
{
	char *argv[5];
	char out[512] = "", crash[64];
	int status = 0, rc, n = 0;

	if (j->smoke_timeout_ms <= 0 || L.smoke[0] == '\0') {
		j->smoke_state = 0;
		copy(j->smoke, sizeof(j->smoke), "not run (deploy.smoke_timeout_ms is 0)");
		return 0;
	}
	if ((j->t.windows && !rocmd_lib_native_windows) || j->t.host_hip[0] == '\0' ||
	    j->t.host_smoke_bin[0] == '\0') {
		j->smoke_state = 2;
		copy(j->smoke, sizeof(j->smoke),
		     j->t.windows && !rocmd_lib_native_windows
		         ? "skipped: no GPU/runtime: not run for a Windows target on Linux"
		         : "skipped: no GPU/runtime: no HIP runtime or rocBLAS binary known");
		return 0;
	}
	argv[n++] = L.smoke;
	argv[n++] = j->t.host_smoke_bin;
	argv[n++] = j->t.host_hip;
	if (strcmp(j->t.kind, "overlay") == 0 || j->t.host_bin[0] == '\0')
		argv[n++] = j->t.host_lib;
	argv[n] = NULL;
	rc = rocmd_child_run(argv, NULL, j->smoke_timeout_ms, out, sizeof(out), &status);
	out[strcspn(out, "\n")] = '\0';
	if (rc == ROCMD_ETIMEDOUT) {
		j->smoke_state = 3;
		snprintf(j->smoke, sizeof(j->smoke),
		         "failed: the GEMM smoke test hung (over %d ms)", j->smoke_timeout_ms);
		return -1;
	}
	if (rc < 0) {
		j->smoke_state = 2;
		fmt(j->smoke, sizeof(j->smoke), "skipped: cannot run %s: %s", L.smoke,
		    rocmd_strerror(rc));
		return 0;
	}
	if (rocmd_child_exit_code(status) == 0) {
		j->smoke_state = 1;
		copy(j->smoke, sizeof(j->smoke), out);
		return 0;
	}
	if (rocmd_child_exit_code(status) == 77) {
		j->smoke_state = 2;
		copy(j->smoke, sizeof(j->smoke), out);
		return 0;
	}
	j->smoke_state = 3;
	if (rocmd_child_crashed(status, crash, sizeof(crash)))
		snprintf(j->smoke, sizeof(j->smoke), "failed: the GEMM smoke test died (%s)%s%s",
		         crash, out[0] ? ": " : "", out);
	else
		snprintf(j->smoke, sizeof(j->smoke), "%s", out[0] ? out : "failed: no output");
	return -1;
}

static int
on_check(const struct rocmd_deploy_target *t, void *ctx, char *why, size_t whylen)
{
	struct lib_job *j = ctx;

	set_step(j, "smoke");
	if (smoke_run(j) == 0)
		return 0;
	snprintf(why, whylen, "GEMM smoke test %s", j->smoke);
	return ROCMD_ECORRUPT;
}

/* Refuses (or defers) while anyone holds the GPU or the target's files. */
static int
check_users(struct lib_job *j)
{
	struct rocmd_gpu_users u;
	const char *paths[2];
	size_t n = 0;
	int rc;

	paths[n++] = j->t.host_lib;
	if (j->t.host_bin[0] != '\0')
		paths[n++] = j->t.host_bin;
	rc = rocmd_gpu_users_find(L.root[0] ? L.root : NULL, paths, n, &u);
	if (rc < 0 || u.n == 0)
		return 0;
	rocmd_gpu_users_describe(&u, j->users, sizeof(j->users));
	rocmd_gpu_users_free(&u);
	if (j->gpu_busy_defer) {
		j->deferred = 1;
		return ROCMD_EBUSY;
	}
	fmt(j->why, sizeof(j->why),
	    "refused: processes hold the GPU or %s's rocBLAS: %s (stop them, or set "
	    "deploy.gpu_busy to defer)",
	    j->t.name, j->users);
	return ROCMD_EBUSY;
}

/*
 * After a failed run whose undo failed too, the engine leaves its journal
 * and the target would be refused until the next start (or a journal from
 * such an earlier run refuses this one): recovery (which
 * finishes or undoes from what is on disk, idempotently) is run now, tried
 * again every 2 s as a deploy is (on Windows the undo fails mostly because a
 * file was in use for a moment).
 */
static void
recover_left(struct lib_job *j, const char *state_dir)
{
	for (int tries = 0;; tries++) {
		struct rocmd_deploy_recovery r;
		char why[512];
		int rc = rocmd_deploy_recover(state_dir, j->t.name, &r, why, sizeof(why));
		if (rc == 0) {
			if (r.action != ROCMD_DEPLOY_RECOVER_NONE)
				log_notice("%s: %s", j->t.name, r.what);
			return;
		}
		if (tries >= rocmd_lib_busy_retries) {
			log_warn("%s: recovery failed (%s); it runs again at the next start",
			         j->t.name, why);
			return;
		}
		log_notice("%s: recovery failed (%s); trying again in 2 s", j->t.name, why);
		uv_sleep(2000);
	}
}

/* Runs the engine; on Windows tries again while the target was in use (see
 * rocmd_lib_busy_retries), every 2 s, unless the job is cancelled. */
static int
run_engine(struct lib_job *j, const struct rocmd_deploy_request *req)
{
	int rc, cancel;

	for (int tries = 0;; tries++) {
		memset(&j->res, 0, sizeof(j->res));
		rc = rocmd_deploy_run(req, &j->res, j->why, sizeof(j->why));
		if (rc < 0 && !j->res.committed)
			recover_left(j, req->state_dir); /* nothing to do without a journal */
		if ((rc != ROCMD_EBUSY && rc != -EACCES) || j->res.committed ||
		    tries >= rocmd_lib_busy_retries)
			return rc;
		uv_mutex_lock(&j->lock);
		cancel = j->cancel;
		uv_mutex_unlock(&j->lock);
		if (cancel)
			return rc;
		log_notice("%s: %s; trying again in 2 s (%d of %d)", j->t.name, j->why, tries + 1,
		           rocmd_lib_busy_retries);
		uv_sleep(2000);
	}
}

static void
deploy_work(uv_work_t *w)
{
	struct lib_job *j = w->data;
	struct rocmd_deploy_request req = {0};

	j->deferred = 0;
	j->users[0] = '\0';
	set_step(j, "plan");
	if (!(j->type == JOB_VERIFY) && (j->rc = check_users(j)) < 0)
		return;
	if (j->remove_overlay) {
		/* rocmd's own overlay folder holds nothing of the user's. */
		{
			req.state_dir = L.srv->cfg->state_dir;
			target_engine(&j->t, &req.target);
			/* An empty library: rocBLAS then uses the SDK's own again. */
			req.files = NULL;
			req.nfiles = 0;
			req.label = "original";
			req.flags = ROCMD_DEPLOY_NO_BACKUP | ROCMD_DEPLOY_CREATE;
			req.progress = on_progress;
			req.ctx = j;
			j->rc = rocmd_deploy_run(&req, &j->res, j->why, sizeof(j->why));
		}
		return;
	}
	req.state_dir = L.srv->cfg->state_dir;
	target_engine(&j->t, &req.target);
	req.progress = on_progress;
	req.ctx = j;
	req.arch = j->arch[0] ? j->arch : NULL;
	if (strcmp(j->t.kind, "overlay") == 0 && j->type == JOB_DEPLOY) {
		/* rocmd's own folder: its parent is made here; the engine creates
		 * the library folder itself. */
		char parent[PATH_MAX];
		sys_dirname(j->t.host_lib, parent, sizeof(parent));
		if ((j->rc = rocmd_paths_mkdir_p(parent, 0755)) < 0) {
			fmt(j->why, sizeof(j->why), "cannot create %s: %s", parent,
			    rocmd_strerror(j->rc));
			return;
		}
	}
	if (j->type == JOB_VERIFY) {
		j->rc = rocmd_deploy_verify(req.state_dir, &req.target, req.arch, on_progress, j,
		                            &j->vrep, j->why, sizeof(j->why));
		if (j->rc == 0 && smoke_run(j) < 0) {
			j->rc = ROCMD_ECORRUPT;
			snprintf(j->why, sizeof(j->why), "GEMM smoke test %s", j->smoke);
		}
		return;
	}
	if (j->type == JOB_ROLLBACK && strcmp(j->to, "original") == 0) {
		j->rc = rocmd_deploy_backup_load(req.state_dir, j->t.name, &j->loaded, j->why,
		                                 sizeof(j->why));
		if (j->rc < 0)
			return;
		req.files = j->loaded.files;
		req.nfiles = j->loaded.n;
		req.binary = j->t.host_bin[0] != '\0' ? j->loaded.binary : NULL;
		req.label = "original";
		req.arch = NULL; /* the vendor's library may well lack the arch */
		req.flags = 0;
	} else {
		req.files = j->files;
		req.nfiles = j->nfiles;
		req.binary = j->binary;
		req.label = j->label;
		req.check = on_check;
		req.flags = j->flags;
	}
	j->rc = run_engine(j, &req);
	if (j->rc == -EACCES && strcmp(j->t.kind, "overlay") != 0) {
		char dir[PATH_MAX];
		sys_dirname(j->t.host_bin[0] ? j->t.host_bin : j->t.host_lib, dir, sizeof(dir));
		rocmd_lib_denied_hint(dir, j->why, sizeof(j->why));
	}
	if (j->rc < 0 && j->res.committed) {
		/* In place and verified; only the cleanup after the commit failed.
		 * Recovery finishes it now (or at the next start): the target holds
		 * the new content either way, and the database must say so. */
		log_warn("%s: deployed, but the cleanup failed (%s); finishing it", j->t.name,
		         j->why);
		recover_left(j, req.state_dir);
		j->rc = 0;
		j->why[0] = '\0';
	}
	if (j->rc == 0 && strcmp(j->t.kind, "overlay") != 0) {
		char why[256];
		if (rocmd_deploy_backup(req.state_dir, &req.target, 0, &j->binfo, why,
		                        sizeof(why)) < 0)
			memset(&j->binfo, 0, sizeof(j->binfo));
	}
}

static cJSON *
result_json(const struct lib_job *j)
{
	cJSON *r = cJSON_CreateObject(), *t, *s;

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
	if (j->pkg_id > 0) {
		cJSON_AddNumberToObject(r, "package", (double)j->pkg_id);
		cJSON_AddStringToObject(r, "package_name", j->pkg_name);
	}
	if (j->arch[0])
		cJSON_AddStringToObject(r, "arch", j->arch);
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
		char line[PATH_MAX + 64];
		snprintf(line, sizeof(line), "ROCBLAS_TENSILE_LIBPATH=%s", j->t.host_lib);
		cJSON_AddStringToObject(r, "environment", line);
	}
	if (j->users[0])
		cJSON_AddStringToObject(r, "gpu_users", j->users);
	return r;
}

static void queue_job(struct lib_job *j);

/* ---- reading what a target holds ---- */

struct target_row {
	int found;
	int64_t id, live_id, live_pkg;
	char live_fp[72];
	int has_backup;
};

static int
target_row_cb(const struct rocmd_db_target *t, void *arg)
{
	struct target_row *r = arg;

	r->found = 1;
	r->id = t->id;
	r->live_id = t->live_id;
	r->live_pkg = t->live_package_id;
	copy(r->live_fp, sizeof(r->live_fp), t->live_fingerprint);
	r->has_backup = t->backup_path != NULL;
	return 0;
}

static void
target_lookup(const char *name, struct target_row *r)
{
	memset(r, 0, sizeof(*r));
	rocmd_deploy_db_targets(L.db, 0, name, target_row_cb, r);
}

static int
same_fp(const struct rocmd_db_deployment *d, void *arg)
{
	return strcmp(d->state, "failed") != 0 && d->fingerprint != NULL &&
	       strcmp(d->fingerprint, arg) == 0;
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
static int
originals_changed(const struct lib_target *t, const struct target_row *row)
{
	struct rocmd_deploy_files b;
	char fp[72], why[256];

	if (strcmp(t->kind, "sdk") != 0 || !row->has_backup || t->sdk_fingerprint[0] == '\0')
		return 0;
	if (rocmd_deploy_db_deployments(L.db, row->id, 0, same_fp, (void *)t->sdk_fingerprint) > 0)
		return 0;
	if (rocmd_deploy_backup_load(L.srv->cfg->state_dir, t->name, &b, why, sizeof(why)) < 0)
		return 0;
	files_fingerprint(b.files, b.n, NULL, fp);
	rocmd_deploy_files_free(&b);
	return fp[0] != '\0' && strcmp(fp, t->sdk_fingerprint) != 0;
}

static void
queue_auto_rollback(const struct lib_target *t, int64_t target_id, const char *why)
{
	struct lib_job *j;
	struct target_row row;

	target_lookup(t->name, &row);
	if (originals_changed(t, &row)) {
		/* Not ours any more: putting back the older originals would break
		 * the updated SDK. */
		rocmd_server_event(L.srv, "lib.drift", NULL,
		                   "%s holds an SDK update's new library, not what rocmd deployed "
		                   "(%s); left as it is, no rollback to older originals",
		                   t->name, why);
		return;
	}
	j = job_new(JOB_ROLLBACK);
	if (j == NULL)
		return;
	j->t = *t;
	j->target_id = target_id;
	copy(j->reason, sizeof(j->reason), "verify");
	copy(j->to, sizeof(j->to), "original");
	log_notice("%s: verification failed (%s); rolling back to the originals", t->name, why);
	queue_job(j);
}

static void
record_deploy(struct lib_job *j, cJSON *result)
{
	struct rocmd_db_deployment d = {0};
	char *detail = cJSON_PrintUnformatted(result);
	int64_t dep_id = 0;
	int rc;

	d.target_id = j->target_id;
	d.package_id = j->pkg_id;
	d.reason = j->reason;
	d.fingerprint = j->fingerprint[0] ? j->fingerprint : NULL;
	d.started_ms = j->started_ms;
	d.finished_ms = rocmd_now_ms();
	d.detail = detail;
	if (j->rc == 0) {
		d.state = "live";
		rc = rocmd_deploy_db_record(
		    L.db, &d, j->type == JOB_ROLLBACK ? "rolled_back" : "superseded",
		    j->type == JOB_ROLLBACK ? "rollback" : "deploy", "ok",
		    j->type == JOB_ROLLBACK ? "rolled back to the previous package" : "deployed",
		    &dep_id);
	} else {
		d.state = "failed";
		rc = rocmd_deploy_db_record(
		    L.db, &d, NULL, j->type == JOB_ROLLBACK ? "rollback" : "deploy",
		    j->rc == ROCMD_EBUSY ? "refused" : "failed", j->why, &dep_id);
	}
	if (rc < 0)
		log_err("%s: cannot record the deployment: %s", j->t.name,
		        rocmd_deploy_db_errmsg(L.db));
	cJSON_free(detail);
}

static void
record_backup(struct lib_job *j)
{
	char path[PATH_MAX];
	int rc;

	if (!j->binfo.exists)
		return;
	snprintf(path, sizeof(path),
	         rocmd_lib_native_windows ? "%s\\deploy\\%s\\backup" : "%s/deploy/%s/backup",
	         L.srv->cfg->state_dir, j->t.name);
	if (j->res.backup_retired > 0) {
		char msg[160];
		rc = rocmd_deploy_db_backup_renew(L.db, j->target_id, path, j->binfo.manifest,
		                                  (int64_t)j->binfo.files, (int64_t)j->binfo.bytes,
		                                  rocmd_now_ms());
		snprintf(msg, sizeof(msg),
		         "new originals (an SDK update) backed up; the earlier ones kept as "
		         "backup.%d",
		         j->res.backup_retired);
		struct rocmd_db_history h = {.target_id = j->target_id,
		                             .time_ms = rocmd_now_ms(),
		                             .action = "backup",
		                             .outcome = rc == 0 ? "ok" : "failed",
		                             .message = msg};
		rocmd_deploy_db_history_add(L.db, &h, NULL);
		rocmd_server_event(L.srv, "lib.backup_renewed", NULL, "%s: %s", j->t.name, msg);
		return;
	}
	rc = rocmd_deploy_db_backup_put(L.db, j->target_id, path, j->binfo.manifest,
	                                (int64_t)j->binfo.files, (int64_t)j->binfo.bytes,
	                                j->binfo.adopted ? "rocblas_backup" : NULL, rocmd_now_ms());
	if (rc == 0) {
		struct rocmd_db_history h = {
		    .target_id = j->target_id,
		    .time_ms = rocmd_now_ms(),
		    .action = "backup",
		    .outcome = "ok",
		    .message = j->binfo.adopted ? "originals adopted from rocblas_backup"
		                                : "originals backed up"};
		rocmd_deploy_db_history_add(L.db, &h, NULL);
	}
}

static void
job_done(struct lib_job *j)
{
	cJSON *r = result_json(j);
	struct rocmd_server *srv = L.srv;

	if (j->type == JOB_VERIFY) {
		struct rocmd_db_history h = {.target_id = j->target_id,
		                             .time_ms = rocmd_now_ms(),
		                             .action = "verify",
		                             .outcome = j->rc == 0 ? "ok" : "failed",
		                             .message = j->rc == 0 ? "verified" : j->why};
		if (j->target_id > 0)
			rocmd_deploy_db_history_add(L.db, &h, NULL);
		if (j->rc == 0) {
			rocmd_server_event(srv, "lib.verified", cJSON_Duplicate(r, 1),
			                   "%s verified: %llu files, GEMM smoke test %s", j->t.name,
			                   (unsigned long long)j->vrep.files_checked,
			                   j->smoke[0] ? j->smoke : "not run");
		} else {
			rocmd_server_event(srv, "lib.verify_failed", cJSON_Duplicate(r, 1),
			                   "%s failed verification: %s", j->t.name, j->why);
			if (j->rc == ROCMD_ECORRUPT)
				queue_auto_rollback(&j->t, j->target_id, j->why);
		}
		goto finish;
	}
	if (j->type == JOB_ROLLBACK && strcmp(j->to, "original") == 0) {
		if (j->rc == 0) {
			int rc = rocmd_deploy_db_end_live(L.db, j->target_id, rocmd_now_ms(),
			                                  "rolled back to the originals", NULL);
			if (rc < 0 && rc != ROCMD_ENOTFOUND)
				log_err("%s: cannot record the rollback: %s", j->t.name,
				        rocmd_deploy_db_errmsg(L.db));
			rocmd_server_event(srv, "lib.rolled_back", cJSON_Duplicate(r, 1),
			                   "%s rolled back to the originals (%s)", j->t.name,
			                   j->reason);
		} else {
			struct rocmd_db_history h = {.target_id = j->target_id,
			                             .time_ms = rocmd_now_ms(),
			                             .action = "rollback",
			                             .outcome = j->rc == ROCMD_EBUSY ? "refused"
			                                                             : "failed",
			                             .message = j->why};
			rocmd_deploy_db_history_add(L.db, &h, NULL);
			rocmd_server_event(srv, "lib.rollback_failed", cJSON_Duplicate(r, 1),
			                   "%s: rollback to the originals failed: %s", j->t.name,
			                   j->why);
		}
		goto finish;
	}
	record_deploy(j, r);
	if (j->rc == 0) {
		record_backup(j);
		if (strcmp(j->t.kind, "overlay") == 0)
			rocmd_server_event(srv, "lib.deployed", cJSON_Duplicate(r, 1),
			                   "package #%lld (%s) deployed to %s (%s); use it with "
			                   "ROCBLAS_TENSILE_LIBPATH=%s",
			                   (long long)j->pkg_id, j->pkg_name, j->t.name, j->reason,
			                   j->t.host_lib);
		else
			rocmd_server_event(srv, "lib.deployed", cJSON_Duplicate(r, 1),
			                   "package #%lld (%s) %s to %s (%s); GEMM smoke test %s",
			                   (long long)j->pkg_id, j->pkg_name,
			                   j->type == JOB_ROLLBACK ? "restored" : "deployed",
			                   j->t.name, j->reason,
			                   j->smoke[0] ? j->smoke : "not run");
	} else {
		rocmd_server_event(srv, j->rc == ROCMD_EBUSY ? "lib.refused" : "lib.deploy_failed",
		                   cJSON_Duplicate(r, 1),
		                   "deploy of package #%lld to %s failed: %s", (long long)j->pkg_id,
		                   j->t.name, j->why);
	}
finish:
	rocmd_server_counts_changed(srv);
	if (j->pending != NULL) {
		if (j->rc < 0)
			rocmd_pending_finish(j->pending, j->rc, j->why, NULL);
		else
			rocmd_pending_finish(j->pending, 0, NULL, r), r = NULL;
	}
	j->pending = NULL;
	cJSON_Delete(r);
}

static void
suppress_end(struct lib_job *j)
{
	for (int i = 0; i < 2; i++)
		if (j->suppress[i] > 0 && L.srv->sdk != NULL)
			rocmd_sdk_suppress_end(L.srv->sdk, j->suppress[i]);
	j->suppress[0] = j->suppress[1] = 0;
}

static void
send_progress(struct lib_job *j, const char *phase)
{
	cJSON *p;

	if (j->pending == NULL || !rocmd_pending_alive(j->pending))
		return;
	p = cJSON_CreateObject();
	uv_mutex_lock(&j->lock);
	cJSON_AddStringToObject(p, "phase", phase != NULL ? phase : j->step);
	cJSON_AddNumberToObject(p, "bytes_done", (double)j->bytes_done);
	cJSON_AddNumberToObject(p, "bytes_total", (double)j->bytes_total);
	cJSON_AddNumberToObject(p, "files_done", (double)j->files_done);
	cJSON_AddNumberToObject(p, "files_total", (double)j->files_total);
	uv_mutex_unlock(&j->lock);
	if (j->users[0])
		cJSON_AddStringToObject(p, "gpu_users", j->users);
	rocmd_pending_progress(j->pending, p);
}

static void
after_work(uv_work_t *w, int status)
{
	struct lib_job *j = w->data;

	L.running = NULL;
	uv_timer_stop(&L.tick);
	suppress_end(j);
	if (status == UV_ECANCELED && j->rc == 0) {
		j->rc = ROCMD_ECANCELED;
		snprintf(j->why, sizeof(j->why), "canceled");
	}
	if (j->deferred && !L.srv->shutting_down) {
		/* deploy.gpu_busy = defer: wait and try again. */
		if (++j->deferrals == 1)
			rocmd_server_event(L.srv, "lib.deferred", NULL,
			                   "%s: waiting for %s to let go of the GPU", j->t.name,
			                   j->users);
		send_progress(j, "deferred");
		j->next = L.deferred;
		L.deferred = j;
		job_start_next(); /* arms the retry timer */
		return;
	}
	job_done(j);
	job_free(j);
	job_start_next();
}

static void
on_tick(uv_timer_t *t)
{
	struct lib_job *j = L.running;

	if (j == NULL)
		return;
	if (L.srv->shutting_down) {
		uv_mutex_lock(&j->lock);
		j->cancel = 1;
		uv_mutex_unlock(&j->lock);
		return;
	}
	send_progress(j, NULL);
}

static void
on_retry(uv_timer_t *t)
{
	struct lib_job *d = L.deferred;

	L.deferred = NULL;
	while (d != NULL) {
		struct lib_job *n = d->next;
		d->next = NULL;
		/* A client that went away no longer waits for its deferred deploy. */
		if (d->pending != NULL && !rocmd_pending_alive(d->pending)) {
			rocmd_pending_finish(d->pending, ROCMD_ECANCELED, "canceled", NULL);
			d->pending = NULL;
			job_free(d);
		} else {
			queue_job(d);
		}
		d = n;
	}
}

static void
job_start_next(void)
{
	struct lib_job *j;
	int rc;

	while (L.running == NULL && (j = L.head) != NULL) {
		L.head = j->next;
		if (L.head == NULL)
			L.tail = NULL;
		j->next = NULL;
		if (L.srv->shutting_down) {
			if (j->pending != NULL)
				rocmd_pending_finish(j->pending, ROCMD_ESHUTDOWN,
				                     "the daemon is shutting down", NULL);
			j->pending = NULL;
			job_free(j);
			continue;
		}
		if (j->started_ms == 0)
			j->started_ms = rocmd_now_ms();
		if (j->type != JOB_VERIFY && strcmp(j->t.kind, "sdk") == 0 && L.srv->sdk != NULL) {
			char dir[PATH_MAX];
			sys_dirname(j->t.sys_lib, dir, sizeof(dir));
			j->suppress[0] = rocmd_sdk_suppress_begin(L.srv->sdk, dir);
			if (j->t.sys_bin[0]) {
				sys_dirname(j->t.sys_bin, dir, sizeof(dir));
				j->suppress[1] = rocmd_sdk_suppress_begin(L.srv->sdk, dir);
			}
		}
		L.running = j;
		uv_timer_start(&L.tick, on_tick, TICK_MS, TICK_MS);
		rc = uv_queue_work(L.srv->loop, &j->work, deploy_work, after_work);
		if (rc < 0) {
			L.running = NULL;
			uv_timer_stop(&L.tick);
			suppress_end(j);
			j->rc = ROCMD_EINTERNAL;
			snprintf(j->why, sizeof(j->why), "cannot queue work: %s", uv_strerror(rc));
			job_done(j);
			job_free(j);
		}
	}
	if (L.deferred != NULL && !uv_is_active((uv_handle_t *)&L.retry))
		uv_timer_start(&L.retry, on_retry,
		               (uint64_t)L.srv->cfg->deploy_defer_retry_s * 1000, 0);
}

static void
queue_job(struct lib_job *j)
{
	if (L.tail != NULL)
		L.tail->next = j;
	else
		L.head = j;
	L.tail = j;
	job_start_next();
}

static int
target_queued(const char *name)
{
	if (L.running != NULL && strcmp(L.running->t.name, name) == 0)
		return 1;
	for (struct lib_job *j = L.head; j != NULL; j = j->next)
		if (strcmp(j->t.name, name) == 0)
			return 1;
	for (struct lib_job *j = L.deferred; j != NULL; j = j->next)
		if (strcmp(j->t.name, name) == 0)
			return 1;
	return 0;
}

/* ---- methods ---- */

/* Prepares a deploy job of package PKG_ID (0: match) to target T. */
static int
prepare_deploy(struct lib_job *j, int64_t pkg_id, char *why, size_t whylen)
{
	int rc;

	if (pkg_id > 0) {
		struct gpu_archs g;
		j->pkg_id = pkg_id;
		gpu_archs(&g);
		if (g.n > 0)
			copy(j->arch, sizeof(j->arch), g.archs[0]);
	} else {
		rc = match_package(&j->t, &j->pkg_id, j->pkg_name, sizeof(j->pkg_name), j->arch,
		                   sizeof(j->arch), why, whylen);
		if (rc < 0)
			return rc;
	}
	if ((rc = build_files(j, why, whylen)) < 0)
		return rc;
	j->flags = strcmp(j->t.kind, "overlay") == 0
	               ? ROCMD_DEPLOY_NO_BACKUP | ROCMD_DEPLOY_CREATE
	               : (j->t.windows ? ROCMD_DEPLOY_MANUAL_BACKUP : 0);
	if (strcmp(j->t.kind, "app") == 0 && !exists(j->t.host_lib))
		j->flags |= ROCMD_DEPLOY_CREATE;
	{
		struct target_row row;
		target_lookup(j->t.name, &row);
		if (originals_changed(&j->t, &row))
			j->flags |= ROCMD_DEPLOY_NEW_ORIGINALS;
	}
	if ((rc = target_record(&j->t, &j->target_id)) < 0) {
		snprintf(why, whylen, "cannot record the target: %s", rocmd_deploy_db_errmsg(L.db));
		return rc;
	}
	return 0;
}

static int
start_job(struct rocmd_conn *conn, struct lib_job *j)
{
	if ((j->pending = rocmd_conn_defer(conn)) == NULL) {
		job_free(j);
		return ROCMD_ENOMEM;
	}
	if (L.running != NULL || L.head != NULL) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "phase", "queued");
		rocmd_pending_progress(j->pending, p);
	}
	queue_job(j);
	return ROCMD_METHOD_DEFERRED;
}

static int
m_deploy(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"target", "package", "overlay", NULL};
	const char *spec = NULL;
	int64_t pkg = 0;
	int overlay = 0, rc;
	struct lib_job *j;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "package", 0, 1, INT64_MAX, &pkg, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "overlay", 0, &overlay, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	j = job_new(JOB_DEPLOY);
	if (j == NULL)
		return ROCMD_ENOMEM;
	copy(j->reason, sizeof(j->reason), "user");
	if ((rc = resolve_target(spec, overlay, &j->t, why, whylen)) < 0 ||
	    (rc = prepare_deploy(j, pkg, why, whylen)) < 0) {
		job_free(j);
		return rc;
	}
	return start_job(conn, j);
}

static int
prev_one(const struct rocmd_db_deployment *d, void *arg)
{
	int64_t *prev = arg;

	if (strcmp(d->state, "live") == 0 || strcmp(d->state, "failed") == 0)
		return 0;
	*prev = d->package_id;
	return 1;
}

static int
m_rollback(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"target", "to", "overlay", NULL};
	const char *spec = NULL, *to = "previous";
	struct target_row row;
	int overlay = 0, rc;
	struct lib_job *j;

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
	j = job_new(JOB_ROLLBACK);
	if (j == NULL)
		return ROCMD_ENOMEM;
	copy(j->reason, sizeof(j->reason), "user");
	if ((rc = resolve_target(spec, overlay, &j->t, why, whylen)) < 0)
		goto fail;
	target_lookup(j->t.name, &row);
	if (!row.found || row.live_id == 0) {
		snprintf(why, whylen, "nothing rocmd deployed is in place at %s: it holds %s",
		         j->t.name, row.found ? "the originals" : "what it always did");
		rc = ROCMD_ENOTFOUND;
		goto fail;
	}
	j->target_id = row.id;
	if (originals_changed(&j->t, &row)) {
		snprintf(why, whylen,
		         "an SDK update replaced what rocmd deployed at %s: the files there are the "
		         "SDK's own now, and a rollback would put back older ones; deploy a package "
		         "(the new originals are backed up first) or leave it as it is",
		         j->t.name);
		rc = ROCMD_EINVAL;
		goto fail;
	}
	if (strcmp(to, "previous") == 0) {
		int64_t prev = 0;
		rocmd_deploy_db_deployments(L.db, row.id, 0, prev_one, &prev);
		if (prev > 0) {
			copy(j->to, sizeof(j->to), "previous");
			if ((rc = prepare_deploy(j, prev, why, whylen)) < 0)
				goto fail;
			copy(j->reason, sizeof(j->reason), "rollback");
			return start_job(conn, j);
		}
		/* The live deployment was the first: the previous state is the originals. */
	}
	copy(j->to, sizeof(j->to), "original");
	if (strcmp(j->t.kind, "overlay") == 0)
		j->remove_overlay = 1;
	return start_job(conn, j);
fail:
	job_free(j);
	return rc;
}

static int
m_verify(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"target", "overlay", NULL};
	const char *spec = NULL;
	struct target_row row;
	struct gpu_archs g;
	int overlay = 0, rc;
	struct lib_job *j;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "target", 0, &spec, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "overlay", 0, &overlay, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	j = job_new(JOB_VERIFY);
	if (j == NULL)
		return ROCMD_ENOMEM;
	copy(j->reason, sizeof(j->reason), "user");
	if ((rc = resolve_target(spec, overlay, &j->t, why, whylen)) < 0) {
		job_free(j);
		return rc;
	}
	target_lookup(j->t.name, &row);
	if (!row.found || row.live_id == 0) {
		snprintf(why, whylen, "nothing rocmd deployed is in place at %s", j->t.name);
		job_free(j);
		return ROCMD_ENOTFOUND;
	}
	j->target_id = row.id;
	j->pkg_id = row.live_pkg;
	gpu_archs(&g);
	if (g.n > 0)
		copy(j->arch, sizeof(j->arch), g.archs[0]);
	return start_job(conn, j);
}

struct status_ctx {
	cJSON *targets;
	int64_t id;
};

static void
add_live(cJSON *o, const struct rocmd_db_target *t)
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
	add_live(o, t);
	if (t->backup_path != NULL) {
		b = cJSON_AddObjectToObject(o, "backup");
		cJSON_AddStringToObject(b, "path", t->backup_path);
		cJSON_AddNumberToObject(b, "files", (double)t->backup_nfiles);
		cJSON_AddNumberToObject(b, "bytes", (double)t->backup_total_size);
		if (t->backup_adopted != NULL)
			cJSON_AddStringToObject(b, "adopted_from", t->backup_adopted);
	}
	/* Drift: discovery's fingerprint of the library no longer the deployed one. */
	{
		const cJSON *sfp = cJSON_GetObjectItemCaseSensitive(o, "library_fingerprint");
		cJSON_AddBoolToObject(o, "drift",
		                      t->live_id != 0 && t->live_fingerprint != NULL &&
		                          cJSON_IsString(sfp) &&
		                          strcmp(sfp->valuestring, t->live_fingerprint) != 0);
	}
	return 0;
}

static cJSON *
target_json(const struct lib_target *t)
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
	if (t->sdk_fingerprint[0] && strcmp(t->kind, "sdk") == 0)
		cJSON_AddStringToObject(o, "library_fingerprint", t->sdk_fingerprint);
	if (strcmp(t->kind, "overlay") == 0) {
		char line[PATH_MAX + 64];
		snprintf(line, sizeof(line), "ROCBLAS_TENSILE_LIBPATH=%s", t->host_lib);
		cJSON_AddStringToObject(o, "environment", line);
	}
	cJSON_AddNullToObject(o, "deployed");
	return o;
}

static int
status_sdk(const struct rocmd_db_sdk *s, void *arg)
{
	struct status_ctx *c = arg;
	struct lib_target t;
	int64_t pkg = 0;
	char name[256] = "", arch[32], why[512];
	cJSON *o;

	if (strcmp(s->state, "present") != 0)
		return 0;
	if (sdk_target(s->id, NULL, 0, &t) < 0)
		return 0;
	o = target_json(&t);
	if (match_package(&t, &pkg, name, sizeof(name), arch, sizeof(arch), why, sizeof(why)) ==
	    0) {
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

static int
m_status(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct status_ctx c = {0};
	const char *s = L.srv->cfg->deploy_app_targets;
	struct gpu_archs g;
	cJSON *r, *ga;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	r = cJSON_CreateObject();
	c.targets = cJSON_AddArrayToObject(r, "targets");
	if (L.srv->sdk != NULL)
		rocmd_sdk_db_list(rocmd_sdk_db(L.srv->sdk), 0, NULL, status_sdk, &c);
	while (s != NULL && *s != '\0') {
		size_t n = strcspn(s, ";");
		char name[128];
		struct lib_target t;
		const char *eq = memchr(s, '=', n);
		if (eq != NULL) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - s), s);
			if (app_target(name, &t) == 0)
				cJSON_AddItemToArray(c.targets, target_json(&t));
		}
		s += n + (s[n] == ';');
	}
	/* Overlays and targets from earlier deploys. */
	rc = rocmd_deploy_db_targets(L.db, 0, NULL, status_target, &c);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read targets: %s", rocmd_deploy_db_errmsg(L.db));
		return rc;
	}
	{
		/* An overlay listed for an SDK that is present shows where it lives. */
		cJSON *it;
		cJSON_ArrayForEach(it, c.targets)
		{
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
	gpu_archs(&g);
	ga = cJSON_AddArrayToObject(r, "gpu_archs");
	for (int i = 0; i < g.n; i++)
		cJSON_AddItemToArray(ga, cJSON_CreateString(g.archs[i]));
	cJSON_AddStringToObject(r, "gpu_busy_policy", L.srv->cfg->deploy_gpu_busy);
	cJSON_AddStringToObject(r, "sync_policy", L.srv->cfg->deploy_sync);
	cJSON_AddNumberToObject(r, "queued", (double)((L.running != NULL) + (L.head != NULL)));
	*result = r;
	return 0;
}

struct hist_ctx {
	cJSON *a;
	int64_t last;
};

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
	static const char *const keys[] = {"target", "limit", "before_id", NULL};
	const char *spec = NULL;
	int64_t limit = HISTORY_DEFAULT, before = 0, tid = 0;
	struct hist_ctx c = {0};
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
		struct lib_target t;
		struct target_row row;
		const char *name = spec;
		if (resolve_target(spec, 0, &t, why, whylen) == 0)
			name = t.name;
		target_lookup(name, &row);
		if (!row.found) {
			snprintf(why, whylen, "rocmd never deployed to '%s'", spec);
			return ROCMD_ENOTFOUND;
		}
		tid = row.id;
	}
	r = cJSON_CreateObject();
	c.a = cJSON_AddArrayToObject(r, "history");
	rc = rocmd_deploy_db_history(L.db, tid, before, limit, hist_one, &c);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read the history: %s", rocmd_deploy_db_errmsg(L.db));
		return rc;
	}
	/* Target names by id, for printing. */
	nc.names = cJSON_AddObjectToObject(r, "targets");
	rocmd_deploy_db_targets(L.db, 0, NULL, name_one, &nc);
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
    {NULL, 0, NULL},
};

/* ---- auto-sync's view (deploy-sync.c) ---- */

int
rocmd_lib_sdk_view(int64_t sdk_id, struct rocmd_lib_sdk_view *out)
{
	struct lib_target t;
	struct target_row row;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!L.started)
		return ROCMD_ENOTFOUND;
	if ((rc = sdk_target(sdk_id, NULL, 0, &t)) < 0)
		return rc;
	target_lookup(t.name, &row);
	out->target_id = row.id;
	out->live_package_id = row.live_pkg;
	copy(out->live_fingerprint, sizeof(out->live_fingerprint), row.live_fp);
	copy(out->sdk_fingerprint, sizeof(out->sdk_fingerprint), t.sdk_fingerprint);
	copy(out->sdk_version, sizeof(out->sdk_version), t.sdk_version);
	copy(out->sdk_path, sizeof(out->sdk_path), t.sdk_path);
	out->queued = target_queued(t.name);
	return 0;
}

int
rocmd_lib_match_sdk(int64_t sdk_id, int64_t *pkg_id, char *name, size_t namelen, char *why,
                    size_t whylen)
{
	struct lib_target t;
	char arch[32];
	int rc;

	*pkg_id = 0;
	if ((rc = sdk_target(sdk_id, NULL, 0, &t)) < 0) {
		snprintf(why, whylen, "SDK #%lld is not present", (long long)sdk_id);
		return rc;
	}
	return match_package(&t, pkg_id, name, namelen, arch, sizeof(arch), why, whylen);
}

int
rocmd_lib_queue_sdk_deploy(int64_t sdk_id, int64_t pkg_id, const char *reason, char *why,
                           size_t whylen)
{
	struct lib_job *j = job_new(JOB_DEPLOY);
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	copy(j->reason, sizeof(j->reason), reason);
	if ((rc = sdk_target(sdk_id, NULL, 0, &j->t)) < 0 ||
	    (rc = prepare_deploy(j, pkg_id, why, whylen)) < 0) {
		if (rc == ROCMD_ENOTFOUND && why[0] == '\0')
			snprintf(why, whylen, "SDK #%lld is not present", (long long)sdk_id);
		job_free(j);
		return rc;
	}
	queue_job(j);
	return 0;
}

/* ---- start-up recovery ---- */

/* Brings the database in line with what the engine says target NAME holds. */
static void
reconcile(const char *name)
{
	struct rocmd_deploy_files cur = {0};
	struct target_row row;
	char why[512];
	long long pkg = 0;
	int rc;

	target_lookup(name, &row);
	if (!row.found)
		return;
	rc = rocmd_deploy_current_load(L.srv->cfg->state_dir, name, &cur, why, sizeof(why));
	if (rc < 0)
		return;
	if (cur.label != NULL && strcmp(cur.label, "original") == 0) {
		if (row.live_id != 0 &&
		    rocmd_deploy_db_end_live(L.db, row.id, rocmd_now_ms(),
		                             "recovered: the originals are in place", NULL) == 0)
			rocmd_server_event(L.srv, "lib.recovered", NULL,
			                   "%s holds the originals: database updated", name);
	} else if (cur.label != NULL && sscanf(cur.label, "pkg %lld", &pkg) == 1 &&
	           pkg != row.live_pkg) {
		struct rocmd_db_deployment d = {.target_id = row.id,
		                                .package_id = pkg,
		                                .state = "live",
		                                .reason = "recover",
		                                .started_ms = rocmd_now_ms(),
		                                .finished_ms = rocmd_now_ms()};
		int64_t id;
		if (rocmd_deploy_db_record(L.db, &d, "superseded", "recover", "ok",
		                           "recovered: the deploy had completed on disk", &id) == 0)
			rocmd_server_event(L.srv, "lib.recovered", NULL,
			                   "%s holds package #%lld: database updated", name, pkg);
	}
	rocmd_deploy_files_free(&cur);
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

static int
recover_all(char *why, size_t whylen)
{
	char **names = NULL, **all = NULL;
	size_t n = 0, total = 0;
	int rc;

	rc = rocmd_deploy_pending(L.srv->cfg->state_dir, &names, &n);
	if (rc < 0 && rc != ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "cannot list interrupted deploys: %s", rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		struct rocmd_deploy_recovery r = {0};
		char w[512] = "";
		rc = rocmd_deploy_recover(L.srv->cfg->state_dir, names[i], &r, w, sizeof(w));
		if (rc < 0) {
			/* The target stays refused (its journal stays); the daemon runs. */
			log_err("deploy recovery of %s failed: %s", names[i], w);
			rocmd_server_event(L.srv, "lib.recover_failed", NULL,
			                   "recovery of %s failed: %s", names[i], w);
		} else if (r.action != ROCMD_DEPLOY_RECOVER_NONE) {
			struct target_row row;
			rocmd_server_event(L.srv, "lib.recovered", NULL, "%s: %s", names[i],
			                   r.what);
			target_lookup(names[i], &row);
			if (row.found) {
				struct rocmd_db_history h = {.target_id = row.id,
				                             .time_ms = rocmd_now_ms(),
				                             .action = "recover",
				                             .outcome = "ok",
				                             .message = r.what};
				rocmd_deploy_db_history_add(L.db, &h, NULL);
			}
		}
		free(names[i]);
	}
	free(names);
	/* Then every known target's database rows against its current.json. */
	rocmd_deploy_db_targets(L.db, 0, NULL, count_targets, &total);
	all = calloc(total + 1, sizeof(*all));
	if (all == NULL)
		return ROCMD_ENOMEM;
	rocmd_deploy_db_targets(L.db, 0, NULL, reconcile_one, &all);
	for (size_t i = 0; all[i] != NULL; i++) {
		reconcile(all[i]);
		free(all[i]);
	}
	free(all);
	return 0;
}

int
rocmd_lib_start(struct rocmd_server *srv, const struct rocmd_lib_start_opts *o, char *why,
                size_t whylen)
{
	int rc;

	memset(&L, 0, sizeof(L));
	L.srv = srv;
	copy(L.root, sizeof(L.root), o != NULL ? o->root : NULL);
	if (o != NULL && o->smoke != NULL)
		copy(L.smoke, sizeof(L.smoke), o->smoke);
	else
		rocmd_lib_smoke_find(L.smoke, sizeof(L.smoke));
	snprintf(L.store, sizeof(L.store), "%s/store", srv->cfg->state_dir);
	if ((rc = rocmd_deploy_db_attach(srv->db, &L.db)) < 0 ||
	    (rc = rocmd_pkg_db_attach(srv->db, &L.pdb)) < 0) {
		snprintf(why, whylen, "cannot open the deploy tables: %s", rocmd_strerror(rc));
		rocmd_deploy_db_detach(L.db);
		L.db = NULL;
		return rc;
	}
	uv_timer_init(srv->loop, &L.tick);
	uv_unref((uv_handle_t *)&L.tick);
	uv_timer_init(srv->loop, &L.retry);
	uv_unref((uv_handle_t *)&L.retry);
	L.started = 1;
	rc = recover_all(why, whylen);
	if (rc < 0)
		log_err("deploy recovery: %s", why);
	return 0;
}

void
rocmd_lib_stop(void)
{
	if (!L.started)
		return;
	uv_close((uv_handle_t *)&L.tick, NULL);
	uv_close((uv_handle_t *)&L.retry, NULL);
	while (L.head != NULL || L.deferred != NULL) {
		struct lib_job *j = L.head != NULL ? L.head : L.deferred;
		if (j == L.head)
			L.head = j->next;
		else
			L.deferred = j->next;
		if (j->pending != NULL)
			rocmd_pending_finish(j->pending, ROCMD_ESHUTDOWN, "the daemon stopped",
			                     NULL);
		j->pending = NULL;
		job_free(j);
	}
	L.tail = NULL;
	rocmd_deploy_db_detach(L.db);
	rocmd_pkg_db_detach(L.pdb);
	L.db = NULL;
	L.pdb = NULL;
	L.started = 0;
}
