/*
 * Deploy in the daemon, POSIX part (deploy-jobs-os.h): the smoke test program
 * found beside rocmd (common/spawn.h rocmd_self_beside) or in libexec, and
 * librocblas.so.N symlinks resolved.
 */
#include "deploy-jobs-os.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spawn.h"

const int rocmd_deploy_native_windows = 0;
const int rocmd_deploy_busy_retries = 0;

void
rocmd_deploy_smoke_find(char *out, size_t n)
{
	if (rocmd_self_beside("rocmd-rocblas-smoke", out, n) == 0)
		return;
	snprintf(out, n, "%s/rocmd/rocmd-rocblas-smoke", ROCMD_LIBEXECDIR);
}

void
rocmd_deploy_binary_resolve(char *path, size_t n)
{
	char real[PATH_MAX];
	const char *a, *b;

	if (path[0] == '\0' || realpath(path, real) == NULL)
		return;
	a = strrchr(path, '/');
	b = strrchr(real, '/');
	/* Only a file in the same folder: the target's binary stays where it is. */
	if (a != NULL && b != NULL && a - path == b - real &&
	    strncmp(path, real, (size_t)(a - path)) == 0)
		snprintf(path, n, "%s", real);
}

void
rocmd_deploy_denied_hint(const char *folder, char *why, size_t whylen)
{
	(void)folder;
	(void)why;
	(void)whylen;
}
