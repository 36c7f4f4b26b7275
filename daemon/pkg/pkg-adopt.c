/*
 * The store's records and the database, set right at start-up, before the
 * collection of unused objects (queued right after, on the same queue): a
 * database is never a reason to delete the store.
 *
 * - A package the database names whose record is missing (a store made
 *   before records existed, a removal cut short) gets its record again,
 *   written from its rows.
 * - A record the database does not name (a lost or emptied database, an
 *   import cut short after its files were stored) is adopted: checked like
 *   an archive, every object it names hashed again, then recorded as a
 *   package with its original name, source and import time (event
 *   pkg.adopted). One that cannot be adopted keeps its record and objects.
 * - A store made before records existed whose database names no package:
 *   its objects cannot be told apart, so none is deleted; they are moved to
 *   store/unclaimed/<time>/, out of the collector's way, for the user to
 *   delete (or import the packages again).
 * Then store.json says the records are complete and collection may run.
 * What happened is logged, and shown by `rocmctl status` (the engine's
 * status notes) until the daemon stops.
 */
#include "pkg-service.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "db/db-pkg.h"

struct adopt_job {
	struct rocmd_job base; /* first: the runner's view */
	struct rocmd_pkg_service *ps;
	/* start (loop thread): the database's packages, sorted, and records to
	 * write for those that have none */
	char **digests;
	size_t ndigests, digests_cap;
	cJSON **fill;
	size_t nfill, fill_cap;
	/* work */
	cJSON **adopt;
	size_t nadopt, adopt_cap;
	size_t refused, unreadable, filled;
	char refused_why[512], unreadable_why[512];
	uint64_t moved, moved_bytes;
	char stamp[32];
	int complete; /* store.json written (or there already) */
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
push(cJSON ***v, size_t *n, size_t *cap, cJSON *item)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		void *nv = realloc(*v, ncap * sizeof(**v));
		if (nv == NULL)
			return ROCMD_ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = item;
	return 0;
}

static void
adopt_free(struct rocmd_job *b)
{
	struct adopt_job *j = (struct adopt_job *)b;

	rocmd_store_records_free(j->digests, j->ndigests);
	for (size_t i = 0; i < j->nfill; i++)
		cJSON_Delete(j->fill[i]);
	free(j->fill);
	for (size_t i = 0; i < j->nadopt; i++)
		cJSON_Delete(j->adopt[i]);
	free(j->adopt);
	rocmd_job_fini(&j->base);
	free(j);
}

/* ---- start: the database's side ---- */

struct file_list {
	struct rocmd_pkg_contents c;
	size_t cap;
};

static int
file_one(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct file_list *l = arg;
	struct rocmd_pkg_entry *e;

	if (l->c.count == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 256;
		void *n = realloc(l->c.entries, ncap * sizeof(*l->c.entries));
		if (n == NULL)
			return ROCMD_ENOMEM;
		l->c.entries = n;
		l->cap = ncap;
	}
	e = &l->c.entries[l->c.count++];
	memset(e, 0, sizeof(*e));
	e->kind = f->kind == 'l' ? ROCMD_PKG_SYMLINK : ROCMD_PKG_FILE;
	e->exec = f->exec;
	e->size = (uint64_t)f->size;
	if ((e->path = strdup(f->path)) == NULL ||
	    (f->link != NULL && (e->link = strdup(f->link)) == NULL))
		return ROCMD_ENOMEM;
	for (int i = 0; f->sha256 != NULL && i < ROCMD_SHA256_LEN; i++) {
		unsigned v;
		if (sscanf(f->sha256 + 2 * i, "%2x", &v) != 1)
			return ROCMD_ECORRUPT;
		e->sha256[i] = (uint8_t)v;
	}
	return 0;
}

static int
package_one(const struct rocmd_db_pkg *p, void *arg)
{
	struct adopt_job *j = arg;
	char path[4096];
	int rc;

	if (rocmd_pkg_strv_add(&j->digests, &j->ndigests, &j->digests_cap, p->digest) < 0)
		return ROCMD_ENOMEM;
	rocmd_fs_fmt(path, sizeof(path), "%s/packages/%s.json", j->ps->store, p->digest);
	if (rocmd_fs_kind(path, NULL, NULL) == 'f')
		return 0;
	{
		/* No record: one from its rows (files read on this, the loop thread). */
		struct file_list l = {0};
		cJSON *identity = p->identity != NULL ? cJSON_Parse(p->identity) : NULL,
		      *rec = NULL;
		rc = rocmd_pkg_db_files(j->ps->db, p->id, 0, 0, file_one, &l);
		if (rc == 0 && identity != NULL)
			rec = rocmd_store_record_new(&l.c, p->digest, p->name, p->source,
			                             p->imported_ms, identity);
		if (rc == 0 && rec == NULL)
			rc = identity == NULL ? ROCMD_ECORRUPT : ROCMD_ENOMEM;
		if (rc == 0 && (rc = push(&j->fill, &j->nfill, &j->fill_cap, rec)) < 0)
			cJSON_Delete(rec);
		for (size_t i = 0; i < l.c.count; i++) {
			free(l.c.entries[i].path);
			free(l.c.entries[i].link);
		}
		free(l.c.entries);
		cJSON_Delete(identity);
	}
	return rc;
}

static int
adopt_start(struct rocmd_job *b)
{
	struct adopt_job *j = (struct adopt_job *)b;
	int rc = rocmd_pkg_db_list(j->ps->db, 0, package_one, j);

	if (rc < 0) {
		/* Nothing known of the database: collection stays off too, since
		 * store.json is not written. */
		b->rc = rc;
		snprintf(b->why, sizeof(b->why),
		         "cannot read the packages the database names: %s; the store is left as "
		         "it is",
		         rocmd_pkg_db_errmsg(j->ps->db));
		return ROCMD_JOB_SKIP;
	}
	if (j->ndigests > 1)
		qsort(j->digests, j->ndigests, sizeof(*j->digests), cmp_str);
	return 0;
}

/* ---- work: the store's side ---- */

static int
canceled(void *job)
{
	return rocmd_job_canceled(job);
}

/* A record the database does not name: adopted if sound and whole. */
static void
consider(struct adopt_job *j, const char *digest, char ***keep, size_t *nkeep, size_t *keep_cap)
{
	char why[512] = "";
	cJSON *rec = NULL;
	int rc;

	if ((rc = rocmd_store_record_read(j->ps->store, digest, &rec, why, sizeof(why))) < 0) {
		if (j->unreadable++ == 0)
			snprintf(j->unreadable_why, sizeof(j->unreadable_why), "%s", why);
		return;
	}
	rocmd_store_record_objects(rec, keep, nkeep, keep_cap);
	rc = rocmd_store_record_check(j->ps->store, rec, canceled, &j->base, why, sizeof(why));
	if (rc == 0 && push(&j->adopt, &j->nadopt, &j->adopt_cap, rec) == 0)
		return;
	if (rc != ROCMD_ECANCELED && j->refused++ == 0)
		snprintf(j->refused_why, sizeof(j->refused_why), "%s (%s): %s",
		         cJSON_GetStringValue(cJSON_GetObjectItem(rec, "name")), digest, why);
	cJSON_Delete(rec);
}

static void
adopt_work(struct rocmd_job *b)
{
	struct adopt_job *j = (struct adopt_job *)b;
	const char *store = j->ps->store;
	int was_complete = rocmd_store_records_complete(store);
	char **recs = NULL, **keep = NULL, why[512];
	size_t nrecs = 0, nkeep = 0, keep_cap = 0;
	int rc = 0;

	for (size_t i = 0; i < j->nfill && rc == 0; i++) {
		int created;
		if ((rc = rocmd_store_record_write(store, j->fill[i], 0, &created, why,
		                                   sizeof(why))) < 0)
			snprintf(b->why, sizeof(b->why), "%s", why);
		j->filled += created;
	}
	if (rc == 0 && (rc = rocmd_store_records_list(store, &recs, &nrecs)) < 0)
		snprintf(b->why, sizeof(b->why), "cannot list the store's package records: %s",
		         rocmd_strerror(rc));
	for (size_t i = 0; i < nrecs && rc == 0 && !rocmd_job_canceled(b); i++) {
		char *key = recs[i];
		if (j->ndigests == 0 ||
		    bsearch(&key, j->digests, j->ndigests, sizeof(*j->digests), cmp_str) == NULL)
			consider(j, recs[i], &keep, &nkeep, &keep_cap);
	}
	if (rc == 0 && rocmd_job_canceled(b)) {
		rc = ROCMD_ECANCELED;
		snprintf(b->why, sizeof(b->why), "canceled");
	}
	/* A store older than records, and a database that names none of its
	 * packages: what no record names is moved aside, never deleted. */
	if (rc == 0 && !was_complete && j->ndigests == 0) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(j->stamp, sizeof(j->stamp), "%Y%m%dT%H%M%SZ", &tm);
		if (nkeep > 1)
			qsort(keep, nkeep, sizeof(*keep), cmp_str);
		if ((rc = rocmd_store_set_aside(store, keep, nkeep, j->stamp, &j->moved,
		                                &j->moved_bytes)) < 0)
			snprintf(b->why, sizeof(b->why),
			         "cannot move the objects no record names aside: %s",
			         rocmd_strerror(rc));
	}
	if (rc == 0 && !was_complete && (rc = rocmd_store_records_mark_complete(store)) < 0)
		rocmd_fs_fmt(b->why, sizeof(b->why), "cannot write %s/store.json: %s", store,
		             rocmd_strerror(rc));
	j->complete = rc == 0 || was_complete;
	b->rc = rc;
	rocmd_store_records_free(recs, nrecs);
	rocmd_store_records_free(keep, nkeep);
}

/* ---- done: the database's side again ---- */

static void note(struct rocmd_pkg_service *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
note(struct rocmd_pkg_service *ps, const char *fmt, ...)
{
	size_t at = strlen(ps->note);
	va_list ap;

	if (at > 0 && at + 2 < sizeof(ps->note)) {
		ps->note[at++] = ' ';
		ps->note[at] = '\0';
	}
	va_start(ap, fmt);
	vsnprintf(ps->note + at, sizeof(ps->note) - at, fmt, ap);
	va_end(ap);
}

static int
adopt_done(struct rocmd_job *b, cJSON **out)
{
	struct adopt_job *j = (struct adopt_job *)b;
	struct rocmd_pkg_service *ps = j->ps;
	size_t adopted = 0, failed = 0;

	(void)out;
	for (size_t i = 0; i < j->nadopt; i++) {
		const cJSON *rec = j->adopt[i];
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "name"));
		const char *digest = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "digest"));
		struct rocmd_pkg_contents c;
		cJSON *detail;
		char why[256];
		int64_t id = 0;
		int rc = rocmd_store_record_contents(rec, &c, why, sizeof(why));
		if (rc == 0)
			rc = rocmd_pkg_row_add(
			    ps, digest, name,
			    cJSON_GetStringValue(cJSON_GetObjectItem(rec, "source")),
			    (int64_t)cJSON_GetObjectItem(rec, "imported_ms")->valuedouble,
			    cJSON_GetObjectItem(rec, "identity"), &c, &id);
		free(c.entries);
		if (rc < 0 && rc != ROCMD_EEXISTS) {
			log_err("store: cannot adopt package %s (%s): %s", name, digest,
			        rocmd_pkg_db_errmsg(ps->db));
			failed++;
			continue;
		}
		adopted++;
		detail = cJSON_CreateObject();
		cJSON_AddNumberToObject(detail, "id", (double)id);
		cJSON_AddStringToObject(detail, "name", name);
		cJSON_AddStringToObject(detail, "digest", digest);
		rocmd_server_event(ps->srv, "pkg.adopted", detail,
		                   "package #%lld %s adopted from its record in the store (the "
		                   "database did not name it)",
		                   (long long)id, name);
	}
	if (adopted > 0) {
		rocmd_server_counts_changed(ps->srv);
		note(ps,
		     "The database did not name %zu package(s) the store holds (it was new or "
		     "emptied, or an import was cut short): adopted from their records.",
		     adopted);
	}
	if (j->refused + failed > 0)
		note(ps,
		     "%zu package(s) in the store could not be adopted (%s); their records and "
		     "objects are kept.",
		     j->refused + failed, j->refused > 0 ? j->refused_why : "database error");
	if (j->unreadable > 0)
		note(ps,
		     "%zu package record(s) cannot be read (%s): no object is collected until "
		     "they are removed.",
		     j->unreadable, j->unreadable_why);
	if (j->moved > 0)
		note(ps,
		     "The store predates package records and the database names none of its "
		     "objects: %llu objects (%llu bytes) were moved to %s/unclaimed/%s, not "
		     "deleted; delete that folder to free the space, or import the packages "
		     "again.",
		     (unsigned long long)j->moved, (unsigned long long)j->moved_bytes, ps->store,
		     j->stamp);
	if (b->rc < 0)
		note(ps, "The store's records could not be checked (%s): nothing is collected.",
		     b->why);
	if (j->filled > 0)
		log_info("store: wrote the records of %zu package(s) from the database", j->filled);
	if (ps->note[0] != '\0') {
		log_warn("store: %s", ps->note);
		/* Evidence of a run this database does not know of. */
		if (adopted > 0 || j->moved > 0) {
			ps->srv->previous_run_clean = 0;
			ps->srv->previous_run_unknown = 1;
		}
	}
	b->rc = 0;
	return 0;
}

static const struct rocmd_job_ops adopt_ops = {.what = "reconcile",
                                               .start = adopt_start,
                                               .work = adopt_work,
                                               .done = adopt_done,
                                               .free = adopt_free};

int
rocmd_pkg_queue_adopt(struct rocmd_pkg_service *ps)
{
	struct adopt_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return ROCMD_ENOMEM;
	if (rocmd_job_init(&j->base, &adopt_ops) < 0) {
		free(j);
		return ROCMD_ENOMEM;
	}
	j->ps = ps;
	rocmd_jobs_submit(&ps->jobs, &j->base);
	return 0;
}
