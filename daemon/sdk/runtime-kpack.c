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
 * holds kernels for ("gfx_arches" is what it was built to hold). The TOC is
 * walked over its bytes (mpwalk.h), never unpacked into a tree: msgpack-c
 * would allocate what a hostile count claims before reading a byte of it.
 */
#include "runtime-discover.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/text.h"
#include "mpwalk.h"

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
is_arch(const char *s, uint64_t n)
{
	if (n < 4 || n > 24 || memcmp(s, "gfx", 3) != 0)
		return 0;
	for (uint64_t i = 3; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Adds arch S (N bytes) to *ARCHS (one per line) once. */
static void
add_arch(char **archs, const char *s, uint64_t n)
{
	const char *p = *archs;

	while (p != NULL && *p != '\0') {
		size_t k = strcspn(p, "\n");
		if (k == n && memcmp(p, s, (size_t)n) == 0)
			return;
		p += k + (p[k] == '\n');
	}
	rocmd_text_addf(archs, "%.*s", (int)n, s);
}

/* One binary's map of the "toc": its keys that are archs go to *ARCHS. */
static int
binary_archs(struct rocmd_mp_cur *c, char **archs)
{
	const char *s = NULL;
	uint64_t len, klen;
	int kind, kkind, rc;

	if ((rc = rocmd_mp_head(c, &kind, &len, &s)) < 0 || kind != MP_MAP)
		return rc < 0 ? rc : rocmd_mp_skip_body(c, kind, len);
	for (uint64_t j = 0; j < len && rc == 0; j++) {
		if ((rc = rocmd_mp_head(c, &kkind, &klen, &s)) < 0)
			break;
		if (kkind == MP_STR && is_arch(s, klen))
			add_arch(archs, s, klen);
		else
			rc = rocmd_mp_skip_body(c, kkind, klen);
		if (rc == 0)
			rc = rocmd_mp_skip_items(c, 1); /* the kernel's entry */
	}
	return rc;
}

/* The TOC's "toc" map of DATA (LEN bytes from the TOC offset): its archs,
 * walked over the bytes (mpwalk.h): nothing is allocated for what the
 * counts claim. */
static int
toc_archs(const char *data, size_t len, char **archs, char *why, size_t whylen)
{
	struct rocmd_mp_cur c = {(const uint8_t *)data, len, 0};
	const char *s = NULL;
	uint64_t n, m, klen;
	int kind, rc, found = 0;

	if (rocmd_mp_head(&c, &kind, &n, &s) < 0 || kind != MP_MAP) {
		snprintf(why, whylen, "its table of contents is not a MessagePack map");
		return ROCMD_ECORRUPT;
	}
	rc = 0;
	for (uint64_t i = 0; i < n && rc == 0; i++) {
		if ((rc = rocmd_mp_head(&c, &kind, &klen, &s)) < 0)
			break;
		if (kind != MP_STR || klen != 3 || memcmp(s, "toc", 3) != 0) {
			if ((rc = rocmd_mp_skip_body(&c, kind, klen)) == 0)
				rc = rocmd_mp_skip_items(&c, 1);
			continue;
		}
		if ((rc = rocmd_mp_head(&c, &kind, &m, &s)) < 0)
			break;
		if (kind != MP_MAP) {
			rc = rocmd_mp_skip_body(&c, kind, m);
			continue;
		}
		found = 1;
		for (uint64_t j = 0; j < m && rc == 0; j++)
			if ((rc = rocmd_mp_skip_items(&c, 1)) == 0) /* the binary's path */
				rc = binary_archs(&c, archs);
	}
	if (rc < 0) {
		snprintf(why, whylen, "its table of contents is cut short or malformed");
		return ROCMD_ECORRUPT;
	}
	if (!found) {
		snprintf(why, whylen, "its table of contents has no \"toc\" map");
		return ROCMD_ECORRUPT;
	}
	return 0;
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
