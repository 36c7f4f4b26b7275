/*
 * SHA-256 for content addressing and fingerprints. One interface; the build
 * picks the implementation: OpenSSL's libcrypto on Linux (hash-openssl.c),
 * BCrypt on Windows. Streaming, so large files never sit in memory.
 */
#ifndef ROCMD_HASH_H
#define ROCMD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define ROCMD_SHA256_LEN 32
#define ROCMD_SHA256_HEX 65 /* 64 hex digits and a NUL */

struct rocmd_sha256; /* opaque streaming context */

int rocmd_sha256_new(struct rocmd_sha256 **out);
int rocmd_sha256_update(struct rocmd_sha256 *h, const void *data, size_t len);
/* Writes the digest and frees the context. */
int rocmd_sha256_final(struct rocmd_sha256 *h, uint8_t digest[ROCMD_SHA256_LEN]);
/* Frees a context without finishing (error paths). NULL is fine. */
void rocmd_sha256_free(struct rocmd_sha256 *h);

/* Hashes a whole file with large sequential reads; *size_out (may be NULL)
 * receives its length. Returns 0 or -errno / ROCMD_E*. */
int rocmd_sha256_file(const char *path, uint8_t digest[ROCMD_SHA256_LEN], uint64_t *size_out);
/* Lower-case hex of a digest into OUT (ROCMD_SHA256_HEX bytes). */
void rocmd_sha256_hex(const uint8_t digest[ROCMD_SHA256_LEN], char out[ROCMD_SHA256_HEX]);
/* Parses 64 hex digits; returns 0 or ROCMD_EINVAL. */
int rocmd_sha256_parse(const char *hex, uint8_t digest[ROCMD_SHA256_LEN]);

#endif
