/*
 * SDK discovery for platforms it has not been ported to yet (Windows today:
 * the discovery logic for Windows layouts exists and is tested on Linux, but
 * walking, watching, child processes and the registry still need their
 * Windows files). The daemon runs without it: sdk.* and gpu.list answer
 * ROCMD_EUNSUPPORTED with a sentence saying so.
 */
#include "sdk.h"

#include <stdio.h>

#include "common/error.h"

int
rocmd_sdk_start(struct rocmd_server *srv, const struct rocmd_sdk_start_opts *o,
                struct rocmd_sdk **out, char *why, size_t whylen)
{
	*out = NULL;
	snprintf(why, whylen, "SDK discovery is not ported to this platform yet");
	return ROCMD_EUNSUPPORTED;
}

void
rocmd_sdk_stop(struct rocmd_sdk *m)
{
}

void
rocmd_sdk_free(struct rocmd_sdk *m)
{
}

int
rocmd_sdk_rescan(struct rocmd_sdk *m, const char *why, struct rocmd_pending *p)
{
	return ROCMD_EUNSUPPORTED;
}

int
rocmd_sdk_suppress_begin(struct rocmd_sdk *m, const char *sys_path)
{
	return 1; /* nothing watches, so nothing to suppress */
}

void
rocmd_sdk_suppress_end(struct rocmd_sdk *m, int token)
{
}

struct rocmd_sdk_db *
rocmd_sdk_db(struct rocmd_sdk *m)
{
	return NULL;
}

cJSON *
rocmd_sdk_scan_info(struct rocmd_sdk *m)
{
	return cJSON_CreateObject();
}

cJSON *
rocmd_sdk_gpus_json(struct rocmd_sdk *m)
{
	return cJSON_CreateArray();
}
