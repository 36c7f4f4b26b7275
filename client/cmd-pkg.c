/*
 * rocmctl pkg: the package store's commands (import, list, show, rm, verify,
 * match). Long commands draw a progress bar on a terminal from the daemon's
 * "progress" notifications; --json prints the daemon's JSON instead and no
 * bar. rocmctl.c hands its connection slot here so one connection serves
 * the whole command.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/fs.h" /* the path resolution rocmd uses, UTF-8 on Windows too */

static int
on_progress(const struct rocmd_rpc *msg, void *arg)
{
	struct cmd_ctx *ctx = arg;
	const cJSON *p = msg->params;
	const char *phase, *current;
	int reading;
	char a[32];

	if ((!ctx->bar.on && !ctx->bar.plain) || strcmp(msg->method, "progress") != 0 || p == NULL)
		return 0;
	phase = out_str(p, "phase");
	current = strcmp(out_str(p, "current"), "-") ? out_str(p, "current") : "";
	reading = strcmp(phase, "reading") == 0;
	if (strcmp(phase, "queued") == 0) {
		out_bar_text(&ctx->bar, "waiting for %.0f store job(s) ahead", out_num(p, "ahead"));
	} else if (reading && out_num(p, "bytes_total") > 0 &&
		   out_num(p, "bytes_in") >= out_num(p, "bytes_total")) {
		/* A solid archive is consumed long before it is unpacked: count output. */
		out_bar_text(&ctx->bar, "%-10s %s unpacked  %.0f files  %.40s", "reading",
			     out_size(out_num(p, "bytes_out"), a, sizeof(a)), out_num(p, "files"),
			     current);
	} else {
		out_bar_draw(&ctx->bar, 10, phase, out_num(p, reading ? "bytes_in" : "bytes_out"),
			     out_num(p, "bytes_total"), "%.0f files  %.40s", out_num(p, "files"),
			     current);
	}
	return 0;
}

static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	int rc = out_call(&ctx->client, ctx->socket, method, params, result, on_progress, ctx);

	out_bar_clear(&ctx->bar);
	return rc;
}

static int
parse_id(const char *s, long long *id)
{
	char *end;

	if (s[0] == '#')
		s++;
	*id = strtoll(s, &end, 10);
	return *s != '\0' && *end == '\0' && *id > 0 ? 0 : -1;
}

static void
print_identity(const cJSON *r)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "identity"), *bin, *w, *man;
	char archs[512] = "", binary[512] = "-", sdk[96] = "-", manifest[96] = "-";

	if (!cJSON_IsObject(id))
		return;
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(id, "archs"))
	{
		if (archs[0])
			strncat(archs, " ", sizeof(archs) - strlen(archs) - 1);
		strncat(archs, w->valuestring, sizeof(archs) - strlen(archs) - 1);
	}
	bin = cJSON_GetObjectItemCaseSensitive(id, "binary");
	if (cJSON_IsObject(bin))
		snprintf(binary, sizeof(binary), "%s (%s%s%s)", out_str(bin, "path"),
		         strcmp(out_str(bin, "format"), "pe") == 0 ? "version " : "SONAME ",
		         strcmp(out_str(bin, "format"), "pe") == 0 ? out_str(bin, "file_version")
		                                               : out_str(bin, "soname"),
		         strcmp(out_str(bin, "hip_runtime"), "-") ? "" : "");
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(id, "sdk")))
		snprintf(sdk, sizeof(sdk), "%s (generation %s, from %s)", out_str(id, "sdk"),
		         out_str(id, "sdk_generation"), out_str(id, "sdk_source"));
	man = cJSON_GetObjectItemCaseSensitive(id, "tensile_manifest");
	if (cJSON_IsObject(man))
		snprintf(manifest, sizeof(manifest), "%.0f entries, %.0f missing",
		         out_num(man, "entries"), out_num(man, "missing"));
	{
		char hip[96], lib[1100];
		snprintf(hip, sizeof(hip), "%s",
		         cJSON_IsObject(bin) ? out_str(bin, "hip_runtime") : "-");
		/* A package of hipBLASLt's folder alone has no rocBLAS library. */
		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(id, "carries_rocblas")))
			snprintf(lib, sizeof(lib), "none (hipBLASLt only: %s)",
			         out_str(id, "hipblaslt_library"));
		else
			snprintf(lib, sizeof(lib), "%s", out_str(id, "library"));
		const char *keys[] = {"Archs",     "Platform", "Binary",         "HIP runtime",
		                      "SDK",       "Version",  "Library folder", "Tensile manifest",
		                      "Top folder"};
		const char *vals[] = {archs[0] ? archs : "none",
		                      out_str(id, "platform"),
		                      binary,
		                      hip,
		                      sdk,
		                      out_str(id, "version_hint"),
		                      lib,
		                      manifest,
		                      out_str(id, "root_stripped")};
		out_kv(stdout, (int)(sizeof(keys) / sizeof(keys[0])), keys, vals);
	}
	cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(id, "warnings"))
	    printf("warning: %s\n", w->valuestring);
}

/* An import's (or a fetch's) reply R, consumed. */
static void
print_imported(struct cmd_ctx *ctx, cJSON *r, const char *verb)
{
	char a[32], b[32];

	if (ctx->json) {
		out_json(r);
	} else {
		printf("%s package #%.0f %s: %.0f files, %s (%s new in the store) in %.1f s\n",
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "already_stored"))
		           ? "Already stored:"
		           : verb,
		       out_num(r, "id"), out_str(r, "name"), out_num(r, "files"),
		       out_size(out_num(r, "bytes"), a, sizeof(a)),
		       out_size(out_num(r, "new_bytes"), b, sizeof(b)), out_num(r, "seconds"));
		print_identity(r);
	}
	cJSON_Delete(r);
}

int
cmd_pkg_import(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	const char *sdk = cli_str(args, "sdk", NULL);
	char abs[ROCMD_FS_PATH_MAX], msg[ROCMD_FS_PATH_MAX + 64];
	cJSON *p, *r = NULL;
	int rc;

	/* The daemon opens the path itself: send it whole (UTF-8, links resolved). */
	if ((rc = rocmd_fs_realpath(args->pos[0], abs, sizeof(abs))) < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", args->pos[0], rocmd_strerror(rc));
		return out_error(EXIT_ERROR, msg);
	}
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "path", abs);
	if (sdk != NULL)
		cJSON_AddStringToObject(p, "sdk", sdk);
	if ((rc = call(ctx, "pkg.import", p, &r)) != 0)
		return rc;
	print_imported(ctx, r, "Imported");
	return 0;
}

int
cmd_pkg_list(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	static const char *const headers[] = {"ID",      "NAME",  "PLATFORM", "SDK",
	                                      "VERSION", "ARCHS", "FILES",    "SIZE"};
	const cJSON *it, *store;
	struct out_table *t;
	cJSON *r = NULL;
	char a[32], b[32];
	int rc;

	(void)args;
	if ((rc = call(ctx, "pkg.list", NULL, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = out_table_new(8, headers);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "packages"))
	{
		char id[24], files[24], size[32];
		const char *cells[8];
		snprintf(id, sizeof(id), "%.0f", out_num(it, "id"));
		snprintf(files, sizeof(files), "%.0f", out_num(it, "files"));
		out_size(out_num(it, "bytes"), size, sizeof(size));
		cells[0] = id;
		cells[1] = out_str(it, "name");
		cells[2] = out_str(it, "platform");
		cells[3] = out_str(it, "sdk");
		cells[4] = out_str(it, "version_hint");
		cells[5] = out_str(it, "archs");
		cells[6] = files;
		cells[7] = size;
		out_table_row(t, cells);
	}
	out_table_print(t, stdout);
	out_table_free(t);
	store = cJSON_GetObjectItemCaseSensitive(r, "store");
	printf("\nStore: %.0f objects, %s on disk; deduplication saves %s\n", out_num(store, "objects"),
	       out_size(out_num(store, "object_bytes"), a, sizeof(a)),
	       out_size(out_num(store, "dedup_saved_bytes"), b, sizeof(b)));
	cJSON_Delete(r);
	return 0;
}

int
cmd_pkg_show(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	long long id, offset = 0;
	int files = cli_has(args, "files"), rc;
	cJSON *p, *r = NULL, *all = NULL;
	char when[32], size[32], count[24];

	if (parse_id(args->pos[0], &id) < 0)
		return out_usage("'%s' is not a package ID (a number, as pkg list shows)",
		                 args->pos[0]);
	/* Page through the file list until the daemon says there is no more. */
	for (;;) {
		const cJSON *more;
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "id", (double)id);
		if (files) {
			cJSON_AddBoolToObject(p, "files", 1);
			cJSON_AddNumberToObject(p, "offset", (double)offset);
		}
		if ((rc = call(ctx, "pkg.show", p, &r)) != 0) {
			cJSON_Delete(all);
			return rc;
		}
		if (all == NULL) {
			all = r;
		} else {
			cJSON *src = cJSON_GetObjectItemCaseSensitive(r, "file_list");
			cJSON *dst = cJSON_GetObjectItemCaseSensitive(all, "file_list");
			while (src != NULL && src->child != NULL)
				cJSON_AddItemToArray(dst, cJSON_DetachItemFromArray(src, 0));
			cJSON_Delete(r);
		}
		r = NULL;
		more = cJSON_GetObjectItemCaseSensitive(all, "more");
		if (!files || !cJSON_IsTrue(more))
			break;
		offset = (long long)out_num(all, "next_offset");
		cJSON_DeleteItemFromObject(all, "more");
		cJSON_DeleteItemFromObject(all, "next_offset");
	}
	if (ctx->json) {
		out_json(all);
		cJSON_Delete(all);
		return 0;
	}
	{
		char idtext[24];
		snprintf(idtext, sizeof(idtext), "#%.0f", out_num(all, "id"));
		snprintf(count, sizeof(count), "%.0f", out_num(all, "files"));
		const char *keys[] = {"Package", "Name",  "Source", "Imported",
		                      "Digest",  "Files", "Size"};
		const char *vals[] = {
		    idtext,
		    out_str(all, "name"),
		    out_str(all, "source"),
		    out_time((long long)out_num(all, "imported_ms"), when, sizeof(when)),
		    out_str(all, "digest"),
		    count,
		    out_size(out_num(all, "bytes"), size, sizeof(size))};
		out_kv(stdout, 7, keys, vals);
	}
	print_identity(all);
	if (files) {
		const cJSON *f;
		putchar('\n');
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(all, "file_list"))
		{
			if (strcmp(out_str(f, "kind"), "symlink") == 0)
				printf("%-64s %12s  %s -> %s\n", "(symlink)", "", out_str(f, "path"),
				       out_str(f, "link"));
			else
				printf("%.64s %12.0f  %s\n", out_str(f, "sha256"), out_num(f, "size"),
				       out_str(f, "path"));
		}
	}
	cJSON_Delete(all);
	return 0;
}

int
cmd_pkg_rm(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	long long id;
	cJSON *p, *r = NULL;
	char a[32];
	int rc;

	if (parse_id(args->pos[0], &id) < 0)
		return out_usage("'%s' is not a package ID (a number, as pkg list shows)",
		                 args->pos[0]);
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "id", (double)id);
	if ((rc = call(ctx, "pkg.rm", p, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("Removed package #%.0f %s; %.0f unused objects deleted, %s freed\n",
		       out_num(r, "id"), out_str(r, "name"), out_num(r, "objects_removed"),
		       out_size(out_num(r, "bytes_freed"), a, sizeof(a)));
	cJSON_Delete(r);
	return 0;
}

int
cmd_pkg_verify(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	long long id = 0;
	cJSON *p = NULL, *r = NULL;
	const cJSON *it;
	char a[32];
	int rc, bad;

	if (args->npos == 1 && parse_id(args->pos[0], &id) < 0)
		return out_usage("'%s' is not a package ID (a number, as pkg list shows)",
		                 args->pos[0]);
	if (id > 0) {
		p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "id", (double)id);
	}
	if ((rc = call(ctx, "pkg.verify", p, &r)) != 0)
		return rc;
	bad = (int)out_num(r, "bad");
	if (ctx->json) {
		out_json(r);
	} else {
		printf("Verified %.0f objects (%s) in %.1f s: %.0f intact, %d missing or corrupt\n",
		       out_num(r, "objects"), out_size(out_num(r, "bytes"), a, sizeof(a)),
		       out_num(r, "seconds"), out_num(r, "ok"), bad);
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "problems"))
		    printf("  %s  %s\n", out_str(it, "sha256"), out_str(it, "problem"));
	}
	cJSON_Delete(r);
	return bad > 0 ? EXIT_ERROR : 0;
}

int
cmd_pkg_match(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	const char *sdk = cli_str(args, "sdk", NULL), *arch = cli_str(args, "arch", NULL),
	           *platform = cli_str(args, "platform", NULL);
	const cJSON *it, *rule;
	cJSON *p, *r = NULL;
	int rc, chosen;

	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "sdk", sdk);
	cJSON_AddStringToObject(p, "arch", arch);
	if (platform != NULL)
		cJSON_AddStringToObject(p, "platform", platform);
	if ((rc = call(ctx, "pkg.match", p, &r)) != 0)
		return rc;
	chosen = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "chosen"));
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return chosen ? 0 : EXIT_ERROR;
	}
	rule = cJSON_GetObjectItemCaseSensitive(r, "rule");
	printf("SDK %s (generation %s, %s), %s: ", out_str(r, "sdk"), out_str(r, "generation"),
	       out_str(r, "platform"), out_str(r, "arch"));
	if (chosen)
		printf("package #%.0f\n", out_num(r, "chosen"));
	else
		printf("no package fits\n");
	if (cJSON_IsObject(rule))
		printf("Rule: %s (%s)\n", out_str(rule, "text"), out_str(rule, "origin"));
	else
		printf("Rule: none fits; any package of this generation, newest first\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "candidates"))
	{
		const cJSON *why;
		printf("\n#%.0f %s: %s\n", out_num(it, "id"), out_str(it, "name"), out_str(it, "verdict"));
		cJSON_ArrayForEach(why, cJSON_GetObjectItemCaseSensitive(it, "reasons"))
		    printf("  - %s\n", why->valuestring);
	}
	cJSON_Delete(r);
	return chosen ? 0 : EXIT_ERROR;
}

/* ---- feeds (docs/FEEDS.md) ---- */

/* " from N pages" for a listing read from more than one, else "". */
static const char *
pages_of(const cJSON *it, char *buf, size_t len)
{
	double n = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "pages"));

	buf[0] = '\0';
	if (n > 1)
		snprintf(buf, len, " from %.0f pages", n);
	return buf;
}

int
cmd_pkg_refresh(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	const cJSON *it;
	cJSON *r = NULL;
	char pages[32];
	int rc, failed;

	(void)args;
	if ((rc = call(ctx, "pkg.refresh", NULL, &r)) != 0)
		return rc;
	failed = (int)out_num(r, "failed");
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return failed > 0 ? EXIT_ERROR : 0;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "offline")))
		printf("No network: no feed could be reached. The store and the last metadata "
		       "fetched still serve.\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "remotes"))
	{
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "why"));
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "enabled")))
			printf("%s: disabled\n", out_str(it, "remote"));
		else if (why != NULL)
			printf("%s: failed, last good copy kept: %s\n", out_str(it, "remote"), why);
		else
			printf("%s: %.0f package(s)%s%s%s\n", out_str(it, "remote"),
			       out_num(it, "packages"), pages_of(it, pages, sizeof(pages)),
			       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "more_pages"))
			           ? " (the pages after these are not read)"
			           : "",
			       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "changed"))
			           ? ""
			           : " (not modified)");
	}
	cJSON_Delete(r);
	return failed > 0 ? EXIT_ERROR : 0;
}

int
cmd_pkg_available(void *arg, const struct cli_args *args)
{
	static const char *const headers[] = {"REMOTE", "NAME", "PLATFORM", "SDK",
	                                      "VERSION", "ARCHS", "SIZE", "STATE"};
	struct cmd_ctx *ctx = arg;
	const char *sdk = cli_str(args, "sdk", NULL), *arch = cli_str(args, "arch", NULL),
	           *platform = cli_str(args, "platform", NULL);
	const cJSON *it;
	struct out_table *t;
	cJSON *p, *r = NULL;
	int rc;

	if ((sdk == NULL) != (arch == NULL))
		return out_usage("--sdk and --arch go together");
	p = cJSON_CreateObject();
	if (sdk != NULL) {
		cJSON_AddStringToObject(p, "sdk", sdk);
		cJSON_AddStringToObject(p, "arch", arch);
	}
	if (platform != NULL)
		cJSON_AddStringToObject(p, "platform", platform);
	if ((rc = call(ctx, "pkg.available", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "remotes"))
	{
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "why"));
		if (why != NULL)
			printf("%s\n", why);
	}
	t = out_table_new(8, headers);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "packages"))
	{
		char size[32], state[64];
		const char *cells[8];
		if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(it, "stored")))
			snprintf(state, sizeof(state), "stored #%.0f", out_num(it, "stored"));
		else
			snprintf(state, sizeof(state), "%s",
			         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "fetchable"))
			             ? "fetchable"
			             : "never chosen");
		cells[0] = out_str(it, "remote");
		cells[1] = out_str(it, "name");
		cells[2] = out_str(it, "platform");
		cells[3] = out_str(it, "sdk");
		cells[4] = out_str(it, "version");
		cells[5] = out_str(it, "archs");
		cells[6] = out_size(out_num(it, "size"), size, sizeof(size));
		cells[7] = state;
		out_table_row(t, cells);
	}
	out_table_print(t, stdout);
	out_table_free(t);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "packages"))
	{
		const cJSON *why;
		const char *no = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "why_not"));
		if (no != NULL)
			printf("%s: %s\n", out_str(it, "name"), no);
		if (sdk == NULL)
			continue;
		printf("\n%s (%s): %s\n", out_str(it, "name"), out_str(it, "remote"),
		       out_str(it, "verdict"));
		cJSON_ArrayForEach(why, cJSON_GetObjectItemCaseSensitive(it, "reasons"))
		    printf("  - %s\n", why->valuestring);
	}
	if (sdk != NULL) {
		const char *chosen = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "chosen"));
		printf("\nSDK %s, %s, %s: %s%s\n", sdk, arch, out_str(r, "platform"),
		       chosen != NULL ? "would fetch " : "no package a feed offers fits",
		       chosen != NULL ? chosen : "");
	}
	cJSON_Delete(r);
	return 0;
}

int
cmd_pkg_fetch(void *arg, const struct cli_args *args)
{
	struct cmd_ctx *ctx = arg;
	const char *sdk = cli_str(args, "sdk", NULL), *arch = cli_str(args, "arch", NULL),
	           *platform = cli_str(args, "platform", NULL);
	cJSON *p, *r = NULL;
	int rc;

	if ((args->npos == 1) == (sdk != NULL) || (sdk == NULL) != (arch == NULL))
		return out_usage("give a package NAME, or --sdk and --arch");
	p = cJSON_CreateObject();
	if (args->npos == 1)
		cJSON_AddStringToObject(p, "name", args->pos[0]);
	if (sdk != NULL) {
		cJSON_AddStringToObject(p, "sdk", sdk);
		cJSON_AddStringToObject(p, "arch", arch);
	}
	if (platform != NULL)
		cJSON_AddStringToObject(p, "platform", platform);
	if ((rc = call(ctx, "pkg.fetch", p, &r)) != 0)
		return rc;
	print_imported(ctx, r, "Fetched and imported");
	return 0;
}
