/*
 * Users of a target's files on Windows: see gpu-users.h. Windows has no KFD
 * process list; the Restart Manager (rstrtmgr.dll, the API installers use to
 * find what holds a file) names the processes that have any of the given
 * files loaded or open. PATHS should name files (rocblas.dll above all): the
 * Restart Manager does not look inside folders. ROOT is not used.
 */
#include "gpu-users.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include <restartmanager.h>

#include "common/error.h"

static int
add(struct rocmd_gpu_users *u, long pid, const WCHAR *name, const char *what)
{
	struct rocmd_gpu_user *n;

	for (size_t i = 0; i < u->n; i++)
		if (u->v[i].pid == pid)
			return 0;
	n = realloc(u->v, (u->n + 1) * sizeof(*u->v));
	if (n == NULL)
		return ROCMD_ENOMEM;
	u->v = n;
	n = &u->v[u->n++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	if (WideCharToMultiByte(CP_UTF8, 0, name, -1, n->name, (int)sizeof(n->name), NULL, NULL) <=
	    0)
		snprintf(n->name, sizeof(n->name), "?");
	snprintf(n->what, sizeof(n->what), "%s", what);
	return 0;
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
	long self = (long)GetCurrentProcessId();
	int rc = 0, open = 0;

	(void)root;
	memset(out, 0, sizeof(*out));
	if (npaths == 0)
		return 0;
	wide = calloc(npaths, sizeof(*wide));
	if (wide == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < npaths; i++) {
		int n = MultiByteToWideChar(CP_UTF8, 0, paths[i], -1, NULL, 0);
		WCHAR *w = n > 0 ? calloc((size_t)n, sizeof(WCHAR)) : NULL;
		if (w == NULL) {
			rc = ROCMD_ENOMEM;
			goto out;
		}
		MultiByteToWideChar(CP_UTF8, 0, paths[i], -1, w, n);
		wide[i] = w;
	}
	if (RmStartSession(&session, 0, key) != ERROR_SUCCESS)
		goto out; /* no Restart Manager: nobody can be named */
	open = 1;
	if (RmRegisterResources(session, (UINT)npaths, wide, 0, NULL, 0, NULL) != ERROR_SUCCESS)
		goto out;
	for (int tries = 0; tries < 3; tries++) {
		DWORD r = RmGetList(session, &needed, &have, info, &reason);
		if (r == ERROR_SUCCESS)
			break;
		if (r != ERROR_MORE_DATA)
			goto out;
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
out:
	if (open)
		RmEndSession(session);
	for (size_t i = 0; wide != NULL && i < npaths; i++)
		free((void *)wide[i]);
	free(wide);
	free(info);
	if (rc < 0)
		rocmd_gpu_users_free(out);
	return rc;
}

void
rocmd_gpu_users_free(struct rocmd_gpu_users *u)
{
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

void
rocmd_gpu_users_describe(const struct rocmd_gpu_users *u, char *out, size_t outlen)
{
	size_t len = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	for (size_t i = 0; i < u->n && len < outlen; i++) {
		int n = snprintf(out + len, outlen - len, "%s%ld (%s: %s)", i > 0 ? ", " : "",
		                 u->v[i].pid, u->v[i].name, u->v[i].what);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}
