/*
 * The registry on Windows: see registry.h. Keys are opened in the 64-bit
 * view (KEY_WOW64_64KEY), read with the wide-character API, and every name
 * and value is handed on as UTF-8. REG_EXPAND_SZ values are expanded with
 * ExpandEnvironmentStringsW, as Explorer does for the environment. ROOT is
 * not used: a sandbox root maps files, not the registry.
 */
#include "registry.h"

#include <stdlib.h>
#include <wchar.h>

#include <windows.h>

#include "common/error.h"
#include "common/win-util.h"

#define ROCM_KEY L"SOFTWARE\\AMD\\ROCm"
#define ENV_KEY L"SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"
#define NAME_MAX_W 16384 /* the registry's limit on value names */
#define VALUE_MAX_W 32768

/* Opens HKLM\PATH for reading; *OUT is NULL (and 0 returned) when it does not exist. */
static int
open_key(const wchar_t *path, HKEY *out)
{
	LSTATUS st = RegOpenKeyExW(HKEY_LOCAL_MACHINE, path, 0, KEY_READ | KEY_WOW64_64KEY, out);

	if (st == ERROR_SUCCESS)
		return 0;
	*out = NULL;
	return st == ERROR_FILE_NOT_FOUND ? 0 : rocmd_win_error((unsigned long)st);
}

/* A string value read into BUF (BYTES long), expanded when it is REG_EXPAND_SZ, as UTF-8
 * in *OUT (NULL when there is no such string value). BUF holds VALUE_MAX_W + 1
 * characters, EXP VALUE_MAX_W. */
static int
string_value(DWORD type, wchar_t *buf, DWORD bytes, wchar_t *exp, char **out)
{
	const wchar_t *v = buf;

	*out = NULL;
	if (type != REG_SZ && type != REG_EXPAND_SZ)
		return 0;
	/* Registry strings need not be terminated. */
	buf[bytes / sizeof(*buf)] = L'\0';
	if (type == REG_EXPAND_SZ) {
		DWORD n = ExpandEnvironmentStringsW(buf, exp, VALUE_MAX_W);
		if (n == 0 || n > VALUE_MAX_W)
			return 0;
		v = exp;
	}
	*out = rocmd_win_utf8(v);
	return *out != NULL ? 0 : ROCMD_ENOMEM;
}

int
rocmd_registry_rocm_installs(const char *root, rocmd_registry_rocm_fn fn, void *ctx)
{
	wchar_t *name = NULL, *value = NULL, *expanded = NULL;
	HKEY k = NULL;
	int rc;

	if ((rc = open_key(ROCM_KEY, &k)) < 0 || k == NULL)
		return rc;
	name = malloc(256 * sizeof(*name));
	value = malloc((VALUE_MAX_W + 1) * sizeof(*value));
	expanded = malloc(VALUE_MAX_W * sizeof(*expanded));
	if (name == NULL || value == NULL || expanded == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (DWORD i = 0; rc == 0; i++) {
		DWORD nlen = 256, vlen = VALUE_MAX_W * sizeof(*value), type = 0;
		char *key8, *dir8 = NULL;
		HKEY sub;
		LSTATUS st = RegEnumKeyExW(k, i, name, &nlen, NULL, NULL, NULL, NULL);

		if (st == ERROR_NO_MORE_ITEMS)
			break;
		if (st == ERROR_MORE_DATA)
			continue; /* a key name longer than any version */
		if (st != ERROR_SUCCESS) {
			rc = rocmd_win_error((unsigned long)st);
			break;
		}
		if (RegOpenKeyExW(k, name, 0, KEY_QUERY_VALUE | KEY_WOW64_64KEY, &sub) ==
		    ERROR_SUCCESS) {
			if (RegQueryValueExW(sub, L"InstallDir", NULL, &type, (BYTE *)value,
			                     &vlen) == ERROR_SUCCESS)
				rc = string_value(type, value, vlen, expanded, &dir8);
			RegCloseKey(sub);
		}
		key8 = rocmd_win_utf8(name);
		if (rc == 0 && key8 == NULL)
			rc = ROCMD_ENOMEM;
		if (rc == 0)
			rc = fn(key8, dir8, ctx);
		free(key8);
		free(dir8);
	}
out:
	free(name);
	free(value);
	free(expanded);
	RegCloseKey(k);
	return rc;
}

int
rocmd_registry_machine_env(const char *root, rocmd_registry_env_fn fn, void *ctx)
{
	wchar_t *name = NULL, *value = NULL, *expanded = NULL;
	HKEY k = NULL;
	int rc;

	if ((rc = open_key(ENV_KEY, &k)) < 0 || k == NULL)
		return rc;
	name = malloc(NAME_MAX_W * sizeof(*name));
	value = malloc((VALUE_MAX_W + 1) * sizeof(*value));
	expanded = malloc(VALUE_MAX_W * sizeof(*expanded));
	if (name == NULL || value == NULL || expanded == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (DWORD i = 0; rc == 0; i++) {
		DWORD nlen = NAME_MAX_W, vlen = VALUE_MAX_W * sizeof(*value), type = 0;
		char *name8, *value8 = NULL;
		LSTATUS st = RegEnumValueW(k, i, name, &nlen, NULL, &type, (BYTE *)value, &vlen);

		if (st == ERROR_NO_MORE_ITEMS)
			break;
		if (st == ERROR_MORE_DATA)
			continue; /* longer than any path: not one of ours */
		if (st != ERROR_SUCCESS) {
			rc = rocmd_win_error((unsigned long)st);
			break;
		}
		if ((rc = string_value(type, value, vlen, expanded, &value8)) < 0)
			break;
		if (value8 == NULL)
			continue;
		name8 = rocmd_win_utf8(name);
		if (name8 == NULL)
			rc = ROCMD_ENOMEM;
		else
			rc = fn(name8, value8, ctx);
		free(name8);
		free(value8);
	}
out:
	free(name);
	free(value);
	free(expanded);
	RegCloseKey(k);
	return rc;
}
