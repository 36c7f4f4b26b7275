/*
 * A stand-in for an SDK's HIP runtime (bin\amdhip64_6.dll) in the Windows
 * tests under wine, where AMD's runtime cannot run (it needs AMD's driver).
 * It is a real DLL with the entry points rocmd-hip-probe looks up, and it
 * answers as AMD's runtime does on a machine without an AMD GPU:
 * hipGetDeviceCount returns hipErrorNoDevice (100). The probe must load it
 * with LoadLibraryExW from the SDK's bin folder and report "0 devices".
 * Built twice more for the failures a real runtime or driver can have:
 * FAKE_HIP_CRASH (an access violation in hipGetDeviceCount) and FAKE_HIP_HANG
 * (it never returns); the daemon must survive both and say what happened.
 * FAKE_HIP_780M stands in for the display driver's System32\amdhip64_6.dll
 * on a Radeon 780M laptop: one device, gfx1103, 12 compute units, and the
 * driver's HIP version.
 *
 * It also has every entry point the HIP backend (kernels/backend-hip.c)
 * loads, so the backend opens it and reports the device: memory is host
 * memory, events time nothing, and hipModuleLoadData refuses every code
 * object (hipErrorInvalidImage): no kernel runs on a stand-in.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include <windows.h>

#define EXPORT __declspec(dllexport)

EXPORT int hipGetDeviceCount(int *count);
EXPORT int hipGetDevicePropertiesR0600(void *props, int device);
EXPORT const char *hipGetErrorString(int err);
EXPORT int hipDriverGetVersion(int *v);
EXPORT int hipRuntimeGetVersion(int *v);
EXPORT int hipDeviceGetAttribute(int *v, int attr, int device);

#define DRIVER_VERSION 60342134 /* HIP 6.3 as AMD's Adrenalin 25.x driver reports it */

EXPORT int
hipGetDeviceCount(int *count)
{
#if defined(FAKE_HIP_CRASH)
	*(volatile int *)(count == NULL ? count : NULL) = 1;
#elif defined(FAKE_HIP_HANG)
	for (;;)
		Sleep(1000);
#endif
#if defined(FAKE_HIP_780M)
	*count = 1;
	return 0;
#else
	*count = 0;
	return 100; /* hipErrorNoDevice */
#endif
}

/* hipDeviceProp_tR0600 begins with char name[256]; gcnArchName[256] comes
 * later (at 1160 in HIP 6's layout); the probe finds it by content. */
EXPORT int
hipGetDevicePropertiesR0600(void *props, int device)
{
#if defined(FAKE_HIP_780M)
	if (device == 0) {
		strcpy((char *)props, "AMD Radeon 780M Graphics");
		strcpy((char *)props + 1160, "gfx1103");
		return 0;
	}
#endif
	(void)props;
	(void)device;
	return 101; /* hipErrorInvalidDevice */
}

EXPORT int
hipDriverGetVersion(int *v)
{
	*v = DRIVER_VERSION;
	return 0;
}

EXPORT int
hipRuntimeGetVersion(int *v)
{
	*v = DRIVER_VERSION;
	return 0;
}

EXPORT int
hipDeviceGetAttribute(int *v, int attr, int device)
{
	if (device != 0 || attr != 63) /* hipDeviceAttributeMultiprocessorCount */
		return 1;                  /* hipErrorInvalidValue */
	*v = 12;
	return 0;
}

EXPORT const char *
hipGetErrorString(int err)
{
	return err == 100 ? "no ROCm-capable device is detected" : "invalid device ordinal";
}

/* ---- what the HIP backend loads beyond the probe's ---- */

EXPORT int hipInit(unsigned flags);
EXPORT int hipSetDevice(int device);
EXPORT int hipDeviceGetName(char *name, int len, int device);
EXPORT int hipModuleLoadData(void **mod, const void *image);
EXPORT int hipModuleUnload(void *mod);
EXPORT int hipModuleGetFunction(void **f, void *mod, const char *name);
EXPORT int hipModuleGetGlobal(void **p, size_t *bytes, void *mod, const char *name);
EXPORT int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned smem, void *stream,
                                 void **args, void **extra);
EXPORT int hipMalloc(void **p, size_t bytes);
EXPORT int hipFree(void *p);
EXPORT int hipMemcpyHtoD(void *dst, const void *src, size_t bytes);
EXPORT int hipMemcpyDtoH(void *dst, const void *src, size_t bytes);
EXPORT int hipEventCreate(void **ev);
EXPORT int hipEventDestroy(void *ev);
EXPORT int hipEventRecord(void *ev, void *stream);
EXPORT int hipEventSynchronize(void *ev);
EXPORT int hipEventElapsedTime(float *ms, void *start, void *end);
EXPORT int hipDeviceSynchronize(void);

#define HIP_ERROR_INVALID_IMAGE 200
#define HIP_ERROR_NOT_SUPPORTED 801

EXPORT int
hipInit(unsigned flags)
{
	(void)flags;
	return 0;
}

EXPORT int
hipSetDevice(int device)
{
	int n = 0;

	hipGetDeviceCount(&n);
	return device >= 0 && device < n ? 0 : 101;
}

EXPORT int
hipDeviceGetName(char *name, int len, int device)
{
	char props[2048] = "";

	if (len <= 0 || hipGetDevicePropertiesR0600(props, device) != 0)
		return 101;
	snprintf(name, (size_t)len, "%s", props);
	return 0;
}

EXPORT int
hipModuleLoadData(void **mod, const void *image)
{
	(void)image;
	*mod = NULL;
	return HIP_ERROR_INVALID_IMAGE;
}

EXPORT int
hipModuleUnload(void *mod)
{
	(void)mod;
	return 0;
}

EXPORT int
hipModuleGetFunction(void **f, void *mod, const char *name)
{
	(void)mod;
	(void)name;
	*f = NULL;
	return HIP_ERROR_NOT_SUPPORTED;
}

EXPORT int
hipModuleGetGlobal(void **p, size_t *bytes, void *mod, const char *name)
{
	(void)mod;
	(void)name;
	*p = NULL;
	*bytes = 0;
	return HIP_ERROR_NOT_SUPPORTED;
}

EXPORT int
hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned smem, void *stream, void **args, void **extra)
{
	return HIP_ERROR_NOT_SUPPORTED;
}

EXPORT int
hipMalloc(void **p, size_t bytes)
{
	*p = calloc(1, bytes ? bytes : 1);
	return *p != NULL ? 0 : 2; /* hipErrorOutOfMemory */
}

EXPORT int
hipFree(void *p)
{
	free(p);
	return 0;
}

EXPORT int
hipMemcpyHtoD(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return 0;
}

EXPORT int
hipMemcpyDtoH(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return 0;
}

EXPORT int
hipEventCreate(void **ev)
{
	*ev = calloc(1, 1);
	return *ev != NULL ? 0 : 2;
}

EXPORT int
hipEventDestroy(void *ev)
{
	free(ev);
	return 0;
}

EXPORT int
hipEventRecord(void *ev, void *stream)
{
	(void)ev;
	(void)stream;
	return 0;
}

EXPORT int
hipEventSynchronize(void *ev)
{
	(void)ev;
	return 0;
}

EXPORT int
hipEventElapsedTime(float *ms, void *start, void *end)
{
	(void)start;
	(void)end;
	*ms = 0;
	return 0;
}

EXPORT int
hipDeviceSynchronize(void)
{
	return 0;
}
