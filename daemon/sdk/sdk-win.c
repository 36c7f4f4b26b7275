/*
 * The platform part of the SDK manager on Windows: the Windows layout rules
 * always apply; the daemon's environment is read as UTF-16 and converted (the
 * C runtime's environ holds the ANSI code page's idea of it); and
 * rocmd-hip-probe.exe sits beside rocmd.exe. See sdk-internal.h. The
 * machine environment, which changes while a service runs, is read from the
 * registry at every scan (registry.h).
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>

#include "common/win-util.h"
#include "sdk-internal.h"

const int rocmd_sdk_native_windows = 1;

char **
rocmd_sdk_discovery_env(void)
{
	char **out = calloc(1, sizeof(*out));
	wchar_t *block = GetEnvironmentStringsW();
	size_t n = 0;

	for (const wchar_t *e = block; out != NULL && e != NULL && *e != L'\0';
	     e += wcslen(e) + 1) {
		char *u8 = rocmd_win_utf8(e);
		if (u8 != NULL && rocmd_sdk_env_wanted(u8))
			rocmd_sdk_strv_add(&out, &n, u8);
		free(u8);
	}
	if (block != NULL)
		FreeEnvironmentStringsW(block);
	return out;
}

char *
rocmd_sdk_find_probe(void)
{
	wchar_t exe[32768];
	DWORD n = GetModuleFileNameW(NULL, exe, sizeof(exe) / sizeof(exe[0]) - 32);
	wchar_t *slash;

	if (n == 0 || n >= sizeof(exe) / sizeof(exe[0]) - 32)
		return strdup("rocmd-hip-probe.exe");
	exe[n] = L'\0';
	slash = wcsrchr(exe, L'\\');
	wcscpy(slash != NULL ? slash + 1 : exe, L"rocmd-hip-probe.exe");
	return rocmd_win_utf8(exe);
}
