/*
 * rocmctl's commands about the daemon itself: status, events (with
 * --follow), config, log-level, shutdown, and call, one raw request for
 * scripts and debugging.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/error.h"

/* Calls METHOD; on failure prints the daemon's reason and returns the exit code. */
static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(&ctx->client, ctx->socket, method, params, result, NULL, NULL);
}

int
cmd_status(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	const cJSON *counts;
	char pid[32], up[32], started[32], schema[16], conns[48], sdks[16], pkgs[16], deps[16],
	    jobs[16], events[24];
	int rc;

	if ((rc = call(ctx, "status", NULL, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	counts = cJSON_GetObjectItemCaseSensitive(r, "counts");
	snprintf(pid, sizeof(pid), "%.0f", out_num(r, "pid"));
	out_duration((long long)out_num(r, "uptime_s"), up, sizeof(up));
	out_time((long long)out_num(r, "started_at_ms"), started, sizeof(started));
	snprintf(schema, sizeof(schema), "%.0f", out_num(r, "schema_version"));
	snprintf(conns, sizeof(conns), "%.0f (limit %.0f)", out_num(r, "connections"),
	         out_num(r, "max_connections"));
	snprintf(sdks, sizeof(sdks), "%.0f", out_num(counts, "sdks"));
	snprintf(pkgs, sizeof(pkgs), "%.0f", out_num(counts, "packages"));
	snprintf(deps, sizeof(deps), "%.0f", out_num(counts, "deployments"));
	snprintf(jobs, sizeof(jobs), "%.0f", out_num(counts, "tune_jobs"));
	snprintf(events, sizeof(events), "%.0f", out_num(counts, "events"));
	{
		const cJSON *clean = cJSON_GetObjectItemCaseSensitive(r, "previous_run_clean"),
		            *note;
		const char *keys[] = {"Version",       "PID",    "Uptime",         "Started",
		                      "State dir",     "Socket", "Schema version", "Connections",
		                      "Previous stop", "SDKs",   "Packages",       "Deployments",
		                      "Tuning jobs",   "Events"};
		const char *vals[] = {out_str(r, "version"),
		                      pid,
		                      up,
		                      started,
		                      out_str(r, "state_dir"),
		                      out_str(r, "socket"),
		                      schema,
		                      conns,
		                      strcmp(out_str(r, "previous_run"), "unknown") == 0
		                          ? "unknown (the database is new, the state folder is not)"
		                      : cJSON_IsTrue(clean) ? "clean"
		                                            : "unclean (crash or kill)",
		                      sdks,
		                      pkgs,
		                      deps,
		                      jobs,
		                      events};
		out_kv(stdout, (int)(sizeof(keys) / sizeof(keys[0])), keys, vals);
		cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(r, "notes"))
		{
			if (cJSON_IsString(note))
				printf("note: %s\n", note->valuestring);
		}
	}
	cJSON_Delete(r);
	return 0;
}

static void
print_event(const cJSON *ev, int json)
{
	char when[32], id[24];

	if (json) {
		char *s = cJSON_PrintUnformatted(ev);
		if (s != NULL)
			puts(s);
		free(s);
	} else {
		snprintf(id, sizeof(id), "%.0f", out_num(ev, "id"));
		printf("%-6s %s  %-26s %s\n", id,
		       out_time((long long)out_num(ev, "time_ms"), when, sizeof(when)),
		       out_str(ev, "kind"), out_str(ev, "message"));
	}
	fflush(stdout);
}

static int
on_event(const struct rocmd_rpc *msg, void *arg)
{
	struct cmd_ctx *ctx = arg;

	if (strcmp(msg->method, "event") == 0 && msg->params != NULL)
		print_event(msg->params, ctx->json);
	return 0;
}

static int
list_page(struct cmd_ctx *ctx, cJSON *params, long long *after, int *more, long long *shown)
{
	const cJSON *ev;
	cJSON *r = NULL;
	int rc;

	if ((rc = call(ctx, "events.list", params, &r)) != 0)
		return rc;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(r, "events"))
	{
		print_event(ev, ctx->json);
		(*shown)++;
	}
	*after = (long long)out_num(r, "last_id");
	*more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "more"));
	cJSON_Delete(r);
	return 0;
}

int
cmd_events(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	long long after = cli_int(a, "after", -1), limit = cli_int(a, "limit", 20), shown = 0;
	const char *kind = cli_str(a, "kind", NULL);
	char why[1024] = "";
	int follow = cli_has(a, "follow"), all = cli_has(a, "all"), more = 0, rc;

	if (all && cli_has(a, "after"))
		return out_usage("events takes --after ID or --all, not both");
	if (after < 0 && !all) {
		/* The default view: the newest LIMIT events. */
		cJSON *p = cJSON_CreateObject();
		cJSON_AddBoolToObject(p, "newest", 1);
		cJSON_AddNumberToObject(p, "limit", (double)limit);
		if (kind != NULL)
			cJSON_AddStringToObject(p, "kind", kind);
		if ((rc = list_page(ctx, p, &after, &more, &shown)) != 0)
			return rc;
		/* With nothing shown, last_id is 0: --follow then replays whatever
		 * matches from the start, which is nothing yet. */
	} else {
		/* Page forward from --after (or the start, with --all). */
		if (after < 0)
			after = 0;
		do {
			cJSON *p = cJSON_CreateObject();
			long long page = all ? 1000 : limit - shown;
			cJSON_AddNumberToObject(p, "after_id", (double)after);
			cJSON_AddNumberToObject(p, "limit", (double)page);
			if (kind != NULL)
				cJSON_AddStringToObject(p, "kind", kind);
			if ((rc = list_page(ctx, p, &after, &more, &shown)) != 0)
				return rc;
		} while (more && (all || shown < limit));
	}
	if (!follow)
		return 0;
	{
		cJSON *p = cJSON_CreateObject(), *r = NULL;
		if (after >= 0)
			cJSON_AddNumberToObject(p, "after_id", (double)after);
		if (kind != NULL)
			cJSON_AddStringToObject(p, "kind", kind);
		rc = rocmd_client_call(ctx->client, "events.subscribe", p, &r, NULL, on_event, ctx,
		                       why, sizeof(why));
		cJSON_Delete(r);
		if (rc < 0)
			return out_fail(rc, why);
	}
	rc = rocmd_client_listen(ctx->client, on_event, ctx, why, sizeof(why));
	if (rc == ROCMD_ECLOSED) {
		return out_error(EXIT_ERROR, "rocmd closed the connection (daemon stopped?)");
	}
	return out_fail(rc, why);
}

int
cmd_config(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	int rc;

	(void)a;
	if ((rc = call(ctx, "config.get", NULL, &r)) != 0)
		return rc;
	out_json(r);
	cJSON_Delete(r);
	return 0;
}

int
cmd_log_level(void *arg, const struct cli_args *a)
{
	static const char *const levels[] = {"error", "warning", "notice", "info", "debug"};
	struct cmd_ctx *ctx = arg;
	cJSON *p, *r = NULL;
	int rc, known = 0;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		known |= strcmp(a->pos[0], levels[i]) == 0;
	if (!known)
		return out_usage("unknown log level '%s' (error, warning, notice, info or debug)",
		                 a->pos[0]);
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "level", a->pos[0]);
	if ((rc = call(ctx, "daemon.set_log_level", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("log level: %s\n", out_str(r, "level"));
	cJSON_Delete(r);
	return 0;
}

int
cmd_shutdown(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	int rc;

	(void)a;
	if ((rc = call(ctx, "daemon.shutdown", NULL, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("rocmd is shutting down\n");
	cJSON_Delete(r);
	return 0;
}

/* A raw call, for scripts and debugging: rocmctl call METHOD ['{"param": 1}']. */
int
cmd_rpc(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *params = NULL, *r = NULL;
	int rc;

	if (a->npos == 2 && (params = cJSON_Parse(a->pos[1])) == NULL)
		return out_usage("PARAMS is not valid JSON");
	if ((rc = call(ctx, a->pos[0], params, &r)) != 0)
		return rc;
	out_json(r);
	cJSON_Delete(r);
	return 0;
}
