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
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-tune-vendor.h"
#include "cmd.h"
#include "common/error.h"
#include "bench-store.h"
#include "report-html.h"

static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(&ctx->client, ctx->socket, method, params, result, NULL, NULL);
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
		const char *keys[] = {"state",     "decision", "device",  "passed over", "sdk",
		                      "driver",    "re-tune",  "input",   "power",       "gpu users",
		                      "cpu load",  "policy",   "jobs",    "current",     "preemption"};
		const char *vals[] = {
		    out_str(r, "state"),
		    out_str(r, "decision"),
		    dev != NULL && cJSON_GetObjectItemCaseSensitive(dev, "name") ? device : "-",
		    dev != NULL && cJSON_GetObjectItemCaseSensitive(dev, "passed_over")
		        ? out_str(dev, "passed_over")
		        : "-",
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
		out_kv(stdout, 15, keys, vals);
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

	out_table_state_col(t, 1);
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

int
cmd_tune_status(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	int rc;

	(void)a;
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

/* tune watch: tune.status twice a second; the running job's evaluations
 * as a progress bar (a line per job when not on a terminal) until the queue
 * is empty. 0 when it emptied with no job failed, 1 when some failed, 5
 * when nothing would run (an empty queue, tuning paused or off). */
int
cmd_tune_watch(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	double failed0 = -1, done0 = -1;
	char best[32];
	int rc;

	(void)a;
	ctx->bar.unit = "evaluations";
	for (;;) {
		cJSON *r = NULL;
		const cJSON *jobs, *cur;
		double queued, running, failed, done;
		const char *state;

		if ((rc = call(ctx, "tune.status", NULL, &r)) != 0) {
			out_bar_clear(&ctx->bar);
			return rc;
		}
		jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
		cur = cJSON_GetObjectItemCaseSensitive(r, "current");
		state = out_str(r, "state");
		queued = out_num(jobs, "queued") + out_num(jobs, "paused");
		running = out_num(jobs, "running");
		failed = out_num(jobs, "failed");
		done = out_num(jobs, "done");
		if (failed0 < 0) {
			failed0 = failed;
			done0 = done;
		}
		if (cur != NULL && !strcmp(state, "tuning")) {
			char label[32];

			snprintf(label, sizeof(label), "job %.0f", out_num(cur, "job"));
			out_bar_draw(&ctx->bar, 10, label, out_num(cur, "evaluations"),
			             out_num(cur, "budget"), "best %s ms, %.0f queued",
			             num_or(cur, "best_ms", "%.4f", best, sizeof(best)), queued);
		} else if (queued + running > 0 && strcmp(state, "paused") != 0 &&
		           strcmp(state, "idle") != 0) {
			out_bar_text(&ctx->bar, "%s: %s", state, out_str(r, "decision"));
		} else {
			int nothing = done == done0 && failed == failed0;

			out_bar_clear(&ctx->bar);
			if (ctx->json)
				out_json(r);
			else if (queued + running > 0)
				printf("Not tuning: %s; %.0f job(s) waiting\n", out_str(r, "decision"),
				       queued + running);
			else
				printf("The tuning queue is empty: %.0f job(s) done, %.0f failed while "
				       "watching%s\n",
				       done - done0, failed - failed0,
				       failed > failed0 ? " (rocmctl tune results says why)" : "");
			cJSON_Delete(r);
			if (nothing)
				return EXIT_NOTHING;
			return failed > failed0 ? EXIT_ERROR : 0;
		}
		cJSON_Delete(r);
		out_sleep_ms(500);
	}
}

int
cmd_tune_control(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	char method[32];
	cJSON *r = NULL;
	int rc;

	snprintf(method, sizeof(method), "tune.%s", cli_cmd_of(a)->name);
	if ((rc = call(ctx, method, NULL, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("%s: %s\n", out_str(r, "state"), out_str(r, "decision"));
	cJSON_Delete(r);
	return 0;
}

int
cmd_tune_add(void *arg, const struct cli_args *a)
{
	static const char *const opts[] = {"dtype", "trans"};
	struct cmd_ctx *ctx = arg;
	long long m, n, k;
	char tail;
	cJSON *p, *r = NULL;
	int rc;

	if (sscanf(a->pos[0], "%llux%llux%llu%c", &m, &n, &k, &tail) != 3 || m <= 0 || n <= 0 ||
	    k <= 0)
		return out_usage("'%s' is not a GEMM shape: give MxNxK, as 4096x4096x4096",
		                 a->pos[0]);
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "m", (double)m);
	cJSON_AddNumberToObject(p, "n", (double)n);
	cJSON_AddNumberToObject(p, "k", (double)k);
	for (int i = 0; i < 2; i++)
		if (cli_has(a, opts[i]))
			cJSON_AddStringToObject(p, opts[i], cli_str(a, opts[i], ""));
	if (cli_has(a, "batch"))
		cJSON_AddNumberToObject(p, "batch", (double)cli_int(a, "batch", 1));
	if (cli_has(a, "budget"))
		cJSON_AddNumberToObject(p, "budget", (double)cli_int(a, "budget", 1));
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

int
cmd_tune_results(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *target = a->npos > 0 ? a->pos[0] : NULL;
	cJSON *p = cJSON_CreateObject(), *r = NULL, *kernel, *j;
	int rc;

	if (cli_has(a, "all"))
		cJSON_AddBoolToObject(p, "all", 1);
	if (target != NULL)
		cJSON_AddStringToObject(p, "target", target);
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
	if (tune_results_vendor(r, target) > 0 && cJSON_GetArraySize(kernel) > 0)
		printf("\n");
	if (target == NULL && cJSON_GetArraySize(kernel) > 0)
		print_jobs(kernel);
	print_failures(cJSON_GetObjectItemCaseSensitive(r, "jobs"), target);
	cJSON_Delete(kernel);
	cJSON_Delete(r);
	return 0;
}

int
cmd_tune_report(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *file = cli_str(a, "html", NULL);
	char msg[4200];
	cJSON *p, *r = NULL, *good;
	FILE *f;
	int rc, plots = 0;

	p = cJSON_CreateObject();
	if (cli_has(a, "all"))
		cJSON_AddBoolToObject(p, "all", 1);
	if ((rc = call(ctx, "tune.report", p, &r)) != 0)
		return rc;
	if (ctx->json || file == NULL) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	/* The caller's own bench runs, the readable ones. */
	bench_store_list(1, &good);
	if ((f = fopen(file, "w")) == NULL ||
	    (plots = report_html_write(f, r, good), fclose(f) != 0)) {
		snprintf(msg, sizeof(msg), "%s: %s", file, strerror(errno));
		cJSON_Delete(r);
		cJSON_Delete(good);
		return out_error(EXIT_ERROR, msg);
	}
	fprintf(stderr, "%d plot(s) of %d job(s) written to %s\n", plots,
	        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "jobs")), file);
	cJSON_Delete(r);
	cJSON_Delete(good);
	return 0;
}

int
cmd_tune_export(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *format = cli_str(a, "format", "json"), *file = cli_str(a, "output", NULL);
	char msg[4200];
	cJSON *p, *r = NULL;
	FILE *f;
	int rc;

	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "format", format);
	if ((rc = call(ctx, "tune.export", p, &r)) != 0)
		return rc;
	f = file != NULL ? fopen(file, "w") : stdout;
	if (f == NULL || (fputs(out_str(r, "data"), f), file != NULL && fclose(f) != 0)) {
		snprintf(msg, sizeof(msg), "%s: %s", file, strerror(errno));
		cJSON_Delete(r);
		return out_error(EXIT_ERROR, msg);
	}
	if (file != NULL)
		fprintf(stderr, "%.0f tuned shape(s) written to %s\n", out_num(r, "shapes"), file);
	cJSON_Delete(r);
	return 0;
}

int
cmd_tune_import(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	char *data = NULL, msg[4200];
	size_t len = 0, cap = 0, n;
	cJSON *p, *r = NULL;
	FILE *f;
	int rc;

	f = !strcmp(a->pos[0], "-") ? stdin : fopen(a->pos[0], "r");
	if (f == NULL) {
		snprintf(msg, sizeof(msg), "%s: %s", a->pos[0], strerror(errno));
		return out_error(EXIT_ERROR, msg);
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
