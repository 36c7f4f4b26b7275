/*
 * What the CPU backend (backend-cpu.c) reports of the machine, one file per
 * platform: cpu-info-unix.c (sysconf, sched_getaffinity, uname,
 * /proc/cpuinfo), cpu-info-win.c (GetSystemInfo, the processor's cache
 * description, the registry's processor name, RtlGetVersion).
 */
#ifndef ROCMD_KERNELS_CPU_INFO_H
#define ROCMD_KERNELS_CPU_INFO_H

#include "kernels/backend.h"

/* Fills INFO's name, arch, compute_units (usable CPUs), driver_version (the
 * CPU has no driver: the OS kernel's release, "linux 6.1.0-..." or
 * "windows 10.0.19045"), shared_mem_per_block (L2 bytes per core),
 * shared_mem_per_cu (L1d), global_mem and llc_bytes (0 when unknown). */
void cpu_info_fill(struct backend_device_info *info);

#endif
