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
#include "db/db-tune-override.h"
#include "db/db-tune-queue.h"
#include "idle.h"
#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/tune.h"
#include "tune-sched.h"

#define LAT_KEEP 4096 /* preemption latencies kept for the status */
#define TUNE_FENCES 16            /* targets whose library is being replaced */
#define TUNE_FENCE_MS (30 * 60000) /* the longest a fence holds without a lib.* event */

/* What the worker is asked to do and what it found. */
struct run {
	int probe; /* 1: only open the backend to learn the device */
	char backend[16];
	struct rocmd_tune_job job;
	/* results */
	int rc;
	char why[512];
	char passed[512]; /* the probe: the backends it passed over, "hip: <why>; ..." */
	struct backend_device_info dev;
	struct tune_summary sum;
	uint64_t stopped_ns;
	char hash[17];        /* the kernel source's */
	char state_dir[1024]; /* where the tuned library goes */
	char lib_why[256];    /* the library write's outcome */
	int lib_generation;
	int driver_changed; /* the device's driver is not the job's: not run */
	/* A vendor job (job.target set): the library, as the target has it. */
	char library[512];
	char tensile_dir[512];
	char sysroot[256];
};

/* A vendor library rocmd tunes for a deploy target (tune-vendor.c). */
struct tune_target {
	char name[64];          /* "sdk-3", "lib-rocblas-1" */
	char kind[16];          /* "rocblas", "hipblaslt", "cublaslt" */
	char library[512];     /* the library file, a host path (under --root) */
	char sys_library[512]; /* the same as programs name it */
	char tensile_dir[512]; /* its solution tables when not beside it; "" */
	char sdk_version[64];   /* the SDK's version, "" for a configured one */
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
	struct rocmd_tune_override_db *odb; /* the vendor overrides written */
	char root[1024];                    /* --root, "" for / */
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
	char passed[512]; /* the backends the probe passed over, with why (run.passed) */
	struct backend_device_info dev;
	char sdk[64];
	char hash[17]; /* the kernel source's, from the probe */
	struct sw_change change;
	/* Targets a deploy is replacing the library of (rocmd_tune_withdraw_target):
	 * none of their jobs starts until a lib.* event says the change is over. */
	struct {
		char target[64];
		int64_t until_ms;
	} fence[TUNE_FENCES];
	int nfence;

	/* control */
	int forced; /* `tune start`: ignore the idle policy */
	int last_vendor; /* the last job started was a vendor library's (job_waiting) */
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
	/* The worker's (one run at a time): the key of the tuned library last
	 * written, and the last vendor-solution results of a device of the same
	 * arch, whose winners that library takes where they are faster. */
	struct tune_key lib_key;
	int have_lib_key;
	struct tune_key vendor_key;
	char vendor_name[16];
	char vendor_sha[65];
	int have_vendor;
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

/* ---- tune-vendor.c ---- */

struct vendor_shapes;
/* Calls CB for each vendor target of this machine; CB's non-zero return
 * stops the walk. */
int tune_vendor_targets(struct rocmd_tune *t, int (*cb)(const struct tune_target *tg, void *ctx),
                        void *ctx);
/* The target NAME (of library KIND when not NULL); ROCMD_ENOTFOUND. */
int tune_vendor_target_find(struct rocmd_tune *t, const char *name, const char *kind,
                            struct tune_target *out);
/* Queues problem P for target TG; CALLS and MS (0: unknown) order the queue. */
int tune_vendor_queue(struct rocmd_tune *t, const struct tune_target *tg,
                      const struct gemm_problem *p, int64_t calls, double ms, const char *source,
                      const char *detail, int64_t budget, int *created);
/* The built-in LLM shapes for every target (tune.families). */
void tune_vendor_queue_families(struct rocmd_tune *t);
/* tune.add_shapes: each shape for every target of its library. */
/* The shapes of S that librocmd-gemm ran (library "rocmd-gemm") queued as
 * jobs of rocmd's own kernels, with SOURCE, their calls and DETAIL: *QUEUED
 * new, *EXISTING already queued. */
int tune_add_own_shapes(struct rocmd_tune *t, const struct vendor_shapes *s, const char *source,
                        const char *detail, int *queued, int *existing, char *why, size_t whylen);
int tune_vendor_add_shapes(struct rocmd_tune *t, const struct vendor_shapes *s, const char *source,
                           const char *detail, int *queued, int *existing, int *targets);
/* A job's problem with its layout (leading dimensions, strides, alpha, beta). */
int tune_vendor_job_problem(const struct rocmd_tune_job *j, struct gemm_problem *p);

/* ---- tune-override.c ---- */

/* Whether vendor library KIND reads an override file programs load with it
 * (rocBLAS, hipBLASLt); cuBLASLt's winners reach only librocmd-gemm. */
int tune_override_reaches_programs(const char *kind);

/* Writes the override file of TARGET's library KIND again from the jobs done
 * on the library it holds now, and makes it visible (or not). */
void tune_override_refresh(struct rocmd_tune *t, const char *target, const char *kind);
/* The same after a vendor job, for the library and device T->run opened. */
void tune_override_after_job(struct rocmd_tune *t);
/* Loop thread, as a vendor job's evaluator has opened: the job's device and
 * library recorded; a library or driver other than the one the target's
 * override was measured on withdraws it and makes its jobs stale. */
void tune_vendor_opened(struct rocmd_tune *t);
/* Withdraws the overrides of TARGET (KIND NULL: both libraries): the file
 * emptied first, then the environment, then the row, as STATE ("withdrawn" or
 * "off") with REASON. 0, or the first error. */
int tune_override_withdraw(struct rocmd_tune *t, const char *target, const char *kind,
                           const char *state, const char *reason);
/* At start and after an SDK event: every override checked against the
 * library it names; one whose library changed is withdrawn and its jobs go
 * stale with seeded re-tunes. */
void tune_override_recover(struct rocmd_tune *t);
/* Whether TARGET's library is being replaced (a fence holds). */
int tune_fenced(struct rocmd_tune *t, const char *target);
/* The machine's environment from the rows (which override is live). */
int tune_override_env_sync(struct rocmd_tune *t);
/* Marks stale TARGET's KIND jobs not run on LIB_DIGEST and DRIVER (NULL: every
 * one) and queues their seeded re-tunes; the count. */
int tune_vendor_stale(struct rocmd_tune *t, const char *target, const char *kind,
                      const char *lib_digest, const char *driver, const char *why);

/* ---- tune-sched.c ---- */

/* The scheduler's one step (see tune-sched.c). */
void tune_schedule(struct rocmd_tune *t);
/* Stops the running job now. */
void tune_preempt(struct rocmd_tune *t, const char *reason, uint64_t signal_ns, int64_t event_us);
void tune_job_fill_device(const struct rocmd_tune *t, struct rocmd_tune_job *j);
/* The run has returned: record it, then decide again. */
void tune_run_ended(struct rocmd_tune *t);

#endif
