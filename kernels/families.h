/*
 * Built-in GEMM shape families: the linear layers of the models our users run
 * (Llama 2 7B, Llama 3 8B, Mistral 7B, Qwen 2 7B), at the token counts of
 * decoding (1-16) and of prefill (128-4096). They stand in for the GEMMs of
 * programs nobody captured: the tune scheduler queues them by default, and
 * bench/vendor-gemm times them.
 *
 * Those programs keep weights row-major [out, in] and activations row-major
 * [tokens, in] and compute y = x W^T; in BLAS's column-major terms that is
 * C (out x tokens) = op(A) op(B) with A the weights read transposed and B the
 * activations as they lie: "TN", M = out features, N = tokens, K = in
 * features, lda = ldb = K, ldc = M.
 */
#ifndef ROCMD_KERNELS_FAMILIES_H
#define ROCMD_KERNELS_FAMILIES_H

#include <stdint.h>

#include "kernels/gemm.h"

struct tune_family_gemm {
	const char *family; /* "llama3-8b,mistral-7b": the models with this layer shape */
	const char *layer;  /* "qkv", "o", "gate_up", "down" */
	int64_t out, in;    /* the weight's shape */
};

/* The layers, NULL-terminated (family NULL). */
extern const struct tune_family_gemm tune_family_gemms[];
/* Token counts, 0-terminated: decoding and prefill. */
extern const int64_t tune_family_decode[];
extern const int64_t tune_family_prefill[];

/* The GEMM of layer G for TOKENS tokens in DT (TN, tight). */
void tune_family_problem(const struct tune_family_gemm *g, int64_t tokens, enum gemm_dtype dt,
                         struct gemm_problem *p);

#endif
