/*
 * The sensors (sensors.h) on Linux: NVML for NVIDIA GPUs, dlopen'd from
 * libnvidia-ml.so.1 (the driver installs it; nothing is linked), and
 * amdgpu's sysfs files for AMD GPUs: the Nth card whose PCI vendor is 0x1002,
 * its hwmon power1_average (µW, the driver's running average) and
 * energy1_input (µJ, where the driver has one), mem_info_vram_used and the
 * current level of pp_dpm_sclk and pp_dpm_mclk. NVML's index is the device's
 * own, which is CUDA's as long as CUDA_VISIBLE_DEVICES does not reorder.
 */
#include "kernels/sensors.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"

struct nvml_memory {
	unsigned long long total, free, used;
};

struct sensors {
	int kind; /* 0 none, 1 NVML, 2 amdgpu */
	void *lib;
	void *dev;
	int (*shutdown)(void);
	int (*power)(void *, unsigned *);
	int (*energy)(void *, unsigned long long *);
	int (*memory)(void *, struct nvml_memory *);
	int (*clock)(void *, int, unsigned *);
	int (*driver)(char *, unsigned);
	char card[1100]; /* amdgpu: .../class/drm/cardN/device */
	char hwmon[1400];
};

static int
nvml_open(struct sensors *s, int index, char *source, size_t sourcelen)
{
	int (*init)(void), (*by_index)(unsigned, void **);
	char why[256];

	if ((s->lib = rocmd_dl_open("libnvidia-ml.so.1", why, sizeof(why))) == NULL) {
		snprintf(source, sourcelen, "none: NVML not loadable (%s)", why);
		return 0;
	}
	init = (int (*)(void))rocmd_dl_sym(s->lib, "nvmlInit_v2");
	by_index = (int (*)(unsigned, void **))rocmd_dl_sym(s->lib, "nvmlDeviceGetHandleByIndex_v2");
	s->shutdown = (int (*)(void))rocmd_dl_sym(s->lib, "nvmlShutdown");
	s->power = (int (*)(void *, unsigned *))rocmd_dl_sym(s->lib, "nvmlDeviceGetPowerUsage");
	s->energy = (int (*)(void *, unsigned long long *))rocmd_dl_sym(
	    s->lib, "nvmlDeviceGetTotalEnergyConsumption");
	s->memory = (int (*)(void *, struct nvml_memory *))rocmd_dl_sym(s->lib,
	                                                                "nvmlDeviceGetMemoryInfo");
	s->clock = (int (*)(void *, int, unsigned *))rocmd_dl_sym(s->lib, "nvmlDeviceGetClockInfo");
	s->driver = (int (*)(char *, unsigned))rocmd_dl_sym(s->lib, "nvmlSystemGetDriverVersion");
	if (init == NULL || by_index == NULL || s->shutdown == NULL || init() != 0) {
		snprintf(source, sourcelen, "none: NVML did not initialize");
		return 0;
	}
	if (by_index((unsigned)index, &s->dev) != 0) {
		s->shutdown();
		snprintf(source, sourcelen, "none: NVML has no device %d", index);
		return 0;
	}
	s->kind = 1;
	snprintf(source, sourcelen, "NVML");
	return 0;
}

static int
read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return ROCMD_EUNSUPPORTED;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n > 0 ? 0 : ROCMD_EUNSUPPORTED;
}

static int
read_num(const char *path, double *v)
{
	char buf[64];

	if (read_text(path, buf, sizeof(buf)) < 0)
		return ROCMD_EUNSUPPORTED;
	*v = strtod(buf, NULL);
	return 0;
}

/* The Nth amdgpu card under SYSROOT, and its hwmon folder. */
static int
amdgpu_open(struct sensors *s, int index, const char *sysroot, char *source, size_t sourcelen)
{
	char drm[300], path[1400], vendor[32];
	struct dirent **names = NULL;
	int n, seen = 0;

	snprintf(drm, sizeof(drm), "%s/sys/class/drm", sysroot);
	n = scandir(drm, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name;

		if (s->kind == 0 && !strncmp(d, "card", 4) && strchr(d, '-') == NULL) {
			snprintf(path, sizeof(path), "%s/%s/device/vendor", drm, d);
			if (read_text(path, vendor, sizeof(vendor)) == 0 && !strncmp(vendor, "0x1002", 6) &&
			    seen++ == index) {
				snprintf(s->card, sizeof(s->card), "%.300s/%.255s/device", drm, d);
				s->kind = 2;
				snprintf(source, sourcelen, "amdgpu sysfs %s", d);
			}
		}
		free(names[i]);
	}
	free(names);
	if (s->kind == 0) {
		snprintf(source, sourcelen, "none: no amdgpu card %d under %s", index, drm);
		return 0;
	}
	snprintf(path, sizeof(path), "%.1090s/hwmon", s->card);
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (s->hwmon[0] == '\0' && !strncmp(names[i]->d_name, "hwmon", 5))
			snprintf(s->hwmon, sizeof(s->hwmon), "%.1100s/%.255s", path, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return 0;
}

int
sensors_open(const char *backend, int index, const char *sysroot, struct sensors **out,
             char *source, size_t sourcelen)
{
	struct sensors *s = calloc(1, sizeof(*s));

	*out = s;
	if (s == NULL)
		return ROCMD_ENOMEM;
	if (sysroot == NULL)
		sysroot = "";
	if (!strcmp(backend, "cuda") || !strcmp(backend, "cublaslt"))
		return nvml_open(s, index, source, sourcelen);
	if (!strcmp(backend, "hip") || !strcmp(backend, "rocblas") || !strcmp(backend, "hipblaslt"))
		return amdgpu_open(s, index, sysroot, source, sourcelen);
	snprintf(source, sourcelen, "none: the %s backend has no power or device memory sensor",
	         backend);
	return 0;
}

/* An amdgpu hwmon file NAME in micro-units, as units. */
static int
hwmon_num(const struct sensors *s, const char *name, double *v)
{
	char path[1600];

	if (s->kind != 2 || s->hwmon[0] == '\0')
		return ROCMD_EUNSUPPORTED;
	snprintf(path, sizeof(path), "%s/%s", s->hwmon, name);
	if (read_num(path, v) < 0)
		return ROCMD_EUNSUPPORTED;
	*v /= 1e6;
	return 0;
}

int
sensors_power_w(struct sensors *s, double *w)
{
	unsigned mw;

	if (s->kind == 1 && s->power != NULL && s->power(s->dev, &mw) == 0) {
		*w = mw / 1000.0;
		return 0;
	}
	return hwmon_num(s, "power1_average", w);
}

int
sensors_energy_j(struct sensors *s, double *j)
{
	unsigned long long mj;

	if (s->kind == 1 && s->energy != NULL && s->energy(s->dev, &mj) == 0) {
		*j = mj / 1000.0;
		return 0;
	}
	return hwmon_num(s, "energy1_input", j);
}

int
sensors_mem_used(struct sensors *s, int64_t *bytes)
{
	struct nvml_memory m;
	char path[1600];
	double v;

	if (s->kind == 1 && s->memory != NULL && s->memory(s->dev, &m) == 0) {
		*bytes = (int64_t)m.used;
		return 0;
	}
	if (s->kind == 2) {
		snprintf(path, sizeof(path), "%s/mem_info_vram_used", s->card);
		if (read_num(path, &v) == 0) {
			*bytes = (int64_t)v;
			return 0;
		}
	}
	return ROCMD_EUNSUPPORTED;
}

/* The line of a pp_dpm_* file marked current ("1: 2100Mhz *"): "2100Mhz". */
static int
dpm_current(const char *path, char *out, size_t len)
{
	char buf[2048], *line, *save = NULL;

	if (read_text(path, buf, sizeof(buf)) < 0)
		return ROCMD_EUNSUPPORTED;
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (strchr(line, '*') != NULL && colon != NULL) {
			snprintf(out, len, "%.*s", (int)strcspn(colon + 2, " *"), colon + 2);
			return 0;
		}
	}
	return ROCMD_EUNSUPPORTED;
}

int
sensors_clocks(struct sensors *s, char *out, size_t len)
{
	char path[1600], sclk[64], mclk[64];
	unsigned sm, mem;

	if (s->kind == 1 && s->clock != NULL && s->clock(s->dev, 1, &sm) == 0 &&
	    s->clock(s->dev, 2, &mem) == 0) {
		snprintf(out, len, "SM %u MHz, memory %u MHz", sm, mem);
		return 0;
	}
	if (s->kind == 2) {
		snprintf(path, sizeof(path), "%s/pp_dpm_sclk", s->card);
		if (dpm_current(path, sclk, sizeof(sclk)) < 0)
			return ROCMD_EUNSUPPORTED;
		snprintf(path, sizeof(path), "%s/pp_dpm_mclk", s->card);
		if (dpm_current(path, mclk, sizeof(mclk)) < 0)
			snprintf(mclk, sizeof(mclk), "-");
		snprintf(out, len, "sclk %s, mclk %s", sclk, mclk);
		return 0;
	}
	return ROCMD_EUNSUPPORTED;
}

int
sensors_driver(struct sensors *s, char *out, size_t len)
{
	char ver[96];

	if (s->kind == 1 && s->driver != NULL && s->driver(ver, sizeof(ver)) == 0) {
		snprintf(out, len, "NVIDIA %s", ver);
		return 0;
	}
	if (s->kind == 2 && read_text("/sys/module/amdgpu/version", ver, sizeof(ver)) == 0) {
		ver[strcspn(ver, "\n")] = '\0';
		snprintf(out, len, "amdgpu %s", ver);
		return 0;
	}
	return ROCMD_EUNSUPPORTED;
}

void
sensors_close(struct sensors *s)
{
	if (s == NULL)
		return;
	if (s->kind == 1)
		s->shutdown();
	free(s);
}
