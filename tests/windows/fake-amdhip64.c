/*
 * A stand-in for an SDK's HIP runtime (bin\amdhip64_6.dll) in the Windows
 * tests under wine, where AMD's runtime cannot run (it needs AMD's driver).
 * It is a real DLL with the entry points rocmd-hip-probe looks up, and it
 * answers as AMD's runtime does on a machine without an AMD GPU:
 * hipGetDeviceCount returns hipErrorNoDevice (100). The probe must load it
 * with LoadLibraryExW from the SDK's bin folder and report "0 devices".
 */
#include <string.h>

#define EXPORT __declspec(dllexport)

EXPORT int hipGetDeviceCount(int *count);
EXPORT int hipGetDevicePropertiesR0600(void *props, int device);
EXPORT const char *hipGetErrorString(int err);

EXPORT int
hipGetDeviceCount(int *count)
{
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
