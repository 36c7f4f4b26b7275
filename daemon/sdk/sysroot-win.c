/*
 * Resolving system paths on Windows: see sysroot.h. On the machine itself
 * (no root) Windows names the canonical path: the folder is opened and
 * GetFinalPathNameByHandleW follows junctions and symlinks and spells every
 * component as it is on disk, so "c:\program files\amd\rocm\6.2\" (from
 * HIP_PATH) and "C:\Program Files\AMD\ROCm\6.2" (the folder scan) are one
 * install. Under a sandbox root the path is normalised by name ("." and ".."
 * never leave the root) and must exist; links inside a sandbox are not
 * followed (the sandbox tests for links run on Linux).
 */
#include "sysroot.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/error.h"
#include "common/win-util.h"
#include "common/fs.h"

/* The final path of existing file or folder W, as a UTF-8 Windows path. */
static int
final_path(const wchar_t *w, char *out, size_t outlen)
{
	wchar_t buf[32768];
	const wchar_t *p = buf;
	HANDLE h;
	DWORD n, err;
	char *u8;
	int rc;

	h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
	                OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		err = GetLastError();
		if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ||
		    err == ERROR_INVALID_DRIVE || err == ERROR_INVALID_NAME)
			return -ENOENT;
		if (err == ERROR_CANT_RESOLVE_FILENAME)
			return -ELOOP;
		if (err == ERROR_ACCESS_DENIED)
			return -EACCES;
		return rocmd_win_error(err);
	}
	n = GetFinalPathNameByHandleW(h, buf, sizeof(buf) / sizeof(buf[0]),
	                              FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	err = GetLastError();
	CloseHandle(h);
	if (n == 0 || n >= sizeof(buf) / sizeof(buf[0]))
		return n == 0 ? rocmd_win_error(err) : ROCMD_EINVAL;
	/* "\\?\C:\..." -> "C:\..."; "\\?\UNC\server\share" -> "\\server\share". */
	if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) {
		p += 6;
		buf[6] = L'\\';
	} else if (wcsncmp(p, L"\\\\?\\", 4) == 0) {
		p += 4;
	}
	u8 = rocmd_win_utf8(p);
	if (u8 == NULL)
		return ROCMD_ENOMEM;
	rc = snprintf(out, outlen, "%s", u8);
	free(u8);
	if (rc < 0 || (size_t)rc >= outlen)
		return ROCMD_EINVAL;
	/* A drive root keeps its separator ("C:\"); nothing else has one at the end. */
	rc = (int)strlen(out);
	while (rc > 3 && out[rc - 1] == '\\')
		out[--rc] = '\0';
	return 0;
}

/* Normalises SYS by name into OUT ("C:\a\..\b" -> "C:\b"; "/a/./b" -> "/a/b"). */
static int
normalize(const char *sys, char *out, size_t outlen)
{
	int win = rocmd_sysroot_is_windows_path(sys);
	char sep = win ? '\\' : '/';
	size_t n, base;
	const char *p = win ? sys + 2 : sys;

	if (outlen < 4)
		return ROCMD_EINVAL;
	if (win) {
		out[0] = (char)toupper((unsigned char)sys[0]);
		out[1] = ':';
		n = 2;
	} else {
		n = 0;
	}
	base = n;
	out[n] = '\0';
	while (*p != '\0') {
		size_t len;
		while (*p == '/' || *p == '\\')
			p++;
		if (*p == '\0')
			break;
		len = strcspn(p, "/\\");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *last = strrchr(out + base, sep);
			n = last != NULL ? (size_t)(last - out) : base;
			out[n] = '\0';
		} else if (!(len == 1 && p[0] == '.')) {
			if (n + 1 + len + 1 > outlen)
				return ROCMD_EINVAL;
			out[n++] = sep;
			memcpy(out + n, p, len);
			n += len;
			out[n] = '\0';
		}
		p += len;
	}
	if (n == base) {
		out[n++] = sep;
		out[n] = '\0';
	}
	return 0;
}

int
rocmd_sysroot_resolve(const char *root, const char *sys, char *out, size_t outlen)
{
	char norm[4096], host[4096];
	struct rocmd_fsinfo st;
	wchar_t *w;
	int rc;

	if (outlen > 0)
		out[0] = '\0';
	if (sys == NULL || !(rocmd_sysroot_is_windows_path(sys) || sys[0] == '/'))
		return ROCMD_EINVAL;
	if ((rc = normalize(sys, norm, sizeof(norm))) < 0)
		return rc;
	if ((root == NULL || root[0] == '\0' || strcmp(root, "/") == 0) &&
	    rocmd_sysroot_is_windows_path(norm)) {
		w = rocmd_win_wide(norm);
		if (w == NULL)
			return ROCMD_ENOMEM;
		rc = final_path(w, out, outlen);
		free(w);
		return rc;
	}
	if ((rc = rocmd_sysroot_map(root, norm, host, sizeof(host))) < 0)
		return rc;
	if ((rc = rocmd_fsinfo_get(host, 1, &st)) < 0)
		return rc;
	rc = snprintf(out, outlen, "%s", norm);
	return rc < 0 || (size_t)rc >= outlen ? ROCMD_EINVAL : 0;
}
