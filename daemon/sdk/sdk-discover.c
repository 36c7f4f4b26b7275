/*
 * HIP SDK discovery: see sdk-discover.h. Candidates are collected from every
 * rule of the platform, resolved inside the sysroot to their canonical system
 * path (so /opt/rocm and /opt/rocm-5.7.1 are one install), then each is
 * examined: is it an SDK at all, which version (sdk-version.h), where its HIP
 * runtime and rocBLAS are, and what its rocBLAS library covers
 * (rocblas-library.h).
 */
#include "sdk-discover.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/spawn.h"
#include "daemon/pkg/archive-dl.h"
#include "common/error.h"
#include "common/text.h"
#include "common/fs.h"
#include "registry.h"
#include "sysroot.h"
#include "discover-internal.h"
#include "runtime-discover.h"

#define MAX_CANDIDATES ROCMD_DISC_MAX_CANDIDATES
#define VERSION_FILE_MAX 4096

#define candidate rocmd_disc_candidate
#define scan_ctx rocmd_disc

const char *
rocmd_sdk_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static const char *
root_of(const struct rocmd_sdk_scan_opts *o)
{
	return o->root != NULL && strcmp(o->root, "/") != 0 ? o->root : "";
}

/* Host path of system path SYS + "/" + REL (REL may be NULL). */
static int
host(const struct rocmd_sdk_scan_opts *o, const char *sys, const char *rel, char *out,
     size_t outlen)
{
	char tmp[PATH_MAX];
	int rc = rocmd_sysroot_map(root_of(o), sys, tmp, sizeof(tmp));

	if (rc < 0)
		return rc;
	rc = snprintf(out, outlen, "%s%s%s", tmp, rel != NULL ? "/" : "", rel != NULL ? rel : "");
	return rc < 0 || (size_t)rc >= outlen ? ROCMD_EINVAL : 0;
}

/* System path SYS joined with REL, in the path's own syntax. */
static void
sys_join(const char *sys, const char *rel, char *out, size_t outlen)
{
	int win = rocmd_sysroot_is_windows_path(sys);
	size_t n;

	snprintf(out, outlen, "%s", sys);
	n = strlen(out);
	while (n > 3 && (out[n - 1] == '/' || out[n - 1] == '\\'))
		out[--n] = '\0';
	if (rel == NULL || rel[0] == '\0')
		return;
	snprintf(out + n, outlen - n, "%s%s", win ? "\\" : "/", rel);
	if (win)
		for (char *p = out + n; *p != '\0'; p++)
			if (*p == '/')
				*p = '\\';
}

/* The system path of host path H (under the root). */
static void
to_sys(const struct rocmd_sdk_scan_opts *o, const char *h, char *out, size_t outlen)
{
	const char *r = root_of(o);
	size_t n = strlen(r);

	if (n > 0 && strncmp(h, r, n) == 0)
		h += n;
	/* On Windows itself host paths are "C:/..." (sysroot.h): back to '\\'. */
	if (o->windows && n == 0 && rocmd_sysroot_is_windows_path(h)) {
		snprintf(out, outlen, "%s", h);
		for (char *p = out; *p != '\0'; p++)
			if (*p == '/')
				*p = '\\';
		return;
	}
	if (o->windows && h[0] == '/' && isalpha((unsigned char)h[1]) &&
	    (h[2] == '/' || h[2] == '\0')) {
		snprintf(out, outlen, "%c:%s", toupper((unsigned char)h[1]), h[2] ? h + 2 : "\\");
		for (char *p = out; *p != '\0'; p++)
			if (*p == '/')
				*p = '\\';
		return;
	}
	snprintf(out, outlen, "%s", h);
}

static int
exists(const char *h)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(h, 1, &st) == 0;
}

static int
is_dir(const char *h)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(h, 1, &st) == 0 && st.type == ROCMD_FS_DIR;
}

/* Adds a candidate; returns it, or NULL when it was there already or there
 * is no room. */
static struct candidate *
add_candidate(struct scan_ctx *s, const char *sys, const char *layout, const char *origin,
              int from_user)
{
	struct candidate *c;

	/* The same name from the same rule twice (HIP_PATH in the daemon's
	 * environment and the machine's) is one candidate. */
	for (size_t i = 0; i < s->ncand; i++)
		if (s->cand[i].origin == origin && strcmp(s->cand[i].sys, sys) == 0)
			return NULL;
	if (s->ncand >= MAX_CANDIDATES) {
		rocmd_text_addf(&s->out->problems, "more than %d candidate installs; %s skipped",
		                MAX_CANDIDATES, sys);
		return NULL;
	}
	c = &s->cand[s->ncand++];
	memset(c, 0, sizeof(*c));
	snprintf(c->sys, sizeof(c->sys), "%s", sys);
	c->layout = layout;
	c->origin = origin;
	c->from_user = from_user;
	return c;
}

static void
add_watch(struct scan_ctx *s, const char *sys)
{
	char **grown;

	for (size_t i = 0; i < s->out->nwatch; i++)
		if (strcmp(s->out->watch[i], sys) == 0)
			return;
	grown = realloc(s->out->watch, (s->out->nwatch + 2) * sizeof(*grown));
	if (grown == NULL) {
		s->err = ROCMD_ENOMEM;
		return;
	}
	s->out->watch = grown;
	grown[s->out->nwatch] = strdup(sys);
	if (grown[s->out->nwatch] == NULL) {
		s->err = ROCMD_ENOMEM;
		return;
	}
	grown[++s->out->nwatch] = NULL;
}

int
rocmd_disc_host(const struct rocmd_disc *s, const char *sys, const char *rel, char *out,
                size_t outlen)
{
	return host(s->o, sys, rel, out, outlen);
}

void
rocmd_disc_join(const char *sys, const char *rel, char *out, size_t outlen)
{
	sys_join(sys, rel, out, outlen);
}

void
rocmd_disc_to_sys(const struct rocmd_disc *s, const char *h, char *out, size_t outlen)
{
	to_sys(s->o, h, out, outlen);
}

int
rocmd_disc_is_dir(const char *h)
{
	return is_dir(h);
}

int
rocmd_disc_exists(const char *h)
{
	return exists(h);
}

void
rocmd_disc_watch(struct rocmd_disc *s, const char *sys)
{
	add_watch(s, sys);
}

/* ---- candidates ---- */

/* The origin strings must outlive the scan: keep them in a static table of names. */
static const char *
origin_name(struct scan_ctx *s, const char *name)
{
	static const char *const fixed[] = {"ROCM_PATH", "HIP_PATH",      "/opt",     "/usr",
	                                    "config",    "Program Files", "registry", NULL};

	for (size_t i = 0; fixed[i] != NULL; i++)
		if (strcmp(fixed[i], name) == 0)
			return fixed[i];
	return "HIP_PATH_NN";
}

static void
linux_candidates(struct scan_ctx *s)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	char h[PATH_MAX], sys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;

	/* AMD's packages: /opt/rocm and /opt/rocm-X.Y.Z. */
	add_watch(s, "/opt");
	if (host(o, "/opt", NULL, h, sizeof(h)) == 0 && (d = rocmd_dir_open(h)) != NULL) {
		while ((de = rocmd_dir_read(d)) != NULL) {
			if (strcmp(de->d_name, "rocm") != 0 && strncmp(de->d_name, "rocm-", 5) != 0)
				continue;
			snprintf(sys, sizeof(sys), "/opt/%s", de->d_name);
			add_candidate(s, sys, "opt", origin_name(s, "/opt"), 0);
		}
		rocmd_dir_close(d);
	} else if (errno == EACCES) {
		rocmd_text_addf(&s->out->problems, "/opt: cannot read folder: %s", strerror(errno));
	}
	/* The distribution layout: HIP's version file or its runtime under /usr/lib/<triplet>. */
	add_watch(s, "/usr/share");
	add_watch(s, "/usr/share/hip");
	add_watch(s, "/usr/lib");
	{
		int distro =
		    host(o, "/usr/share/hip/version", NULL, h, sizeof(h)) == 0 && exists(h);
		if (host(o, "/usr/lib", NULL, h, sizeof(h)) == 0 && (d = rocmd_dir_open(h)) != NULL) {
			while ((de = rocmd_dir_read(d)) != NULL) {
				char lib[PATH_MAX];
				struct rocmd_dir *ld;
				struct rocmd_dirent *le;
				if (strstr(de->d_name, "-linux-") == NULL)
					continue;
				snprintf(sys, sizeof(sys), "/usr/lib/%s", de->d_name);
				add_watch(s, sys);
				rocmd_pathf(lib, sizeof(lib), "%s/%s", h, de->d_name);
				if ((ld = rocmd_dir_open(lib)) == NULL)
					continue;
				while ((le = rocmd_dir_read(ld)) != NULL)
					if (strncmp(le->d_name, "libamdhip64.so", 14) == 0)
						distro = 1;
				rocmd_dir_close(ld);
			}
			rocmd_dir_close(d);
		}
		if (distro)
			add_candidate(s, "/usr", "distro", origin_name(s, "/usr"), 0);
	}
	{
		const char *v = rocmd_sdk_env_get(o->env, "ROCM_PATH");
		if (v != NULL && v[0] == '/')
			add_candidate(s, v, "env", origin_name(s, "ROCM_PATH"), 1);
		v = rocmd_sdk_env_get(o->env, "HIP_PATH");
		if (v != NULL && v[0] == '/')
			add_candidate(s, v, "env", origin_name(s, "HIP_PATH"), 1);
	}
}

struct reg_ctx {
	struct scan_ctx *s;
};

static int
on_registry(const char *key, const char *install_dir, void *arg)
{
	struct scan_ctx *s = arg;
	struct candidate *c;

	if (install_dir == NULL || !rocmd_sysroot_is_windows_path(install_dir)) {
		rocmd_text_addf(
		    &s->out->problems,
		    "registry key HKLM\\Software\\AMD\\ROCm\\%s has no usable InstallDir", key);
		return 0;
	}
	c = add_candidate(s, install_dir, "windows", origin_name(s, "registry"), 1);
	if (c != NULL && rocmd_version_from_folder(key, c->registry, sizeof(c->registry)) < 0)
		c->registry[0] = '\0';
	return 0;
}

/* HIP_PATH or HIP_PATH_NN, from the daemon's environment or the machine's. */
static int
on_env(const char *name, const char *value, void *arg)
{
	struct scan_ctx *s = arg;

	if (strcmp(name, "HIP_PATH") == 0) {
		add_candidate(s, value, "windows", origin_name(s, "HIP_PATH"), 1);
	} else if (strncmp(name, "HIP_PATH_", 9) == 0 && isdigit((unsigned char)name[9]) &&
	           isdigit((unsigned char)name[10]) && name[11] == '\0') {
		struct candidate *c = add_candidate(s, value, "windows", origin_name(s, name), 1);
		/* HIP_PATH_62 → 6.2 */
		if (c != NULL)
			snprintf(c->envname, sizeof(c->envname), "%c.%c", name[9], name[10]);
	}
	return 0;
}

static void
windows_candidates(struct scan_ctx *s)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	static const char *const base = "C:\\Program Files\\AMD\\ROCm";
	char h[PATH_MAX], sys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;
	int rc;

	for (size_t i = 0; o->env != NULL && o->env[i] != NULL; i++) {
		const char *e = o->env[i], *eq = strchr(e, '=');
		char name[64];

		if (eq == NULL || (size_t)(eq - e) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(eq - e), e);
		on_env(name, eq + 1, s);
	}
	/* A service keeps the environment it started with: the machine's
	 * current one names SDKs installed since. */
	rc = rocmd_registry_machine_env(root_of(o), on_env, s);
	if (rc < 0)
		rocmd_text_addf(&s->out->problems, "cannot read the machine environment: %s",
		                rocmd_strerror(rc));
	/* The parent only while ROCm is missing: it is where ROCm appears, and on
	 * Windows a watch covers its whole tree (all of AMD's software). */
	if (host(o, base, NULL, h, sizeof(h)) < 0 || !is_dir(h))
		add_watch(s, "C:\\Program Files\\AMD");
	add_watch(s, base);
	if (host(o, base, NULL, h, sizeof(h)) == 0 && (d = rocmd_dir_open(h)) != NULL) {
		while ((de = rocmd_dir_read(d)) != NULL) {
			char v[ROCMD_VERSION_MAX];
			if (rocmd_version_from_folder(de->d_name, v, sizeof(v)) < 0)
				continue;
			snprintf(sys, sizeof(sys), "%s\\%s", base, de->d_name);
			add_candidate(s, sys, "windows", origin_name(s, "Program Files"), 0);
		}
		rocmd_dir_close(d);
	}
	rc = rocmd_registry_rocm_installs(root_of(o), on_registry, s);
	if (rc < 0)
		rocmd_text_addf(&s->out->problems, "cannot read the registry: %s",
		                rocmd_strerror(rc));
}

/* ---- examining one install ---- */

/* Never through a link nor blocking on a FIFO: runtimes are found in other
 * users' homes too (a version.py that is a FIFO hung every scan). */
int
rocmd_disc_read_small(const char *h, char *buf, size_t len)
{
	return rocmd_fs_read_head(h, buf, len);
}

/* The first bytes of a gzip file, through libarchive's raw format. */
static int
read_gz_head(const char *h, char *buf, size_t len)
{
	struct archive *a;
	struct archive_entry *e;
	la_ssize_t n = 0;
	int rc = ROCMD_EIO;

	buf[0] = '\0';
	if ((rc = rocmd_archive_dl_load(NULL, 0)) < 0)
		return rc;
	rc = ROCMD_EIO;
	a = sym_archive_read_new();
	if (a == NULL)
		return ROCMD_ENOMEM;
	sym_archive_read_support_filter_gzip(a);
	sym_archive_read_support_format_raw(a);
	if (sym_archive_read_open_filename(a, h, 16384) == ARCHIVE_OK &&
	    sym_archive_read_next_header(a, &e) == ARCHIVE_OK) {
		n = sym_archive_read_data(a, buf, len - 1);
		if (n >= 0) {
			buf[n] = '\0';
			rc = 0;
		}
	}
	sym_archive_read_free(a);
	return rc;
}

static void
read_versions(struct scan_ctx *s, const struct candidate *c, struct rocmd_sdk_found *f)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	struct rocmd_sdk_version *v = &f->ver;
	char h[PATH_MAX], buf[VERSION_FILE_MAX];
	const char *base;

	if (host(o, f->path, ".info/version", h, sizeof(h)) == 0 &&
	    rocmd_disc_read_small(h, buf, sizeof(buf)) == 0 &&
	    rocmd_version_normalize(buf, 0, v->found[ROCMD_VSRC_INFO], ROCMD_VERSION_MAX) < 0)
		rocmd_text_addf(&f->problems, ".info/version does not hold a version");
	/* Debian/Ubuntu: the runtime package's changelog names the release. */
	if (host(o, f->path, "share/doc", h, sizeof(h)) == 0) {
		struct rocmd_dir *d = rocmd_dir_open(h);
		struct rocmd_dirent *de;
		while (d != NULL && (de = rocmd_dir_read(d)) != NULL) {
			char p[PATH_MAX];
			if (strncmp(de->d_name, "libamdhip64-", 12) != 0 ||
			    !isdigit((unsigned char)de->d_name[12]))
				continue;
			rocmd_pathf(p, sizeof(p), "%s/%s/changelog.Debian.gz", h, de->d_name);
			if (read_gz_head(p, buf, 512) == 0)
				rocmd_version_from_changelog(buf, v->found[ROCMD_VSRC_CHANGELOG],
				                             ROCMD_VERSION_MAX);
		}
		if (d != NULL)
			rocmd_dir_close(d);
	}
	if (host(o, f->path, "bin/.hipVersion", h, sizeof(h)) == 0 &&
	    rocmd_disc_read_small(h, buf, sizeof(buf)) == 0 &&
	    rocmd_version_parse_hip_lines(buf, v->found[ROCMD_VSRC_HIPVERSION], ROCMD_VERSION_MAX) <
	        0)
		rocmd_text_addf(&f->problems, "bin/.hipVersion has no HIP_VERSION_MAJOR/MINOR");
	if (host(o, f->path, "share/hip/version", h, sizeof(h)) == 0 &&
	    rocmd_disc_read_small(h, buf, sizeof(buf)) == 0 &&
	    rocmd_version_parse_hip_lines(buf, v->found[ROCMD_VSRC_HIPFILE], ROCMD_VERSION_MAX) < 0)
		rocmd_text_addf(&f->problems, "share/hip/version has no HIP_VERSION_MAJOR/MINOR");
	base = strrchr(f->path, o->windows ? '\\' : '/');
	if (base != NULL)
		rocmd_version_from_folder(base + 1, v->found[ROCMD_VSRC_FOLDER], ROCMD_VERSION_MAX);
	snprintf(v->found[ROCMD_VSRC_ENVNAME], ROCMD_VERSION_MAX, "%s", c->envname);
	snprintf(v->found[ROCMD_VSRC_REGISTRY], ROCMD_VERSION_MAX, "%s", c->registry);
	rocmd_therock_version(s, f, f->path);
	rocmd_version_reconcile(v);
	/* hipconfig only when nothing else names a version: it is slow and may hang. */
	if (v->source < 0 && !o->windows && o->hipconfig_timeout_ms > 0 &&
	    host(o, f->path, "bin/hipconfig", h, sizeof(h)) == 0 && access(h, X_OK) == 0) {
		char *argv[] = {h, "--version", NULL};
		char *envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};
		int st = 0, rc = rocmd_child_run(argv, envp, o->hipconfig_timeout_ms, buf,
		                                 sizeof(buf), &st);
		if (rc == ROCMD_ETIMEDOUT)
			rocmd_text_addf(&f->problems, "hipconfig --version did not answer in %d ms",
			                o->hipconfig_timeout_ms);
		else if (rc == 0 && rocmd_version_normalize(buf, 1, v->found[ROCMD_VSRC_HIPCONFIG],
		                                            ROCMD_VERSION_MAX) < 0)
			rocmd_text_addf(&f->problems, "hipconfig --version printed no version");
		rocmd_version_reconcile(v);
	}
}

/* The best of the files in folder H named PREFIX*SUFFIX: a versioned name
 * ("libamdhip64.so.5", "amdhip64_6.dll") over a bare one, and among those the
 * shortest ("libamdhip64.so.5" over "libamdhip64.so.5.7.31921"). With an
 * empty SUFFIX only PREFIX and PREFIX.* match. */
int
rocmd_disc_find_named(const char *h, const char *prefix, const char *suffix, char *name,
                      size_t namelen)
{
	struct rocmd_dir *d = rocmd_dir_open(h);
	struct rocmd_dirent *de;
	size_t best_len = 0, p = strlen(prefix), sl = strlen(suffix);
	int best_versioned = 0;

	name[0] = '\0';
	if (d == NULL)
		return 0;
	while ((de = rocmd_dir_read(d)) != NULL) {
		size_t n = strlen(de->d_name);
		int versioned;

		if (strncmp(de->d_name, prefix, p) != 0 || n < p + sl ||
		    strcasecmp(de->d_name + n - sl, suffix) != 0)
			continue;
		if ((sl == 0 && de->d_name[p] != '\0' && de->d_name[p] != '.') || n >= namelen)
			continue;
		versioned = n > p + sl;
		if (name[0] == '\0' || (versioned && !best_versioned) ||
		    (versioned == best_versioned && n < best_len)) {
			memcpy(name, de->d_name, n + 1);
			best_len = n;
			best_versioned = versioned;
		}
	}
	rocmd_dir_close(d);
	return name[0] != '\0';
}

void
rocmd_disc_set_str(char **dst, const char *src, int *err)
{
	free(*dst);
	*dst = strdup(src);
	if (*dst == NULL)
		*err = ROCMD_ENOMEM;
}

void
rocmd_disc_inspect_library(struct scan_ctx *s, struct rocmd_sdk_found *f, const char *binary_dir_h,
                           int use_env)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	const char *env = use_env ? rocmd_sdk_env_get(o->env, "ROCBLAS_TENSILE_LIBPATH") : NULL;
	char envh[PATH_MAX] = "", dir[PATH_MAX], sys[PATH_MAX], why[1024];
	int rc;

	if (env != NULL && env[0] != '\0' &&
	    rocmd_sysroot_map(root_of(o), env, envh, sizeof(envh)) < 0)
		envh[0] = '\0';
	if (rocmd_rocblas_locate(binary_dir_h, envh, dir, sizeof(dir)) < 0) {
		if (f->rocblas_binary != NULL)
			rocmd_text_addf(&f->problems,
			                "%s is here but no library folder is where rocBLAS looks",
			                f->rocblas_binary);
		return;
	}
	to_sys(o, dir, sys, sizeof(sys));
	rocmd_disc_set_str(&f->rocblas_dir, sys, &s->err);
	rc = rocmd_rocblas_inspect(dir, o->lib_flags, o->cache, &f->lib, why, sizeof(why));
	if (rc == ROCMD_ENOMEM) {
		s->err = rc;
		return;
	}
	if (rc < 0) {
		rocmd_text_addf(&f->problems, "rocBLAS library: %s", why);
		return;
	}
	f->have_lib = 1;
}

static void
examine_linux(struct scan_ctx *s, struct rocmd_sdk_found *f)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	char h[PATH_MAX], libdir[PATH_MAX] = "", name[256], sys[PATH_MAX];

	/* The folder with the runtime: lib/, or lib/<triplet>/ in the distribution layout. */
	if (host(o, f->path, "lib", h, sizeof(h)) == 0 &&
	    rocmd_disc_find_named(h, "libamdhip64.so", "", name, sizeof(name))) {
		snprintf(libdir, sizeof(libdir), "%s", h);
	} else if (host(o, f->path, "lib", h, sizeof(h)) == 0) {
		struct rocmd_dir *d = rocmd_dir_open(h);
		struct rocmd_dirent *de;
		while (d != NULL && (de = rocmd_dir_read(d)) != NULL) {
			char sub[PATH_MAX];
			if (strstr(de->d_name, "-linux-") == NULL)
				continue;
			rocmd_pathf(sub, sizeof(sub), "%s/%s", h, de->d_name);
			if (rocmd_disc_find_named(sub, "libamdhip64.so", "", name, sizeof(name)) ||
			    rocmd_disc_find_named(sub, "librocblas.so", "", name, sizeof(name))) {
				snprintf(libdir, sizeof(libdir), "%s", sub);
				break;
			}
		}
		if (d != NULL)
			rocmd_dir_close(d);
	}
	if (libdir[0] == '\0') {
		rocmd_text_addf(&f->problems, "no HIP runtime (libamdhip64.so) found");
		return;
	}
	if (rocmd_disc_find_named(libdir, "libamdhip64.so", "", name, sizeof(name))) {
		snprintf(h, sizeof(h), "%s/%s", libdir, name);
		to_sys(o, h, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hip_runtime, sys, &s->err);
	} else {
		rocmd_text_addf(&f->problems, "no HIP runtime (libamdhip64.so) found");
	}
	if (rocmd_disc_find_named(libdir, "librocblas.so", "", name, sizeof(name))) {
		snprintf(h, sizeof(h), "%s/%s", libdir, name);
		to_sys(o, h, sys, sizeof(sys));
		rocmd_disc_set_str(&f->rocblas_binary, sys, &s->err);
	}
	to_sys(o, libdir, sys, sizeof(sys));
	add_watch(s, sys);
	rocmd_disc_inspect_library(s, f, libdir, 1);
}

void
rocmd_disc_runtime_files(struct scan_ctx *s, struct rocmd_sdk_found *f, const char *dir_h)
{
	char name[256], h[PATH_MAX], sys[PATH_MAX];
	const char *hip = s->o->windows ? "amdhip64" : "libamdhip64.so";
	const char *hsfx = s->o->windows ? ".dll" : "";

	if (rocmd_disc_find_named(dir_h, hip, hsfx, name, sizeof(name))) {
		rocmd_pathf(h, sizeof(h), "%s/%s", dir_h, name);
		to_sys(s->o, h, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hip_runtime, sys, &s->err);
	}
	if (s->o->windows) {
		rocmd_pathf(h, sizeof(h), "%s/rocblas.dll", dir_h);
		if (!exists(h))
			h[0] = '\0';
	} else if (rocmd_disc_find_named(dir_h, "librocblas.so", "", name, sizeof(name))) {
		rocmd_pathf(h, sizeof(h), "%s/%s", dir_h, name);
	} else {
		h[0] = '\0';
	}
	if (h[0] != '\0') {
		to_sys(s->o, h, sys, sizeof(sys));
		rocmd_disc_set_str(&f->rocblas_binary, sys, &s->err);
	}
	to_sys(s->o, dir_h, sys, sizeof(sys));
	add_watch(s, sys);
	rocmd_disc_inspect_library(s, f, dir_h, 0);
	if (f->rocblas_dir != NULL)
		add_watch(s, f->rocblas_dir);
}

int
rocmd_sdk_win_runtime_names(const char *version, char *hip, size_t hiplen, char *rtc, size_t rtclen)
{
	unsigned major, minor;

	if (version == NULL || sscanf(version, "%u.%u", &major, &minor) != 2 || major > 99 ||
	    minor > 99)
		return ROCMD_EINVAL;
	if (major <= 5)
		snprintf(hip, hiplen, "amdhip64.dll");
	else
		snprintf(hip, hiplen, "amdhip64_%u.dll", major);
	snprintf(rtc, rtclen, "hiprtc%02u%02u.dll", major, minor);
	return 0;
}

static void
examine_windows(struct scan_ctx *s, struct rocmd_sdk_found *f)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	char bin[PATH_MAX], name[256], sys[PATH_MAX], want_hip[64], want_rtc[64];

	if (host(o, f->path, "bin", bin, sizeof(bin)) < 0 || !is_dir(bin)) {
		rocmd_text_addf(&f->problems, "no bin folder");
		return;
	}
	if (rocmd_disc_find_named(bin, "amdhip64", ".dll", name, sizeof(name))) {
		char bin_sys[PATH_MAX];
		sys_join(f->path, "bin", bin_sys, sizeof(bin_sys));
		sys_join(bin_sys, name, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hip_runtime, sys, &s->err);
	} else {
		rocmd_text_addf(&f->problems, "no HIP runtime (bin\\amdhip64*.dll) found");
	}
	if (rocmd_disc_find_named(bin, "hiprtc", ".dll", name, sizeof(name)) &&
	    strncasecmp(name, "hiprtc-builtins", 15) != 0) {
		char bin_sys[PATH_MAX];
		sys_join(f->path, "bin", bin_sys, sizeof(bin_sys));
		sys_join(bin_sys, name, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hiprtc, sys, &s->err);
	}
	/* Each SDK generation has its own runtime names; a mismatch means a
	 * half-replaced or mislabelled install. */
	if (f->ver.version[0] != '\0' &&
	    rocmd_sdk_win_runtime_names(f->ver.version, want_hip, sizeof(want_hip), want_rtc,
	                                sizeof(want_rtc)) == 0) {
		char p[PATH_MAX];
		rocmd_pathf(p, sizeof(p), "%s/%s", bin, want_hip);
		if (f->hip_runtime != NULL && !exists(p))
			rocmd_text_addf(&f->problems, "HIP SDK %s ships bin\\%s, but this has %s",
			                f->ver.version, want_hip,
			                strrchr(f->hip_runtime, '\\') + 1);
		rocmd_pathf(p, sizeof(p), "%s/%s", bin, want_rtc);
		if (f->hiprtc != NULL && !exists(p))
			rocmd_text_addf(&f->problems, "HIP SDK %s ships bin\\%s, but this has %s",
			                f->ver.version, want_rtc, strrchr(f->hiprtc, '\\') + 1);
	}
	{
		char dll[PATH_MAX];
		rocmd_pathf(dll, sizeof(dll), "%s/rocblas.dll", bin);
		if (exists(dll)) {
			sys_join(f->path, "bin\\rocblas.dll", sys, sizeof(sys));
			rocmd_disc_set_str(&f->rocblas_binary, sys, &s->err);
		}
	}
	sys_join(f->path, "bin", sys, sizeof(sys));
	add_watch(s, sys);
	sys_join(f->path, "bin\\rocblas", sys, sizeof(sys));
	add_watch(s, sys);
	rocmd_disc_inspect_library(s, f, bin, 1);
}

/* True when the folder looks like a HIP SDK at all. */
static int
looks_like_sdk(const struct rocmd_sdk_scan_opts *o, const char *sys)
{
	static const char *const linux_marks[] = {".info/version",
	                                          "bin/hipcc",
	                                          "bin/hipconfig",
	                                          "share/hip/version",
	                                          "bin/.hipVersion",
	                                          "include/hip/hip_version.h",
	                                          "lib/libamdhip64.so",
	                                          "share/therock/therock_manifest.json",
	                                          NULL};
	static const char *const win_marks[] = {"bin/.hipVersion",
	                                        "bin/hipcc.bin.exe",
	                                        "bin/hipcc.exe",
	                                        "bin/hipcc",
	                                        "bin/rocblas.dll",
	                                        "bin/amdhip64.dll",
	                                        "bin/amdhip64_6.dll",
	                                        "bin/amdhip64_7.dll",
	                                        "share/therock/therock_manifest.json",
	                                        NULL};
	const char *const *marks = o->windows ? win_marks : linux_marks;
	char h[PATH_MAX], name[256];

	for (size_t i = 0; marks[i] != NULL; i++)
		if (host(o, sys, marks[i], h, sizeof(h)) == 0 && exists(h))
			return 1;
	if (o->windows)
		return host(o, sys, "bin", h, sizeof(h)) == 0 &&
		       rocmd_disc_find_named(h, "amdhip64", ".dll", name, sizeof(name));
	/* The distribution layout has its runtime under lib/<triplet>. */
	if (host(o, sys, "lib", h, sizeof(h)) == 0) {
		struct rocmd_dir *d = rocmd_dir_open(h);
		struct rocmd_dirent *de;
		int found = 0;
		while (d != NULL && !found && (de = rocmd_dir_read(d)) != NULL) {
			char sub[PATH_MAX];
			if (strstr(de->d_name, "-linux-") == NULL)
				continue;
			rocmd_pathf(sub, sizeof(sub), "%s/%s", h, de->d_name);
			found =
			    rocmd_disc_find_named(sub, "libamdhip64.so", "", name, sizeof(name));
		}
		if (d != NULL)
			rocmd_dir_close(d);
		return found;
	}
	return 0;
}

static struct rocmd_sdk_found *
find_sdk(struct rocmd_sdk_scan *out, const char *path)
{
	for (size_t i = 0; i < out->nsdks; i++)
		if (strcmp(out->sdks[i].path, path) == 0)
			return &out->sdks[i];
	return NULL;
}

static void
add_alias(struct rocmd_sdk_found *f, const char *name, int *err)
{
	if (strcmp(f->path, name) == 0)
		return;
	if (f->aliases != NULL) {
		const char *p = f->aliases;
		size_t n = strlen(name);
		while ((p = strstr(p, name)) != NULL) {
			if ((p == f->aliases || p[-1] == '\n') && (p[n] == '\0' || p[n] == '\n'))
				return;
			p += n;
		}
	}
	rocmd_text_addf(&f->aliases, "%s", name);
	if (f->aliases == NULL)
		*err = ROCMD_ENOMEM;
}

/* Adds the install at canonical system path CANON, named SYS by its rule. */
static struct rocmd_sdk_found *
new_found(struct scan_ctx *s, const char *canon, const char *layout, const char *sys)
{
	struct rocmd_sdk_found *f, *grown;

	grown = realloc(s->out->sdks, (s->out->nsdks + 1) * sizeof(*grown));
	if (grown == NULL) {
		s->err = ROCMD_ENOMEM;
		return NULL;
	}
	s->out->sdks = grown;
	f = &grown[s->out->nsdks++];
	memset(f, 0, sizeof(*f));
	f->ver.source = -1;
	f->layout = layout;
	f->path = strdup(canon);
	if (f->path == NULL) {
		s->err = ROCMD_ENOMEM;
		return NULL;
	}
	add_alias(f, sys, &s->err);
	add_watch(s, canon);
	return f;
}

struct rocmd_sdk_found *
rocmd_disc_add_found(struct rocmd_disc *s, const char *sys, const char *layout, const char *origin)
{
	struct rocmd_sdk_found *f;
	char canon[PATH_MAX], h[PATH_MAX];
	int rc = rocmd_sysroot_resolve(root_of(s->o), sys, canon, sizeof(canon));

	if (rc == -ENOENT || rc == -ENOTDIR)
		return NULL;
	if (rc < 0) {
		rocmd_text_addf(&s->out->problems, "%s (%s): %s", sys, origin, rocmd_strerror(rc));
		return NULL;
	}
	if (host(s->o, canon, NULL, h, sizeof(h)) < 0 || !is_dir(h))
		return NULL;
	if ((f = find_sdk(s->out, canon)) != NULL) {
		add_alias(f, sys, &s->err);
		return NULL;
	}
	f = new_found(s, canon, layout, sys);
	if (f != NULL && (rc = rocmd_fs_dir_readable(h)) != 0) {
		f->unreadable = 1;
		rocmd_text_addf(&f->problems, "%s: cannot read folder: %s", canon, strerror(-rc));
		return NULL;
	}
	return f;
}

static void
examine(struct scan_ctx *s, const struct candidate *c)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	struct rocmd_sdk_found *f;
	char canon[PATH_MAX], h[PATH_MAX];
	int rc;

	rc = rocmd_sysroot_resolve(root_of(o), c->sys, canon, sizeof(canon));
	if (rc == -ELOOP) {
		rocmd_text_addf(&s->out->problems, "%s: symlink loop; skipped", c->sys);
		return;
	}
	if (rc == -ENOENT || rc == -ENOTDIR) {
		if (c->from_user)
			rocmd_text_addf(&s->out->problems, "%s (from %s): not found", c->sys,
			                c->origin);
		return;
	}
	if (rc < 0) {
		rocmd_text_addf(&s->out->problems, "%s: %s", c->sys, rocmd_strerror(rc));
		return;
	}
	if (host(o, canon, NULL, h, sizeof(h)) < 0 || !is_dir(h)) {
		if (c->from_user)
			rocmd_text_addf(&s->out->problems, "%s (from %s): not a folder", c->sys,
			                c->origin);
		return;
	}
	f = find_sdk(s->out, canon);
	if (f != NULL) {
		/* Another name for an install already seen: merge what it tells. */
		add_alias(f, c->sys, &s->err);
		if (c->envname[0] != '\0' || c->registry[0] != '\0') {
			if (c->envname[0] != '\0')
				snprintf(f->ver.found[ROCMD_VSRC_ENVNAME], ROCMD_VERSION_MAX, "%s",
				         c->envname);
			if (c->registry[0] != '\0')
				snprintf(f->ver.found[ROCMD_VSRC_REGISTRY], ROCMD_VERSION_MAX, "%s",
				         c->registry);
			rocmd_version_reconcile(&f->ver);
		}
		return;
	}
	if (rocmd_fs_dir_readable(h) == -EACCES)
		goto add_unreadable;
	if (!looks_like_sdk(o, canon)) {
		if (c->from_user)
			rocmd_text_addf(&s->out->problems, "%s (from %s): not a HIP SDK", c->sys,
			                c->origin);
		return;
	}
add_unreadable:
	f = new_found(s, canon, c->layout, c->sys);
	if (f == NULL)
		return;
	if ((rc = rocmd_fs_dir_readable(h)) != 0) {
		f->unreadable = 1;
		rocmd_text_addf(&f->problems, "%s: cannot read folder: %s", canon, strerror(-rc));
		return;
	}
	read_versions(s, c, f);
	rocmd_therock_examine(s, f);
	if (f->ver.problem[0] != '\0')
		rocmd_text_addf(&f->problems, "%s", f->ver.problem);
	if (o->windows) {
		examine_windows(s, f);
	} else {
		char sys[PATH_MAX];
		sys_join(canon, ".info", sys, sizeof(sys));
		add_watch(s, sys);
		sys_join(canon, "bin", sys, sizeof(sys));
		add_watch(s, sys);
		sys_join(canon, "lib", sys, sizeof(sys));
		add_watch(s, sys);
		examine_linux(s, f);
	}
	if (f->rocblas_dir != NULL)
		add_watch(s, f->rocblas_dir);
}

/* No hipBLASLt folder beside the binaries in BIN (host path): the folders its
 * loader would use are watched (each by its nearest existing ancestor), so
 * one that appears later (an SDK update adding hipBLASLt) is seen. */
static void
watch_hipblaslt_candidates(struct scan_ctx *s, const char *bin)
{
	char base[PATH_MAX], h[PATH_MAX], sys[PATH_MAX], *slash;
	const char *rel;
	size_t i;

	for (i = 0; i < ROCMD_HIPBLASLT_NREL; i++) {
		snprintf(base, sizeof(base), "%s", bin);
		for (rel = rocmd_hipblaslt_rel[i]; strncmp(rel, "../", 3) == 0; rel += 3) {
			if ((slash = strrchr(base, '/')) == NULL || slash == base)
				break;
			*slash = '\0';
		}
		if (strncmp(rel, "../", 3) == 0 ||
		    rocmd_pathf(h, sizeof(h), "%s/%s", base, rel) < 0)
			continue;
		to_sys(s->o, h, sys, sizeof(sys));
		add_watch(s, sys);
	}
}

/* hipBLASLt's library beside rocBLAS: the folder a runtime rule named, else
 * the one hipBLASLt's loader finds beside libhipblaslt in the rocBLAS
 * binary's folder; read like rocBLAS's, per-arch subfolders included. */
static void
inspect_hipblaslt(struct scan_ctx *s, struct rocmd_sdk_found *f)
{
	const struct rocmd_sdk_scan_opts *o = s->o;
	char h[PATH_MAX], bin[PATH_MAX], sys[PATH_MAX], why[1024];
	char *slash;
	int rc;

	if (f->hipblaslt_dir != NULL) {
		if (rocmd_sysroot_map(root_of(o), f->hipblaslt_dir, h, sizeof(h)) < 0)
			return;
	} else {
		if (f->rocblas_binary == NULL ||
		    rocmd_sysroot_map(root_of(o), f->rocblas_binary, bin, sizeof(bin)) < 0 ||
		    (slash = strrchr(bin, '/')) == NULL)
			return;
		*slash = '\0';
		if (rocmd_hipblaslt_locate(bin, o->windows, NULL, h, sizeof(h)) < 0) {
			watch_hipblaslt_candidates(s, bin);
			return;
		}
		to_sys(o, h, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hipblaslt_dir, sys, &s->err);
		if (s->err != 0)
			return;
	}
	add_watch(s, f->hipblaslt_dir);
	rc = rocmd_rocblas_inspect(h, o->lib_flags | ROCMD_ROCBLAS_ARCH_SUBDIRS, o->cache, &f->lt,
	                           why, sizeof(why));
	if (rc == ROCMD_ENOMEM) {
		s->err = rc;
		return;
	}
	if (rc < 0) {
		rocmd_text_addf(&f->problems, "hipBLASLt library: %s", why);
		return;
	}
	f->have_lt = 1;
}

static int
cmp_found(const void *a, const void *b)
{
	return strcmp(((const struct rocmd_sdk_found *)a)->path,
	              ((const struct rocmd_sdk_found *)b)->path);
}

int
rocmd_sdk_discover(const struct rocmd_sdk_scan_opts *o, struct rocmd_sdk_scan *out)
{
	struct scan_ctx *s = calloc(1, sizeof(*s));
	int err;

	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return ROCMD_ENOMEM;
	s->o = o;
	s->out = out;
	if (o->windows)
		windows_candidates(s);
	else
		linux_candidates(s);
	for (size_t i = 0; o->extra_roots != NULL && o->extra_roots[i] != NULL; i++)
		add_candidate(s, o->extra_roots[i], "config", origin_name(s, "config"), 1);
	/* Rules that name a canonical folder first, so aliases attach to it. */
	for (size_t i = 0; i < s->ncand && s->err == 0; i++)
		if (strcmp(s->cand[i].layout, "env") != 0 &&
		    strcmp(s->cand[i].sys, "/opt/rocm") != 0)
			examine(s, &s->cand[i]);
	for (size_t i = 0; i < s->ncand && s->err == 0; i++)
		if (strcmp(s->cand[i].layout, "env") == 0 ||
		    strcmp(s->cand[i].sys, "/opt/rocm") == 0)
			examine(s, &s->cand[i]);
	if (s->err == 0)
		rocmd_runtime_discover(s);
	for (size_t i = 0; i < out->nsdks && s->err == 0; i++)
		if (!out->sdks[i].unreadable)
			inspect_hipblaslt(s, &out->sdks[i]);
	if (out->nsdks > 1)
		qsort(out->sdks, out->nsdks, sizeof(*out->sdks), cmp_found);
	err = s->err;
	free(s);
	return err;
}

void
rocmd_sdk_scan_free(struct rocmd_sdk_scan *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nsdks; i++) {
		struct rocmd_sdk_found *f = &s->sdks[i];
		free(f->path);
		free(f->aliases);
		free(f->hip_runtime);
		free(f->hiprtc);
		free(f->rocblas_binary);
		free(f->rocblas_dir);
		free(f->release_from);
		free(f->owner_record);
		free(f->built_for);
		free(f->kpack_archs);
		free(f->hipblaslt_dir);
		free(f->packages);
		rocmd_rocblas_lib_free(&f->lib);
		rocmd_rocblas_lib_free(&f->lt);
		free(f->problems);
	}
	free(s->sdks);
	free(s->problems);
	for (size_t i = 0; i < s->nwatch; i++)
		free(s->watch[i]);
	free(s->watch);
	memset(s, 0, sizeof(*s));
}

static void
add_str_or_null(cJSON *o, const char *key, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

cJSON *
rocmd_sdk_found_to_json(const struct rocmd_sdk_found *f, int files)
{
	cJSON *o = cJSON_CreateObject(), *a;

	cJSON_AddStringToObject(o, "path", f->path);
	a = cJSON_AddArrayToObject(o, "aliases");
	for (const char *p = f->aliases; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		char *item = strndup(p, n);
		if (item != NULL)
			cJSON_AddItemToArray(a, cJSON_CreateString(item));
		free(item);
		p = nl != NULL ? nl + 1 : NULL;
	}
	cJSON_AddStringToObject(o, "layout", f->layout);
	cJSON_AddStringToObject(o, "state", f->unreadable ? "unreadable" : "present");
	cJSON_AddItemToObject(o, "version", rocmd_version_to_json(&f->ver));
	add_str_or_null(o, "hip_runtime", f->hip_runtime);
	if (f->hiprtc != NULL)
		cJSON_AddStringToObject(o, "hiprtc", f->hiprtc);
	add_str_or_null(o, "rocblas_binary", f->rocblas_binary);
	if (f->have_lib) {
		cJSON *lib = rocmd_rocblas_lib_to_json(&f->lib, files);
		cJSON_ReplaceItemInObject(lib, "dir", cJSON_CreateString(f->rocblas_dir));
		cJSON_AddItemToObject(o, "rocblas", lib);
	} else {
		cJSON_AddNullToObject(o, "rocblas");
	}
	if (f->have_lt) {
		cJSON *lt = rocmd_rocblas_lib_to_json(&f->lt, files);
		cJSON_ReplaceItemInObject(lt, "dir", cJSON_CreateString(f->hipblaslt_dir));
		cJSON_AddItemToObject(o, "hipblaslt", lt);
	}
	rocmd_runtime_to_json(f, o);
	add_str_or_null(o, "problems", f->problems);
	return o;
}
