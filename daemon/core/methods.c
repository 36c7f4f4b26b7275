/*
 * The JSON-RPC methods of the daemon's core: handshake, status, the event
 * history and its subscription, configuration and daemon control. Feature
 * modules (SDKs, packages, deploy, tuning) add their own tables later; the
 * lookup walks them all. Every handler validates its params with the
 * accessors in common/proto.h, so a wrong type is a precise -32602 error.
 */
#include "methods.h"
#include "daemon/deploy/deploy-service.h"
#include "daemon/pkg/pkg-service.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "common/proto.h"
#include "daemon/sdk/sdk-methods.h"
#include "daemon/tune/tune-methods.h"
#include "server.h"
#include "version.h"

/* Replies must stay under the frame limit; leave room for the envelope. */
#define REPLY_BUDGET(srv) ((size_t)(srv)->cfg->max_frame - 4096)
#define EVENTS_DEFAULT_LIMIT 100
#define EVENTS_MAX_LIMIT 1000

static int
m_hello(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"client", "protocol", "version", NULL};
	struct rocmd_server *srv = conn->srv;
	const char *client;
	int64_t proto, chosen;
	cJSON *r, *limits;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "client", 1, &client, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "protocol", 1, 0, 1000000, &proto, why, whylen)) < 0)
		return rc;
	chosen = proto < ROCMD_PROTO_VERSION ? proto : ROCMD_PROTO_VERSION;
	if (chosen < ROCMD_PROTO_MIN_VERSION) {
		snprintf(why, whylen, "client speaks protocol %lld; rocmd speaks %d..%d",
			 (long long)proto, ROCMD_PROTO_MIN_VERSION, ROCMD_PROTO_VERSION);
		return ROCMD_EVERSION;
	}
	conn->hello = 1;
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "server", "rocmd");
	cJSON_AddStringToObject(r, "version", ROCMD_VERSION_STRING);
	cJSON_AddNumberToObject(r, "protocol", (double)chosen);
	cJSON_AddNumberToObject(r, "pid", (double)srv->pid);
	cJSON_AddBoolToObject(r, "privileged", conn->peer.admin);
	limits = cJSON_AddObjectToObject(r, "limits");
	cJSON_AddNumberToObject(limits, "max_frame", (double)srv->cfg->max_frame);
	cJSON_AddNumberToObject(limits, "max_depth", ROCMD_PROTO_MAX_DEPTH);
	cJSON_AddNumberToObject(limits, "max_queued_output", (double)srv->cfg->max_queued_output);
	*result = r;
	return 0;
}

static int
m_status(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_server *srv = conn->srv;
	int64_t now = rocmd_now_ms();
	cJSON *r, *counts;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	if (srv->counts_stale) {
		rc = rocmd_db_counts(srv->db, &srv->counts);
		if (rc < 0) {
			snprintf(why, whylen, "cannot read counts: %s", rocmd_db_errmsg(srv->db));
			return rc;
		}
		srv->counts_stale = 0;
	}
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "version", ROCMD_VERSION_STRING);
	cJSON_AddNumberToObject(r, "pid", (double)srv->pid);
	cJSON_AddNumberToObject(r, "uptime_s", (double)((now - srv->started_ms) / 1000));
	cJSON_AddNumberToObject(r, "started_at_ms", (double)srv->started_ms);
	cJSON_AddStringToObject(r, "state_dir", srv->cfg->state_dir);
	cJSON_AddStringToObject(r, "socket", srv->socket_path != NULL ? srv->socket_path : "");
	cJSON_AddNumberToObject(r, "schema_version", rocmd_db_schema_version(srv->db));
	cJSON_AddNumberToObject(r, "connections", srv->nconns);
	cJSON_AddNumberToObject(r, "max_connections", (double)srv->cfg->max_connections);
	cJSON_AddBoolToObject(r, "previous_run_clean", srv->previous_run_clean);
	cJSON_AddStringToObject(r, "previous_run",
	                        srv->previous_run_unknown ? "unknown"
	                        : srv->previous_run_clean ? "clean"
	                                                  : "unclean");
	{
		cJSON *notes = cJSON_AddArrayToObject(r, "notes");
		for (int i = 0; i < srv->nengines; i++)
			if (srv->engines[i].ops->status != NULL)
				srv->engines[i].ops->status(srv->engines[i].self, notes);
	}
	counts = cJSON_AddObjectToObject(r, "counts");
	cJSON_AddNumberToObject(counts, "sdks", (double)srv->counts.sdks);
	cJSON_AddNumberToObject(counts, "packages", (double)srv->counts.packages);
	cJSON_AddNumberToObject(counts, "deployments", (double)srv->counts.deployments);
	cJSON_AddNumberToObject(counts, "tune_jobs", (double)srv->counts.tune_jobs);
	cJSON_AddNumberToObject(counts, "events", (double)srv->counts.events);
	*result = r;
	return 0;
}

static cJSON *
event_to_json(const struct rocmd_event *ev)
{
	cJSON *o = cJSON_CreateObject(), *detail = NULL;

	cJSON_AddNumberToObject(o, "id", (double)ev->id);
	cJSON_AddNumberToObject(o, "time_ms", (double)ev->time_ms);
	cJSON_AddStringToObject(o, "kind", ev->kind);
	cJSON_AddStringToObject(o, "message", ev->message);
	if (ev->detail != NULL)
		detail = cJSON_Parse(ev->detail);
	cJSON_AddItemToObject(o, "detail", detail != NULL ? detail : cJSON_CreateNull());
	return o;
}

struct list_ctx {
	cJSON *array;
	int64_t count, limit;
	size_t bytes, budget;
	int64_t last_id;
	int more;
	struct rocmd_conn *notify; /* replay as notifications instead of collecting */
};

/* Rough serialized size: exact enough to keep a reply under the frame limit. */
static size_t
event_size(const struct rocmd_event *ev)
{
	return 96 + strlen(ev->kind) + 2 * strlen(ev->message) +
	       (ev->detail != NULL ? 2 * strlen(ev->detail) : 0);
}

static int
collect_event(const struct rocmd_event *ev, void *arg)
{
	struct list_ctx *ctx = arg;
	size_t sz = event_size(ev);

	if (ctx->notify != NULL) {
		/* Paced by rocmd_events_replay, so not dropped as a slow reader. */
		char *payload = rocmd_rpc_notification("event", event_to_json(ev));
		int rc = payload != NULL ? rocmd_conn_send(ctx->notify, payload, strlen(payload), 0)
					 : ROCMD_ENOMEM;
		free(payload);
		ctx->last_id = ev->id;
		ctx->count++;
		return rc < 0 ? rc : 0;
	}
	if (ctx->count >= ctx->limit || ctx->bytes + sz > ctx->budget) {
		ctx->more = 1;
		return 1;
	}
	ctx->bytes += sz;
	ctx->count++;
	cJSON_AddItemToArray(ctx->array, event_to_json(ev));
	ctx->last_id = ev->id;
	return 0;
}

static int
m_events_list(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
	      size_t whylen)
{
	static const char *const keys[] = {"after_id", "limit", "kind", "newest", NULL};
	struct rocmd_server *srv = conn->srv;
	struct list_ctx ctx = {0};
	int64_t after = 0, limit = EVENTS_DEFAULT_LIMIT;
	const char *kind = NULL;
	int newest = 0;
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "after_id", 0, 0, INT64_MAX, &after, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "limit", 0, 1, EVENTS_MAX_LIMIT, &limit, why,
				   whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "kind", 0, &kind, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_bool(params, "newest", 0, &newest, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (newest && after > 0) {
		snprintf(why, whylen, "params 'newest' and 'after_id' exclude each other");
		return ROCMD_EPARAMS;
	}
	r = cJSON_CreateObject();
	ctx.array = cJSON_AddArrayToObject(r, "events");
	ctx.budget = newest ? SIZE_MAX : REPLY_BUDGET(srv);
	ctx.last_id = after;
	ctx.limit = newest ? limit + 1 : limit;
	/* One row more than asked tells whether there is more. */
	rc = newest ? rocmd_db_events_tail(srv->db, (int)limit + 1, kind, collect_event, &ctx)
		    : rocmd_db_events_list(srv->db, after, (int)limit + 1, kind, collect_event,
					   &ctx);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read events: %s", rocmd_db_errmsg(srv->db));
		return rc;
	}
	/* The newest window walks oldest first: its extra row and anything over
	 * the reply budget are dropped from the old end. */
	while (newest && (ctx.count > limit || ctx.bytes > REPLY_BUDGET(srv))) {
		cJSON *old = cJSON_DetachItemFromArray(ctx.array, 0);
		char *text = cJSON_PrintUnformatted(old);
		ctx.bytes -= text != NULL && strlen(text) < ctx.bytes ? strlen(text) : ctx.bytes;
		free(text);
		cJSON_Delete(old);
		ctx.count--;
		ctx.more = 1;
	}
	cJSON_AddNumberToObject(r, "last_id", (double)ctx.last_id);
	cJSON_AddBoolToObject(r, "more", ctx.more);
	*result = r;
	return 0;
}

static int
m_events_subscribe(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
		   size_t whylen)
{
	static const char *const keys[] = {"after_id", "kind", NULL};
	struct rocmd_server *srv = conn->srv;
	struct list_ctx ctx = {0};
	const char *kind = NULL;
	int64_t after = -1;
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "after_id", 0, 0, INT64_MAX, &after, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "kind", 0, &kind, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	free(conn->sub_kind);
	conn->sub_kind = kind != NULL && kind[0] != '\0' ? strdup(kind) : NULL;
	conn->subscribed = 1;
	ctx.last_id = rocmd_db_events_last_id(srv->db);
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "last_id", (double)ctx.last_id);
	*result = r;
	if (after >= 0) {
		/* What the client missed follows the reply, paced by its reading
		 * (rocmd_events_replay); live events wait behind it, in order. */
		conn->replaying = 1;
		conn->replay_after = after;
		rocmd_events_replay(conn);
	}
	return 0;
}

#define REPLAY_BATCH 128

void
rocmd_events_replay(struct rocmd_conn *conn)
{
	struct rocmd_server *srv = conn->srv;
	size_t room = (size_t)srv->cfg->max_queued_output / 2;

	while (conn->replaying && !conn->closing && !conn->draining && conn->queued <= room) {
		struct list_ctx ctx = {.notify = conn, .last_id = conn->replay_after};
		int rc = rocmd_db_events_list(srv->db, conn->replay_after, REPLAY_BATCH,
		                              conn->sub_kind, collect_event, &ctx);
		if (rc < 0) {
			log_err("connection %llu: cannot replay events: %s",
			        (unsigned long long)conn->serial, rocmd_db_errmsg(srv->db));
			conn->replaying = 0;
			break;
		}
		if (ctx.count < REPLAY_BATCH)
			conn->replaying = 0; /* caught up: live events from now on */
		conn->replay_after = ctx.last_id;
	}
}

static int
m_events_unsubscribe(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
		     size_t whylen)
{
	static const char *const keys[] = {NULL};
	int rc = rocmd_params_only(params, keys, why, whylen);

	if (rc < 0)
		return rc;
	conn->subscribed = 0;
	conn->replaying = 0;
	free(conn->sub_kind);
	conn->sub_kind = NULL;
	return 0;
}

static int
m_config_get(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
	     size_t whylen)
{
	static const char *const keys[] = {NULL};
	int rc = rocmd_params_only(params, keys, why, whylen);

	if (rc < 0)
		return rc;
	*result = rocmd_config_to_json(conn->srv->cfg);
	return *result != NULL ? 0 : ROCMD_ENOMEM;
}

static int
m_set_log_level(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
		size_t whylen)
{
	static const char *const keys[] = {"level", NULL};
	const char *name;
	int rc, level;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "level", 1, &name, why, whylen)) < 0)
		return rc;
	level = rocmd_log_level_parse(name);
	if (level < 0) {
		snprintf(why, whylen,
			 "param 'level' must be one of error, warning, notice, info, debug");
		return ROCMD_EPARAMS;
	}
	rocmd_log_set_level((enum rocmd_log_level)level);
	rocmd_server_event(conn->srv, "daemon.log_level", NULL, "log level set to %s by uid %u",
			   name, (unsigned)conn->peer.uid);
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "level", name);
	return 0;
}

static int
m_shutdown(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
	   size_t whylen)
{
	static const char *const keys[] = {NULL};
	int rc = rocmd_params_only(params, keys, why, whylen);

	if (rc < 0)
		return rc;
	rocmd_server_event(conn->srv, "daemon.shutdown_requested", NULL,
			   "shutdown requested by uid %u (pid %d)", (unsigned)conn->peer.uid,
			   (int)conn->peer.pid);
	conn->srv->shutdown_requested = 1;
	return 0;
}

const struct rocmd_method rocmd_methods_core[] = {
	{"hello", ROCMD_METHOD_PRE_HELLO, m_hello},
	{"status", 0, m_status},
	{"events.list", 0, m_events_list},
	{"events.subscribe", 0, m_events_subscribe},
	{"events.unsubscribe", 0, m_events_unsubscribe},
	{"config.get", 0, m_config_get},
	{"daemon.set_log_level", ROCMD_METHOD_MUTATING, m_set_log_level},
	{"daemon.shutdown", ROCMD_METHOD_MUTATING, m_shutdown},
	{NULL, 0, NULL},
};

/* Every method table of the daemon, in one list. */
static const struct rocmd_method *const method_tables[] = {
	rocmd_methods_core,
	rocmd_methods_pkg,
	rocmd_methods_sdk,
	rocmd_methods_lib,
	rocmd_methods_doctor,
	rocmd_methods_tune,
};

const struct rocmd_method *
rocmd_method_find(const char *name)
{
	for (size_t t = 0; t < sizeof(method_tables) / sizeof(method_tables[0]); t++)
		for (const struct rocmd_method *m = method_tables[t]; m->name != NULL; m++)
			if (strcmp(m->name, name) == 0)
				return m;
	return NULL;
}
