/*
 * System paths under a sandbox root: see sysroot.h. Mapping is the same on
 * every platform; resolution is not (sysroot-unix.c walks the path with
 * lstat and readlink; sysroot-win.c asks Windows for the final path).
 */
#include "sysroot.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

int
rocmd_sysroot_is_windows_path(const char *sys)
{
	return sys != NULL && isalpha((unsigned char)sys[0]) && sys[1] == ':' &&
	       (sys[2] == '\\' || sys[2] == '/');
}

int
rocmd_sysroot_map(const char *root, const char *sys, char *out, size_t outlen)
{
	size_t n;
	int len;

	if (outlen > 0)
		out[0] = '\0';
	if (root != NULL && strcmp(root, "/") == 0)
		root = NULL;
	if (rocmd_sysroot_is_windows_path(sys)) {
		if (root == NULL || root[0] == '\0')
			/* Native: only meaningful on Windows itself, which takes '/' too. */
			len = snprintf(out, outlen, "%s", sys);
		else
			len = snprintf(out, outlen, "%s/%c%s", root, tolower((unsigned char)sys[0]),
			               sys + 2);
		for (char *p = out; *p != '\0'; p++)
			if (*p == '\\')
				*p = '/';
	} else if (sys != NULL && sys[0] == '/') {
		len = snprintf(out, outlen, "%s%s", root != NULL ? root : "", sys);
	} else {
		return ROCMD_EINVAL;
	}
	if (len < 0 || (size_t)len >= outlen)
		return ROCMD_EINVAL;
	/* No trailing separator, except for the root itself ("/", "C:/"). */
	n = strlen(out);
	while (n > 1 && out[n - 1] == '/' && !(n == 3 && out[1] == ':'))
		out[--n] = '\0';
	return 0;
}
