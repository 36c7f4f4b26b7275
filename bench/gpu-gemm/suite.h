/*
 * The problems of the GPU GEMM suite, shared by bench/gpu-gemm (rocmd's
 * kernels through the backend against cuBLAS) and bench/gemm-api's
 * bench-gemm-api-cublas (the same problems through the public C API): square
 * and layout shapes at 4096^3, three odd shapes, and the linear layers of
 * Llama 2 7B and Llama 3 8B at decode and prefill token counts, TN (x W^T
 * with row-major weights). 38 problems per dtype.
 */
#ifndef ROCMD_BENCH_GPU_GEMM_SUITE_H
#define ROCMD_BENCH_GPU_GEMM_SUITE_H

#include <stdint.h>

#include "kernels/gemm.h"

enum group { G_SQUARE, G_LAYOUT, G_ODD, G_DECODE, G_PREFILL, G_COUNT };
static const char *const group_name[G_COUNT] = {"square", "layout", "odd", "decode", "prefill"};

struct problem {
	enum gemm_dtype dt;
	enum group g;
	char op[3];
	const char *what; /* the LLM matrix, "" otherwise */
	int64_t m, n, k;
};

static const struct {
	enum group g;
	const char *op;
	int64_t m, n, k;
} fixed_shapes[] = {
    {G_SQUARE, "NN", 1024, 1024, 1024}, {G_SQUARE, "NN", 4096, 4096, 4096},
    {G_SQUARE, "NN", 8192, 8192, 8192}, {G_LAYOUT, "NT", 4096, 4096, 4096},
    {G_LAYOUT, "TN", 4096, 4096, 4096}, {G_LAYOUT, "TT", 4096, 4096, 4096},
    {G_ODD, "NN", 1000, 1000, 1000},    {G_ODD, "NN", 333, 4096, 4096},
    {G_ODD, "NN", 3333, 2222, 1111},
};

/* (N, K) of the linear layers of Llama 2 7B and Llama 3 8B. */
static const struct {
	const char *what;
	int64_t n, k;
} llm_layers[] = {
    {"attn", 4096, 4096},     {"7b-up", 11008, 4096},  {"7b-down", 4096, 11008},
    {"8b-up", 14336, 4096},   {"8b-down", 4096, 14336},
};
static const int64_t llm_tokens[] = {1, 8, 16, 128, 512, 4096};

/* Every problem of the suite for dtype DT in table order, prefill attn at M =
 * 4096 (layout's TN 4096^3) once: the count (at most MAX). */
static inline int
suite_problems(enum gemm_dtype dt, struct problem *out, int max)
{
	struct problem pr = {.dt = dt, .what = ""};
	int n = 0, i, j, t;

	for (i = 0; i < (int)(sizeof(fixed_shapes) / sizeof(fixed_shapes[0])) && n < max; i++) {
		pr.g = fixed_shapes[i].g;
		pr.op[0] = fixed_shapes[i].op[0];
		pr.op[1] = fixed_shapes[i].op[1];
		pr.op[2] = '\0';
		pr.m = fixed_shapes[i].m;
		pr.n = fixed_shapes[i].n;
		pr.k = fixed_shapes[i].k;
		out[n++] = pr;
	}
	pr.op[0] = 'T';
	pr.op[1] = 'N';
	for (t = 0; t < (int)(sizeof(llm_tokens) / sizeof(llm_tokens[0])); t++)
		for (j = 0; j < (int)(sizeof(llm_layers) / sizeof(llm_layers[0])) && n < max; j++) {
			pr.g = llm_tokens[t] <= 16 ? G_DECODE : G_PREFILL;
			pr.what = llm_layers[j].what;
			pr.m = llm_tokens[t];
			pr.n = llm_layers[j].n;
			pr.k = llm_layers[j].k;
			if (pr.m == 4096 && pr.n == 4096 && pr.k == 4096)
				continue; /* layout's TN 4096^3 */
			out[n++] = pr;
		}
	return n;
}

#endif
