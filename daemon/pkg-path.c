/*
 * Entry names from archives, made safe. Every path an archive or folder
 * offers passes through rocmd_pkg_path_clean before anything is decided
 * about it, and every symlink target through rocmd_pkg_link_resolve, so the
 * rest of the store only ever sees relative '/'-separated names that stay
 * inside the package (DESIGN I4). The fuzz target fuzz-pkg-entry drives both.
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

int
rocmd_pkg_path_clean(const char *in, char *out, size_t outlen, char *why, size_t whylen)
{
	size_t len = 0;
	const char *p = in;

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
