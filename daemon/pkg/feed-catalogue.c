/*
 * Signed catalogues (docs/FEEDS.md, "The signed catalogue"): a JSON
 * document a maintainer publishes on any static host, listing packages with
 * their SDK versions, platforms, archs, URL, size, SHA-256 and what is known
 * to be bad. It is read only after its signature was checked
 * (rocmd_feed_sig_check), and strictly: an unknown key or a field of the
 * wrong shape refuses the whole document. Also the package list both feed
 * kinds fill.
 */
#include "feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "pkg.h"

/* What the driver compared with bad_drivers is (gpu.h's driver). */
#ifdef _WIN32
#define DRIVER_NOUN "AMD display driver"
#else
#define DRIVER_NOUN "amdgpu driver"
#endif

static char *
dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

int
rocmd_feed_list_add(struct rocmd_feed_list *l, const struct rocmd_feed_pkg *p)
{
	struct rocmd_feed_pkg *q;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		void *nv = realloc(l->p, ncap * sizeof(*l->p));
		if (nv == NULL)
			return ROCMD_ENOMEM;
		l->p = nv;
		l->cap = ncap;
	}
	q = &l->p[l->n];
	memset(q, 0, sizeof(*q));
	q->remote = dup_or_null(p->remote);
	q->name = dup_or_null(p->name);
	q->version = dup_or_null(p->version);
	q->sdk = dup_or_null(p->sdk);
	q->platform = dup_or_null(p->platform);
	q->archs = strdup(p->archs != NULL ? p->archs : "");
	q->url = dup_or_null(p->url);
	q->size = p->size;
	memcpy(q->sha256, p->sha256, sizeof(q->sha256));
	q->bad = dup_or_null(p->bad);
	q->bad_drivers = p->bad_drivers != NULL ? cJSON_Duplicate(p->bad_drivers, 1) : NULL;
	q->release = dup_or_null(p->release);
	l->n++;
	if (q->remote == NULL || q->name == NULL || q->platform == NULL || q->archs == NULL ||
	    q->url == NULL || (p->version != NULL && q->version == NULL) ||
	    (p->sdk != NULL && q->sdk == NULL) || (p->bad != NULL && q->bad == NULL) ||
	    (p->bad_drivers != NULL && q->bad_drivers == NULL) ||
	    (p->release != NULL && q->release == NULL))
		return ROCMD_ENOMEM;
	return 0;
}

void
rocmd_feed_list_truncate(struct rocmd_feed_list *l, size_t n)
{
	while (l->n > n) {
		struct rocmd_feed_pkg *p = &l->p[--l->n];
		free(p->remote);
		free(p->name);
		free(p->version);
		free(p->sdk);
		free(p->platform);
		free(p->archs);
		free(p->url);
		free(p->bad);
		cJSON_Delete(p->bad_drivers);
		free(p->release);
	}
}

void
rocmd_feed_list_free(struct rocmd_feed_list *l)
{
	rocmd_feed_list_truncate(l, 0);
	free(l->p);
	memset(l, 0, sizeof(*l));
}

int
rocmd_feed_name_check(const char *name, char *why, size_t whylen)
{
	size_t len = strlen(name);

	if (len == 0 || len > 200 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		snprintf(why, whylen, "a package name must be 1 to 200 bytes");
		return ROCMD_EINVAL;
	}
	for (const char *p = name; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '/' || *p == '\\' || *p == ':') {
			snprintf(why, whylen,
			         "package name \"%.80s\" holds a path separator, ':' or a control "
			         "character",
			         name);
			return ROCMD_EINVAL;
		}
	}
	if (rocmd_pkg_archive_ext(name) == 0) {
		snprintf(why, whylen,
		         "package name \"%.80s\" does not end in an archive extension the store "
		         "reads (.7z, .zip, .tar.*)",
		         name);
		return ROCMD_EINVAL;
	}
	return 0;
}

/* A string member KEY of O: *OUT, NULL when absent and optional. */
static int
str_of(const cJSON *o, const char *key, int required, const char **out, char *why, size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (v == NULL && !required)
		return 0;
	if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
		snprintf(why, whylen, "\"%s\" must be a non-empty string", key);
		return ROCMD_ECORRUPT;
	}
	*out = v->valuestring;
	return 0;
}

/* A non-empty array of non-empty strings, each passing CHECK (may be NULL). */
static int
strs_of(const cJSON *o, const char *key, int (*check)(const char *s), const cJSON **out,
        char *why, size_t whylen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key), *it;

	*out = v;
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 || cJSON_GetArraySize(v) > 64)
		goto bad;
	cJSON_ArrayForEach(it, v)
	{
		if (!cJSON_IsString(it) || it->valuestring[0] == '\0' || strlen(it->valuestring) > 32 ||
		    (check != NULL && check(it->valuestring) < 0))
			goto bad;
	}
	return 0;
bad:
	snprintf(why, whylen, "\"%s\" must be a list of 1 to 64 valid names", key);
	return ROCMD_ECORRUPT;
}

static int
check_sdk(const char *s)
{
	struct rocmd_pkg_version v;

	return rocmd_pkg_version_parse(s, &v) == 0 && v.n >= 2 ? 0 : -1;
}

static int
check_platform(const char *s)
{
	return strcmp(s, "windows") == 0 || strcmp(s, "linux") == 0 || strcmp(s, "any") == 0 ? 0
	                                                                                     : -1;
}

static int
check_arch(const char *s)
{
	if (strncmp(s, "gfx", 3) != 0 || s[3] == '\0')
		return -1;
	for (const char *p = s + 3; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')))
			return -1;
	return 0;
}

static int
check_drivers(const cJSON *v, char *why, size_t whylen)
{
	static const char *const keys[] = {"from", "to", "why", NULL};
	const cJSON *it, *m;

	if (v == NULL)
		return 0;
	if (!cJSON_IsArray(v))
		goto bad;
	cJSON_ArrayForEach(it, v)
	{
		if (!cJSON_IsObject(it) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "why")))
			goto bad;
		cJSON_ArrayForEach(m, it)
		{
			int k;
			for (k = 0; keys[k] != NULL && strcmp(keys[k], m->string) != 0; k++)
				;
			if (keys[k] == NULL || !cJSON_IsString(m) ||
			    (k < 2 && check_sdk(m->valuestring) < 0))
				goto bad;
		}
	}
	return 0;
bad:
	snprintf(why, whylen,
	         "\"bad_drivers\" must be a list of {\"from\": version, \"to\": version, "
	         "\"why\": text}");
	return ROCMD_ECORRUPT;
}

int
rocmd_feed_driver_bad(const cJSON *bad_drivers, const char *driver, char *why, size_t whylen)
{
	struct rocmd_pkg_version d, b;
	char num[64];
	size_t n = driver != NULL ? strspn(driver, "0123456789.") : 0;
	const cJSON *it;

	/* "6.10.5-2" is compared as 6.10.5. */
	if (n == 0 || n >= sizeof(num))
		return 0;
	memcpy(num, driver, n);
	num[n] = '\0';
	if (rocmd_pkg_version_parse(num, &d) < 0)
		return 0;
	cJSON_ArrayForEach(it, bad_drivers)
	{
		const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "from"));
		const char *to = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "to"));
		const char *what = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "why"));

		/* Both ends inclusive, on the parts both versions give. */
		if (from != NULL &&
		    (rocmd_pkg_version_parse(from, &b) < 0 || rocmd_pkg_version_cmp(&d, &b, 1) < 0))
			continue;
		if (to != NULL &&
		    (rocmd_pkg_version_parse(to, &b) < 0 || rocmd_pkg_version_cmp(&d, &b, 1) > 0))
			continue;
		snprintf(why, whylen, "the installed " DRIVER_NOUN " %s is in its bad range %s to %s: %s",
		         driver, from != NULL ? from : "any", to != NULL ? to : "any",
		         what != NULL ? what : "");
		return 1;
	}
	return 0;
}

/* One package object into L (one entry per SDK version and platform). */
static int
catalogue_pkg(const struct rocmd_feed_remote *r, const cJSON *o, int allow_loopback_http,
              struct rocmd_feed_list *l, char *why, size_t whylen)
{
	static const char *const keys[] = {"name", "version", "sdk",    "platforms",   "archs",
	                                   "url",  "size",    "sha256", "bad",         "bad_drivers",
	                                   NULL};
	const char *name, *version, *url, *sha, *bad;
	const cJSON *sdks, *plats, *archs, *size, *m, *s, *pl, *a;
	char archlist[512] = "", sub[256];
	uint8_t digest[ROCMD_SHA256_LEN];
	int rc;

	if (!cJSON_IsObject(o)) {
		snprintf(why, whylen, "a package must be an object");
		return ROCMD_ECORRUPT;
	}
	cJSON_ArrayForEach(m, o)
	{
		int k;
		for (k = 0; keys[k] != NULL && strcmp(keys[k], m->string) != 0; k++)
			;
		if (keys[k] == NULL) {
			snprintf(why, whylen, "unknown key \"%.64s\"", m->string);
			return ROCMD_ECORRUPT;
		}
	}
	if ((rc = str_of(o, "name", 1, &name, why, whylen)) < 0 ||
	    (rc = str_of(o, "version", 0, &version, why, whylen)) < 0 ||
	    (rc = str_of(o, "url", 1, &url, why, whylen)) < 0 ||
	    (rc = str_of(o, "sha256", 1, &sha, why, whylen)) < 0 ||
	    (rc = str_of(o, "bad", 0, &bad, why, whylen)) < 0 ||
	    (rc = strs_of(o, "sdk", check_sdk, &sdks, why, whylen)) < 0 ||
	    (rc = strs_of(o, "platforms", check_platform, &plats, why, whylen)) < 0 ||
	    (rc = strs_of(o, "archs", check_arch, &archs, why, whylen)) < 0 ||
	    (rc = check_drivers(cJSON_GetObjectItemCaseSensitive(o, "bad_drivers"), why, whylen)) < 0)
		return rc;
	if (rocmd_feed_name_check(name, sub, sizeof(sub)) < 0 ||
	    rocmd_feed_url_check(url, allow_loopback_http, sub, sizeof(sub)) < 0) {
		snprintf(why, whylen, "%s", sub);
		return ROCMD_ECORRUPT;
	}
	if (strlen(sha) != 64 || rocmd_sha256_parse(sha, digest) < 0) {
		snprintf(why, whylen, "\"sha256\" must be 64 hex digits");
		return ROCMD_ECORRUPT;
	}
	size = cJSON_GetObjectItemCaseSensitive(o, "size");
	if (!cJSON_IsNumber(size) || size->valuedouble < 1 || size->valuedouble > 1099511627776.0 ||
	    size->valuedouble != (double)(uint64_t)size->valuedouble) {
		snprintf(why, whylen, "\"size\" must be a whole number of bytes, 1 to 1 TiB");
		return ROCMD_ECORRUPT;
	}
	cJSON_ArrayForEach(a, archs)
	{
		size_t at = strlen(archlist);
		snprintf(archlist + at, sizeof(archlist) - at, "%s%s", at ? "," : "", a->valuestring);
	}
	cJSON_ArrayForEach(s, sdks)
	{
		cJSON_ArrayForEach(pl, plats)
		{
			struct rocmd_feed_pkg p = {
			    .remote = (char *)r->name,
			    .name = (char *)name,
			    .version = (char *)version,
			    .sdk = s->valuestring,
			    .platform = pl->valuestring,
			    .archs = archlist,
			    .url = (char *)url,
			    .size = (uint64_t)size->valuedouble,
			    .bad = (char *)bad,
			    .bad_drivers = cJSON_GetObjectItemCaseSensitive(o, "bad_drivers"),
			};
			rocmd_sha256_hex(digest, p.sha256);
			if ((rc = rocmd_feed_list_add(l, &p)) < 0)
				return rc;
		}
	}
	return 0;
}

int
rocmd_feed_catalogue_parse(const struct rocmd_feed_remote *r, const char *body, size_t len,
                           int allow_loopback_http, struct rocmd_feed_list *l, char *why,
                           size_t whylen)
{
	cJSON *doc = cJSON_ParseWithLength(body, len), *pkgs, *m, *it;
	size_t first = l->n, i = 0;
	char sub[512];
	int rc = ROCMD_ECORRUPT;

	if (!cJSON_IsObject(doc)) {
		snprintf(why, whylen, "remote %s: the catalogue is not a JSON object", r->name);
		goto out;
	}
	cJSON_ArrayForEach(m, doc)
	{
		if (strcmp(m->string, "format") != 0 && strcmp(m->string, "packages") != 0) {
			snprintf(why, whylen, "remote %s: the catalogue has an unknown key \"%.64s\"",
			         r->name, m->string);
			goto out;
		}
	}
	m = cJSON_GetObjectItemCaseSensitive(doc, "format");
	if (!cJSON_IsNumber(m) || m->valuedouble != 1) {
		snprintf(why, whylen, "remote %s: the catalogue's \"format\" must be 1", r->name);
		goto out;
	}
	pkgs = cJSON_GetObjectItemCaseSensitive(doc, "packages");
	if (!cJSON_IsArray(pkgs)) {
		snprintf(why, whylen, "remote %s: the catalogue's \"packages\" must be a list", r->name);
		goto out;
	}
	cJSON_ArrayForEach(it, pkgs)
	{
		if ((rc = catalogue_pkg(r, it, allow_loopback_http, l, sub, sizeof(sub))) < 0) {
			snprintf(why, whylen, "remote %s: package %zu of the catalogue: %s", r->name,
			         i + 1, sub);
			goto out;
		}
		i++;
	}
	rc = 0;
out:
	if (rc < 0)
		rocmd_feed_list_truncate(l, first); /* nothing of it is used */
	cJSON_Delete(doc);
	return rc;
}
