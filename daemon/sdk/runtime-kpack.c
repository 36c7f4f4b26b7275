/*
 * TheRock's .kpack archives (runtime-discover.h): device code split out of
 * fat binaries, one archive per build slice and arch family. The format is
 * rocm-kpack's PackedKernelArchive (stellaraccident/rocm-kpack:
 * python/rocm_kpack/kpack.py, and the C reader's validate_header and
 * parse_toc): a 16-byte header ("KPAK", a
 * little-endian uint32 format version, a little-endian uint64 offset of the
 * table of contents), the blobs, then the TOC as one MessagePack map whose
 * "toc" maps each binary's path to a map from gfx arch to its kernel's
 * entry. The archs read here are those keys: the archs the archive really
 * holds kernels for ("gfx_arches" is what it was built to hold).
 */
#include "runtime-discover.h"

#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/text.h"

#define KPACK_HEADER 16
#define KPACK_VERSION 1
/* A TOC larger than this is not believed (it names paths and offsets only). */
#define KPACK_TOC_MAX (64u * 1024 * 1024)

static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int
is_arch(const msgpack_object *o)
{
	const char *s = o->via.str.ptr;
	uint32_t n = o->via.str.size;

	if (o->type != MSGPACK_OBJECT_STR || n < 4 || n > 24 || memcmp(s, "gfx", 3) != 0)
		return 0;
	for (uint32_t i = 3; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Adds arch O to *ARCHS (one per line) once. */
static void
add_arch(char **archs, const msgpack_object *o)
{
	const char *p = *archs;
	uint32_t n = o->via.str.size;

	while (p != NULL && *p != '\0') {
		size_t k = strcspn(p, "\n");
		if (k == n && memcmp(p, o->via.str.ptr, n) == 0)
			return;
		p += k + (p[k] == '\n');
	}
	rocmd_text_addf(archs, "%.*s", (int)n, o->via.str.ptr);
}

/* The TOC's "toc" map of DATA (LEN bytes from the TOC offset): its archs. */
static int
toc_archs(const char *data, size_t len, char **archs, char *why, size_t whylen)
{
	msgpack_unpacked u;
	const msgpack_object *toc = NULL;
	int rc = ROCMD_ECORRUPT;

	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, data, len, NULL) != MSGPACK_UNPACK_SUCCESS ||
	    u.data.type != MSGPACK_OBJECT_MAP) {
		snprintf(why, whylen, "its table of contents is not a MessagePack map");
		goto out;
	}
	for (uint32_t i = 0; i < u.data.via.map.size; i++) {
		const msgpack_object *k = &u.data.via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == 3 &&
		    memcmp(k->via.str.ptr, "toc", 3) == 0)
			toc = &u.data.via.map.ptr[i].val;
	}
	if (toc == NULL || toc->type != MSGPACK_OBJECT_MAP) {
		snprintf(why, whylen, "its table of contents has no \"toc\" map");
		goto out;
	}
	for (uint32_t i = 0; i < toc->via.map.size; i++) {
		const msgpack_object *bin = &toc->via.map.ptr[i].val;
		if (bin->type != MSGPACK_OBJECT_MAP)
			continue;
		for (uint32_t j = 0; j < bin->via.map.size; j++)
			if (is_arch(&bin->via.map.ptr[j].key))
				add_arch(archs, &bin->via.map.ptr[j].key);
	}
	rc = 0;
out:
	msgpack_unpacked_destroy(&u);
	return rc;
}

int
rocmd_kpack_archs(const char *h, char **archs, char *why, size_t whylen)
{
	const void *map;
	const uint8_t *p;
	size_t len;
	uint64_t version, toc;
	int rc = rocmd_fs_map(h, &map, &len);

	if (rc < 0) {
		snprintf(why, whylen, "%s", rocmd_strerror(rc));
		return rc;
	}
	p = map;
	if (len < KPACK_HEADER || memcmp(p, "KPAK", 4) != 0) {
		snprintf(why, whylen, "not a kpack archive (no KPAK header)");
		rc = ROCMD_ECORRUPT;
	} else if ((version = le(p + 4, 4)) != KPACK_VERSION) {
		snprintf(why, whylen, "kpack format version %llu, not %d",
		         (unsigned long long)version, KPACK_VERSION);
		rc = ROCMD_EUNSUPPORTED;
	} else if ((toc = le(p + 8, 8)) < KPACK_HEADER || toc >= len || len - toc > KPACK_TOC_MAX) {
		snprintf(why, whylen, "its table of contents offset %llu is outside the file",
		         (unsigned long long)toc);
		rc = ROCMD_ECORRUPT;
	} else {
		rc = toc_archs((const char *)p + toc, len - (size_t)toc, archs, why, whylen);
	}
	rocmd_fs_unmap(map, len);
	return rc;
}
