/*
 * The SDK manager's state, shared by sdk.c (scans and their results) and
 * sdk-watch.c (fs events, debounce, settling, suppression). Loop thread only,
 * except struct sdk_job, which a worker fills.
 */
#ifndef ROCMD_SDK_INTERNAL_H
#define ROCMD_SDK_INTERNAL_H

#include <stdint.h>

#include <uv.h>

#include "daemon/core/jobs.h"
#include "db/db-sdk.h"
#include "gpu.h"
#include "sdk-discover.h"
#include "sdk.h"

struct sdk_watch {
	uv_fs_event_t h;
	struct rocmd_sdk *m;
	char *host; /* the watched folder */
	uint64_t dev, ino; /* its identity: a folder replaced by rename needs a new watch */
	int wanted; /* still in the desired set (mark and sweep) */
	struct sdk_watch *next;
};

struct sdk_waiter {
	struct rocmd_pending *p;
	struct sdk_waiter *next;
};

struct sdk_suppress {
	int token;
	char *host;       /* prefix of suppressed paths */
	int flat;         /* only the folder's own entries, not those of its subfolders */
	int64_t until_ms; /* 0 while active; then the end of the grace period */
	struct sdk_suppress *next;
};

/* One scan, handed to a worker: the inputs are copies, the outputs belong to
 * the job until the loop thread applies them. */
struct sdk_job {
	struct rocmd_job base; /* first: the runner's view */
	struct rocmd_sdk *m;
	/* inputs */
	int deep; /* 0: quick (find, version, events); 1: inspect libraries and GPUs */
	struct rocmd_sdk_scan_opts opts;
	char **settle; /* host paths that must be quiet first, NULL-terminated */
	int64_t window_ms;
	int probe_timeout_ms;
	struct sdk_waiter *waiters;
	/* outputs */
	int64_t wait_more_ms; /* > 0: not settled; check again after this */
	int scanned;
	int err;
	struct rocmd_sdk_scan scan;
	struct rocmd_gpu_scan gpus;
	int64_t started_ms, elapsed_ms;
};

struct rocmd_sdk {
	struct rocmd_server *srv;
	struct rocmd_sdk_db *db;
	struct rocmd_hash_cache *cache;
	char *root; /* "" for the machine itself */
	int windows;
	char *probe;
	char **env; /* the discovery-relevant part of the daemon's environment */
	uv_timer_t debounce;
	uv_timer_t interval;
	int timers_open;
	struct rocmd_jobs jobs; /* the scans, one at a time (daemon/core/jobs.h) */
	struct sdk_job *job;    /* in flight, or NULL */
	int again;           /* another scan was asked for while one ran */
	int settle_pending;  /* the next scan first checks the dirty paths */
	char **dirty;        /* host paths changed since the last scan */
	size_t ndirty;
	struct sdk_waiter *waiters; /* for the next scan */
	struct sdk_watch *watches;
	size_t nwatches;
	struct sdk_suppress *suppress;
	int next_token;
	char **own;   /* host prefixes rocmd wrote under: quiet library changes */
	int64_t *own_ms; /* for each, when rocmd's writes there ended */
	char **fresh; /* SDKs the last quick scan added: their library is news */
	size_t nfresh;
	size_t nown;
	int stopping;
	uint64_t scans;       /* completed scans (quick passes) */
	uint64_t inspections; /* completed deep passes */
	uint64_t events_seen; /* fs events not suppressed */
	int64_t last_scan_ms, last_scan_elapsed_ms;
	char *last_problems;
	char last_hip_status[512];
	struct rocmd_gpu_scan last_gpus;
	char **last_watch; /* system paths the last scan asked to watch */
};

/* sdk-watch.c */
void rocmd_sdk_watch_update(struct rocmd_sdk *m, char *const *sys_paths);
void rocmd_sdk_watch_close_all(struct rocmd_sdk *m);
/* A scan ended; the job's settle paths are gone, new events may gather. */
int rocmd_sdk_is_suppressed(struct rocmd_sdk *m, const char *host_path);
/* Worker side: > 0 ms to wait when something under PATHS changed within WINDOW. */
int64_t rocmd_sdk_settle_check(char *const *paths, int64_t window_ms);

/* sdk.c */
void rocmd_sdk_schedule(struct rocmd_sdk *m, int settle);
int64_t rocmd_sdk_window_ms(struct rocmd_sdk *m);
void rocmd_sdk_free_strv(char **v);
int rocmd_sdk_env_wanted(const char *entry);
int rocmd_sdk_strv_add(char ***v, size_t *n, const char *entry);

/* sdk-unix.c, sdk-win.c: what differs by platform. */
extern const int rocmd_sdk_native_windows; /* the Windows layout rules always apply */
/* The variables discovery reads from the daemon's own environment
 * (rocmd_sdk_env_wanted), NULL-terminated; NULL when out of memory. */
char **rocmd_sdk_discovery_env(void);
/* The rocmd-hip-probe executable to run, newly allocated; NULL when out of memory. */
char *rocmd_sdk_find_probe(void);
/* The HIP runtime that comes with the display driver (on Windows
 * System32\amdhip64_7.dll, else amdhip64_6.dll; under ROOT when set): the one
 * to probe when no SDK has a runtime. Its host path goes into HOST, its path
 * as Windows names it into SYS (both LEN bytes). -1 when there is none
 * (Linux's runtime comes only with an SDK). */
int rocmd_sdk_driver_runtime(const char *root, char *host, char *sys, size_t len);

/* sdk-own.c: rocmd's own writes and the installs found since the last deep pass. */
int sdk_is_own(struct rocmd_sdk *m, const char *dir);
int sdk_is_fresh(struct rocmd_sdk *m, const char *path);
void sdk_add_fresh(struct rocmd_sdk *m, const char *path);
void sdk_drop_fresh_inspected(struct rocmd_sdk *m, const struct rocmd_sdk_scan *scan);
void sdk_clear_fresh(struct rocmd_sdk *m);

#endif
