/*
 * The CPU backend's view of the machine on Linux (see cpu-info.h).
 */
#include "kernels/cpu-info.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int64_t
sysconf_or(int name, int64_t dflt)
{
	long v = sysconf(name);

	return v > 0 ? (int64_t)v : dflt;
}

static void
cpu_model_name(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "cpu");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon != NULL) {
			char *s = colon + 1;

			while (*s == ' ' || *s == '\t')
				s++;
			s[strcspn(s, "\n")] = '\0';
			snprintf(buf, len, "%s", s);
			break;
		}
	}
	fclose(f);
}

void
cpu_info_fill(struct backend_device_info *info)
{
	struct utsname un;
	cpu_set_t set;
	int ncpu;

	cpu_model_name(info->name, sizeof(info->name));
	ncpu = sched_getaffinity(0, sizeof(set), &set) == 0
	           ? CPU_COUNT(&set)
	           : (int)sysconf_or(_SC_NPROCESSORS_ONLN, 1);
	info->compute_units = ncpu < 1 ? 1 : ncpu;
	if (uname(&un) == 0) {
		snprintf(info->arch, sizeof(info->arch), "%.31s", un.machine);
		snprintf(info->driver_version, sizeof(info->driver_version), "linux %.50s",
		         un.release);
	}
	info->shared_mem_per_block = sysconf_or(_SC_LEVEL2_CACHE_SIZE, 512 * 1024);
	info->shared_mem_per_cu = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, 32 * 1024);
	info->global_mem = sysconf_or(_SC_PHYS_PAGES, 0) * sysconf_or(_SC_PAGESIZE, 4096);
	info->llc_bytes = sysconf_or(_SC_LEVEL3_CACHE_SIZE, 0);
}
