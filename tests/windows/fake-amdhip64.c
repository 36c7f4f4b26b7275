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
 */
#include <string.h>

#include <windows.h>

#define EXPORT __declspec(dllexport)

EXPORT int hipGetDeviceCount(int *count);
EXPORT int hipGetDevicePropertiesR0600(void *props, int device);
EXPORT const char *hipGetErrorString(int err);

EXPORT int
hipGetDeviceCount(int *count)
{
#if defined(FAKE_HIP_CRASH)
	*(volatile int *)(count == NULL ? count : NULL) = 1;
#elif defined(FAKE_HIP_HANG)
	for (;;)
		Sleep(1000);
#endif
	*count = 0;
	return 100; /* hipErrorNoDevice */
}

EXPORT int
hipGetDevicePropertiesR0600(void *props, int device)
{
	return 101; /* hipErrorInvalidDevice: there are none */
}

EXPORT const char *
hipGetErrorString(int err)
{
	return err == 100 ? "no ROCm-capable device is detected" : "invalid device ordinal";
}
