/*
 * doctor's checks of the caller's environment (doctor.h), as rocmctl sends
 * it: HSA_OVERRIDE_GFX_VERSION (Linux's ROCm runtime reads it and treats
 * every GPU as the arch it names; the HIP SDK for Windows does not read it),
 * HIP_VISIBLE_DEVICES left unset where HIP's device 0 is an integrated GPU
 * beside a discrete one, and ROCBLAS_TENSILE_LIBPATH naming a folder that is
 * missing, holds no Tensile library, lacks a GPU's arch, is neither an SDK's
 * library nor its overlay, or is an overlay deployed for another version of
 * its SDK. Nothing here can be fixed by the daemon: the fix is the user's
 * shell or service file. The table of checks of the machine and the caller
 * also holds those of doctor-feeds.c and doctor-override.c.
 */
#include "doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/rocblas-library.h"
#include "daemon/sdk/sysroot.h"

/* "11.0.0" -> "gfx1100", "9.0.10" -> "gfx90a"; -1 when it is no X.Y.Z. */
static int
override_arch(const char *v, char *out, size_t len, int *major)
{
	unsigned a, b, c;
	char tail;

	if (sscanf(v, "%u.%u.%u%c", &a, &b, &c, &tail) != 3 || a > 99 || b > 15 || c > 15)
		return -1;
	*major = (int)a;
	deploy_fmt(out, len, "gfx%u%u%x", a, b, c);
	return 0;
}

static void
evidence_gpus(const struct doctor *d, cJSON *ev)
{
	cJSON *a = cJSON_AddArrayToObject(ev, "gpus");

	for (int i = 0; i < d->ngpus; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "hip_device", i);
		cJSON_AddStringToObject(o, "arch", d->gpus[i].arch);
		cJSON_AddStringToObject(o, "name", d->gpus[i].name);
		cJSON_AddStringToObject(o, "kind", d->gpus[i].igpu ? "igpu" : "dgpu");
		cJSON_AddItemToArray(a, o);
	}
}

static void
check_hsa_override(struct doctor *d)
{
	const char *v = d->env.hsa_override;
	char arch[32];
	int major = 0;
	cJSON *ev;

	if (v == NULL)
		return;
	if (strcmp(d->env.platform, "windows") == 0) {
		ev = doctor_add(d, "hsa-override", DOCTOR_INFO, NULL, DOCTOR_FIX_NONE,
		                "unset it: on Windows the GPU's arch is the one the driver reports",
		                "HSA_OVERRIDE_GFX_VERSION=%s is set, but it has no effect on "
		                "Windows: the HIP SDK for Windows does not read it",
		                v);
		cJSON_AddStringToObject(ev, "HSA_OVERRIDE_GFX_VERSION", v);
		return;
	}
	if (override_arch(v, arch, sizeof(arch), &major) < 0) {
		ev = doctor_add(d, "hsa-override", DOCTOR_ERROR, NULL, DOCTOR_FIX_NONE,
		                "unset HSA_OVERRIDE_GFX_VERSION, or give it as X.Y.Z (11.0.0)",
		                "HSA_OVERRIDE_GFX_VERSION=%s is not a version (X.Y.Z) the ROCm "
		                "runtime reads",
		                v);
		cJSON_AddStringToObject(ev, "HSA_OVERRIDE_GFX_VERSION", v);
		return;
	}
	for (int i = 0; i < d->ngpus; i++) {
		const struct doctor_gpu *g = &d->gpus[i];
		int crash = strcmp(g->arch, "gfx1103") == 0 && major != 11;
		if (strcmp(g->arch, arch) == 0)
			continue;
		ev = doctor_add(
		    d, "hsa-override", crash ? DOCTOR_ERROR : DOCTOR_WARNING, NULL, DOCTOR_FIX_NONE,
		    crash ? "unset HSA_OVERRIDE_GFX_VERSION and deploy a package built for gfx1103 "
		            "(rocmctl lib deploy); where one is not to be had, 11.0.0 is the value "
		            "that works on the 780M for some"
		          : "unset HSA_OVERRIDE_GFX_VERSION once a library for the GPU's own arch is "
		            "deployed (rocmctl lib deploy)",
		    "HSA_OVERRIDE_GFX_VERSION=%s makes HIP treat the %s (%s) as %s: programs run "
		    "%s's code objects and rocBLAS loads %s's kernels on it%s",
		    v, g->name[0] ? g->name : "GPU", g->arch, arch, arch, arch,
		    crash ? "; on the gfx1103 (Radeon 780M) an override to another generation, "
		            "10.3.0 above all, is known to crash programs"
		          : "");
		cJSON_AddStringToObject(ev, "HSA_OVERRIDE_GFX_VERSION", v);
		cJSON_AddStringToObject(ev, "treated_as", arch);
		cJSON_AddStringToObject(ev, "gpu_arch", g->arch);
		cJSON_AddStringToObject(ev, "gpu_name", g->name);
	}
}

static void
check_hip_visible(struct doctor *d)
{
	char fix[256];
	int dgpu = -1;
	cJSON *ev;

	if (d->env.hip_visible != NULL || d->ngpus < 2 || !d->gpus[0].igpu)
		return;
	for (int i = 0; i < d->ngpus && dgpu < 0; i++)
		if (!d->gpus[i].igpu)
			dgpu = i;
	if (dgpu < 0)
		return;
	deploy_fmt(fix, sizeof(fix), "export HIP_VISIBLE_DEVICES=%d (the %s), or pick the device "
	           "in the program", dgpu, d->gpus[dgpu].name[0] ? d->gpus[dgpu].name : "GPU");
	ev = doctor_add(d, "hip-visible-devices", DOCTOR_WARNING, NULL, DOCTOR_FIX_NONE, fix,
	                "%d GPUs and HIP_VISIBLE_DEVICES is not set: HIP's device 0, which most "
	                "programs use, is the integrated %s (%s), not the %s (%s)",
	                d->ngpus, d->gpus[0].name[0] ? d->gpus[0].name : "GPU", d->gpus[0].arch,
	                d->gpus[dgpu].name[0] ? d->gpus[dgpu].name : "GPU", d->gpus[dgpu].arch);
	evidence_gpus(d, ev);
}

/* Whether system path P names target DT's library folder or its overlay. */
static int
known_library(const struct doctor_target *dt, const char *p)
{
	return strcmp(dt->t.sys_lib, p) == 0 || (dt->overlay_lib[0] && strcmp(dt->overlay_lib, p) == 0);
}

/* ROCBLAS_TENSILE_LIBPATH V names DT's overlay: a package deployed there for
 * the SDK's version then, not the one installed now, or built for another
 * SDK generation. */
static void
check_overlay(struct doctor *d, const struct doctor_target *dt, const char *v)
{
	const struct doctor_target *ov = dt->overlay;
	char gen[16], pgen[16], why[512];
	cJSON *ev;

	if (ov == NULL || strcmp(dt->overlay_lib, v) != 0 || dt->t.sdk_version[0] == '\0')
		return;
	if (ov->deployed_sdk[0] && strcmp(ov->deployed_sdk, dt->t.sdk_version) != 0)
		deploy_fmt(why, sizeof(why),
		           "was deployed there for SDK %s, but the SDK at %s is %s "
		           "now",
		           ov->deployed_sdk, dt->t.sdk_path, dt->t.sdk_version);
	else if (ov->pkg_sdk[0] && rocmd_sdk_generation(ov->pkg_sdk, pgen, sizeof(pgen)) == 0 &&
	         rocmd_sdk_generation(dt->t.sdk_version, gen, sizeof(gen)) == 0 &&
	         strcmp(gen, pgen) != 0)
		deploy_fmt(why, sizeof(why), "was built for SDK %s, but the SDK at %s is %s",
		           ov->pkg_sdk, dt->t.sdk_path, dt->t.sdk_version);
	else
		return;
	ev =
	    doctor_add(d, "tensile-libpath", DOCTOR_WARNING, NULL, DOCTOR_FIX_NONE,
	               "deploy the package that matches the SDK now to the overlay: rocmctl lib "
	               "deploy --overlay (rocmctl pkg match says which), or unset it",
	               "ROCBLAS_TENSILE_LIBPATH=%s is the overlay of SDK %s; package #%lld (%s) in "
	               "it %s: its library was made for another rocBLAS than the one that reads "
	               "it",
	               v, dt->t.sdk_path, (long long)ov->row.live_pkg, ov->pkg_name, why);
	cJSON_AddStringToObject(ev, "ROCBLAS_TENSILE_LIBPATH", v);
	cJSON_AddStringToObject(ev, "overlay", ov->t.name);
	cJSON_AddStringToObject(ev, "sdk_version", dt->t.sdk_version);
	if (ov->deployed_sdk[0])
		cJSON_AddStringToObject(ev, "sdk_at_deploy", ov->deployed_sdk);
	cJSON_AddStringToObject(ev, "package_sdk", ov->pkg_sdk);
}

static void
check_tensile_libpath(struct doctor *d)
{
	const char *v = d->env.tensile_libpath, *root = d->ds->root[0] ? d->ds->root : NULL;
	char host[PATH_MAX], why[256], clean[PATH_MAX];
	struct rocmd_rocblas_lib lib;
	struct stat st;
	size_t l;
	cJSON *ev;
	int irc;

	if (v == NULL)
		return;
	deploy_copy(clean, sizeof(clean), v);
	l = strlen(clean);
	while (l > 1 && (clean[l - 1] == '/' || clean[l - 1] == '\\'))
		clean[--l] = '\0';
	/* An overlay is in rocmd's state folder, named by its host path. */
	for (size_t i = 0; i < d->ntg && root != NULL; i++)
		if (d->tg[i].overlay_lib[0] && strcmp(d->tg[i].overlay_lib, clean) == 0)
			root = NULL;
	if (rocmd_sysroot_map(root, clean, host, sizeof(host)) < 0 || stat(host, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		ev = doctor_add(d, "tensile-libpath", DOCTOR_ERROR, NULL, DOCTOR_FIX_NONE,
		                "unset ROCBLAS_TENSILE_LIBPATH, or point it at a library folder "
		                "(rocmctl lib status shows each target's)",
		                "ROCBLAS_TENSILE_LIBPATH=%s names no folder: rocBLAS finds no Tensile "
		                "library there and fails",
		                v);
		cJSON_AddStringToObject(ev, "ROCBLAS_TENSILE_LIBPATH", v);
		return;
	}
	irc = rocmd_rocblas_inspect(host, 0, NULL, &lib, why, sizeof(why));
	if (irc == 0 && lib.narchs == 0 && lib.nco_archs == 0) {
		rocmd_rocblas_lib_free(&lib);
		deploy_copy(why, sizeof(why), "no TensileLibrary index and no code objects");
		irc = ROCMD_ENOTFOUND;
	}
	if (irc < 0) {
		ev = doctor_add(
		    d, "tensile-libpath", DOCTOR_ERROR, NULL, DOCTOR_FIX_NONE,
		    "unset ROCBLAS_TENSILE_LIBPATH, or point it at a library folder "
		    "(rocmctl lib status shows each target's)",
		    "ROCBLAS_TENSILE_LIBPATH=%s is a folder but no Tensile library (%s): "
		    "rocBLAS reads its kernels from there and finds none",
		    v, why);
		cJSON_AddStringToObject(ev, "ROCBLAS_TENSILE_LIBPATH", v);
		return;
	}
	{
		for (int i = 0; i < d->ngpus; i++) {
			if (rocmd_rocblas_serves(&lib, d->gpus[i].arch))
				continue;
			ev = doctor_add(d, "tensile-libpath", DOCTOR_ERROR, NULL, DOCTOR_FIX_NONE,
			                "point it at a library that serves the GPU (an overlay: rocmctl "
			                "lib deploy --overlay), or unset it",
			                "ROCBLAS_TENSILE_LIBPATH=%s has no kernels for the %s (%s): "
			                "rocBLAS reads its library from there and fails on that GPU",
			                v, d->gpus[i].name[0] ? d->gpus[i].name : "GPU",
			                d->gpus[i].arch);
			cJSON_AddStringToObject(ev, "ROCBLAS_TENSILE_LIBPATH", v);
			cJSON_AddStringToObject(ev, "gpu_arch", d->gpus[i].arch);
		}
		rocmd_rocblas_lib_free(&lib);
	}
	for (size_t i = 0; i < d->ntg; i++)
		if (known_library(&d->tg[i], clean)) {
			check_overlay(d, &d->tg[i], clean);
			return;
		}
	if (d->ntg == 0)
		return;
	ev = doctor_add(d, "tensile-libpath", DOCTOR_WARNING, NULL, DOCTOR_FIX_NONE,
	                "point it at the overlay of the SDK in use (rocmctl lib deploy --overlay "
	                "prints it), or unset it",
	                "ROCBLAS_TENSILE_LIBPATH=%s is neither an SDK's library folder nor its "
	                "overlay: rocBLAS reads it in place of SDK %s's library (%s), which it "
	                "may not fit",
	                v, d->tg[0].t.sdk_version, d->tg[0].t.sys_lib);
	cJSON_AddStringToObject(ev, "ROCBLAS_TENSILE_LIBPATH", v);
	cJSON_AddStringToObject(ev, "sdk_library", d->tg[0].t.sys_lib);
	if (d->tg[0].overlay_lib[0])
		cJSON_AddStringToObject(ev, "overlay", d->tg[0].overlay_lib);
}

const struct doctor_check doctor_checks_env[] = {
    {"hsa-override", 1, NULL, check_hsa_override},
    {"hip-visible-devices", 1, NULL, check_hip_visible},
    {"tensile-libpath", 1, NULL, check_tensile_libpath},
    {"known-bad", 1, NULL, doctor_check_known_bad},
    {"tune-override", 1, NULL, doctor_check_overrides},
    {NULL, 0, NULL, NULL},
};
