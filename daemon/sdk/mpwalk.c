/*
 * The MessagePack walk of mpwalk.h.
 */
#include "mpwalk.h"

#include "common/error.h"

static int
mp_be(struct rocmd_mp_cur *c, unsigned bytes, uint64_t *out)
{
	*out = 0;
	if (c->n - c->off < bytes)
		return ROCMD_ECORRUPT;
	for (unsigned i = 0; i < bytes; i++)
		*out = *out << 8 | c->p[c->off++];
	return 0;
}

static int
mp_skip(struct rocmd_mp_cur *c, uint64_t bytes)
{
	if (c->n - c->off < bytes)
		return ROCMD_ECORRUPT;
	c->off += (size_t)bytes;
	return 0;
}

int
rocmd_mp_head(struct rocmd_mp_cur *c, int *kind, uint64_t *len, const char **str)
{
	static const uint8_t fixed[] = {
	    [0xca - 0xc0] = 4, [0xcb - 0xc0] = 8, [0xcc - 0xc0] = 1, [0xcd - 0xc0] = 2,
	    [0xce - 0xc0] = 4, [0xcf - 0xc0] = 8, [0xd0 - 0xc0] = 1, [0xd1 - 0xc0] = 2,
	    [0xd2 - 0xc0] = 4, [0xd3 - 0xc0] = 8, [0xd4 - 0xc0] = 2, [0xd5 - 0xc0] = 3,
	    [0xd6 - 0xc0] = 5, [0xd7 - 0xc0] = 9, [0xd8 - 0xc0] = 17,
	};
	uint8_t b;
	int rc = 0;

	*kind = MP_SCALAR;
	*len = 0;
	if (c->off >= c->n)
		return ROCMD_ECORRUPT;
	b = c->p[c->off++];
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return 0;
	if (b <= 0x8f || (b >= 0xde && b <= 0xdf)) {
		*kind = MP_MAP;
		if (b <= 0x8f)
			*len = b & 0x0f;
		else
			rc = mp_be(c, b == 0xde ? 2 : 4, len);
		return rc;
	}
	if (b <= 0x9f || (b >= 0xdc && b <= 0xdd)) {
		*kind = MP_ARRAY;
		if (b <= 0x9f)
			*len = b & 0x0f;
		else
			rc = mp_be(c, b == 0xdc ? 2 : 4, len);
		return rc;
	}
	if (b <= 0xbf || (b >= 0xd9 && b <= 0xdb)) {
		*kind = MP_STR;
		if (b <= 0xbf)
			*len = b & 0x1f;
		else
			rc = mp_be(c, 1u << (b - 0xd9), len);
		if (rc == 0 && c->n - c->off < *len)
			rc = ROCMD_ECORRUPT;
		if (rc == 0) {
			*str = (const char *)c->p + c->off;
			c->off += (size_t)*len;
		}
		return rc;
	}
	if (b >= 0xc4 && b <= 0xc6) /* bin 8/16/32 */
		return (rc = mp_be(c, 1u << (b - 0xc4), len)) < 0 ? rc : mp_skip(c, *len);
	if (b >= 0xc7 && b <= 0xc9) /* ext 8/16/32: length, type, data */
		return (rc = mp_be(c, 1u << (b - 0xc7), len)) < 0 ? rc : mp_skip(c, *len + 1);
	if (b >= 0xca && b <= 0xd8)
		return mp_skip(c, fixed[b - 0xc0]);
	return ROCMD_ECORRUPT; /* 0xc1: never used */
}

int
rocmd_mp_skip_items(struct rocmd_mp_cur *c, uint64_t count)
{
	while (count > 0) {
		const char *s;
		uint64_t len;
		int kind, rc;

		if (count > c->n - c->off)
			return ROCMD_ECORRUPT;
		if ((rc = rocmd_mp_head(c, &kind, &len, &s)) < 0)
			return rc;
		count--;
		if (kind == MP_ARRAY || kind == MP_MAP) {
			if (len > c->n - c->off)
				return ROCMD_ECORRUPT;
			count += kind == MP_MAP ? 2 * len : len;
		}
	}
	return 0;
}

int
rocmd_mp_skip_body(struct rocmd_mp_cur *c, int kind, uint64_t len)
{
	if (kind != MP_ARRAY && kind != MP_MAP)
		return 0;
	if (len > c->n - c->off)
		return ROCMD_ECORRUPT;
	return rocmd_mp_skip_items(c, kind == MP_MAP ? 2 * len : len);
}
