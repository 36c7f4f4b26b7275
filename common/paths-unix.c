/*
 * Default paths on Linux and other Unix systems: see paths.h.
 */
#include "paths.h"

#include <errno.h>
#include <pwd.h>
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

/* An XDG variable: the spec says relative values are to be ignored. */
static const char *
env_dir(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] == '/' ? v : NULL;
}

const char *
rocmd_paths_default_config(char *buf, size_t len)
{
	const char *xdg = env_dir("XDG_CONFIG_HOME"), *home = env_dir("HOME");

	if (geteuid() == 0)
		return "/etc/rocmd/rocmd.json";
	if (xdg != NULL)
		snprintf(buf, len, "%s/rocmd/rocmd.json", xdg);
	else if (home != NULL)
		snprintf(buf, len, "%s/.config/rocmd/rocmd.json", home);
	else
		return NULL;
	return buf;
}

/* The system one for root, the XDG state folder of the user otherwise (so
 * tests and users need no root). */
char *
rocmd_paths_default_state_dir(void)
{
	const char *xdg, *home;
	struct passwd *pw;
	char *out = NULL;

	if (geteuid() == 0)
		return strdup(ROCMD_SYSTEM_STATE_DIR);
	xdg = env_dir("XDG_STATE_HOME");
	if (xdg != NULL)
		return asprintf(&out, "%s/rocmd", xdg) < 0 ? NULL : out;
	home = env_dir("HOME");
	if (home == NULL && (pw = getpwuid(geteuid())) != NULL && pw->pw_dir != NULL &&
	    pw->pw_dir[0] == '/')
		home = pw->pw_dir;
	if (home == NULL) /* no home at all: the daemon will say it cannot write here */
		return strdup(ROCMD_SYSTEM_STATE_DIR);
	return asprintf(&out, "%s/.local/state/rocmd", home) < 0 ? NULL : out;
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
