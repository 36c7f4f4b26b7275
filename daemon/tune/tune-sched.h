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

#endif
