/*
 * The CUDA backend's table (backend.h) and the few extras that the GEMM
 * benchmark and the tests use: a probe that says why CUDA is not available,
 * NVRTC compilation without a device (CI checks the kernel source compiles
 * for sm_80 and sm_90) or on worker threads, and the CUDA search space.
 */
#ifndef ROCMD_KERNELS_BACKEND_CUDA_H
#define ROCMD_KERNELS_BACKEND_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"

extern const struct backend_ops backend_cuda_ops;

/* Number of CUDA devices (> 0), or ROCMD_EUNSUPPORTED with "not available: <reason>". */
/* Folder I (0, 1, ...) of the CUDA toolkit's DLLs into OUT: 0, or -1 past the
 * last (Windows: %CUDA_PATH%\bin\x64, then bin; none elsewhere, where the
 * loader's path finds them). */
int backend_cuda_toolkit_dir(int i, char *out, size_t len);
int backend_cuda_probe(char *why, size_t whylen);

/* The kernel text this backend compiles (port.h + gemm.cu), malloc'd. */
char *backend_cuda_source(size_t *len);

/* A context with NVRTC only, compiling for ARCH ("sm_90"): no driver, no device. */
int backend_cuda_open_nvrtc(const char *arch, struct backend_ctx **out, char *why, size_t whylen);
void backend_cuda_close_nvrtc(struct backend_ctx *ctx);

/* NVRTC compile of SRC with "NAME=V" defines into a malloc'd cubin. Thread-safe. */
int backend_cuda_nvrtc(struct backend_ctx *ctx, const char *src, size_t len,
                       const char *const *defines, int ndefines, char **cubin, size_t *cubin_len,
                       char *log, size_t loglen);
/* Loads a cubin from backend_cuda_nvrtc() as a module (calling thread only). */
int backend_cuda_load(struct backend_ctx *ctx, const char *cubin, int gsu,
                      struct backend_module **out, char *log, size_t loglen);

/*
 * The CUDA space for problem P, written into STORE (dtype and transposes fixed).
 * FULL: every parameter of both paths (the benchmark restricts it itself);
 * otherwise the tuner's space: matrix cores for fp16/bf16 where the device has
 * them and the operands allow 16-byte copies (backend_cuda_chunks_ok) or are
 * worth repacking (backend_cuda_repack_pays), the edge-checked FMA path (GEMV for a few rows) otherwise, the other path's
 * parameters fixed: every valid problem has a valid point. MATRIX_CORES: 0 none,
 * 1 mma.sync (sm_80 and up; HIP's WMMA), 2 sm_90 with wgmma: then problems with
 * M >= 128 and N >= 64 get the wgmma space (MC=2, default 256 x 128, 2
 * warpgroups, 4 stages) and smaller ones mma.sync's.
 */
const struct space_def *backend_cuda_space_for(struct space_def *store,
                                               const struct gemm_problem *p, int matrix_cores,
                                               int full);
/*
 * The same for a device of UNITS SMs or CUs (0: unknown, taken as the
 * H200's 132): the tuner's space's default is chosen by the problem's shape
 * class (docs/KERNELS.md, "Defaults by shape class"), and store->dflt_why
 * says which class and what it chose.
 */
const struct space_def *backend_cuda_space_dev(struct space_def *store,
                                               const struct gemm_problem *p, int matrix_cores,
                                               int units, int full);
/*
 * The NVIDIA kernel module's version ("580.65.06") from the text of
 * /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
 * 580.65.06  Sun Jul 27 ..."): 0, or ROCMD_ENOTFOUND. cuDriverGetVersion only
 * gives the CUDA API level (13.0), which a driver update within it keeps; the
 * tuner's key needs the module's version to see that update.
 */
int backend_cuda_parse_nvrm(const char *text, char *out, size_t outlen);

/* 1 when the matrix-core paths can copy P's operands in 16-byte chunks (cp.async):
 * lda, ldb and the batch strides multiples of 8 elements, addresses aligned. */
int backend_cuda_chunks_ok(const struct gemm_problem *p);
/*
 * Whether P's operands that cannot be copied in chunks (an odd leading
 * dimension, stride or address) are worth repacking into an aligned workspace
 * before a matrix-core kernel (rk_pack, run by the backend's gemm): a problem
 * of at least 64 in each dimension whose flops are 512 or more per byte
 * repacked. The matrix-core paths run any problem (repacking as needed); this
 * chooses their default.
 */
int backend_cuda_repack_pays(const struct gemm_problem *p);

/* Shared memory bytes a configuration's values (in space order) need. */
int64_t backend_cuda_smem_bytes(const int64_t *v);

#endif
