/*
 * rocmctl bench list|compare|report: the caller's stored runs (bench-store.h)
 * as a table, the change per shape from one run to another with both
 * spreads, and the HTML page of them (report-html.c). `rocmctl bench` itself,
 * which makes the runs, is cmd-bench.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench-store.h"
#include "cmd.h"
#include "report-html.h"

int
cmd_bench_list(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	static const char *h[] = {"ID", "DATE", "DEVICE", "VARIANTS", "SHAPES", "ROUNDS"};
	struct out_table *t;
	const cJSON *r, *v;
	cJSON *runs;
	char when[64], vars[160], n[16], rounds[16];

	(void)a;
	bench_store_list(0, &runs);
	if (ctx->json) {
		out_json(runs);
		cJSON_Delete(runs);
		return 0;
	}
	if (cJSON_GetArraySize(runs) == 0) {
		printf("no bench runs stored (rocmctl bench runs one)\n");
		cJSON_Delete(runs);
		return 0;
	}
	t = out_table_new(6, h);
	cJSON_ArrayForEach(r, runs)
	{
		const char *row[6] = {out_str(r, "id"), NULL, NULL, vars, n, rounds};

		vars[0] = '\0';
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "error"))) {
			row[1] = "-";
			row[2] = out_str(r, "error");
			row[3] = row[4] = row[5] = "-";
			out_table_row(t, row);
			continue;
		}
		row[1] = out_time((long long)out_num(r, "created_unix") * 1000, when, sizeof(when));
		row[2] = out_str(cJSON_GetObjectItemCaseSensitive(r, "environment"), "device");
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "variants"))
		{
			size_t len = strlen(vars);

			snprintf(vars + len, sizeof(vars) - len, "%s%s", len ? "," : "", out_str(v, "name"));
		}
		snprintf(n, sizeof(n), "%d", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "problems")));
		snprintf(rounds, sizeof(rounds), "%.0f", out_num(r, "rounds"));
		out_table_row(t, row);
	}
	out_table_print(t, stdout);
	out_table_free(t);
	cJSON_Delete(runs);
	return 0;
}

/* The figure of VARIANT for PROBLEM in RUN, or NULL. */
static const cJSON *
figure_of(const cJSON *run, const char *problem, const char *variant)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(run, "problems"))
	if (!strcmp(out_str(p, "problem"), problem))
		return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "variants"),
		                                        variant);
	return NULL;
}

int
cmd_bench_compare(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	static const char *h[] = {"SHAPE", "VARIANT", NULL, NULL, "CHANGE"};
	cJSON *ra = NULL, *rb = NULL, *out = NULL;
	const cJSON *p, *v;
	char why[1024], ha[80], hb[80], cell[3][160];
	struct out_table *t = NULL;
	const char *hh[5];
	int rc = 0, rows = 0;

	if (bench_store_load(a->pos[0], &ra, why, sizeof(why)) < 0 ||
	    bench_store_load(a->pos[1], &rb, why, sizeof(why)) < 0) {
		cJSON_Delete(ra);
		return out_error(EXIT_ERROR, why);
	}
	snprintf(ha, sizeof(ha), "A %s", out_str(ra, "id"));
	snprintf(hb, sizeof(hb), "B %s", out_str(rb, "id"));
	memcpy(hh, h, sizeof(hh));
	hh[2] = ha;
	hh[3] = hb;
	out = cJSON_CreateArray();
	if (!ctx->json)
		t = out_table_new(5, hh);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(ra, "problems"))
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(p, "variants"))
	{
		const cJSON *fb = figure_of(rb, out_str(p, "problem"), v->string);
		double ma = out_num(v, "median_ms"), mb = out_num(fb, "median_ms");
		int noise;
		cJSON *o;

		if (fb == NULL || !(ma > 0) || !(mb > 0))
			continue;
		noise = bench_within_noise(v, fb);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "problem", out_str(p, "problem"));
		cJSON_AddStringToObject(o, "variant", v->string);
		cJSON_AddNumberToObject(o, "a_ms", ma);
		cJSON_AddNumberToObject(o, "b_ms", mb);
		cJSON_AddNumberToObject(o, "change", mb / ma - 1);
		cJSON_AddBoolToObject(o, "within_noise", noise);
		cJSON_AddItemToArray(out, o);
		rows++;
		if (t != NULL) {
			const char *row[5] = {out_str(p, "problem"), v->string, bench_fig(v, cell[0], 160),
			                      bench_fig(fb, cell[1], 160), cell[2]};

			snprintf(cell[2], sizeof(cell[2]), "%+.1f%%%s", (mb / ma - 1) * 100,
			         noise ? " (within the noise)" : mb < ma ? " (faster)" : " (slower)");
			out_table_row(t, row);
		}
	}
	if (rows == 0) {
		rc = out_error(EXIT_NOTHING, "the two runs have no shape and variant in common");
	} else if (ctx->json) {
		out_json(out);
	} else {
		out_table_print(t, stdout);
		printf("figures: the median of the rounds' medians [lowest-highest round]; a change "
		       "is within the noise when the two spreads overlap\n");
	}
	out_table_free(t);
	cJSON_Delete(out);
	cJSON_Delete(ra);
	cJSON_Delete(rb);
	return rc;
}

int
cmd_bench_report(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *file = cli_str(a, "html", NULL);
	char msg[4200];
	cJSON *good;
	FILE *f;
	int plots = 0;

	bench_store_list(1, &good);
	if (ctx->json || file == NULL) {
		out_json(good);
		cJSON_Delete(good);
		return 0;
	}
	if (cJSON_GetArraySize(good) == 0) {
		cJSON_Delete(good);
		return out_error(EXIT_NOTHING, "no bench runs are stored: nothing to report "
		                               "(rocmctl bench runs one)");
	}
	if ((f = fopen(file, "w")) == NULL ||
	    (plots = report_html_bench_write(f, good), fclose(f) != 0)) {
		snprintf(msg, sizeof(msg), "%s: %s", file, strerror(errno));
		cJSON_Delete(good);
		return out_error(EXIT_ERROR, msg);
	}
	fprintf(stderr, "%d plot(s) of %d bench run(s) written to %s\n", plots,
	        cJSON_GetArraySize(good), file);
	cJSON_Delete(good);
	return 0;
}
