/*
 * Package entry names compared as Windows' file systems compare them: case
 * folded over UTF-8 for the scripts package names use (Latin with its
 * Latin-1 and Extended-A letters, Greek, Cyrillic), so that a package holding
 * "Ärger" and "ärger" is refused before it reaches an NTFS target.
 */
#include <stdint.h>

#include "pkg.h"

/* The next code point of UTF-8 text at *P (advanced), or the byte itself when
 * it does not start a well-formed sequence. */
static uint32_t
next_cp(const unsigned char **p)
{
	const unsigned char *s = *p;
	uint32_t c = s[0];
	int n = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 && c < 0xe0 ? 1 : 0;

	if (c >= 0xf5)
		n = 0;
	c = n == 3 ? c & 0x07 : n == 2 ? c & 0x0f : n == 1 ? c & 0x1f : c;
	for (int i = 1; i <= n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*p = s + 1;
			return s[0];
		}
		c = c << 6 | (s[i] & 0x3f);
	}
	*p = s + 1 + n;
	return c;
}

/* Folds the case of C as Windows' file systems do for the scripts package
 * names use (Latin with its Latin-1 and Extended-A letters, Greek, Cyrillic);
 * other code points are their own fold. */
static uint32_t
fold_cp(uint32_t c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7))
		return c + 0x20;
	if ((c >= 0x100 && c <= 0x137) || (c >= 0x14a && c <= 0x177))
		return c | 1;
	if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e))
		return c + (c & 1);
	if (c == 0x178)
		return 0xff;
	if ((c >= 0x391 && c <= 0x3a9 && c != 0x3a2) || (c >= 0x410 && c <= 0x42f))
		return c + 0x20;
	if (c >= 0x400 && c <= 0x40f)
		return c + 0x50;
	return c;
}

/* strcasecmp over UTF-8 names with fold_cp: "Ärger" and "ärger" are one name
 * to Windows, as "A" and "a" are. */
int
rocmd_pkg_name_casecmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

	while (*p != '\0' && *q != '\0') {
		uint32_t x = fold_cp(next_cp(&p)), y = fold_cp(next_cp(&q));
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (*p != '\0') - (*q != '\0');
}
