/*
 * The HIP backend's table (backend.h) and the pieces the tests use: a probe
 * that says why HIP is not available, and the child-process hiprtc compile
 * (Debian's HIP 5.2 hiprtc aborts the whole process for gfx11 targets).
 */
#ifndef ROCMD_KERNELS_BACKEND_HIP_H
#define ROCMD_KERNELS_BACKEND_HIP_H

#include <stddef.h>

#include "kernels/backend.h"

extern const struct backend_ops backend_hip_ops;

/* Number of AMD GPUs (> 0), or ROCMD_EUNSUPPORTED with "not available: <reason>". */
int backend_hip_probe(char *why, size_t whylen);

/*
 * The gfx arch and compute units of GPU INDEX from the KFD topology under
 * SYSROOT (NULL: /): gfx_target_version 110003 is gfx1103 (major, minor and
 * stepping as two decimal digits each, minor and stepping printed in hex).
 * 0, or -1 when there is no such node. The vendor backends use it too.
 */
int backend_hip_kfd_arch(const char *sysroot, int index, char *arch, size_t len, int *cus);

/*
 * The gfx arch and compute units of GPU INDEX: the KFD topology under
 * SYSROOT first, else (Windows has no KFD) what the HIP runtime LIB (a
 * common/dl.h handle) says: hipGetDeviceProperties' gcnArchName, its
 * features cut off, and hipDeviceGetAttribute's multiprocessor count. 0, or
 * -1 with "not available: <reason>" in WHY. The vendor backends use it too.
 */
int backend_hip_device_arch(void *lib, const char *sysroot, int index, char *arch, size_t len,
                            int *cus, char *why, size_t whylen);

/*
 * The folders the HIP runtime, hiprtc and an SDK's libraries are looked for
 * in, in order, into DIRS (at most MAX): Linux $ROCMD_HIP_PATH/lib and
 * /opt/rocm/lib; Windows %ROCMD_HIP_PATH%\bin, %HIP_PATH%\bin and System32
 * (the display driver's runtime). Returns how many.
 */
#define BACKEND_HIP_DIR_LEN 1024
int backend_hip_dirs(char dirs[][BACKEND_HIP_DIR_LEN], int max);
/* The first of them, into OUT: where the vendor libraries are looked for
 * when no library is named. */
void backend_hip_sdk_dir(char *out, size_t len);

/*
 * Compiles SRC for ARCH ("gfx1103") with the hiprtc library at RTC_PATH in a
 * child process, "NAME=V" defines passed as -DRK_NAME=V. 0 and a malloc'd code
 * object; ROCMD_EINVAL with the log (compile error, hiprtc missing, child killed
 * by a signal); ROCMD_ETIMEDOUT after TIMEOUT_S (the child is killed).
 * ROCMD_TEST_HIPRTC_ABORT=1 in the environment makes the child abort(), to test
 * that path. POSIX: a fork()ed child; Windows: this program again
 * (backend_hip_rtc_main). See backend-hip-rtc.c.
 */
int backend_hip_compile_child(const char *rtc_path, const char *arch, const char *src,
                              const char *const *defines, int ndefines, int timeout_s, char **code,
                              size_t *codelen, char *log, size_t loglen);

/*
 * main()'s part, through tune_evaluator_child(): with the hidden argument of
 * the Windows compile child in ARGV[1], compiles and returns the exit code;
 * otherwise notes that this program takes it (Windows) and returns -1.
 */
int backend_hip_rtc_main(int argc, char **argv);

#endif
