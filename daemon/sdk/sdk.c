/*
 * The SDK manager: scans off the loop thread, results into the database and
 * the event history. See sdk.h for the design; sdk-watch.c for the watching.
 *
 * A scan is one job on the daemon's job runner: (optionally) wait until the changed paths
 * have settled, discover the installs and inspect their rocBLAS libraries
 * (file hashes cached across scans, so an unchanged library costs one stat
 * per file), read the KFD topology, and ask the newest SDK's HIP runtime for
 * its devices through rocmd-hip-probe. The loop thread then compares the
 * result with the database in one transaction and emits one event per change.
 */
#include "sdk.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/text.h"
#include "sdk-internal.h"
#include "daemon/core/server.h"
#include "sysroot.h"

void
rocmd_sdk_free_strv(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* sdk.extra_roots: "/a:/b" (';' under the Windows layout, whose paths hold
 * ':') into a NULL-terminated list. */
static char **
split_roots(const char *list, int windows)
{
	const char sep = windows ? ';' : ':';
	char **out = calloc(1, sizeof(*out));
	size_t n = 0;

	for (const char *p = list; out != NULL && p != NULL && *p != '\0';) {
		const char *end = strchr(p, sep);
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
		char **grown;
		if (len > 0 && (grown = realloc(out, (n + 2) * sizeof(*out))) != NULL) {
			out = grown;
			out[n] = strndup(p, len);
			if (out[n] != NULL)
				n++;
			out[n] = NULL;
		}
		p = end != NULL ? end + 1 : NULL;
	}
	return out;
}

/* Whether "NAME=value" ENTRY is one discovery reads. */
int
rocmd_sdk_env_wanted(const char *entry)
{
	return strncmp(entry, "HIP_PATH", 8) == 0 || strncmp(entry, "ROCM_PATH=", 10) == 0 ||
	       strncmp(entry, "ROCBLAS_TENSILE_LIBPATH=", 24) == 0;
}

/* Adds a copy of ENTRY to the NULL-terminated list *V of *N strings. */
int
rocmd_sdk_strv_add(char ***v, size_t *n, const char *entry)
{
	char **grown = realloc(*v, (*n + 2) * sizeof(**v));

	if (grown == NULL)
		return ROCMD_ENOMEM;
	*v = grown;
	grown[*n] = strdup(entry);
	if (grown[*n] == NULL) {
		grown[*n] = NULL;
		return ROCMD_ENOMEM;
	}
	grown[++*n] = NULL;
	return 0;
}

int64_t
rocmd_sdk_window_ms(struct rocmd_sdk *m)
{
	return m->srv->cfg->sdk_debounce_ms;
}

/* ---- the worker ---- */

/* The host path of the newest present SDK's HIP runtime, or "". */
static void
newest_runtime(struct sdk_job *job, char *out, size_t outlen)
{
	const struct rocmd_sdk_found *best = NULL;

	out[0] = '\0';
	for (size_t i = 0; i < job->scan.nsdks; i++) {
		const struct rocmd_sdk_found *f = &job->scan.sdks[i];
		if (f->hip_runtime == NULL || f->unreadable)
			continue;
		if (best == NULL || (f->ver.version[0] != '\0' &&
		                     (best->ver.version[0] == '\0' ||
		                      rocmd_version_cmp(f->ver.version, best->ver.version) > 0)))
			best = f;
	}
	if (best != NULL)
		rocmd_sysroot_map(job->opts.root, best->hip_runtime, out, outlen);
}

static void
on_work(struct rocmd_job *b)
{
	struct sdk_job *job = (struct sdk_job *)b;
	char runtime[ROCMD_GPU_PATH_MAX];

	job->started_ms = rocmd_now_ms();
	if (job->settle != NULL) {
		job->wait_more_ms = rocmd_sdk_settle_check(job->settle, job->window_ms);
		if (job->wait_more_ms > 0)
			return;
	}
	job->err = rocmd_sdk_discover(&job->opts, &job->scan);
	if (!job->deep)
		goto done; /* GPUs and library contents are the deep pass's work */
	if (job->err == 0)
		job->err = rocmd_gpu_kfd_scan(job->opts.root, &job->gpus);
	/* Only a runtime of this platform can be loaded (no DLL on Linux). */
	if (job->err == 0 && job->opts.windows == rocmd_sdk_native_windows &&
	    job->probe_timeout_ms > 0 && job->m->probe != NULL) {
		newest_runtime(job, runtime, sizeof(runtime));
		snprintf(job->gpus.hip_runtime, sizeof(job->gpus.hip_runtime), "%s", runtime);
		/* No SDK's: the display driver's own, which needs no SDK. */
		if (runtime[0] == '\0' &&
		    rocmd_sdk_driver_runtime(job->opts.root, runtime, job->gpus.hip_runtime,
		                             sizeof(runtime)) == 0)
			job->gpus.hip_from_driver = 1;
		if (runtime[0] != '\0') {
			job->err = rocmd_gpu_hip_probe(job->m->probe, runtime,
			                               job->probe_timeout_ms, &job->gpus);
		} else {
			if (!rocmd_sdk_native_windows) {
				snprintf(job->gpus.hip_status, sizeof(job->gpus.hip_status),
				         "no SDK with a HIP runtime");
			} else {
				snprintf(job->gpus.hip_status, sizeof(job->gpus.hip_status),
				         "none: no SDK has one and the display driver "
				         "has none");
				rocmd_gpu_adapters_probe(job->m->probe, job->probe_timeout_ms,
				                         &job->gpus);
			}
		}
	} else if (job->gpus.hip_status[0] == '\0') {
		snprintf(job->gpus.hip_status, sizeof(job->gpus.hip_status), "not probed");
	}
done:
	job->scanned = 1;
	job->elapsed_ms = rocmd_now_ms() - job->started_ms;
}

static void finish_waiters(struct sdk_waiter *w, int err, const char *why, struct rocmd_sdk *m);

static void
job_free(struct sdk_job *job)
{
	/* Refused before it ran (the daemon stopping): its waiters are told. */
	if (job->waiters != NULL)
		finish_waiters(job->waiters, ROCMD_ESHUTDOWN, "rocmd is shutting down", job->m);
	rocmd_job_fini(&job->base);
	rocmd_sdk_free_strv((char **)job->opts.extra_roots);
	rocmd_sdk_free_strv((char **)job->opts.runtime_roots);
	rocmd_sdk_free_strv(job->settle);
	rocmd_sdk_scan_free(&job->scan);
	rocmd_gpu_scan_free(&job->gpus);
	free(job);
}

/* ---- applying a scan ---- */

/* Events wait until the scan's transaction has committed: the event history
 * is written through the daemon's own connection, which cannot write while
 * this module's transaction holds the database. */
struct queued_event {
	char *kind;
	cJSON *detail;
	char *message;
	struct queued_event *next;
};

static struct queued_event *event_queue, **event_tail = &event_queue;

/* Changes for the hook (rocmd_sdk_on_change), delivered with the events. */
struct queued_change {
	int64_t sdk_id;
	const char *kind; /* a static string */
	struct queued_change *next;
};

static struct queued_change *change_queue, **change_tail = &change_queue;
static rocmd_sdk_change_fn change_fn;
static void *change_ctx;

static void
queue_change(int64_t sdk_id, const char *kind)
{
	struct queued_change *c;

	if (change_fn == NULL || (c = calloc(1, sizeof(*c))) == NULL)
		return;
	c->sdk_id = sdk_id;
	c->kind = kind;
	*change_tail = c;
	change_tail = &c->next;
}

/* A copy that pip owns is never overwritten (pip's RECORD and the next
 * pip install would undo it), so the modules that act on a library's changes
 * (deploy.sync) do not hear of it; its events are still said. */
static void
queue_change_if(const struct rocmd_sdk_found *f, int64_t sdk_id, const char *kind)
{
	if (f->owner == NULL)
		queue_change(sdk_id, kind);
}

void
rocmd_sdk_on_change(struct rocmd_sdk *m, rocmd_sdk_change_fn fn, void *ctx)
{
	change_fn = fn;
	change_ctx = ctx;
}

static void queue_event(const char *kind, cJSON *detail, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
queue_event(const char *kind, cJSON *detail, const char *fmt, ...)
{
	struct queued_event *e = calloc(1, sizeof(*e));
	va_list ap;

	if (e == NULL || (e->kind = strdup(kind)) == NULL) {
		free(e);
		cJSON_Delete(detail);
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&e->message, fmt, ap) < 0)
		e->message = NULL;
	va_end(ap);
	e->detail = detail;
	*event_tail = e;
	event_tail = &e->next;
}

/* Emits (SEND) or drops the queued events. */
static void
flush_events(struct rocmd_sdk *m, int send)
{
	while (event_queue != NULL) {
		struct queued_event *e = event_queue;
		event_queue = e->next;
		if (send && e->message != NULL)
			rocmd_server_event(m->srv, e->kind, e->detail, "%s", e->message);
		else
			cJSON_Delete(e->detail);
		free(e->kind);
		free(e->message);
		free(e);
	}
	event_tail = &event_queue;
	while (change_queue != NULL) {
		struct queued_change *c = change_queue;
		change_queue = c->next;
		if (send && change_fn != NULL)
			change_fn(m->srv, c->sdk_id, c->kind, change_ctx);
		free(c);
	}
	change_tail = &change_queue;
}

struct known {
	int64_t id;
	char *path;
	char *state;
	char *version;
	int seen;
	cJSON *lt; /* the last scan's hipBLASLt library ("hipblaslt" of its detail), or NULL */
};

struct known_list {
	struct known *v;
	size_t n;
};

static int
collect_known(const struct rocmd_db_sdk *s, void *arg)
{
	struct known_list *l = arg;
	struct known *grown = realloc(l->v, (l->n + 1) * sizeof(*grown));

	if (grown == NULL)
		return ROCMD_ENOMEM;
	l->v = grown;
	grown[l->n] = (struct known){s->id,
	                             strdup(s->path),
	                             strdup(s->state),
	                             s->version != NULL ? strdup(s->version) : NULL,
	                             0,
	                             NULL};
	if (s->detail != NULL) {
		cJSON *d = cJSON_Parse(s->detail);
		grown[l->n].lt = cJSON_DetachItemFromObjectCaseSensitive(d, "hipblaslt");
		cJSON_Delete(d);
	}
	l->n++;
	return 0;
}

static void
known_free(struct known_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].state);
		free(l->v[i].version);
		cJSON_Delete(l->v[i].lt);
	}
	free(l->v);
}

static char *
join_archs(char *const *v, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = malloc(len);
	if (s == NULL)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strcat(s, ",");
		strcat(s, v[i]);
	}
	return s;
}

/* Archs of present GPUs that LIB (NULL: none) does not cover, as
 * "gfx1103, gfx1150", or NULL. */
static char *
missing_archs(struct rocmd_sdk *m, const struct rocmd_rocblas_lib *lib)
{
	char *out = NULL;

	if (lib == NULL)
		return NULL;
	for (size_t i = 0; i < m->last_gpus.n; i++) {
		const char *gfx = m->last_gpus.gpus[i].gfx;
		if (!rocmd_rocblas_serves(lib, gfx) && (out == NULL || strstr(out, gfx) == NULL))
			rocmd_text_addf(&out, "%s", gfx);
	}
	if (out != NULL)
		for (char *p = out; *p != '\0'; p++)
			if (*p == '\n')
				*p = ',';
	return out;
}

static const char *
version_text(const char *v)
{
	return v != NULL && v[0] != '\0' ? v : "unknown";
}

/* What an install is called in events: an SDK, or a runtime outside one
 * (runtime-discover.h). */
static const char *
noun(const struct rocmd_sdk_found *f)
{
	static const char *const sdk_layouts[] = {"opt", "distro", "windows",
	                                          "env", "config", NULL};

	for (size_t i = 0; sdk_layouts[i] != NULL; i++)
		if (strcmp(f->layout, sdk_layouts[i]) == 0)
			return "HIP SDK";
	return strcmp(f->layout, "therock") == 0 ? "TheRock ROCm" : "ROCm runtime";
}

/*
 * hipBLASLt's library of F against the last deep pass's (K->lt): an
 * "sdk.hipblaslt_changed" event when it appeared, went, or its fingerprint
 * or folder changed, unless rocmd wrote it (a deploy records its own); and
 * the same change for the hook (deploy.sync: drift of what rocmd deployed).
 */
static void
lt_event(struct rocmd_sdk *m, const struct rocmd_sdk_found *f, const struct known *k, int64_t id)
{
	const cJSON *ofp = cJSON_GetObjectItemCaseSensitive(k->lt, "fingerprint");
	const cJSON *odir = cJSON_GetObjectItemCaseSensitive(k->lt, "dir");
	char hex[ROCMD_SHA256_HEX] = "", *archs = NULL, *missing = NULL;
	cJSON *d, *lt;

	if (k->lt == NULL && !f->have_lt)
		return;
	if (f->have_lt && f->lt.have_fingerprint)
		rocmd_sha256_hex(f->lt.fingerprint, hex);
	if (k->lt != NULL && f->have_lt) {
		/* A quick pass's record, or no fingerprint now: nothing to compare. */
		if (!cJSON_IsString(ofp) || hex[0] == '\0')
			return;
		if (strcmp(ofp->valuestring, hex) == 0 && cJSON_IsString(odir) &&
		    strcmp(odir->valuestring, f->hipblaslt_dir) == 0)
			return;
	}
	if (sdk_is_own(m, f->have_lt             ? f->hipblaslt_dir
	              : cJSON_IsString(odir) ? odir->valuestring
	                                     : NULL)) {
		log_info("%s: hipBLASLt library rewritten by rocmd; recorded", f->path);
		return;
	}
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "path", f->path);
	if (f->have_lt) {
		lt = rocmd_rocblas_lib_to_json(&f->lt, 0);
		cJSON_ReplaceItemInObject(lt, "dir", cJSON_CreateString(f->hipblaslt_dir));
		cJSON_AddItemToObject(d, "hipblaslt", lt);
		archs = join_archs(f->lt.archs, f->lt.narchs);
		missing = missing_archs(m, &f->lt);
	} else {
		cJSON_AddNullToObject(d, "hipblaslt");
	}
	cJSON_AddItemToObject(d, "before",
	                      k->lt != NULL ? cJSON_Duplicate(k->lt, 1) : cJSON_CreateNull());
	queue_change_if(f, id, "sdk.hipblaslt_changed");
	queue_event("sdk.hipblaslt_changed", d, "hipBLASLt library of %s %s%s%s%s%s%s%s", f->path,
	            !f->have_lt     ? "is gone"
	            : k->lt == NULL ? "appeared; covers "
	                            : "changed; covers ",
	            f->have_lt ? (archs != NULL && archs[0] ? archs : "no arch") : "",
	            f->have_lt ? " (" : "", f->have_lt ? f->hipblaslt_dir : "",
	            f->have_lt ? ")" : "",
	            missing != NULL ? "; lacks this machine's GPU arch " : "",
	            missing != NULL ? missing : "");
	free(archs);
	free(missing);
}

/* "since_ms" of JSON's hipBLASLt library: when a deep pass first read its
 * fingerprint (OLD's, the last pass's, when that is the same folder and
 * fingerprint), as lib_first_seen_ms is rocBLAS's. Deploy tells by it
 * whether discovery has read the folder since rocmd last wrote there. */
static void
lt_since(cJSON *json, const cJSON *old, int64_t now)
{
	cJSON *lt = cJSON_GetObjectItemCaseSensitive(json, "hipblaslt");
	const cJSON *fp = cJSON_GetObjectItemCaseSensitive(lt, "fingerprint");
	const cJSON *dir = cJSON_GetObjectItemCaseSensitive(lt, "dir");
	const cJSON *ofp = cJSON_GetObjectItemCaseSensitive(old, "fingerprint");
	const cJSON *odir = cJSON_GetObjectItemCaseSensitive(old, "dir");
	const cJSON *osince = cJSON_GetObjectItemCaseSensitive(old, "since_ms");
	int same = cJSON_IsString(fp) && cJSON_IsString(ofp) && cJSON_IsString(dir) &&
	           cJSON_IsString(odir) && strcmp(fp->valuestring, ofp->valuestring) == 0 &&
	           strcmp(dir->valuestring, odir->valuestring) == 0 && cJSON_IsNumber(osince);

	if (!cJSON_IsObject(lt) || !cJSON_IsString(fp))
		return;
	cJSON_AddNumberToObject(lt, "since_ms", same ? osince->valuedouble : (double)now);
}

/* Writes one install; emits its events. The quick pass (DEEP 0) records the
 * install and its version; the deep pass also its library's contents. */
/* Writes one install; emits its events. */
static int
apply_sdk(struct rocmd_sdk *m, struct known_list *known, const struct rocmd_sdk_found *f,
          int64_t now, int deep)
{
	struct rocmd_db_sdk row = {0};
	struct known *k = NULL;
	char hex[ROCMD_SHA256_HEX], *archs = NULL, *co = NULL, *detail = NULL, *missing = NULL;
	cJSON *json = rocmd_sdk_found_to_json(f, 0);
	int64_t id = 0;
	int created = 0, changed = 0, rc;

	for (size_t i = 0; i < known->n; i++)
		if (strcmp(known->v[i].path, f->path) == 0)
			k = &known->v[i];
	if (k != NULL)
		k->seen = 1;
	/* hipBLASLt's library is recorded by the deep pass, as rocBLAS's is: a
	 * quick pass, or a folder that cannot be read, keeps the last one. */
	if ((!deep || f->unreadable) && k != NULL && json != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(json, "hipblaslt");
		if (k->lt != NULL)
			cJSON_AddItemToObject(json, "hipblaslt", cJSON_Duplicate(k->lt, 1));
	} else if (json != NULL) {
		lt_since(json, k != NULL ? k->lt : NULL, now);
	}
	detail = json != NULL ? cJSON_PrintUnformatted(json) : NULL;
	row.path = f->path;
	row.layout = f->layout;
	row.version = f->ver.version[0] != '\0' ? f->ver.version : NULL;
	row.version_source = rocmd_version_source_name(f->ver.source);
	row.version_conflict = f->ver.conflict;
	row.hip_runtime = f->hip_runtime;
	row.rocblas_binary = f->rocblas_binary;
	row.state = f->unreadable ? "unreadable" : "present";
	row.detail = detail;
	rc = rocmd_sdk_db_put(m->db, &row, now, &id, &created);
	if (rc < 0)
		goto out;
	/* An unreadable folder says nothing about its library: keep what was known. */
	if (!f->unreadable && deep) {
		if (f->have_lib) {
			archs = join_archs(f->lib.archs, f->lib.narchs);
			co = join_archs(f->lib.co_archs, f->lib.nco_archs);
			if (f->lib.have_fingerprint)
				rocmd_sha256_hex(f->lib.fingerprint, hex);
			row.lib_path = f->rocblas_dir;
			row.lib_fingerprint = f->lib.have_fingerprint ? hex : NULL;
			row.lib_archs = archs;
			row.lib_co_archs = co;
			row.lib_nfiles = (int64_t)f->lib.nfiles;
			row.lib_total_size = (int64_t)f->lib.total_size;
		}
		rc = rocmd_sdk_db_put_library(m->db, id, &row, now, &changed);
		if (rc < 0)
			goto out;
	}
	missing = deep ? missing_archs(m, f->have_lib ? &f->lib : NULL) : NULL;
	if (created || (k != NULL && strcmp(k->state, "removed") == 0)) {
		if (!deep)
			sdk_add_fresh(m, f->path);
		queue_change(id, "sdk.added");
		queue_event("sdk.added", json != NULL ? cJSON_Duplicate(json, 1) : NULL,
		            "%s %s %s at %s (%s layout, version from %s)%s%s%s%s%s", noun(f),
		            version_text(row.version), created ? "found" : "is back", f->path,
		            f->layout, row.version_source,
		            !f->have_lib ? "; no rocBLAS library"
		            : deep       ? "; rocBLAS library covers "
		                         : "; rocBLAS library at ",
		            !f->have_lib ? ""
		            : deep       ? (archs != NULL && archs[0] ? archs : "no arch")
		                         : f->rocblas_dir,
		            f->have_lib && !deep ? " (being inspected)" : "",
		            missing != NULL ? "; lacks this machine's GPU arch " : "",
		            missing != NULL ? missing : "");
		/* Found by a deep pass (it appeared between a quick pass and its
		 * deep pass, or came back): its library is known already, and no
		 * later pass will see it change, so the modules that act on an
		 * inspected library (auto-sync) hear of it now. */
		if (deep && f->have_lib)
			queue_change_if(f, id, "sdk.library_inspected");
	} else if (k != NULL && strcmp(k->state, row.state) != 0) {
		queue_event(f->unreadable ? "sdk.unreadable" : "sdk.readable",
		            json != NULL ? cJSON_Duplicate(json, 1) : NULL, "%s %s", f->path,
		            f->unreadable ? "can no longer be read" : "is readable again");
	}
	if (!created && k != NULL && strcmp(k->state, "removed") != 0 && !f->unreadable &&
	    ((k->version == NULL) != (row.version == NULL) ||
	     (k->version != NULL && row.version != NULL && strcmp(k->version, row.version) != 0))) {
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "path", f->path);
		cJSON_AddStringToObject(d, "from", version_text(k->version));
		cJSON_AddStringToObject(d, "to", version_text(row.version));
		cJSON_AddStringToObject(d, "source", row.version_source);
		queue_change_if(f, id, "sdk.version_changed");
		queue_event("sdk.version_changed", d,
		            "HIP SDK at %s changed from %s to %s (version from %s)", f->path,
		            version_text(k->version), version_text(row.version),
		            row.version_source);
	}
	if (changed && !created && k != NULL && strcmp(k->state, "removed") != 0 &&
	    sdk_is_fresh(m, f->path)) {
		/* Just found: its library's contents are news, not a change. */
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "path", f->path);
		if (f->have_lib)
			cJSON_AddItemToObject(d, "rocblas", rocmd_rocblas_lib_to_json(&f->lib, 0));
		if (f->have_lib)
			queue_change_if(f, id, "sdk.library_inspected");
		if (f->have_lib)
			queue_event("sdk.library_inspected", d,
			            "rocBLAS library of %s covers %s%s%s", f->path,
			            archs != NULL && archs[0] ? archs : "no arch",
			            missing != NULL ? "; lacks this machine's GPU arch " : "",
			            missing != NULL ? missing : "");
		else
			cJSON_Delete(d);
	} else if (changed && !created && k != NULL && strcmp(k->state, "removed") != 0) {
		if (sdk_is_own(m, f->rocblas_dir)) {
			log_info("%s: rocBLAS library rewritten by rocmd; recorded", f->path);
		} else {
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "path", f->path);
			if (f->have_lib)
				cJSON_AddItemToObject(d, "rocblas",
				                      rocmd_rocblas_lib_to_json(&f->lib, 0));
			else
				cJSON_AddNullToObject(d, "rocblas");
			queue_change_if(f, id, "sdk.library_changed");
			queue_event(
			    "sdk.library_changed", d, "rocBLAS library of %s %s%s%s%s%s%s%s",
			    f->path, f->have_lib ? "changed; covers " : "is gone",
			    f->have_lib ? (archs != NULL && archs[0] ? archs : "no arch") : "",
			    f->have_lib ? " (" : "", f->have_lib ? f->rocblas_dir : "",
			    f->have_lib ? ")" : "",
			    missing != NULL ? "; lacks this machine's GPU arch " : "",
			    missing != NULL ? missing : "");
		}
	}
	if (deep && !created && k != NULL && strcmp(k->state, "removed") != 0 && !f->unreadable &&
	    !sdk_is_fresh(m, f->path))
		lt_event(m, f, k, id);
out:
	free(missing);
	free(archs);
	free(co);
	cJSON_free(detail);
	cJSON_Delete(json);
	return rc;
}

static int
collect_gpu_ids(const struct rocmd_db_gpu *g, void *arg)
{
	cJSON *a = arg, *o;

	if (strcmp(g->state, "present") != 0)
		return 0;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)g->id);
	cJSON_AddStringToObject(o, "key", g->key);
	cJSON_AddStringToObject(o, "arch", g->arch);
	cJSON_AddItemToArray(a, o);
	return 0;
}

static int
apply_gpus(struct rocmd_sdk *m, const struct rocmd_gpu_scan *gs, int64_t now)
{
	cJSON *before = cJSON_CreateArray(), *it;
	int rc = rocmd_sdk_db_gpu_list(m->db, collect_gpu_ids, before);

	for (size_t i = 0; rc == 0 && i < gs->n; i++) {
		const struct rocmd_gpu *g = &gs->gpus[i];
		cJSON *j = rocmd_gpu_to_json(g);
		char *detail = cJSON_PrintUnformatted(j);
		struct rocmd_db_gpu row = {
		    .key = g->key,
		    .arch = g->gfx,
		    .name = g->name,
		    .kind = g->igpu ? "igpu" : "dgpu",
		    .compute_units = g->compute_units,
		    .vram_bytes = (int64_t)g->vram_bytes,
		    .detail = detail,
		};
		int created = 0;
		rc = rocmd_sdk_db_gpu_put(m->db, &row, now, &created);
		if (rc == 0 && created)
			queue_event("gpu.added", cJSON_Duplicate(j, 1),
			            "GPU %s found (%s, %d compute units%s%s)", g->gfx,
			            g->igpu ? "integrated" : "discrete", g->compute_units,
			            g->name[0] ? ", " : "", g->name);
		cJSON_free(detail);
		cJSON_Delete(j);
	}
	cJSON_ArrayForEach(it, before)
	{
		const char *key = cJSON_GetObjectItem(it, "key")->valuestring;
		int found = 0;
		for (size_t i = 0; i < gs->n; i++)
			found |= strcmp(gs->gpus[i].key, key) == 0;
		if (found || rc != 0)
			continue;
		rc = rocmd_sdk_db_gpu_mark_removed(
		    m->db, (int64_t)cJSON_GetObjectItem(it, "id")->valuedouble, now);
		if (rc == 0)
			queue_event("gpu.removed", cJSON_Duplicate(it, 1), "GPU %s is gone",
			            cJSON_GetObjectItem(it, "arch")->valuestring);
	}
	cJSON_Delete(before);
	return rc;
}

static cJSON *
summary(struct rocmd_sdk *m)
{
	cJSON *r = rocmd_sdk_scan_info(m);

	return r;
}

static void
finish_waiters(struct sdk_waiter *w, int err, const char *why, struct rocmd_sdk *m)
{
	while (w != NULL) {
		struct sdk_waiter *next = w->next;
		rocmd_pending_finish(w->p, err, why, err == 0 ? summary(m) : NULL);
		free(w);
		w = next;
	}
}

static int
apply(struct rocmd_sdk *m, struct sdk_job *job)
{
	struct known_list known = {0};
	int64_t now = rocmd_now_ms();
	int rc;

	/* GPUs first: the SDK events name archs the library lacks. */
	if (job->deep) {
		rocmd_gpu_scan_free(&m->last_gpus);
		m->last_gpus = job->gpus;
		memset(&job->gpus, 0, sizeof(job->gpus));
		snprintf(m->last_hip_status, sizeof(m->last_hip_status), "%s",
		         m->last_gpus.hip_status);
	}
	rc = rocmd_sdk_db_begin(m->db);
	if (rc < 0)
		return rc;
	rc = rocmd_sdk_db_list(m->db, 0, NULL, collect_known, &known);
	for (size_t i = 0; rc == 0 && i < job->scan.nsdks; i++)
		rc = apply_sdk(m, &known, &job->scan.sdks[i], now, job->deep);
	for (size_t i = 0; rc == 0 && i < known.n; i++) {
		struct known *k = &known.v[i];
		if (k->seen || strcmp(k->state, "removed") == 0)
			continue;
		rc = rocmd_sdk_db_mark_removed(m->db, k->id, now);
		if (rc == 0) {
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "path", k->path);
			cJSON_AddStringToObject(d, "version", version_text(k->version));
			queue_event("sdk.removed", d,
			            "HIP SDK %s at %s is gone (its history is kept)",
			            version_text(k->version), k->path);
		}
	}
	if (rc == 0 && job->deep)
		rc = apply_gpus(m, &m->last_gpus, now);
	if (rc == 0)
		rc = rocmd_sdk_db_commit(m->db);
	if (rc < 0)
		rocmd_sdk_db_rollback(m->db);
	flush_events(m, rc == 0);
	known_free(&known);
	rocmd_server_counts_changed(m->srv);
	return rc;
}

static void schedule_job(struct rocmd_sdk *m, int deep, int settle);

static void
after_work(struct sdk_job *job)
{
	struct rocmd_sdk *m = job->m;
	int status = 0, rc;

	m->job = NULL;
	if (m->stopping) {
		finish_waiters(job->waiters, ROCMD_ESHUTDOWN, "rocmd is shutting down", m);
		job->waiters = NULL;
		return;
	}
	if (status == 0 && job->wait_more_ms > 0) {
		/* Something is still being written: the same waiters wait on. */
		struct sdk_waiter **tail = &job->waiters;
		while (*tail != NULL)
			tail = &(*tail)->next;
		*tail = m->waiters;
		m->waiters = job->waiters;
		job->waiters = NULL;
		log_debug("SDK changes not settled; checking again in %lld ms",
		          (long long)job->wait_more_ms);
		/* Keep the paths to check: they move back to the dirty list. */
		for (size_t i = 0; job->settle != NULL && job->settle[i] != NULL; i++) {
			char **grown = realloc(m->dirty, (m->ndirty + 2) * sizeof(*grown));
			if (grown == NULL) {
				free(job->settle[i]);
				continue;
			}
			m->dirty = grown;
			m->dirty[m->ndirty++] = job->settle[i];
			m->dirty[m->ndirty] = NULL;
		}
		free(job->settle);
		job->settle = NULL;
		m->settle_pending = 1;
		rocmd_sdk_schedule(m, -(int)job->wait_more_ms);
		return;
	}
	if (status != 0 || job->err < 0) {
		rc = status != 0 ? ROCMD_ECANCELED : job->err;
		log_err("SDK scan failed: %s", rocmd_strerror(rc));
		finish_waiters(job->waiters, rc, "the SDK scan failed", m);
		job->waiters = NULL;
		return;
	}
	if (!job->deep) {
		m->scans++;
		m->last_scan_ms = rocmd_now_ms();
		m->last_scan_elapsed_ms = job->elapsed_ms;
	} else {
		m->inspections++;
		m->last_scan_elapsed_ms += job->elapsed_ms;
	}
	free(m->last_problems);
	m->last_problems = job->scan.problems;
	job->scan.problems = NULL;
	rc = apply(m, job);
	if (rc < 0)
		log_err("cannot record the SDK scan: %s (%s)", rocmd_strerror(rc),
		        rocmd_sdk_db_errmsg(m->db));
	/* Library changes are seen by the deep pass only: rocmd's own writes
	 * stay known as such until one that started after they ended has run
	 * (one already under way may have read the folder before them). */
	if (job->deep) {
		size_t w = 0;
		for (size_t i = 0; i < m->nown; i++) {
			if (m->own_ms[i] < job->started_ms) {
				free(m->own[i]);
				continue;
			}
			m->own_ms[w] = m->own_ms[i];
			m->own[w++] = m->own[i];
		}
		m->nown = w;
	}
	rocmd_sdk_free_strv(m->last_watch);
	m->last_watch = job->scan.watch;
	job->scan.watch = NULL;
	job->scan.nwatch = 0;
	rocmd_sdk_watch_update(m, m->last_watch);
	log_info("SDK scan %llu (%s): %zu install(s), %zu GPU(s) in %lld ms",
	         (unsigned long long)m->scans, job->deep ? "libraries and GPUs" : "installs",
	         job->scan.nsdks, m->last_gpus.n, (long long)job->elapsed_ms);
	if (!job->deep) {
		/* Events are out; now the slow part: hashing, the Tensile index, GPUs. */
			schedule_job(m, 1, 0);
		return;
	}
	sdk_drop_fresh_inspected(m, &job->scan);
	finish_waiters(job->waiters, rc, rc < 0 ? "cannot record the SDK scan" : NULL, m);
	job->waiters = NULL;
	if (m->again) {
		m->again = 0;
		rocmd_sdk_schedule(m, 0);
	}
}

static int
scan_done(struct rocmd_job *b, cJSON **out)
{
	after_work((struct sdk_job *)b);
	return 0;
}

static void
scan_free(struct rocmd_job *b)
{
	job_free((struct sdk_job *)b);
}

static const struct rocmd_job_ops scan_ops = {
    .what = "SDK scan",
    .work = on_work,
    .done = scan_done,
    .free = scan_free,
};

static void
on_debounce(uv_timer_t *t)
{
	struct rocmd_sdk *m = t->data;

	rocmd_sdk_schedule(m, 1);
}

/*
 * Queues a scan: the quick pass (DEEP 0: find installs and versions, emit
 * their events, optionally after checking that the dirty paths settled), or
 * the deep pass that follows it (libraries hashed, Tensile indexes read,
 * GPUs probed), which serves the waiting rescan requests.
 */
static void
schedule_job(struct rocmd_sdk *m, int deep, int settle)
{
	struct rocmd_config *cfg = m->srv->cfg;
	struct sdk_job *job;

	job = calloc(1, sizeof(*job));
	if (job == NULL) {
		log_err("SDK scan: out of memory");
		return;
	}
	if (rocmd_job_init(&job->base, &scan_ops) < 0) {
		free(job);
		log_err("SDK scan: out of memory");
		return;
	}
	job->m = m;
	job->deep = deep;
	job->opts.root = m->root;
	job->opts.windows = m->windows;
	job->opts.env = m->env;
	job->opts.extra_roots = split_roots(cfg->sdk_extra_roots, m->windows);
	job->opts.runtime_roots = split_roots(cfg->sdk_runtime_roots, m->windows);
	job->opts.hipconfig_timeout_ms = (int)cfg->sdk_probe_timeout_ms;
	job->opts.cache = m->cache;
	job->opts.lib_flags = deep ? ROCMD_ROCBLAS_FINGERPRINT : ROCMD_ROCBLAS_SKIP_DAT;
	job->probe_timeout_ms = (int)cfg->sdk_probe_timeout_ms;
	job->window_ms = rocmd_sdk_window_ms(m);
	if (!deep && (settle > 0 || m->settle_pending) && m->ndirty > 0) {
		job->settle = m->dirty;
		m->dirty = NULL;
		m->ndirty = 0;
	}
	if (!deep) {
		m->settle_pending = 0;
		uv_timer_stop(&m->debounce);
	} else {
		/* Waiters so far are served once this pass is written. */
		job->waiters = m->waiters;
		m->waiters = NULL;
	}
	m->job = job;
	rocmd_jobs_submit(&m->jobs, &job->base);
}

/*
 * Starts a scan now (SETTLE 0: as asked; 1: after checking the dirty paths),
 * or, with SETTLE < 0, arms the debounce timer for -SETTLE ms. A scan in
 * flight makes this one wait for it.
 */
void
rocmd_sdk_schedule(struct rocmd_sdk *m, int settle)
{
	if (m->stopping)
		return;
	if (settle < 0) {
		uv_timer_start(&m->debounce, on_debounce, (uint64_t)-settle, 0);
		return;
	}
	if (m->job != NULL) {
		m->again = 1;
		return;
	}
	schedule_job(m, 0, settle);
}

static void
on_interval(uv_timer_t *t)
{
	rocmd_sdk_schedule(t->data, 0);
}

int
rocmd_sdk_start(struct rocmd_server *srv, const struct rocmd_sdk_start_opts *o,
                struct rocmd_sdk **out, char *why, size_t whylen)
{
	struct rocmd_sdk *m = calloc(1, sizeof(*m));
	int rc;

	*out = NULL;
	if (m == NULL)
		return ROCMD_ENOMEM;
	m->srv = srv;
	m->windows = o->windows || rocmd_sdk_native_windows;
	m->root = strdup(o->root != NULL && strcmp(o->root, "/") != 0 ? o->root : "");
	m->probe = o->probe != NULL ? strdup(o->probe) : rocmd_sdk_find_probe();
	m->env = rocmd_sdk_discovery_env();
	if (m->root == NULL || m->env == NULL) {
		rc = ROCMD_ENOMEM;
		goto fail;
	}
	rc = rocmd_sdk_db_attach(srv->db, &m->db);
	if (rc < 0)
		goto fail;
	rc = rocmd_hash_cache_new(0, &m->cache);
	if (rc < 0)
		goto fail;
	rc = rocmd_jobs_init(&m->jobs, srv, "SDK discovery", 0);
	if (rc < 0)
		goto fail;
	uv_timer_init(srv->loop, &m->debounce);
	uv_timer_init(srv->loop, &m->interval);
	m->debounce.data = m;
	m->interval.data = m;
	m->timers_open = 1;
	if (srv->cfg->sdk_rescan_interval_s > 0)
		uv_timer_start(&m->interval, on_interval,
		               (uint64_t)srv->cfg->sdk_rescan_interval_s * 1000,
		               (uint64_t)srv->cfg->sdk_rescan_interval_s * 1000);
	rocmd_sdk_schedule(m, 0);
	*out = m;
	return 0;
fail:
	if (why[0] == '\0')
		snprintf(why, whylen, "cannot start SDK discovery: %s", rocmd_strerror(rc));
	rocmd_sdk_free(m);
	return rc;
}

void
rocmd_sdk_stop(struct rocmd_sdk *m)
{
	if (m == NULL || m->stopping)
		return;
	m->stopping = 1;
	if (m->timers_open) {
		uv_close((uv_handle_t *)&m->debounce, NULL);
		uv_close((uv_handle_t *)&m->interval, NULL);
		m->timers_open = 0;
	}
	rocmd_sdk_watch_close_all(m);
	finish_waiters(m->waiters, ROCMD_ESHUTDOWN, "rocmd is shutting down", m);
	m->waiters = NULL;
	rocmd_jobs_shutdown(&m->jobs);
}

void
rocmd_sdk_free(struct rocmd_sdk *m)
{
	if (m == NULL)
		return;
	rocmd_sdk_db_detach(m->db);
	rocmd_hash_cache_free(m->cache);
	free(m->root);
	free(m->probe);
	rocmd_sdk_free_strv(m->env);
	rocmd_sdk_free_strv(m->dirty);
	for (size_t i = 0; i < m->nown; i++)
		free(m->own[i]);
	free(m->own);
	free(m->own_ms);
	while (m->suppress != NULL) {
		struct sdk_suppress *next = m->suppress->next;
		free(m->suppress->host);
		free(m->suppress);
		m->suppress = next;
	}
	free(m->last_problems);
	sdk_clear_fresh(m);
	rocmd_gpu_scan_free(&m->last_gpus);
	rocmd_sdk_free_strv(m->last_watch);
	free(m);
}

int
rocmd_sdk_rescan(struct rocmd_sdk *m, const char *why, struct rocmd_pending *p)
{
	struct sdk_waiter *w;

	if (m->stopping)
		return ROCMD_ESHUTDOWN;
	if (p != NULL) {
		w = calloc(1, sizeof(*w));
		if (w == NULL)
			return ROCMD_ENOMEM;
		w->p = p;
		w->next = m->waiters;
		m->waiters = w;
	}
	log_info("SDK rescan: %s", why);
	rocmd_sdk_schedule(m, 0);
	return 0;
}

struct rocmd_sdk_db *
rocmd_sdk_db(struct rocmd_sdk *m)
{
	return m->db;
}

const char *
rocmd_sdk_driver_version(const struct rocmd_sdk *m)
{
	return m->last_gpus.driver;
}

int
rocmd_sdk_hip_runtime(const struct rocmd_sdk *m, const char **path, int *from_driver)
{
	*path = m->last_gpus.hip_runtime;
	*from_driver = m->last_gpus.hip_from_driver;
	return m->last_gpus.hip_runtime_version;
}

cJSON *
rocmd_sdk_gpus_json(struct rocmd_sdk *m)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < m->last_gpus.n; i++)
		cJSON_AddItemToArray(a, rocmd_gpu_to_json(&m->last_gpus.gpus[i]));
	return a;
}

cJSON *
rocmd_sdk_scan_info(struct rocmd_sdk *m)
{
	cJSON *r = cJSON_CreateObject(), *w;

	cJSON_AddNumberToObject(r, "scans", (double)m->scans);
	cJSON_AddNumberToObject(r, "inspections", (double)m->inspections);
	cJSON_AddNumberToObject(r, "time_ms", (double)m->last_scan_ms);
	cJSON_AddNumberToObject(r, "elapsed_ms", (double)m->last_scan_elapsed_ms);
	cJSON_AddBoolToObject(r, "scanning", m->job != NULL);
	cJSON_AddStringToObject(r, "root", m->root[0] ? m->root : "/");
	if (m->last_problems != NULL)
		cJSON_AddStringToObject(r, "problems", m->last_problems);
	else
		cJSON_AddNullToObject(r, "problems");
	cJSON_AddStringToObject(r, "hip_status", m->last_hip_status);
	if (m->last_gpus.hip_runtime[0] != '\0') {
		cJSON_AddStringToObject(r, "hip_runtime", m->last_gpus.hip_runtime);
		cJSON_AddStringToObject(r, "hip_runtime_source",
		                        m->last_gpus.hip_from_driver ? "driver" : "sdk");
	} else {
		cJSON_AddNullToObject(r, "hip_runtime");
		cJSON_AddNullToObject(r, "hip_runtime_source");
	}
	cJSON_AddNumberToObject(r, "hip_driver_version", m->last_gpus.hip_driver_version);
	cJSON_AddNumberToObject(r, "hip_runtime_version", m->last_gpus.hip_runtime_version);
	cJSON_AddStringToObject(r, "amdgpu_version", m->last_gpus.driver);
	if (m->last_gpus.problems != NULL)
		cJSON_AddStringToObject(r, "gpu_problems", m->last_gpus.problems);
	cJSON_AddNumberToObject(r, "watches", (double)m->nwatches);
	cJSON_AddNumberToObject(r, "fs_events", (double)m->events_seen);
	w = cJSON_AddArrayToObject(r, "watched");
	for (struct sdk_watch *x = m->watches; x != NULL; x = x->next)
		cJSON_AddItemToArray(w, cJSON_CreateString(x->host));
	return r;
}

/* ---- the engine ---- */

static void
engine_shutdown(void *self)
{
	rocmd_sdk_stop(self);
}

static void
engine_free(void *self)
{
	rocmd_sdk_free(self);
}

static void
engine_close(void *self)
{
	rocmd_jobs_close(&((struct rocmd_sdk *)self)->jobs);
}

const struct rocmd_engine_ops rocmd_sdk_engine = {
    .name = "SDK discovery",
    .shutdown = engine_shutdown,
    .close = engine_close,
    .free = engine_free,
};
