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
 */
#include <string.h>

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
