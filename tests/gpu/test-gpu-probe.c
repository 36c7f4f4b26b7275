/*
 * The GPU backends on a machine without the GPU (CI): each probe and open()
 * must come back with ROCMD_EUNSUPPORTED and a "not available: <reason>"
 * sentence, never crash or abort. Where a device exists, it is listed instead.
 * Also the HIP backend's child-process compile: a missing hiprtc and a child
 * that aborts (as Debian's HIP 5.2 hiprtc does for gfx11) are errors with a
 * log, and this process lives on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend-cuda.h"
#include "kernels/backend-hip.h"
#include "tests/lib/check.h"

static void
probe(const struct backend_ops *ops, int (*fn)(char *, size_t))
{
	struct backend_device_info info;
	struct backend_ctx *ctx = NULL;
	char why[256] = "";
	int n = fn(why, sizeof(why)), r;

	if (n > 0) {
		printf("%s: %d device(s)\n", ops->name, n);
	} else {
		printf("%s: %s\n", ops->name, why);
		CHECK(n == ROCMD_EUNSUPPORTED, "%s probe returned %d", ops->name, n);
		CHECK(!strncmp(why, "not available: ", 15), "%s reason: '%s'", ops->name, why);
	}
	memset(&info, 0, sizeof(info));
	why[0] = '\0';
	r = ops->open(0, &ctx, &info, why, sizeof(why));
	if (r == 0) {
		printf("%s: opened %s (%s), %d compute units, %s\n", ops->name, info.name,
		       info.arch, info.compute_units, info.compiler_version);
		ops->close(ctx);
	} else {
		printf("%s: open: %s\n", ops->name, why);
		CHECK(r == ROCMD_EUNSUPPORTED, "%s open returned %d", ops->name, r);
		CHECK(ctx == NULL, "%s open left a context", ops->name);
		CHECK(!strncmp(why, "not available: ", 15), "%s open reason: '%s'", ops->name, why);
	}
}

int
main(void)
{
	const char *defs[] = {"DT=1", "MC=1"};
	char log[512], *code = NULL;
	size_t len = 0;
	int r;

	probe(&backend_cuda_ops, backend_cuda_probe);
	probe(&backend_hip_ops, backend_hip_probe);

	r = backend_hip_compile_child("/nonexistent/libhiprtc.so", "gfx1103", "", defs, 2, 30,
	                              &code, &len, log, sizeof(log));
	printf("hiprtc missing: %d, %s\n", r, log);
	CHECK(r == ROCMD_EINVAL && code == NULL && strstr(log, "gfx1103") != NULL,
	      "missing hiprtc gave %d", r);

	setenv("ROCMD_TEST_HIPRTC_ABORT", "1", 1);
	r = backend_hip_compile_child("/nonexistent/libhiprtc.so", "gfx1103", "", defs, 2, 30,
	                              &code, &len, log, sizeof(log));
	unsetenv("ROCMD_TEST_HIPRTC_ABORT");
	printf("hiprtc child aborts: %d, %s\n", r, log);
	CHECK(r == ROCMD_EINVAL && code == NULL && strstr(log, "signal 6") != NULL,
	      "aborting child gave %d", r);

	return check_report();
}
