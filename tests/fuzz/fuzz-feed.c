/*
 * Fuzz target for what the package feeds read from the network and from
 * remotes.d (daemon/pkg/feed*.c). The first byte picks the parser, the rest
 * is its input:
 *   0  a remote file through rocmd_feed_remote_parse;
 *   1  a release listing through rocmd_feed_releases_parse;
 *   2  a catalogue through rocmd_feed_catalogue_parse (its signature is
 *      checked before it in the daemon; here the parser alone);
 *   3  base64 through rocmd_feed_base64.
 * Beyond not crashing, what is accepted must be sound: every package's URL
 * passes the https rule, its name is a plain archive name, its hash is 64
 * hex digits or none; a refused document adds no package.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/pkg/feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_list(const struct rocmd_feed_list *l, int rc)
{
	char why[512];

	if (rc < 0 && l->n != 0)
		abort();
	for (size_t i = 0; i < l->n; i++) {
		const struct rocmd_feed_pkg *p = &l->p[i];
		size_t n = strlen(p->sha256);
		if (rocmd_feed_url_check(p->url, 0, why, sizeof(why)) < 0 ||
		    rocmd_feed_name_check(p->name, why, sizeof(why)) < 0 || (n != 0 && n != 64) ||
		    strspn(p->sha256, "0123456789abcdef") != n || p->size == 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rocmd_feed_remote r;
	struct rocmd_feed_list l = {0};
	char why[1024];
	uint8_t out[256];
	const char *text;
	size_t len;
	int rc;

	if (size < 1)
		return 0;
	text = (const char *)data + 1;
	len = size - 1;
	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "fuzz");
	snprintf(r.platform, sizeof(r.platform), "windows");
	switch (data[0] % 4) {
	case 0:
		rc = rocmd_feed_remote_parse("fuzz", "fuzz.conf", text, len, 0, &r, why, sizeof(why));
		if (rc == 0 && (rocmd_feed_url_check(r.url, 0, why, sizeof(why)) < 0 ||
		                (r.kind == ROCMD_FEED_CATALOGUE && r.nkeys == 0)))
			abort();
		break;
	case 1:
		rc = rocmd_feed_releases_parse(&r, text, len, 0, &l, why, sizeof(why));
		check_list(&l, rc);
		break;
	case 2:
		rc = rocmd_feed_catalogue_parse(&r, text, len, 0, &l, why, sizeof(why));
		check_list(&l, rc);
		break;
	default: {
		long n = rocmd_feed_base64(text, len, out, sizeof(out));
		if (n > (long)sizeof(out))
			abort();
		break;
	}
	}
	rocmd_feed_list_free(&l);
	return 0;
}
