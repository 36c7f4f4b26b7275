/*
 * rocmctl lib: deploy's commands (status, deploy, verify, history,
 * rollback, recover). Deploy, verify, rollback and recover wait for the
 * daemon's job and draw a progress bar on a terminal from its "progress"
 * notifications (the step:
 * plan, backup, stage, swap, verify, smoke, commit; bytes and files); --json
 * prints the daemon's JSON and no bar. For an overlay deploy the result says
 * exactly which variable to set; it is printed on its own line so scripts
 * can take it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/error.h"

static int
on_progress(const struct rocmd_rpc *msg, void *arg)
{
	struct cmd_ctx *ctx = arg;
	const cJSON *p = msg->params;
	const char *phase;

	if ((!ctx->bar.on && !ctx->bar.plain) || strcmp(msg->method, "progress") != 0 || p == NULL)
		return 0;
	phase = out_str(p, "phase");
	if (strcmp(phase, "queued") == 0)
		out_bar_text(&ctx->bar, "waiting for the deploy job ahead");
	else if (strcmp(phase, "deferred") == 0)
		out_bar_text(&ctx->bar, "deferred: waiting for %s to let go of the GPU",
			     out_str(p, "gpu_users"));
	else
		out_bar_draw(&ctx->bar, 8, phase, out_num(p, "bytes_done"), out_num(p, "bytes_total"),
			     "%.0f/%.0f files", out_num(p, "files_done"), out_num(p, "files_total"));
	return 0;
}

static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	int rc = out_call(&ctx->client, ctx->socket, method, params, result, on_progress, ctx);

	out_bar_clear(&ctx->bar);
	return rc;
}

/* The request's parameters from the options the command table let through
 * (each command takes its own subset); the one argument is the target. */
static cJSON *
lib_params(const struct cli_args *a)
{
	static const char *const nums[] = {"package", "limit", "generation"};
	cJSON *p = cJSON_CreateObject(), *force = NULL;
	const char *v;

	if ((v = cli_str(a, "target", a->npos > 0 ? a->pos[0] : NULL)) != NULL)
		cJSON_AddStringToObject(p, "target", v);
	if (cli_has(a, "overlay"))
		cJSON_AddBoolToObject(p, "overlay", 1);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (cli_has(a, nums[i]))
			cJSON_AddNumberToObject(p, nums[i], (double)cli_int(a, nums[i], 0));
	if (cli_has(a, "yes"))
		cJSON_AddBoolToObject(p, "yes", 1); /* the client's own: the confirmation given */
	if (cli_has(a, "dry-run"))
		cJSON_AddBoolToObject(p, "dry_run", 1);
	if (cli_has(a, "no-merge"))
		cJSON_AddBoolToObject(p, "no_merge", 1);
	if ((v = cli_str(a, "to", NULL)) != NULL)
		cJSON_AddStringToObject(p, "to", v);
	/* --force sdk,arch (or given again): the checks to skip. */
	for (int i = 0; (v = cli_nth(a, "force", i)) != NULL; i++) {
		if (force == NULL)
			force = cJSON_AddArrayToObject(p, "force");
		for (const char *s = v; *s != '\0';) {
			size_t n = strcspn(s, ",");
			char name[32];
			snprintf(name, sizeof(name), "%.*s", (int)n, s);
			if (n > 0)
				cJSON_AddItemToArray(force, cJSON_CreateString(name));
			s += n + (s[n] == ',');
		}
	}
	return p;
}

/* A deploy or rollback that is in place but left something for the admin
 * (its cleanup failed: lib recover says what to do) says so on stderr. */
static void
print_warning(const cJSON *r)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "warning");

	if (cJSON_IsString(w))
		fprintf(stderr, "rocmctl: warning: %s\n", w->valuestring);
}

static void
print_smoke(const cJSON *r)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "smoke_test");

	if (cJSON_IsObject(s))
		printf("GEMM smoke test: %s\n", out_str(s, "detail"));
}

/* What rocmd did on its own or what failed, not marked seen yet. */
static void
print_problems(const cJSON *a)
{
	const cJSON *it;
	char when[32];
	int n = 0;

	cJSON_ArrayForEach(it, a)
	{
		printf("problem #%.0f %s: %s\n", out_num(it, "id"),
		       out_time((long long)out_num(it, "time_ms"), when, sizeof(when)),
		       out_str(it, "message"));
		n++;
	}
	if (n > 0)
		printf("rocmctl lib ack marks %s seen\n", n == 1 ? "it" : "them");
}

/* A merged library (the files kept from the library in place): one line. */
static void
print_merged(const cJSON *r, const char *what)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "merged"), *a;
	char archs[256] = "", sz[32];

	if (!cJSON_IsObject(m))
		return;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(m, "archs"))
	{
		if (cJSON_IsString(a))
			snprintf(archs + strlen(archs), sizeof(archs) - strlen(archs), "%s%s",
			         archs[0] ? ", " : "", a->valuestring);
	}
	printf("%s: the package's files plus %.0f files (%s) for %s from %s\n", what,
	       out_num(m, "files"), out_size(out_num(m, "bytes"), sz, sizeof(sz)), archs,
	       out_str(m, "from"));
}

/* lib status: which of target IT's libraries drifted (an older daemon names
 * none: then rocBLAS's, without its name). */
static void
print_drift(const cJSON *it)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(it, "drift_libraries"), *l;
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(it, "hipblaslt");
	int n = 0;

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "drift")))
		return;
	cJSON_ArrayForEach(l, w)
	{
		int h = cJSON_IsString(l) && strcmp(l->valuestring, "hipblaslt") == 0;
		n++;
		if (h && cJSON_IsObject(lt))
			printf("%s: the hipBLASLt library on disk (%s) is no longer what rocmd "
			       "deployed (an update?)\n",
			       out_str(it, "name"), out_str(lt, "library"));
		else if (h)
			printf("%s: the hipBLASLt library rocmd deployed is gone (an update?)\n",
			       out_str(it, "name"));
		else
			printf("%s: the rocBLAS library on disk (%s) is no longer what rocmd "
			       "deployed (an SDK update?)\n",
			       out_str(it, "name"), out_str(it, "library"));
	}
	if (n == 0)
		printf(
		    "%s: the library on disk is no longer what rocmd deployed (an SDK update?)\n",
		    out_str(it, "name"));
}

int
cmd_lib_status(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *it, *a;
	struct out_table *t;
	static const char *const hdr[] = {"TARGET", "KIND",   "SDK",   "LIBRARY", "DEPLOYED",
	                                  "SINCE",  "BACKUP", "DRIFT", "MATCH"};
	char archs[256] = "";
	int rc;

	if ((rc = call(ctx, "lib.status", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = out_table_new(9, hdr);
	out_table_state_col(t, 7);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "targets"))
	{
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "deployed");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "backup");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "match");
		char dep[64] = "originals", since[32] = "-", bk[128] = "none", match[96] = "-",
		     sdk[160];
		snprintf(sdk, sizeof(sdk), "%s %s", out_str(it, "sdk"), out_str(it, "sdk_version"));
		if (cJSON_IsObject(d)) {
			snprintf(dep, sizeof(dep), "package #%.0f%s", out_num(d, "package"),
			         cJSON_HasObjectItem(d, "merged") ? " (merged)" : "");
			if (cJSON_HasObjectItem(d, "since_ms"))
				out_time((long long)out_num(d, "since_ms"), since, sizeof(since));
		}
		if (cJSON_HasObjectItem(it, "interrupted"))
			strncat(dep, " (interrupted)", sizeof(dep) - strlen(dep) - 1);
		if (cJSON_IsObject(b)) {
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(b, "generations");
			char sz[32], disk[32];
			snprintf(bk, sizeof(bk), "%.0f files, %s%s", out_num(b, "files"),
			         out_size(out_num(b, "bytes"), sz, sizeof(sz)),
			         cJSON_HasObjectItem(b, "adopted_from") ? " (adopted)" : "");
			if (cJSON_IsObject(g))
				snprintf(bk + strlen(bk), sizeof(bk) - strlen(bk),
				         "; %.0f generation%s, %s on disk", out_num(g, "count"),
				         out_num(g, "count") == 1 ? "" : "s",
				         out_size(out_num(g, "disk_bytes"), disk, sizeof(disk)));
		}
		if (cJSON_IsObject(m))
			snprintf(match, sizeof(match), "#%.0f for %s", out_num(m, "package"),
			         out_str(m, "arch"));
		{
			const char *cells[] = {
			    out_str(it, "name"),
			    out_str(it, "kind"),
			    sdk,
			    out_str(it, "library"),
			    dep,
			    since,
			    bk,
			    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "drift")) ? "YES"
			                                                                : "no",
			    match};
			out_table_row(t, cells);
		}
	}
	out_table_print(t, stdout);
	out_table_free(t);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "targets"))
	{
		if (cJSON_HasObjectItem(it, "environment") &&
		    cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(it, "deployed")))
			printf("%s: set %s for applications to use it\n", out_str(it, "name"),
			       out_str(it, "environment"));
		if (cJSON_HasObjectItem(it, "interrupted")) {
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(it, "interrupted");
			const char *h = out_str(in, "holds");
			printf(
			    "%s: a deploy of %s was interrupted at step '%s' and recovery has not "
			    "finished it: the target holds %s; rocmctl lib recover %s finishes or "
			    "undoes it, or says what stands in the way\n",
			    out_str(it, "name"), out_str(in, "label"), out_str(in, "step"),
			    strcmp(h, "new") == 0   ? "its new content"
			    : strcmp(h, "old") == 0 ? "its previous content"
			    : strcmp(h, "mixed") == 0
			        ? "the library folder of one and the binary of the other"
			        : "content rocmd cannot tell",
			    out_str(it, "name"));
		}
		print_drift(it);
		if (cJSON_HasObjectItem(it, "match_problem"))
			printf("%s: %s\n", out_str(it, "name"), out_str(it, "match_problem"));
		{
			const cJSON *rt = cJSON_GetObjectItemCaseSensitive(it, "route");
			const cJSON *lt = cJSON_GetObjectItemCaseSensitive(it, "hipblaslt"), *c;
			if (cJSON_IsObject(rt))
				printf("%s: route %s: %s\n", out_str(it, "name"), out_str(rt, "by"),
				       out_str(rt, "why"));
			if (cJSON_IsObject(lt))
				printf("%s: hipBLASLt %s (%s)\n", out_str(it, "name"),
				       out_str(lt, "library"), out_str(lt, "note"));
			cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(it, "gpu_coverage"))
			{
				const cJSON *h = cJSON_GetObjectItemCaseSensitive(c, "hipblaslt");
				printf("%s: GPU %s: rocBLAS %s, hipBLASLt %s\n",
				       out_str(it, "name"), out_str(c, "arch"),
				       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "rocblas"))
				           ? "covered"
				           : "NOT covered",
				       cJSON_IsNull(h)   ? "none"
				       : cJSON_IsTrue(h) ? "covered"
				                         : "NOT covered");
			}
		}
		{
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "deployed");
			char line[64];
			if (cJSON_IsObject(d) && cJSON_HasObjectItem(d, "merged")) {
				snprintf(line, sizeof(line), "%s: package #%.0f is merged",
				         out_str(it, "name"), out_num(d, "package"));
				print_merged(d, line);
			}
			/* What the deploy in place did to each folder. */
			if (cJSON_IsObject(d) && cJSON_HasObjectItem(d, "rocblas"))
				printf("%s: package #%.0f: rocBLAS %s\n", out_str(it, "name"),
				       out_num(d, "package"), out_str(d, "rocblas"));
			if (cJSON_IsObject(d) && cJSON_HasObjectItem(d, "hipblaslt"))
				printf("%s: package #%.0f: %s\n", out_str(it, "name"),
				       out_num(d, "package"), out_str(d, "hipblaslt"));
		}
	}
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(r, "gpu_archs"))
	{
		if (archs[0])
			strncat(archs, ",", sizeof(archs) - strlen(archs) - 1);
		strncat(archs, a->valuestring, sizeof(archs) - strlen(archs) - 1);
	}
	printf("GPUs: %s; when the GPU is busy: %s; after SDK changes: %s\n",
	       archs[0] ? archs : "none found", out_str(r, "gpu_busy_policy"),
	       out_str(r, "sync_policy"));
	print_problems(cJSON_GetObjectItemCaseSensitive(r, "problems"));
	cJSON_Delete(r);
	return 0;
}

/* lib deploy --dry-run: each file's fate, the bytes, each GPU before and after. */
static void
print_dry_run(const cJSON *r)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "target");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, "files"), *it;
	char sz[32];
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(r, "hipblaslt");

	printf("Dry run, nothing changed: package #%.0f %s to %s (%s)\n", out_num(r, "package"),
	       out_str(r, "package_name"), out_str(t, "name"), out_str(t, "library"));
	if (cJSON_HasObjectItem(r, "rocblas"))
		printf("rocBLAS at %s %s\n", out_str(t, "library"), out_str(r, "rocblas"));
	/* rocBLAS's files, then hipBLASLt's ("folder": "hipblaslt"). */
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "list"))
	{
		const char *from = out_str(it, "from");
		int pkg = strcmp(from, "") == 0 || strcmp(from, "the package") == 0;
		printf("  %s%-8s %s (%s)%s%s\n",
		       cJSON_HasObjectItem(it, "folder") ? "hipBLASLt " : "", out_str(it, "action"),
		       out_str(it, "path"), out_size(out_num(it, "bytes"), sz, sizeof(sz)),
		       pkg ? "" : " from ", pkg ? "" : from);
	}
	print_merged(r, "Merged library");
	if (cJSON_HasObjectItem(r, "hipblaslt_note"))
		printf("%s\n", out_str(r, "hipblaslt_note"));
	if (cJSON_IsObject(lt))
		printf("hipBLASLt files: %.0f added, %.0f replaced, %.0f kept, %.0f removed%s\n",
		       out_num(lt, "add"), out_num(lt, "replace"), out_num(lt, "keep"),
		       out_num(lt, "remove"),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lt, "compared_by_hash"))
		           ? ""
		           : " (by name: what is there was not put there by rocmd)");
	printf("%s: %.0f added, %.0f replaced, %.0f kept, %.0f removed%s; %s to copy%s\n",
	       cJSON_IsObject(lt) ? "rocBLAS files" : "Files", out_num(f, "add"), out_num(f, "replace"),
	       out_num(f, "keep"), out_num(f, "remove"),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "compared_by_hash"))
	           ? ""
	           : " (by name: what is there was not put there by rocmd)",
	       out_size(out_num(r, "bytes_to_copy"), sz, sizeof(sz)),
	       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "binary_replaced"))
	           ? ", and the rocBLAS binary replaced"
	           : "");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "gpus"))
	{
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "before");
		int after = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "after"));
		const char *change = !cJSON_IsBool(b)
		                         ? (after ? "served after" : "NOT served after")
		                     : cJSON_IsTrue(b) ? (after ? "kept" : "LOST")
		                     : after           ? "gained"
		                                       : "not served before or after";
		printf("GPU %s: %s\n", out_str(it, "arch"), change);
	}
}

/* On a terminal, a deploy forced past the arch check (or replacing the
 * whole folder: --no-merge) that would leave a GPU without kernels asks first
 * (its dry run says which); -y skips the question. 0 to go on; *CONFIRMED
 * set when the user answered yes. */
static int
confirm_lost_archs(struct cmd_ctx *ctx, const cJSON *p, int *confirmed)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "force"), *it;
	cJSON *q, *r = NULL;
	char lost[256] = "", line[16] = "";
	int arch = 0, rc;

	cJSON_ArrayForEach(it, f)
	{
		arch |= cJSON_IsString(it) && strcmp(it->valuestring, "arch") == 0;
	}
	arch |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "no_merge"));
	if (!arch || ctx->json || cJSON_HasObjectItem(p, "dry_run") || !isatty(STDIN_FILENO))
		return 0;
	q = cJSON_Duplicate(p, 1);
	cJSON_AddBoolToObject(q, "dry_run", 1);
	if ((rc = call(ctx, "lib.deploy", q, &r)) != 0)
		return rc;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "gpus"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "before")) &&
		    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "after")))
			snprintf(lost + strlen(lost), sizeof(lost) - strlen(lost), "%s%s",
			         lost[0] ? ", " : "", out_str(it, "arch"));
	}
	cJSON_Delete(r);
	if (lost[0] == '\0')
		return 0;
	fprintf(stderr,
	        "This deploy leaves this machine's %s without kernels (the library in place "
	        "serves it). Deploy anyway? Type yes: ",
	        lost);
	if (fgets(line, sizeof(line), stdin) == NULL || strcmp(line, "yes\n") != 0) {
		fprintf(stderr, "rocmctl: nothing deployed\n");
		return EXIT_ERROR;
	}
	*confirmed = 1;
	return 0;
}

int
cmd_lib_deploy(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *t;
	char a[32];
	int rc, confirmed;

	confirmed = cJSON_HasObjectItem(p, "yes");
	cJSON_DeleteItemFromObject(p, "yes");
	if (!confirmed && (rc = confirm_lost_archs(ctx, p, &confirmed)) != 0) {
		cJSON_Delete(p);
		return rc;
	}
	/* -y, or the question answered: the GPUs a --no-merge deploy leaves
	 * without kernels are accepted (without either the daemon refuses,
	 * naming -y). */
	if (confirmed && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "no_merge")) &&
	    !cJSON_HasObjectItem(p, "dry_run"))
		cJSON_AddBoolToObject(p, "accept_loss", 1);
	if ((rc = call(ctx, "lib.deploy", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(r, "target");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "dry_run"))) {
		print_dry_run(r);
		cJSON_Delete(r);
		return 0;
	}
	printf("Deployed package #%.0f %s to %s (%s): %.0f files, %s in %.1f s\n",
	       out_num(r, "package"), out_str(r, "package_name"), out_str(t, "name"),
	       cJSON_HasObjectItem(r, "rocblas") ? "hipBLASLt only" : out_str(t, "library"),
	       out_num(r, "files"),
	       out_size(out_num(r, "bytes"), a, sizeof(a)),
	       (out_num(r, "stage_us") + out_num(r, "swap_us") + out_num(r, "verify_us")) / 1e6);
	print_merged(r, "Merged");
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "lost")))
		printf("This machine's %s has no kernels in this library now (--no-merge, "
		       "confirmed)\n",
		       out_str(r, "lost"));
	if (cJSON_HasObjectItem(r, "route_why"))
		printf("Served through the overlay: %s\n", out_str(r, "route_why"));
	if (cJSON_HasObjectItem(r, "hipblaslt"))
		printf("%s\n", out_str(r, "hipblaslt"));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "backup_made")))
		printf("The originals were backed up%s\n",
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "backup_adopted"))
		           ? " (adopted from an existing rocblas_backup)"
		           : "");
	print_smoke(r);
	print_warning(r);
	if (cJSON_HasObjectItem(r, "environment")) {
		printf("The SDK is untouched. For applications to use this library, set:\n");
		printf("%s\n", out_str(r, "environment"));
	}
	cJSON_Delete(r);
	return 0;
}

int
cmd_lib_verify(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *t;
	int rc;

	if ((rc = call(ctx, "lib.verify", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(r, "target");
	printf("%s verified: %.0f files match what was deployed (%s)\n", out_str(t, "name"),
	       out_num(r, "files_checked"), out_str(r, "label"));
	{
		const cJSON *ar = cJSON_GetObjectItemCaseSensitive(r, "arch_ok");
		const cJSON *pr = cJSON_GetObjectItemCaseSensitive(r, "pair_ok");
		const cJSON *ga = cJSON_GetObjectItemCaseSensitive(r, "gpus"), *g;
		if (cJSON_GetArraySize(ga) == 0)
			printf("GPU arch %s: %s\n", out_str(r, "arch"),
			       cJSON_IsBool(ar) ? (cJSON_IsTrue(ar) ? "covered" : "NOT covered")
			                        : "not asked");
		cJSON_ArrayForEach(g, ga)
		{
			const cJSON *cv = cJSON_GetObjectItemCaseSensitive(g, "covered");
			const cJSON *lt = cJSON_GetObjectItemCaseSensitive(g, "hipblaslt_covered");
			printf("GPU arch %s: %s\n", out_str(g, "arch"),
			       cJSON_IsTrue(cv) ? "covered" : "NOT covered");
			if (cJSON_IsBool(lt))
				printf("GPU arch %s: hipBLASLt %s (%s, %s)\n", out_str(g, "arch"),
				       cJSON_IsTrue(lt) ? "covered" : "NOT covered",
				       out_str(r, "hipblaslt_library"),
				       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
				           r, "hipblaslt_deployed"))
				           ? "deployed with it, every file checked"
				           : "left as it is");
		}
		printf("Binary and library from the same package: %s\n",
		       cJSON_IsBool(pr) ? (cJSON_IsTrue(pr) ? "yes" : "NO") : "no binary");
	}
	{
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "backup");
		if (cJSON_IsObject(b))
			printf("Backup of the originals: %.0f files match their manifest\n",
			       out_num(b, "files_checked"));
	}
	print_smoke(r);
	cJSON_Delete(r);
	return 0;
}

int
cmd_lib_rollback(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *t;
	int rc;

	if ((rc = call(ctx, "lib.rollback", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(r, "target");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "nothing_to_do"))) {
		printf("%s\n", out_str(r, "message"));
		cJSON_Delete(r);
		return EXIT_NOTHING;
	} else if (cJSON_HasObjectItem(r, "package"))
		printf("Rolled %s back to the previous package #%.0f %s\n", out_str(t, "name"),
		       out_num(r, "package"), out_str(r, "package_name"));
	else
		printf("Rolled %s back to the originals (%.0f files)\n", out_str(t, "name"),
		       out_num(r, "files"));
	if (cJSON_HasObjectItem(r, "hipblaslt"))
		printf("%s\n", out_str(r, "hipblaslt"));
	print_warning(r);
	cJSON_Delete(r);
	return 0;
}

int
cmd_lib_recover(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *it;
	int rc, n = 0;

	if ((rc = call(ctx, "lib.recover", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "targets"))
	{
		printf("%s: %s\n", out_str(it, "name"), out_str(it, "message"));
		n++;
	}
	cJSON_Delete(r);
	if (n == 0) {
		printf("Nothing to recover: no deploy was left unfinished\n");
		return EXIT_NOTHING;
	}
	return 0;
}

/* One side of a history step: "originals" or "#2 V2.0" ("removed" once pkg rm
 * removed it: its name then). */
static void
step_side(const cJSON *s, char *out, size_t n)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(s, "package");

	if (cJSON_IsString(s)) {
		snprintf(out, n, "%s", s->valuestring);
		return;
	}
	if (cJSON_IsNumber(id))
		snprintf(out, n, "#%.0f%s%s", id->valuedouble,
		         cJSON_HasObjectItem(s, "version") ? " " : "", out_str(s, "version"));
	else
		snprintf(out, n, "%s (removed)", out_str(s, "name"));
}

/* Why a step was taken, in words: the deployment's reason. */
static const char *
reason_words(const char *r)
{
	static const struct {
		const char *reason, *words;
	} map[] = {{"user", "user"},
	           {"rollback", "user"},
	           {"sync", "auto-sync"},
	           {"drift", "auto-sync (drift)"},
	           {"verify", "failed verify"},
	           {"recover", "recovery"}};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(r, map[i].reason) == 0)
			return map[i].words;
	return r[0] ? r : "-";
}

/* lib forget TARGET [--yes]: a target whose SDK is gone, with its backups;
 * asks first on a terminal, and needs --yes otherwise. */
int
cmd_lib_forget(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	int rc;

	if (!cJSON_HasObjectItem(p, "target")) {
		cJSON_Delete(p);
		return out_usage("lib forget needs TARGET");
	}
	if (!cJSON_HasObjectItem(p, "yes")) {
		char line[16] = "";
		if (!isatty(STDIN_FILENO)) {
			rc = out_usage("lib forget removes %s's backups of the originals and its "
			               "history for good; give --yes to confirm",
			               out_str(p, "target"));
			cJSON_Delete(p);
			return rc;
		}
		fprintf(stderr,
		        "Remove %s's backups of the originals and its history for good? "
		        "Type yes: ",
		        out_str(p, "target"));
		if (fgets(line, sizeof(line), stdin) == NULL || strcmp(line, "yes\n") != 0) {
			fprintf(stderr, "rocmctl: nothing removed\n");
			cJSON_Delete(p);
			return EXIT_ERROR;
		}
	}
	cJSON_DeleteItemFromObject(p, "yes");
	if ((rc = call(ctx, "lib.forget", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("Forgot %s: removed %s\n", out_str(r, "target"), out_str(r, "removed"));
	cJSON_Delete(r);
	return 0;
}

/* lib ack [ID]: the problems up to event ID (all when left out) are seen. */
int
cmd_lib_ack(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p, *r = NULL;
	char *end;
	long long id = 0;
	int rc;

	if (args->npos == 1 &&
	    ((id = strtoll(args->pos[0][0] == '#' ? args->pos[0] + 1 : args->pos[0], &end, 10)) <=
	         0 ||
	     *end != '\0'))
		return out_usage("'%s' is not an event ID (a number, as lib status shows)",
		                 args->pos[0]);
	p = cJSON_CreateObject();
	if (args->npos == 1)
		cJSON_AddNumberToObject(p, "id", (double)id);
	if ((rc = call(ctx, "lib.ack", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("%.0f problem%s marked seen; %d left\n", out_num(r, "acknowledged"),
		       out_num(r, "acknowledged") == 1 ? "" : "s",
		       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "problems")));
	cJSON_Delete(r);
	return 0;
}

int
cmd_lib_history(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	cJSON *p = lib_params(args), *r = NULL;
	const cJSON *it, *names;
	static const char *const hdr[] = {"ID",      "TIME",   "TARGET", "ACTION",
	                                  "OUTCOME", "CHANGE", "REASON", "MESSAGE"};
	struct out_table *t;
	int rc;

	if ((rc = call(ctx, "lib.history", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	names = cJSON_GetObjectItemCaseSensitive(r, "targets");
	t = out_table_new(8, hdr);
	out_table_state_col(t, 4);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "history"))
	{
		char id[24], when[32], tid[24], from[300], to[300], change[620] = "-";
		snprintf(id, sizeof(id), "%.0f", out_num(it, "id"));
		snprintf(tid, sizeof(tid), "%.0f", out_num(it, "target_id"));
		out_time((long long)out_num(it, "time_ms"), when, sizeof(when));
		if (cJSON_HasObjectItem(it, "to")) {
			step_side(cJSON_GetObjectItemCaseSensitive(it, "from"), from, sizeof(from));
			step_side(cJSON_GetObjectItemCaseSensitive(it, "to"), to, sizeof(to));
			snprintf(change, sizeof(change), "%s -> %s", from, to);
		}
		{
			const char *cells[] = {id,
			                       when,
			                       out_str(names, tid),
			                       out_str(it, "action"),
			                       out_str(it, "outcome"),
			                       change,
			                       reason_words(out_str(it, "reason")),
			                       out_str(it, "message")};
			out_table_row(t, cells);
		}
	}
	out_table_print(t, stdout);
	out_table_free(t);
	cJSON_Delete(r);
	return 0;
}
