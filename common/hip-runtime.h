/*
 * What the HIP runtime's users share: the Windows file names of AMD's HIP
 * runtime and hiprtc (the display driver puts amdhip64_N.dll in System32, an
 * SDK ships both in its bin\), and the device's gfx arch read out of a
 * hipDeviceProp_t. Used by the GPU probe (daemon/sdk: sdk-win.c,
 * hip-probe.c) and the HIP backend (kernels/backend-hip.c).
 */
#ifndef ROCMD_HIP_RUNTIME_H
#define ROCMD_HIP_RUNTIME_H

#include <stddef.h>

/* amdhip64_7.dll, amdhip64_6.dll: newest first, NULL-terminated. */
extern const char *const rocmd_hip_win_runtimes[];
/* An SDK's hiprtc DLLs (hiprtc0701.dll ... hiprtc0602.dll): newest first,
 * NULL-terminated. */
extern const char *const rocmd_hip_win_rtcs[];

/*
 * hipDeviceProp_t changed layout between HIP 5 and 6 (and
 * hipGetDeviceProperties became hipGetDevicePropertiesR0600), so the struct
 * is not declared: the call fills a zeroed buffer of ROCMD_HIP_PROPS_BUF
 * bytes; the name is its first field (256 bytes) in every version, and
 * gcnArchName is the first NUL-started "gfx..." string after it.
 */
#define ROCMD_HIP_PROPS_BUF 16384
/* The arch string in PROPS ("gfx1103", maybe with ":xnack-" features), or
 * "unknown". */
const char *rocmd_hip_props_arch(const unsigned char *props, size_t len);

/* hipDeviceAttributeMultiprocessorCount: 63 in the enum of HIP 5 and 6 alike
 * (hip_runtime_api.h counts it from hipDeviceAttributeCudaCompatibleBegin = 0). */
#define ROCMD_HIP_ATTR_MULTIPROCESSOR_COUNT 63

#endif
