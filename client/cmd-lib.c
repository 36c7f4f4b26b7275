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
#include "cmd-lib.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "common/error.h"
#include "output.h"

struct lib_ctx {
	struct rocmd_client **client;
	const char *socket;
	int json;
	struct out_bar bar;
};

static int
on_progress(const struct rocmd_rpc *msg, void *arg)
{
	struct lib_ctx *ctx = arg;
	const cJSON *p = msg->params;
	const char *phase;

	if (!ctx->bar.on || strcmp(msg->method, "progress") != 0 || p == NULL)
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
call(struct lib_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	int rc = out_call(ctx->client, ctx->socket, method, params, result, on_progress, ctx);

	out_bar_clear(&ctx->bar);
	return rc;
}

/* Parses [--target T] [--overlay] [--package ID] [--to original|previous]
 * [--limit N] into P; ALLOWED names the options this command takes. */
static int
parse_opts(int argc, char **argv, const char *allowed, cJSON *p, const char *usage)
{
	static const struct option opts[] = {
	    {"target", required_argument, NULL, 't'},     {"overlay", no_argument, NULL, 'o'},
	    {"package", required_argument, NULL, 'p'},    {"to", required_argument, NULL, 'T'},
	    {"limit", required_argument, NULL, 'l'},      {"force", required_argument, NULL, 'f'},
	    {"generation", required_argument, NULL, 'g'}, {"yes", no_argument, NULL, 'y'},
	    {"dry-run", no_argument, NULL, 'n'},          {NULL, 0, NULL, 0},
	};
	cJSON *force;
	char *end;
	long long v;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, argv - 1, "t:op:T:l:f:g:yn", opts, NULL)) != -1) {
		if (c == '?' || strchr(allowed, c) == NULL)
			goto usage;
		switch (c) {
		case 't':
			cJSON_AddStringToObject(p, "target", optarg);
			break;
		case 'o':
			cJSON_AddBoolToObject(p, "overlay", 1);
			break;
		case 'p':
		case 'l':
		case 'g':
			v = strtoll(optarg[0] == '#' ? optarg + 1 : optarg, &end, 10);
			if (*end != '\0' || v <= 0)
				goto usage;
			cJSON_AddNumberToObject(p,
			                        c == 'p'   ? "package"
			                        : c == 'l' ? "limit"
			                                   : "generation",
			                        (double)v);
			break;
		case 'y':
			/* the client's own: the confirmation given */
			cJSON_AddBoolToObject(p, "yes", 1);
			break;
		case 'n':
			cJSON_AddBoolToObject(p, "dry_run", 1);
			break;
		case 'T':
			cJSON_AddStringToObject(p, "to", optarg);
			break;
		case 'f':
			/* --force sdk,arch (or given again): the checks to skip. */
			force = cJSON_GetObjectItemCaseSensitive(p, "force");
			if (force == NULL)
				force = cJSON_AddArrayToObject(p, "force");
			for (char *s = optarg; *s != '\0';) {
				size_t n = strcspn(s, ",");
				char name[32];
				snprintf(name, sizeof(name), "%.*s", (int)n, s);
				if (n > 0)
					cJSON_AddItemToArray(force, cJSON_CreateString(name));
				s += n + (s[n] == ',');
			}
			break;
		}
	}
	/* One bare argument is the target. */
	if (optind - 1 < argc && strchr(allowed, 't') != NULL &&
	    !cJSON_HasObjectItem(p, "target")) {
		cJSON_AddStringToObject(p, "target", argv[optind - 1]);
		optind++;
	}
	if (optind - 1 != argc)
		goto usage;
	return 0;
usage:
	fprintf(stderr, "rocmctl: usage: %s\n", usage);
	return EXIT_USAGE;
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

static int
lib_status(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *it, *a;
	struct out_table *t;
	static const char *const hdr[] = {"TARGET", "KIND",   "SDK",   "LIBRARY", "DEPLOYED",
	                                  "SINCE",  "BACKUP", "DRIFT", "MATCH"};
	char archs[256] = "";
	int rc;

	if ((rc = parse_opts(argc, argv, "", p, "lib status")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
	if ((rc = call(ctx, "lib.status", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = out_table_new(9, hdr);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "targets"))
	{
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "deployed");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "backup");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "match");
		char dep[64] = "originals", since[32] = "-", bk[128] = "none", match[96] = "-",
		     sdk[160];
		snprintf(sdk, sizeof(sdk), "%s %s", out_str(it, "sdk"), out_str(it, "sdk_version"));
		if (cJSON_IsObject(d)) {
			snprintf(dep, sizeof(dep), "package #%.0f", out_num(d, "package"));
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
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "drift")))
			printf("%s: the library on disk is no longer what rocmd deployed (an SDK "
			       "update?)\n",
			       out_str(it, "name"));
		if (cJSON_HasObjectItem(it, "match_problem"))
			printf("%s: %s\n", out_str(it, "name"), out_str(it, "match_problem"));
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

	printf("Dry run, nothing changed: package #%.0f %s to %s (%s)\n", out_num(r, "package"),
	       out_str(r, "package_name"), out_str(t, "name"), out_str(t, "library"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(f, "list"))
	{
		printf("  %-8s %s (%s)\n", out_str(it, "action"), out_str(it, "path"),
		       out_size(out_num(it, "bytes"), sz, sizeof(sz)));
	}
	printf("Files: %.0f added, %.0f replaced, %.0f kept, %.0f removed%s; %s to copy%s\n",
	       out_num(f, "add"), out_num(f, "replace"), out_num(f, "keep"), out_num(f, "remove"),
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

/* On a terminal, a deploy forced past the arch check that would leave a GPU
 * without kernels asks first (its dry run says which); -y skips the
 * question. 0 to go on. */
static int
confirm_lost_archs(struct lib_ctx *ctx, const cJSON *p)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "force"), *it;
	cJSON *q, *r = NULL;
	char lost[256] = "", line[16] = "";
	int arch = 0, rc;

	cJSON_ArrayForEach(it, f)
	{
		arch |= cJSON_IsString(it) && strcmp(it->valuestring, "arch") == 0;
	}
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
	return 0;
}

static int
lib_deploy(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *t;
	char a[32];
	int rc;

	if ((rc = parse_opts(argc, argv, "topfny", p,
	                     "lib deploy [TARGET] [--overlay] [--package ID] [--force CHECK,...] "
	                     "[--dry-run] [-y]")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
	if (cJSON_HasObjectItem(p, "yes"))
		cJSON_DeleteItemFromObject(p, "yes");
	else if ((rc = confirm_lost_archs(ctx, p)) != 0) {
		cJSON_Delete(p);
		return rc;
	}
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
	       out_str(t, "library"), out_num(r, "files"),
	       out_size(out_num(r, "bytes"), a, sizeof(a)),
	       (out_num(r, "stage_us") + out_num(r, "swap_us") + out_num(r, "verify_us")) / 1e6);
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

static int
lib_verify(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *t;
	int rc;

	if ((rc = parse_opts(argc, argv, "to", p, "lib verify [TARGET] [--overlay]")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
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
			printf("GPU arch %s: %s\n", out_str(g, "arch"),
			       cJSON_IsTrue(cv) ? "covered" : "NOT covered");
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

static int
lib_rollback(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *t;
	int rc;

	if ((rc = parse_opts(argc, argv, "toTg", p,
	                     "lib rollback [TARGET] [--overlay] [--to original|previous] "
	                     "[--generation N]")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
	if ((rc = call(ctx, "lib.rollback", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = cJSON_GetObjectItemCaseSensitive(r, "target");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "nothing_to_do")))
		printf("%s\n", out_str(r, "message"));
	else if (cJSON_HasObjectItem(r, "package"))
		printf("Rolled %s back to the previous package #%.0f %s\n", out_str(t, "name"),
		       out_num(r, "package"), out_str(r, "package_name"));
	else
		printf("Rolled %s back to the originals (%.0f files)\n", out_str(t, "name"),
		       out_num(r, "files"));
	print_warning(r);
	cJSON_Delete(r);
	return 0;
}

static int
lib_recover(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *it;
	int rc, n = 0;

	if ((rc = parse_opts(argc, argv, "t", p, "lib recover [TARGET]")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
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
	if (n == 0)
		printf("Nothing to recover: no deploy was left unfinished\n");
	cJSON_Delete(r);
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
static int
lib_forget(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	int rc;

	if ((rc = parse_opts(argc, argv, "ty", p, "lib forget TARGET [--yes]")) != 0 ||
	    !cJSON_HasObjectItem(p, "target")) {
		if (rc == 0)
			fprintf(stderr, "rocmctl: usage: lib forget TARGET [--yes]\n");
		cJSON_Delete(p);
		return EXIT_USAGE;
	}
	if (!cJSON_HasObjectItem(p, "yes")) {
		char line[16] = "";
		if (!isatty(STDIN_FILENO)) {
			fprintf(stderr,
			        "rocmctl: lib forget removes %s's backups of the originals and "
			        "its history for good; give --yes to confirm\n",
			        out_str(p, "target"));
			cJSON_Delete(p);
			return EXIT_USAGE;
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
static int
lib_ack(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	char *end;
	long long id;
	int rc;

	if (argc > 1 || (argc == 1 && ((id = strtoll(argv[0][0] == '#' ? argv[0] + 1 : argv[0],
	                                             &end, 10)) <= 0 ||
	                               *end != '\0'))) {
		fprintf(stderr, "rocmctl: usage: lib ack [ID]\n");
		cJSON_Delete(p);
		return EXIT_USAGE;
	}
	if (argc == 1)
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

static int
lib_history(struct lib_ctx *ctx, int argc, char **argv)
{
	cJSON *p = cJSON_CreateObject(), *r = NULL;
	const cJSON *it, *names;
	static const char *const hdr[] = {"ID",      "TIME",   "TARGET", "ACTION",
	                                  "OUTCOME", "CHANGE", "REASON", "MESSAGE"};
	struct out_table *t;
	int rc;

	if ((rc = parse_opts(argc, argv, "tl", p, "lib history [TARGET] [--limit N]")) != 0) {
		cJSON_Delete(p);
		return rc;
	}
	if ((rc = call(ctx, "lib.history", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	names = cJSON_GetObjectItemCaseSensitive(r, "targets");
	t = out_table_new(8, hdr);
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

static void
lib_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: rocmctl lib COMMAND\n"
	    "  status                         every target: what is deployed, backups, drift,\n"
	    "                                 the package that matches\n"
	    "  deploy [TARGET] [--overlay] [--package ID] [--force CHECK,...] [--dry-run] [-y]\n"
	    "                                 deploy the matching (or given) package (admin);\n"
	    "                                 a package that fails a check (sdk, binary, arch,\n"
	    "                                 platform) is refused; --force skips the checks\n"
	    "                                 it names, never platform; --dry-run says what\n"
	    "                                 would change (files, bytes, each GPU's arch)\n"
	    "                                 and changes nothing; on a terminal a forced\n"
	    "                                 deploy that loses a GPU's arch asks first\n"
	    "                                 unless -y\n"
	    "  verify [TARGET] [--overlay]    re-check hashes, arch, pairing, GEMM smoke test\n"
	    "                                 (admin; a failure rolls back to the originals)\n"
	    "  history [TARGET] [--limit N]   what was done to each target\n"
	    "  rollback [TARGET] [--overlay] [--to original|previous] [--generation N]\n"
	    "                                 one step back along the history, or the\n"
	    "                                 originals; nothing to do exits 0 (admin);\n"
	    "                                 --generation N: an older generation of them\n"
	    "  recover [TARGET]               finish or undo a deploy left unfinished (every\n"
	    "                                 target with one when TARGET is left out), or say\n"
	    "                                 what stands in the way (admin)\n"
	    "  forget TARGET [--yes]          remove a target whose SDK is gone: its backups of\n"
	    "                                 the originals and its history (admin; asks first)\n"
	    "  ack [ID]                       mark the problems rocmd reported (what it did on\n"
	    "                                 its own, what failed) seen, up to event ID (admin)\n"
	    "TARGET is sdk-N, overlay-N, app-NAME, or an SDK's path or id; it may be left out\n"
	    "when one SDK is present.\n");
}

int
rocmctl_lib(struct rocmd_client **client, const char *socket, int json, int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct lib_ctx *ctx, int argc, char **argv);
	} subs[] = {
	    {"status", lib_status},   {"deploy", lib_deploy},     {"verify", lib_verify},
	    {"history", lib_history}, {"rollback", lib_rollback}, {"recover", lib_recover},
	    {"ack", lib_ack},         {"forget", lib_forget},
	};
	struct lib_ctx ctx = {.client = client, .socket = socket, .json = json};

	ctx.bar.on = !json && isatty(STDERR_FILENO);
	if (argc < 1 || strcmp(argv[0], "help") == 0 || strcmp(argv[0], "--help") == 0) {
		lib_usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? EXIT_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (strcmp(argv[0], subs[i].name) == 0)
			return subs[i].fn(&ctx, argc - 1, argv + 1);
	fprintf(stderr, "rocmctl: unknown lib command '%s' (see rocmctl lib help)\n", argv[0]);
	return EXIT_USAGE;
}
