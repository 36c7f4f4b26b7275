/*
 * What the files of the tune scheduler share (see tune-sched.h): its state,
 * the run in progress, and the few functions one file offers the others.
 * tune-sched.c is the loop side (device, queue, idle decisions, yields, SDK
 * and driver changes), tune-run.c the worker side (the run on the job
 * runner, the store it sees, the tuned library it writes), tune-status.c the
 * views and controls the tune.* methods use.
 */
#ifndef ROCMD_TUNE_INTERNAL_H
#define ROCMD_TUNE_INTERNAL_H

#include <stdint.h>

#include <uv.h>

#include "daemon/core/jobs.h"
#include "db/db-tune-queue.h"
#include "idle.h"
#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/tune.h"
#include "tune-sched.h"

#define LAT_KEEP 4096 /* preemption latencies kept for the status */

/* What the worker is asked to do and what it found. */
struct run {
	int probe; /* 1: only open the backend to learn the device */
	char backend[16];
	struct rocmd_tune_job job;
	/* results */
	int rc;
	char why[512];
	struct backend_device_info dev;
	struct tune_summary sum;
	uint64_t stopped_ns;
	char hash[17];        /* the kernel source's */
	char state_dir[1024]; /* where the tuned library goes */
	char lib_why[256];    /* the library write's outcome */
	int lib_generation;
	int driver_changed; /* the device's driver is not the job's: not run */
};

/* The last change of SDK or driver that made jobs stale, for the status. */
struct sw_change {
	char message[256];
	int64_t at_ms;
	int stale, queued;
};

struct rocmd_tune {
	struct rocmd_server *srv;
	struct rocmd_config *cfg;
	struct rocmd_tune_queue_db *q;
	struct tune_store store; /* SQLite, loop thread only */
	struct tune_store proxy; /* what the worker gets */
	struct rocmd_idle *idle;
	struct rocmd_idle_policy policy;
	uv_timer_t timer;
	int timer_on;
	int stopping;

	/* the device */
	int dev_known;
	int probe_failed;
	char backend[16];
	struct backend_device_info dev;
	char sdk[64];
	char hash[17]; /* the kernel source's, from the probe */
	struct sw_change change;

	/* control */
	int forced; /* `tune start`: ignore the idle policy */
	int paused; /* `tune pause` */
	int wanted; /* watching: there is work and tuning may happen */
	char decision[160];
	int decision_go;
	struct rocmd_idle_signals sig;
	int64_t sig_ms;

	/* the worker */
	struct rocmd_jobs jobs;
	struct tune_job *job; /* the run in progress, or NULL */
	int running;          /* a run is queued or in progress */
	struct run run;
	int64_t run_started_ms;
	int yielding;
	uint64_t yield_signal_ns; /* when the input that stopped it was read */
	int64_t yield_event_us;   /* the input event's own time stamp */
	char yield_reason[96];

	/* shared with the worker, under lock */
	uv_mutex_t lock;
	int prog_evals, prog_measured;
	double prog_best;
	struct tune_evaluator *ev;
	long worker_tid; /* the worker thread, while it opens an evaluator */

	/* preemption latencies (ms), a ring */
	double lat[LAT_KEEP];
	int nlat, lat_next;
	int64_t yields;
};

/* A run on the job runner: the probe or a tuning job (T->run says which). */
struct tune_job {
	struct rocmd_job
	    base; /* first: the runner's view; base.canceled is the run's cancel flag */
	struct rocmd_tune *t;
};

/* ---- tune-run.c ---- */

/* Default shapes, "MxNxK", for each backend kind. */
extern const char *const tune_cpu_shapes[];
extern const char *const tune_gpu_shapes[];
/* Queues T->run (set up by the caller) on the runner. */
void tune_run_start(struct rocmd_tune *t);
/* Sets T->proxy: the store the worker sees. */
void tune_run_proxy_init(struct rocmd_tune *t);
int tune_job_problem(const struct rocmd_tune_job *j, struct gemm_problem *p);
/* The sdk-folded software key of a device: the tuned library's identity. */
void tune_id_key(const struct backend_device_info *dev, const char *hash, const char *sdk,
                 struct tune_key *key);

/* ---- tune-sched.c ---- */

/* The scheduler's one step (see tune-sched.c). */
void tune_schedule(struct rocmd_tune *t);
/* Stops the running job now. */
void tune_preempt(struct rocmd_tune *t, const char *reason, uint64_t signal_ns, int64_t event_us);
void tune_job_fill_device(const struct rocmd_tune *t, struct rocmd_tune_job *j);
/* The run has returned: record it, then decide again. */
void tune_run_ended(struct rocmd_tune *t);

#endif
