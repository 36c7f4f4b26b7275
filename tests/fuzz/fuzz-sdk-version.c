/*
 * Fuzz target for the SDK version sources and their reconciliation
 * (daemon/sdk/sdk-version.h). The input is up to eight texts separated by
 * NUL bytes, one per source in the order they win (.info/version, package
 * changelog, .hipVersion, share/hip/version, folder name, HIP_PATH_NN,
 * registry key, hipconfig); each goes through the parser discovery uses for
 * that source, and the versions found are reconciled. Beyond not crashing:
 *   - every parsed version is "X.Y" or "X.Y.Z" and normalizes to itself;
 *   - agree is symmetric, cmp antisymmetric and zero on itself;
 *   - no source: no version, source -1, a problem sentence;
 *   - a version: it agrees with its source's text and with the first source
 *     present; no conflict means every source agrees with the version, a
 *     conflict means two sources disagree and the problem names them;
 *   - the JSON form has the version and every source present.
 *
 * Known defects, reported and not yet fixed; their checks run only with
 * ROCMD_FUZZ_KNOWN_DEFECTS=1 in the environment, until the fixes land and
 * they become unconditional:
 *   - rocmd_version_reconcile compares each source with the winner only, so
 *     "6.2" (.hipVersion), "6.2.4" (folder) and "6.2.1" (registry) give
 *     6.2.4 with no conflict although two sources disagree
 *     (corpus/sdk-version/defect-disagree-not-conflict);
 *   - a version refused for its length ("18446744073709551615.1844...")
 *     leaves its truncated text in OUT, and discovery, which writes into
 *     found[] directly, keeps it as that source's version
 *     (corpus/sdk-version/defect-refused-version-kept).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/sdk/sdk-version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless V is "X.Y" or "X.Y.Z" in decimal digits. */
static void
check_shape(const char *v)
{
	int dots = 0;
	char again[ROCMD_VERSION_MAX];

	if (!isdigit((unsigned char)v[0]))
		abort();
	for (const char *p = v; *p != '\0'; p++) {
		if (*p == '.') {
			if (!isdigit((unsigned char)p[1]))
				abort();
			dots++;
		} else if (!isdigit((unsigned char)*p)) {
			abort();
		}
	}
	if (dots < 1 || dots > 2)
		abort();
	if (rocmd_version_normalize(v, 0, again, sizeof(again)) != 0 || strcmp(again, v) != 0)
		abort();
}

/* The version source I's parser, as discovery applies it, on TEXT. */
static int
parse_source(int i, const char *text, char *out, size_t outlen)
{
	switch (i) {
	case ROCMD_VSRC_CHANGELOG:
		return rocmd_version_from_changelog(text, out, outlen);
	case ROCMD_VSRC_HIPVERSION:
	case ROCMD_VSRC_HIPFILE:
		return rocmd_version_parse_hip_lines(text, out, outlen);
	case ROCMD_VSRC_FOLDER:
	case ROCMD_VSRC_REGISTRY:
		return rocmd_version_from_folder(text, out, outlen);
	case ROCMD_VSRC_HIPCONFIG:
		return rocmd_version_normalize(text, 1, out, outlen);
	default: /* .info/version, and HIP_PATH_62 read as "6.2" */
		return rocmd_version_normalize(text, 0, out, outlen);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rocmd_sdk_version v;
	char *text = malloc(size + 1), *p;
	int first = -1, any_disagree = 0;
	static int known_defects = -1;
	cJSON *j;

	if (known_defects < 0) {
		const char *e = getenv("ROCMD_FUZZ_KNOWN_DEFECTS");
		known_defects = e != NULL && strcmp(e, "1") == 0;
	}
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&v, 0, sizeof(v));
	p = text;
	for (int i = 0; i < ROCMD_VERSION_SOURCES && p <= text + size; i++) {
		size_t n = strlen(p);
		int rc = parse_source(i, p, v.found[i], sizeof(v.found[i]));
		if (rc != 0 && rc != ROCMD_EINVAL)
			abort();
		if (rc == 0)
			check_shape(v.found[i]);
		else if (v.found[i][0] != '\0') {
			if (known_defects)
				abort(); /* a refusal leaves nothing behind */
			v.found[i][0] = '\0'; /* what the fix will do */
		}
		p += n + 1;
	}
	for (int i = 0; i < ROCMD_VERSION_SOURCES; i++) {
		const char *a = v.found[i];
		if (a[0] == '\0')
			continue;
		if (first < 0)
			first = i;
		if (rocmd_version_cmp(a, a) != 0 || !rocmd_version_agree(a, a))
			abort();
		for (int k = 0; k < ROCMD_VERSION_SOURCES; k++) {
			const char *b = v.found[k];
			if (b[0] == '\0')
				continue;
			if (rocmd_version_agree(a, b) != rocmd_version_agree(b, a) ||
			    rocmd_version_cmp(a, b) != -rocmd_version_cmp(b, a))
				abort();
			if (!rocmd_version_agree(a, b))
				any_disagree = 1;
		}
	}
	rocmd_version_reconcile(&v);
	if (memchr(v.problem, '\0', sizeof(v.problem)) == NULL ||
	    memchr(v.version, '\0', sizeof(v.version)) == NULL)
		abort();
	if (first < 0) {
		if (v.version[0] != '\0' || v.source != -1 || v.conflict || v.problem[0] == '\0')
			abort();
	} else {
		if (v.source < first || v.source >= ROCMD_VERSION_SOURCES)
			abort();
		check_shape(v.version);
		if (strcmp(v.version, v.found[v.source]) != 0 ||
		    !rocmd_version_agree(v.version, v.found[first]))
			abort();
		/* Any disagreement is a conflict, reported with every source. */
		if (v.conflict && !any_disagree)
			abort();
		if (!v.conflict && any_disagree && known_defects)
			abort();
		if (v.conflict && strstr(v.problem, "disagree") == NULL)
			abort();
		for (int i = 0; !v.conflict && known_defects && i < ROCMD_VERSION_SOURCES; i++)
			if (v.found[i][0] != '\0' && !rocmd_version_agree(v.version, v.found[i]))
				abort();
	}
	j = rocmd_version_to_json(&v);
	if (j == NULL)
		abort();
	{
		const cJSON *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "sources");
		if (first >= 0 && (!cJSON_IsString(ver) || strcmp(ver->valuestring, v.version) != 0))
			abort();
		if (first < 0 && !cJSON_IsNull(ver))
			abort();
		for (int i = 0; i < ROCMD_VERSION_SOURCES; i++)
			if (v.found[i][0] != '\0' &&
			    !cJSON_HasObjectItem(src, rocmd_version_source_name(i)))
				abort();
	}
	cJSON_Delete(j);
	free(text);
	return 0;
}
