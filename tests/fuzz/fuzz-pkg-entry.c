/*
 * Fuzz target for what the package store takes from archives. The first byte
 * picks the parser, the rest is its input:
 *   0  an entry name through rocmd_pkg_path_clean;
 *   1  a link ("PATH\0TARGET") through rocmd_pkg_link_resolve;
 *   2  an archive name through the name hints, and the same text as match
 *      rules and an SDK version through matching;
 *   3  a whole archive in memory through rocmd_pkg_read_memory (dry run,
 *      small limits).
 * Beyond not crashing, accepted output must be safe: relative, no "..", no
 * '\', no ':', and stable when cleaned again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/pkg/pkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless P is a clean relative path that cleans to itself. */
static void
check_clean(const char *p)
{
	char again[4096], why[256];

	if (p[0] == '\0' || p[0] == '/' || strchr(p, '\\') != NULL || strchr(p, ':') != NULL)
		abort();
	if (strcmp(p, "..") == 0 || strncmp(p, "../", 3) == 0 || strstr(p, "/../") != NULL ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0) || strstr(p, "//") != NULL)
		abort();
	if (rocmd_pkg_path_clean(p, again, sizeof(again), why, sizeof(why)) != 0 ||
	    strcmp(again, p) != 0)
		abort();
}

static const struct rocmd_pkg_candidate cands[] = {
	{1, "a", "windows", "5.7", "V3", "gfx1103", 1, 0},
	{2, "b", "windows", "6.2.4", "V5.0", "gfx1103,gfx1150", 2, 0},
	{3, "c", "linux", "6", NULL, "gfx90c", 3, 0},
	{4, "d", "any", NULL, NULL, "", 4, 0},
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, out[4096], why[512];
	int mode;

	if (size < 1)
		return 0;
	mode = data[0] % 4;
	data++;
	size--;
	if (mode == 3) {
		struct rocmd_pkg_read_opts opts = {
			.limits = {.max_total = 1 << 20, .max_file = 256 << 10, .max_files = 64},
			.dry_run = 1,
		};
		struct rocmd_pkg_contents c;
		int rc = rocmd_pkg_read_memory(data, size, NULL, &opts, &c, why, sizeof(why));
		if (rc == 0) {
			for (size_t i = 0; i < c.count; i++) {
				check_clean(c.entries[i].path);
				if (c.entries[i].kind == ROCMD_PKG_SYMLINK &&
				    rocmd_pkg_link_resolve(c.entries[i].path, c.entries[i].link, out,
							   sizeof(out), why, sizeof(why)) != 0)
					abort();
			}
			rocmd_pkg_contents_free(&c);
		} else if (why[0] == '\0' || c.count != 0) {
			abort(); /* a refusal says why and leaves nothing */
		}
		return 0;
	}
	text = malloc(size + 2);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	text[size + 1] = '\0';
	if (mode == 0) {
		if (rocmd_pkg_path_clean(text, out, sizeof(out), why, sizeof(why)) == 0)
			check_clean(out);
		else if (why[0] == '\0')
			abort();
	} else if (mode == 1) {
		const char *target = text + strlen(text) + 1;
		char link[4096];
		if (rocmd_pkg_path_clean(text, link, sizeof(link), why, sizeof(why)) == 0 &&
		    rocmd_pkg_link_resolve(link, target, out, sizeof(out), why, sizeof(why)) == 0)
			check_clean(out);
	} else {
		struct rocmd_pkg_name_hints h;
		struct rocmd_pkg_version v;
		cJSON *ex = NULL;
		int chosen;
		rocmd_pkg_name_hints(text, &h);
		if (h.sdk[0] != '\0' && (rocmd_pkg_version_parse(h.sdk, &v) != 0 || v.n < 2))
			abort();
		if (h.version[0] != '\0' && h.version[0] != 'V')
			abort();
		if (rocmd_pkg_rules_check(text, why, sizeof(why)) == 0) {
			if (rocmd_pkg_match("6.2.4", "windows", "gfx1103", cands, 4, text, &chosen,
					    &ex, why, sizeof(why)) != 0)
				abort();
			if (chosen >= 0 && cands[chosen].id != 2)
				abort(); /* only #2 is of generation 6.2 with gfx1103 */
			cJSON_Delete(ex);
		}
		if (rocmd_pkg_match(text, "linux", "gfx90c", cands, 4, NULL, &chosen, NULL, why,
				    sizeof(why)) == 0 &&
		    chosen >= 0)
			abort(); /* #3, the only gfx90c one, is only known as "6": never chosen */
	}
	free(text);
	return 0;
}
