/*
 * The registry for machines that have none: HKLM read from a .reg file
 * (REGEDIT4 / "Windows Registry Editor Version 5.00" syntax) at
 * <root>/registry/HKLM.reg. See registry.h. Only string values are read
 * (an expandable value, hex(2):..., is not); key and value names compare
 * case-insensitively, as Windows does.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

#define ROCM_KEY "HKEY_LOCAL_MACHINE\\SOFTWARE\\AMD\\ROCm\\"
#define ENV_KEY                                                                                    \
	"HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment"

/* Unquotes a .reg string ("C:\\Program Files\\...") in place; NULL if not one. */
static char *
reg_string(char *s)
{
	char *w, *r;

	if (*s != '"')
		return NULL;
	for (r = s + 1, w = s; *r != '\0' && *r != '"'; r++) {
		if (*r == '\\' && (r[1] == '\\' || r[1] == '"'))
			r++;
		*w++ = *r;
	}
	if (*r != '"')
		return NULL;
	*w = '\0';
	return s;
}

static void
chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Called per key (NAME NULL, at the key's end) and per string value in it. */
typedef int (*value_fn)(const char *key, const char *name, const char *value, void *ctx);

/* Walks every key of <root>/registry/HKLM.reg and its string values. */
static int
walk(const char *root, value_fn fn, void *ctx)
{
	char path[4096], line[4096], key[1024] = "";
	int in_key = 0, rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/registry/HKLM.reg",
	         root != NULL && root[0] != '\0' ? root : "");
	f = fopen(path, "r");
	if (f == NULL)
		return errno == ENOENT ? 0 : rocmd_err_errno(errno);
	while (rc == 0) {
		int eof = fgets(line, sizeof(line), f) == NULL;
		char *s = line, *eq;

		if (!eof) {
			chomp(s);
			/* regedit writes UTF-16 with a BOM; exports saved as UTF-8 may keep it. */
			if ((unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb &&
			    (unsigned char)s[2] == 0xbf)
				s += 3;
		}
		if (eof || s[0] == '[') {
			if (in_key)
				rc = fn(key, NULL, NULL, ctx);
			in_key = 0;
			if (eof || rc != 0)
				break;
			s++;
			chomp(s);
			if (s[0] != '\0' && s[strlen(s) - 1] == ']')
				s[strlen(s) - 1] = '\0';
			snprintf(key, sizeof(key), "%s", s);
			in_key = 1;
			continue;
		}
		/* "Name"="value": only string values. */
		if (!in_key || s[0] != '"' || (eq = strstr(s, "\"=")) == NULL)
			continue;
		*eq = '\0';
		{
			char *v = reg_string(eq + 2);
			if (v != NULL)
				rc = fn(key, s + 1, v, ctx);
		}
	}
	fclose(f);
	return rc;
}

struct rocm_walk {
	rocmd_registry_rocm_fn fn;
	void *ctx;
	char dir[4096];
	int have_dir;
};

static int
on_rocm_value(const char *key, const char *name, const char *value, void *arg)
{
	struct rocm_walk *w = arg;
	const char *sub;
	int rc = 0;

	/* Only direct subkeys of ...\AMD\ROCm. */
	if (strncasecmp(key, ROCM_KEY, strlen(ROCM_KEY)) != 0)
		return 0;
	sub = key + strlen(ROCM_KEY);
	if (sub[0] == '\0' || strchr(sub, '\\') != NULL)
		return 0;
	if (name == NULL) {
		rc = w->fn(sub, w->have_dir ? w->dir : NULL, w->ctx);
		w->have_dir = 0;
	} else if (strcasecmp(name, "InstallDir") == 0) {
		snprintf(w->dir, sizeof(w->dir), "%s", value);
		w->have_dir = 1;
	}
	return rc;
}

int
rocmd_registry_rocm_installs(const char *root, rocmd_registry_rocm_fn fn, void *ctx)
{
	struct rocm_walk w = {.fn = fn, .ctx = ctx};

	return walk(root, on_rocm_value, &w);
}

struct env_walk {
	rocmd_registry_env_fn fn;
	void *ctx;
};

static int
on_env_value(const char *key, const char *name, const char *value, void *arg)
{
	struct env_walk *w = arg;

	if (name == NULL || strcasecmp(key, ENV_KEY) != 0)
		return 0;
	return w->fn(name, value, w->ctx);
}

int
rocmd_registry_machine_env(const char *root, rocmd_registry_env_fn fn, void *ctx)
{
	struct env_walk w = {.fn = fn, .ctx = ctx};

	return walk(root, on_env_value, &w);
}
