/*
 * Fuzz target for the JSON-RPC message parser: the input is one payload as
 * the frame decoder would hand it over (not NUL-terminated, so an overread
 * shows). A message the parser accepts is printed back by cJSON and must parse
 * again to the same kind, and the depth check must agree with the parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *payload = (const char *)data;
	struct rocmd_rpc msg, again;
	cJSON *bad_id = NULL;
	char why[256];
	char *text = NULL;
	int rc, deep;

	deep = rocmd_json_depth_check(payload, size, 0) != 0;
	rc = rocmd_rpc_parse(payload, size, 0, &msg, &bad_id, why, sizeof(why));
	if (deep != (rc == ROCMD_ETOO_DEEP))
		abort();
	if (rc != 0) {
		if (msg.root != NULL || why[0] == '\0')
			abort();
		if (bad_id != NULL && !cJSON_IsString(bad_id) && !cJSON_IsNumber(bad_id))
			abort();
		text = rocmd_rpc_error(bad_id, rc, why, NULL);
		cJSON_Delete(bad_id);
		if (text == NULL)
			abort();
		if (rocmd_rpc_parse(text, strlen(text), 0, &again, &bad_id, why, sizeof(why)) != 0)
			abort();
		rocmd_rpc_free(&again);
		free(text);
		return 0;
	}
	text = cJSON_PrintUnformatted(msg.root);
	if (text != NULL) {
		rc = rocmd_rpc_parse(text, strlen(text), 0, &again, &bad_id, why, sizeof(why));
		if (rc != 0 || again.kind != msg.kind)
			abort();
		rocmd_rpc_free(&again);
		free(text);
	}
	rocmd_rpc_free(&msg);
	return 0;
}
