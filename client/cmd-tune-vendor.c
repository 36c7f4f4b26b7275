/*
 * rocmctl tune capture|import-log|results|off|on for the vendor libraries
 * (see cmd-tune-vendor.h): which GEMMs a program runs, what tuning rocBLAS's
 * and hipBLASLt's own solutions found for each deploy target, and the
 * override that applies it.
 *
 * capture runs the program here, as the user who runs rocmctl (never in the
 * daemon), with the libraries' own logging sent to files in a private folder
 * (capture-unix.c, capture-win.c), reads those logs (kernels/vendor-log.h)
 * and sends the daemon the distinct GEMMs with their call counts
 * (tune.add_shapes). import-log does the same for a log someone already has:
 * rocblas-bench lines, hipblaslt-bench lines or a PyTorch TunableOp CSV.
 */
#include "cmd-tune-vendor.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/error.h"
#include "kernels/vendor-log.h"

#define LOG_MAX (256u << 20) /* one log file read */

int
tune_read_file(const char *path, char **out, size_t *outlen)
{
	FILE *f = !strcmp(path, "-") ? stdin : fopen(path, "rb");
	char *data = NULL, *g;
	size_t len = 0, cap = 0, n;

	*out = NULL;
	*outlen = 0;
	if (f == NULL)
		return -errno;
	do {
		if (len + 65536 + 1 > cap) {
			if (cap > LOG_MAX || (g = realloc(data, cap = cap * 2 + 65536 + 1)) == NULL) {
				free(data);
				if (f != stdin)
					fclose(f);
				return cap > LOG_MAX ? ROCMD_ETRUNCATED : ROCMD_ENOMEM;
			}
			data = g;
		}
		n = fread(data + len, 1, 65536, f);
		len += n;
	} while (n > 0);
	data[len] = '\0';
	if (f != stdin)
		fclose(f);
	*out = data;
	*outlen = len;
	return 0;
}

static cJSON *
shape_json(const struct vendor_shape *v)
{
	const struct gemm_problem *p = &v->p;
	cJSON *o = cJSON_CreateObject();
	char trans[3] = {p->ta == GEMM_T ? 'T' : 'N', p->tb == GEMM_T ? 'T' : 'N', '\0'};

	cJSON_AddStringToObject(o, "library", v->library);
	cJSON_AddStringToObject(o, "dtype", gemm_dtype_name(p->dtype));
	cJSON_AddStringToObject(o, "trans", trans);
	cJSON_AddNumberToObject(o, "m", (double)p->m);
	cJSON_AddNumberToObject(o, "n", (double)p->n);
	cJSON_AddNumberToObject(o, "k", (double)p->k);
	cJSON_AddNumberToObject(o, "batch", (double)p->batch);
	cJSON_AddNumberToObject(o, "lda", (double)p->lda);
	cJSON_AddNumberToObject(o, "ldb", (double)p->ldb);
	cJSON_AddNumberToObject(o, "ldc", (double)p->ldc);
	if (p->batch > 1) {
		cJSON_AddNumberToObject(o, "stride_a", (double)p->stride_a);
		cJSON_AddNumberToObject(o, "stride_b", (double)p->stride_b);
		cJSON_AddNumberToObject(o, "stride_c", (double)p->stride_c);
	}
	cJSON_AddNumberToObject(o, "alpha", p->alpha);
	cJSON_AddNumberToObject(o, "beta", p->beta);
	cJSON_AddNumberToObject(o, "calls", (double)v->calls);
	if (v->ms > 0)
		cJSON_AddNumberToObject(o, "ms", v->ms);
	return o;
}

/* Prints what S holds, a line per library. */
static void
summary(FILE *f, const struct vendor_shapes *s)
{
	static const char *const libs[] = {"rocblas", "hipblaslt", "", "rocmd-gemm"};
	static const char *const names[] = {"rocBLAS", "hipBLASLt", "TunableOp", "librocmd-gemm"};

	for (int l = 0; l < 4; l++) {
		int64_t calls = 0;
		size_t n = 0;

		for (size_t i = 0; i < s->n; i++)
			if (!strcmp(s->v[i].library, libs[l])) {
				n++;
				calls += s->v[i].calls;
			}
		if (n > 0)
			fprintf(f, "%s: %lld GEMM call(s), %zu distinct shape(s)\n", names[l],
			        (long long)calls, n);
	}
	if (s->skipped > 0)
		fprintf(f, "%lld GEMM line(s) skipped: not tunable here (%s)\n", (long long)s->skipped,
		        s->skip_why);
}

/* Sends S to the daemon: one tune.add_shapes per source and chunk. */
static int
send_shapes(struct cmd_ctx *ctx, const struct vendor_shapes *s, const char *source,
            const char *detail)
{
	int queued = 0, existing = 0, targets = 0, kernel = 0, rc = 0;
	char note[300] = "";

	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		/* TunableOp's lines are their own source (they carry a time). */
		const char *src = pass == 0 ? source : "tunableop";
		size_t i = 0;

		while (i < s->n && rc == 0) {
			cJSON *p = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(p, "shapes"), *r = NULL;
			int n = 0;

			for (; i < s->n && n < VENDOR_SHAPES_PER_CALL; i++) {
				if ((strcmp(s->v[i].source, "tunableop") == 0) != (pass == 1))
					continue;
				cJSON_AddItemToArray(arr, shape_json(&s->v[i]));
				n++;
			}
			if (n == 0) {
				cJSON_Delete(p);
				break;
			}
			cJSON_AddStringToObject(p, "source", src);
			cJSON_AddStringToObject(p, "detail", detail);
			rc = out_call(&ctx->client, ctx->socket, "tune.add_shapes", p, &r, NULL,
			              NULL);
			if (rc != 0)
				break;
			queued += (int)out_num(r, "queued");
			existing += (int)out_num(r, "existing");
			if ((int)out_num(r, "targets") > targets)
				targets = (int)out_num(r, "targets");
			kernel += (int)out_num(r, "kernel_jobs");
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "note")))
				snprintf(note, sizeof(note), "%s", out_str(r, "note"));
			cJSON_Delete(r);
		}
	}
	if (rc != 0)
		return rc;
	if (ctx->json) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "shapes", (double)s->n);
		cJSON_AddNumberToObject(o, "queued", queued);
		cJSON_AddNumberToObject(o, "existing", existing);
		cJSON_AddNumberToObject(o, "targets", targets);
		cJSON_AddNumberToObject(o, "kernel_jobs", kernel);
		cJSON_AddNumberToObject(o, "skipped", (double)s->skipped);
		out_json(o);
		cJSON_Delete(o);
	} else {
		printf("%d tuning job(s) queued, %d already queued, for %d target(s)", queued, existing,
		       targets);
		if (kernel > 0)
			printf(" and %d job(s) of rocmd's kernels (librocmd-gemm's tuned library)",
			       kernel);
		printf("\n");
		if (note[0])
			printf("note: %s\n", note);
	}
	return 0;
}

/* Keeps the logs where the user can import them later (as an admin). */
static void
keep_logs(const char *text, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "rocmd-capture-%lld.log", (long long)tune_capture_pid());
	f = fopen(path, "wb");
	if (f == NULL)
		return;
	if (fwrite(text, 1, len, f) == len && fclose(f) == 0)
		fprintf(stderr, "rocmctl: the captured logs are in %s; queue them later with "
		                "`rocmctl tune import-log %s`\n",
		        path, path);
	else
		fclose(f);
}

int
cmd_tune_capture(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	struct vendor_shapes s;
	char detail[256] = "", why[256] = "";
	char *logs = NULL, **argv = (char **)a->pos;
	size_t len = 0;
	int argc = a->npos, status = 0, rc;

	for (int i = 0; i < argc && strlen(detail) + 2 < sizeof(detail); i++)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), "%s%s",
		         i ? " " : "", argv[i]);
	rc = tune_capture_run(argv, &logs, &len, &status, why, sizeof(why));
	if (rc < 0) {
		free(logs);
		return out_fail(rc, why);
	}
	memset(&s, 0, sizeof(s));
	rc = vendor_log_parse(&s, logs, len);
	if (!ctx->json)
		fprintf(stderr, "rocmctl: %s %s\n", argv[0], why);
	if (rc < 0) {
		vendor_shapes_free(&s);
		free(logs);
		return out_fail(rc, "the captured logs could not be read");
	}
	if (!ctx->json)
		summary(stdout, &s);
	if (s.n == 0) {
		if (!ctx->json)
			printf("no rocBLAS, hipBLASLt or librocmd-gemm GEMM was logged: nothing to "
			       "queue\n");
		vendor_shapes_free(&s);
		free(logs);
		return status == 0 ? EXIT_NOTHING : EXIT_ERROR;
	}
	rc = send_shapes(ctx, &s, "capture", detail);
	if (rc != 0)
		keep_logs(logs, len);
	vendor_shapes_free(&s);
	free(logs);
	return rc;
}

int
cmd_tune_import_log(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	struct vendor_shapes s;
	const char *const *argv = a->pos;
	char *text = NULL, msg[4200];
	size_t len = 0;
	int rc;

	if ((rc = tune_read_file(argv[0], &text, &len)) < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", argv[0], rocmd_strerror(rc));
		return out_error(EXIT_ERROR, msg);
	}
	memset(&s, 0, sizeof(s));
	rc = vendor_log_parse(&s, text, len);
	free(text);
	if (rc < 0) {
		vendor_shapes_free(&s);
		return out_fail(rc, "the log could not be read");
	}
	if (!ctx->json)
		summary(stdout, &s);
	if (s.n == 0) {
		vendor_shapes_free(&s);
		snprintf(msg, sizeof(msg),
		         "%s holds no rocblas-bench, hipblaslt-bench or TunableOp GEMM line",
		         argv[0]);
		return out_error(EXIT_ERROR, msg);
	}
	rc = send_shapes(ctx, &s, "log", argv[0]);
	vendor_shapes_free(&s);
	return rc;
}

/* ---- results ---- */

static const char *
fmt(const cJSON *o, const char *key, const char *f, char *buf, size_t len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		return "-";
	snprintf(buf, len, f, v->valuedouble);
	return buf;
}

static int
same_problem(const cJSON *a, const cJSON *b)
{
	static const char *const keys[] = {"dtype", "trans", "shape"};

	for (int i = 0; i < 3; i++)
		if (strcmp(out_str(a, keys[i]), out_str(b, keys[i])) != 0)
			return 0;
	return out_num(a, "batch") == out_num(b, "batch");
}

/* Which library is fastest for J's problem over every finished job: the
 * vendor libraries' own choice, their tuned one, rocmd's kernel. */
static const char *
won(const cJSON *jobs, const cJSON *j, char *buf, size_t len)
{
	const cJSON *o;
	double best = INFINITY;

	snprintf(buf, len, "-");
	cJSON_ArrayForEach(o, jobs)
	{
		double ms = out_num(o, "best_ms"), d = out_num(o, "default_ms");

		if (strcmp(out_str(o, "state"), "done") != 0 || !same_problem(o, j))
			continue;
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "target")) && d > 0 &&
		    (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "written")) || !(ms > 0)))
			ms = d; /* an entry not written runs the library's own choice */
		if (ms > 0 && ms < best) {
			best = ms;
			snprintf(buf, len, "%s", out_str(o, "backend"));
		}
	}
	return buf;
}

static void
print_overrides(const cJSON *ovs, const char *target)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, ovs)
	{
		if (target != NULL && strcmp(out_str(o, "target"), target) != 0)
			continue;
		printf("%s %s override: %s, %.0f entr%s, %s", out_str(o, "target"),
		       out_str(o, "library"), out_str(o, "state"), out_num(o, "entries"),
		       out_num(o, "entries") == 1 ? "y" : "ies", out_str(o, "path"));
		if (!strcmp(out_str(o, "state"), "live"))
			printf(" (%s)", out_str(o, "variable"));
		printf("\n");
		if (out_str(o, "detail")[0] != '\0' && strcmp(out_str(o, "detail"), "-") != 0)
			printf("  %s\n", out_str(o, "detail"));
	}
}

int
tune_results_vendor(const cJSON *r, const char *target)
{
	static const char *const hdr[] = {"TARGET",  "LIBRARY", "PROBLEM", "CALLS",
	                                  "DEFAULT MS", "TUNED MS", "SPEEDUP", "WON",
	                                  "LIVE",    "SOURCE"};
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs");
	struct out_table *t = out_table_new(10, hdr);
	const cJSON *j;
	char b[6][64], problem[160];
	int rows = 0;

	cJSON_ArrayForEach(j, jobs)
	{
		const cJSON *tg = cJSON_GetObjectItemCaseSensitive(j, "target");
		int written = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "written"));
		double best = out_num(j, "best_ms"), dflt = out_num(j, "default_ms");

		if (!cJSON_IsString(tg) || strcmp(out_str(j, "state"), "done") != 0)
			continue;
		if (target != NULL && strcmp(tg->valuestring, target) != 0)
			continue;
		snprintf(problem, sizeof(problem), "%s %s %s%s%s", out_str(j, "dtype"),
		         out_str(j, "trans"), out_str(j, "shape"), out_num(j, "batch") > 1 ? " x" : "",
		         out_num(j, "batch") > 1 ? fmt(j, "batch", "%.0f", b[5], 64) : "");
		/* The tuned time is what the program gets: the winner where its
		 * entry is written, else the library's own choice. */
		if (!written)
			best = dflt;
		snprintf(b[2], sizeof(b[2]), best > 0 ? "%.4f" : "-", best);
		snprintf(b[3], sizeof(b[3]), best > 0 && dflt > 0 ? "%.3fx" : "-", dflt / best);
		{
			const char *cells[] = {tg->valuestring,
			                       out_str(j, "backend"),
			                       problem,
			                       out_num(j, "calls") > 0 ? fmt(j, "calls", "%.0f", b[0], 64)
			                                               : "-",
			                       fmt(j, "default_ms", "%.4f", b[1], 64),
			                       b[2],
			                       b[3],
			                       won(jobs, j, b[4], 64),
			                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "live"))
			                           ? "yes"
			                       : written ? "written"
			                                 : "no",
			                       out_str(j, "source")};
			out_table_row(t, cells);
			rows++;
		}
	}
	if (rows > 0)
		out_table_print(t, stdout);
	out_table_free(t);
	print_overrides(cJSON_GetObjectItemCaseSensitive(r, "overrides"), target);
	return rows;
}

int
cmd_tune_switch(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *const *argv = a->pos;
	int on = strcmp(cli_cmd_of(a)->name, "on") == 0, rc;
	cJSON *p, *r = NULL;

	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "target", argv[0]);
	if ((rc = out_call(&ctx->client, ctx->socket, on ? "tune.on" : "tune.off", p, &r, NULL,
	                   NULL)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
	} else {
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "note")))
			printf("%s\n", out_str(r, "note"));
		print_overrides(cJSON_GetObjectItemCaseSensitive(r, "overrides"), argv[0]);
	}
	cJSON_Delete(r);
	return 0;
}
