/*
 * Versions and what a package's name says: rocBLAS/HIP version strings
 * parsed and compared, the SDK generation a version belongs to, and the hints
 * (SDK version, archs) that community archive names carry, typos included.
 * Identification (pkg-ident.c) weighs these hints against the content.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "pkg.h"

int
rocmd_pkg_version_parse(const char *s, struct rocmd_pkg_version *out)
{
	const char *p = s;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 4; i++)
		out->v[i] = -1;
	if (s == NULL || !isdigit((unsigned char)*p))
		return ROCMD_EINVAL;
	while (out->n < 4) {
		long v = 0;
		if (!isdigit((unsigned char)*p))
			return ROCMD_EINVAL;
		while (isdigit((unsigned char)*p)) {
			v = v * 10 + (*p - '0');
			if (v > 100000)
				return ROCMD_EINVAL;
			p++;
		}
		out->v[out->n++] = (int)v;
		if (*p == '\0')
			return 0;
		if (*p != '.')
			return ROCMD_EINVAL;
		p++;
	}
	return ROCMD_EINVAL;
}

int
rocmd_pkg_version_cmp(const struct rocmd_pkg_version *a, const struct rocmd_pkg_version *b,
                      int prefix)
{
	int n = prefix ? (a->n < b->n ? a->n : b->n) : 4;

	for (int i = 0; i < n; i++) {
		int x = i < a->n ? a->v[i] : 0, y = i < b->n ? b->v[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

int
rocmd_sdk_generation(const char *version, char *out, size_t outlen)
{
	struct rocmd_pkg_version v;

	if (rocmd_pkg_version_parse(version, &v) < 0)
		return ROCMD_EINVAL;
	/* 7.x share amdhip64_7 and their builds; before 7 each minor is its own ABI. */
	if (v.v[0] >= 7 || v.n == 1)
		snprintf(out, outlen, "%d", v.v[0]);
	else
		snprintf(out, outlen, "%d.%d", v.v[0], v.v[1]);
	return 0;
}

static const char *const archive_exts[] = {".tar.gz", ".tar.xz", ".tar.bz2", ".tar.zst",
                                           ".tgz",    ".txz",    ".tar",     ".7z",
                                           ".zip",    ".rar",    NULL};

size_t
rocmd_pkg_archive_ext(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; archive_exts[i] != NULL; i++) {
		size_t n = strlen(archive_exts[i]);
		if (len > n && rocmd_pkg_name_casecmp(name + len - n, archive_exts[i]) == 0)
			return n;
	}
	return 0;
}

/* Copies a version "6.2.4" starting at P (digits and dots, no trailing dot). */
static size_t
take_version(const char *p, char *out, size_t outlen)
{
	size_t n = 0;

	while (
	    (isdigit((unsigned char)p[n]) || (p[n] == '.' && isdigit((unsigned char)p[n + 1]))) &&
	    n + 1 < outlen)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
	return n;
}

static int
is_sep(char c)
{
	return c == ' ' || c == '.' || c == '_' || c == '-' || c == '(' || c == ')' || c == '[' ||
	       c == ']' || c == '+' || c == ',';
}

void
rocmd_pkg_name_hints(const char *name, struct rocmd_pkg_name_hints *out)
{
	char s[512];
	const char *base = strrchr(name, '/');
	size_t len;

	memset(out, 0, sizeof(*out));
	snprintf(s, sizeof(s), "%s", base != NULL ? base + 1 : name);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	len = strlen(s);
	len -= rocmd_pkg_archive_ext(s);
	s[len] = '\0';
	/* SDK: after "sdk" (or the real-world typo "skd"), else after "hip" or "rocm". */
	static const char *const keys[] = {"sdk", "skd", "hip", "rocm", NULL};
	for (int k = 0; keys[k] != NULL && out->sdk[0] == '\0'; k++) {
		for (const char *p = strstr(s, keys[k]); p != NULL; p = strstr(p + 1, keys[k])) {
			const char *q = p + strlen(keys[k]);
			while (*q != '\0' && is_sep(*q) && !isdigit((unsigned char)*q))
				q++;
			if (isdigit((unsigned char)*q) && (p == s || is_sep(p[-1]) || k >= 2)) {
				char v[16];
				struct rocmd_pkg_version ver;
				take_version(q, v, sizeof(v));
				/* "5.7", "6.2.4"; a bare "6" is too little to go on. */
				if (rocmd_pkg_version_parse(v, &ver) == 0 && ver.n >= 2 &&
				    ver.v[0] >= 1 && ver.v[0] <= 20) {
					snprintf(out->sdk, sizeof(out->sdk), "%s", v);
					break;
				}
			}
		}
	}
	/* Package version: a separate token "v3", "v5.0". */
	for (size_t i = 0; i < len && out->version[0] == '\0'; i++) {
		if (s[i] == 'v' && (i == 0 || is_sep(s[i - 1])) &&
		    isdigit((unsigned char)s[i + 1])) {
			char v[12];
			size_t n = take_version(s + i + 1, v, sizeof(v));
			char after = s[i + 1 + n];
			if (n > 0 && n <= 5 && (after == '\0' || is_sep(after)))
				snprintf(out->version, sizeof(out->version), "V%s", v);
		}
	}
	/* Archs named: "gfx1103", "gfx90c". */
	for (const char *p = strstr(s, "gfx"); p != NULL; p = strstr(p + 3, "gfx")) {
		size_t n = 3;
		while (isalnum((unsigned char)p[n]) && n < 12)
			n++;
		if (n > 3 && isdigit((unsigned char)p[3]) &&
		    (p == s || !isalnum((unsigned char)p[-1]))) {
			size_t have = strlen(out->archs);
			if (have + n + 2 < sizeof(out->archs)) {
				if (have > 0)
					out->archs[have++] = ',';
				memcpy(out->archs + have, p, n);
				out->archs[have + n] = '\0';
			}
		}
	}
}
