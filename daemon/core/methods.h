/*
 * The daemon's method table: every JSON-RPC method, whether it changes
 * anything (and so needs an admin peer), and its handler. docs/PROTOCOL.md
 * documents each one. A feature module (SDKs, packages, deploy, tuning) keeps
 * its handlers in its own file, exports a table, and adds it to the list in
 * methods.c.
 */
#ifndef ROCMD_METHODS_H
#define ROCMD_METHODS_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct rocmd_conn;

#define ROCMD_METHOD_MUTATING 0x1 /* needs root or the admin group */
#define ROCMD_METHOD_PRE_HELLO 0x2 /* allowed before the handshake */

/* A handler returns 0 having filled *RESULT (NULL means {}), a rocmd error
 * with WHY, or ROCMD_METHOD_DEFERRED after rocmd_conn_defer() (server.h). */
#define ROCMD_METHOD_DEFERRED 1
typedef int (*rocmd_method_fn)(struct rocmd_conn *conn, const cJSON *params, cJSON **result,
			       char *why, size_t whylen);

struct rocmd_method {
	const char *name;
	unsigned flags;
	rocmd_method_fn fn;
};

/* Each feature module exports one NULL-terminated table; methods.c lists them. */
extern const struct rocmd_method rocmd_methods_core[];

const struct rocmd_method *rocmd_method_find(const char *name);

/* Sends the next events of CONN's subscription replay (events.subscribe with
 * after_id), as many as its output limit allows now; the server calls it
 * again each time CONN's output drains. */
void rocmd_events_replay(struct rocmd_conn *conn);

#endif
