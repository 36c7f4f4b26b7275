/*
 * The platform part of the SDK manager on POSIX systems: the daemon's
 * environment, and where rocmd-hip-probe is (beside the running rocmd, else
 * in libexec). See sdk-internal.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spawn.h"
#include "sdk-internal.h"

extern char **environ;

const int rocmd_sdk_native_windows = 0;

int
rocmd_sdk_driver_runtime(const char *root, char *host, char *sys, size_t len)
{
	(void)root;
	if (len > 0)
		host[0] = sys[0] = '\0';
	return -1;
}

char **
rocmd_sdk_discovery_env(void)
{
	char **out = calloc(1, sizeof(*out));
	size_t n = 0;

	for (size_t i = 0; out != NULL && environ != NULL && environ[i] != NULL; i++)
		if (rocmd_sdk_env_wanted(environ[i]))
			rocmd_sdk_strv_add(&out, &n, environ[i]);
	return out;
}

char *
rocmd_sdk_find_probe(void)
{
	char exe[PATH_MAX], *out = NULL;

	if (rocmd_self_beside("rocmd-hip-probe", exe, sizeof(exe)) == 0)
		return strdup(exe);
	if (asprintf(&out, "%s/rocmd/rocmd-hip-probe", ROCMD_LIBEXECDIR) < 0)
		return NULL;
	return out;
}
