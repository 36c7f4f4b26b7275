/*
 * The idle tuner's persistent job queue (table tune_queue, migrations 7 and
 * 8): one row per problem (dtype, transposes, M, N, K, batch) to tune on one
 * device (backend, arch, device name) under one SDK and driver, with its state (queued,
 * running, paused, done, failed, stale), progress, origin (default shapes,
 * a user's `rocmctl tune add`, or a re-tune after an SDK or driver update)
 * and, for a re-tune, the job it was seeded from. The evaluations themselves
 * are the tuner's (db-tune.c); this table is the scheduler's to-do list and
 * survives restarts. It works on the daemon's own connection; only the loop
 * thread uses it.
 */
#ifndef ROCMD_DB_TUNE_QUEUE_H
#define ROCMD_DB_TUNE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct rocmd_db;
struct rocmd_tune_queue_db;

struct rocmd_tune_job {
	int64_t id;
	char backend[16];
	char arch[32];
	char device[128];
	char sdk[64]; /* the SDK version the job is keyed to, "none" without one */
	char driver[64]; /* the device's driver (backend_device_info.driver_version) */
	char dtype[8];
	char trans[4];
	int64_t m, n, k, batch;
	char origin[8]; /* "default", "user", "retune" */
	char state[8];  /* "queued", "running", "paused", "done", "failed", "stale" */
	int64_t budget;
	int64_t evals, measured;    /* finished evaluations (stored ones included) */
	char winner[256];           /* "" until done */
	double best_ms, default_ms; /* 0: none */
	int64_t seeded_from;        /* 0: none */
	char detail[256];
	int64_t created_ms, updated_ms, finished_ms;
	/* A vendor library's solutions for one deploy target (migration 9);
	 * kernel jobs leave these empty (target ""): */
	char source[16];     /* where the shape came from: "capture", "log", "tunableop",
	                      * "family"; "" for kernel jobs and tune.add */
	int64_t calls;       /* how often the program called it; 0 unknown */
	int64_t lda, ldb, ldc;                /* as the program calls it; 0 tight */
	int64_t stride_a, stride_b, stride_c; /* batched; 0 tight */
	double alpha, beta;
	char target[64];      /* "sdk-1", "lib-rocblas-1": the target tuned for */
	char library[512];    /* its library file */
	char lib_digest[65];  /* the library the job ran on; "" until it has run */
	double est_ms;        /* expected time per call: the queue order is calls x time */
	double best_hi_ms, default_lo_ms; /* the re-timing's spread (tune.h); 0 none */
};

int rocmd_tune_queue_attach(struct rocmd_db *main, struct rocmd_tune_queue_db **out);
/* Frees the accessor; the connection stays with MAIN. NULL is fine. */
void rocmd_tune_queue_detach(struct rocmd_tune_queue_db *q);
const char *rocmd_tune_queue_errmsg(struct rocmd_tune_queue_db *q);

/* Queues J (state and progress fields are ignored: it starts queued). When a
 * job that is not stale exists for the same device, SDK, driver and problem, nothing
 * is added: *ID gets that job and *CREATED 0. ROCMD_EINVAL for a bad field
 * (the CHECK constraints). */
int rocmd_tune_queue_add(struct rocmd_tune_queue_db *q, const struct rocmd_tune_job *j, int64_t now,
                         int64_t *id, int *created);
/* Fills *J for job ID; ROCMD_ENOTFOUND. */
int rocmd_tune_queue_get(struct rocmd_tune_queue_db *q, int64_t id, struct rocmd_tune_job *j);
/* Calls CB for every job, oldest first; stale ones only when ALL is set. A
 * non-zero return from CB stops the walk and is returned. */
int rocmd_tune_queue_list(struct rocmd_tune_queue_db *q, int all,
                          int (*cb)(const struct rocmd_tune_job *j, void *ctx), void *ctx);
/* The job to run next on this device under SDK and DRIVER: a 'running' one first (it
 * was cut short by a crash or a yield), else the oldest 'queued' one a user
 * added (rocmctl tune add: asked for explicitly, so ahead of the defaults and
 * re-tunes), else the oldest 'queued' one. ROCMD_ENOTFOUND when there is none. */
int rocmd_tune_queue_next(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                          const char *device, const char *sdk, const char *driver,
                          struct rocmd_tune_job *j);
/* Sets job ID's state (DETAIL may be NULL: unchanged). ROCMD_ENOTFOUND. */
/* The evaluations recorded for J's problem on its device and driver (the
 * tuner's tune_job and tune_eval), in the order they ran, LIMIT at most: CB
 * gets each configuration, its outcome ("ok", "wrong_result", ...), its median
 * time (0 when it did not run correctly) and GFLOP/s. A CB result < 0 stops
 * the walk and is returned. */
typedef int (*rocmd_tune_eval_fn)(void *ctx, const char *config, const char *outcome,
                                  double median_ms, double gflops);
int rocmd_tune_queue_evals(struct rocmd_tune_queue_db *q, const struct rocmd_tune_job *j,
                           int64_t limit, rocmd_tune_eval_fn cb, void *ctx);
int rocmd_tune_queue_set_state(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                               const char *detail, int64_t now);
/* Moves every job in state FROM to state TO; *N (may be NULL) gets the count. */
int rocmd_tune_queue_move_all(struct rocmd_tune_queue_db *q, const char *from, const char *to,
                              int64_t now, int *n);
/* Records progress of a running job. */
int rocmd_tune_queue_progress(struct rocmd_tune_queue_db *q, int64_t id, int64_t evals,
                              int64_t measured, double best_ms, int64_t now);
/* Ends job ID as STATE ("done" or "failed") with its winner (may be NULL). */
int rocmd_tune_queue_finish(struct rocmd_tune_queue_db *q, int64_t id, const char *state,
                            const char *winner, double best_ms, double default_ms,
                            const char *detail, int64_t now);
/* Marks stale every job of the device (backend, arch, device) keyed to an SDK
 * other than SDK or a driver other than DRIVER, calling CB (may be NULL) with
 * each one as it was before; *N gets the count. The scheduler queues a seeded
 * re-tune from CB. */
int rocmd_tune_queue_stale(struct rocmd_tune_queue_db *q, const char *backend, const char *arch,
                           const char *device, const char *sdk, const char *driver, int64_t now,
                           void (*cb)(const struct rocmd_tune_job *old, void *ctx), void *ctx,
                           int *n);
/* The vendor job to run next (target <> ''): a 'running' one first, else a
 * queued one of a program's (any source but 'family') before the shape
 * families', each the largest expected saving first (calls x est_ms; calls 0
 * counts as 1), oldest first among equals. ROCMD_ENOTFOUND. */
int rocmd_tune_queue_next_vendor(struct rocmd_tune_queue_db *q, struct rocmd_tune_job *j);
/* Records what a vendor job's evaluator found: the GPU, the driver and the
 * library's digest. */
int rocmd_tune_queue_adopt(struct rocmd_tune_queue_db *q, int64_t id, const char *arch,
                           const char *device, const char *driver, const char *lib_digest,
                           int64_t now);
/* Records a finished job's re-timing spread and expected time per call. */
int rocmd_tune_queue_spread(struct rocmd_tune_queue_db *q, int64_t id, double best_hi_ms,
                            double default_lo_ms, double est_ms, int64_t now);
/* Marks stale every vendor job of TARGET and backend BACKEND that ran on
 * another library or driver than LIB_DIGEST and DRIVER (or, with LIB_DIGEST
 * NULL, every one that is not stale), calling CB with each as it was. */
int rocmd_tune_queue_stale_target(struct rocmd_tune_queue_db *q, const char *target,
                                  const char *backend, const char *lib_digest,
                                  const char *driver, int64_t now,
                                  void (*cb)(const struct rocmd_tune_job *old, void *ctx),
                                  void *ctx, int *n);

/* Gives the device's jobs queued before the queue knew drivers (driver '',
 * schema 7) DRIVER, so that an upgrade of rocmd re-tunes nothing; *N (may be
 * NULL) gets the count. */
int rocmd_tune_queue_adopt_driver(struct rocmd_tune_queue_db *q, const char *backend,
                                  const char *arch, const char *device, const char *driver,
                                  int64_t now, int *n);

int rocmd_tune_queue_begin(struct rocmd_tune_queue_db *q);
int rocmd_tune_queue_commit(struct rocmd_tune_queue_db *q);
void rocmd_tune_queue_rollback(struct rocmd_tune_queue_db *q);

#endif
