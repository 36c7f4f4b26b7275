/*
 * Little-endian fields of the untrusted formats the package store reads
 * itself (a zip's central directory in pkg-raw.c, PE and ELF headers in
 * pkg-ident.c); callers check every offset against the data's size first.
 */
#ifndef ROCMD_PKG_BYTES_H
#define ROCMD_PKG_BYTES_H

#include <stdint.h>

static inline uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

#endif
