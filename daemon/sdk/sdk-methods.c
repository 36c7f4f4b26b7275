/*
 * JSON-RPC methods of SDK discovery: sdk.list, sdk.show, sdk.rescan and
 * gpu.list (docs/PROTOCOL.md). Reads come from the database the scans keep
 * up to date, so they never touch the disk; sdk.rescan is an action (it makes
 * the daemon read every SDK folder and hash what changed), so it needs an
 * admin peer, and its reply is deferred until the scan has been applied.
 */
#include "sdk-methods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/proto.h"
#include "db/db-sdk.h"
#include "rocblas-library.h"
#include "sdk.h"
#include "daemon/core/server.h"

static cJSON *
split_archs(const char *s)
{
	cJSON *a = cJSON_CreateArray();

	while (s != NULL && *s != '\0') {
		const char *comma = strchr(s, ',');
		size_t n = comma != NULL ? (size_t)(comma - s) : strlen(s);
		char item[ROCMD_GFX_MAX];
		if (n > 0 && n < sizeof(item)) {
			memcpy(item, s, n);
			item[n] = '\0';
			cJSON_AddItemToArray(a, cJSON_CreateString(item));
		}
		s = comma != NULL ? comma + 1 : NULL;
	}
	return a;
}

struct list_ctx {
	struct rocmd_sdk *m;
	cJSON *array;
	int full;
};

/* What the last scan said of a runtime outside an SDK install
 * (runtime-discover.h): its release, owner, targets, hipBLASLt folder. */
static void
add_runtime_fields(cJSON *o, const cJSON *detail)
{
	static const char *const keys[] = {"release",        "owner",       "built_for",
	                                   "kpack_archives", "kpack_archs", "hipblaslt_dir",
	                                   "packages",       "hipblaslt",   NULL};

	for (size_t i = 0; keys[i] != NULL; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(detail, keys[i]);
		if (v != NULL)
			cJSON_AddItemToObject(o, keys[i], cJSON_Duplicate(v, 1));
	}
}

/* Whether hipBLASLt's folder of the last scan (DETAIL's "hipblaslt") serves
 * ARCH, by the rule rocBLAS's folders are judged by; adds the answer to C. */
static void
add_hipblaslt_coverage(cJSON *c, const cJSON *detail, const char *arch)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(detail, "hipblaslt");
	char served[512];
	cJSON *h;
	int ok;

	if (!cJSON_IsObject(lt))
		return;
	rocmd_rocblas_served_json(lt, served, sizeof(served));
	ok = rocmd_archs_csv_has(served, arch);
	h = cJSON_AddObjectToObject(c, "hipblaslt");
	cJSON_AddBoolToObject(h, "covered", ok);
	if (!ok)
		cJSON_AddStringToObject(h, "why",
		                        "the hipBLASLt library has no kernels for this arch: "
		                        "hipBLASLt (PyTorch's default GEMM path) will fail with "
		                        "HIPBLAS_STATUS_INVALID_VALUE");
}

static cJSON *
sdk_row_json(struct rocmd_sdk *m, const struct rocmd_db_sdk *s, int full)
{
	cJSON *d = s->detail != NULL ? cJSON_Parse(s->detail) : NULL;
	cJSON *o = cJSON_CreateObject(), *gpus, *cov;

	cJSON_AddNumberToObject(o, "id", (double)s->id);
	cJSON_AddStringToObject(o, "path", s->path);
	cJSON_AddStringToObject(o, "layout", s->layout);
	cJSON_AddStringToObject(o, "state", s->state);
	if (s->version != NULL)
		cJSON_AddStringToObject(o, "version", s->version);
	else
		cJSON_AddNullToObject(o, "version");
	cJSON_AddStringToObject(o, "version_source", s->version_source);
	cJSON_AddBoolToObject(o, "version_conflict", s->version_conflict);
	cJSON_AddNumberToObject(o, "first_seen_ms", (double)s->first_seen_ms);
	cJSON_AddNumberToObject(o, "last_seen_ms", (double)s->last_seen_ms);
	if (s->removed_ms != 0)
		cJSON_AddNumberToObject(o, "removed_ms", (double)s->removed_ms);
	else
		cJSON_AddNullToObject(o, "removed_ms");
	if (s->lib_path != NULL) {
		cJSON *lib = cJSON_AddObjectToObject(o, "rocblas");
		cJSON_AddStringToObject(lib, "dir", s->lib_path);
		cJSON_AddItemToObject(lib, "archs", split_archs(s->lib_archs));
		cJSON_AddItemToObject(lib, "code_object_archs", split_archs(s->lib_co_archs));
		if (s->lib_fingerprint != NULL)
			cJSON_AddStringToObject(lib, "fingerprint", s->lib_fingerprint);
		else
			cJSON_AddNullToObject(lib, "fingerprint");
		cJSON_AddNumberToObject(lib, "nfiles", (double)s->lib_nfiles);
		cJSON_AddNumberToObject(lib, "total_size", (double)s->lib_total_size);
		cJSON_AddNumberToObject(lib, "since_ms", (double)s->lib_first_seen_ms);
	} else {
		cJSON_AddNullToObject(o, "rocblas");
	}
	/* Coverage of this machine's GPUs, said plainly. */
	cov = cJSON_AddArrayToObject(o, "gpu_coverage");
	gpus = rocmd_sdk_gpus_json(m);
	{
		const cJSON *g;
		cJSON_ArrayForEach(g, gpus)
		{
			const char *arch = cJSON_GetObjectItem(g, "arch")->valuestring;
			cJSON *c = cJSON_CreateObject();
			char served[512];
			int ok;
			/* Served by the rule package import and lib verify use. */
			rocmd_rocblas_served_csv(s->lib_archs, s->lib_co_archs, served,
			                         sizeof(served));
			ok = s->lib_path != NULL && rocmd_archs_csv_has(served, arch);
			cJSON_AddStringToObject(c, "arch", arch);
			cJSON_AddBoolToObject(c, "covered", ok);
			if (!ok)
				cJSON_AddStringToObject(
				    c, "why",
				    s->lib_path == NULL
				        ? "this SDK has no rocBLAS library"
				        : "the rocBLAS library has no kernels for this arch: "
				          "rocBLAS "
				          "will fail with \"Cannot read TensileLibrary.dat ... for "
				          "GPU arch\"");
			add_hipblaslt_coverage(c, d, arch);
			cJSON_AddItemToArray(cov, c);
		}
	}
	cJSON_Delete(gpus);
	{
		add_runtime_fields(o, d);
		if (full)
			cJSON_AddItemToObject(o, "last_scan", d != NULL ? d : cJSON_CreateNull());
		else
			cJSON_Delete(d);
	}
	return o;
}

static int
collect(const struct rocmd_db_sdk *s, void *arg)
{
	struct list_ctx *c = arg;

	cJSON_AddItemToArray(c->array, sdk_row_json(c->m, s, c->full));
	return 0;
}

static struct rocmd_sdk *
manager(struct rocmd_conn *conn, char *why, size_t whylen)
{
	if (conn->srv->sdk == NULL)
		snprintf(why, whylen, "SDK discovery is not running");
	return conn->srv->sdk;
}

static int
m_sdk_list(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_sdk *m = manager(conn, why, whylen);
	struct list_ctx c = {0};
	cJSON *r;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	if (m == NULL)
		return ROCMD_EUNSUPPORTED;
	r = cJSON_CreateObject();
	c.m = m;
	c.array = cJSON_AddArrayToObject(r, "sdks");
	rc = rocmd_sdk_db_list(rocmd_sdk_db(m), 0, NULL, collect, &c);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read SDKs: %s", rocmd_sdk_db_errmsg(rocmd_sdk_db(m)));
		return rc;
	}
	cJSON_AddItemToObject(r, "scan", rocmd_sdk_scan_info(m));
	*result = r;
	return 0;
}

static int
collect_library(const struct rocmd_db_sdk_library *l, void *arg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "dir", l->path);
	if (l->fingerprint != NULL)
		cJSON_AddStringToObject(o, "fingerprint", l->fingerprint);
	else
		cJSON_AddNullToObject(o, "fingerprint");
	cJSON_AddItemToObject(o, "archs", split_archs(l->archs));
	cJSON_AddNumberToObject(o, "nfiles", (double)l->nfiles);
	cJSON_AddNumberToObject(o, "total_size", (double)l->total_size);
	cJSON_AddNumberToObject(o, "first_seen_ms", (double)l->first_seen_ms);
	cJSON_AddNumberToObject(o, "last_seen_ms", (double)l->last_seen_ms);
	cJSON_AddBoolToObject(o, "current", l->current);
	cJSON_AddItemToArray(arg, o);
	return 0;
}

static int
m_sdk_show(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", "path", NULL};
	struct rocmd_sdk *m = manager(conn, why, whylen);
	struct list_ctx c = {0};
	const char *path = NULL;
	int64_t id = 0;
	cJSON *arr;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "id", 0, 1, INT64_MAX, &id, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "path", 0, &path, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if ((id == 0) == (path == NULL)) {
		snprintf(why, whylen, "give exactly one of 'id' and 'path'");
		return ROCMD_EPARAMS;
	}
	if (m == NULL)
		return ROCMD_EUNSUPPORTED;
	arr = cJSON_CreateArray();
	c.m = m;
	c.array = arr;
	c.full = 1;
	rc = rocmd_sdk_db_list(rocmd_sdk_db(m), id, path, collect, &c);
	if (rc < 0) {
		cJSON_Delete(arr);
		if (rc == ROCMD_ENOTFOUND)
			snprintf(why, whylen, "no SDK %s%s", path != NULL ? "at " : "with id ",
			         path != NULL ? path : "");
		if (rc == ROCMD_ENOTFOUND && path == NULL)
			snprintf(why, whylen, "no SDK with id %lld", (long long)id);
		else if (rc != ROCMD_ENOTFOUND)
			snprintf(why, whylen, "cannot read SDKs: %s",
			         rocmd_sdk_db_errmsg(rocmd_sdk_db(m)));
		return rc;
	}
	*result = cJSON_DetachItemFromArray(arr, 0);
	cJSON_Delete(arr);
	/* Every content its library has had, the current one first. */
	rc = rocmd_sdk_db_library_history(
	    rocmd_sdk_db(m), (int64_t)cJSON_GetObjectItem(*result, "id")->valuedouble,
	    collect_library, cJSON_AddArrayToObject(*result, "library_history"));
	if (rc < 0) {
		cJSON_Delete(*result);
		*result = NULL;
		snprintf(why, whylen, "cannot read SDKs: %s", rocmd_sdk_db_errmsg(rocmd_sdk_db(m)));
		return rc;
	}
	return 0;
}

static int
m_sdk_rescan(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_sdk *m = manager(conn, why, whylen);
	struct rocmd_pending *p;
	char reason[64];
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	if (m == NULL)
		return ROCMD_EUNSUPPORTED;
	p = rocmd_conn_defer(conn);
	if (p == NULL)
		return ROCMD_ENOMEM;
	snprintf(reason, sizeof(reason), "asked by uid %u", (unsigned)conn->peer.uid);
	rc = rocmd_sdk_rescan(m, reason, p);
	if (rc < 0) {
		rocmd_pending_finish(p, rc, "cannot start a rescan", NULL);
		return ROCMD_METHOD_DEFERRED;
	}
	return ROCMD_METHOD_DEFERRED;
}

static int
collect_gpu(const struct rocmd_db_gpu *g, void *arg)
{
	cJSON *a = arg, *o = g->detail != NULL ? cJSON_Parse(g->detail) : NULL;

	if (o == NULL)
		o = cJSON_CreateObject();
	cJSON_DeleteItemFromObject(o, "key");
	cJSON_AddNumberToObject(o, "id", (double)g->id);
	cJSON_AddStringToObject(o, "key", g->key);
	cJSON_AddStringToObject(o, "state", g->state);
	cJSON_AddNumberToObject(o, "first_seen_ms", (double)g->first_seen_ms);
	cJSON_AddNumberToObject(o, "last_seen_ms", (double)g->last_seen_ms);
	cJSON_AddItemToArray(a, o);
	return 0;
}

static int
m_gpu_list(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_sdk *m = manager(conn, why, whylen);
	cJSON *r, *info;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	if (m == NULL)
		return ROCMD_EUNSUPPORTED;
	r = cJSON_CreateObject();
	rc = rocmd_sdk_db_gpu_list(rocmd_sdk_db(m), collect_gpu, cJSON_AddArrayToObject(r, "gpus"));
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read GPUs: %s", rocmd_sdk_db_errmsg(rocmd_sdk_db(m)));
		return rc;
	}
	info = rocmd_sdk_scan_info(m);
	cJSON_AddItemToObject(r, "hip_status", cJSON_DetachItemFromObject(info, "hip_status"));
	cJSON_AddItemToObject(r, "hip_runtime", cJSON_DetachItemFromObject(info, "hip_runtime"));
	cJSON_AddItemToObject(r, "hip_runtime_source",
	                      cJSON_DetachItemFromObject(info, "hip_runtime_source"));
	cJSON_AddItemToObject(r, "hip_driver_version",
	                      cJSON_DetachItemFromObject(info, "hip_driver_version"));
	cJSON_AddItemToObject(r, "amdgpu_version", cJSON_DetachItemFromObject(info, "amdgpu_version"));
	cJSON_AddItemToObject(r, "scan_time_ms", cJSON_DetachItemFromObject(info, "time_ms"));
	cJSON_Delete(info);
	*result = r;
	return 0;
}

const struct rocmd_method rocmd_methods_sdk[] = {
    {"sdk.list", 0, m_sdk_list},
    {"sdk.show", 0, m_sdk_show},
    {"sdk.rescan", ROCMD_METHOD_MUTATING, m_sdk_rescan},
    {"gpu.list", 0, m_gpu_list},
    {NULL, 0, NULL},
};
