/*
 * Version parsing and reconciliation for SDK installs: see sdk-version.h.
 * Pure string work; the files are read by sdk-discover.c.
 */
#include "sdk-version.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static const char *const source_names[ROCMD_VERSION_SOURCES] = {
    [ROCMD_VSRC_INFO] = ".info/version",       [ROCMD_VSRC_CHANGELOG] = "package changelog",
    [ROCMD_VSRC_HIPVERSION] = ".hipVersion",   [ROCMD_VSRC_HIPFILE] = "hip version file",
    [ROCMD_VSRC_FOLDER] = "folder name",       [ROCMD_VSRC_ENVNAME] = "HIP_PATH_NN",
    [ROCMD_VSRC_REGISTRY] = "registry",        [ROCMD_VSRC_HIPCONFIG] = "hipconfig",
    [ROCMD_VSRC_THEROCK] = "TheRock manifest", [ROCMD_VSRC_WHEEL] = "wheel METADATA",
    [ROCMD_VSRC_TORCH] = "torch version.py",
};

/* A HIP patch level this large is a build number, not a release. */
#define HIP_BUILD_PATCH 1000

const char *
rocmd_version_source_name(int source)
{
	return source >= 0 && source < ROCMD_VERSION_SOURCES ? source_names[source] : "none";
}

/* Reads up to 3 dotted numbers from S; returns how many. */
static int
parse_parts(const char *s, unsigned long parts[3], const char **end)
{
	int n = 0;

	while (n < 3 && isdigit((unsigned char)*s)) {
		char *e;
		parts[n++] = strtoul(s, &e, 10);
		s = e;
		if (*s != '.' || !isdigit((unsigned char)s[1]))
			break;
		s++;
	}
	if (end != NULL)
		*end = s;
	return n;
}

static int
format_parts(const unsigned long parts[3], int n, char *out, size_t outlen)
{
	int len;

	if (n < 2)
		return ROCMD_EINVAL;
	len = n == 2 ? snprintf(out, outlen, "%lu.%lu", parts[0], parts[1])
	             : snprintf(out, outlen, "%lu.%lu.%lu", parts[0], parts[1], parts[2]);
	return len < 0 || (size_t)len >= outlen ? ROCMD_EINVAL : 0;
}

int
rocmd_version_normalize(const char *text, int hip, char *out, size_t outlen)
{
	unsigned long parts[3] = {0};
	int n;

	if (outlen > 0)
		out[0] = '\0';
	if (text == NULL)
		return ROCMD_EINVAL;
	while (isspace((unsigned char)*text))
		text++;
	if (*text == 'v' || *text == 'V')
		text++;
	n = parse_parts(text, parts, NULL);
	if (hip && n == 3 && parts[2] >= HIP_BUILD_PATCH)
		n = 2;
	return format_parts(parts, n, out, outlen);
}

int
rocmd_version_parse_hip_lines(const char *text, char *out, size_t outlen)
{
	static const char *const keys[3] = {
	    "HIP_VERSION_MAJOR=", "HIP_VERSION_MINOR=", "HIP_VERSION_PATCH="};
	unsigned long parts[3] = {0};
	int have[3] = {0};

	if (outlen > 0)
		out[0] = '\0';
	for (const char *line = text; line != NULL && *line != '\0';) {
		const char *nl = strchr(line, '\n');
		while (*line == ' ' || *line == '\t')
			line++;
		for (int i = 0; i < 3; i++) {
			size_t k = strlen(keys[i]);
			if (strncmp(line, keys[i], k) == 0 && isdigit((unsigned char)line[k])) {
				parts[i] = strtoul(line + k, NULL, 10);
				have[i] = 1;
			}
		}
		line = nl != NULL ? nl + 1 : NULL;
	}
	if (!have[0] || !have[1])
		return ROCMD_EINVAL;
	return format_parts(parts, have[2] && parts[2] < HIP_BUILD_PATCH ? 3 : 2, out, outlen);
}

int
rocmd_version_from_folder(const char *name, char *out, size_t outlen)
{
	unsigned long parts[3] = {0};
	const char *end;
	int n;

	if (outlen > 0)
		out[0] = '\0';
	if (strncmp(name, "rocm-", 5) == 0)
		name += 5;
	else if (strncmp(name, "rocm", 4) == 0 && isdigit((unsigned char)name[4]))
		name += 4;
	n = parse_parts(name, parts, &end);
	/* "6.2", "5.7.1", "6.0.0-beta"; not "6.2abc" or a bare "6". */
	if (n < 2 || (*end != '\0' && *end != '-'))
		return ROCMD_EINVAL;
	return format_parts(parts, n, out, outlen);
}

int
rocmd_version_release(const char *text, char *out, size_t outlen, char *release, size_t releaselen)
{
	unsigned long parts[3] = {0};
	const char *end, *p;
	size_t n;

	if (outlen > 0)
		out[0] = '\0';
	if (releaselen > 0)
		release[0] = '\0';
	if (text == NULL)
		return ROCMD_EINVAL;
	while (isspace((unsigned char)*text))
		text++;
	if (parse_parts(text, parts, &end) != 3)
		return ROCMD_EINVAL;
	p = end;
	if (strncmp(p, "rc", 2) == 0 && isdigit((unsigned char)p[2])) {
		for (p += 2; isdigit((unsigned char)*p); p++)
			;
	} else if (*p == 'a' && isdigit((unsigned char)p[1])) {
		size_t digits = 0;
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
		if (digits != 8) /* a nightly's date, YYYYMMDD */
			return ROCMD_EINVAL;
	} else if (strncmp(p, ".dev", 4) == 0 && isdigit((unsigned char)p[4])) {
		for (p += 4; isdigit((unsigned char)*p); p++)
			;
		if (*p == '+')
			for (p++; isalnum((unsigned char)*p) || *p == '.'; p++)
				;
	}
	if (*p != '\0' && !isspace((unsigned char)*p) && *p != '"')
		return ROCMD_EINVAL;
	n = (size_t)(p - text);
	if (n >= releaselen)
		return ROCMD_EINVAL;
	memcpy(release, text, n);
	release[n] = '\0';
	return format_parts(parts, 3, out, outlen);
}

int
rocmd_version_from_changelog(const char *text, char *out, size_t outlen)
{
	const char *open = strchr(text, '('), *nl = strchr(text, '\n');

	if (outlen > 0)
		out[0] = '\0';
	if (open == NULL || (nl != NULL && open > nl))
		return ROCMD_EINVAL;
	open++;
	/* An epoch ("1:5.2.3-8") is not part of the upstream version. */
	{
		const char *colon = strchr(open, ':'), *close = strchr(open, ')');
		if (colon != NULL && close != NULL && colon < close)
			open = colon + 1;
	}
	return rocmd_version_normalize(open, 0, out, outlen);
}

int
rocmd_version_cmp(const char *a, const char *b)
{
	unsigned long pa[3] = {0}, pb[3] = {0};

	parse_parts(a, pa, NULL);
	parse_parts(b, pb, NULL);
	for (int i = 0; i < 3; i++)
		if (pa[i] != pb[i])
			return pa[i] < pb[i] ? -1 : 1;
	return 0;
}

int
rocmd_version_agree(const char *a, const char *b)
{
	unsigned long pa[3] = {0}, pb[3] = {0};
	int na = parse_parts(a, pa, NULL), nb = parse_parts(b, pb, NULL);
	int n = na < nb ? na : nb;

	for (int i = 0; i < n; i++)
		if (pa[i] != pb[i])
			return 0;
	return n >= 2;
}

void
rocmd_version_reconcile(struct rocmd_sdk_version *v)
{
	int win = -1;

	v->version[0] = '\0';
	v->source = -1;
	v->conflict = 0;
	v->problem[0] = '\0';
	for (int i = 0; i < ROCMD_VERSION_SOURCES; i++) {
		if (v->found[i][0] == '\0')
			continue;
		if (win < 0) {
			win = i;
			continue;
		}
		if (!rocmd_version_agree(v->found[win], v->found[i]))
			v->conflict = 1;
	}
	if (win < 0) {
		snprintf(v->problem, sizeof(v->problem),
		         "no version found (no .info/version, HIP version file, .hipVersion, "
		         "TheRock manifest, wheel METADATA, torch version.py, versioned folder "
		         "name or working hipconfig)");
		return;
	}
	v->source = win;
	snprintf(v->version, sizeof(v->version), "%s", v->found[win]);
	/* A later source that agrees may add the patch level. */
	for (int i = win + 1; i < ROCMD_VERSION_SOURCES && !v->conflict; i++) {
		if (v->found[i][0] != '\0' && strlen(v->found[i]) > strlen(v->version) &&
		    rocmd_version_agree(v->version, v->found[i])) {
			snprintf(v->version, sizeof(v->version), "%s", v->found[i]);
			v->source = i;
		}
	}
	if (v->conflict) {
		size_t len =
		    (size_t)snprintf(v->problem, sizeof(v->problem), "version sources disagree:");
		for (int i = 0; i < ROCMD_VERSION_SOURCES && len < sizeof(v->problem); i++)
			if (v->found[i][0] != '\0')
				len +=
				    (size_t)snprintf(v->problem + len, sizeof(v->problem) - len,
				                     " %s says %s;", source_names[i], v->found[i]);
		if (len < sizeof(v->problem))
			snprintf(v->problem + len, sizeof(v->problem) - len, " using %s (%s)",
			         v->version, source_names[v->source]);
	}
}

cJSON *
rocmd_version_to_json(const struct rocmd_sdk_version *v)
{
	cJSON *o = cJSON_CreateObject(), *src;

	if (v->version[0] != '\0')
		cJSON_AddStringToObject(o, "version", v->version);
	else
		cJSON_AddNullToObject(o, "version");
	cJSON_AddStringToObject(o, "source", rocmd_version_source_name(v->source));
	cJSON_AddBoolToObject(o, "conflict", v->conflict);
	if (v->problem[0] != '\0')
		cJSON_AddStringToObject(o, "problem", v->problem);
	src = cJSON_AddObjectToObject(o, "sources");
	for (int i = 0; i < ROCMD_VERSION_SOURCES; i++)
		if (v->found[i][0] != '\0')
			cJSON_AddStringToObject(src, source_names[i], v->found[i]);
	return o;
}
