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
 * Compiles SRC for ARCH ("gfx1103") with the hiprtc library at RTC_PATH in a
 * child process, "NAME=V" defines passed as -DRK_NAME=V. 0 and a malloc'd code
 * object; ROCMD_EINVAL with the log (compile error, hiprtc missing, child killed
 * by a signal); ROCMD_ETIMEDOUT after TIMEOUT_S (the child is killed).
 * ROCMD_TEST_HIPRTC_ABORT=1 in the environment makes the child abort(), to test
 * that path.
 */
int backend_hip_compile_child(const char *rtc_path, const char *arch, const char *src,
                              const char *const *defines, int ndefines, int timeout_s, char **code,
                              size_t *codelen, char *log, size_t loglen);

#endif
