/*
 * The AMD display driver's version on Windows (gpu.h): the display adapters'
 * device class key, HKLM\SYSTEM\CurrentControlSet\Control\Class\
 * {4d36e968-e325-11ce-bfc1-08002be10318}, holds one subkey per installed
 * adapter driver (0000, 0001, ...) with its ProviderName and DriverVersion;
 * AMD's driver package adds RadeonSoftwareVersion, the Adrenalin release
 * ("24.3.1") the community and catalogues name. The first AMD subkey wins;
 * a subkey or value that cannot be read is passed over.
 */
#include "gpu.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

#define DISPLAY_CLASS                                                                              \
	L"SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}"

/* The string value NAME of KEY as UTF-8 into OUT; 0, or -1. */
static int
value(HKEY key, const wchar_t *name, char *out, size_t len)
{
	wchar_t w[256];
	DWORD type, bytes = sizeof(w) - sizeof(wchar_t);

	if (RegQueryValueExW(key, name, NULL, &type, (BYTE *)w, &bytes) != ERROR_SUCCESS ||
	    type != REG_SZ)
		return -1;
	w[bytes / sizeof(wchar_t)] = L'\0';
	return WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)len, NULL, NULL) > 1 ? 0 : -1;
}

void
rocmd_gpu_display_driver(char *out, size_t len)
{
	HKEY cls, sub;
	wchar_t name[64];
	char provider[256], version[64];

	out[0] = '\0';
	if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, DISPLAY_CLASS, 0, KEY_READ, &cls) != ERROR_SUCCESS)
		return;
	for (DWORD i = 0; out[0] == '\0'; i++) {
		DWORD n = sizeof(name) / sizeof(name[0]);
		LONG rc = RegEnumKeyExW(cls, i, name, &n, NULL, NULL, NULL, NULL);

		if (rc == ERROR_NO_MORE_ITEMS)
			break;
		if (rc != ERROR_SUCCESS || RegOpenKeyExW(cls, name, 0, KEY_READ, &sub) != ERROR_SUCCESS)
			continue;
		if (value(sub, L"ProviderName", provider, sizeof(provider)) == 0 &&
		    (strstr(provider, "Advanced Micro Devices") != NULL ||
		     strncmp(provider, "AMD", 3) == 0 || strncmp(provider, "ATI", 3) == 0) &&
		    (value(sub, L"RadeonSoftwareVersion", version, sizeof(version)) == 0 ||
		     value(sub, L"DriverVersion", version, sizeof(version)) == 0))
			snprintf(out, len, "%s", version);
		RegCloseKey(sub);
	}
	RegCloseKey(cls);
}
