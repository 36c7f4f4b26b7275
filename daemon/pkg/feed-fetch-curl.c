/*
 * The feeds' download client, libcurl (docs/FEEDS.md, "Downloads"): https
 * only (plain http to 127.0.0.1 only under the test setting), a few
 * redirects, connect and stall timeouts, the proxies of the usual
 * environment variables (libcurl reads them), a configurable CA bundle.
 * Metadata GETs carry the cached copy's validators; an archive download
 * resumes a partial file with a Range request, is refused the moment the
 * server's length or the bytes received pass the size the metadata gives,
 * and is hashed as it arrives, so the hash is known when the last byte is.
 * The same file on Windows, where libcurl is built with Schannel (the
 * system's TLS and certificate store; a configured CA bundle still replaces
 * the store: CURLOPT_CAINFO). Called on a worker thread only.
 */
#include "feed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <uv.h>

#include "common/error.h"
#include "common/fs.h"

static uv_once_t curl_once = UV_ONCE_INIT;
static int curl_ok;

static void
curl_init_once(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* The options every request shares; NULL when libcurl cannot start. */
static CURL *
easy_new(const struct rocmd_feed_http *h, const char *url, char *err)
{
	const char *protos = h->allow_loopback_http ? "https,http" : "https";
	CURL *c;

	uv_once(&curl_once, curl_init_once);
	if (!curl_ok || (c = curl_easy_init()) == NULL)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, protos);
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, protos);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, h->connect_timeout_s);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, h->stall_timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c, CURLOPT_USERAGENT, h->user_agent != NULL ? h->user_agent : "rocmd");
	if (h->ca_bundle != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_bundle);
	/* Schannel checks revocation; a private CA with no CRL or OCSP responder
	 * (a mirror's own CA bundle) must not fail for that alone. Other TLS
	 * backends ignore the option. */
	curl_easy_setopt(c, CURLOPT_SSL_OPTIONS, (long)CURLSSLOPT_REVOKE_BEST_EFFORT);
	err[0] = '\0';
	return c;
}

static int
is_offline(CURLcode e)
{
	return e == CURLE_COULDNT_RESOLVE_HOST || e == CURLE_COULDNT_RESOLVE_PROXY ||
	       e == CURLE_COULDNT_CONNECT;
}

/* What went wrong, as a sentence about URL. */
static void
curl_why(CURL *c, CURLcode e, const char *url, const char *err, char *why, size_t whylen)
{
	long code = 0;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (e == CURLE_HTTP_RETURNED_ERROR)
		snprintf(why, whylen, "%.300s: the server answered HTTP %ld", url, code);
	else if (e == CURLE_TOO_MANY_REDIRECTS)
		snprintf(why, whylen, "%.300s: more than 5 redirects", url);
	else if (e == CURLE_OPERATION_TIMEDOUT)
		snprintf(why, whylen, "%.300s: timed out (%s)", url, err[0] ? err : "no data");
	else if (is_offline(e))
		snprintf(why, whylen, "%.300s: no network: %s", url, err[0] ? err : curl_easy_strerror(e));
	else
		snprintf(why, whylen, "%.300s: %s", url, err[0] ? err : curl_easy_strerror(e));
}

/* ---- metadata ---- */

struct get_ctx {
	struct rocmd_feed_get *g;
	size_t cap;
	int over;
};

static size_t
get_body(char *data, size_t sz, size_t n, void *arg)
{
	struct get_ctx *x = arg;
	struct rocmd_feed_get *g = x->g;
	size_t len = sz * n;

	if (g->len + len > ROCMD_FEED_MAX_METADATA) {
		x->over = 1;
		return 0;
	}
	if (g->len + len + 1 > x->cap) {
		size_t ncap = x->cap ? x->cap : 65536;
		while (ncap < g->len + len + 1)
			ncap *= 2;
		char *nb = realloc(g->body, ncap);
		if (nb == NULL)
			return 0;
		g->body = nb;
		x->cap = ncap;
	}
	memcpy(g->body + g->len, data, len);
	g->len += len;
	g->body[g->len] = '\0';
	return len;
}

/* Copies header NAME's value out of LINE into OUT when LINE is that header. */
static void
header_value(const char *line, size_t len, const char *name, char *out, size_t outlen)
{
	size_t n = strlen(name), end = len;

	if (len <= n + 1 || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return;
	line += n + 1;
	end -= n + 1;
	while (end > 0 && (*line == ' ' || *line == '\t'))
		line++, end--;
	while (end > 0 && (line[end - 1] == '\r' || line[end - 1] == '\n' || line[end - 1] == ' '))
		end--;
	if (end < outlen) {
		memcpy(out, line, end);
		out[end] = '\0';
	}
}

static size_t
get_header(char *data, size_t sz, size_t n, void *arg)
{
	struct rocmd_feed_get *g = ((struct get_ctx *)arg)->g;

	/* Each response of a redirect chain starts again. */
	if (sz * n > 5 && strncmp(data, "HTTP/", 5) == 0)
		g->etag_out[0] = g->last_modified_out[0] = g->link_out[0] = '\0';
	header_value(data, sz * n, "link", g->link_out, sizeof(g->link_out));
	header_value(data, sz * n, "etag", g->etag_out, sizeof(g->etag_out));
	header_value(data, sz * n, "last-modified", g->last_modified_out,
	             sizeof(g->last_modified_out));
	return sz * n;
}

int
rocmd_feed_http_get(const struct rocmd_feed_http *h, struct rocmd_feed_get *g, char *why,
                    size_t whylen)
{
	char err[CURL_ERROR_SIZE], hdr[512];
	struct curl_slist *hs = NULL;
	struct get_ctx x = {g, 0, 0};
	long code = 0;
	CURLcode e;
	CURL *c;
	int rc = 0;

	g->body = NULL;
	g->len = 0;
	g->not_modified = g->offline = 0;
	g->etag_out[0] = g->last_modified_out[0] = g->link_out[0] = '\0';
	if ((c = easy_new(h, g->url, err)) == NULL) {
		snprintf(why, whylen, "libcurl cannot start");
		return ROCMD_ENOMEM;
	}
	hs = curl_slist_append(hs, "Accept: application/vnd.github+json, application/json");
	if (g->etag != NULL && g->etag[0] != '\0') {
		snprintf(hdr, sizeof(hdr), "If-None-Match: %s", g->etag);
		hs = curl_slist_append(hs, hdr);
	}
	if (g->last_modified != NULL && g->last_modified[0] != '\0') {
		snprintf(hdr, sizeof(hdr), "If-Modified-Since: %s", g->last_modified);
		hs = curl_slist_append(hs, hdr);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, get_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, get_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	e = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (e == CURLE_OK && code == 304) {
		g->not_modified = 1;
	} else if (x.over) {
		snprintf(why, whylen, "%.300s: the metadata is larger than %u MiB", g->url,
		         ROCMD_FEED_MAX_METADATA >> 20);
		rc = ROCMD_ECORRUPT;
	} else if (e != CURLE_OK) {
		curl_why(c, e, g->url, err, why, whylen);
		g->offline = is_offline(e);
		rc = e == CURLE_OPERATION_TIMEDOUT ? ROCMD_ETIMEDOUT
		     : g->offline                  ? ROCMD_ECONNECT
		                                   : ROCMD_EIO;
	} else if (g->body == NULL && (g->body = strdup("")) == NULL) {
		rc = ROCMD_ENOMEM;
	}
	if (rc < 0) {
		free(g->body);
		g->body = NULL;
		g->len = 0;
	}
	curl_slist_free_all(hs);
	curl_easy_cleanup(c);
	return rc;
}

/* ---- archives ---- */

struct dl_ctx {
	CURL *c;
	const char *partial;
	int fd;
	uint64_t have; /* bytes in the partial file before this request */
	uint64_t got;  /* bytes this request wrote */
	uint64_t size;
	struct rocmd_sha256 *sha;
	int checked; /* the response's status and length were checked */
	int refused; /* a refusal (not a cut): WHY says it */
	int io;      /* writing the file failed */
	char why[512];
	int (*progress)(const struct rocmd_feed_progress *p, void *ctx);
	void *ctx;
};

/* The first bytes of the body: is this the body we asked for, of the size
 * the metadata says? */
static int
dl_check(struct dl_ctx *x)
{
	curl_off_t cl = -1;
	long code = 0;

	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(x->c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	x->checked = 1;
	if (code == 200 && x->have > 0) {
		/* The server ignored the Range: start again from byte 0. */
		struct rocmd_sha256 *n = NULL;
		rocmd_fs_close(x->fd);
		x->fd = rocmd_fs_open(x->partial, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (x->fd < 0 || rocmd_sha256_new(&n) < 0) {
			rocmd_sha256_free(n);
			x->io = 1;
			return -1;
		}
		rocmd_sha256_free(x->sha);
		x->sha = n;
		x->have = 0;
	}
	if (cl >= 0 && x->have + (uint64_t)cl != x->size) {
		snprintf(x->why, sizeof(x->why),
		         "the server sends %llu bytes where the feed says %llu: wrong size",
		         (unsigned long long)(x->have + (uint64_t)cl), (unsigned long long)x->size);
		x->refused = 1;
		return -1;
	}
	return 0;
}

static size_t
dl_body(char *data, size_t sz, size_t n, void *arg)
{
	struct dl_ctx *x = arg;
	size_t len = sz * n;

	if (!x->checked && dl_check(x) < 0)
		return 0;
	if (x->have + x->got + len > x->size) {
		snprintf(x->why, sizeof(x->why),
		         "the server sent more than the %llu bytes the feed says: over the cap",
		         (unsigned long long)x->size);
		x->refused = 1;
		return 0;
	}
	if (rocmd_fs_write_all(x->fd, data, len) < 0) {
		x->io = 1;
		return 0;
	}
	rocmd_sha256_update(x->sha, data, len);
	x->got += len;
	return len;
}

static int
dl_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct dl_ctx *x = arg;
	struct rocmd_feed_progress p = {x->have + (uint64_t)dlnow, x->size};

	(void)dltotal;
	(void)ultotal;
	(void)ulnow;
	return x->progress != NULL && x->progress(&p, x->ctx) != 0;
}

/* Hashes the first HAVE bytes already in FD into SHA. */
static int
hash_have(int fd, uint64_t have, struct rocmd_sha256 *sha)
{
	char *buf = malloc(1 << 16);
	uint64_t done = 0;
	int rc = 0;

	if (buf == NULL)
		return ROCMD_ENOMEM;
	while (done < have && rc == 0) {
		size_t got = 0, want = have - done < (1 << 16) ? (size_t)(have - done) : (1 << 16);
		rc = rocmd_fs_pread(fd, buf, want, done, &got);
		if (rc == 0 && got == 0)
			rc = ROCMD_EIO;
		if (rc == 0)
			rocmd_sha256_update(sha, buf, got);
		done += got;
	}
	free(buf);
	return rc;
}

int
rocmd_feed_download(const struct rocmd_feed_http *h, const char *url, const char *partial,
                    uint64_t size, const char *sha256,
                    int (*progress)(const struct rocmd_feed_progress *p, void *ctx), void *ctx,
                    int *kept, char *why, size_t whylen)
{
	struct dl_ctx x = {.partial = partial, .fd = -1, .size = size, .progress = progress,
	                   .ctx = ctx};
	uint8_t digest[ROCMD_SHA256_LEN];
	char err[CURL_ERROR_SIZE], hex[ROCMD_SHA256_HEX];
	uint64_t have = 0;
	CURLcode e = CURLE_OK;
	int rc = 0, exec = 0;

	*kept = 0;
	if (rocmd_fs_kind(partial, &have, &exec) != 'f' || have > size)
		have = 0;
	x.fd = rocmd_fs_open(partial, O_RDWR | O_CREAT | (have == 0 ? O_TRUNC : 0), 0600);
	if (x.fd < 0) {
		snprintf(why, whylen, "cannot create %.300s: %s", partial, rocmd_strerror(x.fd));
		return x.fd;
	}
	if ((rc = rocmd_sha256_new(&x.sha)) < 0 || (rc = hash_have(x.fd, have, x.sha)) < 0) {
		snprintf(why, whylen, "cannot read %.300s: %s", partial, rocmd_strerror(rc));
		goto fail;
	}
	x.have = have;
	if (have < size) {
		if (lseek(x.fd, (off_t)have, SEEK_SET) < 0) {
			rc = -errno;
			snprintf(why, whylen, "cannot seek in %.300s: %s", partial, strerror(errno));
			goto fail;
		}
		if ((x.c = easy_new(h, url, err)) == NULL) {
			rc = ROCMD_ENOMEM;
			snprintf(why, whylen, "libcurl cannot start");
			goto fail;
		}
		if (have > 0)
			curl_easy_setopt(x.c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)have);
		curl_easy_setopt(x.c, CURLOPT_WRITEFUNCTION, dl_body);
		curl_easy_setopt(x.c, CURLOPT_WRITEDATA, &x);
		curl_easy_setopt(x.c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(x.c, CURLOPT_XFERINFOFUNCTION, dl_progress);
		curl_easy_setopt(x.c, CURLOPT_XFERINFODATA, &x);
		e = curl_easy_perform(x.c);
		if (x.refused) {
			snprintf(why, whylen, "%.300s: %s", url, x.why);
			rc = ROCMD_ECORRUPT;
			goto fail;
		}
		if (x.io) {
			snprintf(why, whylen, "cannot write %.300s", partial);
			rc = ROCMD_EIO;
			goto fail;
		}
		if (e == CURLE_ABORTED_BY_CALLBACK) {
			snprintf(why, whylen, "download canceled");
			rc = ROCMD_ECANCELED;
			goto cut;
		}
		if (e == CURLE_PARTIAL_FILE || e == CURLE_RECV_ERROR || e == CURLE_GOT_NOTHING ||
		    e == CURLE_OPERATION_TIMEDOUT || is_offline(e)) {
			curl_why(x.c, e, url, err, why, whylen);
			/* Not ROCMD_ECONNECT: that says rocmd itself is unreachable. */
			rc = e == CURLE_OPERATION_TIMEDOUT ? ROCMD_ETIMEDOUT : ROCMD_EIO;
			goto cut;
		}
		if (e != CURLE_OK) {
			curl_why(x.c, e, url, err, why, whylen);
			rc = ROCMD_EIO;
			goto fail;
		}
	}
	if (x.have + x.got != size) {
		snprintf(why, whylen, "%.300s: the body ended after %llu of %llu bytes: truncated", url,
		         (unsigned long long)(x.have + x.got), (unsigned long long)size);
		rc = ROCMD_ETRUNCATED;
		goto fail;
	}
	rc = rocmd_sha256_final(x.sha, digest); /* frees it */
	x.sha = NULL;
	if (rc < 0) {
		snprintf(why, whylen, "cannot hash %.300s: %s", partial, rocmd_strerror(rc));
		goto fail;
	}
	rocmd_sha256_hex(digest, hex);
	if (strcmp(hex, sha256) != 0) {
		snprintf(why, whylen, "%.300s: its SHA-256 is %s, the feed says %s: wrong hash", url,
		         hex, sha256);
		rc = ROCMD_ECORRUPT;
		goto fail;
	}
	if ((rc = rocmd_fs_fsync(x.fd)) < 0) {
		snprintf(why, whylen, "cannot flush %.300s: %s", partial, rocmd_strerror(rc));
		goto fail;
	}
	goto out;
cut:
	/* A connection cut short (or a stall) keeps what came, for the next try. */
	if (x.have + x.got > 0) {
		*kept = 1;
		goto out;
	}
fail:
	if (x.fd >= 0)
		rocmd_fs_close(x.fd);
	x.fd = -1;
	rocmd_fs_unlink(partial);
out:
	if (x.fd >= 0)
		rocmd_fs_close(x.fd);
	rocmd_sha256_free(x.sha);
	if (x.c != NULL)
		curl_easy_cleanup(x.c);
	return rc;
}
