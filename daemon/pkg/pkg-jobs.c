/*
 * The package store's jobs (see pkg-service.h): importing an archive or a
 * folder (read, identify, move into the store), verifying stored objects,
 * collecting the ones no package names, and fetching a package a feed
 * offers (downloaded into store/partial/, checked, then imported as any
 * archive is). They run on the daemon's job runner
 * (daemon/core/jobs.h), one at a time in arrival order, so an import never
 * races a collection. A worker touches only its job's fields (the progress
 * counters under the job's lock); the database is read on the loop thread
 * before a job runs (the start hook) and written after it (the done hook),
 * which also records the event and shapes the client's reply.
 */
#include "pkg-service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "daemon/core/server.h"
#include "db/db-pkg.h"
#include "feed.h"
#include "version.h"

#define TICK_MS 250

enum job_type { JOB_IMPORT, JOB_VERIFY, JOB_GC };

struct pkg_job {
	struct rocmd_job base; /* first: the runner's view */
	struct rocmd_pkg_service *ps;
	enum job_type type;
	/* import */
	char *source, *name, *sdk;
	struct rocmd_pkg_cred *cred; /* the importer's rights, or NULL */
	int from_drop;
	/* fetch: the archive's address, size and hash, the partial file */
	char *url, *partial;
	uint64_t size;
	char sha256[ROCMD_SHA256_HEX];
	int kept; /* the partial file was kept for a resume */
	rocmd_pkg_fetched_fn then; /* told how the fetch ended, or NULL */
	void *then_ctx;
	struct rocmd_pkg_contents contents;
	cJSON *identity;
	char digest[ROCMD_SHA256_HEX];
	int64_t imported_ms;
	int record_new; /* this import wrote the package's record */
	uint64_t added, added_bytes;
	/* verify */
	int64_t pkg_id;
	struct rocmd_store_check *objs;
	size_t nobjs, obj_cap;
	/* gc (also after pkg.rm) */
	char **keep;
	size_t nkeep, keep_cap;
	char **digests; /* the packages the database names, sorted */
	size_t ndigests, digests_cap;
	uint64_t removed, removed_bytes;
	cJSON *rm_result;
	int not_run; /* the references could not be read: nothing collected */
	/* shared with the worker, under base.lock */
	struct rocmd_pkg_progress pr;
	int phase; /* 0 reading, 1 storing, 2 verifying, 3 collecting, 4 downloading */
};

static const struct rocmd_job_ops import_ops, verify_ops, gc_ops;

static void
job_free(struct rocmd_job *b)
{
	struct pkg_job *j = (struct pkg_job *)b;

	rocmd_pkg_contents_free(&j->contents);
	cJSON_Delete(j->identity);
	cJSON_Delete(j->rm_result);
	free(j->source);
	free(j->name);
	free(j->sdk);
	free(j->url);
	free(j->partial);
	rocmd_pkg_cred_free(j->cred);
	free(j->objs);
	for (size_t i = 0; i < j->nkeep; i++)
		free(j->keep[i]);
	free(j->keep);
	rocmd_store_records_free(j->digests, j->ndigests);
	rocmd_job_fini(&j->base);
	free(j);
}

static struct pkg_job *
job_new(struct rocmd_pkg_service *ps, enum job_type type)
{
	static const struct rocmd_job_ops *const ops[] = {&import_ops, &verify_ops, &gc_ops};
	struct pkg_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	if (rocmd_job_init(&j->base, ops[type]) < 0) {
		free(j);
		return NULL;
	}
	j->ps = ps;
	j->type = type;
	/* An import or a verification nobody waits for any more is canceled;
	 * a collection always finishes (the drop folder's imports have no client). */
	if (type != JOB_GC)
		j->base.flags = ROCMD_JOB_CANCEL_ORPHANED;
	return j;
}

static int
on_read_progress(const struct rocmd_pkg_progress *pr, void *ctx)
{
	struct pkg_job *j = ctx;

	uv_mutex_lock(&j->base.lock);
	j->pr = *pr;
	uv_mutex_unlock(&j->base.lock);
	return rocmd_job_canceled(&j->base);
}

static int
on_verify_progress(uint64_t done, uint64_t total, void *ctx)
{
	struct pkg_job *j = ctx;

	uv_mutex_lock(&j->base.lock);
	j->pr.bytes_out = done;
	j->pr.bytes_total = total;
	j->pr.files++;
	uv_mutex_unlock(&j->base.lock);
	return rocmd_job_canceled(&j->base);
}

static void
set_phase(struct pkg_job *j, int phase)
{
	uv_mutex_lock(&j->base.lock);
	j->phase = phase;
	uv_mutex_unlock(&j->base.lock);
}

static cJSON *
job_progress(struct rocmd_job *b)
{
	static const char *const phases[] = {"reading", "storing", "verifying", "collecting",
	                                     "downloading"};
	struct pkg_job *j = (struct pkg_job *)b;
	struct rocmd_pkg_progress pr;
	cJSON *p;
	int phase;

	uv_mutex_lock(&j->base.lock);
	pr = j->pr;
	phase = j->phase;
	uv_mutex_unlock(&j->base.lock);
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "phase", phases[phase]);
	cJSON_AddNumberToObject(p, "bytes_in", (double)pr.bytes_in);
	cJSON_AddNumberToObject(p, "bytes_total", (double)pr.bytes_total);
	cJSON_AddNumberToObject(p, "bytes_out", (double)pr.bytes_out);
	cJSON_AddNumberToObject(p, "files", (double)pr.files);
	cJSON_AddStringToObject(p, "current", pr.current);
	return p;
}

/* ---- import ---- */

static int
job_canceled(void *job)
{
	return rocmd_job_canceled(job);
}

static int
on_download_progress(const struct rocmd_feed_progress *p, void *ctx)
{
	struct pkg_job *j = ctx;

	uv_mutex_lock(&j->base.lock);
	j->pr.bytes_in = j->pr.bytes_out = p->done;
	j->pr.bytes_total = p->total;
	uv_mutex_unlock(&j->base.lock);
	return rocmd_job_canceled(&j->base);
}

/* Worker, for a fetch: the archive into store/partial/<sha256>, whole and
 * with the feed's hash, before anything reads it. */
static int
fetch_download(struct pkg_job *j)
{
	const struct rocmd_config *cfg = j->ps->srv->cfg;
	struct rocmd_feed_http h = {
	    .ca_bundle = cfg->pkg_ca_bundle,
	    .connect_timeout_s = (long)cfg->pkg_connect_timeout_s,
	    .stall_timeout_s = (long)cfg->pkg_stall_timeout_s,
	    .allow_loopback_http = (int)cfg->pkg_allow_loopback_http,
	    .user_agent = "rocmd/" ROCMD_VERSION_STRING,
	};

	set_phase(j, 4);
	uv_mutex_lock(&j->base.lock);
	snprintf(j->pr.current, sizeof(j->pr.current), "%s", j->name);
	uv_mutex_unlock(&j->base.lock);
	return rocmd_feed_download(&h, j->url, j->partial, j->size, j->sha256,
	                           on_download_progress, j, &j->kept, j->base.why,
	                           sizeof(j->base.why));
}

/* Worker: read, identify, store. */
static void
import_work(struct rocmd_job *b)
{
	struct pkg_job *j = (struct pkg_job *)b;
	struct rocmd_pkg_service *ps = j->ps;
	struct rocmd_pkg_read_opts opts = {
	    .limits =
	        {
	            .max_total = (uint64_t)ps->srv->cfg->store_max_total,
	            .max_file = (uint64_t)ps->srv->cfg->store_max_file,
	            .max_files = (uint64_t)ps->srv->cfg->store_max_files,
	        },
	    .cred = j->cred,
	    .progress = on_read_progress,
	    .ctx = j,
	};
	char staging[4096];

	if (j->url != NULL && (b->rc = fetch_download(j)) < 0)
		return;
	b->rc = rocmd_store_staging_new(ps->store, staging, sizeof(staging));
	if (b->rc < 0) {
		snprintf(b->why, sizeof(b->why),
		         "cannot create a staging folder in %.900s/staging: %s", ps->store,
		         rocmd_strerror(b->rc));
		return;
	}
	b->rc = rocmd_pkg_read(j->url != NULL ? j->partial : j->source, staging, &opts, &j->contents,
	                       b->why, sizeof(b->why));
	/* A fetched archive has served its purpose once read: nothing of it stays. */
	if (j->url != NULL)
		rocmd_fs_unlink(j->partial);
	if (b->rc < 0)
		return;
	b->rc = rocmd_pkg_identify(&j->contents, j->name, j->sdk, job_canceled, b, &j->identity,
	                           b->why, sizeof(b->why));
	if (b->rc < 0)
		goto fail;
	rocmd_pkg_digest(&j->contents, j->digest);
	if (rocmd_job_canceled(b)) {
		b->rc = ROCMD_ECANCELED;
		snprintf(b->why, sizeof(b->why), "import canceled");
		goto fail;
	}
	set_phase(j, 1);
	b->rc = rocmd_store_commit(ps->store, &j->contents, &j->added, &j->added_bytes, b->why,
	                           sizeof(b->why));
	if (b->rc < 0)
		goto fail;
	/* The record after the objects, before the row (pkg.h): from here on the
	 * store holds the package whatever becomes of the database. An explicit
	 * --sdk rewrites an existing one, as it pins the stored package. */
	j->imported_ms = rocmd_now_ms();
	{
		cJSON *rec = rocmd_store_record_new(&j->contents, j->digest, j->name, j->source,
		                                    j->imported_ms, j->identity);
		b->rc = rec == NULL
		            ? ROCMD_ENOMEM
		            : rocmd_store_record_write(ps->store, rec,
		                                       j->sdk != NULL && j->sdk[0] != '\0',
		                                       &j->record_new, b->why, sizeof(b->why));
		cJSON_Delete(rec);
	}
	if (b->rc < 0)
		goto fail;
	return;
fail:
	rocmd_pkg_contents_free(&j->contents);
}

static char *
join_archs(const cJSON *archs)
{
	size_t len = 1, at = 0;
	const cJSON *it;
	char *s;

	cJSON_ArrayForEach(it, archs) len += strlen(it->valuestring) + 1;
	s = calloc(1, len);
	if (s == NULL)
		return NULL;
	cJSON_ArrayForEach(it, archs)
	{
		size_t n = strlen(it->valuestring);
		if (at > 0)
			s[at++] = ',';
		memcpy(s + at, it->valuestring, n + 1);
		at += n;
	}
	return s;
}

static const char *
jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

int
rocmd_pkg_row_add(struct rocmd_pkg_service *ps, const char *digest, const char *name,
                  const char *source, int64_t imported_ms, const cJSON *identity,
                  const struct rocmd_pkg_contents *c, int64_t *id)
{
	struct rocmd_db_pkg row = {0};
	struct rocmd_db_pkg_file *files = NULL;
	char *archs = NULL, *text = NULL;
	char(*hex)[ROCMD_SHA256_HEX] = NULL;
	const cJSON *bin = cJSON_GetObjectItem(identity, "binary");
	int rc = ROCMD_ENOMEM;

	*id = 0;
	files = calloc(c->count ? c->count : 1, sizeof(*files));
	hex = calloc(c->count ? c->count : 1, sizeof(*hex));
	archs = join_archs(cJSON_GetObjectItem(identity, "archs"));
	text = cJSON_PrintUnformatted(identity);
	if (files == NULL || hex == NULL || archs == NULL || text == NULL)
		goto out;
	for (size_t i = 0; i < c->count; i++) {
		const struct rocmd_pkg_entry *e = &c->entries[i];
		files[i].path = e->path;
		files[i].kind = e->kind;
		files[i].exec = e->exec;
		files[i].size = (int64_t)e->size;
		if (e->kind == ROCMD_PKG_FILE) {
			rocmd_sha256_hex(e->sha256, hex[i]);
			files[i].sha256 = hex[i];
		}
		files[i].link = e->link;
	}
	row.digest = digest;
	row.name = name;
	row.source = source;
	row.imported_ms = imported_ms;
	row.platform = jstr(identity, "platform");
	row.sdk = jstr(identity, "sdk");
	row.sdk_source = jstr(identity, "sdk_source");
	row.version_hint = jstr(identity, "version_hint");
	row.archs = archs;
	row.binary = jstr(bin, "path");
	row.binary_version =
	    jstr(bin, "file_version") != NULL ? jstr(bin, "file_version") : jstr(bin, "soname");
	row.file_count = (int64_t)c->count;
	row.total_size = (int64_t)c->total_size;
	row.identity = text;
	rc = rocmd_pkg_db_add(ps->db, &row, files, c->count, id);
out:
	free(files);
	free(hex);
	free(archs);
	free(text);
	return rc;
}

/* Loop thread: record an imported package. */
static int
import_done(struct pkg_job *j, cJSON **out)
{
	struct rocmd_pkg_service *ps = j->ps;
	struct rocmd_server *srv = ps->srv;
	char *archs = NULL, *identity = NULL;
	const char *sdk;
	cJSON *result, *detail;
	int64_t id = 0;
	int rc = j->base.rc, existed = 0, sdk_set = 0;

	if (rc < 0)
		goto refused;
	archs = join_archs(cJSON_GetObjectItem(j->identity, "archs"));
	identity = cJSON_PrintUnformatted(j->identity);
	sdk = jstr(j->identity, "sdk");
	if (archs == NULL || identity == NULL) {
		rc = ROCMD_ENOMEM;
		snprintf(j->base.why, sizeof(j->base.why), "out of memory recording the package");
		goto refused;
	}
	rc = rocmd_pkg_row_add(ps, j->digest, j->name, j->source, j->imported_ms, j->identity,
	                       &j->contents, &id);
	if (rc == ROCMD_EEXISTS) {
		existed = 1;
		rc = 0;
		/* The same files again with an explicit --sdk: pin the stored package. */
		if (j->sdk != NULL && j->sdk[0] != '\0' &&
		    rocmd_pkg_db_set_sdk(ps->db, id, sdk, jstr(j->identity, "sdk_source"),
		                         identity) == 0) {
			sdk_set = 1;
			rocmd_server_event(srv, "pkg.sdk_set", NULL,
			                   "package #%lld pinned to SDK %s", (long long)id, sdk);
		}
	} else if (rc < 0) {
		snprintf(j->base.why, sizeof(j->base.why), "cannot record the package: %s",
		         rocmd_pkg_db_errmsg(ps->db));
		/* Its record and new objects are orphans now: remove the record
		 * this import wrote (or the next start adopts the package the user
		 * was told was refused), then collect them. */
		if (j->record_new && rocmd_store_record_remove(ps->store, j->digest) < 0)
			log_warn("store: cannot remove the record of refused package %s",
			         j->digest);
		rocmd_pkg_queue_gc(ps, NULL, NULL);
		goto refused;
	}
	rocmd_server_counts_changed(srv);
	result = cJSON_CreateObject();
	cJSON_AddNumberToObject(result, "id", (double)id);
	cJSON_AddStringToObject(result, "name", j->name);
	cJSON_AddStringToObject(result, "digest", j->digest);
	cJSON_AddBoolToObject(result, "already_stored", existed);
	cJSON_AddBoolToObject(result, "sdk_updated", sdk_set);
	cJSON_AddNumberToObject(result, "files", (double)j->contents.count);
	cJSON_AddNumberToObject(result, "bytes", (double)j->contents.total_size);
	cJSON_AddNumberToObject(result, "new_objects", (double)j->added);
	cJSON_AddNumberToObject(result, "new_bytes", (double)j->added_bytes);
	cJSON_AddNumberToObject(result, "seconds", (rocmd_now_ms() - j->base.started_ms) / 1000.0);
	cJSON_AddStringToObject(result, "format", j->contents.format ? j->contents.format : "");
	cJSON_AddItemToObject(result, "identity", j->identity);
	j->identity = NULL;
	detail = cJSON_CreateObject();
	cJSON_AddNumberToObject(detail, "id", (double)id);
	cJSON_AddStringToObject(detail, "name", j->name);
	cJSON_AddStringToObject(detail, "source",
	                        j->from_drop ? "drop" : j->url != NULL ? "feed" : "request");
	cJSON_AddStringToObject(detail, "archs", archs);
	cJSON_AddStringToObject(detail, "sdk", sdk != NULL ? sdk : "");
	if (existed)
		rocmd_server_event(srv, "pkg.imported", detail,
		                   "package %s is already stored as #%lld", j->name, (long long)id);
	else
		rocmd_server_event(srv, "pkg.imported", detail,
		                   "imported package #%lld %s (%zu files, %s, SDK %s)",
		                   (long long)id, j->name, j->contents.count,
		                   archs[0] ? archs : "no archs", sdk != NULL ? sdk : "unknown");
	if (j->from_drop)
		rocmd_pkg_drop_done(ps, j->name, 1, NULL);
	if (j->then != NULL)
		j->then(srv, id, NULL, j->then_ctx);
	/* Staged entries are in the store now; nothing of the staging is left. */
	*out = result;
	goto out;
refused:
	detail = cJSON_CreateObject();
	cJSON_AddStringToObject(detail, "name", j->name);
	cJSON_AddStringToObject(detail, "path", j->source);
	cJSON_AddStringToObject(detail, "source", j->from_drop ? "drop" : "request");
	cJSON_AddStringToObject(detail, "error", rocmd_err_name(rc));
	cJSON_AddStringToObject(detail, "why", j->base.why);
	if (j->url != NULL) {
		cJSON_AddStringToObject(detail, "url", j->url);
		cJSON_AddBoolToObject(detail, "resumable", j->kept);
	}
	rocmd_server_event(srv, "pkg.refused", detail, "%s of %s refused: %s",
	                   j->url != NULL ? "fetch" : "import", j->name, j->base.why);
	if (j->kept)
		snprintf(j->base.why + strlen(j->base.why), sizeof(j->base.why) - strlen(j->base.why),
		         "; what came is kept: `rocmctl pkg fetch` again resumes it");
	if (j->from_drop)
		rocmd_pkg_drop_done(ps, j->name, 0, j->base.why);
	if (j->then != NULL)
		j->then(srv, 0, j->base.why, j->then_ctx);
	j->base.rc = rc;
out:
	free(archs);
	free(identity);
	return 0;
}

static int
import_job_done(struct rocmd_job *b, cJSON **out)
{
	return import_done((struct pkg_job *)b, out);
}

/* ---- verify ---- */

static void
verify_work(struct rocmd_job *b)
{
	struct pkg_job *j = (struct pkg_job *)b;

	set_phase(j, 2);
	b->rc = rocmd_store_verify(j->ps->store, j->objs, j->nobjs, on_verify_progress, j);
	if (b->rc == ROCMD_ECANCELED)
		snprintf(b->why, sizeof(b->why), "verification canceled");
}

static int
collect_obj(const char *sha, int64_t size, void *ctx)
{
	struct pkg_job *j = ctx;

	if (j->nobjs == j->obj_cap) {
		size_t ncap = j->obj_cap ? j->obj_cap * 2 : 1024;
		void *n = realloc(j->objs, ncap * sizeof(*j->objs));
		if (n == NULL)
			return ROCMD_ENOMEM;
		j->objs = n;
		j->obj_cap = ncap;
	}
	memset(&j->objs[j->nobjs], 0, sizeof(j->objs[0]));
	snprintf(j->objs[j->nobjs].hex, sizeof(j->objs[0].hex), "%s", sha);
	j->objs[j->nobjs].size = (uint64_t)size;
	j->nobjs++;
	return 0;
}

static int
verify_done(struct pkg_job *j, cJSON **out)
{
	cJSON *r, *bad;
	size_t ok = 0, nbad = 0;
	uint64_t bytes = 0;

	if (j->base.rc < 0)
		return 0;
	r = cJSON_CreateObject();
	bad = cJSON_CreateArray();
	for (size_t i = 0; i < j->nobjs; i++) {
		bytes += j->objs[i].size;
		if (j->objs[i].status == 0) {
			ok++;
			continue;
		}
		nbad++;
		if (cJSON_GetArraySize(bad) < 1000) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "sha256", j->objs[i].hex);
			cJSON_AddStringToObject(o, "problem",
			                        j->objs[i].status == ROCMD_ENOTFOUND ? "missing"
			                        : j->objs[i].status == ROCMD_ECORRUPT
			                            ? "corrupt"
			                            : rocmd_strerror(j->objs[i].status));
			cJSON_AddItemToArray(bad, o);
		}
	}
	cJSON_AddNumberToObject(r, "objects", (double)j->nobjs);
	cJSON_AddNumberToObject(r, "bytes", (double)bytes);
	cJSON_AddNumberToObject(r, "ok", (double)ok);
	cJSON_AddNumberToObject(r, "bad", (double)nbad);
	cJSON_AddItemToObject(r, "problems", bad);
	cJSON_AddNumberToObject(r, "seconds", (rocmd_now_ms() - j->base.started_ms) / 1000.0);
	if (nbad > 0)
		rocmd_server_event(j->ps->srv, "pkg.verify_failed", NULL,
		                   "store verification: %zu of %zu objects missing or corrupt",
		                   nbad, j->nobjs);
	else
		rocmd_server_event(j->ps->srv, "pkg.verified", NULL,
		                   "store verification: %zu objects, %llu bytes, all intact", ok,
		                   (unsigned long long)bytes);
	*out = r;
	return 0;
}

static int
verify_job_done(struct rocmd_job *b, cJSON **out)
{
	return verify_done((struct pkg_job *)b, out);
}

/* ---- collect ---- */

static int
collect_keep(const char *sha, int64_t size, void *ctx)
{
	struct pkg_job *j = ctx;

	(void)size;
	return rocmd_pkg_strv_add(&j->keep, &j->nkeep, &j->keep_cap, sha);
}

static int
collect_digest(const struct rocmd_db_pkg *p, void *ctx)
{
	struct pkg_job *j = ctx;

	return rocmd_pkg_strv_add(&j->digests, &j->ndigests, &j->digests_cap, p->digest);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loop thread, as the collection starts: the objects the database still
 * names, and the packages it names (the records of the others are read on
 * the worker). */
static int
gc_start(struct rocmd_job *b)
{
	struct pkg_job *j = (struct pkg_job *)b;

	if (rocmd_pkg_db_objects(j->ps->db, 0, collect_keep, j) < 0 ||
	    rocmd_pkg_db_list(j->ps->db, 0, collect_digest, j) < 0) {
		log_err("store: cannot list referenced objects: %s; not collecting",
		        rocmd_pkg_db_errmsg(j->ps->db));
		j->not_run = 1;
		return ROCMD_JOB_SKIP;
	}
	if (j->ndigests > 1)
		qsort(j->digests, j->ndigests, sizeof(*j->digests), cmp_str);
	return 0;
}

/* Adds to the objects kept those of every record the database does not name
 * (a package it lost, or one whose adoption failed). A store whose records
 * are not complete, or a record that cannot be read, is not collected: an
 * object may be a package's that nothing else names. */
static int
gc_keep_records(struct pkg_job *j)
{
	char **recs = NULL, why[512];
	size_t nrecs = 0;
	int rc;

	if (!rocmd_store_records_complete(j->ps->store)) {
		snprintf(j->base.why, sizeof(j->base.why),
		         "the store's package records are not complete: nothing collected");
		return ROCMD_EBUSY;
	}
	if ((rc = rocmd_store_records_list(j->ps->store, &recs, &nrecs)) < 0) {
		snprintf(j->base.why, sizeof(j->base.why),
		         "cannot list the store's package records: %s; nothing collected",
		         rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < nrecs && rc == 0; i++) {
		char *key = recs[i];
		cJSON *rec = NULL;
		if (j->ndigests > 0 &&
		    bsearch(&key, j->digests, j->ndigests, sizeof(*j->digests), cmp_str) != NULL)
			continue;
		rc = rocmd_store_record_read(j->ps->store, recs[i], &rec, why, sizeof(why));
		if (rc < 0)
			snprintf(j->base.why, sizeof(j->base.why), "%s; nothing collected", why);
		else
			rc = rocmd_store_record_objects(rec, &j->keep, &j->nkeep, &j->keep_cap);
		cJSON_Delete(rec);
	}
	rocmd_store_records_free(recs, nrecs);
	if (rc == 0 && j->nkeep > 1)
		qsort(j->keep, j->nkeep, sizeof(*j->keep), cmp_str);
	return rc;
}

static void
gc_work(struct rocmd_job *b)
{
	struct pkg_job *j = (struct pkg_job *)b;

	set_phase(j, 3);
	if ((b->rc = gc_keep_records(j)) < 0)
		return;
	b->rc = rocmd_store_gc(j->ps->store, j->keep, j->nkeep, &j->removed, &j->removed_bytes);
	if (b->rc < 0)
		snprintf(b->why, sizeof(b->why), "cannot collect unused objects: %s",
		         rocmd_strerror(b->rc));
}

static int
gc_done(struct rocmd_job *b, cJSON **out)
{
	struct pkg_job *j = (struct pkg_job *)b;
	cJSON *r = j->rm_result != NULL ? j->rm_result : cJSON_CreateObject();

	j->rm_result = NULL;
	if (b->rc == 0 && j->removed > 0)
		log_info("store: removed %llu unused objects (%llu bytes)",
		         (unsigned long long)j->removed, (unsigned long long)j->removed_bytes);
	else if (b->rc < 0)
		log_err("store: %s", b->why);
	if (!j->not_run) {
		cJSON_AddNumberToObject(r, "objects_removed", (double)j->removed);
		cJSON_AddNumberToObject(r, "bytes_freed", (double)j->removed_bytes);
	}
	/* The package is gone either way; a failed collection is retried at start-up. */
	b->rc = 0;
	*out = r;
	return 0;
}

static const struct rocmd_job_ops import_ops = {.what = "import",
                                                .work = import_work,
                                                .done = import_job_done,
                                                .progress = job_progress,
                                                .free = job_free};
static const struct rocmd_job_ops verify_ops = {.what = "verify",
                                                .work = verify_work,
                                                .done = verify_job_done,
                                                .progress = job_progress,
                                                .free = job_free};
static const struct rocmd_job_ops gc_ops = {.what = "collect",
                                            .start = gc_start,
                                            .work = gc_work,
                                            .done = gc_done,
                                            .progress = job_progress,
                                            .free = job_free};

/* ---- queueing ---- */

/* The last component of PATH ('\\' separates too on Windows: rocmd_fs_path_norm). */
static char *
base_name(const char *path)
{
	char norm[4096];
	const char *s;

	if (rocmd_fs_path_norm(path, norm, sizeof(norm)) < 0)
		return NULL;
	s = strrchr(norm, '/');
	return strdup(s != NULL && s[1] != '\0' ? s + 1 : norm);
}

int
rocmd_pkg_queue_import(struct rocmd_pkg_service *ps, const char *path, const char *name,
                       const char *sdk, struct rocmd_pkg_cred *cred, struct rocmd_conn *conn)
{
	struct pkg_job *j = job_new(ps, JOB_IMPORT);
	int rc = 0;

	if (j == NULL) {
		rocmd_pkg_cred_free(cred);
		return ROCMD_ENOMEM;
	}
	j->cred = cred;
	j->from_drop = conn == NULL;
	j->source = strdup(path);
	j->name = name != NULL ? strdup(name) : base_name(path);
	j->sdk = sdk != NULL ? strdup(sdk) : NULL;
	if (j->source == NULL || j->name == NULL || (sdk != NULL && j->sdk == NULL) ||
	    (conn != NULL && (rc = rocmd_job_defer_reply(&j->base, conn)) < 0)) {
		job_free(&j->base);
		return ROCMD_ENOMEM;
	}
	if (j->base.pending != NULL && rocmd_jobs_count(&ps->jobs) > 0) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "phase", "queued");
		cJSON_AddNumberToObject(p, "ahead", (double)rocmd_jobs_count(&ps->jobs));
		rocmd_pending_progress(j->base.pending, p);
	}
	rocmd_jobs_submit(&ps->jobs, &j->base);
	return rc;
}

int
rocmd_pkg_queue_fetch(struct rocmd_pkg_service *ps, const struct rocmd_feed_pkg *p,
                      struct rocmd_conn *conn, rocmd_pkg_fetched_fn then, void *then_ctx)
{
	struct pkg_job *j = job_new(ps, JOB_IMPORT);
	char partial[4096];
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	if (rocmd_fs_fmt(partial, sizeof(partial), "%s/partial/%s", ps->store, p->sha256) >=
	    (int)sizeof(partial)) {
		job_free(&j->base);
		return ROCMD_EINVAL;
	}
	j->source = strdup(p->url);
	j->url = strdup(p->url);
	j->name = strdup(p->name);
	j->partial = strdup(partial);
	j->size = p->size;
	j->then = then;
	j->then_ctx = then_ctx;
	memcpy(j->sha256, p->sha256, sizeof(j->sha256));
	if (j->source == NULL || j->url == NULL || j->name == NULL || j->partial == NULL ||
	    (conn != NULL && rocmd_job_defer_reply(&j->base, conn) < 0)) {
		job_free(&j->base);
		return ROCMD_ENOMEM;
	}
	rc = conn != NULL ? ROCMD_METHOD_DEFERRED : 0;
	rocmd_jobs_submit(&ps->jobs, &j->base);
	return rc;
}

int
rocmd_pkg_queue_verify(struct rocmd_pkg_service *ps, int64_t id, struct rocmd_conn *conn, char *why,
                       size_t whylen)
{
	struct pkg_job *j = job_new(ps, JOB_VERIFY);
	int rc;

	if (j == NULL)
		return ROCMD_ENOMEM;
	j->pkg_id = id;
	rc = rocmd_pkg_db_objects(ps->db, id, collect_obj, j);
	if (rc < 0) {
		job_free(&j->base);
		snprintf(why, whylen, "cannot list the store's objects: %s",
		         rocmd_pkg_db_errmsg(ps->db));
		return rc;
	}
	if ((rc = rocmd_job_defer_reply(&j->base, conn)) < 0) {
		job_free(&j->base);
		return rc;
	}
	rocmd_jobs_submit(&ps->jobs, &j->base);
	return rc;
}

/* The references are read when the collection starts (gc_start), not now:
 * an import queued before it may still add some. */
int
rocmd_pkg_queue_gc(struct rocmd_pkg_service *ps, struct rocmd_conn *conn, cJSON *result)
{
	struct pkg_job *j = job_new(ps, JOB_GC);
	int rc = 0;

	if (j == NULL) {
		cJSON_Delete(result);
		return ROCMD_ENOMEM;
	}
	j->rm_result = result;
	if (conn != NULL && (rc = rocmd_job_defer_reply(&j->base, conn)) < 0) {
		job_free(&j->base);
		return rc;
	}
	rocmd_jobs_submit(&ps->jobs, &j->base);
	return rc;
}

/* ---- the engine ---- */

int
rocmd_pkg_start(struct rocmd_server *srv, struct rocmd_pkg_service **out, char *why, size_t whylen)
{
	struct rocmd_pkg_service *ps;
	int rc;

	*out = NULL;
	if ((rc = rocmd_pkg_rules_check(srv->cfg->store_match_rules, why, whylen)) < 0)
		return rc;
	if ((ps = calloc(1, sizeof(*ps))) == NULL)
		return ROCMD_ENOMEM;
	ps->srv = srv;
	snprintf(ps->store, sizeof(ps->store), "%s/store", srv->cfg->state_dir);
	snprintf(ps->drop, sizeof(ps->drop), "%s/drop", srv->cfg->state_dir);
	snprintf(ps->feeds, sizeof(ps->feeds), "%s/feeds", srv->cfg->state_dir);
	if ((rc = rocmd_store_open(ps->store, why, whylen)) < 0 ||
	    (rc = rocmd_pkg_db_attach(srv->db, &ps->db)) < 0) {
		free(ps);
		return rc;
	}
	if ((rc = rocmd_jobs_init(&ps->jobs, srv, "package store", TICK_MS)) < 0) {
		rocmd_pkg_db_detach(ps->db);
		free(ps);
		return rc;
	}
	rocmd_pkg_drop_start(ps);
	/* The store's records and the database set right (never a reason to
	 * delete the store), then objects orphaned by an import or removal cut
	 * short: the queue runs them in this order. */
	if ((rc = rocmd_pkg_queue_adopt(ps)) < 0)
		log_err("store: cannot check its records: %s", rocmd_strerror(rc));
	else
		rocmd_pkg_queue_gc(ps, NULL, NULL);
	*out = ps;
	return 0;
}

static void
engine_shutdown(void *self)
{
	rocmd_jobs_shutdown(&((struct rocmd_pkg_service *)self)->jobs);
}

static void
engine_close(void *self)
{
	struct rocmd_pkg_service *ps = self;

	rocmd_jobs_close(&ps->jobs);
	rocmd_pkg_drop_close(ps);
}

static void
engine_free(void *self)
{
	struct rocmd_pkg_service *ps = self;

	rocmd_pkg_db_detach(ps->db);
	free(ps);
}

static void
engine_status(void *self, cJSON *notes)
{
	struct rocmd_pkg_service *ps = self;

	if (ps->note[0] != '\0')
		cJSON_AddItemToArray(notes, cJSON_CreateString(ps->note));
}

const struct rocmd_engine_ops rocmd_pkg_engine = {
    .name = "package store",
    .status = engine_status,
    .shutdown = engine_shutdown,
    .close = engine_close,
    .free = engine_free,
};

/* ---- candidates for matching (pkg.match, deploy) ---- */

static int
cand_one(const struct rocmd_db_pkg *p, void *arg)
{
	struct rocmd_pkg_candidates *l = arg;
	struct rocmd_pkg_candidate *c;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		void *n = realloc(l->c, ncap * sizeof(*l->c));
		if (n == NULL)
			return ROCMD_ENOMEM;
		l->c = n;
		l->cap = ncap;
	}
	c = &l->c[l->n++];
	memset(c, 0, sizeof(*c));
	c->id = p->id;
	c->imported_ms = p->imported_ms;
	c->name = strdup(p->name);
	c->platform = strdup(p->platform);
	c->sdk = p->sdk != NULL ? strdup(p->sdk) : NULL;
	c->version_hint = p->version_hint != NULL ? strdup(p->version_hint) : NULL;
	c->archs = strdup(p->archs != NULL ? p->archs : "");
	if (p->identity != NULL) {
		cJSON *id = cJSON_Parse(p->identity);
		c->lt_only = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(id, "carries_rocblas"));
		cJSON_Delete(id);
	}
	return c->name == NULL || c->platform == NULL || c->archs == NULL ? ROCMD_ENOMEM : 0;
}

int
rocmd_pkg_candidates_load(struct rocmd_pkg_db *db, struct rocmd_pkg_candidates *out, char *why,
                          size_t whylen)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = rocmd_pkg_db_list(db, 0, cand_one, out);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read packages: %s", rocmd_pkg_db_errmsg(db));
		rocmd_pkg_candidates_free(out);
	}
	return rc;
}

void
rocmd_pkg_candidates_free(struct rocmd_pkg_candidates *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->c[i].name);
		free((char *)l->c[i].platform);
		free((char *)l->c[i].sdk);
		free((char *)l->c[i].version_hint);
		free((char *)l->c[i].archs);
	}
	free(l->c);
	memset(l, 0, sizeof(*l));
}
