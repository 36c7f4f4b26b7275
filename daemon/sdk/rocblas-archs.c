/*
 * Which GPU archs a rocBLAS serves, told one way wherever rocmd asks: the
 * rule that decides whether a library folder serves an arch (package import,
 * discovery's view of an SDK's library, lib verify and the verification
 * inside a deploy all call rocmd_rocblas_arch_served), the arch a library
 * file's name is for, and the archs the rocBLAS binary itself was built for
 * (its clang offload bundles: a merged library can serve only those). See
 * rocblas-library.h. Blocking file I/O: off the loop thread, but for the
 * binary's bundle headers, which are a few pages.
 */
#include "rocblas-library.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"

static int
listed(char *const *v, size_t n, const char *gfx)
{
	size_t b = rocmd_gfx_bare_len(gfx);

	for (size_t i = 0; b > 0 && i < n; i++)
		if (rocmd_gfx_bare_len(v[i]) == b && strncmp(v[i], gfx, b) == 0)
			return 1;
	return 0;
}

int
rocmd_rocblas_arch_served(char *const *index, size_t nindex, char *const *co, size_t nco,
                          const char *gfx)
{
	/* Named by an index (none: rocBLAS aborts), and with code objects for
	 * it wherever the folder has any (an index naming an arch whose
	 * kernels are not there serves nothing). */
	return gfx != NULL && listed(index, nindex, gfx) && (nco == 0 || listed(co, nco, gfx));
}

int
rocmd_rocblas_serves(const struct rocmd_rocblas_lib *lib, const char *gfx)
{
	return lib != NULL && rocmd_rocblas_arch_served(lib->archs, lib->narchs, lib->co_archs,
	                                                lib->nco_archs, gfx);
}

/* Splits comma-separated S into at most MAX names in BUF (N bytes). */
static size_t
split_csv(const char *s, char *buf, size_t n, char **v, size_t max)
{
	size_t k = 0;

	snprintf(buf, n, "%s", s != NULL ? s : "");
	for (char *p = buf; *p != '\0' && k < max;) {
		size_t l = strcspn(p, ",");
		v[k++] = p;
		if (p[l] == '\0')
			break;
		p[l] = '\0';
		p += l + 1;
	}
	return k;
}

void
rocmd_rocblas_served_csv(const char *index_csv, const char *co_csv, char *out, size_t outlen)
{
	char ib[1024], cb[1024], *iv[64], *cv[64];
	size_t ni = split_csv(index_csv, ib, sizeof(ib), iv, 64);
	size_t nc = split_csv(co_csv, cb, sizeof(cb), cv, 64), l = 0;

	if (outlen > 0)
		out[0] = '\0';
	for (size_t i = 0; i < ni; i++) {
		size_t b = rocmd_gfx_bare_len(iv[i]);
		if (b == 0 || !rocmd_rocblas_arch_served(iv, ni, cv, nc, iv[i]))
			continue;
		if (l + b + 2 > outlen)
			break;
		l += (size_t)snprintf(out + l, outlen - l, "%s%.*s", l ? "," : "", (int)b, iv[i]);
	}
}

/* Whether ARCHS ("gfx1030,gfx90a") covers GFX, ignoring feature suffixes. */
int
rocmd_archs_csv_has(const char *archs, const char *gfx)
{
	size_t n = strcspn(gfx, ":");

	for (const char *p = archs; p != NULL && *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		size_t base = strcspn(p, ":-,");
		if (base > len)
			base = len;
		if (base == n && strncmp(p, gfx, n) == 0)
			return 1;
		p = comma != NULL ? comma + 1 : NULL;
	}
	return 0;
}

/* The strings of JSON array A as a comma-separated list, into OUT. */
static void
csv_of(const cJSON *a, char *out, size_t outlen)
{
	const cJSON *v;
	size_t used = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(v, a)
	{
		if (cJSON_IsString(v) && used < outlen)
			used += (size_t)snprintf(out + used, outlen - used, "%s%s",
			                         used > 0 ? "," : "", v->valuestring);
	}
}

void
rocmd_rocblas_served_json(const cJSON *lib, char *out, size_t outlen)
{
	char index[1024], co[1024];

	csv_of(cJSON_GetObjectItemCaseSensitive(lib, "archs"), index, sizeof(index));
	csv_of(cJSON_GetObjectItemCaseSensitive(lib, "code_object_archs"), co, sizeof(co));
	rocmd_rocblas_served_csv(index, co, out, outlen);
}

int
rocmd_rocblas_name_arch(const char *name, char *out, size_t outlen)
{
	for (const char *p = strstr(name, "gfx"); p != NULL; p = strstr(p + 3, "gfx")) {
		size_t n = 3;
		if (p != name && p[-1] != '_' && p[-1] != '-')
			continue;
		while (isalnum((unsigned char)p[n]))
			n++;
		if (n == 3 || !isdigit((unsigned char)p[3]) || n >= outlen)
			continue;
		memcpy(out, p, n);
		out[n] = '\0';
		return 0;
	}
	return ROCMD_ENOTFOUND;
}

/* ---- the binary's offload bundles ---- */

static const char bundle_magic[] = "__CLANG_OFFLOAD_BUNDLE__";
#define MAGIC_LEN (sizeof(bundle_magic) - 1)

static uint64_t
le64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The offset of the next bundle at or after OFF, or LEN. */
static size_t
find_bundle(const unsigned char *d, size_t len, size_t off)
{
	while (off + MAGIC_LEN <= len) {
		const unsigned char *p = memchr(d + off, '_', len - off - MAGIC_LEN + 1);
		if (p == NULL)
			return len;
		off = (size_t)(p - d);
		if (memcmp(p, bundle_magic, MAGIC_LEN) == 0)
			return off;
		off++;
	}
	return len;
}

/* Adds the archs of the bundle at OFF ("hipv4-amdgcn-amd-amdhsa--gfx1030"
 * entries) to *ARCHS; returns the offset its content ends at, 0 when the
 * header does not parse. */
static size_t
read_bundle(const unsigned char *d, size_t len, size_t off, char ***archs, size_t *n, int *oom)
{
	size_t p = off + MAGIC_LEN + 8, end = off;
	uint64_t count;

	if (p > len)
		return 0;
	count = le64(d + off + MAGIC_LEN);
	if (count == 0 || count > 256)
		return 0;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t eo, es, il;
		const char *id, *g;
		if (p + 24 > len)
			return 0;
		eo = le64(d + p);
		es = le64(d + p + 8);
		il = le64(d + p + 16);
		p += 24;
		if (il > 256 || p + il > len || eo > len - off || es > len - off - eo)
			return 0;
		id = (const char *)d + p;
		p += il;
		if (off + eo + es > end)
			end = off + (size_t)(eo + es);
		g = NULL;
		for (size_t k = 0; g == NULL && k + 5 <= il; k++)
			if (memcmp(id + k, "--gfx", 5) == 0)
				g = id + k;
		if (g != NULL && (size_t)(g - id) + 2 < il) {
			size_t a = (size_t)(g - id) + 2, b = a;
			char one[ROCMD_GFX_MAX];
			while (b < il && (isalnum((unsigned char)id[b]) || id[b] == ':' ||
			                  id[b] == '+' || id[b] == '-'))
				b++;
			snprintf(one, sizeof(one), "%.*s", (int)(b - a), id + a);
			one[rocmd_gfx_bare_len(one)] = '\0';
			if (rocmd_gfx_bare_len(one) > 0 && !listed(*archs, *n, one)) {
				char **v = realloc(*archs, (*n + 1) * sizeof(**archs));
				if (v == NULL || (v[*n] = strdup(one)) == NULL) {
					if (v != NULL)
						*archs = v;
					*oom = 1;
					return 0;
				}
				*archs = v;
				(*n)++;
			}
		}
	}
	return end > p ? end : p;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
rocmd_rocblas_binary_archs(const char *path, char ***archs, size_t *narchs, char *why,
                           size_t whylen)
{
	const void *map;
	const unsigned char *d;
	size_t len, off, bundles = 0;
	int rc, oom = 0;

	*archs = NULL;
	*narchs = 0;
	if ((rc = rocmd_fs_map(path, &map, &len)) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, rocmd_strerror(rc));
		return rc;
	}
	d = map;
	/* Bundles follow each other, each aligned (4096 in clang's output):
	 * after the first is found, the next is looked for where one ends. */
	for (off = find_bundle(d, len, 0); off < len && !oom;) {
		size_t end = read_bundle(d, len, off, archs, narchs, &oom);
		bundles++;
		off = find_bundle(d, len, end > off ? end : off + 1);
	}
	rocmd_fs_unmap(map, len);
	if (oom) {
		for (size_t i = 0; i < *narchs; i++)
			free((*archs)[i]);
		free(*archs);
		*archs = NULL;
		*narchs = 0;
		return ROCMD_ENOMEM;
	}
	if (*narchs == 0) {
		snprintf(why, whylen, "%s holds no GPU code (no offload bundle%s)", path,
		         bundles ? " names an arch" : "");
		return ROCMD_ENOTFOUND;
	}
	qsort(*archs, *narchs, sizeof(**archs), cmp_str);
	return 0;
}
