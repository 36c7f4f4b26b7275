/*
 * The blocking protocol client: see client.h. Frames are read into a small
 * buffer and decoded with the same codec the daemon uses.
 */
#include "client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "transport.h"
#include "version.h"

/* A reply, or a progress notification of a long request, is owed within this
 * (ROCMD_CLIENT_TIMEOUT_S overrides; 0 waits for ever): a stopped daemon
 * still accepts connections, and would hang the client. */
#define DEFAULT_TIMEOUT_S 60

struct rocmd_client {
	struct rocmd_transport *t;
	struct rocmd_frame_decoder dec;
	int64_t next_id;
	int timeout_ms; /* longest silence while a reply is owed; -1 none */
	char buf[64 * 1024];
	size_t len, off; /* unread bytes in buf: [off, len) */
};

static int
send_payload(struct rocmd_client *c, char *payload)
{
	char *frame = NULL;
	size_t flen;
	int rc;

	if (payload == NULL)
		return ROCMD_ENOMEM;
	rc = rocmd_frame_encode(payload, strlen(payload), &frame, &flen);
	free(payload);
	if (rc == 0)
		rc = rocmd_transport_write(c->t, frame, flen);
	free(frame);
	return rc;
}

/* Reads the next message; ROCMD_ECLOSED at a clean end of stream. */
static int
next_message(struct rocmd_client *c, struct rocmd_rpc *msg, int timeout_ms, char *why,
             size_t whylen)
{
	for (;;) {
		char *frame = NULL;
		size_t used = 0, flen = 0;
		int rc;

		if (c->off == c->len) {
			ssize_t n = rocmd_transport_read(c->t, c->buf, sizeof(c->buf), timeout_ms);
			if (n == ROCMD_ETIMEDOUT) {
				snprintf(why, whylen,
				         "rocmd sent nothing for %d s (is it stopped?); set "
				         "ROCMD_CLIENT_TIMEOUT_S to wait longer, 0 for ever",
				         timeout_ms / 1000);
				return ROCMD_ETIMEDOUT;
			}
			if (n < 0) {
				snprintf(why, whylen, "read from rocmd: %s", rocmd_strerror((int)n));
				return (int)n;
			}
			if (n == 0) {
				snprintf(why, whylen, "rocmd closed the connection%s",
					 rocmd_frame_pending(&c->dec) ? " mid-frame" : "");
				return ROCMD_ECLOSED;
			}
			c->off = 0;
			c->len = (size_t)n;
		}
		rc = rocmd_frame_feed(&c->dec, c->buf + c->off, c->len - c->off, &used, &frame,
				      &flen);
		c->off += used;
		if (rc < 0) {
			snprintf(why, whylen, "bad frame from rocmd: %s", rocmd_strerror(rc));
			return rc;
		}
		if (frame == NULL)
			continue;
		rc = rocmd_rpc_parse(frame, flen, 0, msg, NULL, why, whylen);
		free(frame);
		return rc;
	}
}

static int
id_matches(const cJSON *id, int64_t want)
{
	return id != NULL && cJSON_IsNumber(id) && (int64_t)id->valuedouble == want;
}

int
rocmd_client_call(struct rocmd_client *c, const char *method, cJSON *params, cJSON **result,
		  cJSON **data, rocmd_notify_fn on_notify, void *ctx, char *why, size_t whylen)
{
	int64_t id = ++c->next_id;
	int rc;

	if (result != NULL)
		*result = NULL;
	if (data != NULL)
		*data = NULL;
	rc = send_payload(c, rocmd_rpc_request(id, method, params));
	if (rc < 0) {
		snprintf(why, whylen, "cannot send to rocmd: %s", rocmd_strerror(rc));
		return rc;
	}
	for (;;) {
		struct rocmd_rpc msg;
		rc = next_message(c, &msg, c->timeout_ms, why, whylen);
		if (rc < 0)
			return rc;
		if (msg.kind == ROCMD_RPC_NOTIFICATION) {
			rc = on_notify != NULL ? on_notify(&msg, ctx) : 0;
			rocmd_rpc_free(&msg);
			if (rc != 0)
				return rc;
			continue;
		}
		if (msg.kind == ROCMD_RPC_ERROR && (msg.id == NULL || cJSON_IsNull(msg.id) ||
						    id_matches(msg.id, id))) {
			rc = rocmd_rpc_error_to_err(&msg);
			snprintf(why, whylen, "%s",
				 msg.error_message != NULL ? msg.error_message : rocmd_strerror(rc));
			if (data != NULL && msg.error_data != NULL)
				*data = cJSON_Duplicate(msg.error_data, 1);
			rocmd_rpc_free(&msg);
			return rc;
		}
		if (msg.kind == ROCMD_RPC_RESULT && id_matches(msg.id, id)) {
			if (result != NULL)
				*result = cJSON_Duplicate(msg.result, 1);
			rocmd_rpc_free(&msg);
			return 0;
		}
		rocmd_rpc_free(&msg); /* a reply to someone else's id: ignore */
	}
}

int
rocmd_client_listen(struct rocmd_client *c, rocmd_notify_fn on_notify, void *ctx, char *why,
		    size_t whylen)
{
	for (;;) {
		struct rocmd_rpc msg;
		int rc = next_message(c, &msg, -1, why, whylen);
		if (rc < 0)
			return rc;
		rc = msg.kind == ROCMD_RPC_NOTIFICATION ? on_notify(&msg, ctx) : 0;
		rocmd_rpc_free(&msg);
		if (rc != 0)
			return rc;
	}
}

int
rocmd_client_open(const char *path, const char *client_name, struct rocmd_client **out,
		  cJSON **hello, char *why, size_t whylen)
{
	struct rocmd_client *c;
	cJSON *params, *res = NULL;
	const char *env;
	int rc;

	*out = NULL;
	if (hello != NULL)
		*hello = NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return ROCMD_ENOMEM;
	rocmd_frame_decoder_init(&c->dec, ROCMD_PROTO_MAX_FRAME);
	c->timeout_ms = DEFAULT_TIMEOUT_S * 1000;
	if ((env = getenv("ROCMD_CLIENT_TIMEOUT_S")) != NULL && env[0] != '\0') {
		long v = strtol(env, NULL, 10);
		c->timeout_ms = v <= 0 ? -1 : v > 86400 ? 86400000 : (int)v * 1000;
	}
	rc = rocmd_transport_connect(path, &c->t, why, whylen);
	if (rc < 0)
		goto fail;
	params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "client", client_name);
	cJSON_AddNumberToObject(params, "protocol", ROCMD_PROTO_VERSION);
	cJSON_AddStringToObject(params, "version", ROCMD_VERSION_STRING);
	rc = rocmd_client_call(c, "hello", params, &res, NULL, NULL, NULL, why, whylen);
	if (rc < 0)
		goto fail;
	if (hello != NULL)
		*hello = res;
	else
		cJSON_Delete(res);
	*out = c;
	return 0;
fail:
	rocmd_client_close(c);
	return rc;
}

void
rocmd_client_close(struct rocmd_client *c)
{
	if (c == NULL)
		return;
	rocmd_transport_close(c->t);
	rocmd_frame_decoder_free(&c->dec);
	free(c);
}
