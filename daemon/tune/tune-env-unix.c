/*
 * The machine's environment on Linux (see tune-env.h): systemd's
 * environment.d for user sessions, profile.d for login shells, and the
 * system manager's environment for services.
 */
#include "tune-env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "common/fs.h"
#include "common/spawn.h"

#define ENV_D "/etc/environment.d/60-rocmd-tune.conf"
#define PROFILE_D "/etc/profile.d/rocmd-tune.sh"

static int
root_is_slash(const char *root)
{
	return root == NULL || root[0] == '\0' || !strcmp(root, "/");
}

/* Writes PATH (under ROOT) with TEXT, or removes it when TEXT is empty. */
static int
put_file(const char *root, const char *path, const char *text, char *why, size_t whylen)
{
	char full[4096], dir[4096];
	int rc;

	rocmd_fs_fmt(full, sizeof(full), "%s%s", root_is_slash(root) ? "" : root, path);
	if (text[0] == '\0') {
		rc = rocmd_fs_unlink(full);
		return rc == -ENOENT ? 0 : rc;
	}
	/* ROOT/etc/environment.d: each missing folder on the way (a test's root). */
	snprintf(dir, sizeof(dir), "%s", full);
	*strrchr(dir, '/') = '\0';
	rc = 0;
	for (char *p = dir + 1; rc == 0 || rc == -EEXIST; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		rc = rocmd_fs_mkdir(dir, 0755);
		*p = c;
		if (c == '\0')
			break;
	}
	if (rc < 0 && rc != -EEXIST) {
		snprintf(why, whylen, "cannot create %.3000s", dir);
		return rc;
	}
	rc = rocmd_fs_replace(full, NULL, text, strlen(text), 0644);
	if (rc < 0)
		snprintf(why, whylen, "cannot write %.3000s", full);
	return rc;
}

/* Whether rocmd is a service of the systemd it would tell. */
static int
under_systemd(const char *root)
{
	return root_is_slash(root) && getenv("INVOCATION_ID") != NULL &&
	       access("/run/systemd/system", F_OK) == 0;
}

static int
systemctl(const char *verb, const char *arg)
{
	static const char *const paths[] = {"/usr/bin/systemctl", "/bin/systemctl", NULL};
	char out[256];
	int status = 0;

	for (int i = 0; paths[i] != NULL; i++) {
		char *argv[] = {(char *)paths[i], (char *)verb, (char *)arg, NULL};

		if (access(paths[i], X_OK) != 0)
			continue;
		if (rocmd_child_run(argv, NULL, 10000, out, sizeof(out), &status) < 0)
			return ROCMD_EIO;
		return rocmd_child_exit_code(status) == 0 ? 0 : ROCMD_EIO;
	}
	return ROCMD_ENOTFOUND;
}

/* VALUE single-quoted for sh. */
static void
sh_quote(char *out, size_t len, const char *value)
{
	size_t o = 0;

	if (len < 3)
		return;
	out[o++] = '\'';
	for (const char *p = value; *p && o + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *p;
		}
	}
	out[o++] = '\'';
	out[o] = '\0';
}

int
tune_env_apply(const char *root, const struct tune_env_var *vars, int n, char *why,
               size_t whylen)
{
	char envd[8192] = "", prof[8192] = "", line[2200], q[2100];
	int rc, any = 0;

	for (int i = 0; i < n; i++) {
		if (vars[i].value == NULL)
			continue;
		if (!any) {
			snprintf(prof, sizeof(prof), "# rocmd: the tuned solutions of rocBLAS and "
			                             "hipBLASLt (rocmctl tune results; rocmctl tune off)\n");
			snprintf(envd, sizeof(envd), "%s", prof);
		}
		any = 1;
		snprintf(line, sizeof(line), "%s=%s\n", vars[i].name, vars[i].value);
		strncat(envd, line, sizeof(envd) - strlen(envd) - 1);
		sh_quote(q, sizeof(q), vars[i].value);
		snprintf(line, sizeof(line), "export %s=%s\n", vars[i].name, q);
		strncat(prof, line, sizeof(prof) - strlen(prof) - 1);
	}
	if ((rc = put_file(root, ENV_D, envd, why, whylen)) < 0)
		return rc;
	ROCMD_KILLPOINT("tune.env.environment_d");
	if ((rc = put_file(root, PROFILE_D, prof, why, whylen)) < 0)
		return rc;
	if (!under_systemd(root))
		return 0;
	for (int i = 0; i < n; i++) {
		if (vars[i].value != NULL) {
			snprintf(line, sizeof(line), "%s=%s", vars[i].name, vars[i].value);
			rc = systemctl("set-environment", line);
		} else {
			rc = systemctl("unset-environment", vars[i].name);
		}
		if (rc < 0) {
			snprintf(why, whylen, "systemctl could not %s %s in the manager's environment",
			         vars[i].value != NULL ? "set" : "unset", vars[i].name);
			return rc;
		}
	}
	return 0;
}

int
rocmd_tune_env_read(const char *root, const char *name, char *value, size_t len, char *where,
                    size_t wlen)
{
	char line[4200];
	size_t nl = strlen(name);
	int found = 0;
	FILE *f;

	rocmd_fs_fmt(where, wlen, "%s%s", root_is_slash(root) ? "" : root, ENV_D);
	if ((f = fopen(where, "r")) == NULL)
		return 0;
	/* environment.d's format as put_file writes it: NAME=VALUE lines. */
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, name, nl) == 0 && line[nl] == '=') {
			snprintf(value, len, "%s", line + nl + 1);
			found = 1;
		}
	}
	fclose(f);
	return found;
}
