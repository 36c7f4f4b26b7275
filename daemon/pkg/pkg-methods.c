/*
 * The package store's methods and background work (see pkg-methods.h).
 *
 * Slow work — reading an archive, hashing, moving files into the store,
 * re-hashing it, collecting garbage — runs as jobs on libuv's thread pool,
 * one job at a time in arrival order, so an import never races a
 * collection. A job's worker touches only its own fields (and the progress
 * counters, under the job's lock); everything else, the database above all,
 * happens on the loop thread before the job is queued or in its after-work
 * callback. A repeating timer turns the counters into "progress"
 * notifications for the client waiting on the job, and notices a shutdown to
 * cancel the running job.
 *
 * The drop folder (<state>/drop) is watched with uv_fs_event; an archive put
 * there is imported once its size and mtime stayed the same for two scans a
 * second apart, then moved to drop/imported/ or drop/refused/ (with a .why
 * file), and the outcome is an event.
 */
#include "pkg-methods.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <uv.h>

#include "common/error.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/proto.h"
#include "db/db-pkg.h"
#include "daemon/sdk/fsinfo.h"
#include "common/fs.h"
#include "pkg.h"
#include "daemon/core/server.h"

#define TICK_MS 250
#define DROP_SCAN_MS 1000
#define REPLY_BUDGET(srv) ((size_t)(srv)->cfg->max_frame - 4096)

#ifdef _WIN32
#define PKG_PLATFORM "windows"
#else
#define PKG_PLATFORM "linux"
#endif

enum job_type { JOB_IMPORT, JOB_VERIFY, JOB_GC };

struct pkg_job {
	enum job_type type;
	struct pkg_job *next;
	uv_work_t work;
	struct rocmd_pending *pending; /* NULL: nobody waits (drop folder, start-up) */
	int64_t started_ms;
	/* import */
	char *source, *name, *sdk;
	int from_drop;
	struct rocmd_pkg_contents contents;
	cJSON *identity;
	char digest[ROCMD_SHA256_HEX];
	uint64_t added, added_bytes;
	/* verify */
	int64_t pkg_id;
	struct rocmd_store_check *objs;
	size_t nobjs, cap;
	/* gc (also after pkg.rm) */
	char **keep;
	size_t nkeep;
	uint64_t removed, removed_bytes;
	cJSON *rm_result;
	/* outcome */
	int rc;
	char why[1024];
	/* shared with the worker */
	uv_mutex_t lock;
	struct rocmd_pkg_progress pr;
	int phase; /* 0 reading, 1 storing, 2 verifying, 3 collecting */
	int cancel;
};

struct drop_file {
	struct drop_file *next;
	char *name;
	int64_t size, mtime_ns;
	int stable; /* scans without change */
	int queued;
};

static struct pkg_state {
	struct rocmd_server *srv;
	struct rocmd_pkg_db *db;
	char store[4096];
	char drop[4096];
	struct pkg_job *head, *tail, *running;
	uv_timer_t tick;
	uv_fs_event_t drop_ev;
	uv_timer_t drop_timer;
	struct drop_file *drops;
	int started, watching;
} P;

static void job_start_next(void);

/* ---- jobs ---- */

static void
job_free(struct pkg_job *j)
{
	rocmd_pkg_contents_free(&j->contents);
	cJSON_Delete(j->identity);
	cJSON_Delete(j->rm_result);
	free(j->source);
	free(j->name);
	free(j->sdk);
	free(j->objs);
	for (size_t i = 0; i < j->nkeep; i++)
		free(j->keep[i]);
	free(j->keep);
	uv_mutex_destroy(&j->lock);
	free(j);
}

static struct pkg_job *
job_new(enum job_type type)
{
	struct pkg_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	if (uv_mutex_init(&j->lock) < 0) {
		free(j);
		return NULL;
	}
	j->type = type;
	j->work.data = j;
	return j;
}

static int
job_canceled(struct pkg_job *j)
{
	int c;

	uv_mutex_lock(&j->lock);
	c = j->cancel;
	uv_mutex_unlock(&j->lock);
	return c;
}

static int
on_read_progress(const struct rocmd_pkg_progress *pr, void *ctx)
{
	struct pkg_job *j = ctx;
	int c;

	uv_mutex_lock(&j->lock);
	j->pr = *pr;
	c = j->cancel;
	uv_mutex_unlock(&j->lock);
	return c;
}

static int
on_verify_progress(uint64_t done, uint64_t total, void *ctx)
{
	struct pkg_job *j = ctx;
	int c;

	uv_mutex_lock(&j->lock);
	j->pr.bytes_out = done;
	j->pr.bytes_total = total;
	j->pr.files++;
	c = j->cancel;
	uv_mutex_unlock(&j->lock);
	return c;
}

static void
set_phase(struct pkg_job *j, int phase)
{
	uv_mutex_lock(&j->lock);
	j->phase = phase;
	uv_mutex_unlock(&j->lock);
}

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

/* Worker: read, identify, store. */
static void
import_work(uv_work_t *w)
{
	struct pkg_job *j = w->data;
	struct rocmd_pkg_read_opts opts = {
	    .limits =
	        {
	            .max_total = (uint64_t)P.srv->cfg->store_max_total,
	            .max_file = (uint64_t)P.srv->cfg->store_max_file,
	            .max_files = (uint64_t)P.srv->cfg->store_max_files,
	        },
	    .progress = on_read_progress,
	    .ctx = j,
	};
	char staging[4096];

	j->rc = rocmd_store_staging_new(P.store, staging, sizeof(staging));
	if (j->rc < 0) {
		snprintf(j->why, sizeof(j->why),
		         "cannot create a staging folder in %.900s/staging: %s", P.store,
		         rocmd_strerror(j->rc));
		return;
	}
	j->rc = rocmd_pkg_read(j->source, staging, &opts, &j->contents, j->why, sizeof(j->why));
	if (j->rc < 0)
		return;
	j->rc =
	    rocmd_pkg_identify(&j->contents, j->name, j->sdk, &j->identity, j->why, sizeof(j->why));
	if (j->rc < 0)
		goto fail;
	rocmd_pkg_digest(&j->contents, j->digest);
	if (job_canceled(j)) {
		j->rc = ROCMD_ECANCELED;
		snprintf(j->why, sizeof(j->why), "import canceled");
		goto fail;
	}
	set_phase(j, 1);
	j->rc = rocmd_store_commit(P.store, &j->contents, &j->added, &j->added_bytes, j->why,
	                           sizeof(j->why));
	if (j->rc < 0)
		goto fail;
	return;
fail:
	rocmd_pkg_contents_free(&j->contents);
}

static void
verify_work(uv_work_t *w)
{
	struct pkg_job *j = w->data;

	set_phase(j, 2);
	j->rc = rocmd_store_verify(P.store, j->objs, j->nobjs, on_verify_progress, j);
	if (j->rc == ROCMD_ECANCELED)
		snprintf(j->why, sizeof(j->why), "verification canceled");
}

static void
gc_work(uv_work_t *w)
{
	struct pkg_job *j = w->data;

	set_phase(j, 3);
	j->rc = rocmd_store_gc(P.store, j->keep, j->nkeep, &j->removed, &j->removed_bytes);
	if (j->rc < 0)
		snprintf(j->why, sizeof(j->why), "cannot collect unused objects: %s",
		         rocmd_strerror(j->rc));
}

static int
collect_keep(const char *sha, int64_t size, void *ctx)
{
	struct pkg_job *j = ctx;

	if (j->nkeep == j->cap) {
		size_t ncap = j->cap ? j->cap * 2 : 1024;
		void *n = realloc(j->keep, ncap * sizeof(*j->keep));
		if (n == NULL)
			return ROCMD_ENOMEM;
		j->keep = n;
		j->cap = ncap;
	}
	j->keep[j->nkeep] = strdup(sha);
	if (j->keep[j->nkeep] == NULL)
		return ROCMD_ENOMEM;
	j->nkeep++;
	return 0;
}

/* Queues a collection keeping every object the database still names. */
static int
queue_gc(struct rocmd_pending *pending, cJSON *rm_result)
{
	struct pkg_job *j = job_new(JOB_GC);
	int rc;

	if (j == NULL) {
		cJSON_Delete(rm_result);
		return ROCMD_ENOMEM;
	}
	j->pending = pending;
	j->rm_result = rm_result;
	rc = 0;
	/* Snapshot the references when the job starts: see job_start_next. */
	if (P.tail != NULL)
		P.tail->next = j;
	else
		P.head = j;
	P.tail = j;
	job_start_next();
	return rc;
}

static void
move_drop_file(const char *name, int ok, const char *why)
{
	char from[4096 + 256], to[4096 + 300], dir[4096 + 32];
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", P.drop, ok ? "imported" : "refused");
	rocmd_paths_mkdir_p(dir, 0755);
	snprintf(from, sizeof(from), "%s/%s", P.drop, name);
	snprintf(to, sizeof(to), "%s/%s", dir, name);
	if ((rc = rocmd_fs_rename(from, to)) < 0) {
		/* Left where it is, and still marked queued: not imported again in a loop. */
		log_warn("drop folder: cannot move %s to %s: %s", from, to, rocmd_strerror(rc));
		return;
	}
	if (!ok) {
		int fd;
		snprintf(to, sizeof(to), "%s/%s.why", dir, name);
		fd = rocmd_fs_open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			rocmd_fs_write_all(fd, why, strlen(why));
			rocmd_fs_write_all(fd, "\n", 1);
			rocmd_fs_close(fd);
		}
	}
	for (struct drop_file **pp = &P.drops; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct drop_file *d = *pp;
			*pp = d->next;
			free(d->name);
			free(d);
			break;
		}
}

static char *
join_archs(const cJSON *archs)
{
	size_t len = 1;
	const cJSON *it;
	char *s;

	cJSON_ArrayForEach(it, archs) len += strlen(it->valuestring) + 1;
	s = calloc(1, len);
	if (s == NULL)
		return NULL;
	cJSON_ArrayForEach(it, archs)
	{
		if (s[0] != '\0')
			strcat(s, ",");
		strcat(s, it->valuestring);
	}
	return s;
}

static const char *
jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

/* Loop thread: record an imported package. */
static void
import_done(struct pkg_job *j)
{
	struct rocmd_server *srv = P.srv;
	struct rocmd_db_pkg row = {0};
	struct rocmd_db_pkg_file *files = NULL;
	char *archs = NULL, *identity = NULL;
	char(*hex)[ROCMD_SHA256_HEX] = NULL;
	const cJSON *bin;
	cJSON *result, *detail;
	int64_t id = 0;
	int rc = j->rc, existed = 0, sdk_set = 0;

	if (rc < 0)
		goto refused;
	files = calloc(j->contents.count ? j->contents.count : 1, sizeof(*files));
	hex = calloc(j->contents.count ? j->contents.count : 1, sizeof(*hex));
	archs = join_archs(cJSON_GetObjectItem(j->identity, "archs"));
	identity = cJSON_PrintUnformatted(j->identity);
	if (files == NULL || hex == NULL || archs == NULL || identity == NULL) {
		rc = ROCMD_ENOMEM;
		snprintf(j->why, sizeof(j->why), "out of memory recording the package");
		goto refused;
	}
	for (size_t i = 0; i < j->contents.count; i++) {
		const struct rocmd_pkg_entry *e = &j->contents.entries[i];
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
	bin = cJSON_GetObjectItem(j->identity, "binary");
	row.digest = j->digest;
	row.name = j->name;
	row.source = j->source;
	row.imported_ms = rocmd_now_ms();
	row.platform = jstr(j->identity, "platform");
	row.sdk = jstr(j->identity, "sdk");
	row.sdk_source = jstr(j->identity, "sdk_source");
	row.version_hint = jstr(j->identity, "version_hint");
	row.archs = archs;
	row.binary = jstr(bin, "path");
	row.binary_version =
	    jstr(bin, "file_version") != NULL ? jstr(bin, "file_version") : jstr(bin, "soname");
	row.file_count = (int64_t)j->contents.count;
	row.total_size = (int64_t)j->contents.total_size;
	row.identity = identity;
	rc = rocmd_pkg_db_add(P.db, &row, files, j->contents.count, &id);
	if (rc == ROCMD_EEXISTS) {
		existed = 1;
		rc = 0;
		/* The same files again with an explicit --sdk: pin the stored package. */
		if (j->sdk != NULL && j->sdk[0] != '\0' &&
		    rocmd_pkg_db_set_sdk(P.db, id, row.sdk, row.sdk_source, identity) == 0) {
			sdk_set = 1;
			rocmd_server_event(srv, "pkg.sdk_set", NULL,
			                   "package #%lld pinned to SDK %s", (long long)id,
			                   row.sdk);
		}
	} else if (rc < 0) {
		snprintf(j->why, sizeof(j->why), "cannot record the package: %s",
		         rocmd_pkg_db_errmsg(P.db));
		/* Its new objects are orphans now: collect them. */
		queue_gc(NULL, NULL);
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
	cJSON_AddNumberToObject(result, "seconds", (rocmd_now_ms() - j->started_ms) / 1000.0);
	cJSON_AddStringToObject(result, "format", j->contents.format ? j->contents.format : "");
	cJSON_AddItemToObject(result, "identity", j->identity);
	j->identity = NULL;
	detail = cJSON_CreateObject();
	cJSON_AddNumberToObject(detail, "id", (double)id);
	cJSON_AddStringToObject(detail, "name", j->name);
	cJSON_AddStringToObject(detail, "source", j->from_drop ? "drop" : "request");
	cJSON_AddStringToObject(detail, "archs", archs);
	cJSON_AddStringToObject(detail, "sdk", row.sdk != NULL ? row.sdk : "");
	if (existed)
		rocmd_server_event(srv, "pkg.imported", detail,
		                   "package %s is already stored as #%lld", j->name, (long long)id);
	else
		rocmd_server_event(srv, "pkg.imported", detail,
		                   "imported package #%lld %s (%zu files, %s, SDK %s)",
		                   (long long)id, j->name, j->contents.count,
		                   archs[0] ? archs : "no archs",
		                   row.sdk != NULL ? row.sdk : "unknown");
	if (j->from_drop)
		move_drop_file(j->name, 1, NULL);
	/* Staged entries are in the store now; nothing of the staging is left. */
	if (j->pending != NULL)
		rocmd_pending_finish(j->pending, 0, NULL, result);
	else
		cJSON_Delete(result);
	j->pending = NULL;
	goto out;
refused:
	detail = cJSON_CreateObject();
	cJSON_AddStringToObject(detail, "name", j->name);
	cJSON_AddStringToObject(detail, "path", j->source);
	cJSON_AddStringToObject(detail, "source", j->from_drop ? "drop" : "request");
	cJSON_AddStringToObject(detail, "error", rocmd_err_name(rc));
	cJSON_AddStringToObject(detail, "why", j->why);
	rocmd_server_event(srv, "pkg.refused", detail, "import of %s refused: %s", j->name, j->why);
	if (j->from_drop)
		move_drop_file(j->name, 0, j->why);
	if (j->pending != NULL)
		rocmd_pending_finish(j->pending, rc, j->why, NULL);
	j->pending = NULL;
out:
	free(files);
	free(hex);
	free(archs);
	free(identity);
}

static void
verify_done(struct pkg_job *j)
{
	cJSON *r, *bad;
	size_t ok = 0, nbad = 0;
	uint64_t bytes = 0;

	if (j->rc < 0) {
		if (j->pending != NULL)
			rocmd_pending_finish(j->pending, j->rc, j->why, NULL);
		j->pending = NULL;
		return;
	}
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
	cJSON_AddNumberToObject(r, "seconds", (rocmd_now_ms() - j->started_ms) / 1000.0);
	if (nbad > 0)
		rocmd_server_event(P.srv, "pkg.verify_failed", NULL,
		                   "store verification: %zu of %zu objects missing or corrupt",
		                   nbad, j->nobjs);
	else
		rocmd_server_event(P.srv, "pkg.verified", NULL,
		                   "store verification: %zu objects, %llu bytes, all intact", ok,
		                   (unsigned long long)bytes);
	if (j->pending != NULL)
		rocmd_pending_finish(j->pending, 0, NULL, r);
	else
		cJSON_Delete(r);
	j->pending = NULL;
}

static void
gc_done(struct pkg_job *j)
{
	cJSON *r = j->rm_result != NULL ? j->rm_result : cJSON_CreateObject();

	j->rm_result = NULL;
	if (j->rc == 0 && j->removed > 0)
		log_info("store: removed %llu unused objects (%llu bytes)",
		         (unsigned long long)j->removed, (unsigned long long)j->removed_bytes);
	cJSON_AddNumberToObject(r, "objects_removed", (double)j->removed);
	cJSON_AddNumberToObject(r, "bytes_freed", (double)j->removed_bytes);
	if (j->pending != NULL) {
		/* The package is gone either way; a failed collection is retried at start-up. */
		rocmd_pending_finish(j->pending, 0, NULL, r);
		r = NULL;
	}
	j->pending = NULL;
	cJSON_Delete(r);
}

static void
after_work(uv_work_t *w, int status)
{
	struct pkg_job *j = w->data;

	P.running = NULL;
	uv_timer_stop(&P.tick);
	if (status == UV_ECANCELED && j->rc == 0) {
		j->rc = ROCMD_ECANCELED;
		snprintf(j->why, sizeof(j->why), "canceled");
	}
	switch (j->type) {
	case JOB_IMPORT:
		import_done(j);
		break;
	case JOB_VERIFY:
		verify_done(j);
		break;
	case JOB_GC:
		gc_done(j);
		break;
	}
	job_free(j);
	job_start_next();
}

static void
send_progress(struct pkg_job *j)
{
	static const char *const phases[] = {"reading", "storing", "verifying", "collecting"};
	struct rocmd_pkg_progress pr;
	cJSON *p;
	int phase;

	if (j->pending == NULL || !rocmd_pending_alive(j->pending))
		return;
	uv_mutex_lock(&j->lock);
	pr = j->pr;
	phase = j->phase;
	uv_mutex_unlock(&j->lock);
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "phase", phases[phase]);
	cJSON_AddNumberToObject(p, "bytes_in", (double)pr.bytes_in);
	cJSON_AddNumberToObject(p, "bytes_total", (double)pr.bytes_total);
	cJSON_AddNumberToObject(p, "bytes_out", (double)pr.bytes_out);
	cJSON_AddNumberToObject(p, "files", (double)pr.files);
	cJSON_AddStringToObject(p, "current", pr.current);
	rocmd_pending_progress(j->pending, p);
}

static void
on_tick(uv_timer_t *t)
{
	struct pkg_job *j = P.running;

	if (j == NULL)
		return;
	/* A shutdown cancels the running job; so does its client going away
	 * (rocmctl interrupted), except for the drop folder's, which has none. */
	if (P.srv->shutting_down ||
	    (j->pending != NULL && !rocmd_pending_alive(j->pending) && j->type != JOB_GC)) {
		uv_mutex_lock(&j->lock);
		j->cancel = 1;
		uv_mutex_unlock(&j->lock);
		return;
	}
	send_progress(j);
}

static int
collect_obj(const char *sha, int64_t size, void *ctx)
{
	struct pkg_job *j = ctx;

	if (j->nobjs == j->cap) {
		size_t ncap = j->cap ? j->cap * 2 : 1024;
		void *n = realloc(j->objs, ncap * sizeof(*j->objs));
		if (n == NULL)
			return ROCMD_ENOMEM;
		j->objs = n;
		j->cap = ncap;
	}
	memset(&j->objs[j->nobjs], 0, sizeof(j->objs[0]));
	snprintf(j->objs[j->nobjs].hex, sizeof(j->objs[0].hex), "%s", sha);
	j->objs[j->nobjs].size = (uint64_t)size;
	j->nobjs++;
	return 0;
}

static void
job_start_next(void)
{
	struct pkg_job *j;
	uv_work_cb fn;
	int rc;

	while (P.running == NULL && (j = P.head) != NULL) {
		P.head = j->next;
		if (P.head == NULL)
			P.tail = NULL;
		j->next = NULL;
		j->started_ms = rocmd_now_ms();
		if (P.srv->shutting_down) {
			j->rc = ROCMD_ESHUTDOWN;
			snprintf(j->why, sizeof(j->why), "the daemon is shutting down");
			if (j->pending != NULL)
				rocmd_pending_finish(j->pending, j->rc, j->why, NULL);
			j->pending = NULL;
			job_free(j);
			continue;
		}
		/* The database is read here, on the loop thread, never by the worker. */
		if (j->type == JOB_GC) {
			j->cap = 0;
			rc = rocmd_pkg_db_objects(P.db, 0, collect_keep, j);
			if (rc < 0) {
				log_err("store: cannot list referenced objects: %s; not collecting",
				        rocmd_pkg_db_errmsg(P.db));
				if (j->pending != NULL)
					rocmd_pending_finish(j->pending, 0, NULL, j->rm_result);
				j->rm_result = NULL;
				j->pending = NULL;
				job_free(j);
				continue;
			}
		}
		fn = j->type == JOB_IMPORT   ? import_work
		     : j->type == JOB_VERIFY ? verify_work
		                             : gc_work;
		P.running = j;
		uv_timer_start(&P.tick, on_tick, TICK_MS, TICK_MS);
		rc = uv_queue_work(P.srv->loop, &j->work, fn, after_work);
		if (rc < 0) {
			P.running = NULL;
			uv_timer_stop(&P.tick);
			j->rc = ROCMD_EINTERNAL;
			snprintf(j->why, sizeof(j->why), "cannot queue work: %s", uv_strerror(rc));
			if (j->pending != NULL)
				rocmd_pending_finish(j->pending, j->rc, j->why, NULL);
			j->pending = NULL;
			job_free(j);
		}
	}
}

static void
job_enqueue(struct pkg_job *j)
{
	if (P.tail != NULL)
		P.tail->next = j;
	else
		P.head = j;
	P.tail = j;
	job_start_next();
}

static size_t
queue_length(void)
{
	size_t n = P.running != NULL;

	for (struct pkg_job *j = P.head; j != NULL; j = j->next)
		n++;
	return n;
}

/* ---- methods ---- */

static int
m_import(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"path", "sdk", NULL};
	const char *path, *sdk = NULL;
	struct rocmd_fsinfo fi;
	struct pkg_job *j;
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
	if ((rc = rocmd_fsinfo_get(path, 1, &fi)) < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(-rc));
		return ROCMD_ENOTFOUND;
	}
	j = job_new(JOB_IMPORT);
	if (j == NULL)
		return ROCMD_ENOMEM;
	j->source = strdup(path);
	j->name = base_name(path);
	j->sdk = sdk != NULL ? strdup(sdk) : NULL;
	if (j->source == NULL || j->name == NULL || (sdk != NULL && j->sdk == NULL) ||
	    (j->pending = rocmd_conn_defer(conn)) == NULL) {
		job_free(j);
		return ROCMD_ENOMEM;
	}
	if (queue_length() > 0) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "phase", "queued");
		cJSON_AddNumberToObject(p, "ahead", (double)queue_length());
		rocmd_pending_progress(j->pending, p);
	}
	job_enqueue(j);
	return ROCMD_METHOD_DEFERRED;
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
	struct rocmd_pkg_db_stats st;
	cJSON *r, *arr, *store;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0)
		return rc;
	r = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(r, "packages");
	rc = rocmd_pkg_db_list(P.db, 0, list_one, arr);
	if (rc == 0)
		rc = rocmd_pkg_db_stats(P.db, &st);
	if (rc < 0) {
		cJSON_Delete(r);
		snprintf(why, whylen, "cannot read packages: %s", rocmd_pkg_db_errmsg(P.db));
		return rc;
	}
	store = cJSON_AddObjectToObject(r, "store");
	cJSON_AddStringToObject(store, "path", P.store);
	cJSON_AddNumberToObject(store, "package_bytes", (double)st.bytes);
	cJSON_AddNumberToObject(store, "objects", (double)st.objects);
	cJSON_AddNumberToObject(store, "object_bytes", (double)st.object_bytes);
	cJSON_AddNumberToObject(store, "dedup_saved_bytes", (double)(st.bytes - st.object_bytes));
	cJSON_AddNumberToObject(store, "jobs", (double)queue_length());
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
	rc = rocmd_pkg_db_list(P.db, id, show_one, &ctx);
	if (rc == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		goto fail;
	}
	if (rc == 0 && files) {
		ctx.files = cJSON_AddArrayToObject(ctx.obj, "file_list");
		rc = rocmd_pkg_db_files(P.db, id, offset, limit, show_file, &ctx);
		if (rc > 0)
			rc = 0;
		cJSON_AddNumberToObject(ctx.obj, "offset", (double)offset);
		cJSON_AddNumberToObject(ctx.obj, "next_offset", (double)(offset + ctx.shown));
		cJSON_AddBoolToObject(ctx.obj, "more", ctx.more);
	}
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(P.db));
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

static int
m_rm(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", NULL};
	struct rocmd_pending *pending;
	char name[256] = "";
	int64_t id, deployed = 0;
	cJSON *r, *detail;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_int(params, "id", 1, 1, INT64_MAX, &id, why, whylen)) < 0)
		return rc;
	rc = rocmd_pkg_db_list(P.db, id, name_of, name);
	if (rc == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		return rc;
	}
	if (rc == 0)
		rc = rocmd_pkg_db_deployments(P.db, id, &deployed);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(P.db));
		return rc;
	}
	if (deployed > 0) {
		snprintf(why, whylen,
		         "package #%lld (%s) is deployed to %lld target(s); roll those back before "
		         "removing it",
		         (long long)id, name, (long long)deployed);
		return ROCMD_EBUSY;
	}
	rc = rocmd_pkg_db_remove(P.db, id);
	if (rc < 0) {
		snprintf(why, whylen, "cannot remove package #%lld: %s", (long long)id,
		         rocmd_pkg_db_errmsg(P.db));
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
	pending = rocmd_conn_defer(conn);
	if (pending == NULL) {
		*result = r;
		return 0;
	}
	rc = queue_gc(pending, r);
	if (rc < 0) {
		rocmd_pending_finish(pending, rc, "cannot queue the collection", NULL);
		return ROCMD_METHOD_DEFERRED;
	}
	return ROCMD_METHOD_DEFERRED;
}

static int
m_verify(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"id", NULL};
	struct pkg_job *j;
	int64_t id = 0;
	char name[256];
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "id", 0, 1, INT64_MAX, &id, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (id > 0 && rocmd_pkg_db_list(P.db, id, name_of, name) == ROCMD_ENOTFOUND) {
		snprintf(why, whylen, "no package #%lld", (long long)id);
		return ROCMD_ENOTFOUND;
	}
	j = job_new(JOB_VERIFY);
	if (j == NULL)
		return ROCMD_ENOMEM;
	j->pkg_id = id;
	rc = rocmd_pkg_db_objects(P.db, id, collect_obj, j);
	if (rc < 0 || (j->pending = rocmd_conn_defer(conn)) == NULL) {
		job_free(j);
		snprintf(why, whylen, "cannot list the store's objects: %s",
		         rocmd_pkg_db_errmsg(P.db));
		return rc < 0 ? rc : ROCMD_ENOMEM;
	}
	job_enqueue(j);
	return ROCMD_METHOD_DEFERRED;
}

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

static int
m_match(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	static const char *const keys[] = {"sdk", "arch", "platform", NULL};
	const char *sdk, *arch, *platform = PKG_PLATFORM;
	struct rocmd_pkg_candidates l;
	int chosen = -1, rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "sdk", 1, &sdk, why, whylen)) < 0 ||
	    (rc = rocmd_param_string(params, "arch", 1, &arch, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "platform", 0, &platform, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	rc = rocmd_pkg_candidates_load(P.db, &l, why, whylen);
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
    {NULL, 0, NULL},
};

/* ---- the drop folder ---- */

static int
is_archive_name(const char *name)
{
	static const char *const exts[] = {".7z",      ".zip",    ".tar", ".tar.gz",
	                                   ".tgz",     ".tar.xz", ".txz", ".tar.bz2",
	                                   ".tar.zst", ".rar",    NULL};
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	for (int i = 0; exts[i] != NULL; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && strcasecmp(name + n - e, exts[i]) == 0)
			return 1;
	}
	return 0;
}

static void
drop_scan(void)
{
	struct rocmd_dir *d = rocmd_dir_open(P.drop);
	struct rocmd_dirent *de;
	int pending = 0;

	if (d == NULL)
		return;
	while ((de = rocmd_dir_read(d)) != NULL) {
		char path[4096 + 1024];
		struct rocmd_fsinfo st;
		struct drop_file *f;
		int64_t mt;

		/* A link is never followed: only files put there are imported. */
		snprintf(path, sizeof(path), "%s/%s", P.drop, de->d_name);
		if (!is_archive_name(de->d_name) || rocmd_fsinfo_get(path, 0, &st) < 0 ||
		    st.type != ROCMD_FS_FILE)
			continue;
		mt = st.mtime_ns;
		for (f = P.drops; f != NULL && strcmp(f->name, de->d_name) != 0; f = f->next)
			;
		if (f == NULL) {
			f = calloc(1, sizeof(*f));
			if (f == NULL || (f->name = strdup(de->d_name)) == NULL) {
				free(f);
				continue;
			}
			f->size = -1;
			f->next = P.drops;
			P.drops = f;
		}
		if (f->queued)
			continue;
		if (f->size == (int64_t)st.size && f->mtime_ns == mt) {
			f->stable++;
		} else {
			f->size = (int64_t)st.size;
			f->mtime_ns = mt;
			f->stable = 0;
		}
		if (f->stable >= 2) {
			struct pkg_job *j = job_new(JOB_IMPORT);
			if (j == NULL)
				continue;
			j->from_drop = 1;
			j->name = strdup(f->name);
			if (asprintf(&j->source, "%s/%s", P.drop, f->name) < 0)
				j->source = NULL;
			if (j->name == NULL || j->source == NULL) {
				job_free(j);
				continue;
			}
			f->queued = 1;
			log_info("drop folder: importing %s", f->name);
			job_enqueue(j);
		} else {
			pending = 1;
		}
	}
	rocmd_dir_close(d);
	if (!pending)
		uv_timer_stop(&P.drop_timer);
}

static void
on_drop_timer(uv_timer_t *t)
{
	drop_scan();
}

static void
on_drop_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	if (status < 0 || P.srv->shutting_down)
		return;
	if (!uv_is_active((uv_handle_t *)&P.drop_timer))
		uv_timer_start(&P.drop_timer, on_drop_timer, DROP_SCAN_MS, DROP_SCAN_MS);
}

/* ---- start and stop ---- */

int
rocmd_pkg_start(struct rocmd_server *srv, char *why, size_t whylen)
{
	int rc;

	memset(&P, 0, sizeof(P));
	P.srv = srv;
	if ((rc = rocmd_pkg_rules_check(srv->cfg->store_match_rules, why, whylen)) < 0)
		return rc;
	snprintf(P.store, sizeof(P.store), "%s/store", srv->cfg->state_dir);
	snprintf(P.drop, sizeof(P.drop), "%s/drop", srv->cfg->state_dir);
	if ((rc = rocmd_store_open(P.store, why, whylen)) < 0)
		return rc;
	if ((rc = rocmd_pkg_db_attach(srv->db, &P.db)) < 0)
		return rc;
	/* The progress tick runs only while a job does: an idle daemon never wakes. */
	uv_timer_init(srv->loop, &P.tick);
	uv_unref((uv_handle_t *)&P.tick);
	uv_timer_init(srv->loop, &P.drop_timer);
	uv_unref((uv_handle_t *)&P.drop_timer);
	uv_fs_event_init(srv->loop, &P.drop_ev);
	P.started = 1;
	if (srv->cfg->store_drop_folder) {
		rc = rocmd_paths_mkdir_p(P.drop, 0755);
		if (rc == 0)
			rc = uv_fs_event_start(&P.drop_ev, on_drop_event, P.drop, 0);
		if (rc < 0) {
			log_warn("drop folder %s is not watched: %s", P.drop, rocmd_strerror(rc));
		} else {
			P.watching = 1;
			uv_unref((uv_handle_t *)&P.drop_ev);
			/* Archives left there while the daemon was down. */
			uv_timer_start(&P.drop_timer, on_drop_timer, DROP_SCAN_MS, DROP_SCAN_MS);
		}
	}
	/* Objects orphaned by an import or removal cut short. */
	queue_gc(NULL, NULL);
	return 0;
}

void
rocmd_pkg_stop(void)
{
	if (!P.started)
		return;
	uv_close((uv_handle_t *)&P.tick, NULL);
	uv_close((uv_handle_t *)&P.drop_timer, NULL);
	uv_close((uv_handle_t *)&P.drop_ev, NULL);
	while (P.head != NULL) {
		struct pkg_job *j = P.head;
		P.head = j->next;
		if (j->pending != NULL)
			rocmd_pending_finish(j->pending, ROCMD_ESHUTDOWN, "the daemon stopped",
			                     NULL);
		j->pending = NULL;
		job_free(j);
	}
	P.tail = NULL;
	while (P.drops != NULL) {
		struct drop_file *d = P.drops;
		P.drops = d->next;
		free(d->name);
		free(d);
	}
	rocmd_pkg_db_detach(P.db);
	P.db = NULL;
	P.started = 0;
}
