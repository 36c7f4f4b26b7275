/*
 * The rocmd wire protocol, shared by the daemon and every client.
 *
 * A stream (Unix socket or named pipe) carries frames: a 4-byte big-endian
 * payload length, then that many bytes of UTF-8 JSON. Each payload is one
 * JSON-RPC 2.0 object (batches are refused). The first request on a
 * connection must be "hello", which agrees on the protocol version.
 * docs/PROTOCOL.md documents every method; this header holds the limits and
 * the codec. Never renumber or reuse a method name; bump
 * ROCMD_PROTO_VERSION when a message changes incompatibly.
 */
#ifndef ROCMD_PROTO_H
#define ROCMD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define ROCMD_PROTO_VERSION 1
#define ROCMD_PROTO_MIN_VERSION 1

/* Named limits. The daemon's configurable values may lower, never raise, the
 * frame and depth limits. */
#define ROCMD_PROTO_HEADER_SIZE 4
#define ROCMD_PROTO_MAX_FRAME (1u << 20)              /* payload bytes */
#define ROCMD_PROTO_MAX_DEPTH 32                      /* JSON nesting */
#define ROCMD_PROTO_MAX_CONNECTIONS 1024              /* default, config */
#define ROCMD_PROTO_MAX_QUEUED_OUTPUT (8u << 20)      /* bytes per connection, default */
#define ROCMD_PROTO_MAX_PER_USER 64                   /* connections of one uid, default */
#define ROCMD_PROTO_ADMIN_RESERVED 16                 /* connections kept for admins, default */
#define ROCMD_PROTO_HELLO_TIMEOUT_MS 10000            /* to send hello, default */
#define ROCMD_PROTO_IDLE_TIMEOUT_S 600                /* a non-admin's silence, default */
#define ROCMD_PROTO_MAX_METHOD 64                     /* method name bytes */
#define ROCMD_PROTO_MAX_ID 256                        /* bytes of a string id */

/*
 * Incremental frame decoder: feed it whatever the stream delivered; it hands
 * back whole payloads. After an error the decoder is poisoned and the
 * connection must be closed.
 */
struct rocmd_frame_decoder {
	uint8_t hdr[ROCMD_PROTO_HEADER_SIZE];
	size_t hdr_have;
	char *buf;   /* payload being collected, NUL-terminated when complete */
	size_t need; /* payload length from the header */
	size_t have;
	size_t max_frame;
	int error;
};

void rocmd_frame_decoder_init(struct rocmd_frame_decoder *d, size_t max_frame);
void rocmd_frame_decoder_free(struct rocmd_frame_decoder *d);
/*
 * Consumes bytes from DATA until one payload completes or DATA runs out.
 * *consumed is how many bytes were used. When a payload is complete, *frame
 * receives it (malloc'd, NUL-terminated, caller frees) and *frame_len its
 * length; otherwise *frame is NULL. Returns 0, ROCMD_EFRAME_TOO_BIG for a
 * header over the limit, ROCMD_EPROTO for a zero-length frame, or
 * ROCMD_ENOMEM. Call repeatedly until *consumed covers all of DATA.
 */
int rocmd_frame_feed(struct rocmd_frame_decoder *d, const char *data, size_t len,
		     size_t *consumed, char **frame, size_t *frame_len);
/* True when bytes of a partial frame are held (EOF now means truncation). */
int rocmd_frame_pending(const struct rocmd_frame_decoder *d);
/* Writes header+payload into a new buffer *out (caller frees). Returns 0,
 * ROCMD_EPROTO for an empty payload, ROCMD_EFRAME_TOO_BIG past
 * ROCMD_PROTO_MAX_FRAME, or ROCMD_ENOMEM. */
int rocmd_frame_encode(const char *payload, size_t len, char **out, size_t *out_len);

/* Checks JSON nesting without parsing (strings and escapes respected; each
 * [ and { is one level; exactly MAX_DEPTH levels pass, 0 means the default).
 * Returns 0 or ROCMD_ETOO_DEEP. */
int rocmd_json_depth_check(const char *s, size_t len, int max_depth);

enum rocmd_rpc_kind {
	ROCMD_RPC_REQUEST,      /* method + id */
	ROCMD_RPC_NOTIFICATION, /* method, no id */
	ROCMD_RPC_RESULT,       /* id + result */
	ROCMD_RPC_ERROR,        /* id (maybe null) + error */
};

/* A parsed message. All pointers borrow from ROOT; free with rocmd_rpc_free. */
struct rocmd_rpc {
	enum rocmd_rpc_kind kind;
	cJSON *root;
	const cJSON *id;      /* integer or string; NULL for notifications and null ids */
	const char *method;   /* requests and notifications */
	const cJSON *params;  /* object or array (accessors refuse arrays), NULL when absent */
	const cJSON *result;  /* results */
	int error_code;       /* errors: the JSON-RPC code */
	const char *error_message;
	const cJSON *error_data;
};

/*
 * Parses and validates one payload (strict UTF-8, no NUL bytes, nothing but
 * whitespace after the value, no duplicated top-level members, no batches).
 * PAYLOAD need not be NUL-terminated. On failure returns ROCMD_ETOO_DEEP,
 * ROCMD_EPARSE or ROCMD_EREQUEST, writes a reason to WHY, and, where the
 * payload was a JSON object carrying a usable id (ROCMD_EREQUEST only), leaves
 * a copy in *bad_id (caller frees with cJSON_Delete) so the error reply can
 * name it. MAX_DEPTH 0 means the default; larger values are clamped to it.
 */
int rocmd_rpc_parse(const char *payload, size_t len, int max_depth, struct rocmd_rpc *msg,
		    cJSON **bad_id, char *why, size_t whylen);
void rocmd_rpc_free(struct rocmd_rpc *msg);

/* Builders. Each takes ownership of the cJSON argument it is given and returns
 * a malloc'd compact JSON string, or NULL on out of memory. */
char *rocmd_rpc_request(int64_t id, const char *method, cJSON *params);
char *rocmd_rpc_notification(const char *method, cJSON *params);
/* RESULT NULL sends {}; ID must be an integer or string (else NULL). */
char *rocmd_rpc_result(const cJSON *id, cJSON *result);
/* ERR is a rocmd code; the message defaults to rocmd_strerror(ERR); data gets
 * {"name": "ROCMD_E..."} added so clients recover the exact code (a data that
 * is not an object is wrapped as {"detail": DATA}). ID NULL sends null. */
char *rocmd_rpc_error(const cJSON *id, int err, const char *message, cJSON *data);
/* The rocmd code carried by an error reply (data.name, else the JSON-RPC code);
 * ROCMD_EINVAL when MSG is not an error reply. */
int rocmd_rpc_error_to_err(const struct rocmd_rpc *msg);

/*
 * Param accessors for method handlers. Each returns 0, ROCMD_ENOTFOUND when
 * an optional key is absent (out untouched), or ROCMD_EPARAMS with a reason
 * ("param 'limit' must be an integer in 1..1000") in WHY. PARAMS NULL is an
 * empty object; params that are not an object, a key given twice, or a null
 * value are refused. Integers are whole numbers (1.0 passes, 1.5 does not).
 */
int rocmd_param_string(const cJSON *params, const char *key, int required, const char **out,
		       char *why, size_t whylen);
int rocmd_param_int(const cJSON *params, const char *key, int required, int64_t min,
		    int64_t max, int64_t *out, char *why, size_t whylen);
int rocmd_param_bool(const cJSON *params, const char *key, int required, int *out, char *why,
		     size_t whylen);
/* Refuses keys not in the NULL-terminated list ALLOWED, and repeated keys. */
int rocmd_params_only(const cJSON *params, const char *const *allowed, char *why, size_t whylen);

#endif
