/*
 * A walk straight over MessagePack bytes that allocates nothing: for files a
 * hostile user can write (TensileLibrary.dat, TheRock's .kpack tables of
 * contents), where unpacking into an object tree first would allocate what
 * the counts claim (msgpack-c's zone asked for 64 GiB for a map header of
 * 2^32 pairs in a 50-byte file). Every length is checked against the bytes
 * left. mpwalk.c.
 */
#ifndef ROCMD_MPWALK_H
#define ROCMD_MPWALK_H

#include <stddef.h>
#include <stdint.h>

enum { MP_SCALAR, MP_STR, MP_ARRAY, MP_MAP };

struct rocmd_mp_cur {
	const uint8_t *p;
	size_t n, off;
};

/* Reads one header: strings, bin, ext and numbers are consumed whole (a
 * string's bytes in *STR); for an array or map *LEN is its item or pair count. */
int rocmd_mp_head(struct rocmd_mp_cur *c, int *kind, uint64_t *len, const char **str);
/* Skips COUNT whole values without recursion (each is at least one byte). */
int rocmd_mp_skip_items(struct rocmd_mp_cur *c, uint64_t count);
/* Skips the rest of a value whose header mp_head read as KIND and LEN. */
int rocmd_mp_skip_body(struct rocmd_mp_cur *c, int kind, uint64_t len);

#endif
