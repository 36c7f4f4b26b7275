/*
 * The platform part of the SDK manager on Windows: the Windows layout rules
 * always apply; the daemon's environment is read as UTF-16 and converted (the
 * C runtime's environ holds the ANSI code page's idea of it); and
 * rocmd-hip-probe.exe sits beside rocmd.exe. See sdk-internal.h. The
 * machine environment, which changes while a service runs, is read from the
 * registry at every scan (registry.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>

#include "common/dl.h"
#include "common/hip-runtime.h"
#include "common/spawn.h"
#include "common/win-util.h"
#include "sdk-internal.h"
#include "sysroot.h"

const int rocmd_sdk_native_windows = 1;

int
rocmd_sdk_driver_runtime(const char *root, char *host, char *sys, size_t len)
{
	const char *const *names = rocmd_hip_win_runtimes;
	char dir[MAX_PATH * 3];
	int found = -1;

	if (rocmd_dl_system_dir(dir, sizeof(dir)) < 0)
		return -1;
	for (size_t i = 0; found < 0 && names[i] != NULL; i++) {
		wchar_t *w;
		DWORD attr;

		if ((size_t)snprintf(sys, len, "%s\\%s", dir, names[i]) >= len ||
		    rocmd_sysroot_map(root, sys, host, len) < 0 || (w = rocmd_win_wide(host)) == NULL)
			continue;
		attr = GetFileAttributesW(w);
		free(w);
		if (attr != INVALID_FILE_ATTRIBUTES && !(attr & FILE_ATTRIBUTE_DIRECTORY))
			found = 0;
	}
	if (found < 0)
		host[0] = sys[0] = '\0';
	return found;
}

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
	size_t len = strlen(rocmd_self_exe()) + 32;
	char *out = malloc(len);

	if (out == NULL)
		return NULL;
	/* The path beside rocmd.exe even when the file is missing: the error
	 * then names where it should be. */
	rocmd_self_beside("rocmd-hip-probe.exe", out, len);
	if (out[0] == '\0')
		snprintf(out, len, "rocmd-hip-probe.exe");
	return out;
}
