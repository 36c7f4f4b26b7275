/*
 * The registry for machines that have none: HKLM read from a .reg file
 * (REGEDIT4 / "Windows Registry Editor Version 5.00" syntax) at
 * <root>/registry/HKLM.reg. See registry.h. Only string values are read;
 * key names compare case-insensitively, as Windows does.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"

#define ROCM_KEY "HKEY_LOCAL_MACHINE\\SOFTWARE\\AMD\\ROCm\\"

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

int
rocmd_registry_rocm_installs(const char *root, rocmd_registry_rocm_fn fn, void *ctx)
{
	char path[4096], line[4096], key[256] = "", dir[4096] = "";
	int in_key = 0, have_dir = 0, rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/registry/HKLM.reg",
	         root != NULL && root[0] != '\0' ? root : "");
	f = fopen(path, "r");
	if (f == NULL)
		return errno == ENOENT ? 0 : rocmd_err_errno(errno);
	while (rc == 0) {
		int eof = fgets(line, sizeof(line), f) == NULL;
		char *s = line;

		if (!eof) {
			chomp(s);
			/* regedit writes UTF-16 with a BOM; exports saved as UTF-8 may keep it. */
			if ((unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb &&
			    (unsigned char)s[2] == 0xbf)
				s += 3;
		}
		if (eof || s[0] == '[') {
			if (in_key)
				rc = fn(key, have_dir ? dir : NULL, ctx);
			in_key = have_dir = 0;
			if (eof)
				break;
			s++;
			chomp(s);
			if (s[0] != '\0' && s[strlen(s) - 1] == ']')
				s[strlen(s) - 1] = '\0';
			/* Only direct subkeys of ...\AMD\ROCm. */
			if (strncasecmp(s, ROCM_KEY, strlen(ROCM_KEY)) == 0 &&
			    s[strlen(ROCM_KEY)] != '\0' &&
			    strchr(s + strlen(ROCM_KEY), '\\') == NULL) {
				snprintf(key, sizeof(key), "%s", s + strlen(ROCM_KEY));
				in_key = 1;
			}
			continue;
		}
		if (in_key && strncasecmp(s, "\"InstallDir\"=", 13) == 0) {
			char *v = reg_string(s + 13);
			if (v != NULL) {
				snprintf(dir, sizeof(dir), "%s", v);
				have_dir = 1;
			}
		}
	}
	fclose(f);
	return rc;
}
