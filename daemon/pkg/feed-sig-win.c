/*
 * Catalogue signatures on Windows: CNG (bcrypt) has no Ed25519, and the
 * Windows build links no other crypto library yet, so a signed catalogue
 * cannot be checked there and is never used (docs/FEEDS.md, known gaps).
 * Release feeds do not need it.
 */
#include "feed.h"

#include <stdio.h>

#include "common/error.h"

int
rocmd_feed_sig_check(const struct rocmd_feed_remote *r, const void *body, size_t len,
                     const char *sig_text, size_t sig_len, char *why, size_t whylen)
{
	(void)body;
	(void)len;
	(void)sig_text;
	(void)sig_len;
	snprintf(why, whylen,
	         "remote %s: this Windows build cannot check Ed25519 signatures, so signed "
	         "catalogues are not used",
	         r->name);
	return ROCMD_EUNSUPPORTED;
}
