/*
 * Entry names from archives, made safe. Every path an archive or folder
 * offers passes through rocmd_pkg_path_clean before anything is decided
 * about it, and every symlink target through rocmd_pkg_link_resolve, so the
 * rest of the store only ever sees relative '/'-separated names that stay
 * inside the package (DESIGN I4). The fuzz target fuzz-pkg-entry drives both.
 *
 * Windows' name rules apply on every platform, since a package imported on
 * Linux may be deployed on Windows: a name Windows would read as a device
 * (CON, NUL.txt, COM1), silently shorten (a trailing dot or space), split
 * (':' names a stream), reject (<>"|?*) or alias (an 8.3 short name such as
 * TENSIL~1.DAT) is refused, so no package can hold two entries that land on
 * one file, or one that lands on no file, when deployed there.
 */
#include "pkg.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"

#define NAME_MAX_BYTES 255

/* Quotes untrusted text for a message: control bytes become '?'. */
static const char *
quoted(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] != '\0' && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	if (s[i] != '\0' && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

static int
refuse(char *why, size_t whylen, const char *name, const char *reason)
{
	char q[160];

	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "entry \"%s\": %s", quoted(name, q, sizeof(q)), reason);
	return ROCMD_EUNSAFE;
}

/* True when the UTF-8 text at P (N bytes) is a device name Windows reserves
 * in every folder: CON, PRN, AUX, NUL, CONIN$, CONOUT$, COM0-9 and LPT0-9
 * (also with a superscript digit 1-3), in any case. */
static int
is_device(const char *p, size_t n)
{
	static const char *const plain[] = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", NULL};
	char up[8];

	if (n > 7)
		return 0;
	for (size_t i = 0; i < n; i++)
		up[i] = (char)(p[i] >= 'a' && p[i] <= 'z' ? p[i] - 32 : p[i]);
	up[n] = '\0';
	for (int i = 0; plain[i] != NULL; i++)
		if (strcmp(up, plain[i]) == 0)
			return 1;
	if (strncmp(up, "COM", 3) != 0 && strncmp(up, "LPT", 3) != 0)
		return 0;
	if (n == 4 && up[3] >= '0' && up[3] <= '9')
		return 1;
	/* U+00B9, U+00B2, U+00B3: superscript one, two, three. */
	return n == 5 && (unsigned char)up[3] == 0xc2 &&
	       ((unsigned char)up[4] == 0xb9 || (unsigned char)up[4] == 0xb2 ||
	        (unsigned char)up[4] == 0xb3);
}

/* True when the component at P (N bytes, no '.' or '..') has the form of an
 * 8.3 short name with a numeric tail (up to 8 characters holding "~" and a
 * digit, then at most a 3-character extension): on a volume with short
 * names, Windows would open another file of the package under that name. */
static int
is_short_name(const char *p, size_t n)
{
	const char *dot = memchr(p, '.', n), *tilde;
	size_t base = dot != NULL ? (size_t)(dot - p) : n;

	if (base == 0 || base > 8 || (dot != NULL && n - base - 1 > 3))
		return 0;
	tilde = memchr(p, '~', base);
	return tilde != NULL && (size_t)(tilde - p) + 1 < base && tilde[1] >= '1' &&
	       tilde[1] <= '9';
}

/* Windows' own rules for one component (see the top of the file); NULL when
 * it passes, else the reason. */
static const char *
windows_rule(const char *p, size_t n)
{
	size_t stem = 0;

	while (stem < n && p[stem] != '.')
		stem++;
	/* The stem as Windows compares it for devices: trailing spaces dropped. */
	while (stem > 0 && p[stem - 1] == ' ')
		stem--;
	if (is_device(p, stem))
		return "a device name on Windows (CON, PRN, AUX, NUL, COM1, LPT1, ...)";
	if (p[n - 1] == '.' || p[n - 1] == ' ')
		return "ends with a dot or a space, which Windows drops from names";
	for (size_t i = 0; i < n; i++)
		if (strchr("<>\"|?*", p[i]) != NULL)
			return "a character Windows does not allow in names (< > \" | ? *)";
	if (is_short_name(p, n))
		return "the form of a Windows 8.3 short name (X~1.Y), which can alias another file";
	return NULL;
}

int
rocmd_pkg_path_clean(const char *in, char *out, size_t outlen, char *why, size_t whylen)
{
	size_t len = 0;
	const char *p = in, *rule;

	if (outlen == 0)
		return ROCMD_EINVAL;
	out[0] = '\0';
	if (in == NULL || in[0] == '\0')
		return refuse(why, whylen, "", "empty name");
	if (in[0] == '/' || in[0] == '\\')
		return refuse(why, whylen, in, "absolute path");
	if (((in[0] >= 'A' && in[0] <= 'Z') || (in[0] >= 'a' && in[0] <= 'z')) && in[1] == ':')
		return refuse(why, whylen, in, "absolute path (drive letter)");
	while (*p != '\0') {
		const char *start = p;
		size_t n;

		while (*p != '\0' && *p != '/' && *p != '\\') {
			unsigned char ch = (unsigned char)*p;
			if (ch < 0x20 || ch == 0x7f)
				return refuse(why, whylen, in, "control character in name");
			if (ch == ':')
				return refuse(why, whylen, in, "':' in name (a drive or stream)");
			p++;
		}
		n = (size_t)(p - start);
		if (*p != '\0')
			p++;
		if (n == 0 || (n == 1 && start[0] == '.'))
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.')
			return refuse(why, whylen, in, "'..' leads outside the package");
		if (n > NAME_MAX_BYTES)
			return refuse(why, whylen, in, "a name component is over 255 bytes");
		if ((rule = windows_rule(start, n)) != NULL)
			return refuse(why, whylen, in, rule);
		if (len + (len > 0) + n + 1 > outlen)
			return refuse(why, whylen, in, "path too long");
		if (len > 0)
			out[len++] = '/';
		memcpy(out + len, start, n);
		len += n;
		out[len] = '\0';
	}
	if (len == 0)
		return refuse(why, whylen, in, "names no file");
	return 0;
}

int
rocmd_pkg_link_resolve(const char *link_path, const char *target, char *out, size_t outlen,
                       char *why, size_t whylen)
{
	char buf[4096];
	size_t len = 0;
	const char *slash, *p;

	if (outlen == 0)
		return ROCMD_EINVAL;
	out[0] = '\0';
	if (target == NULL || target[0] == '\0')
		return refuse(why, whylen, link_path, "symlink with an empty target");
	if (target[0] == '/' || target[0] == '\\' ||
	    (((target[0] >= 'A' && target[0] <= 'Z') || (target[0] >= 'a' && target[0] <= 'z')) &&
	     target[1] == ':'))
		return refuse(why, whylen, link_path, "symlink to an absolute path");
	/* Start from the link's own folder, then walk the target's components. */
	slash = strrchr(link_path, '/');
	if (slash != NULL) {
		len = (size_t)(slash - link_path);
		if (len + 1 > sizeof(buf))
			return refuse(why, whylen, link_path, "path too long");
		memcpy(buf, link_path, len);
	}
	buf[len] = '\0';
	for (p = target; *p != '\0';) {
		const char *start = p;
		size_t n;

		while (*p != '\0' && *p != '/' && *p != '\\') {
			if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ':')
				return refuse(why, whylen, link_path,
				              "symlink target has a control character or ':'");
			p++;
		}
		n = (size_t)(p - start);
		if (*p != '\0')
			p++;
		if (n == 0 || (n == 1 && start[0] == '.'))
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.') {
			char *up;
			if (len == 0)
				return refuse(why, whylen, link_path,
				              "symlink points outside the package");
			buf[len] = '\0';
			up = strrchr(buf, '/');
			len = up != NULL ? (size_t)(up - buf) : 0;
			buf[len] = '\0';
			continue;
		}
		if (n > NAME_MAX_BYTES)
			return refuse(why, whylen, link_path,
			              "a symlink target component is over 255 bytes");
		if (windows_rule(start, n) != NULL)
			return refuse(why, whylen, link_path,
			              "symlink target names something Windows cannot hold as such");
		if (len + (len > 0) + n + 1 > sizeof(buf))
			return refuse(why, whylen, link_path, "symlink target too long");
		if (len > 0)
			buf[len++] = '/';
		memcpy(buf + len, start, n);
		len += n;
		buf[len] = '\0';
	}
	if (len == 0)
		return refuse(why, whylen, link_path, "symlink points at the package root");
	if (len + 1 > outlen)
		return refuse(why, whylen, link_path, "symlink target too long");
	memcpy(out, buf, len + 1);
	return 0;
}
