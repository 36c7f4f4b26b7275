/*
 * A catalogue's detached Ed25519 signature checked with OpenSSL's libcrypto
 * (EVP_PKEY_ED25519), the library the hashing already links on Unix
 * (common/hash-openssl.c); on Windows the static libcrypto of
 * scripts/build-windows.sh, for this alone (hashing there is BCrypt's).
 */
#include "feed.h"

#include <stdio.h>

#include <openssl/evp.h>

#include "common/error.h"

static int
key_made(const uint8_t key[ROCMD_FEED_KEY_LEN], const void *body, size_t len,
         const uint8_t sig[ROCMD_FEED_SIG_LEN])
{
	EVP_PKEY *pk = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key, ROCMD_FEED_KEY_LEN);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int ok = 0;

	if (pk != NULL && md != NULL && EVP_DigestVerifyInit(md, NULL, NULL, NULL, pk) == 1)
		ok = EVP_DigestVerify(md, sig, ROCMD_FEED_SIG_LEN, body, len) == 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	return ok;
}

int
rocmd_feed_sig_check(const struct rocmd_feed_remote *r, const void *body, size_t len,
                     const char *sig_text, size_t sig_len, char *why, size_t whylen)
{
	uint8_t sig[ROCMD_FEED_SIG_LEN + 4];

	if (rocmd_feed_base64(sig_text, sig_len, sig, sizeof(sig)) != ROCMD_FEED_SIG_LEN) {
		snprintf(why, whylen,
		         "remote %s: the signature is not the base64 of a 64-byte Ed25519 signature",
		         r->name);
		return ROCMD_ECORRUPT;
	}
	for (size_t i = 0; i < r->nkeys; i++)
		if (key_made(r->keys[i], body, len, sig))
			return 0;
	snprintf(why, whylen,
	         "remote %s: the catalogue's signature was not made by any of the %zu key(s) in "
	         "%s; nothing in it is used",
	         r->name, r->nkeys, r->file);
	return ROCMD_ECORRUPT;
}
