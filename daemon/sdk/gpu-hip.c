/*
 * GPUs through an SDK's HIP runtime: see gpu.h. The runtime is loaded by the
 * rocmd-hip-probe helper (hip-probe.c), never in the daemon: HIP starts
 * threads, talks to the driver, and Debian's HIP 5.2 aborts the whole process
 * on some errors. The helper prints one line per fact:
 *   count N
 *   driver V, runtime V
 *   device I <gcnArchName>\t<name>\t<compute units>
 *   error <text>
 */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spawn.h"
#include "common/error.h"

static int
merge_device(struct rocmd_gpu_scan *out, int index, const char *arch, const char *name, int cus)
{
	struct rocmd_gpu *g, *grown;
	size_t base = strcspn(arch, ":");

	for (size_t i = 0; i < out->n; i++) {
		g = &out->gpus[i];
		if (g->hip_index < 0 && strlen(g->gfx) == base &&
		    strncmp(g->gfx, arch, base) == 0) {
			g->hip_index = index;
			if (g->compute_units == 0)
				g->compute_units = cus;
			if (name[0] != '\0' &&
			    (g->name[0] == '\0' || g->name_from_pci || strncmp(g->name, "gfx", 3) == 0 ||
			     strcmp(g->name, "ip discovery") == 0)) {
				snprintf(g->name, sizeof(g->name), "%s", name);
				g->name_from_pci = 0;
			}
			return 0;
		}
	}
	grown = realloc(out->gpus, (out->n + 1) * sizeof(*grown));
	if (grown == NULL)
		return ROCMD_ENOMEM;
	out->gpus = grown;
	g = &grown[out->n++];
	memset(g, 0, sizeof(*g));
	g->node = -1;
	g->hip_index = index;
	g->compute_units = cus;
	snprintf(g->gfx, sizeof(g->gfx), "%.*s", (int)base, arch);
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->key, sizeof(g->key), "hip:%d:%s", index, g->gfx);
	g->igpu = rocmd_gpu_arch_is_apu(g->gfx);
	return 0;
}

int
rocmd_gpu_hip_probe(const char *probe, const char *runtime, int timeout_ms,
                    struct rocmd_gpu_scan *out)
{
	char buf[16384], *argv[] = {(char *)probe, (char *)runtime, NULL};
	char *envp[] = {"LC_ALL=C", NULL}, crash[64];
	int st = 0, rc, count = -1;

	rc = rocmd_child_run(argv, envp, timeout_ms, buf, sizeof(buf), &st);
	if (rc == ROCMD_ETIMEDOUT) {
		snprintf(out->hip_status, sizeof(out->hip_status),
		         "the HIP runtime did not answer within %d ms", timeout_ms);
		return 0;
	}
	if (rc < 0) {
		snprintf(out->hip_status, sizeof(out->hip_status), "cannot run %s: %s", probe,
		         rocmd_strerror(rc));
		return 0;
	}
	for (char *line = buf, *nl; line != NULL && *line != '\0'; line = nl) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		if (strncmp(line, "count ", 6) == 0) {
			count = atoi(line + 6);
		} else if (strncmp(line, "device ", 7) == 0) {
			char *arch, *name, *cus, *end;
			int index = (int)strtol(line + 7, &end, 10);
			arch = end + (*end == ' ');
			name = strchr(arch, '\t');
			if (name != NULL)
				*name++ = '\0';
			cus = name != NULL ? strchr(name, '\t') : NULL;
			if (cus != NULL)
				*cus++ = '\0';
			rc = merge_device(out, index, arch, name != NULL ? name : "",
			                  cus != NULL ? atoi(cus) : 0);
			if (rc < 0)
				return rc;
		} else if (strncmp(line, "driver ", 7) == 0) {
			out->hip_driver_version = atoi(line + 7);
		} else if (strncmp(line, "runtime ", 8) == 0) {
			out->hip_runtime_version = atoi(line + 8);
		} else if (strncmp(line, "error ", 6) == 0) {
			snprintf(out->hip_status, sizeof(out->hip_status), "%s", line + 6);
		}
	}
	if (rocmd_child_crashed(st, crash, sizeof(crash)))
		snprintf(out->hip_status, sizeof(out->hip_status),
		         "the HIP runtime crashed the probe (%s)", crash);
	else if (out->hip_status[0] == '\0' && count >= 0)
		snprintf(out->hip_status, sizeof(out->hip_status), "%d device%s", count,
		         count == 1 ? "" : "s");
	else if (out->hip_status[0] == '\0')
		snprintf(out->hip_status, sizeof(out->hip_status), "no answer from the probe");
	return 0;
}

int
rocmd_gpu_adapters_probe(const char *probe, int timeout_ms, struct rocmd_gpu_scan *out)
{
	char buf[8192], *argv[] = {(char *)probe, "--adapters", NULL}, *envp[] = {NULL};
	size_t len = strlen(out->hip_status);
	int st = 0, rc, n = 0;

	rc = rocmd_child_run(argv, envp, timeout_ms, buf, sizeof(buf), &st);
	if (rc < 0) {
		snprintf(out->hip_status + len, sizeof(out->hip_status) - len,
		         "; the display adapters cannot be listed: %s", rocmd_strerror(rc));
		return 0;
	}
	for (char *line = buf, *nl; line != NULL && *line != '\0'; line = nl) {
		unsigned vendor, device;
		unsigned long long dedicated, shared;
		char *name;

		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		len = strlen(out->hip_status);
		if (strncmp(line, "error ", 6) == 0) {
			snprintf(out->hip_status + len, sizeof(out->hip_status) - len, "; %s", line + 6);
		} else if ((name = strchr(line, '\t')) != NULL &&
		           sscanf(line, "adapter %x %x %llu %llu", &vendor, &device, &dedicated,
		                  &shared) == 4) {
			snprintf(out->hip_status + len, sizeof(out->hip_status) - len,
			         "%s %s (%04x:%04x, %llu MiB dedicated, %llu MiB shared; not usable "
			         "by HIP)",
			         n++ == 0 ? "; display adapters:" : ",", name + 1, vendor, device,
			         dedicated >> 20, shared >> 20);
		}
	}
	return 0;
}
