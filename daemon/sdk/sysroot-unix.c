/*
 * Resolving system paths on POSIX systems: see sysroot.h. The path is walked
 * one component at a time with lstat and readlink, like realpath(3), but the
 * result stays a system path and never leaves the root.
 */
#include "sysroot.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/text.h"

#define SYSROOT_MAX_LINKS 40 /* as Linux's MAXSYMLINKS */

/* Appends component NAME (LEN bytes) to the resolved system path in RES. */
static int
push(char *res, size_t reslen, const char *name, size_t len)
{
	size_t n = strlen(res);

	if (n + 1 + len + 1 > reslen)
		return ROCMD_EINVAL;
	if (n == 0 || res[n - 1] != '/')
		res[n++] = '/';
	memcpy(res + n, name, len);
	res[n + len] = '\0';
	return 0;
}

static void
pop(char *res)
{
	char *slash = strrchr(res, '/');

	if (slash == NULL || slash == res)
		strcpy(res, "/");
	else
		*slash = '\0';
}

int
rocmd_sysroot_resolve(const char *root, const char *sys, char *out, size_t outlen)
{
	char rest[PATH_MAX * 2], res[PATH_MAX], host[PATH_MAX], target[PATH_MAX];
	char prefix[8] = "";
	int links = 0, rc;

	if (outlen > 0)
		out[0] = '\0';
	if (sys == NULL)
		return ROCMD_EINVAL;
	/* A Windows path resolves as a Unix path under its drive folder. */
	if (rocmd_sysroot_is_windows_path(sys)) {
		snprintf(prefix, sizeof(prefix), "/%c", tolower((unsigned char)sys[0]));
		snprintf(rest, sizeof(rest), "%s", sys + 2);
		for (char *p = rest; *p != '\0'; p++)
			if (*p == '\\')
				*p = '/';
	} else if (sys[0] == '/') {
		snprintf(rest, sizeof(rest), "%s", sys);
	} else {
		return ROCMD_EINVAL;
	}
	strcpy(res, "/");
	for (char *p = rest; *p != '\0';) {
		struct stat st;
		char *end;
		size_t len;
		ssize_t n;

		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		end = strchr(p, '/');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			pop(res);
			p += len;
			continue;
		}
		if ((rc = push(res, sizeof(res), p, len)) < 0)
			return rc;
		p += len;
		snprintf(host, sizeof(host), "%s%s%s",
		         root != NULL && strcmp(root, "/") != 0 ? root : "", prefix, res);
		if (lstat(host, &st) != 0)
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > SYSROOT_MAX_LINKS)
			return -ELOOP;
		n = readlink(host, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		/* The rest of the path goes after the link's target. */
		{
			char tail[PATH_MAX * 2];
			snprintf(tail, sizeof(tail), "%s", p);
			if (strlen(target) + 1 + strlen(tail) + 1 > sizeof(rest))
				return ROCMD_EINVAL;
			rocmd_pathf(rest, sizeof(rest), "%s/%s", target, tail);
		}
		p = rest;
		if (target[0] == '/')
			strcpy(res, "/");
		else
			pop(res);
	}
	if (prefix[0] != '\0') {
		/* Back to a Windows path: "C:\a\b". */
		rc = snprintf(out, outlen, "%c:%s", toupper((unsigned char)prefix[1]), res);
		for (char *q = out; *q != '\0'; q++)
			if (*q == '/')
				*q = '\\';
	} else {
		rc = snprintf(out, outlen, "%s", res);
	}
	return rc < 0 || (size_t)rc >= outlen ? ROCMD_EINVAL : 0;
}
