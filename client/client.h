/*
 * A small blocking client for the rocmd protocol, used by rocmctl, the tests
 * and tools. One request is in flight at a time; notifications that arrive
 * while waiting for a reply go to a callback, in order.
 */
#ifndef ROCMD_CLIENT_H
#define ROCMD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

struct rocmd_client;

/* Called for each notification; a non-zero return stops the wait and is returned. */
typedef int (*rocmd_notify_fn)(const struct rocmd_rpc *msg, void *ctx);

/*
 * Connects to the daemon at PATH and performs the hello handshake; *hello
 * (may be NULL) receives the daemon's hello result (caller deletes).
 * ROCMD_ECONNECT when nothing answers (WHY says why: not running, no access).
 */
int rocmd_client_open(const char *path, const char *client_name, struct rocmd_client **out,
		      cJSON **hello, char *why, size_t whylen);
void rocmd_client_close(struct rocmd_client *c);
/*
 * Calls METHOD with PARAMS (consumed; NULL for none). On success *result gets
 * the result (caller deletes). An error reply returns its rocmd code with the
 * daemon's message in WHY and its data (may be NULL) in *data if DATA is set.
 */
int rocmd_client_call(struct rocmd_client *c, const char *method, cJSON *params,
		      cJSON **result, cJSON **data, rocmd_notify_fn on_notify, void *ctx, char *why,
		      size_t whylen);
/* Waits for notifications until the callback returns non-zero, the daemon
 * closes (ROCMD_ECLOSED) or an error occurs. */
int rocmd_client_listen(struct rocmd_client *c, rocmd_notify_fn on_notify, void *ctx, char *why,
			size_t whylen);

/* The command line as UTF-8, as rocmd takes every name: on Windows rebuilt
 * from GetCommandLineW (the C runtime's argv is in the ANSI code page, which
 * cannot hold every file name); elsewhere left as it is. */
void rocmd_client_args_utf8(int *argc, char ***argv);

#endif
