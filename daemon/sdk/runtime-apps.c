/*
 * Applications' private ROCm runtimes (runtime-discover.h), where their
 * packaging puts them (docs/LAYOUTS.md):
 *   ollama     lib/ollama/rocm (and rocm_vN): ollama's CMakeLists.txt installs ggml-hip
 *              with its runtime dependencies (librocblas, libamdhip64, ...)
 *              and the SDK's rocblas/ folder there; /usr/lib/ollama and
 *              /usr/local/lib/ollama on Linux,
 *              %LOCALAPPDATA%\Programs\Ollama\lib\ollama on Windows;
 *   lmstudio   ~/.lmstudio/extensions/backends/vendor/<pack named *rocm*>: a pack
 *              holding a rocBLAS with rocblas/library beside it;
 *   llama.cpp  a ROCm build's folder, llama-server(.exe) beside rocblas.dll
 *              (librocblas.so) and rocblas/library, under sdk.runtime_roots.
 * Each is watched, and its rocBLAS library read, like an SDK's.
 */
#include "runtime-discover.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/fs.h"
#include "common/text.h"

/* Whether host folder H holds a rocBLAS binary. */
static int
has_rocblas(const struct rocmd_disc *s, const char *h)
{
	char name[256], p[PATH_MAX];

	if (s->o->windows) {
		rocmd_pathf(p, sizeof(p), "%s/rocblas.dll", h);
		return rocmd_disc_exists(p);
	}
	return rocmd_disc_find_named(h, "librocblas.so", "", name, sizeof(name));
}

/* The runtime at system folder SYS: its own files, or those of the first
 * child folder holding a rocBLAS (a runtime pack's lib/ or bin/). */
static void
add_app(struct rocmd_disc *s, const char *sys, const char *layout, const char *origin)
{
	char h[PATH_MAX], ch[PATH_MAX];
	struct rocmd_sdk_found *f;
	struct rocmd_dirent *de;
	struct rocmd_dir *d;
	int done = 0;

	if ((f = rocmd_disc_add_found(s, sys, layout, origin)) == NULL ||
	    rocmd_disc_host(s, f->path, NULL, h, sizeof(h)) < 0)
		return;
	if (has_rocblas(s, h)) {
		rocmd_disc_runtime_files(s, f, h);
		return;
	}
	if ((d = rocmd_dir_open(h)) != NULL) {
		while (!done && (de = rocmd_dir_read(d)) != NULL) {
			struct rocmd_fsinfo st;
			if (de->d_name[0] == '.')
				continue;
			rocmd_pathf(ch, sizeof(ch), "%s/%s", h, de->d_name);
			if (rocmd_fsinfo_get(ch, 0, &st) == 0 && st.type == ROCMD_FS_DIR &&
			    has_rocblas(s, ch)) {
				rocmd_disc_runtime_files(s, f, ch);
				done = 1;
			}
		}
		rocmd_dir_close(d);
	}
	if (!done)
		rocmd_text_addf(&f->problems, "no rocBLAS in this %s runtime", layout);
}

/* Children of system folder DIR whose names contain NEEDLE, as LAYOUT. */
static void
each_runtime(struct rocmd_disc *s, const char *dir, const char *needle, const char *layout,
             const char *origin)
{
	char h[PATH_MAX], ch[PATH_MAX], sys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;

	if (rocmd_disc_host(s, dir, NULL, h, sizeof(h)) < 0 || (d = rocmd_dir_open(h)) == NULL)
		return;
	/* Only a folder that exists: a missing one would be covered by watching
	 * its nearest ancestor, a home folder, and every change there rescan. */
	rocmd_disc_watch(s, dir);
	while ((de = rocmd_dir_read(d)) != NULL) {
		struct rocmd_fsinfo st;
		if (strstr(de->d_name, needle) == NULL)
			continue;
		rocmd_pathf(ch, sizeof(ch), "%s/%s", h, de->d_name);
		if (rocmd_fsinfo_get(ch, 0, &st) < 0 || st.type != ROCMD_FS_DIR)
			continue;
		rocmd_disc_join(dir, de->d_name, sys, sizeof(sys));
		add_app(s, sys, layout, origin);
	}
	rocmd_dir_close(d);
}

int
rocmd_apps_llamacpp(struct rocmd_disc *s, const char *dir)
{
	char h[PATH_MAX], p[PATH_MAX];

	if (rocmd_disc_host(s, dir, NULL, h, sizeof(h)) < 0)
		return 0;
	rocmd_pathf(p, sizeof(p), "%s/%s", h, s->o->windows ? "llama-server.exe" : "llama-server");
	if (!rocmd_disc_exists(p) || !has_rocblas(s, h))
		return 0;
	add_app(s, dir, "llama.cpp", "sdk.runtime_roots");
	return 1;
}

void
rocmd_apps_discover(struct rocmd_disc *s, char *const *homes)
{
	char p[PATH_MAX];

	if (!s->o->windows) {
		each_runtime(s, "/usr/lib/ollama", "rocm", "ollama", "ollama");
		each_runtime(s, "/usr/local/lib/ollama", "rocm", "ollama", "ollama");
	}
	for (size_t i = 0; homes[i] != NULL; i++) {
		if (s->o->windows) {
			rocmd_disc_join(homes[i], "AppData\\Local\\Programs\\Ollama\\lib\\ollama",
			                p, sizeof(p));
			if (rocmd_disc_real_below(s, homes[i], p))
				each_runtime(s, p, "rocm", "ollama", "ollama");
		}
		rocmd_disc_join(homes[i],
		                s->o->windows ? ".lmstudio\\extensions\\backends\\vendor"
		                              : ".lmstudio/extensions/backends/vendor",
		                p, sizeof(p));
		if (rocmd_disc_real_below(s, homes[i], p))
			each_runtime(s, p, "rocm", "lmstudio", "LM Studio");
	}
}
