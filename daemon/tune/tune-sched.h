/*
 * The idle tune scheduler: runs the tuner (kernels/tune.h) on the daemon's
 * persistent job queue (db/db-tune-queue.h) while the idle monitor (idle.h)
 * says the machine is idle, yields the device the moment the user returns,
 * and queues seeded re-tunes when the SDK changes. tune-sched.c says how.
 */
#ifndef ROCMD_TUNE_SCHED_H
#define ROCMD_TUNE_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "db/db-tune-override.h"

struct rocmd_server;
struct rocmd_tune;
struct rocmd_tune_queue_db;
struct tune_store;

/* Opens the queue, probes the tuning device off the loop thread, and starts
 * watching the idle signals once there is work. ROOT is --root (NULL: /). */
int rocmd_tune_start(struct rocmd_server *srv, const char *root, struct rocmd_tune **out, char *why,
                     size_t whylen);
/* Stops a running job (waiting for it to yield) and closes every handle. */
void rocmd_tune_stop(struct rocmd_tune *t);
struct rocmd_engine_ops;
/* The server's view of the scheduler (daemon/core/server.h). */
extern const struct rocmd_engine_ops rocmd_tune_engine;
/* Frees T after the loop has ended. NULL is fine. */
void rocmd_tune_free(struct rocmd_tune *t);

/* An event was recorded (server.c calls this for every kind): sdk.* events
 * make the scheduler check which SDK its results are keyed to. */
void rocmd_tune_on_event(struct rocmd_tune *t, const char *kind);

/* For tune-methods.c. */
cJSON *rocmd_tune_status(struct rocmd_tune *t);
/* A session agent's report of its input idleness (idle.h, rocmd_idle_report). */
int rocmd_tune_input(struct rocmd_tune *t, long session, int64_t idle_ms, char *why,
                     size_t whylen);
/* "start" (run now, ignoring the idle policy), "pause", "resume". */
int rocmd_tune_control(struct rocmd_tune *t, const char *what, char *why, size_t whylen);
/* Queues a user job for the tuning device; *ID and *CREATED as
 * rocmd_tune_queue_add. BUDGET 0: the configured one. */
int rocmd_tune_add(struct rocmd_tune *t, const char *dtype, const char *trans, int64_t m, int64_t n,
                   int64_t k, int64_t batch, int64_t budget, int64_t *id, int *created, char *why,
                   size_t whylen);
struct rocmd_tune_queue_db *rocmd_tune_queue_db(struct rocmd_tune *t);
/* The tuner's results store on the daemon's connection (loop thread only). */
struct tune_store *rocmd_tune_store(struct rocmd_tune *t);
/* The tuned library's identity for the device and SDK now: the tuning key
 * without a problem. ROCMD_EBUSY while the device is being probed. */
struct tune_key;
int rocmd_tune_id_key(struct rocmd_tune *t, struct tune_key *key, char *why, size_t whylen);

/* ---- vendor overrides (tune-override.c) ---- */

/*
 * A deploy, rollback or recovery is about to replace TARGET's library (deploy
 * calls this on the loop thread before the swap): TARGET's overrides are
 * withdrawn (their files emptied, then the environment), its vendor jobs made
 * stale with seeded re-tunes queued, and none of them starts until the
 * change is over. REASON: "deploy", "rollback", ... NULL T is fine.
 */
void rocmd_tune_withdraw_target(struct rocmd_tune *t, const char *target, const char *reason);
/* `rocmctl tune off|on TARGET`: withdraws TARGET's overrides and keeps them
 * off, or writes them again. *CHANGED: how many. ROCMD_ENOTFOUND. */
int rocmd_tune_switch(struct rocmd_tune *t, const char *target, int on, int *changed, char *why,
                      size_t whylen);
/* Every override row, as tune.results lists them. */
cJSON *rocmd_tune_overrides(struct rocmd_tune *t);
struct rocmd_tune_override;
struct rocmd_tune_job;
int rocmd_tune_override_state(struct rocmd_tune *t, const char *target, const char *library,
                              struct rocmd_tune_override *o);
/* What rocmctl doctor reads of each override (the loop thread): its row,
 * and whether its target still has that library (FOUND) and where. */
struct rocmd_tune_override_view {
	struct rocmd_tune_override o;
	int found;
	char library[512], tensile_dir[512]; /* host paths */
};
/* Every override row as a view, into *OUT (*N of them; free()). 0 rows for a
 * NULL T; ROCMD_ENOMEM. */
int rocmd_tune_override_views(struct rocmd_tune *t, struct rocmd_tune_override_view **out,
                              size_t *n);
/* Whether library LIBRARY of KIND ("rocblas", "hipblaslt") is still the one
 * an override was measured on: its files' fingerprint STAT_SEEN (NULL:
 * unknown), else its content digest DIGEST_SEEN. 1 yes, 0 no or unreadable;
 * the digest now into NOW_DIGEST when it was computed ("" otherwise). Reads
 * and may hash files: any thread. */
int rocmd_tune_library_same(const char *kind, const char *library, const char *tensile_dir,
                            const char *stat_seen, const char *digest_seen, char now_digest[65]);
/* The identity line of override file PATH into *ID: 0, ROCMD_ECORRUPT when
 * it has none (not written by rocmd), or the error reading it. */
struct vendor_override_id;
int rocmd_tune_override_read_id(const char *path, struct vendor_override_id *id);
/* The recovery every start runs (tune-override.c): overrides whose library
 * changed withdrawn (their jobs stale, re-tunes queued seeded), the others
 * written again from their jobs, the machine's environment made to agree.
 * Loop thread; NULL T is fine. */
void rocmd_tune_override_recheck(struct rocmd_tune *t);
/* Whether vendor job J's winner goes into its override (beat the default by
 * more than the spread). */
int rocmd_tune_entry_written(const struct rocmd_tune_job *j);
/* tune.add_shapes: SHAPES (the method's array) queued for every target of
 * their library. */
int rocmd_tune_add_shapes(struct rocmd_tune *t, const cJSON *shapes, const char *source,
                          const char *detail, cJSON **result, char *why, size_t whylen);

#endif
