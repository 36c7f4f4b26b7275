/*
 * Release feeds (docs/FEEDS.md, "Release feeds"): a repository's releases as
 * a release host's API lists them (GitHub's /repos/OWNER/REPO/releases: an
 * array of releases with tag_name, name, body and assets of name, size,
 * browser_download_url and digest "sha256:..."), read into the package list.
 * The SDK version and archs come from the names through the store's own
 * reading of archive names (rocmd_pkg_name_hints), the asset's first, then
 * the release's; the import confirms them from the content, as always.
 * Drafts and assets that are not archives are left out; an asset without a
 * published sha256 is listed with none, and fetch refuses it. A listing of
 * several pages is followed through its Link: rel="next" headers.
 */
#include "feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "pkg.h"

static const char *
str_or_null(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

/* The SDK version said in release text TEXT (its title or notes): the first
 * line of it naming one, read as an archive name is. */
static void
text_hints(const char *text, struct rocmd_pkg_name_hints *h)
{
	char line[512];

	memset(h, 0, sizeof(*h));
	while (text != NULL && *text != '\0' && h->sdk[0] == '\0') {
		size_t n = strcspn(text, "\r\n");
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
		         text);
		/* '/' would make the name reader skip to the last component. */
		for (char *p = line; *p; p++)
			if (*p == '/' || *p == '\\')
				*p = ' ';
		rocmd_pkg_name_hints(line, h);
		text += n;
		text += strspn(text, "\r\n");
	}
}

static int
release_assets(const struct rocmd_feed_remote *r, const cJSON *rel, int allow_loopback_http,
               struct rocmd_feed_list *l, char *why, size_t whylen)
{
	const char *tag = str_or_null(rel, "tag_name"), *title = str_or_null(rel, "name");
	const cJSON *assets = cJSON_GetObjectItemCaseSensitive(rel, "assets"), *a;
	struct rocmd_pkg_name_hints ht, hb, htag;
	char sub[256];
	int rc;

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rel, "draft")))
		return 0;
	if (tag == NULL || !cJSON_IsArray(assets)) {
		snprintf(why, whylen, "a release lacks its tag_name or assets");
		return ROCMD_ECORRUPT;
	}
	text_hints(title, &ht);
	text_hints(tag, &htag);
	text_hints(str_or_null(rel, "body"), &hb);
	cJSON_ArrayForEach(a, assets)
	{
		const char *name = str_or_null(a, "name"), *url = str_or_null(a, "browser_download_url"),
		           *digest = str_or_null(a, "digest");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(a, "size");
		struct rocmd_pkg_name_hints h;
		struct rocmd_feed_pkg p = {0};
		uint8_t bin[ROCMD_SHA256_LEN];

		if (name == NULL || url == NULL || !cJSON_IsNumber(size)) {
			snprintf(why, whylen, "an asset of release %.64s lacks its name, size or URL",
			         tag);
			return ROCMD_ECORRUPT;
		}
		if (rocmd_feed_name_check(name, sub, sizeof(sub)) < 0)
			continue; /* not an archive: notes, checksums, installers */
		if (rocmd_feed_url_check(url, allow_loopback_http, sub, sizeof(sub)) < 0 ||
		    size->valuedouble < 1 || size->valuedouble > 1099511627776.0) {
			snprintf(why, whylen, "asset %.80s of release %.64s: %s", name, tag,
			         size->valuedouble < 1 || size->valuedouble > 1099511627776.0
			             ? "its size is not 1 byte to 1 TiB"
			             : sub);
			return ROCMD_ECORRUPT;
		}
		rocmd_pkg_name_hints(name, &h);
		p.remote = (char *)r->name;
		p.name = (char *)name;
		p.url = (char *)url;
		p.size = (uint64_t)size->valuedouble;
		p.platform = (char *)r->platform;
		p.release = (char *)tag;
		p.sdk = h.sdk[0]     ? h.sdk
		        : ht.sdk[0]   ? ht.sdk
		        : htag.sdk[0] ? htag.sdk
		        : hb.sdk[0]   ? hb.sdk
		                      : NULL;
		p.version = h.version[0] ? h.version : ht.version[0] ? ht.version : NULL;
		p.archs = h.archs[0] ? h.archs : ht.archs;
		if (digest != NULL && strncmp(digest, "sha256:", 7) == 0 && strlen(digest + 7) == 64 &&
		    rocmd_sha256_parse(digest + 7, bin) == 0)
			rocmd_sha256_hex(bin, p.sha256);
		if ((rc = rocmd_feed_list_add(l, &p)) < 0)
			return rc;
	}
	return 0;
}

int
rocmd_feed_releases_parse(const struct rocmd_feed_remote *r, const char *body, size_t len,
                          int allow_loopback_http, struct rocmd_feed_list *l, char *why,
                          size_t whylen)
{
	cJSON *doc = cJSON_ParseWithLength(body, len);
	const cJSON *rel;
	size_t first = l->n;
	char sub[512];
	int rc = 0;

	if (!cJSON_IsArray(doc)) {
		snprintf(why, whylen, "remote %s: the release listing is not a JSON array of releases",
		         r->name);
		cJSON_Delete(doc);
		return ROCMD_ECORRUPT;
	}
	cJSON_ArrayForEach(rel, doc)
	{
		if (!cJSON_IsObject(rel) ||
		    (rc = release_assets(r, rel, allow_loopback_http, l, sub, sizeof(sub))) < 0) {
			snprintf(why, whylen, "remote %s: %s", r->name,
			         rc < 0 ? sub : "a release is not an object");
			rc = rc < 0 ? rc : ROCMD_ECORRUPT;
			break;
		}
	}
	if (rc < 0)
		rocmd_feed_list_truncate(l, first);
	cJSON_Delete(doc);
	return rc;
}

/* "https://host:port" of URL: its length, or 0 when URL has no "://". */
static size_t
origin_len(const char *url)
{
	const char *p = strstr(url, "://");

	return p == NULL ? 0 : (size_t)(p + 3 - url) + strcspn(p + 3, "/?#");
}

int
rocmd_feed_link_next(const char *link, const char *base, int allow_loopback_http, char *out,
                     size_t outlen, char *why, size_t whylen)
{
	const char *p = link;

	out[0] = '\0';
	while (p != NULL && (p = strchr(p, '<')) != NULL) {
		const char *end = strchr(p, '>'), *params, *next;
		char rel[256];
		size_t n, on;

		if (end == NULL)
			break;
		/* The link's parameters run to the next link ("<") or the end. */
		params = end + 1;
		next = strchr(params, '<');
		n = next != NULL ? (size_t)(next - params) : strlen(params);
		snprintf(rel, sizeof(rel), "%.*s", (int)(n < sizeof(rel) ? n : sizeof(rel) - 1), params);
		if (strstr(rel, "rel=\"next\"") == NULL && strstr(rel, "rel=next") == NULL) {
			p = next;
			continue;
		}
		n = (size_t)(end - p - 1);
		if (n == 0 || n >= outlen) {
			snprintf(why, whylen, "the next page's URL is empty or too long");
			return ROCMD_ECORRUPT;
		}
		memcpy(out, p + 1, n);
		out[n] = '\0';
		on = origin_len(base);
		if (rocmd_feed_url_check(out, allow_loopback_http, why, whylen) < 0 || on == 0 ||
		    origin_len(out) != on || strncasecmp(out, base, on) != 0) {
			snprintf(why, whylen, "the next page %.300s is not on %.*s over https", out,
			         (int)on, base);
			out[0] = '\0';
			return ROCMD_ECORRUPT;
		}
		return 1;
	}
	return 0;
}

int
rocmd_feed_releases_append(char **body, size_t *len, const char *page, size_t plen, char *why,
                           size_t whylen)
{
	cJSON *all = cJSON_ParseWithLength(*body, *len), *more = cJSON_ParseWithLength(page, plen);
	char *text = NULL;
	int rc = ROCMD_ECORRUPT;

	if (!cJSON_IsArray(all) || !cJSON_IsArray(more)) {
		snprintf(why, whylen, "a page of the release listing is not a JSON array");
		goto out;
	}
	while (cJSON_GetArraySize(more) > 0)
		cJSON_AddItemToArray(all, cJSON_DetachItemFromArray(more, 0));
	if ((text = cJSON_PrintUnformatted(all)) == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	if (strlen(text) > ROCMD_FEED_MAX_METADATA) {
		snprintf(why, whylen, "the release listing's pages are larger than %u MiB together",
		         ROCMD_FEED_MAX_METADATA >> 20);
		goto out;
	}
	free(*body);
	*body = text;
	*len = strlen(text);
	text = NULL;
	rc = 0;
out:
	free(text);
	cJSON_Delete(all);
	cJSON_Delete(more);
	return rc;
}
