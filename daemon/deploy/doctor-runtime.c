/*
 * doctor's check of the HIP runtime against the SDK (doctor.h): the runtime
 * rocmd probed the GPUs with (sdk.c: the newest SDK's own libamdhip64, or on
 * Windows without one the display driver's amdhip64) answers
 * hipRuntimeGetVersion, and an SDK target served by it whose version is
 * newer, on major.minor, has a rocBLAS (and packages built for it) made for
 * a HIP the runtime is older than. The SDK's own runtime serves its own
 * programs; the driver's serves every SDK's. No table of versions: both
 * numbers are what the machine itself reports.
 */
#include "doctor.h"

#include <stdio.h>
#include <string.h>

/* P as programs name it: the daemon's --root taken off. */
static const char *
system_path(const struct doctor *d, const char *p)
{
	size_t l = strlen(d->ds->root);

	return l > 0 && strncmp(p, d->ds->root, l) == 0 && p[l] == '/' ? p + l : p;
}

const char *
doctor_driver_text(const struct doctor *d)
{
	if (d->driver[0])
		return d->driver;
#ifdef _WIN32
	return "unknown (rocmd does not read the display driver's version on Windows; Device "
	       "Manager or AMD Software shows it)";
#else
	return "unknown (no /sys/module/amdgpu/version, which AMD's amdgpu-dkms sets: the "
	       "kernel's own amdgpu driver, of the kernel uname -r names)";
#endif
}

void
doctor_check_runtime(struct doctor *d, struct doctor_target *dt)
{
	int v = d->hip_runtime_version, rmaj = v / 10000000, rmin = v / 100000 % 100;
	int smaj, smin;
	char fix[512];
	cJSON *ev, *rt;

	if (v <= 0 || strcmp(dt->t.kind, "sdk") != 0 ||
	    sscanf(dt->t.sdk_version, "%d.%d", &smaj, &smin) != 2 ||
	    (!d->hip_from_driver && strcmp(dt->t.host_hip, d->hip_runtime) != 0))
		return;
	if (rmaj > smaj || (rmaj == smaj && rmin >= smin))
		return;
	if (d->hip_from_driver)
		deploy_fmt(fix, sizeof(fix),
		           "update the display driver to one whose HIP runtime is "
		           "%d.%d or newer (the HIP SDK's release notes name the driver it needs), "
		           "then rocmctl sdk rescan",
		           smaj, smin);
	else
		deploy_fmt(fix, sizeof(fix),
		           "install the HIP runtime of SDK %s's own release (a "
		           "runtime package held back by a partial upgrade is the usual cause: "
		           "libamdhip64 or hip-runtime-amd %d.%d), then rocmctl sdk rescan",
		           dt->t.sdk_version, smaj, smin);
	ev = doctor_add(
	    d, "hip-runtime", rmaj < smaj ? DOCTOR_ERROR : DOCTOR_WARNING, dt, DOCTOR_FIX_NONE, fix,
	    "the HIP runtime that serves the GPUs, %s (%s, HIP %d.%d), is older than "
	    "SDK %s at %s: its rocBLAS%s was built for HIP %d.%d, and a runtime older "
	    "than that may lack what it calls or fail to load its code objects%s",
	    system_path(d, d->hip_runtime),
	    d->hip_from_driver ? "the display driver's" : "the SDK's own", rmaj, rmin,
	    dt->t.sdk_version, dt->t.sdk_path,
	    dt->row.live_pkg > 0 ? " (and the package deployed there)" : "", smaj, smin,
	    rmaj < smaj ? "; of another major version, rocBLAS does not load at all" : "");
	rt = cJSON_AddObjectToObject(ev, "hip_runtime");
	cJSON_AddStringToObject(rt, "path", system_path(d, d->hip_runtime));
	cJSON_AddStringToObject(rt, "source", d->hip_from_driver ? "driver" : "sdk");
	cJSON_AddNumberToObject(rt, "version", v);
	cJSON_AddStringToObject(ev, "sdk_version", dt->t.sdk_version);
	cJSON_AddStringToObject(ev, "amdgpu_driver", doctor_driver_text(d));
}
