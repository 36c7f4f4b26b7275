/*
 * Python environments holding ROCm (runtime-discover.h), in the layouts of
 * their packaging sources (docs/LAYOUTS.md):
 *   TheRock's wheels (build_tools/packaging/python/templates/): rocm-sdk-core
 *   installs package folder _rocm_sdk_core* (bin/ lib/ share/therock/), and
 *   rocm-sdk-libraries installs _rocm_sdk_libraries* whose lib/ (bin\ on
 *   Windows) holds librocblas / rocblas.dll with rocblas/library and
 *   hipblaslt/library, which the rocm-sdk-device-gfxNNNN wheels fill;
 *   a PyTorch ROCm wheel: torch/lib holds librocblas.so / rocblas.dll with
 *   rocblas/library beside it, and torch/version.py names its HIP.
 * Each wheel's <name>-<version>.dist-info folder gives its version (METADATA)
 * and pip's RECORD, its owner. An environment is a venv (pyvenv.cfg) or a
 * conda environment; its site-packages is lib/python3.N/site-packages, or
 * Lib\site-packages on Windows.
 */
#include "runtime-discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/text.h"

#define META_MAX 8192

struct site {
	char core[256], libs[256];                            /* package folders */
	char core_info[256], libs_info[256], torch_info[256]; /* dist-info folders */
	int torch;
	char *packages; /* "name version" of each ROCm wheel, per line */
};

static int
has_suffix(const char *s, const char *sfx)
{
	size_t n = strlen(s), k = strlen(sfx);

	return n > k && strcmp(s + n - k, sfx) == 0;
}

/* True for a real folder (not a link) at host path H. */
static int
real_dir(const char *h)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(h, 0, &st) == 0 && st.type == ROCMD_FS_DIR;
}

/* "rocm_sdk_core-7.10.0.dist-info" as "rocm_sdk_core 7.10.0" on SITE's list. */
static void
note_package(struct site *site, const char *info)
{
	const char *dash = strchr(info, '-');
	size_t n = strlen(info) - strlen(".dist-info");

	if (dash != NULL)
		rocmd_text_addf(&site->packages, "%.*s %.*s", (int)(dash - info), info,
		                (int)(n - (size_t)(dash - info) - 1), dash + 1);
}

/* Copies folder name N to DST when it fits (a longer one is no wheel's). */
static void
keep(char *dst, size_t len, const char *n)
{
	size_t k = strlen(n);

	if (k < len)
		memcpy(dst, n, k + 1);
}

static void
list_site(const char *sp_h, struct site *site)
{
	struct rocmd_dirent *de;
	struct rocmd_dir *d = rocmd_dir_open(sp_h);

	while (d != NULL && (de = rocmd_dir_read(d)) != NULL) {
		const char *n = de->d_name;
		int info = has_suffix(n, ".dist-info");
		if (!info && strncmp(n, "_rocm_sdk_core", 14) == 0 && site->core[0] == '\0')
			keep(site->core, sizeof(site->core), n);
		else if (!info && strncmp(n, "_rocm_sdk_libraries", 19) == 0 &&
		         site->libs[0] == '\0')
			keep(site->libs, sizeof(site->libs), n);
		else if (!info && strcmp(n, "torch") == 0)
			site->torch = 1;
		else if (info && strncmp(n, "rocm_sdk_core-", 14) == 0)
			keep(site->core_info, sizeof(site->core_info), n);
		else if (info && strncmp(n, "rocm_sdk_libraries", 18) == 0)
			keep(site->libs_info, sizeof(site->libs_info), n);
		else if (info && strncmp(n, "torch-", 6) == 0)
			keep(site->torch_info, sizeof(site->torch_info), n);
		if (info && (strncmp(n, "rocm", 4) == 0 || strncmp(n, "torch-", 6) == 0))
			note_package(site, n);
	}
	if (d != NULL)
		rocmd_dir_close(d);
}

/* pip's RECORD in dist-info folder INFO of site-packages SP: the owner. */
static void
note_owner(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *sp, const char *info)
{
	char rel[512], h[PATH_MAX], sys[PATH_MAX];

	if (info[0] == '\0')
		return;
	snprintf(rel, sizeof(rel), "%s/RECORD", info);
	if (rocmd_disc_host(s, sp, rel, h, sizeof(h)) < 0 || !rocmd_disc_exists(h))
		return;
	rocmd_disc_join(sp, rel, sys, sizeof(sys));
	f->owner = "pip";
	rocmd_disc_set_str(&f->owner_record, sys, &s->err);
}

/* The "Version:" of dist-info folder INFO's METADATA into source WHEEL. */
static void
wheel_version(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *sp, const char *info)
{
	char rel[512], h[PATH_MAX], buf[META_MAX], ver[ROCMD_VERSION_MAX], relname[64];
	const char *line;

	snprintf(rel, sizeof(rel), "%s/METADATA", info);
	if (info[0] == '\0' || rocmd_disc_host(s, sp, rel, h, sizeof(h)) < 0 ||
	    rocmd_disc_read_small(h, buf, sizeof(buf)) < 0)
		return;
	for (line = buf; line != NULL; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "Version:", 8) != 0)
			continue;
		line += 8;
		while (*line == ' ')
			line++;
		if (rocmd_version_release(line, ver, sizeof(ver), relname, sizeof(relname)) == 0 ||
		    rocmd_version_normalize(line, 0, ver, sizeof(ver)) == 0) {
			snprintf(f->ver.found[ROCMD_VSRC_WHEEL], ROCMD_VERSION_MAX, "%s", ver);
			if (f->release[0] == '\0' && relname[0] != '\0') {
				char sys[PATH_MAX];
				snprintf(f->release, sizeof(f->release), "%s", relname);
				rocmd_disc_join(sp, rel, sys, sizeof(sys));
				rocmd_disc_set_str(&f->release_from, sys, &s->err);
			}
		}
		break;
	}
}

static void
set_hipblaslt(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *bin_sys)
{
	char h[PATH_MAX], sys[PATH_MAX];

	rocmd_disc_join(bin_sys, s->o->windows ? "hipblaslt\\library" : "hipblaslt/library", sys,
	                sizeof(sys));
	if (rocmd_disc_host(s, sys, NULL, h, sizeof(h)) == 0 && rocmd_disc_is_dir(h))
		rocmd_disc_set_str(&f->hipblaslt_dir, sys, &s->err);
}

static void
finish_version(struct rocmd_sdk_found *f)
{
	rocmd_version_reconcile(&f->ver);
	if (f->ver.problem[0] != '\0')
		rocmd_text_addf(&f->problems, "%s", f->ver.problem);
}

/* TheRock's wheels in site-packages SP. */
static void
add_wheels(struct rocmd_disc *s, const char *sp, const struct site *site, const char *origin)
{
	const char *bin = s->o->windows ? "bin" : "lib";
	char pkg[PATH_MAX], core[PATH_MAX], bin_sys[PATH_MAX], h[PATH_MAX], name[256];
	struct rocmd_sdk_found *f;

	rocmd_disc_join(sp, site->libs[0] != '\0' ? site->libs : site->core, pkg, sizeof(pkg));
	if ((f = rocmd_disc_add_found(s, pkg, "rocm-wheels", origin)) == NULL)
		return;
	rocmd_disc_join(pkg, bin, bin_sys, sizeof(bin_sys));
	if (site->libs[0] != '\0' && rocmd_disc_host(s, bin_sys, NULL, h, sizeof(h)) == 0) {
		rocmd_disc_runtime_files(s, f, h);
		set_hipblaslt(s, f, bin_sys);
	} else {
		rocmd_text_addf(&f->problems, "no rocm-sdk-libraries wheel: no rocBLAS here");
	}
	if (site->core[0] != '\0') {
		rocmd_disc_join(sp, site->core, core, sizeof(core));
		rocmd_therock_version(s, f, core);
		rocmd_disc_join(core, bin, bin_sys, sizeof(bin_sys));
		if (rocmd_disc_host(s, bin_sys, NULL, h, sizeof(h)) == 0 &&
		    rocmd_disc_find_named(h, s->o->windows ? "amdhip64" : "libamdhip64.so",
		                          s->o->windows ? ".dll" : "", name, sizeof(name))) {
			char sys[PATH_MAX];
			rocmd_disc_join(bin_sys, name, sys, sizeof(sys));
			rocmd_disc_set_str(&f->hip_runtime, sys, &s->err);
		}
	}
	wheel_version(s, f, sp, site->core_info);
	finish_version(f);
	note_owner(s, f, sp, site->libs_info[0] != '\0' ? site->libs_info : site->core_info);
	if (site->packages != NULL)
		rocmd_disc_set_str(&f->packages, site->packages, &s->err);
}

/* torch/version.py's hip = '6.2.41134-65d174c3e' (None on other builds). */
static void
torch_version(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *torch)
{
	char h[PATH_MAX], buf[META_MAX];

	if (rocmd_disc_host(s, torch, "version.py", h, sizeof(h)) < 0 ||
	    rocmd_disc_read_small(h, buf, sizeof(buf)) < 0)
		return;
	for (char *line = buf; line != NULL;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char *eq, *q, *end;
		if (strncmp(line, "hip", 3) != 0 ||
		    (line[3] != ' ' && line[3] != ':' && line[3] != '='))
			continue;
		if ((eq = strchr(line, '=')) == NULL)
			continue;
		for (q = eq + 1; *q == ' '; q++)
			;
		if ((*q != '\'' && *q != '"') || (end = strchr(q + 1, *q)) == NULL)
			continue;
		*end = '\0';
		rocmd_version_normalize(q + 1, 1, f->ver.found[ROCMD_VSRC_TORCH],
		                        ROCMD_VERSION_MAX);
		break;
	}
}

/* A PyTorch ROCm wheel in site-packages SP: one carrying its own rocBLAS. */
static void
add_torch(struct rocmd_disc *s, const char *sp, const struct site *site, const char *origin)
{
	char torch[PATH_MAX], lib[PATH_MAX], h[PATH_MAX], name[256];
	struct rocmd_sdk_found *f;

	rocmd_disc_join(sp, "torch", torch, sizeof(torch));
	rocmd_disc_join(torch, "lib", lib, sizeof(lib));
	if (rocmd_disc_host(s, lib, NULL, h, sizeof(h)) < 0)
		return;
	if (s->o->windows) {
		char dll[PATH_MAX];
		rocmd_pathf(dll, sizeof(dll), "%s/rocblas.dll", h);
		if (!rocmd_disc_exists(dll))
			return;
	} else if (!rocmd_disc_find_named(h, "librocblas.so", "", name, sizeof(name))) {
		return; /* a CUDA or CPU build, or one using the rocm-sdk wheels */
	}
	if ((f = rocmd_disc_add_found(s, torch, "torch", origin)) == NULL)
		return;
	rocmd_disc_runtime_files(s, f, h);
	set_hipblaslt(s, f, lib);
	torch_version(s, f, torch);
	finish_version(f);
	note_owner(s, f, sp, site->torch_info);
	if (site->packages != NULL)
		rocmd_disc_set_str(&f->packages, site->packages, &s->err);
}

static void
examine_site(struct rocmd_disc *s, const char *sp, const char *origin)
{
	struct site site;
	char h[PATH_MAX];

	memset(&site, 0, sizeof(site));
	if (rocmd_disc_host(s, sp, NULL, h, sizeof(h)) < 0 || !real_dir(h))
		return;
	rocmd_disc_watch(s, sp);
	list_site(h, &site);
	if (site.core[0] != '\0' || site.libs[0] != '\0')
		add_wheels(s, sp, &site, origin);
	if (site.torch)
		add_torch(s, sp, &site, origin);
	free(site.packages);
}

/* Every child of system folder DIR whose name starts with PREFIX ("" for
 * all) and that is a real folder, handed to FN. */
static void
each_dir(struct rocmd_disc *s, const char *dir, const char *prefix, const char *origin,
         void (*fn)(struct rocmd_disc *, const char *, const char *))
{
	char h[PATH_MAX], ch[PATH_MAX], sys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;

	if (rocmd_disc_host(s, dir, NULL, h, sizeof(h)) < 0 || (d = rocmd_dir_open(h)) == NULL)
		return;
	while ((de = rocmd_dir_read(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		    strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rocmd_pathf(ch, sizeof(ch), "%s/%s", h, de->d_name);
		if (!real_dir(ch))
			continue;
		rocmd_disc_join(dir, de->d_name, sys, sizeof(sys));
		fn(s, sys, origin);
	}
	rocmd_dir_close(d);
}

/* python3.N/site-packages under system folder LIB. */
static void
python_lib(struct rocmd_disc *s, const char *pydir, const char *origin)
{
	char sp[PATH_MAX];

	rocmd_disc_join(pydir, "site-packages", sp, sizeof(sp));
	examine_site(s, sp, origin);
}

void
rocmd_python_env(struct rocmd_disc *s, const char *env, const char *origin)
{
	char lib[PATH_MAX];

	if (s->o->windows) {
		rocmd_disc_join(env, "Lib\\site-packages", lib, sizeof(lib));
		if (rocmd_disc_real_below(s, env, lib))
			examine_site(s, lib, origin);
		return;
	}
	rocmd_disc_join(env, "lib", lib, sizeof(lib));
	if (rocmd_disc_real_below(s, env, lib))
		each_dir(s, lib, "python3", origin, python_lib);
}

static void
env_fn(struct rocmd_disc *s, const char *env, const char *origin)
{
	rocmd_python_env(s, env, origin);
}

void
rocmd_python_discover(struct rocmd_disc *s, char *const *homes)
{
	for (size_t i = 0; homes[i] != NULL; i++) {
		const char *home = homes[i];
		char p[PATH_MAX];
		each_dir(s, home, ".venv", "home", env_fn);
		each_dir(s, home, "venv", "home", env_fn);
		rocmd_disc_join(home, ".virtualenvs", p, sizeof(p));
		if (rocmd_disc_real_below(s, home, p))
			each_dir(s, p, "", "home", env_fn);
		for (int k = 0; k < 2; k++) {
			const char *conda = k == 0 ? "miniconda3" : "anaconda3";
			char envs[PATH_MAX];
			rocmd_disc_join(home, conda, p, sizeof(p));
			if (!rocmd_disc_real_below(s, home, p))
				continue;
			rocmd_python_env(s, p, "home");
			rocmd_disc_join(p, "envs", envs, sizeof(envs));
			if (rocmd_disc_real_below(s, p, envs))
				each_dir(s, envs, "", "home", env_fn);
		}
		rocmd_disc_join(home, s->o->windows ? "AppData\\Roaming\\Python" : ".local/lib", p,
		                sizeof(p));
		if (rocmd_disc_real_below(s, home, p))
			each_dir(s, p, s->o->windows ? "Python3" : "python3", "home", python_lib);
	}
}
