/*
 * Deploy inside the daemon: its state, owned by the server (srv->deploy),
 * the lib.* methods (status, deploy, verify, history, rollback), the targets
 * they act on, and the jobs that run the deploy engine (deploy.h) on the
 * daemon's job runner, one at a time.
 *
 * Targets: each present SDK's rocBLAS ("sdk-<sdk id>": its binary and its
 * library folder, as discovery found them in the AMD, distribution or Windows
 * layout), the application-private copies of config key deploy.app_targets
 * ("app-<name>") and an overlay per SDK ("overlay-<sdk id>": a library folder
 * under <state>/overlay that leaves the SDK untouched, for use through
 * ROCBLAS_TENSILE_LIBPATH).
 *
 * rocmd_deploy_svc_start runs the engine's start-up recovery (every journaled
 * transaction finished or undone, and the database brought in line with what
 * is on disk) before the daemon serves anything. Auto-sync (deploy-sync.c)
 * uses the view, match and queue functions at the end of this header when
 * discovery sees an SDK added, upgraded or its library overwritten.
 *
 * The files: deploy-targets.c (resolving targets, GPUs, matching a package),
 * deploy-jobs.c (the jobs: file lists, who holds the GPU, the engine, the
 * smoke test, recording the outcome), deploy-recover.c (start-up recovery,
 * automatic rollback), deploy-methods.c (the methods), deploy-service.c
 * (start, stop, auto-sync's view). One source serves Linux and Windows; the
 * platform part is in deploy-jobs-unix.c / deploy-jobs-win.c
 * (deploy-jobs-os.h), gpu-users-*.c and common/spawn-*.c.
 */
#ifndef ROCMD_DEPLOY_SERVICE_H
#define ROCMD_DEPLOY_SERVICE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/core/jobs.h"
#include "daemon/core/methods.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

struct rocmd_server;
struct rocmd_deploy_db;
struct rocmd_pkg_db;

struct rocmd_deploy_service {
	struct rocmd_server *srv;
	struct rocmd_deploy_db *db;
	struct rocmd_pkg_db *pdb;
	char root[PATH_MAX];  /* --root sysroot, "" none */
	char smoke[PATH_MAX]; /* the smoke test program, "" none */
	char store[PATH_MAX]; /* the package store's folder */
	struct rocmd_jobs jobs;
	/* A deploy's outcome the database could not record (a full disk): the
	 * timer brings the database in line with current.json every
	 * DEPLOY_RECORD_RETRY_S until it can (deploy-recover.c). */
	int unrecorded;
	uv_timer_t record_timer;
	/* The last deploy event an admin marked seen (lib.ack): the problems
	 * listed are those after it (deploy-said.c). */
	int64_t seen;
};

/* An event of KIND, logged at LEVEL (a rocmd_log_level) too (deploy-said.c). */
void deploy_say(struct rocmd_server *srv, int level, const char *kind, cJSON *detail,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

extern const struct rocmd_method rocmd_methods_lib[];
/* doctor.run (doctor.c). */
extern const struct rocmd_method rocmd_methods_doctor[];
extern const struct rocmd_engine_ops rocmd_deploy_engine;

struct rocmd_deploy_svc_opts {
	const char *root;  /* --root sysroot, or NULL */
	const char *smoke; /* rocmd-rocblas-smoke; NULL: beside rocmd, else libexec */
};

/* Opens the deploy tables and recovers interrupted transactions; WHY says
 * what failed. Call before the daemon listens. */
int rocmd_deploy_svc_start(struct rocmd_server *srv, const struct rocmd_deploy_svc_opts *o,
                           struct rocmd_deploy_service **out, char *why, size_t whylen);

/* For auto-sync (deploy-sync.c), on the loop thread. */
struct rocmd_deploy_sdk_view {
	int64_t target_id;         /* 0: never deployed to */
	int64_t live_package_id;   /* 0: the originals are in place */
	char live_fingerprint[72]; /* what rocmd deployed ("" unknown) */
	char sdk_fingerprint[72];  /* what discovery sees now ("" unknown) */
	char sdk_version[32];
	char sdk_path[512];
	/* hipBLASLt's folder: what rocmd deployed there (current.json; "" when
	 * it holds none of rocmd's) and what discovery sees now ("" unknown or
	 * gone), and the folder ("" none). */
	char live_lt_fingerprint[72];
	char lt_fingerprint[72];
	char lt_path[512];
	/* The live package carries a hipBLASLt folder: asked only where none of
	 * its hipBLASLt files is in place (0 otherwise, and for an overlay). */
	int live_pkg_has_lt;
	int queued; /* a job for this SDK's target is queued or running */
	/* Served by its overlay (pip or dpkg owns the SDK's copy): the SDK's own
	 * files changing is no drift of what rocmd deployed. */
	int overlay;
};
/* What SDK SDK_ID's target holds; ROCMD_ENOTFOUND when the SDK is not present. */
int rocmd_deploy_svc_sdk_view(struct rocmd_deploy_service *ds, int64_t sdk_id,
                              struct rocmd_deploy_sdk_view *out);
/* The package matching SDK SDK_ID and this machine's GPUs: *PKG_ID, and its
 * name in NAME; ROCMD_ENOTFOUND with WHY when none matches or no GPU is known. */
int rocmd_deploy_svc_match_sdk(struct rocmd_deploy_service *ds, int64_t sdk_id, int64_t *pkg_id,
                               char *name, size_t namelen, char *why, size_t whylen);
/* What a package for SDK SDK_ID must fit, as matching asks it: the SDK's
 * version, the target's platform and the first GPU's arch (each NUL-ended,
 * 32 bytes); ROCMD_ENOTFOUND with WHY when the SDK, its version or a GPU is
 * not known. */
int rocmd_deploy_svc_sdk_wants(struct rocmd_deploy_service *ds, int64_t sdk_id, char *version,
                               char *platform, char *arch, char *why, size_t whylen);
/* Queues a deploy of package PKG_ID to SDK SDK_ID's own rocBLAS, nobody
 * waiting on it; REASON is recorded ("sync", "drift"). */
int rocmd_deploy_svc_queue_sdk(struct rocmd_deploy_service *ds, int64_t sdk_id, int64_t pkg_id,
                               const char *reason, char *why, size_t whylen);

/* An application's private copy (deploy.app_targets) as the tuner sees it. */
struct rocmd_deploy_app_view {
	const char *name;        /* the deploy target's name, "app-NAME" */
	const char *host_bin;    /* its rocBLAS binary, host path ("" none found) */
	const char *sys_bin;     /* the same, as the application sees it */
	const char *host_lib;    /* its rocBLAS library folder, host path */
	const char *sdk_version; /* the SDK it was built for */
	int windows;             /* a Windows application's folder */
};
/* Calls CB for each entry of deploy.app_targets that resolves, in order;
 * stops at CB's first non-zero return, which it returns. */
int rocmd_deploy_svc_apps(struct rocmd_deploy_service *ds,
                          int (*cb)(const struct rocmd_deploy_app_view *a, void *ctx), void *ctx);

#endif
