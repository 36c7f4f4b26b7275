/*
 * TheRock tarball installs (runtime-discover.h). A tarball unpacks to an
 * install prefix (bin/ lib/ include/ share/ .kpack/); what says it is
 * TheRock's is share/therock/therock_manifest.json, written by TheRock's
 * build_tools/generate_therock_manifest.py, and share/therock/dist_info.json
 * names the GPU targets it was built for (dist_amdgpu_targets). The same
 * two files sit in the rocm-sdk-core wheel's package folder, so
 * runtime-python.c reads its version here too.
 */
#include "runtime-discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/text.h"

void
rocmd_therock_version(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *root)
{
	static const char *const keys[] = {"rocm_package_version", "rocm_version", NULL};
	char h[PATH_MAX], sys[PATH_MAX], ver[ROCMD_VERSION_MAX], rel[64];
	cJSON *j;

	if (rocmd_disc_host(s, root, "share/therock/therock_manifest.json", h, sizeof(h)) < 0 ||
	    !rocmd_disc_exists(h))
		return;
	rocmd_disc_join(root,
	                s->o->windows ? "share\\therock\\therock_manifest.json"
	                              : "share/therock/therock_manifest.json",
	                sys, sizeof(sys));
	if ((j = rocmd_runtime_read_json(h)) == NULL) {
		rocmd_text_addf(&f->problems, "%s is not JSON", sys);
		return;
	}
	for (size_t i = 0; keys[i] != NULL; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
		if (!cJSON_IsString(v))
			continue;
		if (rocmd_version_release(v->valuestring, ver, sizeof(ver), rel, sizeof(rel)) < 0) {
			rocmd_text_addf(&f->problems, "%s: %s \"%.40s\" is not a ROCm release", sys,
			                keys[i], v->valuestring);
			continue;
		}
		snprintf(f->ver.found[ROCMD_VSRC_THEROCK], ROCMD_VERSION_MAX, "%s", ver);
		if (f->release[0] == '\0') {
			snprintf(f->release, sizeof(f->release), "%s", rel);
			rocmd_disc_set_str(&f->release_from, sys, &s->err);
		}
		break;
	}
	cJSON_Delete(j);
	rocmd_version_reconcile(&f->ver);
}

/* dist_info.json's dist_amdgpu_targets under system path ROOT, or nothing. */
static void
read_targets(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *root)
{
	char h[PATH_MAX];
	const cJSON *t;
	cJSON *j;

	if (rocmd_disc_host(s, root, "share/therock/dist_info.json", h, sizeof(h)) < 0 ||
	    (j = rocmd_runtime_read_json(h)) == NULL)
		return;
	t = cJSON_GetObjectItemCaseSensitive(j, "dist_amdgpu_targets");
	if (cJSON_IsString(t) && t->valuestring[0] != '\0')
		rocmd_disc_set_str(&f->built_for, t->valuestring, &s->err);
	cJSON_Delete(j);
}

/* The .kpack archives in host folder H: counted, and the archs of each
 * one's table of contents gathered (runtime-kpack.c). */
static void
read_kpack(struct rocmd_sdk_found *f, const char *h)
{
	struct rocmd_dirent *de;
	struct rocmd_dir *d = rocmd_dir_open(h);

	while (d != NULL && (de = rocmd_dir_read(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char p[PATH_MAX], why[256];
		if (len <= 6 || strcmp(de->d_name + len - 6, ".kpack") != 0)
			continue;
		f->nkpack++;
		rocmd_pathf(p, sizeof(p), "%s/%s", h, de->d_name);
		if (rocmd_kpack_archs(p, &f->kpack_archs, why, sizeof(why)) < 0)
			rocmd_text_addf(&f->problems, ".kpack/%s: %s", de->d_name, why);
	}
	if (d != NULL)
		rocmd_dir_close(d);
}

void
rocmd_therock_examine(struct rocmd_disc *s, struct rocmd_sdk_found *f)
{
	const char *lt = s->o->windows ? "bin\\hipblaslt\\library" : "lib/hipblaslt/library";
	char h[PATH_MAX], sys[PATH_MAX];

	if (rocmd_disc_host(s, f->path, "share/therock/therock_manifest.json", h, sizeof(h)) < 0 ||
	    !rocmd_disc_exists(h))
		return;
	f->layout = "therock";
	if (f->ver.found[ROCMD_VSRC_THEROCK][0] == '\0')
		rocmd_therock_version(s, f, f->path);
	read_targets(s, f, f->path);
	if (rocmd_disc_host(s, f->path, ".kpack", h, sizeof(h)) == 0 && rocmd_disc_is_dir(h))
		read_kpack(f, h);
	if (rocmd_disc_host(s, f->path, lt, h, sizeof(h)) == 0 && rocmd_disc_is_dir(h)) {
		rocmd_disc_join(f->path, lt, sys, sizeof(sys));
		rocmd_disc_set_str(&f->hipblaslt_dir, sys, &s->err);
	}
}
