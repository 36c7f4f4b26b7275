/*
 * rocmctl: the command-line client of rocmd. Each command is one or a few
 * protocol calls; output is an aligned table or key/value block for people,
 * or the daemon's JSON with --json for scripts.
 *
 * Exit codes: 0 ok, 1 error, 2 usage, 3 daemon unreachable, 4 permission denied.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cmd-lib.h"
#include "cmd-sdk.h"
#include "cmd-tune.h"
#include "cmd-pkg.h"
#include "common/error.h"
#include "common/paths.h"
#include "output.h"
#include "version.h"

struct ctx {
	const char *socket;
	int json;
	struct rocmd_client *client;
};

struct command {
	const char *name;
	const char *args;
	const char *help;
	int (*fn)(struct ctx *ctx, int argc, char **argv);
};

static const struct command commands[];

static void
usage(FILE *f)
{
	fprintf(f, "Usage: rocmctl [--socket PATH] [--json] COMMAND [ARGS]\n"
		   "Talks to rocmd, the HIP SDK / rocBLAS library manager.\n\nCommands:\n");
	for (const struct command *c = commands; c->name != NULL; c++) {
		char left[64];
		snprintf(left, sizeof(left), "%s %s", c->name, c->args);
		fprintf(f, "  %-34s %s\n", left, c->help);
	}
	fprintf(f, "\nOptions:\n"
		   "  -S, --socket PATH   daemon socket (default: $ROCMD_SOCKET, your own daemon's,\n"
		   "                      else " ROCMD_SYSTEM_SOCKET ")\n"
		   "  -j, --json          machine-readable JSON output\n"
		   "  -V, --version       print the version\n"
		   "  -h, --help          this help\n\n"
		   "Exit codes: 0 ok, 1 error, 2 usage, 3 daemon unreachable, 4 permission denied.\n");
}

/* Calls METHOD; on failure prints the daemon's reason and returns the exit code. */
static int
call(struct ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(&ctx->client, ctx->socket, method, params, result, NULL, NULL);
}

static int
cmd_status(struct ctx *ctx, int argc, char **argv)
{
	cJSON *r = NULL;
	const cJSON *counts;
	char pid[32], up[32], started[32], schema[16], conns[48], sdks[16], pkgs[16], deps[16],
		jobs[16], events[24];
	int rc;

	if (argc != 0)
		return out_fail(ROCMD_EINVAL, "status takes no arguments");
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
		const cJSON *clean = cJSON_GetObjectItemCaseSensitive(r, "previous_run_clean"), *note;
		const char *keys[] = {"Version", "PID", "Uptime", "Started", "State dir", "Socket",
				      "Schema version", "Connections", "Previous stop", "SDKs",
				      "Packages", "Deployments", "Tuning jobs", "Events"};
		const char *vals[] = {out_str(r, "version"), pid, up, started, out_str(r, "state_dir"),
				      out_str(r, "socket"), schema, conns,
				      strcmp(out_str(r, "previous_run"), "unknown") == 0
					      ? "unknown (the database is new, the state folder is not)"
				      : cJSON_IsTrue(clean) ? "clean"
							    : "unclean (crash or kill)",
				      sdks, pkgs, deps, jobs, events};
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
		printf("%-6s %s  %-26s %s\n", id, out_time((long long)out_num(ev, "time_ms"), when,
							  sizeof(when)),
		       out_str(ev, "kind"), out_str(ev, "message"));
	}
	fflush(stdout);
}

static int
on_event(const struct rocmd_rpc *msg, void *arg)
{
	struct ctx *ctx = arg;

	if (strcmp(msg->method, "event") == 0 && msg->params != NULL)
		print_event(msg->params, ctx->json);
	return 0;
}

static int
list_page(struct ctx *ctx, cJSON *params, long long *after, int *more, long long *shown)
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

static int
cmd_events(struct ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"follow", no_argument, NULL, 'f'}, {"limit", required_argument, NULL, 'n'},
		{"kind", required_argument, NULL, 'k'}, {"after", required_argument, NULL, 'a'},
		{"all", no_argument, NULL, 'A'}, {NULL, 0, NULL, 0},
	};
	long long after = -1, limit = 20, shown = 0;
	const char *kind = NULL;
	char why[1024] = "";
	int follow = 0, all = 0, more = 0, c, rc;

	optind = 0;
	while ((c = getopt_long(argc + 1, argv - 1, "+fn:k:a:A", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			follow = 1;
			break;
		case 'n':
			limit = atoll(optarg);
			if (limit <= 0 || limit > 1000)
				return out_fail(ROCMD_EINVAL, "--limit takes a number from 1 to 1000");
			break;
		case 'k':
			kind = optarg;
			break;
		case 'a':
			after = atoll(optarg);
			if (after < 0)
				return out_fail(ROCMD_EINVAL, "--after takes an event id");
			break;
		case 'A':
			all = 1;
			break;
		default:
			return EXIT_USAGE;
		}
	}
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
		fprintf(stderr, "rocmctl: rocmd closed the connection (daemon stopped?)\n");
		return EXIT_ERROR;
	}
	return out_fail(rc, why);
}

static int
cmd_config(struct ctx *ctx, int argc, char **argv)
{
	cJSON *r = NULL;
	int rc;

	if (argc != 0)
		return out_fail(ROCMD_EINVAL, "config takes no arguments");
	if ((rc = call(ctx, "config.get", NULL, &r)) != 0)
		return rc;
	out_json(r);
	cJSON_Delete(r);
	return 0;
}

static int
cmd_log_level(struct ctx *ctx, int argc, char **argv)
{
	cJSON *p, *r = NULL;
	int rc;

	if (argc != 1) {
		fprintf(stderr, "rocmctl: usage: log-level error|warning|notice|info|debug\n");
		return EXIT_USAGE;
	}
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "level", argv[0]);
	if ((rc = call(ctx, "daemon.set_log_level", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("log level: %s\n", out_str(r, "level"));
	cJSON_Delete(r);
	return 0;
}

static int
cmd_shutdown(struct ctx *ctx, int argc, char **argv)
{
	cJSON *r = NULL;
	int rc;

	if (argc != 0)
		return out_fail(ROCMD_EINVAL, "shutdown takes no arguments");
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
static int
cmd_call(struct ctx *ctx, int argc, char **argv)
{
	cJSON *params = NULL, *r = NULL;
	int rc;

	if (argc < 1 || argc > 2) {
		fprintf(stderr, "rocmctl: usage: call METHOD [PARAMS-JSON]\n");
		return EXIT_USAGE;
	}
	if (argc == 2) {
		params = cJSON_Parse(argv[1]);
		if (params == NULL) {
			fprintf(stderr, "rocmctl: PARAMS is not valid JSON\n");
			return EXIT_USAGE;
		}
	}
	if ((rc = call(ctx, argv[0], params, &r)) != 0)
		return rc;
	out_json(r);
	cJSON_Delete(r);
	return 0;
}

static int
cmd_pkg(struct ctx *ctx, int argc, char **argv)
{
	return rocmctl_pkg(&ctx->client, ctx->socket, ctx->json, argc, argv);
}

static int
cmd_lib(struct ctx *ctx, int argc, char **argv)
{
	return rocmctl_lib(&ctx->client, ctx->socket, ctx->json, argc, argv);
}

static int
cmd_sdk(struct ctx *ctx, int argc, char **argv)
{
	return rocmctl_sdk(&ctx->client, ctx->socket, ctx->json, argc, argv);
}

static int
cmd_gpu(struct ctx *ctx, int argc, char **argv)
{
	return rocmctl_gpu(&ctx->client, ctx->socket, ctx->json, argc, argv);
}

static int
cmd_tune(struct ctx *ctx, int argc, char **argv)
{
	return rocmctl_tune(&ctx->client, ctx->socket, ctx->json, argc, argv);
}

static const struct command commands[] = {
	{"status", "", "daemon version, uptime, state and counts", cmd_status},
	{"events", "[--follow] [--kind K] [--limit N] [--after ID | --all]",
	 "the newest events (20 by default), or pages from an id",
	 cmd_events},
	{"config", "", "the daemon's effective configuration (JSON)", cmd_config},
	{"log-level", "LEVEL", "set the daemon's log level (admin)", cmd_log_level},
	{"shutdown", "", "stop the daemon (admin)", cmd_shutdown},
	{"sdk", "list|show ID|PATH|rescan", "HIP SDK installs (rescan: admin)", cmd_sdk},
	{"gpu", "list", "AMD GPUs found", cmd_gpu},
	{"tune", "status|start|pause|resume|add|results|export|import",
	 "idle tuning: signals, decision, queue, results (start/pause/resume/add/import: admin)",
	 cmd_tune},
	{"pkg", "import|list|show|rm|verify|match ...",
	 "the package store (rocmctl pkg help)", cmd_pkg},
	{"lib", "status|deploy|verify|history|rollback ...",
	 "deployed rocBLAS libraries (rocmctl lib help)", cmd_lib},
	{"call", "METHOD [PARAMS]", "send one raw JSON-RPC request", cmd_call},
	{NULL, NULL, NULL, NULL},
};

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 'S'}, {"json", no_argument, NULL, 'j'},
		{"version", no_argument, NULL, 'V'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ctx ctx = {0};
	int c, rc;

#ifdef SIGPIPE /* Windows has no SIGPIPE: a closed pipe is a write error there */
	signal(SIGPIPE, SIG_IGN);
#endif
	rocmd_client_args_utf8(&argc, &argv);
	while ((c = getopt_long(argc, argv, "+S:jVh", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			ctx.socket = optarg;
			break;
		case 'j':
			ctx.json = 1;
			break;
		case 'V':
			printf("rocmctl %s (protocol %d)\n", ROCMD_VERSION_STRING,
			       ROCMD_PROTO_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (const struct command *cmd = commands; cmd->name != NULL; cmd++) {
		if (strcmp(cmd->name, argv[optind]) != 0)
			continue;
		rc = cmd->fn(&ctx, argc - optind - 1, argv + optind + 1);
		rocmd_client_close(ctx.client);
		return rc;
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "rocmctl: unknown command '%s' (see rocmctl --help)\n", argv[optind]);
	return EXIT_USAGE;
}
