/*
 * The pkg.* methods (docs/PROTOCOL.md, "Packages"): parameters checked, the
 * work handed to the package store's jobs (pkg-jobs.c), replies shaped from
 * the database. They run on the loop thread.
 */
#include "pkg-service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "db/db-pkg.h"

#define REPLY_BUDGET(srv) ((size_t)(srv)->cfg->max_frame - 4096)

#ifdef _WIN32
#define PKG_PLATFORM "windows"
#else
#define PKG_PLATFORM "linux"
#endif

static int
m_import(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"path", "sdk", NULL};
	const char *path, *sdk = NULL;
	struct rocmd_pkg_cred *cred = NULL;
	struct rocmd_fsinfo fi;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "path", 1, &path, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "sdk", 0, &sdk, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (rocmd_fs_path_root(path) == 0) {
		snprintf(why, whylen,
		         "param 'path' must be an absolute path (rocmd opens it itself)");
		return ROCMD_EPARAMS;
	}
	if (sdk != NULL && sdk[0] != '\0') {
		struct rocmd_pkg_version v;
		if (rocmd_pkg_version_parse(sdk, &v) < 0 || v.n < 2) {
			snprintf(why, whylen,
			         "param 'sdk' must be an SDK version such as 6.2.4 or 5.7");
			return ROCMD_EPARAMS;
		}
	}
	/* The caller's rights, from here on: whether PATH exists is theirs to
	 * know only if they could look it up themselves. */
	if ((rc = rocmd_pkg_cred_of(conn, &cred)) < 0) {
		snprintf(why, whylen, "cannot read the caller's groups: %s", rocmd_strerror(rc));
		return rc;
	}
	if ((rc = rocmd_pkg_cred_enter(cred)) == 0) {
		rc = rocmd_fsinfo_get(path, 1, &fi);
		rocmd_pkg_cred_leave(cred);
	} else {
		snprintf(why, whylen, "rocmd cannot read files with your rights (%s)",
		         rocmd_strerror(rc));
		rocmd_pkg_cred_free(cred);
		return rc;
	}
	if (rc < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(-rc));
		rocmd_pkg_cred_free(cred);
		return rc == -EACCES ? ROCMD_EPERM : ROCMD_ENOTFOUND;
	}
	return rocmd_pkg_queue_import(conn->srv->pkg, path, NULL, sdk, cred, conn);
}

static void
add_summary(cJSON *o, const struct rocmd_db_pkg *p)
{
	cJSON_AddNumberToObject(o, "id", (double)p->id);
	cJSON_AddStringToObject(o, "name", p->name);
	cJSON_AddStringToObject(o, "digest", p->digest);
	cJSON_AddNumberToObject(o, "imported_ms", (double)p->imported_ms);
	cJSON_AddStringToObject(o, "platform", p->platform);
	if (p->sdk != NULL)
		cJSON_AddStringToObject(o, "sdk", p->sdk);
	else
		cJSON_AddNullToObject(o, "sdk");
	if (p->version_hint != NULL)
		cJSON_AddStringToObject(o, "version_hint", p->version_hint);
	else
		cJSON_AddNullToObject(o, "version_hint");
	cJSON_AddStringToObject(o, "archs", p->archs != NULL ? p->archs : "");
	if (p->binary != NULL)
		cJSON_AddStringToObject(o, "binary", p->binary);
	else
		cJSON_AddNullToObject(o, "binary");
	if (p->binary_version != NULL)
		cJSON_AddStringToObject(o, "binary_version", p->binary_version);
	else
		cJSON_AddNullToObject(o, "binary_version");
	cJSON_AddNumberToObject(o, "files", (double)p->file_count);
	cJSON_AddNumberToObject(o, "bytes", (double)p->total_size);
}

static int
list_one(const struct rocmd_db_pkg *p, void *ctx)
{
	cJSON *o = cJSON_CreateObject();

	add_summary(o, p);
	cJSON_AddItemToArray(ctx, o);
	return 0;
}

static int
m_list(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct rocmd_pkg_service *ps = conn->srv->pkg;
	struct rocmd_pkg_db_stats st;
	cJSON *r, *arr, *store;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	r = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(r, "packages");
	rc = rocmd_pkg_db_list(ps->db, 0, list_one, arr);
	if (rc == 0)
		rc = rocmd_pkg_db_stats(ps->db, &st);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read packages: %s", rocmd_pkg_db_errmsg(ps->db));
		return rc;
	}
	store = cJSON_AddObjectToObject(r, "store");
	cJSON_AddStringToObject(store, "path", ps->store);
	cJSON_AddNumberToObject(store, "package_bytes", (double)st.bytes);
	cJSON_AddNumberToObject(store, "objects", (double)st.objects);
	cJSON_AddNumberToObject(store, "object_bytes", (double)st.object_bytes);
	cJSON_AddNumberToObject(store, "dedup_saved_bytes", (double)(st.bytes - st.object_bytes));
	cJSON_AddNumberToObject(store, "jobs", (double)rocmd_jobs_count(&ps->jobs));
	*result = r;
	return 0;
}

struct show_ctx {
	cJSON *obj;
	cJSON *files;
	size_t bytes, budget;
	int64_t shown;
	int more;
};

static int
show_one(const struct rocmd_db_pkg *p, void *arg)
{
	struct show_ctx *ctx = arg;
	cJSON *id;

	add_summary(ctx->obj, p);
	cJSON_AddStringToObject(ctx->obj, "source", p->source);
	if (p->sdk_source != NULL)
		cJSON_AddStringToObject(ctx->obj, "sdk_source", p->sdk_source);
	id = p->identity != NULL ? cJSON_Parse(p->identity) : NULL;
	cJSON_AddItemToObject(ctx->obj, "identity", id != NULL ? id : cJSON_CreateNull());
	ctx->bytes += p->identity != NULL ? 2 * strlen(p->identity) : 0;
	return 0;
}

static int
show_file(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct show_ctx *ctx = arg;
	size_t sz = 160 + 2 * strlen(f->path) + (f->link != NULL ? 2 * strlen(f->link) : 0);
	cJSON *o;

	if (ctx->bytes + sz > ctx->budget) {
		ctx->more = 1;
		return 1;
	}
	ctx->bytes += sz;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", f->path);
	cJSON_AddStringToObject(o, "kind", f->kind == 'l' ? "symlink" : "file");
	cJSON_AddNumberToObject(o, "size", (double)f->size);
	if (f->sha256 != NULL)
		cJSON_AddStringToObject(o, "sha256", f->sha256);
	if (f->link != NULL)
		cJSON_AddStringToObject(o, "link", f->link);
	if (f->exec)
		cJSON_AddBoolToObject(o, "exec", 1);
	cJSON_AddItemToArray(ctx->files, o);
	ctx->shown++;
	return 0;
}

static int
m_show(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", "files", "offset", "limit", NULL};
	struct rocmd_pkg_service *ps = conn->srv->pkg;
	struct show_ctx ctx = {0};
	int64_t id, offset = 0, limit = 0;
	int files = 0, rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "id", 1, 1, INT64_MAX, &id, why, whylen)) < 0 ||
	    ((rc = rocmd_param_bool(params, "files", 0, &files, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "offset", 0, 0, INT64_MAX, &offset, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_int(params, "limit", 0, 1, 1000000, &limit, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	ctx.obj = cJSON_CreateObject();
	ctx.budget = REPLY_BUDGET(conn->srv);
	rc = rocmd_pkg_db_list(ps->db, id, show_one, &ctx);
	if (rc == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		goto fail;
	}
	if (rc == 0 && files) {
		ctx.files = cJSON_AddArrayToObject(ctx.obj, "file_list");
		rc = rocmd_pkg_db_files(ps->db, id, offset, limit, show_file, &ctx);
		if (rc > 0)
			rc = 0;
		cJSON_AddNumberToObject(ctx.obj, "offset", (double)offset);
		cJSON_AddNumberToObject(ctx.obj, "next_offset", (double)(offset + ctx.shown));
		cJSON_AddBoolToObject(ctx.obj, "more", ctx.more);
	}
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(ps->db));
		goto fail;
	}
	*result = ctx.obj;
	return 0;
fail:
	cJSON_Delete(ctx.obj);
	return rc;
}

static int
name_of(const struct rocmd_db_pkg *p, void *ctx)
{
	snprintf(ctx, 256, "%s", p->name);
	return 0;
}

/* A package's name and digest. */
struct pkg_names {
	char name[256];
	char digest[ROCMD_SHA256_HEX];
};

static int
names_of(const struct rocmd_db_pkg *p, void *ctx)
{
	struct pkg_names *n = ctx;

	snprintf(n->name, sizeof(n->name), "%s", p->name);
	snprintf(n->digest, sizeof(n->digest), "%s", p->digest);
	return 0;
}

static int
m_rm(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", NULL};
	struct rocmd_pkg_service *ps = conn->srv->pkg;
	struct pkg_names names = {"", ""};
	const char *name = names.name;
	int64_t id, deployed = 0;
	cJSON *r, *detail;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "id", 1, 1, INT64_MAX, &id, why, whylen)) < 0)
		return rc;
	rc = rocmd_pkg_db_list(ps->db, id, names_of, &names);
	if (rc == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		return rc;
	}
	if (rc == 0)
		rc = rocmd_pkg_db_deployments(ps->db, id, &deployed);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(ps->db));
		return rc;
	}
	if (deployed > 0) {
		snprintf(why, whylen,
		         "package #%lld (%s) is deployed to %lld target(s); roll those back before "
		         "removing it",
		         (long long)id, name, (long long)deployed);
		return ROCMD_EBUSY;
	}
	/* The record first (pkg.h): a crash before the row goes leaves the
	 * package as it was, its record written again from the row at start. */
	if ((rc = rocmd_store_record_remove(ps->store, names.digest)) < 0) {
		snprintf(why, whylen, "cannot remove package #%lld's record from the store: %s",
		         (long long)id, rocmd_strerror(rc));
		return rc;
	}
	rc = rocmd_pkg_db_remove(ps->db, id);
	if (rc < 0) {
		snprintf(why, whylen, "cannot remove package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(ps->db));
		return rc;
	}
	rocmd_server_counts_changed(conn->srv);
	detail = cJSON_CreateObject();
	cJSON_AddNumberToObject(detail, "id", (double)id);
	cJSON_AddStringToObject(detail, "name", name);
	rocmd_server_event(conn->srv, "pkg.removed", detail, "removed package #%lld %s by uid %u",
	                   (long long)id, name, (unsigned)conn->peer.uid);
	r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "id", (double)id);
	cJSON_AddStringToObject(r, "name", name);
	rc = rocmd_pkg_queue_gc(ps, conn, r);
	if (rc < 0) {
		/* The package is gone; the collection runs at the next start. */
		*result = cJSON_CreateObject();
		cJSON_AddNumberToObject(*result, "id", (double)id);
		cJSON_AddStringToObject(*result, "name", name);
		return 0;
	}
	return rc;
}

static int
m_verify(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", NULL};
	struct rocmd_pkg_service *ps = conn->srv->pkg;
	int64_t id = 0;
	char name[256];
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "id", 0, 1, INT64_MAX, &id, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (id > 0 && rocmd_pkg_db_list(ps->db, id, name_of, name) == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		return ROCMD_ENOTFOUND;
	}
	return rocmd_pkg_queue_verify(ps, id, conn, why, whylen);
}

static int
m_match(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"sdk", "arch", "platform", NULL};
	struct rocmd_pkg_service *ps = conn->srv->pkg;
	const char *sdk, *arch, *platform = PKG_PLATFORM;
	struct rocmd_pkg_candidates l;
	int chosen = -1, rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "sdk", 1, &sdk, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "arch", 1, &arch, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "platform", 0, &platform, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	rc = rocmd_pkg_candidates_load(ps->db, &l, why, whylen);
	if (rc < 0)
		return rc;
	rc = rocmd_pkg_match(sdk, platform, arch, l.c, l.n, conn->srv->cfg->store_match_rules,
	                     &chosen, result, why, whylen);
	rocmd_pkg_candidates_free(&l);
	if (rc == ROCMD_EINVAL)
		rc = ROCMD_EPARAMS;
	return rc;
}

const struct rocmd_method rocmd_methods_pkg[] = {
    {"pkg.import", ROCMD_METHOD_MUTATING, m_import},
    {"pkg.list", 0, m_list},
    {"pkg.show", 0, m_show},
    {"pkg.rm", ROCMD_METHOD_MUTATING, m_rm},
    {"pkg.verify", ROCMD_METHOD_MUTATING, m_verify},
    {"pkg.match", 0, m_match},
    {"pkg.refresh", ROCMD_METHOD_MUTATING, rocmd_feed_m_refresh},
    {"pkg.available", 0, rocmd_feed_m_available},
    {"pkg.fetch", ROCMD_METHOD_MUTATING, rocmd_feed_m_fetch},
    {NULL, 0, NULL},
};
