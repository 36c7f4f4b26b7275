/*
 * The machine's environment on Windows (see tune-env.h): the system
 * environment in the registry, then WM_SETTINGCHANGE broadcast, as the
 * System Properties dialog does. ROOT has no meaning here.
 */
#include "tune-env.h"

#include <stdio.h>
#include <wchar.h>
#include <windows.h>

#include "common/error.h"
#include "common/failpoint.h"

#define ENV_KEY L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"

int
tune_env_apply(const char *root, const struct tune_env_var *vars, int n, char *why,
               size_t whylen)
{
	HKEY key;
	LONG rc;
	DWORD_PTR res;

	(void)root;
	rc = RegOpenKeyExW(HKEY_LOCAL_MACHINE, ENV_KEY, 0, KEY_SET_VALUE, &key);
	if (rc != ERROR_SUCCESS) {
		snprintf(why, whylen, "cannot open the machine environment (error %ld)", (long)rc);
		return rc == ERROR_ACCESS_DENIED ? ROCMD_EPERM : ROCMD_EIO;
	}
	for (int i = 0; i < n && rc == ERROR_SUCCESS; i++) {
		wchar_t name[128], value[2048];

		if (MultiByteToWideChar(CP_UTF8, 0, vars[i].name, -1, name, 128) == 0) {
			rc = ERROR_INVALID_DATA;
			break;
		}
		if (vars[i].value == NULL) {
			rc = RegDeleteValueW(key, name);
			if (rc == ERROR_FILE_NOT_FOUND)
				rc = ERROR_SUCCESS;
			continue;
		}
		if (MultiByteToWideChar(CP_UTF8, 0, vars[i].value, -1, value, 2048) == 0) {
			rc = ERROR_INVALID_DATA;
			break;
		}
		rc = RegSetValueExW(key, name, 0, REG_SZ, (const BYTE *)value,
		                    (DWORD)((wcslen(value) + 1) * sizeof(wchar_t)));
	}
	RegFlushKey(key);
	RegCloseKey(key);
	if (rc != ERROR_SUCCESS) {
		snprintf(why, whylen, "cannot change the machine environment (error %ld)", (long)rc);
		return ROCMD_EIO;
	}
	ROCMD_KILLPOINT("tune.env.registry");
	/* Running programs that care (Explorer) read the environment again. */
	SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0, (LPARAM)L"Environment",
	                    SMTO_ABORTIFHUNG, 5000, &res);
	return 0;
}

int
rocmd_tune_env_read(const char *root, const char *name, char *value, size_t len, char *where,
                    size_t wlen)
{
	wchar_t wname[128], wvalue[2048];
	DWORD size = sizeof(wvalue);

	(void)root;
	snprintf(where, wlen,
	         "HKLM\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\"
	         "Environment");
	if (MultiByteToWideChar(CP_UTF8, 0, name, -1, wname, 128) == 0 ||
	    RegGetValueW(HKEY_LOCAL_MACHINE, ENV_KEY, wname, RRF_RT_REG_SZ, NULL, wvalue, &size) !=
	        ERROR_SUCCESS ||
	    WideCharToMultiByte(CP_UTF8, 0, wvalue, -1, value, (int)len, NULL, NULL) == 0)
		return 0;
	return 1;
}
