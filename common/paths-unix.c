/*
 * Default paths on Linux and other Unix systems: see paths.h.
 */
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

static int
fmt_path(char *out, size_t outlen, const char *dir, const char *name)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int
rocmd_paths_daemon_socket(char *out, size_t outlen)
{
	const char *xdg;

	if (geteuid() == 0)
		return fmt_path(out, outlen, "/run/rocmd", "rocmd.sock");
	xdg = getenv("XDG_RUNTIME_DIR");
	if (xdg == NULL || xdg[0] != '/')
		return ROCMD_ENOTFOUND;
	return fmt_path(out, outlen, xdg, "rocmd.sock");
}

int
rocmd_paths_client_socket(char *out, size_t outlen)
{
	const char *env = getenv("ROCMD_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (env != NULL && env[0] != '\0') {
		if (strlen(env) >= outlen)
			return -ENAMETOOLONG;
		strcpy(out, env);
		return 0;
	}
	if (geteuid() != 0 && xdg != NULL && xdg[0] == '/' &&
	    fmt_path(out, outlen, xdg, "rocmd.sock") == 0 && stat(out, &st) == 0 &&
	    S_ISSOCK(st.st_mode))
		return 0;
	return fmt_path(out, outlen, "/run/rocmd", "rocmd.sock");
}

int
rocmd_paths_mkdir_p(const char *dir, unsigned mode)
{
	char buf[4096];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}
