/*
 * The platform-independent part of hash.h: hex formatting and parsing of
 * digests. The hashing itself is hash-openssl.c or hash-bcrypt.c.
 */
#include "hash.h"

#include "error.h"

void
rocmd_sha256_hex(const uint8_t digest[ROCMD_SHA256_LEN], char out[ROCMD_SHA256_HEX])
{
	static const char hexd[] = "0123456789abcdef";

	for (int i = 0; i < ROCMD_SHA256_LEN; i++) {
		out[2 * i] = hexd[digest[i] >> 4];
		out[2 * i + 1] = hexd[digest[i] & 0xf];
	}
	out[2 * ROCMD_SHA256_LEN] = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
rocmd_sha256_parse(const char *hex, uint8_t digest[ROCMD_SHA256_LEN])
{
	for (int i = 0; i < ROCMD_SHA256_LEN; i++) {
		int hi = hexval(hex[2 * i]), lo = hi >= 0 ? hexval(hex[2 * i + 1]) : -1;
		if (hi < 0 || lo < 0)
			return ROCMD_EINVAL;
		digest[i] = (uint8_t)(hi << 4 | lo);
	}
	return hex[2 * ROCMD_SHA256_LEN] == '\0' ? 0 : ROCMD_EINVAL;
}
