/*
 * The package store inside the daemon: its state, owned by the server
 * (srv->pkg), the pkg.* methods (pkg-methods.c), the jobs that import,
 * verify and collect on the daemon's job runner, one at a time so an import
 * never races a collection (pkg-jobs.c), and the watched drop folder
 * (pkg-drop.c). The reading, identification, store and matching code it
 * drives is in pkg.h.
 */
#ifndef ROCMD_PKG_SERVICE_H
#define ROCMD_PKG_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "daemon/core/jobs.h"
#include "daemon/core/methods.h"
#include "pkg.h"

struct rocmd_server;
struct rocmd_conn;
struct rocmd_pkg_db;
struct pkg_drop_file;

/* How a fetch ended (rocmd_pkg_queue_fetch): the stored package's id, or 0
 * and why it was refused. */
typedef void (*rocmd_pkg_fetched_fn)(struct rocmd_server *srv, int64_t pkg_id, const char *why,
                                     void *ctx);

struct rocmd_pkg_service {
	struct rocmd_server *srv;
	struct rocmd_pkg_db *db;
	char store[4096];
	char drop[4096];
	struct rocmd_jobs jobs;
	uv_fs_event_t drop_ev;
	uv_timer_t drop_timer;
	struct pkg_drop_file *drops;
	int watching;
	/* What the start-up reconciliation (pkg-adopt.c) found, for the log and
	 * `rocmctl status`; "" when the store and the database agreed. */
	char note[2048];
	/* The feeds (feed-service.c): <state>/feeds, the cached metadata; whether
	 * "no network" was said since the network was last seen. */
	char feeds[4096];
	int offline_said;
	int64_t auto_sdk; /* the SDK an automatic fetch runs for, or 0 */
	char auto_version[32], auto_platform[32], auto_arch[32]; /* what it fetches for */
	int auto_refreshing; /* it waits for the feeds' refresh it asked for */
	rocmd_pkg_fetched_fn auto_then;
	void *auto_ctx;
};

extern const struct rocmd_method rocmd_methods_pkg[];
extern const struct rocmd_engine_ops rocmd_pkg_engine;

/* Opens the store and its database connection, checks the configured match
 * rules, removes staging leftovers, queues a collection of orphaned objects
 * and starts watching the drop folder. WHY says what failed. */
int rocmd_pkg_start(struct rocmd_server *srv, struct rocmd_pkg_service **out, char *why,
                    size_t whylen);

/* The rights of the client on CONN (its uid and gid from the kernel, its
 * supplementary groups from SO_PEERGROUPS) into *OUT (for
 * rocmd_pkg_cred_free), or NULL when the daemon's own rights are the
 * caller's (root, or the daemon's own uid). On Windows always NULL: see
 * pkg-cred-win.c. */
int rocmd_pkg_cred_of(struct rocmd_conn *conn, struct rocmd_pkg_cred **out);

/* Queues the import of PATH as package NAME (SDK: a version the user gave,
 * or NULL), read with CRED's rights (consumed; NULL: the daemon's own). CONN:
 * the client whose request waits for it (ROCMD_METHOD_DEFERRED is returned),
 * or NULL for the drop folder's (0). */
int rocmd_pkg_queue_import(struct rocmd_pkg_service *ps, const char *path, const char *name,
                           const char *sdk, struct rocmd_pkg_cred *cred, struct rocmd_conn *conn);
/* Queues the fetch of feed package P (its URL, size and hash; feed.h):
 * downloaded into store/partial/<sha256> and imported as NAME. CONN as for
 * an import. THEN (may be NULL) is called on the loop thread when it ends:
 * with the stored package's id, or 0 and why it was refused. */
struct rocmd_feed_pkg;
int rocmd_pkg_queue_fetch(struct rocmd_pkg_service *ps, const struct rocmd_feed_pkg *p,
                          struct rocmd_conn *conn, rocmd_pkg_fetched_fn then, void *then_ctx);
/* deploy.sync's automatic fetch (feed-service.c): the package the cached
 * feeds offer for SDK SDK_ID (VERSION, PLATFORM, ARCH), chosen by the
 * store's rules and never one marked bad (or bad for the installed driver),
 * is fetched, after a refresh when a remote's cache is missing or older
 * than pkg.auto_refresh_s; THEN(CTX) is told how
 * it ended (deploy-sync.c deploys it). One runs at a time: 0 when a fetch
 * was queued (or one for that SDK already runs), else an error with WHY. */
int rocmd_feed_auto_fetch(struct rocmd_server *srv, int64_t sdk_id, const char *version,
                          const char *platform, const char *arch, rocmd_pkg_fetched_fn then,
                          void *ctx, char *why, size_t whylen);
/* The pkg.refresh, pkg.available and pkg.fetch methods (feed-service.c). */
int rocmd_feed_m_refresh(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                         size_t whylen);
/* Every enabled remote's cached packages into L (rocmd_feed_list_free), each
 * catalogue's signature checked again, as pkg.available reads them; a remote
 * without a good copy adds none. Reads files only: any thread. 0, or an
 * error with WHY (the remotes' files do not load). */
struct rocmd_feed_list;
int rocmd_feed_cached(struct rocmd_server *srv, struct rocmd_feed_list *l, char *why,
                      size_t whylen);
int rocmd_feed_m_available(struct rocmd_conn *conn, const cJSON *params, cJSON **result,
                           char *why, size_t whylen);
int rocmd_feed_m_fetch(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                       size_t whylen);

/* Queues the verification of package ID's objects (0: the whole store) for
 * CONN's request. Returns ROCMD_METHOD_DEFERRED or an error with WHY. */
int rocmd_pkg_queue_verify(struct rocmd_pkg_service *ps, int64_t id, struct rocmd_conn *conn,
                           char *why, size_t whylen);
/* Queues a collection of the objects no package names. CONN (may be NULL)
 * gets RESULT (consumed; may be NULL) with the collection's figures added. */
int rocmd_pkg_queue_gc(struct rocmd_pkg_service *ps, struct rocmd_conn *conn, cJSON *result);
/* Queues the start-up reconciliation of the store's records with the
 * database (pkg-adopt.c). */
int rocmd_pkg_queue_adopt(struct rocmd_pkg_service *ps);
/* Loop thread: adds package DIGEST to the database, its row from NAME,
 * SOURCE, IMPORTED_MS and IDENTITY, its files from C; ROCMD_EEXISTS (and *ID)
 * when it is there already. */
int rocmd_pkg_row_add(struct rocmd_pkg_service *ps, const char *digest, const char *name,
                      const char *source, int64_t imported_ms, const cJSON *identity,
                      const struct rocmd_pkg_contents *c, int64_t *id);

/* The drop folder (pkg-drop.c): starts watching it / closes its handles /
 * moves an archive whose import ended to imported/ or refused/ (with WHY). */
void rocmd_pkg_drop_start(struct rocmd_pkg_service *ps);
void rocmd_pkg_drop_close(struct rocmd_pkg_service *ps);
void rocmd_pkg_drop_done(struct rocmd_pkg_service *ps, const char *name, int ok, const char *why);

/* Every stored package as matching sees it (pkg.h), read from DB: for
 * pkg.match and for deploy's choice of a package. WHY says what failed. */
struct rocmd_pkg_candidates {
	struct rocmd_pkg_candidate *c;
	size_t n, cap;
};
int rocmd_pkg_candidates_load(struct rocmd_pkg_db *db, struct rocmd_pkg_candidates *out, char *why,
                              size_t whylen);
void rocmd_pkg_candidates_free(struct rocmd_pkg_candidates *l);

#endif
