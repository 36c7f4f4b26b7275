/*
 * Deploy inside the daemon: the lib.* methods (status, deploy, verify,
 * history, rollback), the targets they act on, and the job queue that runs
 * the deploy engine (deploy.h) on libuv's thread pool, one job at a time.
 *
 * Targets: each present SDK's rocBLAS ("sdk-<sdk id>": its binary and its
 * library folder, as discovery found them in the AMD, distribution or Windows
 * layout), the application-private copies of config key deploy.app_targets
 * ("app-<name>") and an overlay per SDK ("overlay-<sdk id>": a library folder
 * under <state>/overlay that leaves the SDK untouched, for use through
 * ROCBLAS_TENSILE_LIBPATH).
 *
 * rocmd_lib_start runs the engine's start-up recovery (every journaled
 * transaction finished or undone, and the database brought in line with what
 * is on disk) before the daemon serves anything. Auto-sync (deploy-sync.c)
 * uses the view, match and queue functions at the end of this header when
 * discovery sees an SDK added, upgraded or its library overwritten.
 *
 * One source serves Linux and Windows; the platform part is in
 * deploy-jobs-unix.c / deploy-jobs-win.c (deploy-jobs-os.h: where the smoke
 * test program is, binary symlinks), gpu-users-*.c (who holds the GPU or the
 * files: KFD and /proc; the Restart Manager and module lists) and child-*.c
 * (the smoke test's process: posix_spawn; CreateProcessW in a job object).
 */
#ifndef ROCMD_DEPLOY_METHODS_H
#define ROCMD_DEPLOY_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/core/methods.h"

struct rocmd_server;

extern const struct rocmd_method rocmd_methods_lib[];

struct rocmd_lib_start_opts {
	const char *root; /* --root sysroot, or NULL */
	const char *smoke; /* rocmd-rocblas-smoke; NULL: beside rocmd, else libexec */
};

/* Opens the deploy tables and recovers interrupted transactions; WHY says
 * what failed. Call before the daemon listens. */
int rocmd_lib_start(struct rocmd_server *srv, const struct rocmd_lib_start_opts *o, char *why,
                    size_t whylen);
/* Closes the timers and drops queued jobs (their clients get an error); the
 * loop must have ended. Safe when never started. */
void rocmd_lib_stop(void);

/* For auto-sync (deploy-sync.c), on the loop thread. */
struct rocmd_lib_sdk_view {
	int64_t target_id;       /* 0: never deployed to */
	int64_t live_package_id; /* 0: the originals are in place */
	char live_fingerprint[72]; /* what rocmd deployed ("" unknown) */
	char sdk_fingerprint[72];  /* what discovery sees now ("" unknown) */
	char sdk_version[32];
	char sdk_path[512];
	int queued; /* a job for this SDK's target is queued or running */
};
/* What SDK SDK_ID's target holds; ROCMD_ENOTFOUND when the SDK is not present. */
int rocmd_lib_sdk_view(int64_t sdk_id, struct rocmd_lib_sdk_view *out);
/* The package matching SDK SDK_ID and this machine's GPUs: *PKG_ID, and its
 * name in NAME; ROCMD_ENOTFOUND with WHY when none matches or no GPU is known. */
int rocmd_lib_match_sdk(int64_t sdk_id, int64_t *pkg_id, char *name, size_t namelen, char *why,
                        size_t whylen);
/* Queues a deploy of package PKG_ID to SDK SDK_ID's own rocBLAS, nobody
 * waiting on it; REASON is recorded ("sync", "drift"). */
int rocmd_lib_queue_sdk_deploy(int64_t sdk_id, int64_t pkg_id, const char *reason, char *why,
                               size_t whylen);

#endif
