/*
 * The built-in shape families (families.h). Layer shapes from the models'
 * published configurations (hidden size, intermediate size, attention and
 * key-value heads): q, k and v fused as one GEMM (hidden + 2 x kv heads x
 * head size), gate and up fused (2 x intermediate), o and down as they are.
 */
#include "kernels/families.h"

#include <stddef.h>

const struct tune_family_gemm tune_family_gemms[] = {
    /* Llama 2 7B: hidden 4096, intermediate 11008, 32 heads, no GQA */
    {"llama2-7b", "qkv", 12288, 4096},
    {"llama2-7b,llama3-8b,mistral-7b", "o", 4096, 4096},
    {"llama2-7b", "gate_up", 22016, 4096},
    {"llama2-7b", "down", 4096, 11008},
    /* Llama 3 8B and Mistral 7B: hidden 4096, intermediate 14336, 8 kv heads of 128 */
    {"llama3-8b,mistral-7b", "qkv", 6144, 4096},
    {"llama3-8b,mistral-7b", "gate_up", 28672, 4096},
    {"llama3-8b,mistral-7b", "down", 4096, 14336},
    /* Qwen 2 7B: hidden 3584, intermediate 18944, 4 kv heads of 128 */
    {"qwen2-7b", "qkv", 4608, 3584},
    {"qwen2-7b", "o", 3584, 3584},
    {"qwen2-7b", "gate_up", 37888, 3584},
    {"qwen2-7b", "down", 3584, 18944},
    {NULL, NULL, 0, 0},
};

const int64_t tune_family_decode[] = {1, 4, 8, 16, 0};
const int64_t tune_family_prefill[] = {128, 512, 1024, 2048, 4096, 0};

void
tune_family_problem(const struct tune_family_gemm *g, int64_t tokens, enum gemm_dtype dt,
                    struct gemm_problem *p)
{
	gemm_problem_init(p, dt, GEMM_T, GEMM_N, g->out, tokens, g->in, 1);
}
