/*
 * The wire protocol codec: the incremental frame decoder and encoder, the
 * JSON-RPC 2.0 message parser and validator, the reply builders and the param
 * accessors method handlers use. Everything here treats its input as hostile:
 * limits are checked before memory is committed, nesting is measured before
 * cJSON recurses, and a refusal always comes with a reason that can be sent
 * back to the peer. Nothing here does I/O; the daemon and the client own the
 * streams and call in with whatever bytes arrived.
 */
#include "proto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* The decoder grows its payload buffer as bytes arrive, starting here, so a
 * peer announcing a large frame costs memory only once it sends the bytes. */
#define FRAME_INITIAL_ALLOC 4096

/* How many bytes of a peer-chosen key a reason quotes. */
#define WHY_KEY_MAX 64

static void set_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* Copies a peer-chosen name into OUT for a reason, shortened and with control
 * characters, quotes and backslashes replaced, so it cannot garble a log line. */
static const char *
quote_key(const char *key, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	for (; key[i] != '\0' && o + 4 < outlen && i < WHY_KEY_MAX; i++) {
		unsigned char c = (unsigned char)key[i];
		out[o++] = (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') ? '?' : (char)c;
	}
	if (key[i] != '\0') {
		/* Never cut a UTF-8 sequence in half: the reason goes into a reply,
		 * and the peer's parser refuses invalid UTF-8. */
		while (i > 0 && o > 0 && ((unsigned char)key[i] & 0xc0) == 0x80) {
			i--;
			o--;
		}
	}
	if (key[i] != '\0' && o + 4 <= outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

/* --- Frames --------------------------------------------------------------- */

void
rocmd_frame_decoder_init(struct rocmd_frame_decoder *d, size_t max_frame)
{
	memset(d, 0, sizeof(*d));
	if (max_frame == 0 || max_frame > ROCMD_PROTO_MAX_FRAME)
		max_frame = ROCMD_PROTO_MAX_FRAME;
	d->max_frame = max_frame;
}

void
rocmd_frame_decoder_free(struct rocmd_frame_decoder *d)
{
	free(d->buf);
	d->buf = NULL;
	d->hdr_have = 0;
	d->need = 0;
	d->have = 0;
}

/* The buffer size (without the NUL) held while HAVE payload bytes are in:
 * doubling from FRAME_INITIAL_ALLOC, capped at the announced length. Derived
 * from HAVE so the decoder needs no extra field to track it. */
static size_t
frame_alloc_for(size_t have, size_t need)
{
	size_t cap = FRAME_INITIAL_ALLOC;

	while (cap < have && cap < need)
		cap *= 2;
	return cap < need ? cap : need;
}

int
rocmd_frame_feed(struct rocmd_frame_decoder *d, const char *data, size_t len, size_t *consumed,
                 char **frame, size_t *frame_len)
{
	size_t pos = 0;
	int rc = 0;

	*frame = NULL;
	*frame_len = 0;
	if (d->error != 0) {
		rc = d->error;
		goto out;
	}
	while (d->hdr_have < ROCMD_PROTO_HEADER_SIZE && pos < len)
		d->hdr[d->hdr_have++] = (uint8_t)data[pos++];
	if (d->hdr_have < ROCMD_PROTO_HEADER_SIZE)
		goto out;
	if (d->buf == NULL) {
		uint32_t n = (uint32_t)d->hdr[0] << 24 | (uint32_t)d->hdr[1] << 16 |
		             (uint32_t)d->hdr[2] << 8 | (uint32_t)d->hdr[3];
		if (n == 0) {
			rc = ROCMD_EPROTO;
			goto out;
		}
		if (n > d->max_frame) {
			rc = ROCMD_EFRAME_TOO_BIG;
			goto out;
		}
		d->need = n;
		d->have = 0;
		d->buf = malloc(frame_alloc_for(0, d->need) + 1);
		if (d->buf == NULL) {
			rc = ROCMD_ENOMEM;
			goto out;
		}
	}
	if (pos < len) {
		size_t take = len - pos;
		size_t cap = frame_alloc_for(d->have, d->need);
		if (take > d->need - d->have)
			take = d->need - d->have;
		if (d->have + take > cap) {
			size_t ncap = frame_alloc_for(d->have + take, d->need);
			char *nbuf = realloc(d->buf, ncap + 1);
			if (nbuf == NULL) {
				rc = ROCMD_ENOMEM;
				goto out;
			}
			d->buf = nbuf;
		}
		memcpy(d->buf + d->have, data + pos, take);
		d->have += take;
		pos += take;
	}
	if (d->have == d->need) {
		d->buf[d->have] = '\0';
		*frame = d->buf;
		*frame_len = d->have;
		d->buf = NULL;
		d->hdr_have = 0;
		d->need = 0;
		d->have = 0;
	}
out:
	if (rc != 0)
		d->error = rc;
	*consumed = pos;
	return rc;
}

int
rocmd_frame_pending(const struct rocmd_frame_decoder *d)
{
	return d->hdr_have > 0;
}

int
rocmd_frame_encode(const char *payload, size_t len, char **out, size_t *out_len)
{
	char *buf = NULL;
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (len == 0) {
		rc = ROCMD_EPROTO;
		goto out;
	}
	if (len > ROCMD_PROTO_MAX_FRAME) {
		rc = ROCMD_EFRAME_TOO_BIG;
		goto out;
	}
	buf = malloc(ROCMD_PROTO_HEADER_SIZE + len);
	if (buf == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	buf[0] = (char)(len >> 24 & 0xff);
	buf[1] = (char)(len >> 16 & 0xff);
	buf[2] = (char)(len >> 8 & 0xff);
	buf[3] = (char)(len & 0xff);
	memcpy(buf + ROCMD_PROTO_HEADER_SIZE, payload, len);
	*out = buf;
	*out_len = ROCMD_PROTO_HEADER_SIZE + len;
out:
	return rc;
}

/* --- JSON scanning ---------------------------------------------------------- */

int
rocmd_json_depth_check(const char *s, size_t len, int max_depth)
{
	int depth = 0, in_string = 0, escaped = 0;

	if (max_depth <= 0)
		max_depth = ROCMD_PROTO_MAX_DEPTH;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_string) {
			if (escaped)
				escaped = 0;
			else if (c == '\\')
				escaped = 1;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		switch (c) {
		case '"':
			in_string = 1;
			break;
		case '[':
		case '{':
			if (++depth > max_depth)
				return ROCMD_ETOO_DEEP;
			break;
		case ']':
		case '}':
			/* Unbalanced closers are the parser's to refuse. */
			if (depth > 0)
				depth--;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* Strict UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF) and
 * no NUL byte, which would silently cut a cJSON string short. Returns the
 * offset of the first bad byte, or LEN when all is well. */
static size_t
utf8_check(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp;

		if (c == 0)
			return i;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n + 1;
	}
	return len;
}

static int
json_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* --- Messages --------------------------------------------------------------- */

/* A number that is a whole value representable as int64_t. */
static int
json_integral(const cJSON *item, int64_t *out)
{
	double v;

	if (!cJSON_IsNumber(item))
		return 0;
	v = item->valuedouble;
	if (!isfinite(v) || v != floor(v))
		return 0;
	/* 2^63 itself does not fit; every double below it that is whole does. */
	if (v < -9223372036854775808.0 || v >= 9223372036854775808.0)
		return 0;
	if (out != NULL)
		*out = (int64_t)v;
	return 1;
}

static int
id_usable(const cJSON *id)
{
	/* A reply repeats the id: a long one could push it over the frame limit. */
	return (cJSON_IsString(id) && strlen(id->valuestring) <= ROCMD_PROTO_MAX_ID) ||
	       json_integral(id, NULL);
}

/* Whether a string of the JSON text holds the escape \u0000: decoded, it
 * would end the C string there and "status\u0000junk" would run status.
 * Strings are walked escape by escape, so an escaped backslash followed by
 * "u0000" is not one. */
static int
escaped_nul(const char *p, size_t len)
{
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = p[i] == '"';
			continue;
		}
		if (p[i] == '"') {
			in_string = 0;
		} else if (p[i] == '\\' && i + 1 < len) {
			if (p[i + 1] == 'u' && i + 5 < len && strncmp(p + i + 2, "0000", 4) == 0)
				return 1;
			i++; /* the escaped character */
		}
	}
	return 0;
}

/* The named member of an object, refusing duplicates (cJSON keeps them all,
 * and another parser might pick a different one). Returns 0 and *out (NULL
 * when absent) or -1 when the key appears twice. */
static int
member(const cJSON *obj, const char *key, const cJSON **out)
{
	const cJSON *found = NULL;

	*out = NULL;
	for (const cJSON *c = obj->child; c != NULL; c = c->next) {
		if (c->string == NULL || strcmp(c->string, key) != 0)
			continue;
		if (found != NULL)
			return -1;
		found = c;
	}
	*out = found;
	return 0;
}

/* The JSON value of a frame: within the depth limit, valid UTF-8 without NUL
 * bytes, one value followed only by whitespace. 0 with *ROOT, or an error. */
static int
parse_root(const char *payload, size_t len, int max_depth, cJSON **root, char *why, size_t whylen)
{
	const char *end = NULL;
	size_t bad;

	*root = NULL;
	if (rocmd_json_depth_check(payload, len, max_depth) != 0) {
		set_why(why, whylen, "JSON nesting exceeds %d levels", max_depth);
		return ROCMD_ETOO_DEEP;
	}
	bad = utf8_check((const unsigned char *)payload, len);
	if (bad < len) {
		set_why(why, whylen, "invalid UTF-8 or NUL byte at offset %zu", bad);
		return ROCMD_EPARSE;
	}
	if (escaped_nul(payload, len)) {
		set_why(why, whylen, "a string holds the escape \\u0000 (NUL)");
		return ROCMD_EPARSE;
	}
	/*
	 * cJSON's own require_null_terminated flag wants the terminating NUL
	 * counted inside the length, which a caller's buffer need not have; the
	 * same rule is applied here by hand: after the value only whitespace may
	 * follow (NUL bytes were refused above).
	 */
	*root = cJSON_ParseWithLengthOpts(payload, len, &end, 0);
	if (*root == NULL) {
		size_t at = end != NULL && end >= payload ? (size_t)(end - payload) : 0;
		set_why(why, whylen, "invalid JSON at offset %zu", at > len ? len : at);
		return ROCMD_EPARSE;
	}
	for (size_t i = end != NULL ? (size_t)(end - payload) : len; i < len; i++) {
		if (!json_is_space(payload[i])) {
			set_why(why, whylen, "trailing data after the JSON value at offset %zu", i);
			return ROCMD_EPARSE;
		}
	}
	return 0;
}

/* A request or notification: METHOD set. */
static int
parse_request(const cJSON *id, const cJSON *method, const cJSON *params, const cJSON *result,
              const cJSON *error, struct rocmd_rpc *msg, char *why, size_t whylen)
{
	size_t mlen;

	if (result != NULL || error != NULL) {
		set_why(why, whylen, "a request cannot carry 'result' or 'error'");
		return ROCMD_EREQUEST;
	}
	if (!cJSON_IsString(method)) {
		set_why(why, whylen, "method must be a string");
		return ROCMD_EREQUEST;
	}
	mlen = strlen(method->valuestring);
	if (mlen == 0 || mlen > ROCMD_PROTO_MAX_METHOD) {
		set_why(why, whylen, "method must be 1..%d bytes", ROCMD_PROTO_MAX_METHOD);
		return ROCMD_EREQUEST;
	}
	if (params != NULL && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
		set_why(why, whylen, "params must be an object or an array");
		return ROCMD_EREQUEST;
	}
	if (cJSON_IsNull(id)) {
		set_why(why, whylen, "id must be an integer or a string");
		return ROCMD_EREQUEST;
	}
	msg->kind = id != NULL ? ROCMD_RPC_REQUEST : ROCMD_RPC_NOTIFICATION;
	msg->method = method->valuestring;
	msg->params = params;
	return 0;
}

/* An error reply: ERROR set, RESULT not. */
static int
parse_error(const cJSON *id, const cJSON *error, struct rocmd_rpc *msg, char *why, size_t whylen)
{
	const cJSON *code, *message, *data;
	int64_t c;

	if (id == NULL) {
		set_why(why, whylen, "an error reply must carry an id (null allowed)");
		return ROCMD_EREQUEST;
	}
	if (!cJSON_IsObject(error) || member(error, "code", &code) != 0 ||
	    member(error, "message", &message) != 0 || member(error, "data", &data) != 0) {
		set_why(why, whylen, "error must be an object with unique members");
		return ROCMD_EREQUEST;
	}
	if (!json_integral(code, &c) || c < INT32_MIN || c > INT32_MAX) {
		set_why(why, whylen, "error.code must be an integer");
		return ROCMD_EREQUEST;
	}
	if (!cJSON_IsString(message)) {
		set_why(why, whylen, "error.message must be a string");
		return ROCMD_EREQUEST;
	}
	msg->kind = ROCMD_RPC_ERROR;
	msg->error_code = (int)c;
	msg->error_message = message->valuestring;
	msg->error_data = data;
	return 0;
}

/* The message ROOT is, by its members. */
static int
parse_message(const cJSON *root, struct rocmd_rpc *msg, const cJSON **idp, char *why,
              size_t whylen)
{
	static const char *const names[] = {"jsonrpc", "id", "method", "params", "result", "error"};
	const cJSON *items[6];
	const cJSON *jsonrpc, *id, *method, *params, *result, *error;

	*idp = NULL;
	if (cJSON_IsArray(root)) {
		set_why(why, whylen, "batch requests are not supported");
		return ROCMD_EREQUEST;
	}
	if (!cJSON_IsObject(root)) {
		set_why(why, whylen, "a message must be a JSON object");
		return ROCMD_EREQUEST;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (member(root, names[i], &items[i]) != 0) {
			set_why(why, whylen, "member '%s' appears more than once", names[i]);
			return ROCMD_EREQUEST;
		}
	}
	jsonrpc = items[0];
	id = items[1];
	method = items[2];
	params = items[3];
	result = items[4];
	error = items[5];
	*idp = id;
	if (id != NULL && !cJSON_IsNull(id) && !id_usable(id)) {
		set_why(why, whylen, "id must be an integer or a string of at most %d bytes",
		        ROCMD_PROTO_MAX_ID);
		return ROCMD_EREQUEST;
	}
	if (!cJSON_IsString(jsonrpc) || strcmp(jsonrpc->valuestring, "2.0") != 0) {
		set_why(why, whylen, "member 'jsonrpc' must be \"2.0\"");
		return ROCMD_EREQUEST;
	}
	if (method != NULL)
		return parse_request(id, method, params, result, error, msg, why, whylen);
	if (result != NULL && error != NULL) {
		set_why(why, whylen, "'result' and 'error' are exclusive");
		return ROCMD_EREQUEST;
	}
	if (result != NULL) {
		if (id == NULL || cJSON_IsNull(id)) {
			set_why(why, whylen, "a result must carry an integer or string id");
			return ROCMD_EREQUEST;
		}
		msg->kind = ROCMD_RPC_RESULT;
		msg->result = result;
		return 0;
	}
	if (error != NULL)
		return parse_error(id, error, msg, why, whylen);
	set_why(why, whylen, "a message needs 'method', 'result' or 'error'");
	return ROCMD_EREQUEST;
}

int
rocmd_rpc_parse(const char *payload, size_t len, int max_depth, struct rocmd_rpc *msg,
                cJSON **bad_id, char *why, size_t whylen)
{
	const cJSON *id = NULL;
	cJSON *root = NULL;
	int rc;

	memset(msg, 0, sizeof(*msg));
	if (bad_id != NULL)
		*bad_id = NULL;
	set_why(why, whylen, "%s", "");
	if (max_depth <= 0 || max_depth > ROCMD_PROTO_MAX_DEPTH)
		max_depth = ROCMD_PROTO_MAX_DEPTH;
	rc = parse_root(payload, len, max_depth, &root, why, whylen);
	if (rc == 0)
		rc = parse_message(root, msg, &id, why, whylen);
	if (rc == 0) {
		msg->id = cJSON_IsNull(id) ? NULL : id;
		msg->root = root;
		return 0;
	}
	/* Only a well-formed message that broke the rules names its id; a parse
	 * error is answered with a null id, as JSON-RPC 2.0 asks. */
	if (rc == ROCMD_EREQUEST && root != NULL) {
		const cJSON *rid =
		    cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "id") : NULL;
		if (bad_id != NULL && id_usable(rid))
			*bad_id = cJSON_Duplicate(rid, 1);
	}
	memset(msg, 0, sizeof(*msg));
	cJSON_Delete(root);
	return rc;
}

void
rocmd_rpc_free(struct rocmd_rpc *msg)
{
	if (msg == NULL)
		return;
	cJSON_Delete(msg->root);
	memset(msg, 0, sizeof(*msg));
}

/* --- Builders --------------------------------------------------------------- */

/* Prints OBJ and deletes it; NULL in, NULL out. */
static char *
print_and_delete(cJSON *obj)
{
	char *s = NULL;

	if (obj != NULL)
		s = cJSON_PrintUnformatted(obj);
	cJSON_Delete(obj);
	return s;
}

/* A new {"jsonrpc":"2.0"} object, or NULL. */
static cJSON *
envelope(void)
{
	cJSON *obj = cJSON_CreateObject();

	if (obj != NULL && cJSON_AddStringToObject(obj, "jsonrpc", "2.0") == NULL) {
		cJSON_Delete(obj);
		obj = NULL;
	}
	return obj;
}

/* Adds ITEM under KEY, taking ownership of ITEM whatever happens. */
static int
add_owned(cJSON *obj, const char *key, cJSON *item)
{
	if (item == NULL)
		return -1;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return -1;
	}
	return 0;
}

static char *
build_call(const int64_t *id, const char *method, cJSON *params)
{
	cJSON *obj = NULL;

	if (method == NULL)
		goto fail;
	obj = envelope();
	if (obj == NULL)
		goto fail;
	if (id != NULL && add_owned(obj, "id", cJSON_CreateNumber((double)*id)) != 0)
		goto fail;
	if (cJSON_AddStringToObject(obj, "method", method) == NULL)
		goto fail;
	if (params != NULL) {
		cJSON *p = params;
		params = NULL;
		if (add_owned(obj, "params", p) != 0)
			goto fail;
	}
	return print_and_delete(obj);
fail:
	cJSON_Delete(params);
	cJSON_Delete(obj);
	return NULL;
}

char *
rocmd_rpc_request(int64_t id, const char *method, cJSON *params)
{
	return build_call(&id, method, params);
}

char *
rocmd_rpc_notification(const char *method, cJSON *params)
{
	return build_call(NULL, method, params);
}

char *
rocmd_rpc_result(const cJSON *id, cJSON *result)
{
	cJSON *obj = NULL;

	if (!id_usable(id))
		goto fail;
	obj = envelope();
	if (obj == NULL)
		goto fail;
	if (add_owned(obj, "id", cJSON_Duplicate(id, 1)) != 0)
		goto fail;
	if (result == NULL)
		result = cJSON_CreateObject();
	if (add_owned(obj, "result", result) != 0) {
		result = NULL;
		goto fail;
	}
	return print_and_delete(obj);
fail:
	cJSON_Delete(result);
	cJSON_Delete(obj);
	return NULL;
}

char *
rocmd_rpc_error(const cJSON *id, int err, const char *message, cJSON *data)
{
	cJSON *obj = NULL, *e = NULL, *name;

	if (data == NULL) {
		data = cJSON_CreateObject();
	} else if (!cJSON_IsObject(data)) {
		cJSON *wrap = cJSON_CreateObject();
		if (add_owned(wrap, "detail", data) != 0) {
			data = NULL;
			cJSON_Delete(wrap);
			goto fail;
		}
		data = wrap;
	}
	if (data == NULL)
		goto fail;
	name = cJSON_CreateString(rocmd_err_name(err));
	if (name == NULL)
		goto fail;
	if (cJSON_GetObjectItemCaseSensitive(data, "name") != NULL) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(data, "name", name)) {
			cJSON_Delete(name);
			goto fail;
		}
	} else if (add_owned(data, "name", name) != 0) {
		goto fail;
	}

	obj = envelope();
	if (obj == NULL)
		goto fail;
	if (add_owned(obj, "id", id_usable(id) ? cJSON_Duplicate(id, 1) : cJSON_CreateNull()) != 0)
		goto fail;
	e = cJSON_CreateObject();
	if (add_owned(obj, "error", e) != 0)
		goto fail;
	if (cJSON_AddNumberToObject(e, "code", rocmd_err_rpc_code(err)) == NULL)
		goto fail;
	if (cJSON_AddStringToObject(e, "message",
	                            message != NULL ? message : rocmd_strerror(err)) == NULL)
		goto fail;
	if (add_owned(e, "data", data) != 0) {
		data = NULL;
		goto fail;
	}
	return print_and_delete(obj);
fail:
	cJSON_Delete(data);
	cJSON_Delete(obj);
	return NULL;
}

int
rocmd_rpc_error_to_err(const struct rocmd_rpc *msg)
{
	const cJSON *name = NULL;

	if (msg == NULL || msg->kind != ROCMD_RPC_ERROR)
		return ROCMD_EINVAL;
	if (cJSON_IsObject(msg->error_data))
		name = cJSON_GetObjectItemCaseSensitive(msg->error_data, "name");
	if (cJSON_IsString(name)) {
		const char *n = name->valuestring;
		for (int i = 0; i < ROCMD_IDX_COUNT_; i++) {
			int err = -ROCMD_ERROR_BASE - i;
			if (strcmp(rocmd_err_name(err), n) == 0)
				return err;
		}
		/* A plain system failure the peer named by its errno symbol. */
		for (int e = 1; e < 512 && n[0] == 'E'; e++) {
			const char *en = rocmd_err_errno_name(e);
			if (en != NULL && strcmp(en, n) == 0)
				return -e;
		}
	}
	return rocmd_err_from_rpc(msg->error_code);
}

/* --- Params ----------------------------------------------------------------- */

/* Finds KEY in PARAMS for an accessor: 0 with *out (NULL when absent), or
 * ROCMD_EPARAMS when params is not an object or names KEY twice. */
static int
param_find(const cJSON *params, const char *key, const cJSON **out, char *why, size_t whylen)
{
	char q[WHY_KEY_MAX + 8];

	*out = NULL;
	if (params == NULL)
		return 0;
	if (!cJSON_IsObject(params)) {
		set_why(why, whylen, "params must be an object");
		return ROCMD_EPARAMS;
	}
	if (member(params, key, out) != 0) {
		set_why(why, whylen, "param '%s' appears more than once",
		        quote_key(key, q, sizeof(q)));
		return ROCMD_EPARAMS;
	}
	return 0;
}

/* The common prologue of the accessors: found (0 with *item set), absent
 * (ROCMD_ENOTFOUND, or ROCMD_EPARAMS when required) or refused. */
static int
param_lookup(const cJSON *params, const char *key, int required, const cJSON **item, char *why,
             size_t whylen)
{
	char q[WHY_KEY_MAX + 8];
	int rc = param_find(params, key, item, why, whylen);

	if (rc != 0)
		return rc;
	if (*item == NULL) {
		if (required) {
			set_why(why, whylen, "missing param '%s'", quote_key(key, q, sizeof(q)));
			return ROCMD_EPARAMS;
		}
		return ROCMD_ENOTFOUND;
	}
	return 0;
}

int
rocmd_param_string(const cJSON *params, const char *key, int required, const char **out, char *why,
                   size_t whylen)
{
	char q[WHY_KEY_MAX + 8];
	const cJSON *item;
	int rc = param_lookup(params, key, required, &item, why, whylen);

	if (rc != 0)
		return rc;
	if (!cJSON_IsString(item)) {
		set_why(why, whylen, "param '%s' must be a string", quote_key(key, q, sizeof(q)));
		return ROCMD_EPARAMS;
	}
	*out = item->valuestring;
	return 0;
}

int
rocmd_param_int(const cJSON *params, const char *key, int required, int64_t min, int64_t max,
                int64_t *out, char *why, size_t whylen)
{
	char q[WHY_KEY_MAX + 8];
	const cJSON *item;
	int64_t v;
	int rc = param_lookup(params, key, required, &item, why, whylen);

	if (rc != 0)
		return rc;
	if (json_integral(item, &v) && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	quote_key(key, q, sizeof(q));
	if (min == INT64_MIN && max == INT64_MAX)
		set_why(why, whylen, "param '%s' must be an integer", q);
	else if (max == INT64_MAX)
		set_why(why, whylen, "param '%s' must be an integer >= %lld", q, (long long)min);
	else if (min == INT64_MIN)
		set_why(why, whylen, "param '%s' must be an integer <= %lld", q, (long long)max);
	else
		set_why(why, whylen, "param '%s' must be an integer in %lld..%lld", q,
		        (long long)min, (long long)max);
	return ROCMD_EPARAMS;
}

int
rocmd_param_bool(const cJSON *params, const char *key, int required, int *out, char *why,
                 size_t whylen)
{
	char q[WHY_KEY_MAX + 8];
	const cJSON *item;
	int rc = param_lookup(params, key, required, &item, why, whylen);

	if (rc != 0)
		return rc;
	if (!cJSON_IsBool(item)) {
		set_why(why, whylen, "param '%s' must be true or false",
		        quote_key(key, q, sizeof(q)));
		return ROCMD_EPARAMS;
	}
	*out = cJSON_IsTrue(item);
	return 0;
}

int
rocmd_params_only(const cJSON *params, const char *const *allowed, char *why, size_t whylen)
{
	char q[WHY_KEY_MAX + 8];

	if (params == NULL)
		return 0;
	if (!cJSON_IsObject(params)) {
		set_why(why, whylen, "params must be an object");
		return ROCMD_EPARAMS;
	}
	for (const cJSON *c = params->child; c != NULL; c = c->next) {
		const char *key = c->string != NULL ? c->string : "";
		int known = 0;
		for (size_t i = 0; allowed != NULL && allowed[i] != NULL; i++) {
			if (strcmp(allowed[i], key) == 0) {
				known = 1;
				break;
			}
		}
		if (!known) {
			set_why(why, whylen, "unknown param '%s'", quote_key(key, q, sizeof(q)));
			return ROCMD_EPARAMS;
		}
		for (const cJSON *d = c->next; d != NULL; d = d->next) {
			if (d->string != NULL && strcmp(d->string, key) == 0) {
				set_why(why, whylen, "param '%s' appears more than once",
				        quote_key(key, q, sizeof(q)));
				return ROCMD_EPARAMS;
			}
		}
	}
	return 0;
}
