/*
 * The feeds' download client on Windows: not built yet (the cross-build has
 * no libcurl with the native TLS backend), so metadata and archives are
 * never fetched there; a clear error says so (docs/FEEDS.md, known gaps).
 * Remote files, catalogues and release listings are still read.
 */
#include "feed.h"

#include <stdio.h>

#include "common/error.h"

int
rocmd_feed_http_get(const struct rocmd_feed_http *h, struct rocmd_feed_get *g, char *why,
                    size_t whylen)
{
	(void)h;
	g->body = NULL;
	g->len = 0;
	snprintf(why, whylen, "this rocmd was not built with a download client on Windows");
	return ROCMD_EUNSUPPORTED;
}

int
rocmd_feed_download(const struct rocmd_feed_http *h, const char *url, const char *partial,
                    uint64_t size, const char *sha256,
                    int (*progress)(const struct rocmd_feed_progress *p, void *ctx), void *ctx,
                    int *kept, char *why, size_t whylen)
{
	(void)h;
	(void)url;
	(void)partial;
	(void)size;
	(void)sha256;
	(void)progress;
	(void)ctx;
	*kept = 0;
	snprintf(why, whylen, "this rocmd was not built with a download client on Windows");
	return ROCMD_EUNSUPPORTED;
}
