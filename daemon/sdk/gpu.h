/*
 * AMD GPU discovery. Two sources, merged: the Linux KFD topology under the
 * sysroot (/sys/class/kfd/kfd/topology/nodes/N/properties: gfx_target_version,
 * SIMD counts, memory banks), which needs no SDK; and the HIP runtime of an
 * SDK, loaded by the rocmd-hip-probe helper in a process of its own (a broken
 * runtime or driver may crash or hang; the daemon must not) which reports
 * hipGetDeviceCount and each device's gcnArchName. No GPU is a normal state:
 * an empty list, never an error.
 *
 * Blocking I/O: call off the loop thread.
 */
#ifndef ROCMD_GPU_H
#define ROCMD_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "rocblas-library.h"

struct rocmd_gpu {
	char key[64]; /* stable identity: "kfd:<unique_id>", "kfd-loc:<location_id>", "hip:<n>" */
	char gfx[ROCMD_GFX_MAX]; /* "gfx1103" */
	char name[128];          /* marketing or chip name when known */
	int name_from_pci;       /* NAME is pci.ids' chip name: the HIP runtime's replaces it */
	int node;                /* KFD node, -1 when seen by HIP only */
	int hip_index;           /* HIP device index, -1 when HIP did not report it */
	unsigned vendor_id, device_id;
	int compute_units;
	int simd_count;
	uint64_t vram_bytes; /* dedicated memory (frame buffer banks); an iGPU's carve-out */
	int igpu;            /* integrated (APU) */
};

#define ROCMD_GPU_PATH_MAX 4096

struct rocmd_gpu_scan {
	struct rocmd_gpu *gpus;
	size_t n;
	char hip_status[512]; /* what the HIP probe said: "2 devices", "not loadable: ..." */
	char hip_runtime[ROCMD_GPU_PATH_MAX]; /* the runtime probed ("" when none): an
	                                       * SDK's host path, or the driver's as Windows names it */
	int hip_from_driver;    /* it is the display driver's, not an SDK's */
	int hip_driver_version; /* hipDriverGetVersion, 0 when unknown */
	int hip_runtime_version; /* hipRuntimeGetVersion, 0 when unknown */
	char driver[64]; /* the AMD driver's version, "" when unknown: on Linux the amdgpu
	                  * kernel driver's (sys/module/amdgpu/version under the root: AMD's
	                  * amdgpu-dkms sets it), on Windows the display driver's
	                  * (rocmd_gpu_display_driver) */
	char *problems;
};

/* Windows: the AMD display driver's version into OUT (Adrenalin's
 * RadeonSoftwareVersion, "24.3.1", else the driver package's DriverVersion),
 * from the display adapters' class key in the registry; "" when no AMD
 * adapter is installed (gpu-driver-win.c). */
void rocmd_gpu_display_driver(char *out, size_t len);
/* Reads the KFD topology and the amdgpu driver's version under ROOT (NULL =
 * "/"). Missing KFD is no GPU. */
int rocmd_gpu_kfd_scan(const char *root, struct rocmd_gpu_scan *out);
/*
 * Runs PROBE (the rocmd-hip-probe executable) on the HIP runtime at host path
 * RUNTIME with a time limit and merges what it reports into OUT: a device
 * whose arch matches a KFD GPU not yet matched is that GPU; others are added.
 * Sets out->hip_status in every case. Returns 0 or ROCMD_ENOMEM.
 */
int rocmd_gpu_hip_probe(const char *probe, const char *runtime, int timeout_ms,
                        struct rocmd_gpu_scan *out);
/* Windows without any HIP runtime: PROBE --adapters lists the display
 * adapters (DXGI), appended to out->hip_status as not usable by HIP. */
int rocmd_gpu_adapters_probe(const char *probe, int timeout_ms, struct rocmd_gpu_scan *out);
void rocmd_gpu_scan_free(struct rocmd_gpu_scan *s);
cJSON *rocmd_gpu_to_json(const struct rocmd_gpu *g);
/* The name pci.ids (under ROOT, NULL = "/": /usr/share/misc/pci.ids, else
 * /usr/share/hwdata/pci.ids) gives device DEVICE of vendor VENDOR, into OUT;
 * -1 when no database names it (gpu-pciids.c). */
int rocmd_gpu_pci_name(const char *root, unsigned vendor, unsigned device, char *out,
                       size_t len);
/* Whether a chip exists only as an integrated GPU (gfx1103, gfx90c, ...). */
int rocmd_gpu_arch_is_apu(const char *gfx);

#endif
