/*
 * Deploy in the daemon, Windows part (deploy-jobs-os.h): the smoke test
 * program sits beside rocmd.exe (as rocmd-hip-probe.exe does), found through
 * GetModuleFileNameW, so a path that is not ASCII still works; an SDK's
 * bin\rocblas.dll is a plain file.
 */
#include "deploy-jobs-os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>

#include "common/win-util.h"

const int rocmd_deploy_native_windows = 1;
const int rocmd_deploy_busy_retries = 5;

void
rocmd_deploy_smoke_find(char *out, size_t n)
{
	wchar_t exe[32768], *slash;
	DWORD len = GetModuleFileNameW(NULL, exe, sizeof(exe) / sizeof(exe[0]) - 32);
	char *u8;

	if (len == 0 || len >= sizeof(exe) / sizeof(exe[0]) - 32) {
		snprintf(out, n, "rocmd-rocblas-smoke.exe");
		return;
	}
	exe[len] = L'\0';
	slash = wcsrchr(exe, L'\\');
	wcscpy(slash != NULL ? slash + 1 : exe, L"rocmd-rocblas-smoke.exe");
	u8 = rocmd_win_utf8(exe);
	snprintf(out, n, "%s", u8 != NULL ? u8 : "rocmd-rocblas-smoke.exe");
	free(u8);
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
