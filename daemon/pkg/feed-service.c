/*
 * The package feeds inside the daemon (docs/FEEDS.md): pkg.refresh fetches
 * every remote's metadata as a job of the package store (off the loop
 * thread), checks it (a catalogue's signature first, then its format) and
 * only then replaces the cached copy in <state>/feeds, so a refresh that
 * fails keeps the last good one; pkg.available reads the cached copies
 * (checked again: nothing unchecked is ever used) and matches them with the
 * store's rules (pkg-match.c), leaving out what is marked bad, bad for the
 * installed amdgpu driver or unverifiable; pkg.fetch queues the download
 * and import of one of them (rocmd_pkg_queue_fetch); deploy.sync's
 * automatic fetch refreshes a stale cache first, then chooses the same way.
 * The cache of remote NAME: NAME.body (a release listing's pages as one),
 * NAME.sig (catalogues) and NAME.meta (URL, ETag, Last-Modified, when it
 * was fetched).
 */
#include "pkg-service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "daemon/sdk/sdk.h"
#include "feed.h"
#include "version.h"

#ifdef _WIN32
#define PKG_PLATFORM "windows"
#else
#define PKG_PLATFORM "linux"
#endif

/* ---- the cache ---- */

static int
cache_path(const char *feeds, const char *name, const char *ext, char *out, size_t outlen)
{
	return rocmd_fs_fmt(out, outlen, "%s/%s.%s", feeds, name, ext) < (int)outlen ? 0
	                                                                              : ROCMD_EINVAL;
}

/* Checks and reads the metadata BODY (SIG for a catalogue) of remote R into
 * L: a catalogue's signature before anything else. */
static int
feed_parse(const struct rocmd_feed_remote *r, const char *body, size_t len, const char *sig,
           size_t siglen, int allow_http, struct rocmd_feed_list *l, char *why, size_t whylen)
{
	int rc;

	if (r->kind == ROCMD_FEED_RELEASES)
		return rocmd_feed_releases_parse(r, body, len, allow_http, l, why, whylen);
	if ((rc = rocmd_feed_sig_check(r, body, len, sig, siglen, why, whylen)) < 0)
		return rc;
	return rocmd_feed_catalogue_parse(r, body, len, allow_http, l, why, whylen);
}

/* The cached copy of R into L (checked again); -ENOENT when there is none. */
static int
cache_load(const char *feeds, const struct rocmd_feed_remote *r, int allow_http,
           struct rocmd_feed_list *l, cJSON **meta, char *why, size_t whylen)
{
	char path[4096], *body = NULL, *sig = NULL;
	size_t len = 0, siglen = 0;
	const char *url;
	int rc;

	*meta = NULL;
	if ((rc = cache_path(feeds, r->name, "meta", path, sizeof(path))) < 0 ||
	    (rc = rocmd_fs_json_read(path, meta)) < 0) {
		snprintf(why, whylen, "remote %s: not fetched yet (rocmctl pkg refresh)", r->name);
		return rc == -ENOENT ? rc : ROCMD_ECORRUPT;
	}
	url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(*meta, "url"));
	if (url == NULL || strcmp(url, r->url) != 0) {
		snprintf(why, whylen, "remote %s: its URL changed since the last refresh", r->name);
		rc = -ENOENT;
		goto out;
	}
	if ((rc = cache_path(feeds, r->name, "body", path, sizeof(path))) < 0 ||
	    (rc = rocmd_fs_read_file(path, ROCMD_FEED_MAX_METADATA, &body, &len)) < 0) {
		snprintf(why, whylen, "remote %s: its cached metadata cannot be read", r->name);
		goto out;
	}
	if (r->kind == ROCMD_FEED_CATALOGUE &&
	    ((rc = cache_path(feeds, r->name, "sig", path, sizeof(path))) < 0 ||
	     (rc = rocmd_fs_read_file(path, 4096, &sig, &siglen)) < 0)) {
		snprintf(why, whylen, "remote %s: its cached signature cannot be read", r->name);
		goto out;
	}
	rc = feed_parse(r, body, len, sig, siglen, allow_http, l, why, whylen);
out:
	free(body);
	free(sig);
	return rc;
}

/* ---- refresh ---- */

struct refresh_job {
	struct rocmd_job base;
	struct rocmd_pkg_service *ps;
	struct rocmd_feed_remote *remotes;
	size_t n;
	cJSON *results; /* one object per remote, made by the worker */
	int offline;    /* every remote failed for want of a network */
	int auto_fetch; /* the automatic fetch asked for it: it chooses when done */
};

static void auto_refreshed(struct rocmd_server *srv, const cJSON *result);

static void
refresh_free(struct rocmd_job *b)
{
	struct refresh_job *j = (struct refresh_job *)b;

	free(j->remotes);
	cJSON_Delete(j->results);
	rocmd_job_fini(&j->base);
	free(j);
}

static void
http_of(const struct rocmd_config *cfg, struct rocmd_feed_http *h)
{
	h->ca_bundle = cfg->pkg_ca_bundle;
	h->connect_timeout_s = (long)cfg->pkg_connect_timeout_s;
	h->stall_timeout_s = (long)cfg->pkg_stall_timeout_s;
	h->allow_loopback_http = (int)cfg->pkg_allow_loopback_http;
	h->user_agent = "rocmd/" ROCMD_VERSION_STRING;
}

/* Worker: the further pages of release listing G (its Link: rel="next",
 * same host, https, at most ROCMD_FEED_MAX_PAGES in all, none read twice: a
 * link back to a page already read ends the listing) appended to its body;
 * the count into O. */
static int
more_pages(const struct rocmd_feed_http *h, const struct rocmd_feed_remote *r,
           struct rocmd_feed_get *g, cJSON *o, int *offline, char *why, size_t whylen)
{
	char link[sizeof(g->link_out)], next[2048], seen[ROCMD_FEED_MAX_PAGES][2048];
	int pages = 1, rc, again;

	snprintf(link, sizeof(link), "%s", g->link_out);
	snprintf(seen[0], sizeof(seen[0]), "%s", r->url);
	while ((rc = rocmd_feed_link_next(link, r->url, h->allow_loopback_http, next, sizeof(next),
	                                  why, whylen)) == 1) {
		struct rocmd_feed_get p = {.url = next};
		again = 0;
		for (int i = 0; i < pages && !again; i++)
			again = strcmp(seen[i], next) == 0;
		if (again)
			break;
		if (pages == ROCMD_FEED_MAX_PAGES) {
			cJSON_AddBoolToObject(o, "more_pages", 1);
			break;
		}
		if ((rc = rocmd_feed_http_get(h, &p, why, whylen)) < 0) {
			*offline = p.offline;
			return rc;
		}
		rc = rocmd_feed_releases_append(&g->body, &g->len, p.body, p.len, why, whylen);
		snprintf(link, sizeof(link), "%s", p.link_out);
		free(p.body);
		if (rc < 0)
			return rc;
		snprintf(seen[pages], sizeof(seen[pages]), "%s", next);
		pages++;
	}
	if (rc < 0)
		return rc;
	cJSON_AddNumberToObject(o, "pages", pages);
	return 0;
}

/* Worker: one remote fetched, checked and cached into O; 0 or an error with WHY. */
static int
refresh_one(struct refresh_job *j, const struct rocmd_feed_remote *r, cJSON *o, int *offline,
            char *why, size_t whylen)
{
	const struct rocmd_config *cfg = j->ps->srv->cfg;
	struct rocmd_feed_get g = {.url = r->url}, gs = {.url = r->signature};
	struct rocmd_feed_list l = {0};
	struct rocmd_feed_http h;
	cJSON *meta = NULL, *old = NULL;
	char path[4096];
	int rc;

	http_of(cfg, &h);
	/* The validators of the copy held, when it is still whole and good. */
	if (cache_load(j->ps->feeds, r, (int)cfg->pkg_allow_loopback_http, &l, &old, why,
	               whylen) == 0) {
		g.etag = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(old, "etag"));
		g.last_modified =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(old, "last_modified"));
	}
	rocmd_feed_list_free(&l);
	if ((rc = rocmd_feed_http_get(&h, &g, why, whylen)) < 0) {
		*offline = g.offline;
		goto out;
	}
	if (g.not_modified) {
		cJSON_AddBoolToObject(o, "changed", 0);
		rc = cache_load(j->ps->feeds, r, (int)cfg->pkg_allow_loopback_http, &l, &meta, why,
		                whylen);
		goto count;
	}
	if (r->kind == ROCMD_FEED_RELEASES && (rc = more_pages(&h, r, &g, o, offline, why, whylen)) < 0)
		goto out;
	if (r->kind == ROCMD_FEED_CATALOGUE &&
	    (rc = rocmd_feed_http_get(&h, &gs, why, whylen)) < 0) {
		*offline = gs.offline;
		goto out;
	}
	/* Checked before anything of it is kept or used. */
	if ((rc = feed_parse(r, g.body, g.len, gs.body, gs.len, (int)cfg->pkg_allow_loopback_http,
	                     &l, why, whylen)) < 0)
		goto out;
	if (rocmd_fs_mkdir(j->ps->feeds, 0755) < 0 && rocmd_fs_kind(j->ps->feeds, NULL, NULL) != 'd') {
		snprintf(why, whylen, "cannot create %.300s", j->ps->feeds);
		rc = ROCMD_EIO;
		goto out;
	}
	/* The signature first, the body, then the meta naming them: a copy cut
	 * short fails its check at the next read and is fetched again. */
	if (r->kind == ROCMD_FEED_CATALOGUE &&
	    ((rc = cache_path(j->ps->feeds, r->name, "sig", path, sizeof(path))) < 0 ||
	     (rc = rocmd_fs_replace(path, NULL, gs.body, gs.len, 0644)) < 0))
		goto io;
	if ((rc = cache_path(j->ps->feeds, r->name, "body", path, sizeof(path))) < 0 ||
	    (rc = rocmd_fs_replace(path, NULL, g.body, g.len, 0644)) < 0)
		goto io;
	meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "url", r->url);
	cJSON_AddStringToObject(meta, "etag", g.etag_out);
	cJSON_AddStringToObject(meta, "last_modified", g.last_modified_out);
	cJSON_AddNumberToObject(meta, "fetched_ms", (double)rocmd_now_ms());
	if ((rc = cache_path(j->ps->feeds, r->name, "meta", path, sizeof(path))) < 0 ||
	    (rc = rocmd_fs_json_write(path, meta)) < 0)
		goto io;
	cJSON_AddBoolToObject(o, "changed", 1);
count:
	if (rc == 0) {
		cJSON_AddNumberToObject(o, "packages", (double)l.n);
		cJSON_AddNumberToObject(
		    o, "fetched_ms",
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(meta, "fetched_ms")));
	}
	goto out;
io:
	snprintf(why, whylen, "cannot write the cache %.300s: %s", path, rocmd_strerror(rc));
out:
	rocmd_feed_list_free(&l);
	cJSON_Delete(meta);
	cJSON_Delete(old);
	free(g.body);
	free(gs.body);
	return rc;
}

static void
refresh_work(struct rocmd_job *b)
{
	struct refresh_job *j = (struct refresh_job *)b;
	size_t offline = 0, tried = 0;

	for (size_t i = 0; i < j->n && !rocmd_job_canceled(b); i++) {
		const struct rocmd_feed_remote *r = &j->remotes[i];
		cJSON *o = cJSON_CreateObject();
		char why[1024];
		int off = 0, rc;

		cJSON_AddStringToObject(o, "remote", r->name);
		cJSON_AddStringToObject(o, "kind",
		                        r->kind == ROCMD_FEED_RELEASES ? "releases" : "catalogue");
		cJSON_AddStringToObject(o, "url", r->url);
		cJSON_AddBoolToObject(o, "enabled", r->enabled);
		cJSON_AddItemToArray(j->results, o);
		if (!r->enabled)
			continue;
		tried++;
		rc = refresh_one(j, r, o, &off, why, sizeof(why));
		if (rc < 0) {
			cJSON_AddStringToObject(o, "error", rocmd_err_name(rc));
			cJSON_AddStringToObject(o, "why", why);
			cJSON_AddBoolToObject(o, "offline", off);
			offline += off != 0;
		}
	}
	j->offline = tried > 0 && offline == tried;
}

static int
refresh_done(struct rocmd_job *b, cJSON **out)
{
	struct refresh_job *j = (struct refresh_job *)b;
	struct rocmd_pkg_service *ps = j->ps;
	const cJSON *o;
	size_t failed = 0;
	cJSON *r;

	cJSON_ArrayForEach(o, j->results)
	{
		const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "why"));
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "remote"));
		if (why == NULL)
			continue;
		failed++;
		if (!j->offline)
			rocmd_server_event(ps->srv, "pkg.feed_failed", cJSON_Duplicate(o, 1),
			                   "refresh of remote %s failed: %s; its last good copy is kept",
			                   name, why);
	}
	/* No network is said once, until the network is back. */
	if (j->offline && !ps->offline_said) {
		ps->offline_said = 1;
		rocmd_server_event(ps->srv, "pkg.offline", NULL,
		                   "no network: the feeds cannot be reached; rocmd keeps working "
		                   "from the store and the last metadata fetched");
	} else if (!j->offline) {
		ps->offline_said = 0;
	}
	if (failed < cJSON_GetArraySize(j->results) + 0u)
		rocmd_server_event(ps->srv, "pkg.refreshed", NULL, "feeds refreshed: %d remote(s), %zu failed",
		                   cJSON_GetArraySize(j->results), failed);
	r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "remotes", j->results);
	cJSON_AddBoolToObject(r, "offline", j->offline);
	cJSON_AddNumberToObject(r, "failed", (double)failed);
	j->results = NULL;
	if (j->auto_fetch)
		auto_refreshed(ps->srv, r);
	*out = r;
	return 0;
}

static const struct rocmd_job_ops refresh_ops = {
    .what = "refresh", .work = refresh_work, .done = refresh_done, .free = refresh_free};

static int
remotes_of(struct rocmd_server *srv, struct rocmd_feed_remote **out, size_t *n, char *why,
           size_t whylen)
{
	return rocmd_feed_remotes_load(srv->cfg->pkg_remotes_dir,
	                               (int)srv->cfg->pkg_allow_loopback_http, out, n, why, whylen);
}

/* A refresh of every remote into *OUT, not yet submitted. */
static int
refresh_new(struct rocmd_server *srv, struct refresh_job **out, char *why, size_t whylen)
{
	struct refresh_job *j;
	int rc;

	*out = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return ROCMD_ENOMEM;
	if (rocmd_job_init(&j->base, &refresh_ops) < 0) {
		free(j);
		return ROCMD_ENOMEM;
	}
	j->ps = srv->pkg;
	if ((rc = remotes_of(srv, &j->remotes, &j->n, why, whylen)) < 0 ||
	    (j->results = cJSON_CreateArray()) == NULL) {
		refresh_free(&j->base);
		return rc < 0 ? rc : ROCMD_ENOMEM;
	}
	if (j->n == 0) {
		refresh_free(&j->base);
		snprintf(why, whylen, "no remotes are configured in %s (docs/FEEDS.md)",
		         srv->cfg->pkg_remotes_dir);
		return ROCMD_ENOTFOUND;
	}
	*out = j;
	return 0;
}

int
rocmd_feed_m_refresh(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                     size_t whylen)
{
	static const char *const keys[] = {NULL};
	struct refresh_job *j;
	int rc;

	(void)result;
	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = refresh_new(conn->srv, &j, why, whylen)) < 0)
		return rc;
	j->base.flags = ROCMD_JOB_CANCEL_ORPHANED;
	if ((rc = rocmd_job_defer_reply(&j->base, conn)) < 0) {
		refresh_free(&j->base);
		return rc;
	}
	rocmd_jobs_submit(&conn->srv->pkg->jobs, &j->base);
	return rc;
}

/* ---- available, fetch ---- */

/* Every cached feed's packages into L, and a line per remote into REMOTES. */
static int
feeds_load(struct rocmd_server *srv, struct rocmd_feed_list *l, cJSON *remotes, char *why,
           size_t whylen)
{
	struct rocmd_pkg_service *ps = srv->pkg;
	struct rocmd_feed_remote *rs = NULL;
	size_t n = 0;
	int rc;

	memset(l, 0, sizeof(*l));
	if ((rc = remotes_of(srv, &rs, &n, why, whylen)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject(), *meta = NULL;
		size_t before = l->n;
		char sub[1024];

		cJSON_AddStringToObject(o, "remote", rs[i].name);
		cJSON_AddStringToObject(o, "kind",
		                        rs[i].kind == ROCMD_FEED_RELEASES ? "releases" : "catalogue");
		cJSON_AddStringToObject(o, "url", rs[i].url);
		cJSON_AddBoolToObject(o, "enabled", rs[i].enabled);
		cJSON_AddItemToArray(remotes, o);
		if (!rs[i].enabled)
			continue;
		rc = cache_load(ps->feeds, &rs[i], (int)srv->cfg->pkg_allow_loopback_http, l, &meta,
		                sub, sizeof(sub));
		if (rc == ROCMD_ENOMEM) {
			cJSON_Delete(meta);
			free(rs);
			return rc;
		}
		if (rc < 0) {
			cJSON_AddStringToObject(o, "why", sub);
		} else {
			cJSON_AddNumberToObject(o, "packages", (double)(l->n - before));
			cJSON_AddNumberToObject(
			    o, "fetched_ms",
			    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(meta, "fetched_ms")));
		}
		cJSON_Delete(meta);
	}
	free(rs);
	return 0;
}

int
rocmd_feed_cached(struct rocmd_server *srv, struct rocmd_feed_list *l, char *why, size_t whylen)
{
	cJSON *remotes = cJSON_CreateArray();
	int rc = remotes != NULL ? feeds_load(srv, l, remotes, why, whylen) : ROCMD_ENOMEM;

	cJSON_Delete(remotes);
	return rc;
}

/* The amdgpu driver a catalogue's bad_drivers are compared with ("" unknown). */
static const char *
driver_of(struct rocmd_server *srv)
{
	return srv->sdk != NULL ? rocmd_sdk_driver_version(srv->sdk) : "";
}

/* Why feed package P can never be fetched with amdgpu driver DRIVER, or NULL. */
static const char *
unfit(const struct rocmd_feed_pkg *p, const char *driver, char *buf, size_t len)
{
	char sub[512];

	if (p->bad != NULL) {
		snprintf(buf, len, "marked bad by remote %s: %s", p->remote, p->bad);
		return buf;
	}
	if (rocmd_feed_driver_bad(p->bad_drivers, driver, sub, sizeof(sub))) {
		snprintf(buf, len, "marked bad for this driver by remote %.64s: %.400s", p->remote, sub);
		return buf;
	}
	if (p->sha256[0] == '\0') {
		snprintf(buf, len, "remote %s publishes no sha256 for it: it cannot be verified",
		         p->remote);
		return buf;
	}
	return NULL;
}

struct avail {
	struct rocmd_feed_list l;
	struct rocmd_pkg_candidates stored;
	int chosen; /* index in l, or -1 */
	cJSON *explain;
	const char *driver; /* the installed amdgpu driver's version, "" unknown */
};

static void
avail_free(struct avail *a)
{
	rocmd_feed_list_free(&a->l);
	rocmd_pkg_candidates_free(&a->stored);
	cJSON_Delete(a->explain);
}

/* What the feeds offer, matched for SDK and ARCH when given (both or none). */
static int
avail_load(struct rocmd_server *srv, const char *sdk, const char *arch, const char *platform,
           cJSON *remotes, struct avail *a, char *why, size_t whylen)
{
	struct rocmd_pkg_candidate *c = NULL;
	size_t nc = 0;
	int chosen = -1, rc;

	memset(a, 0, sizeof(*a));
	a->chosen = -1;
	a->driver = driver_of(srv);
	if ((rc = feeds_load(srv, &a->l, remotes, why, whylen)) < 0 ||
	    (rc = rocmd_pkg_candidates_load(srv->pkg->db, &a->stored, why, whylen)) < 0)
		return rc;
	if (sdk == NULL)
		return 0;
	/* The fetchable ones are matched with the store's rules; their id is
	 * their place in the list plus one. */
	if ((c = calloc(a->l.n ? a->l.n : 1, sizeof(*c))) == NULL)
		return ROCMD_ENOMEM;
	for (size_t i = 0; i < a->l.n; i++) {
		const struct rocmd_feed_pkg *p = &a->l.p[i];
		char buf[512];
		if (unfit(p, a->driver, buf, sizeof(buf)) != NULL)
			continue;
		c[nc++] = (struct rocmd_pkg_candidate){.id = (int64_t)i + 1,
		                                       .name = p->name,
		                                       .platform = p->platform,
		                                       .sdk = p->sdk,
		                                       .version_hint = p->version,
		                                       .archs = p->archs,
		                                       /* Among equals the one a feed
		                                        * lists first (the newest
		                                        * release) wins, as the
		                                        * newest import does. */
		                                       .imported_ms = (int64_t)(a->l.n - i)};
	}
	rc = rocmd_pkg_match(sdk, platform, arch, c, nc, srv->cfg->store_match_rules, &chosen,
	                     &a->explain, why, whylen);
	if (rc == 0 && chosen >= 0)
		a->chosen = (int)(c[chosen].id - 1);
	free(c);
	return rc == ROCMD_EINVAL ? ROCMD_EPARAMS : rc;
}

static int
stored_as(const struct avail *a, const char *name)
{
	for (size_t i = 0; i < a->stored.n; i++)
		if (strcmp(a->stored.c[i].name, name) == 0)
			return (int)a->stored.c[i].id;
	return 0;
}

static const cJSON *
explained(const struct avail *a, size_t i)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(a->explain, "candidates"))
	{
		if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(it, "id")) == (double)i + 1)
			return it;
	}
	return NULL;
}

static int
match_params(const cJSON *params, const char **sdk, const char **arch, const char **platform,
             char *why, size_t whylen)
{
	int rc;

	*sdk = *arch = NULL;
	*platform = PKG_PLATFORM;
	if (((rc = rocmd_param_string(params, "sdk", 0, sdk, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "arch", 0, arch, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    ((rc = rocmd_param_string(params, "platform", 0, platform, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if ((*sdk == NULL) != (*arch == NULL)) {
		snprintf(why, whylen, "params 'sdk' and 'arch' go together");
		return ROCMD_EPARAMS;
	}
	return 0;
}

int
rocmd_feed_m_available(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                       size_t whylen)
{
	static const char *const keys[] = {"sdk", "arch", "platform", NULL};
	const char *sdk, *arch, *platform;
	cJSON *r, *remotes, *pkgs;
	struct avail a;
	int rc;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    (rc = match_params(params, &sdk, &arch, &platform, why, whylen)) < 0)
		return rc;
	r = cJSON_CreateObject();
	remotes = cJSON_AddArrayToObject(r, "remotes");
	if ((rc = avail_load(conn->srv, sdk, arch, platform, remotes, &a, why, whylen)) < 0) {
		cJSON_Delete(r);
		avail_free(&a);
		return rc;
	}
	cJSON_AddStringToObject(r, "driver", a.driver);
	pkgs = cJSON_AddArrayToObject(r, "packages");
	for (size_t i = 0; i < a.l.n; i++) {
		const struct rocmd_feed_pkg *p = &a.l.p[i];
		const cJSON *ex = sdk != NULL ? explained(&a, i) : NULL;
		cJSON *o = cJSON_CreateObject();
		char buf[512];
		const char *no = unfit(p, a.driver, buf, sizeof(buf));
		int id = stored_as(&a, p->name);

		cJSON_AddStringToObject(o, "remote", p->remote);
		cJSON_AddStringToObject(o, "name", p->name);
		if (p->release != NULL)
			cJSON_AddStringToObject(o, "release", p->release);
		if (p->version != NULL)
			cJSON_AddStringToObject(o, "version", p->version);
		if (p->sdk != NULL)
			cJSON_AddStringToObject(o, "sdk", p->sdk);
		else
			cJSON_AddNullToObject(o, "sdk");
		cJSON_AddStringToObject(o, "platform", p->platform);
		cJSON_AddStringToObject(o, "archs", p->archs);
		cJSON_AddNumberToObject(o, "size", (double)p->size);
		cJSON_AddStringToObject(o, "sha256", p->sha256);
		cJSON_AddStringToObject(o, "url", p->url);
		if (p->bad_drivers != NULL)
			cJSON_AddItemToObject(o, "bad_drivers", cJSON_Duplicate(p->bad_drivers, 1));
		if (id > 0)
			cJSON_AddNumberToObject(o, "stored", id);
		cJSON_AddBoolToObject(o, "fetchable", no == NULL);
		if (sdk != NULL) {
			cJSON *reasons = cJSON_CreateArray();
			const cJSON *it;
			cJSON_AddStringToObject(
			    o, "verdict",
			    no != NULL ? "never chosen"
			    : ex != NULL
			        ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ex, "verdict"))
			        : "not considered");
			if (no != NULL)
				cJSON_AddItemToArray(reasons, cJSON_CreateString(no));
			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ex, "reasons"))
			    cJSON_AddItemToArray(reasons, cJSON_Duplicate(it, 1));
			cJSON_AddItemToObject(o, "reasons", reasons);
		} else if (no != NULL) {
			cJSON_AddStringToObject(o, "why_not", no);
		}
		cJSON_AddItemToArray(pkgs, o);
	}
	if (sdk != NULL) {
		cJSON_AddStringToObject(r, "sdk", sdk);
		cJSON_AddStringToObject(r, "arch", arch);
		cJSON_AddStringToObject(r, "platform", platform);
		if (a.chosen >= 0)
			cJSON_AddStringToObject(r, "chosen", a.l.p[a.chosen].name);
		else
			cJSON_AddNullToObject(r, "chosen");
		{
			cJSON *rule = cJSON_DetachItemFromObjectCaseSensitive(a.explain, "rule");
			cJSON_AddItemToObject(r, "rule", rule != NULL ? rule : cJSON_CreateNull());
		}
	}
	avail_free(&a);
	*result = r;
	return 0;
}

int
rocmd_feed_m_fetch(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                   size_t whylen)
{
	static const char *const keys[] = {"name", "sdk", "arch", "platform", NULL};
	const char *name = NULL, *sdk, *arch, *platform;
	const struct rocmd_feed_pkg *p = NULL;
	cJSON *remotes = cJSON_CreateArray();
	char buf[512];
	struct avail a;
	int rc;

	(void)result;
	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_string(params, "name", 0, &name, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND) ||
	    (rc = match_params(params, &sdk, &arch, &platform, why, whylen)) < 0)
		goto out_params;
	if ((name == NULL) == (sdk == NULL)) {
		snprintf(why, whylen, "give either param 'name' or 'sdk' and 'arch'");
		rc = ROCMD_EPARAMS;
		goto out_params;
	}
	if ((rc = avail_load(conn->srv, sdk, arch, platform, remotes, &a, why, whylen)) < 0)
		goto out;
	if (name != NULL) {
		for (size_t i = 0; i < a.l.n && p == NULL; i++)
			if (strcmp(a.l.p[i].name, name) == 0)
				p = &a.l.p[i];
		if (p == NULL) {
			snprintf(why, whylen,
			         "no feed offers a package named %.200s (rocmctl pkg available lists "
			         "them; pkg refresh fetches the feeds)",
			         name);
			rc = ROCMD_ENOTFOUND;
			goto out;
		}
		if (unfit(p, a.driver, buf, sizeof(buf)) != NULL) {
			snprintf(why, whylen, "%.200s: %s", name, buf);
			rc = ROCMD_EUNSAFE;
			goto out;
		}
	} else if (a.chosen < 0) {
		snprintf(why, whylen,
		         "no package a feed offers fits SDK %s and %s on %s (rocmctl pkg available "
		         "--sdk %s --arch %s says why)",
		         sdk, arch, platform, sdk, arch);
		rc = ROCMD_ENOTFOUND;
		goto out;
	} else {
		p = &a.l.p[a.chosen];
	}
	rc = rocmd_pkg_queue_fetch(conn->srv->pkg, p, conn, NULL, NULL);
out:
	avail_free(&a);
out_params:
	cJSON_Delete(remotes);
	return rc;
}

/* ---- deploy.sync's automatic fetch ---- */

/* Loop thread, the automatic fetch ended: the caller is told. */
static void
auto_fetched(struct rocmd_server *srv, int64_t pkg_id, const char *why, void *ctx)
{
	struct rocmd_pkg_service *ps = srv->pkg;
	rocmd_pkg_fetched_fn then = ps->auto_then;

	(void)ctx;
	ps->auto_sdk = 0;
	ps->auto_then = NULL;
	if (pkg_id == 0)
		rocmd_server_event(srv, "pkg.auto_fetch", NULL, "the automatic fetch failed: %s",
		                   why);
	if (then != NULL)
		then(srv, pkg_id, why, ps->auto_ctx);
}

/* Chooses among the cached feeds for the automatic fetch of ps->auto_* and
 * queues it: 0, or an error with WHY. */
static int
auto_choose(struct rocmd_server *srv, char *why, size_t whylen)
{
	struct rocmd_pkg_service *ps = srv->pkg;
	cJSON *remotes = cJSON_CreateArray();
	struct avail a;
	int rc;

	rc = avail_load(srv, ps->auto_version, ps->auto_arch, ps->auto_platform, remotes, &a, why,
	                whylen);
	cJSON_Delete(remotes);
	if (rc == 0 && a.chosen < 0) {
		snprintf(why, whylen, "no package the feeds offer fits SDK %s and %s on %s",
		         ps->auto_version, ps->auto_arch, ps->auto_platform);
		rc = ROCMD_ENOTFOUND;
	}
	if (rc == 0 &&
	    (rc = rocmd_pkg_queue_fetch(ps, &a.l.p[a.chosen], NULL, auto_fetched, NULL)) < 0)
		snprintf(why, whylen, "cannot queue the fetch: %s", rocmd_strerror(rc));
	if (rc == 0)
		rocmd_server_event(srv, "pkg.auto_fetch", NULL,
		                   "SDK #%lld (%s, %s, %s): no stored package fits; fetching %s "
		                   "from remote %s",
		                   (long long)ps->auto_sdk, ps->auto_version, ps->auto_platform,
		                   ps->auto_arch, a.l.p[a.chosen].name, a.l.p[a.chosen].remote);
	avail_free(&a);
	return rc;
}

/* Loop thread: the refresh the automatic fetch asked for ended (RESULT:
 * pkg.refresh's); the choice is made from what the cache now holds. */
static void
auto_refreshed(struct rocmd_server *srv, const cJSON *result)
{
	char why[1024], failed[1024] = "";
	const cJSON *o;

	srv->pkg->auto_refreshing = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(result, "remotes"))
	{
		const char *w = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "why"));
		size_t at = strlen(failed);
		if (w != NULL && at < sizeof(failed) - 1)
			snprintf(failed + at, sizeof(failed) - at, "%s%s", at ? "; " : "", w);
	}
	/* One line for the whole refresh, however many remotes failed. */
	if (failed[0] != '\0')
		rocmd_server_event(srv, "pkg.auto_fetch", NULL,
		                   "the feeds could not be refreshed first (%s%s); the automatic "
		                   "fetch chooses from their last good copies",
		                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(result, "offline"))
		                       ? "no network: "
		                       : "",
		                   failed);
	if (auto_choose(srv, why, sizeof(why)) < 0)
		auto_fetched(srv, 0, why, NULL);
}

/* Whether a remote's cached metadata is missing or older than
 * pkg.auto_refresh_s: the automatic fetch refreshes first. */
static int
cache_stale(struct rocmd_server *srv)
{
	int64_t max_ms = srv->cfg->pkg_auto_refresh_s * 1000, now = rocmd_now_ms();
	struct rocmd_feed_remote *rs = NULL;
	char why[1024], path[4096];
	size_t n = 0;
	int stale = 0;

	if (remotes_of(srv, &rs, &n, why, sizeof(why)) < 0)
		return 0; /* the choice says why */
	for (size_t i = 0; i < n && !stale; i++) {
		cJSON *meta = NULL;
		const char *url;
		if (!rs[i].enabled)
			continue;
		if (cache_path(srv->pkg->feeds, rs[i].name, "meta", path, sizeof(path)) < 0 ||
		    rocmd_fs_json_read(path, &meta) < 0) {
			stale = 1;
			continue;
		}
		url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "url"));
		stale = url == NULL || strcmp(url, rs[i].url) != 0 ||
		        now - (int64_t)cJSON_GetNumberValue(
		                  cJSON_GetObjectItemCaseSensitive(meta, "fetched_ms")) >=
		            max_ms;
		cJSON_Delete(meta);
	}
	free(rs);
	return stale;
}

/* What the automatic fetch chooses for. */
static void
auto_wants(struct rocmd_pkg_service *ps, const char *version, const char *platform,
           const char *arch)
{
	snprintf(ps->auto_version, sizeof(ps->auto_version), "%s", version);
	snprintf(ps->auto_platform, sizeof(ps->auto_platform), "%s", platform);
	snprintf(ps->auto_arch, sizeof(ps->auto_arch), "%s", arch);
}

int
rocmd_feed_auto_fetch(struct rocmd_server *srv, int64_t sdk_id, const char *version,
                      const char *platform, const char *arch, rocmd_pkg_fetched_fn then,
                      void *ctx, char *why, size_t whylen)
{
	struct rocmd_pkg_service *ps = srv->pkg;
	struct refresh_job *j = NULL;
	int rc;

	if (ps->auto_sdk != 0) {
		if (ps->auto_sdk == sdk_id && ps->auto_refreshing) {
			/* It changed again while the feeds refresh: the choice is for
			 * what it is now. */
			auto_wants(ps, version, platform, arch);
			return 0;
		}
		if (ps->auto_sdk == sdk_id)
			return 0; /* already under way */
		snprintf(why, whylen, "an automatic fetch for SDK #%lld runs; the next SDK change "
		         "tries again", (long long)ps->auto_sdk);
		return ROCMD_EBUSY;
	}
	auto_wants(ps, version, platform, arch);
	ps->auto_sdk = sdk_id;
	if (cache_stale(srv)) {
		if ((rc = refresh_new(srv, &j, why, whylen)) < 0) {
			ps->auto_sdk = 0;
			return rc;
		}
		j->auto_fetch = 1;
		ps->auto_refreshing = 1;
		rocmd_server_event(srv, "pkg.auto_fetch", NULL,
		                   "SDK #%lld (%s, %s, %s): no stored package fits; refreshing the "
		                   "feeds first (their metadata is missing or older than "
		                   "pkg.auto_refresh_s)",
		                   (long long)sdk_id, version, platform, arch);
		rocmd_jobs_submit(&ps->jobs, &j->base);
	} else if ((rc = auto_choose(srv, why, whylen)) < 0) {
		ps->auto_sdk = 0;
		return rc;
	}
	ps->auto_then = then;
	ps->auto_ctx = ctx;
	return 0;
}
