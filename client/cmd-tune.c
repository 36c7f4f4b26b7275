/*
 * rocmctl tune status|start|pause|resume|add|results|export|import|capture|
 * import-log|off|on: the idle tuner. status shows every idle signal next to
 * the policy and the decision with its reason, the running job's progress
 * and the preemption latencies; results the vendor libraries' tuned shapes
 * per deploy target (calls, the library's own time, the tuned time, which
 * library won, whether the override is live) and rocmd's own kernels' (winner,
 * time, default, speed-up, how many evaluations, and for a re-tune the job it
 * was seeded from). capture, import-log, off and on are cmd-tune-vendor.c's.
 * --json prints the daemon's JSON.
 */
#include "cmd-tune.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "cmd-tune-vendor.h"
#include "common/error.h"
#include "output.h"
#include "report-html.h"

struct tune_ctx {
	struct rocmd_client **client;
	const char *socket;
	int json;
};

static int
call(struct tune_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(ctx->client, ctx->socket, method, params, result, NULL, NULL);
}

static const char *
num_or(const cJSON *o, const char *key, const char *fmt, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? "yes" : "no";
	if (!cJSON_IsNumber(v))
		return "-";
	snprintf(buf, len, fmt, v->valuedouble);
	return buf;
}

static void
print_status(const cJSON *r)
{
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(r, "signals");
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(r, "policy");
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(r, "device");
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
	const cJSON *cur = cJSON_GetObjectItemCaseSensitive(r, "current");
	const cJSON *lat = cJSON_GetObjectItemCaseSensitive(r, "preemption");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r, "retune");
	char b[12][96], device[256], input[160], load[96], jobline[160], policy[200], cl[160],
	    latline[160], retune[400];

	snprintf(device, sizeof(device), "%s (%s, %s backend)", out_str(dev, "name"),
	         out_str(dev, "arch"), out_str(dev, "backend"));
	snprintf(input, sizeof(input), "%s, idle %s s, %s device(s), logind idle %s",
	         out_str(sig, "input_source"), num_or(sig, "input_idle_s", "%.1f", b[0], 96),
	         num_or(sig, "input_devices", "%.0f", b[1], 96),
	         num_or(sig, "logind_idle", "%.0f", b[2], 96));
	snprintf(load, sizeof(load), "%s on %s CPUs", num_or(sig, "load1", "%.2f", b[3], 96),
	         num_or(sig, "cpus", "%.0f", b[4], 96));
	snprintf(
	    jobline, sizeof(jobline),
	    "%s queued, %s running, %s paused, %s done, %s failed, %s stale",
	    num_or(jobs, "queued", "%.0f", b[5], 96), num_or(jobs, "running", "%.0f", b[6], 96),
	    num_or(jobs, "paused", "%.0f", b[7], 96), num_or(jobs, "done", "%.0f", b[8], 96),
	    num_or(jobs, "failed", "%.0f", b[9], 96), num_or(jobs, "stale", "%.0f", b[10], 96));
	snprintf(policy, sizeof(policy),
	         "idle after %s s, AC only %s, max load %s%%, quiet hours %s",
	         num_or(pol, "idle_s", "%.0f", b[0], 96), num_or(pol, "ac_only", "%.0f", b[1], 96),
	         num_or(pol, "max_cpu_load", "%.0f", b[2], 96),
	         cJSON_IsString(cJSON_GetObjectItemCaseSensitive(pol, "quiet_hours"))
	             ? out_str(pol, "quiet_hours")
	             : "none");
	if (cur != NULL)
		snprintf(cl, sizeof(cl), "job %s: %s of %s evaluations, best %s ms",
		         num_or(cur, "job", "%.0f", b[3], 96),
		         num_or(cur, "evaluations", "%.0f", b[4], 96),
		         num_or(cur, "budget", "%.0f", b[5], 96),
		         num_or(cur, "best_ms", "%.4f", b[6], 96));
	else
		snprintf(cl, sizeof(cl), "-");
	if (rt != NULL)
		snprintf(retune, sizeof(retune), "%s: %s job(s) stale, %s seeded re-tune(s) queued",
		         out_str(rt, "reason"), num_or(rt, "stale", "%.0f", b[0], 96),
		         num_or(rt, "queued", "%.0f", b[1], 96));
	else
		snprintf(retune, sizeof(retune), "-");
	snprintf(latline, sizeof(latline), "%s yields; p50 %s ms, p99 %s ms, max %s ms",
	         num_or(lat, "yields", "%.0f", b[7], 96), num_or(lat, "p50_ms", "%.1f", b[8], 96),
	         num_or(lat, "p99_ms", "%.1f", b[9], 96), num_or(lat, "max_ms", "%.1f", b[10], 96));
	{
		const char *keys[] = {"state",   "decision", "device",  "sdk",       "driver",
		                      "re-tune", "input",    "power",   "gpu users", "cpu load",
		                      "policy",  "jobs",     "current", "preemption"};
		const char *vals[] = {
		    out_str(r, "state"),
		    out_str(r, "decision"),
		    dev != NULL && cJSON_GetObjectItemCaseSensitive(dev, "name") ? device : "-",
		    out_str(r, "sdk"),
		    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "driver"))
		        ? out_str(r, "driver")
		        : "-",
		    retune,
		    input,
		    out_str(sig, "power"),
		    num_or(sig, "gpu_users", "%.0f", b[11], 96),
		    load,
		    policy,
		    jobline,
		    cl,
		    latline};
		out_kv(stdout, 14, keys, vals);
	}
}

static void
print_jobs(const cJSON *arr)
{
	static const char *const hdr[] = {"ID",      "STATE",  "ORIGIN",  "PROBLEM",
	                                  "SDK",     "EVALS",  "BEST MS", "DEFAULT",
	                                  "SPEEDUP", "SEEDED", "WINNER"};
	struct out_table *t = out_table_new(11, hdr);
	const cJSON *j;
	char b[8][64], problem[128];

	cJSON_ArrayForEach(j, arr)
	{
		snprintf(problem, sizeof(problem), "%s %s %s", out_str(j, "dtype"),
		         out_str(j, "trans"), out_str(j, "shape"));
		snprintf(b[1], sizeof(b[1]), "%.0f/%.0f", out_num(j, "evaluations"),
		         out_num(j, "budget"));
		{
			const char *cells[] = {
			    num_or(j, "id", "%.0f", b[0], 64),
			    out_str(j, "state"),
			    out_str(j, "origin"),
			    problem,
			    out_str(j, "sdk"),
			    b[1],
			    num_or(j, "best_ms", "%.4f", b[2], 64),
			    num_or(j, "default_ms", "%.4f", b[3], 64),
			    num_or(j, "speedup", "%.2fx", b[4], 64),
			    num_or(j, "seeded_from", "%.0f", b[5], 64),
			    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "winner"))
			        ? out_str(j, "winner")
			        : "-"};
			out_table_row(t, cells);
		}
	}
	out_table_print(t, stdout);
	out_table_free(t);
}

static int
t_status(struct tune_ctx *ctx, int argc, char **argv)
{
	cJSON *r = NULL;
	int rc;

	if (argc != 0)
		return out_fail(ROCMD_EINVAL, "tune status takes no arguments");
	if ((rc = call(ctx, "tune.status", NULL, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
	} else {
		print_status(r);
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "queue")) > 0) {
			printf("\n");
			print_jobs(cJSON_GetObjectItemCaseSensitive(r, "queue"));
		}
	}
	cJSON_Delete(r);
	return 0;
}

static int
t_control(struct tune_ctx *ctx, const char *what, int argc)
{
	char method[32];
	cJSON *r = NULL;
	int rc;

	if (argc != 0)
		return out_fail(ROCMD_EINVAL, "tune start, pause and resume take no arguments");
	snprintf(method, sizeof(method), "tune.%s", what);
	if ((rc = call(ctx, method, NULL, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("%s: %s\n", out_str(r, "state"), out_str(r, "decision"));
	cJSON_Delete(r);
	return 0;
}

static int
t_add(struct tune_ctx *ctx, int argc, char **argv)
{
	const char *usage = "usage: rocmctl tune add MxNxK [--dtype fp32|fp16|bf16] "
	                    "[--trans NN|NT|TN|TT] [--batch B] [--budget N]";
	long long m, n, k;
	char tail;
	cJSON *p, *r = NULL;
	int rc;

	if (argc < 1 || sscanf(argv[0], "%llux%llux%llu%c", &m, &n, &k, &tail) != 3)
		return out_fail(ROCMD_EINVAL, usage);
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "m", (double)m);
	cJSON_AddNumberToObject(p, "n", (double)n);
	cJSON_AddNumberToObject(p, "k", (double)k);
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc) {
			cJSON_Delete(p);
			return out_fail(ROCMD_EINVAL, usage);
		}
		if (!strcmp(argv[i], "--dtype")) {
			cJSON_AddStringToObject(p, "dtype", argv[i + 1]);
		} else if (!strcmp(argv[i], "--trans")) {
			cJSON_AddStringToObject(p, "trans", argv[i + 1]);
		} else if (!strcmp(argv[i], "--batch") || !strcmp(argv[i], "--budget")) {
			char *end;
			long long v = strtoll(argv[i + 1], &end, 10);

			if (*end != '\0') {
				cJSON_Delete(p);
				return out_fail(ROCMD_EINVAL, usage);
			}
			cJSON_AddNumberToObject(p, argv[i] + 2, (double)v);
		} else {
			cJSON_Delete(p);
			return out_fail(ROCMD_EINVAL, usage);
		}
	}
	if ((rc = call(ctx, "tune.add", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("job %.0f %s\n", out_num(r, "id"),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "created"))
		           ? "queued"
		           : "already queued");
	cJSON_Delete(r);
	return 0;
}

/* Why each failed job of the results failed (of TARGET's, when given). */
static void
print_failures(const cJSON *jobs, const char *target)
{
	const cJSON *j;
	int n = 0;

	cJSON_ArrayForEach(j, jobs)
	{
		const cJSON *tg = cJSON_GetObjectItemCaseSensitive(j, "target");

		if (strcmp(out_str(j, "state"), "failed") != 0)
			continue;
		if (target != NULL && (!cJSON_IsString(tg) || strcmp(tg->valuestring, target) != 0))
			continue;
		if (n++ == 0)
			printf("\nFailed jobs:\n");
		printf("  %.0f %s %s %s%s%s: %s\n", out_num(j, "id"), out_str(j, "dtype"),
		       out_str(j, "trans"), out_str(j, "shape"), cJSON_IsString(tg) ? " on " : "",
		       cJSON_IsString(tg) ? tg->valuestring : "", out_str(j, "detail"));
	}
}

static int
t_results(struct tune_ctx *ctx, int argc, char **argv)
{
	struct tune_vctx v = {ctx->client, ctx->socket, ctx->json};
	const char *target = NULL;
	cJSON *p = cJSON_CreateObject(), *r = NULL, *kernel, *j;
	int rc;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--all")) {
			cJSON_AddBoolToObject(p, "all", 1);
		} else if (argv[i][0] != '-' && target == NULL) {
			target = argv[i];
			cJSON_AddStringToObject(p, "target", target);
		} else {
			cJSON_Delete(p);
			return out_fail(ROCMD_EINVAL, "usage: rocmctl tune results [TARGET] [--all]");
		}
	}
	if ((rc = call(ctx, "tune.results", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	/* The vendor libraries per target, then rocmd's own kernels. */
	kernel = cJSON_CreateArray();
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(r, "jobs"))
	{
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "target")))
			cJSON_AddItemToArray(kernel, cJSON_Duplicate(j, 1));
	}
	if (tune_results_vendor(&v, r, target) > 0 && cJSON_GetArraySize(kernel) > 0)
		printf("\n");
	if (target == NULL && cJSON_GetArraySize(kernel) > 0)
		print_jobs(kernel);
	print_failures(cJSON_GetObjectItemCaseSensitive(r, "jobs"), target);
	cJSON_Delete(kernel);
	cJSON_Delete(r);
	return 0;
}

static int
t_report(struct tune_ctx *ctx, int argc, char **argv)
{
	const char *file = NULL;
	cJSON *p, *r = NULL;
	FILE *f;
	int rc, plots;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--html") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--all"))
			;
		else
			return out_fail(ROCMD_EINVAL, "usage: rocmctl tune report --html FILE [--all]");
	}
	p = cJSON_CreateObject();
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--all"))
			cJSON_AddBoolToObject(p, "all", 1);
	if ((rc = call(ctx, "tune.report", p, &r)) != 0)
		return rc;
	if (ctx->json || file == NULL) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	if ((f = fopen(file, "w")) == NULL) {
		fprintf(stderr, "rocmctl: %s: %s\n", file, strerror(errno));
		cJSON_Delete(r);
		return 1;
	}
	plots = report_html_write(f, r);
	if (fclose(f) != 0) {
		fprintf(stderr, "rocmctl: %s: %s\n", file, strerror(errno));
		cJSON_Delete(r);
		return 1;
	}
	fprintf(stderr, "%d plot(s) of %d job(s) written to %s\n", plots,
	        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "jobs")), file);
	cJSON_Delete(r);
	return 0;
}

static int
t_export(struct tune_ctx *ctx, int argc, char **argv)
{
	const char *format = "json", *file = NULL;
	cJSON *p, *r = NULL;
	FILE *f;
	int rc;

	for (int i = 0; i < argc; i += 2) {
		if (i + 1 < argc && !strcmp(argv[i], "--format"))
			format = argv[i + 1];
		else if (i + 1 < argc && !strcmp(argv[i], "-o"))
			file = argv[i + 1];
		else
			return out_fail(ROCMD_EINVAL,
			                "usage: rocmctl tune export [--format json|csv] [-o FILE]");
	}
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "format", format);
	if ((rc = call(ctx, "tune.export", p, &r)) != 0)
		return rc;
	f = file != NULL ? fopen(file, "w") : stdout;
	if (f == NULL) {
		fprintf(stderr, "rocmctl: %s: %s\n", file, strerror(errno));
		cJSON_Delete(r);
		return 1;
	}
	fputs(out_str(r, "data"), f);
	if (file != NULL && fclose(f) != 0) {
		fprintf(stderr, "rocmctl: %s: %s\n", file, strerror(errno));
		cJSON_Delete(r);
		return 1;
	}
	if (file != NULL)
		fprintf(stderr, "%.0f tuned shape(s) written to %s\n", out_num(r, "shapes"), file);
	cJSON_Delete(r);
	return 0;
}

static int
t_import(struct tune_ctx *ctx, int argc, char **argv)
{
	char *data = NULL;
	size_t len = 0, cap = 0, n;
	cJSON *p, *r = NULL;
	FILE *f;
	int rc;

	if (argc != 1)
		return out_fail(ROCMD_EINVAL, "usage: rocmctl tune import FILE");
	f = !strcmp(argv[0], "-") ? stdin : fopen(argv[0], "r");
	if (f == NULL) {
		fprintf(stderr, "rocmctl: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	do {
		if (len + 4096 + 1 > cap) {
			char *g = realloc(data, cap = cap * 2 + 8192);

			if (g == NULL) {
				free(data);
				if (f != stdin)
					fclose(f);
				return out_fail(ROCMD_ENOMEM, "out of memory");
			}
			data = g;
		}
		n = fread(data + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	data[len] = '\0';
	if (f != stdin)
		fclose(f);
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "data", data);
	free(data);
	if ((rc = call(ctx, "tune.import", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("%.0f tuned shape(s) imported\n", out_num(r, "stored"));
	cJSON_Delete(r);
	return 0;
}

int
rocmctl_tune(struct rocmd_client **client, const char *socket, int json, int argc, char **argv)
{
	struct tune_ctx ctx = {client, socket, json};
	const char *sub = argc > 0 ? argv[0] : "status";

	argc = argc > 0 ? argc - 1 : 0;
	argv = argv + (argc > 0 || sub != NULL ? 1 : 0);
	if (!strcmp(sub, "status"))
		return t_status(&ctx, argc, argv);
	if (!strcmp(sub, "start") || !strcmp(sub, "pause") || !strcmp(sub, "resume"))
		return t_control(&ctx, sub, argc);
	if (!strcmp(sub, "add"))
		return t_add(&ctx, argc, argv);
	if (!strcmp(sub, "results"))
		return t_results(&ctx, argc, argv);
	if (!strcmp(sub, "export"))
		return t_export(&ctx, argc, argv);
	if (!strcmp(sub, "report"))
		return t_report(&ctx, argc, argv);
	if (!strcmp(sub, "import"))
		return t_import(&ctx, argc, argv);
	{
		struct tune_vctx v = {client, socket, json};

		if (!strcmp(sub, "capture"))
			return tune_capture(&v, argc, argv);
		if (!strcmp(sub, "import-log"))
			return tune_import_log(&v, argc, argv);
		if (!strcmp(sub, "off") || !strcmp(sub, "on"))
			return tune_switch(&v, !strcmp(sub, "on"), argc, argv);
	}
	fprintf(stderr,
	        "rocmctl: unknown tune command '%s'\nusage: rocmctl tune "
	        "status|start|pause|resume|add|results|export|import|capture|import-log|off|on\n",
	        sub);
	return 2;
}
