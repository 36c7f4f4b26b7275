/*
 * The tuned library's CUDA code objects without a GPU: a library for sm_90
 * with an fp32 (FMA) and an fp16 (mma.sync) winner gets NVRTC cubins from
 * tunedlib_compile(), which survive the write and the strict read byte for
 * byte; a library tuned on another kernel source is refused. Exits 77
 * (skipped) when NVRTC is not installed, saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend-cuda.h"
#include "kernels/tunedlib.h"

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #c, why);     \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int
main(void)
{
	struct backend_ctx *probe = NULL;
	struct tunedlib *lib = NULL, *back = NULL;
	struct tune_key id;
	char why[1024] = "", dir[] = "/tmp/test-tunedlib-nvrtc-XXXXXX", cmd[100];
	static const enum gemm_dtype dts[2] = {GEMM_FP32, GEMM_FP16};
	size_t len = 0;
	char *src;
	int i, err;

	if (backend_cuda_open_nvrtc("sm_90", &probe, why, sizeof(why)) < 0) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	backend_cuda_close_nvrtc(probe);
	src = backend_cuda_source(&len);
	CHECK(src != NULL);
	memset(&id, 0, sizeof(id));
	strcpy(id.backend, "cuda");
	strcpy(id.arch, "sm_90");
	strcpy(id.device, "NVIDIA H200");
	id.compute_units = 132;
	strcpy(id.runtime, "NVRTC");
	snprintf(id.source_hash, sizeof(id.source_hash), "%016llx",
	         (unsigned long long)backend_hash(src, len, BACKEND_HASH_INIT));
	free(src);
	CHECK(tunedlib_new(&id, &lib) == 0);
	for (i = 0; i < 2; i++) {
		struct space_def sd;
		struct space_point pt;
		struct gemm_problem p;
		char key[SPACE_KEY_MAX], prob[64];

		gemm_problem_init(&p, dts[i], GEMM_N, GEMM_N, 4096, 4096, 4096, 1);
		backend_cuda_space_for(&sd, &p, 1, 0); /* the tuner's space on a matrix-core GPU */
		space_point_default(&sd, &pt);
		space_key(&sd, &pt, key, sizeof(key));
		gemm_problem_key(&p, prob, sizeof(prob));
		CHECK(tunedlib_add(lib, prob, key, 1.0, 2.0, why, sizeof(why)) == 0);
	}
	err = tunedlib_compile(lib, NULL, why, sizeof(why));
	CHECK(err == 0);
	for (i = 0; i < tunedlib_count(lib); i++) {
		const struct tunedlib_entry *e = tunedlib_entry_at(lib, i);

		CHECK(!strcmp(e->code_kind, "cubin") && e->code_len > 4 &&
		      !memcmp(e->code,
		              "\x7f"
		              "ELF",
		              4));
		printf("%s: cubin of %zu bytes, sha256 %.16s...\n", e->problem, e->code_len,
		       e->code_sha256);
	}
	CHECK(mkdtemp(dir) != NULL);
	CHECK(tunedlib_write(lib, dir, why, sizeof(why)) == 0);
	CHECK(tunedlib_open(dir, &back, why, sizeof(why)) == 0);
	for (i = 0; i < tunedlib_count(lib); i++) {
		const struct tunedlib_entry *a = tunedlib_entry_at(lib, i),
		                            *b = tunedlib_entry_at(back, i);

		CHECK(a->code_len == b->code_len && !memcmp(a->code, b->code, a->code_len));
	}
	tunedlib_free(back);
	tunedlib_free(lib);
	/* Winners tuned on another kernel source get no code object from this one. */
	id.source_hash[0] = id.source_hash[0] == '0' ? '1' : '0';
	CHECK(tunedlib_new(&id, &lib) == 0);
	CHECK(tunedlib_add(lib, "fp32:NN:64x64x64:b1", "DT=0", 1, 0, why, sizeof(why)) == 0);
	CHECK(tunedlib_compile(lib, NULL, why, sizeof(why)) == ROCMD_EINVAL);
	CHECK(strstr(why, "kernel source") != NULL);
	tunedlib_free(lib);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	printf("ok\n");
	return 0;
}
