/*
 * Users of a target's files on Windows: see gpu-users.h. Windows has no KFD
 * process list; the Restart Manager (rstrtmgr.dll, the API installers use to
 * find what holds a file) names the processes that have any of the given
 * files loaded or open. It does not look inside folders, so the paths that
 * matter are files (rocblas.dll above all). ROOT is not used.
 *
 * When the Restart Manager names nobody (it failed, or it found no one), the
 * modules of every process this one may inspect are listed (Toolhelp) and a
 * process with one of the files, or a DLL under one of the folders, loaded is
 * named: wine's rstrtmgr.dll is a set of stubs that never names anyone, and
 * on Windows a second look costs a few milliseconds per process. That look
 * sees loaded DLLs only (not files merely open), and, from a service running
 * as LocalService, only processes whose security lets it read them.
 */
#include "gpu-users.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include <restartmanager.h>
#include <tlhelp32.h>

#include "common/error.h"

static int
add(struct rocmd_gpu_users *u, long pid, const WCHAR *name, const char *what)
{
	struct rocmd_gpu_user *n;
	int rc = rocmd_gpu_users_add(u, pid, what, &n);

	if (n != NULL &&
	    WideCharToMultiByte(CP_UTF8, 0, name, -1, n->name, (int)sizeof(n->name), NULL, NULL) <= 0)
		snprintf(n->name, sizeof(n->name), "?");
	return rc;
}

/* PATH through GetFullPathNameW (separators, "." and ".."), newly allocated. */
static WCHAR *
full_path(const WCHAR *path)
{
	DWORD n = GetFullPathNameW(path, 0, NULL, NULL);
	WCHAR *out = n > 0 ? calloc(n + 1, sizeof(WCHAR)) : NULL;

	if (out != NULL && GetFullPathNameW(path, n + 1, out, NULL) == 0) {
		free(out);
		out = NULL;
	}
	return out;
}

/* Whether module file MOD is one of the NFULL paths or lies under one of them. */
static int
module_matches(const WCHAR *mod, WCHAR *const *full, size_t nfull)
{
	size_t ml = wcslen(mod);

	for (size_t i = 0; i < nfull; i++) {
		size_t l = full[i] != NULL ? wcslen(full[i]) : 0;
		if (l == 0 || ml < l || _wcsnicmp(mod, full[i], l) != 0)
			continue;
		if (ml == l || mod[l] == L'\\' || full[i][l - 1] == L'\\')
			return 1;
	}
	return 0;
}

/* The Toolhelp look: processes with a matching module loaded (see above). */
static int
modules_scan(WCHAR *const *full, size_t nfull, struct rocmd_gpu_users *u)
{
	PROCESSENTRY32W pe;
	DWORD self = GetCurrentProcessId();
	HANDLE procs = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	int rc = 0;

	if (procs == INVALID_HANDLE_VALUE)
		return 0;
	memset(&pe, 0, sizeof(pe));
	pe.dwSize = sizeof(pe);
	for (BOOL more = Process32FirstW(procs, &pe); more && rc == 0;
	     more = Process32NextW(procs, &pe)) {
		MODULEENTRY32W me;
		HANDLE mods;

		if (pe.th32ProcessID == 0 || pe.th32ProcessID == self)
			continue;
		mods = CreateToolhelp32Snapshot(TH32CS_SNAPMODULE | TH32CS_SNAPMODULE32,
		                                pe.th32ProcessID);
		if (mods == INVALID_HANDLE_VALUE)
			continue; /* gone, or not ours to read */
		memset(&me, 0, sizeof(me));
		me.dwSize = sizeof(me);
		for (BOOL m = Module32FirstW(mods, &me); m; m = Module32NextW(mods, &me)) {
			char what[96], name[64];
			if (!module_matches(me.szExePath, full, nfull))
				continue;
			if (WideCharToMultiByte(CP_UTF8, 0, me.szModule, -1, name,
			                        (int)sizeof(name), NULL, NULL) <= 0)
				snprintf(name, sizeof(name), "a DLL");
			snprintf(what, sizeof(what), "has %s loaded", name);
			rc = add(u, (long)pe.th32ProcessID, pe.szExeFile, what);
			break;
		}
		CloseHandle(mods);
	}
	CloseHandle(procs);
	return rc;
}

int
rocmd_gpu_users_find(const char *root, const char *const *paths, size_t npaths,
                     struct rocmd_gpu_users *out)
{
	WCHAR key[CCH_RM_SESSION_KEY + 1] = {0};
	DWORD session, reason = 0;
	UINT needed = 0, have = 0;
	RM_PROCESS_INFO *info = NULL;
	LPCWSTR *wide = NULL;
	WCHAR **full = NULL;
	long self = (long)GetCurrentProcessId();
	int rc = 0, open = 0;

	(void)root;
	memset(out, 0, sizeof(*out));
	if (npaths == 0)
		return 0;
	wide = calloc(npaths, sizeof(*wide));
	full = calloc(npaths, sizeof(*full));
	if (wide == NULL || full == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < npaths; i++) {
		int n = MultiByteToWideChar(CP_UTF8, 0, paths[i], -1, NULL, 0);
		WCHAR *w = n > 0 ? calloc((size_t)n, sizeof(WCHAR)) : NULL;
		if (w == NULL) {
			rc = ROCMD_ENOMEM;
			goto out;
		}
		MultiByteToWideChar(CP_UTF8, 0, paths[i], -1, w, n);
		wide[i] = w;
		full[i] = full_path(w); /* NULL: that path is not compared */
	}
	if (RmStartSession(&session, 0, key) != ERROR_SUCCESS)
		goto look; /* no Restart Manager */
	open = 1;
	if (RmRegisterResources(session, (UINT)npaths, wide, 0, NULL, 0, NULL) != ERROR_SUCCESS)
		goto look;
	for (int tries = 0; tries < 3; tries++) {
		DWORD r = RmGetList(session, &needed, &have, info, &reason);
		if (r == ERROR_SUCCESS)
			break;
		if (r != ERROR_MORE_DATA) {
			have = 0;
			goto look;
		}
		free(info);
		have = needed;
		info = calloc(have, sizeof(*info));
		if (info == NULL) {
			rc = ROCMD_ENOMEM;
			goto out;
		}
	}
	for (UINT i = 0; info != NULL && i < have && rc == 0; i++) {
		long pid = (long)info[i].Process.dwProcessId;
		if (pid != self)
			rc = add(out, pid, info[i].strAppName, "has the rocBLAS files in use");
	}
look:
	if (rc == 0 && out->n == 0)
		rc = modules_scan(full, npaths, out);
out:
	if (open)
		RmEndSession(session);
	for (size_t i = 0; wide != NULL && i < npaths; i++)
		free((void *)wide[i]);
	for (size_t i = 0; full != NULL && i < npaths; i++)
		free(full[i]);
	free(wide);
	free(full);
	free(info);
	if (rc < 0)
		rocmd_gpu_users_free(out);
	return rc;
}
