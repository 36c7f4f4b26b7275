/*
 * The daemon's one job runner: deploys, package imports, verifications and
 * collections, SDK scans and tuning runs are all jobs on a queue of this kind.
 *
 * A queue runs one job at a time, in arrival order, on a worker thread of its
 * own (never the loop thread), so a long tuning run cannot hold back a
 * deploy and no queue waits for another's thread. Everything else happens
 * on the loop thread: the optional start hook just before the work (reading
 * the database), a progress notification every tick to the client waiting
 * for the reply, the done hook after it (writing the outcome, shaping the
 * reply), cancellation, deferral and shutdown. A worker that needs the loop
 * thread (the tuner's store calls: only the loop thread writes the database)
 * hands it a function with rocmd_job_call and waits.
 *
 * An engine embeds struct rocmd_job first in its own job struct, fills the
 * ops table once, and gets its struct back with a cast in each hook.
 */
#ifndef ROCMD_JOBS_H
#define ROCMD_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

struct rocmd_server;
struct rocmd_conn;
struct rocmd_pending;
struct rocmd_job;

/* start: do not run the work, go straight to done (JOB->rc says why). */
#define ROCMD_JOB_SKIP 1
/* done: keep the job and run it again after the queue's retry delay. */
#define ROCMD_JOB_RETRY 2

/* Job flags. */
#define ROCMD_JOB_CANCEL_ORPHANED 0x1 /* cancel when the waiting client goes away */

struct rocmd_job_ops {
	const char *what; /* for log lines: "deploy", "import", ... */
	/* Loop thread, just before the work (optional): 0 runs it,
	 * ROCMD_JOB_SKIP goes to done without running it. */
	int (*start)(struct rocmd_job *job);
	/* The worker thread: touches only the job's own fields (progress
	 * counters under JOB->lock) and polls rocmd_job_canceled. */
	void (*work)(struct rocmd_job *job);
	/* Loop thread, after the work: records the outcome; *RESULT (consumed)
	 * becomes the reply when JOB->rc >= 0. Returns 0, or ROCMD_JOB_RETRY. */
	int (*done)(struct rocmd_job *job, cJSON **result);
	/* Loop thread, each tick while the work runs (optional): a progress
	 * notification's params for the waiting client, or NULL. */
	cJSON *(*progress)(struct rocmd_job *job);
	/* Loop thread, when the job is canceled while it runs (optional): cut
	 * the work short (kill a child process, abort an evaluation). */
	void (*cancel)(struct rocmd_job *job);
	void (*free)(struct rocmd_job *job);
};

struct rocmd_job {
	const struct rocmd_job_ops *ops;
	struct rocmd_jobs *q;
	struct rocmd_job *next;
	struct rocmd_pending *pending; /* the reply owed, or NULL: nobody waits */
	unsigned flags;
	int orphan_watch; /* had a client to wait for (ROCMD_JOB_CANCEL_ORPHANED) */
	int64_t queued_ms, started_ms;
	int deferrals;         /* times done returned ROCMD_JOB_RETRY */
	int rc;                /* the outcome: 0 or a rocmd error */
	char why[1024];        /* with rc < 0: what the user is told */
	uv_mutex_t lock;       /* the engine's counters shared with the worker */
	volatile int canceled; /* set on the loop thread, polled by the worker */
};

/* A worker's request for the loop thread (rocmd_job_call). */
struct rocmd_job_call {
	void (*fn)(void *arg);
	void *arg;
	int done;
};

struct rocmd_jobs {
	struct rocmd_server *srv;
	const char *name;
	unsigned tick_ms;
	uint64_t retry_ms;
	struct rocmd_job *head, *tail, *running, *deferred;
	uv_thread_t loop_thread, thread;
	uv_async_t async;
	uv_timer_t tick, retry;
	uv_mutex_t lock; /* guards call and finished */
	uv_cond_t cond;
	struct rocmd_job_call *call;
	int finished;
	int shutting_down;
	int open;
};

/* Sets up queue Q on SRV's loop: NAME for log lines, a progress tick of
 * TICK_MS while a job runs. 0 or a rocmd error. */
int rocmd_jobs_init(struct rocmd_jobs *q, struct rocmd_server *srv, const char *name,
                    unsigned tick_ms);
/* How long a job that asked to be retried waits (default 30 s). */
void rocmd_jobs_set_retry(struct rocmd_jobs *q, uint64_t ms);
/* Prepares JOB (zeroed by the caller, usually with calloc). 0 or ENOMEM. */
int rocmd_job_init(struct rocmd_job *job, const struct rocmd_job_ops *ops);
/* Releases what rocmd_job_init took (the engine's free hook calls it). */
void rocmd_job_fini(struct rocmd_job *job);
/* Makes the request being dispatched on CONN wait for JOB's reply. Returns
 * ROCMD_METHOD_DEFERRED, or ROCMD_ENOMEM (JOB is then not touched). */
int rocmd_job_defer_reply(struct rocmd_job *job, struct rocmd_conn *conn);
/* Queues JOB, which Q now owns. While the daemon shuts down, the job is
 * refused at once (its client told so). */
void rocmd_jobs_submit(struct rocmd_jobs *q, struct rocmd_job *job);
/* Jobs running and queued (not those waiting to be retried). */
size_t rocmd_jobs_count(const struct rocmd_jobs *q);
/* Calls FN for the running, queued and deferred jobs until it returns non-zero,
 * which is returned. */
int rocmd_jobs_each(struct rocmd_jobs *q, int (*fn)(struct rocmd_job *job, void *ctx), void *ctx);
/* Loop thread: cancels JOB (running: its cancel hook runs; the work sees
 * rocmd_job_canceled). */
void rocmd_job_cancel(struct rocmd_job *job);
/* The worker thread: whether to stop. */
int rocmd_job_canceled(const struct rocmd_job *job);
/* The worker thread: runs FN(ARG) on the loop thread and waits for it (on the
 * loop thread itself: runs it at once). */
void rocmd_job_call(struct rocmd_job *job, void (*fn)(void *arg), void *arg);
/* The daemon is stopping: queued and deferred jobs are refused (their clients
 * told), the running one is canceled; its done hook still runs. */
void rocmd_jobs_shutdown(struct rocmd_jobs *q);
/* After the loop has ended: closes the queue's handles (run the loop once more
 * for their callbacks). Nothing runs by then. */
void rocmd_jobs_close(struct rocmd_jobs *q);

#endif
