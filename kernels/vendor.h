/*
 * What the vendor-solution backends share (backend-rocblas.c,
 * backend-hipblaslt.c, backend-cublaslt.c; backend.h's table): the space of a
 * library's candidates, the library's identity, and the environment an
 * evaluation process gives the library.
 *
 * A vendor library picks one of its own solutions for each GEMM; these
 * backends let the tuner measure the others. The space of a problem is one
 * parameter, SOL, whose values are the library's own identifiers of the
 * solutions that can run it, in the library's order, the first (0) always
 * being "the library's own default choice" (what a program that asks for
 * nothing gets). What SOL holds is each library's:
 *
 *   rocblas    rocblas_gemm_ex_get_solutions' values: Tensile index + 1, the
 *              same number rocblas_gemm_ex takes with
 *              rocblas_gemm_algo_solution_index and the override CSV holds
 *   hipblaslt  the solution index (the first int of hipblasLtMatmulAlgo_t)
 *              + 1, so that index 0 is not the default
 *   cublaslt   the algorithm's configuration packed into 63 bits
 *              (backend-cublaslt.c: id, tile, stages, split-K, reduction,
 *              swizzle, custom option, inner and cluster shape)
 *
 * At most SPACE_MAX_VALUES values: the default and the library's first 255
 * candidates. A short list is searched exhaustively (tune_strategy_for).
 *
 * A library is identified by its content: the SHA-256 of a list of the
 * library file and the solution tables its solution indices refer to
 * (rocBLAS's and hipBLASLt's TensileLibrary*.dat / .yaml, TensileManifest.txt
 * in the Tensile library folder and its arch subfolders), each with its name,
 * size and SHA-256. That digest is the kernel source hash of tuning keys and
 * the key of an override (daemon/tune/tune-override.c).
 */
#ifndef ROCMD_KERNELS_VENDOR_H
#define ROCMD_KERNELS_VENDOR_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/space.h"

#define VENDOR_SPACE_NAME "vendor"

/* The space of a library's candidates: SOL = 0 (the default), then SOL[0..N)
 * without duplicates or zeros, at most SPACE_MAX_VALUES in all. */
void vendor_space(struct space_def *out, const int64_t *sol, int n);
/* The candidate a configuration is (its SOL value; 0: the default). */
int64_t vendor_config_sol(const struct tune_config *cfg);
/* The compile step of a vendor backend: the SOL value of DEFINES ("SOL=N").
 * 0 and *SOL, or ROCMD_EINVAL with a sentence in LOG. */
int vendor_defines_sol(const char *const *defines, int ndefines, int64_t *sol, char *log,
                       size_t loglen);

enum vendor_kind { VENDOR_ROCBLAS, VENDOR_HIPBLASLT, VENDOR_CUBLASLT };

/*
 * The solution-table folder of library LIBRARY of KIND: TENSILE_DIR when
 * given, else where the library looks next to itself (rocBLAS's
 * tensile_host.cpp order: ../../Tensile/library, library, ../rocblas/library,
 * rocblas/library; hipBLASLt: hipblaslt/library). "" when there is none
 * (cuBLASLt). 0, or ROCMD_ENOTFOUND.
 */
int vendor_tensile_dir(enum vendor_kind kind, const char *library, const char *tensile_dir,
                       char *out, size_t outlen);
/* The library's digest (see the file comment), 64 hex digits. */
int vendor_library_digest(enum vendor_kind kind, const char *library, const char *tensile_dir,
                          char hex[65], char *why, size_t whylen);
/* A fingerprint of the sizes and modification times of the files the digest
 * covers, 16 hex digits: cheap enough to check every override at every start
 * (a changed fingerprint: the library may have changed). */
int vendor_library_stat(enum vendor_kind kind, const char *library, const char *tensile_dir,
                        char out[17], char *why, size_t whylen);
/*
 * Whether the binary LIBRARY holds the string NAME (the environment variable
 * it reads: a library that lacks ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH cannot
 * read an override). 1 yes, 0 no, negative when it cannot be read.
 */
int vendor_binary_has_string(const char *library, const char *name);

/*
 * In an evaluation process, before the library is loaded: the library must
 * measure its own choices, so every override and log variable is unset
 * (ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH, HIPBLASLT_TUNING_OVERRIDE_FILE,
 * HIPBLASLT_TUNING_FILE, ROCBLAS_LAYER, HIPBLASLT_LOG_MASK, ...), and a
 * TENSILE_DIR given is set as the library's ROCBLAS_TENSILE_LIBPATH or
 * HIPBLASLT_TENSILE_LIBPATH.
 */
void vendor_child_env(enum vendor_kind kind, const char *tensile_dir);

/* A cuBLASLt candidate's configuration in words ("algo 21 tile 18 stages 23
 * split-K 1 ...") from its SOL (backend-cublaslt.c). */
void backend_cublaslt_describe(int64_t sol, char *buf, size_t len);

/* The problem part of a vendor job's tuning key: gemm_problem_key(), then,
 * where the program's layout is not the tight one or beta is not 0,
 * "@ld=LDA.LDB.LDC", "@st=SA.SB.SC" and "@beta=B": a library's override
 * matches on them, so evaluations of two layouts are never shared. */
int vendor_problem_key(const struct gemm_problem *p, char *buf, size_t len);

/* dlopen of the first of NAMES found in DIR (when given), then as named. PATH
 * gets what was opened. NULL when none loads (WHY says the first error). */
void *vendor_dlopen(const char *dir, const char *const *names, char *path, size_t pathlen,
                    char *why, size_t whylen);
/* The folder of PATH ("." when none); Windows' '\\' is a separator too. */
void vendor_dirname(const char *path, char *out, size_t outlen);
/* The file name of PATH (after its last separator). */
const char *vendor_basename(const char *path);

#endif
