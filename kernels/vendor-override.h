/*
 * The override files a vendor library reads to run a chosen solution for a
 * problem instead of its own choice, written in each library's exact format,
 * and read back with each library's own rules (tests and rocmd's recovery
 * check what a program will see):
 *
 *   rocBLAS     ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH: the CSV rocblas-gemm-tune
 *               writes (clients/benchmarks/gemm_tune), a section of 15 fields
 *               (transA,transB,M,N,batch_count,K,alpha,beta,lda,ldb,ldc,
 *               input_type,output_type,compute_type,solution_index) for
 *               gemm_ex and one of 18 (stride_a,stride_b,stride_c before the
 *               types) for strided batched GEMMs, each after its header line.
 *               Tensile reads it (UserDrivenTuningParser.cpp,
 *               MasterSolutionLibrary::setOverridesFromFile): lines without a
 *               comma and lines containing "transA" are skipped; the index is
 *               rocBLAS's (Tensile index + 1) and must be > 0; a problem
 *               matches on the transposes, M, N, K, batch, beta, lda, ldb,
 *               ldc, the strides (computed tight for a 15-field batched
 *               entry) and the input and output types with their HPA.
 *   hipBLASLt   HIPBLASLT_TUNING_OVERRIDE_FILE: the lines hipblaslt-bench
 *               appends to HIPBLASLT_TUNING_FILE (its log_args value line,
 *               the solution index, the arch, the CU count: 37 fields).
 *               hipBLASLt reads it (UserDrivenTuningParser.cpp): leading
 *               blanks trimmed, lines without a comma or with "Git Version"
 *               skipped, exactly 37 fields; a problem matches on transA (0),
 *               transB (1), batch_count (3), M, N, K (4-6), the a, b and c
 *               types (17-19) and the compute type (21); its solution index
 *               (34) is hipBLASLt's own and must be > 0.
 *
 * Each file starts with rocmd's identity line, which has no comma so both
 * readers skip it: what library (content digest and a fingerprint of its
 * files' sizes and times), GPU and driver the entries were measured on.
 */
#ifndef ROCMD_KERNELS_VENDOR_OVERRIDE_H
#define ROCMD_KERNELS_VENDOR_OVERRIDE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/gemm.h"

struct vendor_override_entry {
	struct gemm_problem p;
	int64_t index; /* the library's own number, as its override file holds it */
	double ms;     /* the measured time (hipBLASLt's us field), 0 unknown */
};

struct vendor_override_id {
	char library[64];   /* the library file's name */
	char digest[65];    /* kernels/vendor.h's content digest */
	char stat[17];      /* vendor_library_stat() */
	char arch[32];
	int compute_units;
	char driver[64];
	int64_t written_ms;
};

/* The text of an override file for ENTRIES (rocBLAS when ROCBLAS, else
 * hipBLASLt); N 0 writes the identity alone (an override withdrawn). *OUT is
 * malloc'd. hipBLASLt keeps one entry per problem it matches on: the first. */
int vendor_override_write(int rocblas, const struct vendor_override_id *id,
                          const struct vendor_override_entry *e, size_t n, char **out,
                          size_t *len);
/* What a library reads of TEXT, by its own rules (see above). *OUT is
 * malloc'd (NULL when none). Never fails on content: lines the library
 * would skip are skipped. */
int vendor_override_read(int rocblas, const char *text, size_t len,
                         struct vendor_override_entry **out, size_t *n);
/* S as a field of the identity line holds it: commas and blanks become '_'
 * ("HIP driver 60241134" -> "HIP_driver_60241134"), "" becomes "-". */
void vendor_override_field(char *out, size_t len, const char *s);
/* The identity line of TEXT: 0, or ROCMD_ENOTFOUND. */
int vendor_override_identity(const char *text, size_t len, struct vendor_override_id *id);
#endif
