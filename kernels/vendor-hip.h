/*
 * The HIP runtime as the AMD vendor-solution backends (backend-rocblas.c,
 * backend-hipblaslt.c) need it: device memory, copies, events and the
 * device's identity, from the libamdhip64 next to the library being tuned
 * (the one that library itself loads), never linked. The GEMMs are the
 * library's, so nothing here compiles or launches a kernel.
 *
 * Each of those backends' contexts starts with a struct vendor_hip, so the
 * memory, event and synchronization entries of their tables are the ones
 * here.
 */
#ifndef ROCMD_KERNELS_VENDOR_HIP_H
#define ROCMD_KERNELS_VENDOR_HIP_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"

typedef int vendor_hip_err;

struct vendor_hip {
	void *lib;
	char path[1024];
	vendor_hip_err (*hipInit)(unsigned);
	vendor_hip_err (*hipGetDeviceCount)(int *);
	vendor_hip_err (*hipSetDevice)(int);
	vendor_hip_err (*hipDeviceGetName)(char *, int, int);
	vendor_hip_err (*hipDriverGetVersion)(int *);
	vendor_hip_err (*hipRuntimeGetVersion)(int *);
	vendor_hip_err (*hipMalloc)(void **, size_t);
	vendor_hip_err (*hipFree)(void *);
	vendor_hip_err (*hipMemcpyHtoD)(void *, const void *, size_t);
	vendor_hip_err (*hipMemcpyDtoH)(void *, const void *, size_t);
	vendor_hip_err (*hipEventCreate)(void **);
	vendor_hip_err (*hipEventDestroy)(void *);
	vendor_hip_err (*hipEventRecord)(void *, void *);
	vendor_hip_err (*hipEventSynchronize)(void *);
	vendor_hip_err (*hipEventElapsedTime)(float *, void *, void *);
	vendor_hip_err (*hipDeviceSynchronize)(void);
};

/*
 * Loads the HIP runtime from LIBDIR (the library's folder) or the loader's
 * path, selects device INDEX and describes it into INFO (backend BACKEND):
 * name, arch and compute units from the KFD topology under SYSROOT, "HIP
 * driver N" as its driver, "HIP x.y.z" as its runtime. ROCMD_EUNSUPPORTED
 * with "not available: ..." in WHY.
 */
int vendor_hip_open(struct vendor_hip *h, const char *libdir, int index, const char *sysroot,
                    const char *backend, struct backend_device_info *info, char *why,
                    size_t whylen);
void vendor_hip_close(struct vendor_hip *h);

/* backend.h entries over a context whose first member is a struct vendor_hip. */
int vendor_hip_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr);
void vendor_hip_free(struct backend_ctx *ctx, uint64_t dptr);
int vendor_hip_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes);
int vendor_hip_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes);
int vendor_hip_event_create(struct backend_ctx *ctx, struct backend_event **out);
void vendor_hip_event_destroy(struct backend_ctx *ctx, struct backend_event *ev);
int vendor_hip_event_record(struct backend_ctx *ctx, struct backend_event *ev);
int vendor_hip_event_elapsed(struct backend_ctx *ctx, struct backend_event *start,
                             struct backend_event *end, double *ms);
int vendor_hip_synchronize(struct backend_ctx *ctx);

#endif
