/*
 * Deploy in the daemon, Windows part (deploy-jobs-os.h): the smoke test
 * program sits beside rocmd.exe (as rocmd-hip-probe.exe does: common/spawn.h
 * rocmd_self_beside, UTF-8, so a path that is not ASCII still works); an SDK's
 * bin\rocblas.dll is a plain file.
 */
#include "deploy-jobs-os.h"

#include <stdio.h>
#include <string.h>

#include "common/spawn.h"

const int rocmd_deploy_native_windows = 1;
const int rocmd_deploy_busy_retries = 5;

void
rocmd_deploy_smoke_find(char *out, size_t n)
{
	/* The path beside rocmd.exe even when the file is missing. */
	rocmd_self_beside("rocmd-rocblas-smoke.exe", out, n);
	if (out[0] == '\0')
		snprintf(out, n, "rocmd-rocblas-smoke.exe");
}

void
rocmd_deploy_denied_hint(const char *folder, char *why, size_t whylen)
{
	size_t len = strlen(why);

	if (len + 1 < whylen)
		snprintf(why + len, whylen - len,
		         "; when rocmd runs as its service (LocalService), grant it modify rights "
		         "there first, from an elevated prompt: icacls \"%s\" /grant "
		         "\"NT SERVICE\\rocmd:(OI)(CI)M\"",
		         folder);
}

void
rocmd_deploy_binary_resolve(char *path, size_t n)
{
	(void)path;
	(void)n;
}
