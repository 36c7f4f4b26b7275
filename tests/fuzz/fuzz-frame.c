/*
 * Fuzz target for the frame decoder and the message parser behind it. The
 * input is a byte stream as a peer would send it; it is fed to the decoder in
 * chunks whose sizes come from a generator seeded by the input itself (single
 * bytes, small and large reads, so headers split anywhere), and every payload
 * that completes is parsed with rocmd_rpc_parse, run through the accessors
 * and answered with the builders. The same stream fed in one piece must give
 * the same frames and the same outcome: chunking may never change meaning.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Frames remembered from the one-piece pass, to compare with the chunked one. */
#define MAX_TRACKED 64

struct outcome {
	size_t lens[MAX_TRACKED];
	uint64_t hashes[MAX_TRACKED];
	size_t frames;
	int error;
	int pending;
};

static uint64_t
fnv1a(const uint8_t *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Parses one payload and exercises everything a handler would do with it. */
static void
handle_payload(const char *payload, size_t len)
{
	static const char *const allowed[] = {"after_id", "limit", "kind", NULL};
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	char why[256];
	char *reply = NULL;
	const char *s;
	int64_t i;
	int b;
	int rc;

	rc = rocmd_rpc_parse(payload, len, 0, &msg, &bad_id, why, sizeof(why));
	if (rc != 0) {
		if (msg.root != NULL)
			abort();
		reply = rocmd_rpc_error(bad_id, rc, why, NULL);
		cJSON_Delete(bad_id);
		goto out;
	}
	if (bad_id != NULL)
		abort();
	switch (msg.kind) {
	case ROCMD_RPC_REQUEST:
	case ROCMD_RPC_NOTIFICATION:
		if (msg.method == NULL || strlen(msg.method) > ROCMD_PROTO_MAX_METHOD)
			abort();
		rc = rocmd_params_only(msg.params, allowed, why, sizeof(why));
		if (rc != 0 && msg.kind == ROCMD_RPC_REQUEST) {
			/* The reason quotes a peer's key: the reply must still be valid. */
			reply = rocmd_rpc_error(msg.id, rc, why, NULL);
			rocmd_rpc_free(&msg);
			goto out;
		}
		rocmd_param_int(msg.params, "limit", 0, 1, 1000, &i, why, sizeof(why));
		rocmd_param_int(msg.params, "after_id", 1, 0, INT64_MAX, &i, why, sizeof(why));
		rocmd_param_string(msg.params, "kind", 0, &s, why, sizeof(why));
		rocmd_param_bool(msg.params, "force", 0, &b, why, sizeof(why));
		if (msg.kind == ROCMD_RPC_REQUEST)
			reply = rocmd_rpc_result(msg.id, cJSON_Duplicate(msg.params, 1));
		break;
	case ROCMD_RPC_ERROR:
		rocmd_rpc_error_to_err(&msg);
		break;
	case ROCMD_RPC_RESULT:
		break;
	}
	rocmd_rpc_free(&msg);
out:
	/* Whatever we answer must itself be a valid message. */
	if (reply != NULL) {
		rc = rocmd_rpc_parse(reply, strlen(reply), 0, &msg, &bad_id, why, sizeof(why));
		if (rc != 0 && rc != ROCMD_ETOO_DEEP)
			abort();
		rocmd_rpc_free(&msg);
		cJSON_Delete(bad_id);
	}
	free(reply);
}

/* Runs DATA through a decoder; CHUNKED picks read sizes from SEED. */
static void
run(const uint8_t *data, size_t size, int chunked, uint64_t seed, struct outcome *o)
{
	struct rocmd_frame_decoder d;
	size_t off = 0;

	memset(o, 0, sizeof(*o));
	rocmd_frame_decoder_init(&d, 0);
	while (off < size) {
		size_t n = size - off, consumed = 0, flen = 0;
		char *frame = NULL;
		int rc;

		if (chunked) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			switch (seed % 4) {
			case 0:
				n = 1;
				break;
			case 1:
				n = 1 + (seed >> 8) % 7;
				break;
			case 2:
				n = 1 + (seed >> 8) % 300;
				break;
			default:
				break;
			}
			if (n > size - off)
				n = size - off;
		}
		rc = rocmd_frame_feed(&d, (const char *)data + off, n, &consumed, &frame, &flen);
		if (consumed > n)
			abort();
		off += consumed;
		if (rc != 0) {
			if (frame != NULL)
				abort();
			o->error = rc;
			/* Poisoned: a second feed must fail the same way. */
			if (rocmd_frame_feed(&d, "x", 1, &consumed, &frame, &flen) != rc ||
			    consumed != 0 || frame != NULL)
				abort();
			break;
		}
		if (frame != NULL) {
			if (flen == 0 || flen > ROCMD_PROTO_MAX_FRAME || frame[flen] != '\0')
				abort();
			if (o->frames < MAX_TRACKED) {
				o->lens[o->frames] = flen;
				o->hashes[o->frames] =
				    fnv1a((const uint8_t *)frame, flen, 0xcbf29ce484222325ull);
			}
			o->frames++;
			if (chunked)
				handle_payload(frame, flen);
			free(frame);
		} else if (consumed != n) {
			abort(); /* all of a feed is used unless a frame completes */
		}
	}
	o->pending = o->error == 0 && rocmd_frame_pending(&d);
	rocmd_frame_decoder_free(&d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, chunked;

	run(data, size, 0, 0, &whole);
	run(data, size, 1, fnv1a(data, size, 0xcbf29ce484222325ull) | 1, &chunked);
	if (whole.frames != chunked.frames || whole.error != chunked.error ||
	    whole.pending != chunked.pending)
		abort();
	for (size_t i = 0; i < whole.frames && i < MAX_TRACKED; i++)
		if (whole.lens[i] != chunked.lens[i] || whole.hashes[i] != chunked.hashes[i])
			abort();
	return 0;
}
