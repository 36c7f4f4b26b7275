/*
 * GPUs from the Linux KFD topology: see gpu.h. Each node folder holds a
 * "properties" file of "key value" lines; CPU nodes have gfx_target_version
 * 0 and no SIMDs and are skipped. Memory comes from mem_banks/M/properties
 * (heap_type 1 and 2 are the frame buffer). An iGPU is a node that also has
 * CPU cores (older kernels show an APU as one node) or a chip AMD makes only
 * as an integrated GPU. KFD names a node by its arch, so the name comes from
 * pci.ids (gpu-pciids.c) until the HIP runtime gives the marketing name.
 */
#include "gpu.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/amdgpu-elf.h"
#include "common/error.h"
#include "common/text.h"
#include "common/fs.h"

#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"
/* Set by AMD's amdgpu-dkms module; the kernel's own amdgpu has none. */
#define AMDGPU_VERSION "/sys/module/amdgpu/version"
#define HEAP_FB_PUBLIC 1
#define HEAP_FB_PRIVATE 2

int
rocmd_gpu_arch_is_apu(const char *gfx)
{
	static const char *const apus[] = {"gfx801",  "gfx810",  "gfx902",  "gfx90c",  "gfx1013",
	                                   "gfx1033", "gfx1035", "gfx1036", "gfx1103", "gfx1150",
	                                   "gfx1151", "gfx1152", "gfx1153", NULL};
	size_t n = strcspn(gfx, ":");

	for (size_t i = 0; apus[i] != NULL; i++)
		if (strlen(apus[i]) == n && strncmp(apus[i], gfx, n) == 0)
			return 1;
	return 0;
}

/* Reads "key value" lines; returns the value of KEY or DEF. */
static uint64_t
prop(const char *text, const char *key, uint64_t def)
{
	size_t n = strlen(key);

	for (const char *p = text; p != NULL && *p != '\0';) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return def;
}

static int
slurp(const char *path, char *buf, size_t len)
{
	FILE *f = rocmd_fs_fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (f == NULL)
		return rocmd_err_errno(errno);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

static uint64_t
node_vram(const char *node_dir)
{
	char path[PATH_MAX], buf[4096];
	struct rocmd_dirent *de;
	uint64_t total = 0;
	struct rocmd_dir *d;

	rocmd_pathf(path, sizeof(path), "%s/mem_banks", node_dir);
	d = rocmd_dir_open(path);
	if (d == NULL)
		return 0;
	while ((de = rocmd_dir_read(d)) != NULL) {
		uint64_t heap;
		if (de->d_name[0] == '.')
			continue;
		rocmd_pathf(path, sizeof(path), "%s/mem_banks/%s/properties", node_dir, de->d_name);
		if (slurp(path, buf, sizeof(buf)) < 0)
			continue;
		heap = prop(buf, "heap_type", 0);
		if (heap == HEAP_FB_PUBLIC || heap == HEAP_FB_PRIVATE)
			total += prop(buf, "size_in_bytes", 0);
	}
	rocmd_dir_close(d);
	return total;
}

static int
cmp_gpu(const void *a, const void *b)
{
	return ((const struct rocmd_gpu *)a)->node - ((const struct rocmd_gpu *)b)->node;
}

int
rocmd_gpu_kfd_scan(const char *root, struct rocmd_gpu_scan *out)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[8192];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;

	memset(out, 0, sizeof(*out));
#ifdef _WIN32
	rocmd_gpu_display_driver(out->driver, sizeof(out->driver));
#else
	snprintf(path, sizeof(path), "%s" AMDGPU_VERSION,
	         root != NULL && strcmp(root, "/") != 0 ? root : "");
	if (slurp(path, buf, sizeof(buf)) == 0) {
		size_t n = strcspn(buf, " \t\r\n");
		if (n > 0 && n < sizeof(out->driver))
			memcpy(out->driver, buf, n);
	}
#endif
	snprintf(dir, sizeof(dir), "%s" KFD_NODES,
	         root != NULL && strcmp(root, "/") != 0 ? root : "");
	d = rocmd_dir_open(dir);
	if (d == NULL) {
		if (errno != ENOENT)
			rocmd_text_addf(&out->problems, "%s: %s", KFD_NODES, strerror(errno));
		return 0; /* no KFD: no AMD GPU driver loaded, or not Linux */
	}
	while ((de = rocmd_dir_read(d)) != NULL) {
		struct rocmd_gpu *g, *grown;
		char node_dir[PATH_MAX];
		uint64_t target, simds, per_cu, cpus;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		rocmd_pathf(node_dir, sizeof(node_dir), "%s/%s", dir, de->d_name);
		rocmd_pathf(path, sizeof(path), "%s/properties", node_dir);
		if (slurp(path, buf, sizeof(buf)) < 0) {
			rocmd_text_addf(&out->problems, "%s/%s/properties: %s", KFD_NODES,
			                de->d_name, strerror(errno));
			continue;
		}
		target = prop(buf, "gfx_target_version", 0);
		simds = prop(buf, "simd_count", 0);
		if (target == 0 || simds == 0)
			continue; /* a CPU node */
		grown = realloc(out->gpus, (out->n + 1) * sizeof(*grown));
		if (grown == NULL) {
			rocmd_dir_close(d);
			return ROCMD_ENOMEM;
		}
		out->gpus = grown;
		g = &grown[out->n++];
		memset(g, 0, sizeof(*g));
		g->node = atoi(de->d_name);
		g->hip_index = -1;
		if (rocmd_amdgpu_gfx_from_target_version(target, g->gfx, sizeof(g->gfx)) < 0)
			snprintf(g->gfx, sizeof(g->gfx), "unknown-%" PRIu64, target);
		g->vendor_id = (unsigned)prop(buf, "vendor_id", 0);
		g->device_id = (unsigned)prop(buf, "device_id", 0);
		per_cu = prop(buf, "simd_per_cu", 0);
		g->simd_count = (int)simds;
		g->compute_units = per_cu > 0 ? (int)(simds / per_cu) : 0;
		cpus = prop(buf, "cpu_cores_count", 0);
		g->igpu = cpus > 0 || rocmd_gpu_arch_is_apu(g->gfx);
		g->vram_bytes = node_vram(node_dir);
		rocmd_pathf(path, sizeof(path), "%s/name", node_dir);
		if (slurp(path, g->name, sizeof(g->name)) == 0)
			g->name[strcspn(g->name, "\n")] = '\0';
		/* KFD's node name is the arch or "ip discovery": the chip's name
		 * comes from pci.ids. */
		if ((g->name[0] == '\0' || strncmp(g->name, "gfx", 3) == 0 ||
		     strcmp(g->name, "ip discovery") == 0) &&
		    rocmd_gpu_pci_name(root, g->vendor_id, g->device_id, g->name, sizeof(g->name)) == 0)
			g->name_from_pci = 1;
		if (prop(buf, "unique_id", 0) != 0)
			snprintf(g->key, sizeof(g->key), "kfd:%" PRIu64, prop(buf, "unique_id", 0));
		else
			snprintf(g->key, sizeof(g->key), "kfd-loc:%" PRIu64 ":%s",
			         prop(buf, "location_id", 0), g->gfx);
	}
	rocmd_dir_close(d);
	if (out->n > 1)
		qsort(out->gpus, out->n, sizeof(*out->gpus), cmp_gpu);
	return 0;
}

void
rocmd_gpu_scan_free(struct rocmd_gpu_scan *s)
{
	if (s == NULL)
		return;
	free(s->gpus);
	free(s->problems);
	memset(s, 0, sizeof(*s));
}

cJSON *
rocmd_gpu_to_json(const struct rocmd_gpu *g)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "key", g->key);
	cJSON_AddStringToObject(o, "arch", g->gfx);
	cJSON_AddStringToObject(o, "name", g->name);
	cJSON_AddStringToObject(o, "kind", g->igpu ? "igpu" : "dgpu");
	cJSON_AddNumberToObject(o, "compute_units", g->compute_units);
	cJSON_AddNumberToObject(o, "simd_count", g->simd_count);
	cJSON_AddNumberToObject(o, "vram_bytes", (double)g->vram_bytes);
	cJSON_AddNumberToObject(o, "vendor_id", g->vendor_id);
	cJSON_AddNumberToObject(o, "device_id", g->device_id);
	if (g->node >= 0)
		cJSON_AddNumberToObject(o, "kfd_node", g->node);
	else
		cJSON_AddNullToObject(o, "kfd_node");
	if (g->hip_index >= 0)
		cJSON_AddNumberToObject(o, "hip_index", g->hip_index);
	else
		cJSON_AddNullToObject(o, "hip_index");
	return o;
}
