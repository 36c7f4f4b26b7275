/*
 * Unit tests for the wire protocol codec (common/proto.c): the frame decoder
 * under every way a stream can cut bytes, each named limit at exactly the
 * limit and one past it, the JSON-RPC validator's refusals, builder round
 * trips through the parser, and every param accessor's accept and refuse
 * paths with the reason text a client would show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "common/error.h"
#include "common/proto.h"

/* --- helpers ---------------------------------------------------------------- */

static char *
frame_of(const char *payload, size_t len, size_t *out_len)
{
	char *out = NULL;

	assert_int_equal(rocmd_frame_encode(payload, len, &out, out_len), 0);
	assert_non_null(out);
	return out;
}

static void
header(uint8_t *h, uint32_t n)
{
	h[0] = (uint8_t)(n >> 24);
	h[1] = (uint8_t)(n >> 16);
	h[2] = (uint8_t)(n >> 8);
	h[3] = (uint8_t)n;
}

/* Parses TEXT expecting RC; returns the reason (static buffer). */
static const char *
parse_expect(const char *text, int rc, struct rocmd_rpc *msg, cJSON **bad_id)
{
	static char why[256];
	int got;

	got = rocmd_rpc_parse(text, strlen(text), 0, msg, bad_id, why, sizeof(why));
	if (got != rc)
		fail_msg("parse of %s: got %s (%s), want %s", text, rocmd_err_name(got), why,
		         rocmd_err_name(rc));
	return why;
}

/* Parses TEXT expecting refusal RC and no usable id. */
static void
refuse(const char *text, int rc)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;

	parse_expect(text, rc, &msg, &bad_id);
	assert_null(msg.root);
	cJSON_Delete(bad_id);
}

/* A JSON text of DEPTH nested arrays. */
static char *
nested(int depth)
{
	char *s = malloc((size_t)depth * 2 + 1);

	for (int i = 0; i < depth; i++) {
		s[i] = '[';
		s[depth * 2 - 1 - i] = ']';
	}
	s[depth * 2] = '\0';
	return s;
}

/* --- frames ----------------------------------------------------------------- */

static void
test_frame_roundtrip(void **state)
{
	const char *payload = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}";
	struct rocmd_frame_decoder d;
	size_t flen, consumed, plen;
	char *f = frame_of(payload, strlen(payload), &flen), *out;

	assert_int_equal(flen, 4 + strlen(payload));
	assert_int_equal((uint8_t)f[3], strlen(payload));
	assert_int_equal(f[0] | f[1] | f[2], 0);
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, f, flen, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, flen);
	assert_non_null(out);
	assert_int_equal(plen, strlen(payload));
	assert_string_equal(out, payload);
	assert_false(rocmd_frame_pending(&d));
	free(out);
	free(f);
	rocmd_frame_decoder_free(&d);
}

static void
test_frame_byte_at_a_time(void **state)
{
	const char *p1 = "{\"a\":1}", *p2 = "[2]";
	size_t l1, l2, consumed, plen;
	char *f1 = frame_of(p1, strlen(p1), &l1), *f2 = frame_of(p2, strlen(p2), &l2), *out;
	char stream[64];
	struct rocmd_frame_decoder d;
	int frames = 0;

	memcpy(stream, f1, l1);
	memcpy(stream + l1, f2, l2);
	rocmd_frame_decoder_init(&d, 0);
	for (size_t i = 0; i < l1 + l2; i++) {
		assert_int_equal(rocmd_frame_feed(&d, stream + i, 1, &consumed, &out, &plen), 0);
		assert_int_equal(consumed, 1);
		if (i == l1 - 1) {
			assert_non_null(out);
			assert_string_equal(out, p1);
			assert_false(rocmd_frame_pending(&d));
			frames++;
			free(out);
		} else if (i == l1 + l2 - 1) {
			assert_non_null(out);
			assert_int_equal(plen, strlen(p2));
			assert_string_equal(out, p2);
			frames++;
			free(out);
		} else {
			assert_null(out);
			assert_true(rocmd_frame_pending(&d));
		}
	}
	assert_int_equal(frames, 2);
	assert_false(rocmd_frame_pending(&d));
	free(f1);
	free(f2);
	rocmd_frame_decoder_free(&d);
}

static void
test_frame_split_header(void **state)
{
	const char *p = "{\"method\":\"hello\"}";
	size_t flen, consumed, plen;
	char *f = frame_of(p, strlen(p), &flen), *out;
	struct rocmd_frame_decoder d;

	rocmd_frame_decoder_init(&d, 0);
	/* 3 header bytes, then the last header byte with half the payload, then the rest. */
	assert_int_equal(rocmd_frame_feed(&d, f, 3, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, 3);
	assert_null(out);
	assert_true(rocmd_frame_pending(&d));
	assert_int_equal(rocmd_frame_feed(&d, f + 3, 6, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, 6);
	assert_null(out);
	assert_int_equal(rocmd_frame_feed(&d, f + 9, flen - 9, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, flen - 9);
	assert_non_null(out);
	assert_string_equal(out, p);
	free(out);
	free(f);
	rocmd_frame_decoder_free(&d);
}

static void
test_frame_two_in_one_feed(void **state)
{
	const char *p1 = "{\"x\":\"first\"}", *p2 = "{\"x\":\"second\"}";
	size_t l1, l2, consumed, plen, off = 0;
	char *f1 = frame_of(p1, strlen(p1), &l1), *f2 = frame_of(p2, strlen(p2), &l2), *out;
	char stream[128];
	struct rocmd_frame_decoder d;

	memcpy(stream, f1, l1);
	memcpy(stream + l1, f2, l2);
	memcpy(stream + l1 + l2, "\0\0", 2); /* the start of a third header */
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, stream, l1 + l2 + 2, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, l1);
	assert_string_equal(out, p1);
	free(out);
	off += consumed;
	assert_int_equal(
	    rocmd_frame_feed(&d, stream + off, l1 + l2 + 2 - off, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, l2);
	assert_string_equal(out, p2);
	free(out);
	off += consumed;
	assert_false(rocmd_frame_pending(&d));
	assert_int_equal(rocmd_frame_feed(&d, stream + off, 2, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, 2);
	assert_null(out);
	assert_true(rocmd_frame_pending(&d));
	free(f1);
	free(f2);
	rocmd_frame_decoder_free(&d);
}

static void
test_frame_truncated_pending(void **state)
{
	const char *p = "{\"jsonrpc\":\"2.0\"}";
	size_t flen, consumed, plen;
	char *f = frame_of(p, strlen(p), &flen), *out;
	struct rocmd_frame_decoder d;

	rocmd_frame_decoder_init(&d, 0);
	assert_false(rocmd_frame_pending(&d));
	/* Header complete, payload cut short: EOF now is a truncated frame. */
	assert_int_equal(rocmd_frame_feed(&d, f, flen - 1, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, flen - 1);
	assert_null(out);
	assert_true(rocmd_frame_pending(&d));
	rocmd_frame_decoder_free(&d);

	/* Only the header: still pending. */
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, f, 4, &consumed, &out, &plen), 0);
	assert_true(rocmd_frame_pending(&d));
	rocmd_frame_decoder_free(&d);

	/* One header byte: pending. */
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, f, 1, &consumed, &out, &plen), 0);
	assert_true(rocmd_frame_pending(&d));
	rocmd_frame_decoder_free(&d);

	/* Nothing fed: an empty feed is harmless. */
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, f, 0, &consumed, &out, &plen), 0);
	assert_int_equal(consumed, 0);
	assert_false(rocmd_frame_pending(&d));
	rocmd_frame_decoder_free(&d);
	free(f);
}

static void
test_frame_zero_length_poisons(void **state)
{
	static const char zero[8] = {0, 0, 0, 0, 0, 0, 0, 2};
	size_t consumed = 99, plen = 99;
	char *out = (char *)1;
	struct rocmd_frame_decoder d;

	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(rocmd_frame_feed(&d, zero, sizeof(zero), &consumed, &out, &plen),
	                 ROCMD_EPROTO);
	assert_null(out);
	assert_int_equal(plen, 0);
	assert_int_equal(consumed, 4);
	/* Poisoned: every later feed fails without consuming. */
	assert_int_equal(rocmd_frame_feed(&d, zero + 4, 4, &consumed, &out, &plen), ROCMD_EPROTO);
	assert_int_equal(consumed, 0);
	assert_null(out);
	rocmd_frame_decoder_free(&d);
}

static void
test_frame_max_size(void **state)
{
	uint8_t h[4];
	size_t consumed, plen;
	char *out, *payload;
	struct rocmd_frame_decoder d;

	/* Exactly the limit: accepted and delivered, in uneven chunks. */
	payload = malloc(ROCMD_PROTO_MAX_FRAME);
	memset(payload, ' ', ROCMD_PROTO_MAX_FRAME);
	payload[0] = '1';
	rocmd_frame_decoder_init(&d, 0);
	assert_int_equal(d.max_frame, ROCMD_PROTO_MAX_FRAME);
	header(h, ROCMD_PROTO_MAX_FRAME);
	assert_int_equal(rocmd_frame_feed(&d, (char *)h, 4, &consumed, &out, &plen), 0);
	assert_null(out);
	for (size_t off = 0, step = 1; off < ROCMD_PROTO_MAX_FRAME; off += consumed, step *= 3) {
		size_t n = step > ROCMD_PROTO_MAX_FRAME - off ? ROCMD_PROTO_MAX_FRAME - off : step;
		assert_int_equal(rocmd_frame_feed(&d, payload + off, n, &consumed, &out, &plen), 0);
		assert_int_equal(consumed, n);
		if (off + n < ROCMD_PROTO_MAX_FRAME)
			assert_null(out);
	}
	assert_non_null(out);
	assert_int_equal(plen, ROCMD_PROTO_MAX_FRAME);
	assert_memory_equal(out, payload, ROCMD_PROTO_MAX_FRAME);
	assert_int_equal(out[plen], '\0');
	free(out);
	rocmd_frame_decoder_free(&d);

	/* One over: refused on the header, before any payload byte. */
	rocmd_frame_decoder_init(&d, 0);
	header(h, ROCMD_PROTO_MAX_FRAME + 1);
	assert_int_equal(rocmd_frame_feed(&d, (char *)h, 4, &consumed, &out, &plen),
	                 ROCMD_EFRAME_TOO_BIG);
	assert_null(out);
	assert_int_equal(rocmd_frame_feed(&d, payload, 4, &consumed, &out, &plen),
	                 ROCMD_EFRAME_TOO_BIG);
	rocmd_frame_decoder_free(&d);

	/* The largest header there is. */
	rocmd_frame_decoder_init(&d, 0);
	header(h, 0xffffffffu);
	assert_int_equal(rocmd_frame_feed(&d, (char *)h, 4, &consumed, &out, &plen),
	                 ROCMD_EFRAME_TOO_BIG);
	rocmd_frame_decoder_free(&d);

	/* A configured lower limit: 16 passes, 17 does not; a higher one is clamped. */
	rocmd_frame_decoder_init(&d, 16);
	header(h, 16);
	assert_int_equal(rocmd_frame_feed(&d, (char *)h, 4, &consumed, &out, &plen), 0);
	assert_int_equal(rocmd_frame_feed(&d, payload, 16, &consumed, &out, &plen), 0);
	assert_non_null(out);
	free(out);
	header(h, 17);
	assert_int_equal(rocmd_frame_feed(&d, (char *)h, 4, &consumed, &out, &plen),
	                 ROCMD_EFRAME_TOO_BIG);
	rocmd_frame_decoder_free(&d);
	rocmd_frame_decoder_init(&d, (size_t)ROCMD_PROTO_MAX_FRAME * 4);
	assert_int_equal(d.max_frame, ROCMD_PROTO_MAX_FRAME);
	rocmd_frame_decoder_free(&d);
	free(payload);
}

static void
test_frame_encode_limits(void **state)
{
	char *out = (char *)1, *big;
	size_t out_len = 99;

	assert_int_equal(rocmd_frame_encode("", 0, &out, &out_len), ROCMD_EPROTO);
	assert_null(out);
	assert_int_equal(out_len, 0);
	big = calloc(1, ROCMD_PROTO_MAX_FRAME + 1);
	assert_int_equal(rocmd_frame_encode(big, ROCMD_PROTO_MAX_FRAME, &out, &out_len), 0);
	assert_int_equal(out_len, ROCMD_PROTO_MAX_FRAME + 4);
	assert_int_equal((uint8_t)out[0], 0x00);
	assert_int_equal((uint8_t)out[1], 0x10);
	assert_int_equal((uint8_t)out[2], 0x00);
	assert_int_equal((uint8_t)out[3], 0x00);
	free(out);
	assert_int_equal(rocmd_frame_encode(big, ROCMD_PROTO_MAX_FRAME + 1, &out, &out_len),
	                 ROCMD_EFRAME_TOO_BIG);
	assert_null(out);
	free(big);
}

/* --- depth ------------------------------------------------------------------ */

static void
test_depth_limit(void **state)
{
	char *ok = nested(ROCMD_PROTO_MAX_DEPTH), *deep = nested(ROCMD_PROTO_MAX_DEPTH + 1);

	assert_int_equal(rocmd_json_depth_check(ok, strlen(ok), 0), 0);
	assert_int_equal(rocmd_json_depth_check(ok, strlen(ok), ROCMD_PROTO_MAX_DEPTH), 0);
	assert_int_equal(rocmd_json_depth_check(deep, strlen(deep), 0), ROCMD_ETOO_DEEP);
	assert_int_equal(rocmd_json_depth_check(ok, strlen(ok), ROCMD_PROTO_MAX_DEPTH - 1),
	                 ROCMD_ETOO_DEEP);
	/* Objects count like arrays, and depth falls again after a close. */
	assert_int_equal(rocmd_json_depth_check("{\"a\":[{}]}", 10, 3), 0);
	assert_int_equal(rocmd_json_depth_check("{\"a\":[{}]}", 10, 2), ROCMD_ETOO_DEEP);
	assert_int_equal(rocmd_json_depth_check("[[],[],[]]", 10, 2), 0);
	free(ok);
	free(deep);
}

static void
test_depth_strings(void **state)
{
	const char *s;

	/* Brackets inside strings do not count. */
	s = "{\"a\":\"[[[[{{{{\"}";
	assert_int_equal(rocmd_json_depth_check(s, strlen(s), 1), 0);
	/* An escaped quote does not end the string. */
	s = "{\"a\":\"\\\"[[[[\"}";
	assert_int_equal(rocmd_json_depth_check(s, strlen(s), 1), 0);
	/* An escaped backslash does not escape the closing quote: what follows counts. */
	s = "{\"a\":\"\\\\\",\"b\":[[]]}";
	assert_int_equal(rocmd_json_depth_check(s, strlen(s), 3), 0);
	assert_int_equal(rocmd_json_depth_check(s, strlen(s), 2), ROCMD_ETOO_DEEP);
	/* Keys are strings too. */
	s = "{\"[[[\":1}";
	assert_int_equal(rocmd_json_depth_check(s, strlen(s), 1), 0);
	/* LEN bounds the scan. */
	assert_int_equal(rocmd_json_depth_check("[[[", 1, 1), 0);
}

static void
test_parse_depth(void **state)
{
	/* The envelope object is level 1, so params may nest 31 more levels. */
	char text[512], *inner;
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;

	inner = nested(ROCMD_PROTO_MAX_DEPTH - 1);
	snprintf(text, sizeof(text),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":%s}", inner);
	parse_expect(text, 0, &msg, &bad_id);
	assert_true(cJSON_IsArray(msg.params));
	rocmd_rpc_free(&msg);
	free(inner);

	inner = nested(ROCMD_PROTO_MAX_DEPTH);
	snprintf(text, sizeof(text),
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":%s}", inner);
	parse_expect(text, ROCMD_ETOO_DEEP, &msg, &bad_id);
	assert_null(bad_id); /* nothing was parsed, so there is no id to name */
	free(inner);

	/* A caller's lower limit applies; a higher one is clamped to the default. */
	assert_int_equal(rocmd_rpc_parse("[[[1]]]", 7, 2, &msg, &bad_id, NULL, 0), ROCMD_ETOO_DEEP);
	inner = nested(ROCMD_PROTO_MAX_DEPTH + 1);
	assert_int_equal(rocmd_rpc_parse(inner, strlen(inner), 1000, &msg, &bad_id, NULL, 0),
	                 ROCMD_ETOO_DEEP);
	free(inner);
}

/* --- parsing ---------------------------------------------------------------- */

static void
test_parse_kinds(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = (cJSON *)1;

	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"status\",\"params\":{}}", 0, &msg,
	             &bad_id);
	assert_null(bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_REQUEST);
	assert_string_equal(msg.method, "status");
	assert_int_equal(msg.id->valuedouble, 7);
	assert_true(cJSON_IsObject(msg.params));
	rocmd_rpc_free(&msg);
	assert_null(msg.root);

	parse_expect(" {\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"hello\"}\r\n\t ", 0, &msg,
	             &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_REQUEST);
	assert_string_equal(msg.id->valuestring, "abc");
	assert_null(msg.params);
	rocmd_rpc_free(&msg);

	parse_expect("{\"jsonrpc\":\"2.0\",\"method\":\"event\",\"params\":{\"id\":3}}", 0, &msg,
	             &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_NOTIFICATION);
	assert_null(msg.id);
	rocmd_rpc_free(&msg);

	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"last_id\":4}}", 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_RESULT);
	assert_true(cJSON_IsObject(msg.result));
	assert_null(msg.method);
	rocmd_rpc_free(&msg);

	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}", 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_RESULT);
	assert_true(cJSON_IsNull(msg.result));
	rocmd_rpc_free(&msg);

	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
	             "\"invalid JSON\"}}",
	             0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_ERROR);
	assert_null(msg.id);
	assert_int_equal(msg.error_code, -32700);
	assert_string_equal(msg.error_message, "invalid JSON");
	assert_null(msg.error_data);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EPARSE);
	rocmd_rpc_free(&msg);

	/* Members are case-sensitive, and unknown members are ignored. */
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"Method\":\"status\"}", ROCMD_EREQUEST);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"x\":[1]}", 0, &msg,
	             &bad_id);
	rocmd_rpc_free(&msg);
	rocmd_rpc_free(NULL);
}

static void
test_parse_invalid_json(void **state)
{
	const char *why;
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\0{}";
	static const char nul_in_string[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\0b\"}";

	refuse("", ROCMD_EPARSE);
	refuse("   ", ROCMD_EPARSE);
	refuse("{", ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":}", ROCMD_EPARSE);
	refuse("{'jsonrpc':'2.0'}", ROCMD_EPARSE);
	refuse("nul", ROCMD_EPARSE);
	why = parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} x", ROCMD_EPARSE, &msg,
	                   &bad_id);
	assert_non_null(strstr(why, "trailing"));
	assert_null(bad_id);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}{}", ROCMD_EPARSE);
	refuse("1 2", ROCMD_EPARSE);
	/* NUL bytes, after the value or inside a string, never cut the payload short. */
	assert_int_equal(rocmd_rpc_parse(nul, sizeof(nul) - 1, 0, &msg, &bad_id, NULL, 0),
	                 ROCMD_EPARSE);
	assert_int_equal(
	    rocmd_rpc_parse(nul_in_string, sizeof(nul_in_string) - 1, 0, &msg, &bad_id, NULL, 0),
	    ROCMD_EPARSE);
	/* Invalid UTF-8: a stray continuation, an overlong '/', a surrogate, a cut sequence. */
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\x80\"}", ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc0\xaf\"}", ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe2\x82", ROCMD_EPARSE);
	/* Valid multi-byte UTF-8 passes. */
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"h\xc3\xa9llo\xf0\x9f\x98\x80\"}",
	             0, &msg, &bad_id);
	rocmd_rpc_free(&msg);
}

static void
test_parse_not_a_request(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	const char *why;

	why = parse_expect("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}]", ROCMD_EREQUEST,
	                   &msg, &bad_id);
	assert_non_null(strstr(why, "batch"));
	assert_null(bad_id);
	refuse("[]", ROCMD_EREQUEST);
	refuse("1", ROCMD_EREQUEST);
	refuse("\"status\"", ROCMD_EREQUEST);
	refuse("null", ROCMD_EREQUEST);
	refuse("{}", ROCMD_EREQUEST);
}

static void
test_parse_version(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;

	parse_expect("{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"status\"}", ROCMD_EREQUEST, &msg,
	             &bad_id);
	/* The id was usable, so the error reply can name it. */
	assert_non_null(bad_id);
	assert_true(cJSON_IsNumber(bad_id));
	assert_int_equal(bad_id->valuedouble, 7);
	cJSON_Delete(bad_id);
	parse_expect("{\"id\":\"x\",\"method\":\"status\"}", ROCMD_EREQUEST, &msg, &bad_id);
	assert_non_null(bad_id);
	assert_string_equal(bad_id->valuestring, "x");
	cJSON_Delete(bad_id);
	refuse("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.00\",\"id\":1,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":null,\"id\":1,\"method\":\"status\"}", ROCMD_EREQUEST);
}

static void
test_parse_bad_ids(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;

	refuse("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"status\"}", ROCMD_EREQUEST);
	/* A null id is for error replies only. */
	refuse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"status\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"result\":{}}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}", ROCMD_EREQUEST);
	/* Whole numbers in any spelling, negative ones and the empty string pass. */
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"status\"}", 0, &msg, &bad_id);
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"status\"}", 0, &msg, &bad_id);
	assert_int_equal(msg.id->valuedouble, 1000);
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"status\"}", 0, &msg, &bad_id);
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"status\"}", 0, &msg,
	             &bad_id);
	rocmd_rpc_free(&msg);
	/* A string id the reply could not repeat within the frame limit. */
	{
		char text[ROCMD_PROTO_MAX_ID + 128], longid[ROCMD_PROTO_MAX_ID + 2];
		memset(longid, 'i', sizeof(longid) - 1);
		longid[sizeof(longid) - 1] = '\0';
		snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"status\"}",
		         longid);
		refuse(text, ROCMD_EREQUEST);
		longid[ROCMD_PROTO_MAX_ID] = '\0';
		snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"status\"}",
		         longid);
		parse_expect(text, 0, &msg, &bad_id);
		rocmd_rpc_free(&msg);
	}
}

/* An escaped NUL would cut a decoded string short ("status\u0000junk" ran
 * status): refused anywhere in the message; an escaped backslash before
 * "u0000" is plain text. */
static void
test_parse_escaped_nul(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;

	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\\u0000junk\"}", ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pkg.show\",\"params\":{\"p\":\"a\\u0000b\"}}",
	       ROCMD_EPARSE);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":\"x\\u0000\",\"method\":\"status\"}", ROCMD_EPARSE);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"params\":{\"p\":\"a\\\\u0000\"}}",
	             0, &msg, &bad_id);
	assert_string_equal(cJSON_GetObjectItem(msg.params, "p")->valuestring, "a\\u0000");
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"params\":{\"p\":\"\\u0041\"}}",
	             0, &msg, &bad_id);
	rocmd_rpc_free(&msg);
}

static void
test_parse_method(void **state)
{
	char text[256], name[ROCMD_PROTO_MAX_METHOD + 2];
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	char why[128];

	memset(name, 'm', sizeof(name) - 1);
	name[ROCMD_PROTO_MAX_METHOD] = '\0';
	snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", name);
	parse_expect(text, 0, &msg, &bad_id);
	assert_int_equal(strlen(msg.method), ROCMD_PROTO_MAX_METHOD);
	rocmd_rpc_free(&msg);

	name[ROCMD_PROTO_MAX_METHOD] = 'm';
	name[ROCMD_PROTO_MAX_METHOD + 1] = '\0';
	snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", name);
	assert_int_equal(rocmd_rpc_parse(text, strlen(text), 0, &msg, &bad_id, why, sizeof(why)),
	                 ROCMD_EREQUEST);
	assert_string_equal(why, "method must be 1..64 bytes");
	assert_non_null(bad_id);
	cJSON_Delete(bad_id);

	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"method\":[\"status\"]}", ROCMD_EREQUEST);
	/* params: absent, object or array; anything else is refused. */
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"x\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":3}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}", ROCMD_EREQUEST);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[1,2]}", 0, &msg,
	             &bad_id);
	assert_true(cJSON_IsArray(msg.params));
	rocmd_rpc_free(&msg);
	/* A request cannot also be a reply. */
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":{}}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"error\":{\"code\":1,"
	       "\"message\":\"x\"}}",
	       ROCMD_EREQUEST);
	/* Duplicated members are ambiguous and refused. */
	refuse(
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"method\":\"daemon.shutdown\"}",
	    ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}",
	       ROCMD_EREQUEST);
}

static void
test_parse_replies(void **state)
{
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":"
	       "\"x\"}}",
	       ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"x\"}}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"x\"}}",
	       ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1e12,\"message\":\"x\"}}",
	       ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"x\"}}",
	       ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", ROCMD_EREQUEST);
	refuse("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":null}}",
	       ROCMD_EREQUEST);
}

/* --- builders --------------------------------------------------------------- */

static void
test_build_request_roundtrip(void **state)
{
	struct rocmd_rpc msg;
	cJSON *params = cJSON_CreateObject(), *bad_id = NULL;
	char *s;
	int64_t limit = 0;

	cJSON_AddNumberToObject(params, "limit", 10);
	s = rocmd_rpc_request(42, "events.list", params);
	assert_non_null(s);
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_REQUEST);
	assert_int_equal(msg.id->valuedouble, 42);
	assert_string_equal(msg.method, "events.list");
	assert_int_equal(rocmd_param_int(msg.params, "limit", 1, 1, 1000, &limit, NULL, 0), 0);
	assert_int_equal(limit, 10);
	rocmd_rpc_free(&msg);
	free(s);

	s = rocmd_rpc_request(-1, "status", NULL);
	parse_expect(s, 0, &msg, &bad_id);
	assert_null(msg.params);
	assert_int_equal(msg.id->valuedouble, -1);
	rocmd_rpc_free(&msg);
	free(s);

	s = rocmd_rpc_notification("event", cJSON_CreateObject());
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_NOTIFICATION);
	assert_null(msg.id);
	assert_true(cJSON_IsObject(msg.params));
	rocmd_rpc_free(&msg);
	free(s);

	/* A NULL method is refused and the params are still freed. */
	assert_null(rocmd_rpc_request(1, NULL, cJSON_CreateObject()));
	assert_null(rocmd_rpc_notification(NULL, cJSON_CreateArray()));
}

static void
test_build_result_roundtrip(void **state)
{
	struct rocmd_rpc req, msg;
	cJSON *bad_id = NULL, *res = cJSON_CreateObject(), *num = cJSON_CreateNumber(5);
	char *s;

	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":\"req-9\",\"method\":\"events.subscribe\"}", 0,
	             &req, &bad_id);
	cJSON_AddNumberToObject(res, "last_id", 17);
	s = rocmd_rpc_result(req.id, res);
	assert_non_null(s);
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_RESULT);
	assert_string_equal(msg.id->valuestring, "req-9");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(msg.result, "last_id")->valuedouble, 17);
	rocmd_rpc_free(&msg);
	free(s);

	/* NULL result is {}. */
	s = rocmd_rpc_result(req.id, NULL);
	parse_expect(s, 0, &msg, &bad_id);
	assert_true(cJSON_IsObject(msg.result));
	assert_null(msg.result->child);
	rocmd_rpc_free(&msg);
	free(s);
	rocmd_rpc_free(&req);

	/* A result needs an id. */
	assert_null(rocmd_rpc_result(NULL, cJSON_CreateObject()));
	s = rocmd_rpc_result(num, cJSON_CreateTrue());
	parse_expect(s, 0, &msg, &bad_id);
	assert_true(cJSON_IsTrue(msg.result));
	rocmd_rpc_free(&msg);
	free(s);
	cJSON_Delete(num);
}

static void
test_build_error_roundtrip(void **state)
{
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL, *id = cJSON_CreateNumber(3), *data;
	const cJSON *name;
	char *s;

	/* Default message, data.name added, exact code recovered. */
	s = rocmd_rpc_error(id, ROCMD_EPARAMS, NULL, NULL);
	assert_non_null(s);
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_ERROR);
	assert_int_equal(msg.id->valuedouble, 3);
	assert_int_equal(msg.error_code, -32602);
	assert_string_equal(msg.error_message, "invalid params");
	name = cJSON_GetObjectItemCaseSensitive(msg.error_data, "name");
	assert_string_equal(name->valuestring, "ROCMD_EPARAMS");
	/* -32602 alone would map to ROCMD_EINVAL: data.name disambiguates. */
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EPARAMS);
	rocmd_rpc_free(&msg);
	free(s);

	/* Caller data kept, a caller's "name" overridden, custom message. */
	data = cJSON_CreateObject();
	cJSON_AddNumberToObject(data, "uid", 1000);
	cJSON_AddStringToObject(data, "required_group", "rocm");
	cJSON_AddStringToObject(data, "name", "bogus");
	s = rocmd_rpc_error(id, ROCMD_EPERM, "daemon.shutdown needs group rocm", data);
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.error_code, -32003);
	assert_string_equal(msg.error_message, "daemon.shutdown needs group rocm");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(msg.error_data, "name")->valuestring,
	                    "ROCMD_EPERM");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(msg.error_data, "uid")->valuedouble,
	                 1000);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EPERM);
	rocmd_rpc_free(&msg);
	free(s);

	/* NULL id sends null; a non-object data is wrapped. */
	s = rocmd_rpc_error(NULL, ROCMD_EPARSE, NULL, cJSON_CreateString("at offset 3"));
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.kind, ROCMD_RPC_ERROR);
	assert_null(msg.id);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(msg.error_data, "detail")->valuestring,
	                    "at offset 3");
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EPARSE);
	rocmd_rpc_free(&msg);
	free(s);

	/* A plain system error travels by its errno name. */
	s = rocmd_rpc_error(id, -ENOENT, NULL, NULL);
	parse_expect(s, 0, &msg, &bad_id);
	assert_int_equal(msg.error_code, -32603);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), -ENOENT);
	rocmd_rpc_free(&msg);
	free(s);

	/* Every rocmd code round-trips. */
	for (int i = 0; i < ROCMD_IDX_COUNT_; i++) {
		int err = -ROCMD_ERROR_BASE - i;
		s = rocmd_rpc_error(id, err, NULL, NULL);
		parse_expect(s, 0, &msg, &bad_id);
		assert_int_equal(msg.error_code, rocmd_err_rpc_code(err));
		assert_int_equal(rocmd_rpc_error_to_err(&msg), err);
		rocmd_rpc_free(&msg);
		free(s);
	}
	cJSON_Delete(id);

	/* Without data.name (another peer), or with an unknown one, the code decides. */
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"x\"}}",
	             0, &msg, &bad_id);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_ENOMETHOD);
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32003,\"message\":\"x\","
	             "\"data\":{\"name\":\"ROCMD_ENOPE\"}}}",
	             0, &msg, &bad_id);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EPERM);
	rocmd_rpc_free(&msg);
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,\"message\":\"x\","
	             "\"data\":[1]}}",
	             0, &msg, &bad_id);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EINTERNAL);
	rocmd_rpc_free(&msg);
	/* Not an error reply at all. */
	parse_expect("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}", 0, &msg, &bad_id);
	assert_int_equal(rocmd_rpc_error_to_err(&msg), ROCMD_EINVAL);
	rocmd_rpc_free(&msg);
}

/* --- params ----------------------------------------------------------------- */

static cJSON *
params_of(const char *text)
{
	cJSON *p = cJSON_Parse(text);

	assert_non_null(p);
	return p;
}

static void
test_param_string(void **state)
{
	cJSON *p = params_of("{\"kind\":\"sdk.\",\"n\":1,\"z\":null,\"e\":\"\"}");
	const char *out = "untouched";
	char why[128];

	assert_int_equal(rocmd_param_string(p, "kind", 1, &out, why, sizeof(why)), 0);
	assert_string_equal(out, "sdk.");
	assert_int_equal(rocmd_param_string(p, "e", 1, &out, why, sizeof(why)), 0);
	assert_string_equal(out, "");
	out = "untouched";
	assert_int_equal(rocmd_param_string(p, "absent", 0, &out, why, sizeof(why)),
	                 ROCMD_ENOTFOUND);
	assert_string_equal(out, "untouched");
	assert_int_equal(rocmd_param_string(p, "absent", 1, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "missing param 'absent'");
	assert_int_equal(rocmd_param_string(p, "n", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "param 'n' must be a string");
	assert_int_equal(rocmd_param_string(p, "z", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(out, "untouched");
	/* Keys are case-sensitive. */
	assert_int_equal(rocmd_param_string(p, "Kind", 0, &out, why, sizeof(why)), ROCMD_ENOTFOUND);
	cJSON_Delete(p);

	/* NULL params is an empty object. */
	assert_int_equal(rocmd_param_string(NULL, "kind", 0, &out, why, sizeof(why)),
	                 ROCMD_ENOTFOUND);
	assert_int_equal(rocmd_param_string(NULL, "kind", 1, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	/* Array params are refused by every accessor. */
	p = params_of("[\"sdk\"]");
	assert_int_equal(rocmd_param_string(p, "kind", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "params must be an object");
	cJSON_Delete(p);
	/* A key given twice is ambiguous. */
	p = params_of("{\"kind\":\"a\",\"kind\":\"b\"}");
	assert_int_equal(rocmd_param_string(p, "kind", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "param 'kind' appears more than once");
	cJSON_Delete(p);
}

static void
test_param_int(void **state)
{
	cJSON *p = params_of("{\"limit\":1000,\"low\":1,\"zero\":0,\"over\":1001,\"frac\":1.5,"
	                     "\"whole\":2.0,\"str\":\"5\",\"neg\":-1,\"huge\":1e300,\"b\":true,"
	                     "\"big\":9223372036854775807,\"nul\":null}");
	int64_t out = -7;
	char why[128];

	assert_int_equal(rocmd_param_int(p, "limit", 1, 1, 1000, &out, why, sizeof(why)), 0);
	assert_int_equal(out, 1000);
	assert_int_equal(rocmd_param_int(p, "low", 1, 1, 1000, &out, why, sizeof(why)), 0);
	assert_int_equal(out, 1);
	assert_int_equal(rocmd_param_int(p, "whole", 1, 1, 1000, &out, why, sizeof(why)), 0);
	assert_int_equal(out, 2);
	out = -7;
	assert_int_equal(rocmd_param_int(p, "zero", 1, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "param 'zero' must be an integer in 1..1000");
	assert_int_equal(rocmd_param_int(p, "over", 1, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "param 'over' must be an integer in 1..1000");
	assert_int_equal(rocmd_param_int(p, "frac", 1, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_int(p, "str", 1, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_int(p, "b", 1, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_int(p, "nul", 0, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_int_equal(
	    rocmd_param_int(p, "huge", 1, INT64_MIN, INT64_MAX, &out, why, sizeof(why)),
	    ROCMD_EPARAMS);
	assert_string_equal(why, "param 'huge' must be an integer");
	/* 9223372036854775807 rounds to 2^63 as a double: outside int64. */
	assert_int_equal(rocmd_param_int(p, "big", 1, INT64_MIN, INT64_MAX, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_int(p, "neg", 1, 0, INT64_MAX, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "param 'neg' must be an integer >= 0");
	assert_int_equal(rocmd_param_int(p, "limit", 1, INT64_MIN, 10, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "param 'limit' must be an integer <= 10");
	assert_int_equal(out, -7);
	assert_int_equal(rocmd_param_int(p, "neg", 1, INT64_MIN, INT64_MAX, &out, why, sizeof(why)),
	                 0);
	assert_int_equal(out, -1);
	out = 55;
	assert_int_equal(rocmd_param_int(p, "after_id", 0, 0, INT64_MAX, &out, why, sizeof(why)),
	                 ROCMD_ENOTFOUND);
	assert_int_equal(out, 55);
	assert_int_equal(rocmd_param_int(p, "after_id", 1, 0, INT64_MAX, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "missing param 'after_id'");
	cJSON_Delete(p);
	assert_int_equal(rocmd_param_int(NULL, "limit", 0, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_ENOTFOUND);
	p = params_of("[1]");
	assert_int_equal(rocmd_param_int(p, "limit", 0, 1, 1000, &out, why, sizeof(why)),
	                 ROCMD_EPARAMS);
	assert_string_equal(why, "params must be an object");
	cJSON_Delete(p);
	/* WHY may be omitted. */
	p = params_of("{\"limit\":0}");
	assert_int_equal(rocmd_param_int(p, "limit", 1, 1, 1000, &out, NULL, 0), ROCMD_EPARAMS);
	cJSON_Delete(p);
}

static void
test_param_bool(void **state)
{
	cJSON *p = params_of("{\"t\":true,\"f\":false,\"one\":1,\"s\":\"true\",\"n\":null}");
	int out = 7;
	char why[128];

	assert_int_equal(rocmd_param_bool(p, "t", 1, &out, why, sizeof(why)), 0);
	assert_int_equal(out, 1);
	assert_int_equal(rocmd_param_bool(p, "f", 1, &out, why, sizeof(why)), 0);
	assert_int_equal(out, 0);
	out = 7;
	assert_int_equal(rocmd_param_bool(p, "one", 1, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "param 'one' must be true or false");
	assert_int_equal(rocmd_param_bool(p, "s", 1, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_bool(p, "n", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_int_equal(rocmd_param_bool(p, "x", 0, &out, why, sizeof(why)), ROCMD_ENOTFOUND);
	assert_int_equal(out, 7);
	assert_int_equal(rocmd_param_bool(p, "x", 1, &out, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "missing param 'x'");
	cJSON_Delete(p);
	assert_int_equal(rocmd_param_bool(NULL, "x", 0, &out, why, sizeof(why)), ROCMD_ENOTFOUND);
	p = params_of("[true]");
	assert_int_equal(rocmd_param_bool(p, "x", 0, &out, why, sizeof(why)), ROCMD_EPARAMS);
	cJSON_Delete(p);
}

static void
test_params_only(void **state)
{
	static const char *const allowed[] = {"after_id", "limit", "kind", NULL};
	static const char *const none[] = {NULL};
	cJSON *p;
	char why[128];

	p = params_of("{\"limit\":5,\"kind\":\"sdk\"}");
	assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), 0);
	assert_int_equal(rocmd_params_only(p, none, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "unknown param 'limit'");
	cJSON_Delete(p);
	p = params_of("{\"limit\":5,\"lmit\":6}");
	assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "unknown param 'lmit'");
	cJSON_Delete(p);
	p = params_of("{\"limit\":5,\"limit\":6}");
	assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "param 'limit' appears more than once");
	cJSON_Delete(p);
	p = params_of("{}");
	assert_int_equal(rocmd_params_only(p, none, why, sizeof(why)), 0);
	cJSON_Delete(p);
	assert_int_equal(rocmd_params_only(NULL, none, why, sizeof(why)), 0);
	p = params_of("[]");
	assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), ROCMD_EPARAMS);
	assert_string_equal(why, "params must be an object");
	cJSON_Delete(p);
	/* A hostile key is quoted shortened and without control characters. */
	p = params_of(
	    "{\"a\\nb'c\\u0001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":1}");
	assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), ROCMD_EPARAMS);
	assert_null(strchr(why, '\n'));
	assert_non_null(strstr(why, "unknown param 'a?b?c?x"));
	assert_non_null(strstr(why, "...'"));
	cJSON_Delete(p);
	/* A long non-ASCII key is shortened on a character boundary, so the reason
	 * still travels in a reply the peer accepts. */
	{
		char key[200] = "", text[256];
		struct rocmd_rpc msg;
		cJSON *bad_id = NULL;
		char *reply;

		for (int i = 0; i < 40; i++)
			strcat(key, "\xc3\xa9"); /* é, 2 bytes: 80 bytes in all */
		snprintf(text, sizeof(text), "{\"x%s\":1}", key);
		p = params_of(text);
		assert_int_equal(rocmd_params_only(p, allowed, why, sizeof(why)), ROCMD_EPARAMS);
		assert_non_null(strstr(why, "...'"));
		reply = rocmd_rpc_error(NULL, ROCMD_EPARAMS, why, NULL);
		parse_expect(reply, 0, &msg, &bad_id);
		assert_string_equal(msg.error_message, why);
		rocmd_rpc_free(&msg);
		free(reply);
		cJSON_Delete(p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_roundtrip),
	    cmocka_unit_test(test_frame_byte_at_a_time),
	    cmocka_unit_test(test_frame_split_header),
	    cmocka_unit_test(test_frame_two_in_one_feed),
	    cmocka_unit_test(test_frame_truncated_pending),
	    cmocka_unit_test(test_frame_zero_length_poisons),
	    cmocka_unit_test(test_frame_max_size),
	    cmocka_unit_test(test_frame_encode_limits),
	    cmocka_unit_test(test_depth_limit),
	    cmocka_unit_test(test_depth_strings),
	    cmocka_unit_test(test_parse_depth),
	    cmocka_unit_test(test_parse_kinds),
	    cmocka_unit_test(test_parse_invalid_json),
	    cmocka_unit_test(test_parse_not_a_request),
	    cmocka_unit_test(test_parse_version),
	    cmocka_unit_test(test_parse_bad_ids),
	    cmocka_unit_test(test_parse_method),
	    cmocka_unit_test(test_parse_replies),
	    cmocka_unit_test(test_build_request_roundtrip),
	    cmocka_unit_test(test_build_result_roundtrip),
	    cmocka_unit_test(test_build_error_roundtrip),
	    cmocka_unit_test(test_parse_escaped_nul),
	    cmocka_unit_test(test_param_string),
	    cmocka_unit_test(test_param_int),
	    cmocka_unit_test(test_param_bool),
	    cmocka_unit_test(test_params_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
