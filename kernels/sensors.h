/*
 * What the platform reports about a GPU while a benchmark runs (rocmtune
 * bench-run, tools/rocmtune-bench.c): power, an energy counter, the memory in
 * use on the device, the clocks and the driver. NVIDIA GPUs through NVML
 * (libnvidia-ml.so.1, dlopen'd like every GPU runtime: nothing is linked);
 * AMD GPUs through amdgpu's sysfs files (hwmon power1_average and
 * energy1_input, mem_info_vram_used, pp_dpm_sclk). sensors-unix.c reads them;
 * sensors-win.c reads the device memory from PDH's GPU Adapter Memory counter
 * of the device's DXGI adapter and the driver version from DXGI; power,
 * energy and clocks are not read on Windows (ADLX and NVML are not).
 *
 * Each reader returns 0, or ROCMD_EUNSUPPORTED when the platform does not
 * report that figure here; a figure is never guessed.
 */
#ifndef ROCMD_KERNELS_SENSORS_H
#define ROCMD_KERNELS_SENSORS_H

#include <stddef.h>
#include <stdint.h>

struct sensors;

/* Opens the sensors of device INDEX of BACKEND ("cuda", "cublaslt": NVML;
 * "hip", "rocblas", "hipblaslt": amdgpu; anything else has none) under
 * SYSROOT ("" or NULL: /). Always gives a handle in *OUT; *SOURCE says what
 * reports ("NVML", "amdgpu sysfs card1") or why nothing does. */
int sensors_open(const char *backend, int index, const char *sysroot, struct sensors **out,
                 char *source, size_t sourcelen);
/* The device's power draw now (W). */
int sensors_power_w(struct sensors *s, double *w);
/* A monotonic energy counter (J) of the device. */
int sensors_energy_j(struct sensors *s, double *j);
/* The memory in use on the whole device (bytes). */
int sensors_mem_used(struct sensors *s, int64_t *bytes);
/* The clocks as the platform names them ("SM 1980 MHz, memory 3201 MHz"). */
int sensors_clocks(struct sensors *s, char *out, size_t len);
/* The kernel driver's version ("NVIDIA 570.86.15", "amdgpu 6.1.0"). */
int sensors_driver(struct sensors *s, char *out, size_t len);
void sensors_close(struct sensors *s);

#endif
