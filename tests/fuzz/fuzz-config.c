/*
 * Fuzz target for the configuration parser. Any input must come back as
 * either a configuration or ROCMD_ECONFIG with a message, never a crash or a
 * leak; an accepted configuration must survive rocmd_config_to_json and be
 * parsed back to the same JSON, and a refused one must leave the defaults.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rocmd_config cfg = {0}, again = {0}, def = {0};
	char why[1024];
	cJSON *j = NULL, *j2 = NULL, *jd = NULL;
	char *text = NULL;
	int err;

	err = rocmd_config_parse((const char *)data, size, &cfg, why, sizeof(why));
	if (err != 0 && err != ROCMD_ECONFIG)
		abort();
	if (err == ROCMD_ECONFIG && why[0] == '\0')
		abort(); /* a refusal must say why */
	if (memchr(why, '\0', sizeof(why)) == NULL)
		abort();
	j = rocmd_config_to_json(&cfg);
	if (j == NULL)
		abort();
	if (err != 0) {
		if (rocmd_config_defaults(&def) != 0)
			abort();
		jd = rocmd_config_to_json(&def);
		if (!cJSON_Compare(j, jd, 1))
			abort();
		goto out;
	}
	text = cJSON_PrintUnformatted(j);
	if (text == NULL)
		abort();
	if (rocmd_config_parse(text, strlen(text), &again, why, sizeof(why)) != 0)
		abort();
	j2 = rocmd_config_to_json(&again);
	if (!cJSON_Compare(j, j2, 1))
		abort();
out:
	free(text);
	cJSON_Delete(j);
	cJSON_Delete(j2);
	cJSON_Delete(jd);
	rocmd_config_free(&cfg);
	rocmd_config_free(&again);
	rocmd_config_free(&def);
	return 0;
}
