/*
 * The daemon's method table: every JSON-RPC method, whether it changes
 * anything (and so needs an admin peer), and its handler. docs/PROTOCOL.md
 * documents each one.
 */
#ifndef ROCMD_METHODS_H
#define ROCMD_METHODS_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct rocmd_conn;

#define ROCMD_METHOD_MUTATING 0x1 /* needs root or the admin group */
#define ROCMD_METHOD_PRE_HELLO 0x2 /* allowed before the handshake */

/* A handler fills *RESULT (NULL means {}) or returns a rocmd error with WHY. */
typedef int (*rocmd_method_fn)(struct rocmd_conn *conn, const cJSON *params, cJSON **result,
			       char *why, size_t whylen);

struct rocmd_method {
	const char *name;
	unsigned flags;
	rocmd_method_fn fn;
};

const struct rocmd_method *rocmd_method_find(const char *name);

#endif
