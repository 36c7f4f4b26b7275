/*
 * rocmctl doctor [--fix]: asks the daemon's doctor.run to look for what
 * breaks rocBLAS for users (docs/PROTOCOL.md, "Doctor"), sending the
 * variables of this shell that it judges, and prints each finding: its
 * severity (coloured on a terminal), the explanation, the evidence and the
 * fix. With --fix (admin) the daemon queues the fixes it can apply (deploys);
 * this waits for the deploy queue to drain, says how each ended (lib
 * history) and runs the checks again. --json prints the daemon's result.
 * Exit 0 without error findings, 6 (EXIT_FINDINGS) with one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

#define FIX_WAIT_S 1200

static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(&ctx->client, ctx->socket, method, params, result, NULL, NULL);
}

static cJSON *
doctor_params(int fix)
{
	static const char *const vars[] = {
	    "HSA_OVERRIDE_GFX_VERSION",       "HIP_VISIBLE_DEVICES",
	    "ROCBLAS_TENSILE_LIBPATH",        "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH",
	    "HIPBLASLT_TUNING_OVERRIDE_FILE", NULL};
	cJSON *p = cJSON_CreateObject(), *env = cJSON_AddObjectToObject(p, "env");

	cJSON_AddBoolToObject(p, "fix", fix);
#ifdef _WIN32
	cJSON_AddStringToObject(env, "platform", "windows");
#else
	cJSON_AddStringToObject(env, "platform", "linux");
#endif
	for (int i = 0; vars[i] != NULL; i++) {
		const char *v = getenv(vars[i]);
		if (v != NULL)
			cJSON_AddStringToObject(env, vars[i], v);
	}
	return p;
}

/* One evidence value as text: strings, numbers, arrays of either or of
 * objects (their members joined). */
static void
value_text(const cJSON *v, char *buf, size_t len)
{
	const cJSON *it;
	size_t used = 0;

	buf[0] = '\0';
	if (cJSON_IsString(v)) {
		snprintf(buf, len, "%s", v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		snprintf(buf, len, "%.0f", v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "yes" : "no");
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		cJSON_ArrayForEach(it, v)
		{
			char one[512];
			value_text(it, one, sizeof(one));
			if (cJSON_IsObject(v) && used < len)
				used += (size_t)snprintf(buf + used, len - used, "%s%s %s",
				                         used ? ", " : "", it->string, one);
			else if (used < len)
				used += (size_t)snprintf(buf + used, len - used, "%s%s",
				                         used ? (cJSON_IsObject(it) ? "; " : ", ") : "",
				                         one);
		}
	}
}

/* PREFIX then TEXT, wrapped at spaces to the terminal's width (out_width),
 * each further line indented by HANG spaces; one line off a terminal. */
static void
print_wrapped(int indent, int hang, const char *prefix, const char *text)
{
	int width = out_width(), col = indent + (int)strlen(prefix), first = 1;

	printf("%*s%s", indent, "", prefix);
	while (*text != '\0') {
		int n;
		while (*text == ' ')
			text++;
		if ((n = (int)strcspn(text, " ")) == 0)
			break;
		if (!first && width > 0 && col + 1 + n >= width) {
			printf("\n%*s", hang, "");
			col = hang;
		} else if (!first) {
			putchar(' ');
			col++;
		}
		printf("%.*s", n, text);
		col += n;
		text += n;
		first = 0;
	}
	putchar('\n');
}

static void
print_finding(const cJSON *f)
{
	const char *sev = out_str(f, "severity");
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(f, "evidence"), *it;
	const cJSON *fixed = cJSON_GetObjectItemCaseSensitive(f, "fixed");
	const cJSON *failed = cJSON_GetObjectItemCaseSensitive(f, "fix_failed");
	char paint[64], word[16], val[4096];

	snprintf(word, sizeof(word), "%-7s", sev);
	printf("%s %s%s%s\n", out_paint(word, out_severity(sev), paint, sizeof(paint)),
	       out_str(f, "id"), cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "target")) ? "  " : "",
	       cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "target")) ? out_str(f, "target")
	                                                                      : "");
	print_wrapped(2, 2, "", out_str(f, "explanation"));
	cJSON_ArrayForEach(it, ev)
	{
		char key[128];
		value_text(it, val, sizeof(val));
		snprintf(key, sizeof(key), "%s: ", it->string);
		print_wrapped(4, 6, key, val[0] ? val : "-");
	}
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "fix"))) {
		snprintf(val, sizeof(val), "%s%s", out_str(f, "fix"),
		         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "fixable")) &&
		                 !cJSON_IsString(fixed)
		             ? " [--fix applies it]"
		             : "");
		print_wrapped(2, 4, "fix: ", val);
	}
	if (cJSON_IsString(fixed))
		print_wrapped(2, 4, "done: ", fixed->valuestring);
	if (cJSON_IsString(failed))
		print_wrapped(2, 4, "not fixed: ", failed->valuestring);
}

/* Prints the findings and the counts; the exit code they call for. */
static int
print_result(const cJSON *r)
{
	const cJSON *f, *c = cJSON_GetObjectItemCaseSensitive(r, "counts");
	int n = 0, errors = (int)out_num(c, "error");

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "findings"))
	{
		if (n++ > 0)
			printf("\n");
		print_finding(f);
	}
	if (n == 0)
		printf("No problems found (%.0f target%s, %.0f GPU%s checked).\n",
		       out_num(r, "targets"), out_num(r, "targets") == 1 ? "" : "s",
		       out_num(r, "gpus"), out_num(r, "gpus") == 1 ? "" : "s");
	else
		printf("\n%d finding%s: %d error%s, %.0f warning%s.\n", n, n == 1 ? "" : "s", errors,
		       errors == 1 ? "" : "s", out_num(c, "warning"),
		       out_num(c, "warning") == 1 ? "" : "s");
	return errors > 0 ? EXIT_FINDINGS : EXIT_OK;
}

/* Waits until the deploy queue is empty (the fixes run there); 0 or an exit code. */
static int
wait_queue(struct cmd_ctx *ctx)
{
	for (int i = 0; i < FIX_WAIT_S * 2; i++) {
		cJSON *r = NULL;
		int rc = call(ctx, "lib.status", NULL, &r);
		double q = rc == 0 ? out_num(r, "queued") : 0;
		cJSON_Delete(r);
		if (rc != 0)
			return rc;
		if (q == 0)
			return 0;
		out_sleep_ms(500);
	}
	return out_error(EXIT_ERROR, "the fixes did not finish in time: see rocmctl lib history");
}

/* What the newest history step of each fixed target says. */
static void
print_outcomes(struct cmd_ctx *ctx, const cJSON *r)
{
	const cJSON *f;
	int n = 0;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "findings"))
	{
		cJSON *p, *h = NULL;
		const cJSON *last;
		/* Deploys only: the override recovery's "done:" said how it ended. */
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "fixed")) ||
		    strncmp(cJSON_GetObjectItemCaseSensitive(f, "fixed")->valuestring, "queued", 6) != 0)
			continue;
		if (n++ == 0)
			printf("\nFixes:\n");
		p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "target", out_str(f, "target"));
		cJSON_AddNumberToObject(p, "limit", 5);
		if (call(ctx, "lib.history", p, &h) != 0)
			continue;
		/* The newest deploy step (a backup of new originals may follow it). */
		cJSON_ArrayForEach(last, cJSON_GetObjectItemCaseSensitive(h, "history"))
		{
			if (strcmp(out_str(last, "action"), "deploy") == 0)
				break;
		}
		if (last != NULL) {
			char paint[64];
			const char *o = out_str(last, "outcome");
			printf("  %s: %s %s: %s\n", out_str(f, "target"), out_str(last, "action"),
			       out_paint(o, out_severity(o), paint, sizeof(paint)),
			       out_str(last, "message"));
		}
		cJSON_Delete(h);
	}
}

int
cmd_doctor(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	int fix = cli_has(a, "fix"), rc;
	cJSON *r = NULL, *again = NULL;

	if ((rc = call(ctx, "doctor.run", doctor_params(fix), &r)) != 0)
		return rc;
	if (ctx->json) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "counts");
		rc = out_num(c, "error") > 0 ? EXIT_FINDINGS : EXIT_OK;
		out_json(r);
		cJSON_Delete(r);
		return rc;
	}
	rc = print_result(r);
	if (!fix || out_num(cJSON_GetObjectItemCaseSensitive(r, "counts"), "fixes_queued") == 0) {
		cJSON_Delete(r);
		return rc;
	}
	fflush(stdout);
	if ((rc = wait_queue(ctx)) != 0) {
		cJSON_Delete(r);
		return rc;
	}
	print_outcomes(ctx, r);
	cJSON_Delete(r);
	if ((rc = call(ctx, "doctor.run", doctor_params(0), &again)) != 0)
		return rc;
	printf("\nAfter the fixes:\n");
	rc = print_result(again);
	cJSON_Delete(again);
	return rc;
}
