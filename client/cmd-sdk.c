/*
 * rocmctl sdk list|show|rescan and gpu list: what SDK discovery knows. Tables
 * for people (client/output.h), the daemon's JSON with --json. A library
 * that lacks a GPU's arch is said in words, not left to be inferred.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/error.h"
#include "common/paths.h"

static int
call(struct cmd_ctx *ctx, const char *method, cJSON *params, cJSON **result)
{
	return out_call(&ctx->client, ctx->socket, method, params, result, NULL, NULL);
}

/* "gfx1030,gfx1100" from a JSON array of strings. */
static void
join(const cJSON *arr, char *buf, size_t len)
{
	const cJSON *it;
	size_t used = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it))
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
		                         used > 0 ? "," : "", it->valuestring);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

/* "gfx1103: no" per GPU, or "-" without GPUs. */
static void
coverage(const cJSON *sdk, char *buf, size_t len)
{
	const cJSON *c;
	size_t used = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(sdk, "gpu_coverage"))
	{
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c, "hipblaslt");
		used += (size_t)snprintf(
		    buf + used, used < len ? len - used : 0, "%s%s %s%s", used > 0 ? ", " : "",
		    out_str(c, "arch"),
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "covered")) ? "yes" : "NO",
		    !cJSON_IsObject(lt) ? ""
		    : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lt, "covered"))
		        ? " (hipBLASLt yes)"
		        : " (hipBLASLt NO)");
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
}

/* The version, with a release it does not say all of ("7.10.0a20251124")
 * beside it, and a conflict marked. */
static void
version_cell(const cJSON *sdk, char *buf, size_t len)
{
	const cJSON *rel = cJSON_GetObjectItemCaseSensitive(sdk, "release");
	const char *v = out_str(sdk, "version"),
	           *name = cJSON_IsObject(rel) ? out_str(rel, "name") : v;
	int extra = strcmp(name, v) != 0;

	snprintf(buf, len, "%s%s%s%s%s", v, extra ? " (" : "", extra ? name : "", extra ? ")" : "",
	         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sdk, "version_conflict"))
	             ? " (conflict)"
	             : "");
}

int
cmd_sdk_list(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	static const char *const hdr[] = {"ID",   "PATH",  "LAYOUT",        "VERSION",
	                                  "FROM", "STATE", "ROCBLAS ARCHS", "GPU COVERED"};
	cJSON *r = NULL;
	const cJSON *s, *scan;
	struct out_table *t;
	int rc, n = 0;

	(void)a;
	if ((rc = call(ctx, "sdk.list", NULL, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = out_table_new((int)(sizeof(hdr) / sizeof(hdr[0])), hdr);
	out_table_state_col(t, 5);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(r, "sdks"))
	{
		char id[24], archs[1024], cov[512], ver[64];
		const cJSON *lib = cJSON_GetObjectItemCaseSensitive(s, "rocblas");
		const cJSON *own = cJSON_GetObjectItemCaseSensitive(s, "owner");
		char layout[64];
		const char *row[8];
		snprintf(id, sizeof(id), "%.0f", out_num(s, "id"));
		version_cell(s, ver, sizeof(ver));
		snprintf(layout, sizeof(layout), "%s%s%s", out_str(s, "layout"),
		         cJSON_IsObject(own) ? ", owned by " : "",
		         cJSON_IsObject(own) ? out_str(own, "by") : "");
		if (cJSON_IsObject(lib))
			join(cJSON_GetObjectItemCaseSensitive(lib, "archs"), archs, sizeof(archs));
		else
			snprintf(archs, sizeof(archs), "no rocBLAS");
		coverage(s, cov, sizeof(cov));
		row[0] = id;
		row[1] = out_str(s, "path");
		row[2] = layout;
		row[3] = ver;
		row[4] = out_str(s, "version_source");
		row[5] = out_str(s, "state");
		row[6] = archs;
		row[7] = cov;
		out_table_row(t, row);
		n++;
	}
	if (n > 0)
		out_table_print(t, stdout);
	else
		printf("no HIP SDK found\n");
	out_table_free(t);
	scan = cJSON_GetObjectItemCaseSensitive(r, "scan");
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(scan, "problems")))
		printf("\nproblems found while scanning:\n%s\n", out_str(scan, "problems"));
	cJSON_Delete(r);
	return 0;
}

static void
print_problems(const char *title, const char *text)
{
	if (text == NULL || strcmp(text, "-") == 0)
		return;
	printf("%s:\n", title);
	for (const char *p = text; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		printf("  %.*s\n", (int)(nl != NULL ? nl - p : (long)strlen(p)), p);
		p = nl != NULL ? nl + 1 : NULL;
	}
}

/* What sdk.show says of a runtime outside an SDK install (docs/LAYOUTS.md). */
static void
print_runtime(const cJSON *r)
{
	const cJSON *rel = cJSON_GetObjectItemCaseSensitive(r, "release");
	const cJSON *own = cJSON_GetObjectItemCaseSensitive(r, "owner");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(r, "hipblaslt");
	const char *keys[8], *vals[8];
	char release[1024], owner[1024], built[1024], kpack[640], pkgs[2048], lt_archs[1100];
	int n = 0;

	if (cJSON_IsObject(rel)) {
		snprintf(release, sizeof(release), "%s (from %s)", out_str(rel, "name"),
		         out_str(rel, "from"));
		keys[n] = "Release";
		vals[n++] = release;
	}
	if (cJSON_IsObject(own)) {
		snprintf(owner, sizeof(owner), "%s (%s): never overwritten", out_str(own, "by"),
		         out_str(own, "record"));
		keys[n] = "Owner";
		vals[n++] = owner;
	}
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "built_for"))) {
		join(cJSON_GetObjectItemCaseSensitive(r, "built_for"), built, sizeof(built));
		keys[n] = "Built for";
		vals[n++] = built;
	}
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "kpack_archives"))) {
		char ka[512];
		join(cJSON_GetObjectItemCaseSensitive(r, "kpack_archs"), ka, sizeof(ka));
		snprintf(kpack, sizeof(kpack), "%.0f, kernels for %s", out_num(r, "kpack_archives"),
		         ka);
		keys[n] = "kpack archives";
		vals[n++] = kpack;
	}
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "hipblaslt_dir"))) {
		keys[n] = "hipBLASLt library";
		vals[n++] = out_str(r, "hipblaslt_dir");
	}
	if (cJSON_IsObject(lt)) {
		char ia[512], ca[512];
		join(cJSON_GetObjectItemCaseSensitive(lt, "archs"), ia, sizeof(ia));
		join(cJSON_GetObjectItemCaseSensitive(lt, "code_object_archs"), ca, sizeof(ca));
		snprintf(lt_archs, sizeof(lt_archs), "%s (code objects: %s)", ia, ca);
		keys[n] = "hipBLASLt archs";
		vals[n++] = lt_archs;
		keys[n] = "hipBLASLt print";
		vals[n++] = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(lt, "fingerprint"))
		                ? out_str(lt, "fingerprint")
		                : "not yet computed";
	}
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "packages"))) {
		join(cJSON_GetObjectItemCaseSensitive(r, "packages"), pkgs, sizeof(pkgs));
		keys[n] = "Wheels";
		vals[n++] = pkgs;
	}
	if (n > 0)
		out_kv(stdout, n, keys, vals);
}

int
cmd_sdk_show(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *id = a->pos[0];
	cJSON *p, *r = NULL;
	const cJSON *lib, *last, *c, *ver;
	char first[32], seen[32], removed[32], archs[1024], co[1024], size[32], files[32],
	    sources[1024] = "";
	int rc;

	p = cJSON_CreateObject();
	if (strspn(id, "0123456789") == strlen(id))
		cJSON_AddNumberToObject(p, "id", atof(id));
	else
		cJSON_AddStringToObject(p, "path", id);
	if ((rc = call(ctx, "sdk.show", p, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	lib = cJSON_GetObjectItemCaseSensitive(r, "rocblas");
	last = cJSON_GetObjectItemCaseSensitive(r, "last_scan");
	ver = cJSON_GetObjectItemCaseSensitive(last, "version");
	{
		const cJSON *src;
		size_t used = 0;
		cJSON_ArrayForEach(src, cJSON_GetObjectItemCaseSensitive(ver, "sources")) used +=
		    (size_t)snprintf(sources + used,
		                     used < sizeof(sources) ? sizeof(sources) - used : 0, "%s%s %s",
		                     used > 0 ? "; " : "", src->string,
		                     cJSON_IsString(src) ? src->valuestring : "?");
		if (sources[0] == '\0')
			snprintf(sources, sizeof(sources), "none");
	}
	out_time((long long)out_num(r, "first_seen_ms"), first, sizeof(first));
	out_time((long long)out_num(r, "last_seen_ms"), seen, sizeof(seen));
	if (out_num(r, "removed_ms") > 0)
		out_time((long long)out_num(r, "removed_ms"), removed, sizeof(removed));
	else
		snprintf(removed, sizeof(removed), "-");
	if (cJSON_IsObject(lib)) {
		join(cJSON_GetObjectItemCaseSensitive(lib, "archs"), archs, sizeof(archs));
		join(cJSON_GetObjectItemCaseSensitive(lib, "code_object_archs"), co, sizeof(co));
		out_size(out_num(lib, "total_size"), size, sizeof(size));
		snprintf(files, sizeof(files), "%.0f", out_num(lib, "nfiles"));
	} else {
		snprintf(archs, sizeof(archs), "-");
		snprintf(co, sizeof(co), "-");
		snprintf(size, sizeof(size), "-");
		snprintf(files, sizeof(files), "-");
	}
	{
		const char *keys[] = {"Path",
		                      "Layout",
		                      "State",
		                      "Version",
		                      "Version sources",
		                      "HIP runtime",
		                      "rocBLAS binary",
		                      "rocBLAS library",
		                      "Index archs",
		                      "Code object archs",
		                      "Files",
		                      "Size",
		                      "Fingerprint",
		                      "First seen",
		                      "Last seen",
		                      "Removed"};
		const char *vals[] = {out_str(r, "path"),
		                      out_str(r, "layout"),
		                      out_str(r, "state"),
		                      out_str(r, "version"),
		                      sources,
		                      out_str(last, "hip_runtime"),
		                      out_str(last, "rocblas_binary"),
		                      cJSON_IsObject(lib) ? out_str(lib, "dir")
		                                          : "none (this SDK has no rocBLAS)",
		                      archs,
		                      co,
		                      files,
		                      size,
		                      cJSON_IsObject(lib) ? out_str(lib, "fingerprint") : "-",
		                      first,
		                      seen,
		                      removed};
		out_kv(stdout, (int)(sizeof(keys) / sizeof(keys[0])), keys, vals);
	}
	print_runtime(r);
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "gpu_coverage"))
	{
		const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c, "hipblaslt");
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "covered")))
			printf("GPU %s: covered by this rocBLAS library\n", out_str(c, "arch"));
		else
			printf("GPU %s: NOT covered: %s\n", out_str(c, "arch"), out_str(c, "why"));
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lt, "covered")))
			printf("GPU %s: covered by this hipBLASLt library\n", out_str(c, "arch"));
		else if (cJSON_IsObject(lt))
			printf("GPU %s: NOT covered by hipBLASLt: %s\n", out_str(c, "arch"),
			       out_str(lt, "why"));
	}
	{
		const cJSON *h;
		int n = 0;
		cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(r, "library_history"))
		{
			char from[32], to[32], archs_h[1024];
			if (n++ == 0)
				printf("Library history:\n");
			out_time((long long)out_num(h, "first_seen_ms"), from, sizeof(from));
			out_time((long long)out_num(h, "last_seen_ms"), to, sizeof(to));
			join(cJSON_GetObjectItemCaseSensitive(h, "archs"), archs_h,
			     sizeof(archs_h));
			printf("  %s .. %s%s  %.16s  %s\n", from, to,
			       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "current"))
			           ? " (now)"
			           : "",
			       out_str(h, "fingerprint"), archs_h);
		}
	}
	print_problems("Problems", out_str(last, "problems"));
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(last, "rocblas")))
		print_problems("Library notes",
		               out_str(cJSON_GetObjectItemCaseSensitive(last, "rocblas"), "problems"));
	cJSON_Delete(r);
	return 0;
}

int
cmd_sdk_rescan(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	int rc;

	(void)a;
	if ((rc = call(ctx, "sdk.rescan", NULL, &r)) != 0)
		return rc;
	if (ctx->json)
		out_json(r);
	else
		printf("rescanned in %.0f ms (scan %.0f)\n", out_num(r, "elapsed_ms"), out_num(r, "scans"));
	cJSON_Delete(r);
	return 0;
}

int
cmd_gpu_list(void *arg, const struct cli_args *a)
{
	static const char *const hdr[] = {"ID", "ARCH", "NAME", "KIND", "CUs", "VRAM", "STATE"};
	struct cmd_ctx *ctx = arg;
	cJSON *r = NULL;
	const cJSON *g;
	struct out_table *t;
	int rc, n = 0;

	(void)a;
	if ((rc = call(ctx, "gpu.list", NULL, &r)) != 0)
		return rc;
	if (ctx->json) {
		out_json(r);
		cJSON_Delete(r);
		return 0;
	}
	t = out_table_new((int)(sizeof(hdr) / sizeof(hdr[0])), hdr);
	out_table_state_col(t, 6);
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(r, "gpus"))
	{
		char id[24], cus[24], vram[32];
		const char *row[7];
		snprintf(id, sizeof(id), "%.0f", out_num(g, "id"));
		snprintf(cus, sizeof(cus), "%.0f", out_num(g, "compute_units"));
		out_size(out_num(g, "vram_bytes"), vram, sizeof(vram));
		row[0] = id;
		row[1] = out_str(g, "arch");
		row[2] = out_str(g, "name");
		row[3] = strcmp(out_str(g, "kind"), "igpu") == 0 ? "integrated" : "discrete";
		row[4] = cus;
		row[5] = vram;
		row[6] = out_str(g, "state");
		out_table_row(t, row);
		n++;
	}
	if (n > 0)
		out_table_print(t, stdout);
	else
		printf("no AMD GPU found (a normal state: nothing to tune, libraries are still "
		       "managed)\n");
	printf("HIP runtime: %s", out_str(r, "hip_status"));
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "hip_runtime")))
		printf(" (%s, %s)", out_str(r, "hip_runtime"),
		       strcmp(out_str(r, "hip_runtime_source"), "driver") == 0
		           ? "the display driver's: no SDK has one"
		           : "the newest SDK's");
	if (out_num(r, "hip_driver_version") > 0)
		printf("; HIP driver version %.0f", out_num(r, "hip_driver_version"));
	printf("\n");
	out_table_free(t);
	cJSON_Delete(r);
	return 0;
}
