/*
 * The HIP runtime of the AMD vendor-solution backends (see vendor-hip.h).
 * The library loads libamdhip64 through its own RUNPATH or the loader's path;
 * loading the one in its folder first, with the same soname, makes both the
 * same copy. On Windows the names are amdhip64_7.dll / amdhip64_6.dll
 * (common/hip-runtime.h), beside rocblas.dll in an SDK's bin\, else the
 * display driver's in System32 (the loader's search by name).
 */
#include "kernels/vendor-hip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "common/hip-runtime.h"
#include "kernels/backend-hip.h"
#include "kernels/vendor.h"

struct backend_event {
	void *ev;
};

static struct vendor_hip *
hip_of(struct backend_ctx *ctx)
{
	return (struct vendor_hip *)(void *)ctx;
}

#ifdef _WIN32
#define hip_names rocmd_hip_win_runtimes
#else
static const char *const hip_names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", NULL};
#endif

#define HLOAD(field)                                                                              \
	(*(void **)&h->field = rocmd_dl_sym(h->lib, #field), missing = missing || h->field == NULL)

int
vendor_hip_open(struct vendor_hip *h, const char *libdir, int index, const char *sysroot,
                const char *backend, struct backend_device_info *info, char *why, size_t whylen)
{
	char err[320] = "";
	int missing = 0, n = 0, v = 0, cus = 0, r;

	memset(h, 0, sizeof(*h));
	h->lib = vendor_dlopen(libdir, hip_names, h->path, sizeof(h->path), err, sizeof(err));
	if (h->lib == NULL) {
		snprintf(why, whylen, "not available: no HIP runtime beside the library (%.200s)",
		         err);
		return ROCMD_EUNSUPPORTED;
	}
	HLOAD(hipInit);
	HLOAD(hipGetDeviceCount);
	HLOAD(hipSetDevice);
	HLOAD(hipDeviceGetName);
	HLOAD(hipDriverGetVersion);
	HLOAD(hipRuntimeGetVersion);
	HLOAD(hipMalloc);
	HLOAD(hipFree);
	HLOAD(hipMemcpyHtoD);
	HLOAD(hipMemcpyDtoH);
	HLOAD(hipEventCreate);
	HLOAD(hipEventDestroy);
	HLOAD(hipEventRecord);
	HLOAD(hipEventSynchronize);
	HLOAD(hipEventElapsedTime);
	HLOAD(hipDeviceSynchronize);
	if (missing) {
		snprintf(why, whylen, "not available: %.200s lacks a needed entry point", h->path);
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	if ((r = h->hipInit(0)) != 0 || h->hipGetDeviceCount(&n) != 0 || index < 0 || index >= n) {
		snprintf(why, whylen, "not available: no AMD GPU %d (hipInit %d, %d devices)", index,
		         r, n);
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	h->hipSetDevice(index);
	memset(info, 0, sizeof(*info));
	snprintf(info->backend, sizeof(info->backend), "%s", backend);
	h->hipDeviceGetName(info->name, sizeof(info->name), index);
	if (backend_hip_device_arch(h->lib, sysroot, index, info->arch, sizeof(info->arch), &cus,
	                            why, whylen) < 0) {
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	info->compute_units = cus;
	info->wave_size = strncmp(info->arch, "gfx1", 4) == 0 && strlen(info->arch) >= 7 ? 32 : 64;
	info->max_threads_per_block = 1024;
	info->shared_mem_per_block = info->shared_mem_per_cu = 64 * 1024;
	/* Input sets rotate past this: the largest last-level cache of these GPUs. */
	info->llc_bytes = 32 << 20;
	h->hipDriverGetVersion(&v);
	snprintf(info->driver_version, sizeof(info->driver_version), "HIP driver %d", v);
	h->hipRuntimeGetVersion(&v);
	snprintf(info->compiler_version, sizeof(info->compiler_version), "HIP %d.%d.%d",
	         v / 10000000, (v / 100000) % 100, v % 100000);
	return 0;
fail:
	vendor_hip_close(h);
	return r;
}

void
vendor_hip_close(struct vendor_hip *h)
{
	rocmd_dl_close(h->lib);
	memset(h, 0, sizeof(*h));
}

int
vendor_hip_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr)
{
	void *p = NULL;

	*dptr = 0;
	if (hip_of(ctx)->hipMalloc(&p, bytes ? bytes : 1) != 0)
		return ROCMD_ENOMEM;
	*dptr = (uint64_t)(uintptr_t)p;
	return 0;
}

void
vendor_hip_free(struct backend_ctx *ctx, uint64_t dptr)
{
	if (dptr != 0)
		hip_of(ctx)->hipFree((void *)(uintptr_t)dptr);
}

int
vendor_hip_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes)
{
	return hip_of(ctx)->hipMemcpyHtoD((void *)(uintptr_t)dst, src, bytes) ? ROCMD_EIO : 0;
}

int
vendor_hip_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes)
{
	return hip_of(ctx)->hipMemcpyDtoH(dst, (const void *)(uintptr_t)src, bytes) ? ROCMD_EIO : 0;
}

int
vendor_hip_event_create(struct backend_ctx *ctx, struct backend_event **out)
{
	struct backend_event *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (e == NULL)
		return ROCMD_ENOMEM;
	if (hip_of(ctx)->hipEventCreate(&e->ev) != 0) {
		free(e);
		return ROCMD_EIO;
	}
	*out = e;
	return 0;
}

void
vendor_hip_event_destroy(struct backend_ctx *ctx, struct backend_event *ev)
{
	if (ev == NULL)
		return;
	hip_of(ctx)->hipEventDestroy(ev->ev);
	free(ev);
}

int
vendor_hip_event_record(struct backend_ctx *ctx, struct backend_event *ev)
{
	return hip_of(ctx)->hipEventRecord(ev->ev, NULL) ? ROCMD_EIO : 0;
}

int
vendor_hip_event_elapsed(struct backend_ctx *ctx, struct backend_event *start,
                         struct backend_event *end, double *ms)
{
	struct vendor_hip *h = hip_of(ctx);
	float f = 0;

	*ms = 0;
	if (h->hipEventSynchronize(end->ev) != 0 || h->hipEventElapsedTime(&f, start->ev, end->ev))
		return ROCMD_EIO;
	*ms = f;
	return 0;
}

int
vendor_hip_synchronize(struct backend_ctx *ctx)
{
	return hip_of(ctx)->hipDeviceSynchronize() ? ROCMD_EIO : 0;
}
