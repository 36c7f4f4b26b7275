/*
 * rocmctl doctor inside the daemon (doctor.run, docs/PROTOCOL.md): a table
 * of small checks, each looking for one cause of the failures users meet
 * (a package for another SDK, an SDK upgraded since the deploy, a GPU's arch
 * missing, a damaged backup, stale files, the caller's environment, programs
 * still running the replaced library, a HIP runtime older than the SDK, a
 * package or driver a catalogue marks bad, an override that is not for the
 * library there now), each finding with its evidence and its fix. doctor.c gathers what the checks
 * read of the database, runs the checks that read files on the deploy queue's worker and applies
 * the safe fixes through the deploy jobs (deploy-jobs.c); doctor-checks.c holds the checks of
 * targets, doctor-env.c those of the caller's environment, doctor-maps-unix.c the scan of running
 * programs, doctor-runtime.c the HIP runtime against the SDK, doctor-feeds.c what the feeds'
 * catalogues mark bad and doctor-override.c the tuned overrides programs are pointed at.
 */
#ifndef ROCMD_DOCTOR_H
#define ROCMD_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "daemon/tune/tune-sched.h"
#include "deploy-jobs.h"

#define DOCTOR_TARGETS_MAX 32
#define DOCTOR_GPUS_MAX 8

enum doctor_severity { DOCTOR_INFO, DOCTOR_WARNING, DOCTOR_ERROR };

/* What --fix can do about a finding: nothing, deploy the package that
 * matches the target now (after an SDK upgrade, for a lacking arch), or
 * deploy the live package again (the whole folder replaced: stale files
 * gone), each through the deploy jobs; or run the overrides' recovery
 * (rocmd_tune_override_recheck: a stale override of rocmd's withdrawn, a
 * missing file written again, the machine's environment made to agree). */
enum doctor_fix { DOCTOR_FIX_NONE, DOCTOR_FIX_MATCHING, DOCTOR_FIX_LIVE, DOCTOR_FIX_OVERRIDE };

/* One target and what the checks read of it. */
struct doctor_target {
	struct deploy_tgt t;
	struct deploy_row row;
	/* the live package (row.live_id != 0): its name, SDK and archs */
	char pkg_name[256], pkg_sdk[32], pkg_archs[512];
	char pkg_source[1024]; /* the path or URL it was imported from */
	/* the SDK's version when the live deploy ran ("": not recorded) */
	char deployed_sdk[32];
	int originals_changed; /* an SDK update replaced what rocmd deployed */
	/* with ORIGINALS_CHANGED: every file rocmd deployed there that is not
	 * the originals' (deploy_ours_load) */
	struct rocmd_deploy_files ours;
	/* the package that matches now (0: none, MATCH_WHY says why) */
	int64_t match_pkg;
	char match_name[256], match_why[1024];
	char overlay_lib[PATH_MAX]; /* its overlay's library folder (system path) */
	int fix_queued;             /* one redeploy per target */
	/* an SDK target's overlay with a live deploy (NULL: none), gathered
	 * as a target of its own but never checked as one */
	struct doctor_target *overlay;
};

struct doctor_gpu {
	char arch[32], name[128];
	int igpu;
	int node;  /* KFD node: HIP's device order; -1 unknown */
	int order; /* as the database lists them */
};

/* The caller's environment, as rocmctl sent it (unset: NULL). */
struct doctor_env {
	char platform[8]; /* the caller's: "linux" or "windows" */
	char *hsa_override, *hip_visible, *tensile_libpath;
	char *gemm_override, *hipblaslt_override; /* the two override variables */
};

struct doctor {
	struct rocmd_job base; /* first: the job runner's view */
	struct rocmd_deploy_service *ds;
	int fix;
	struct doctor_target *tg;
	size_t ntg;
	struct doctor_gpu gpus[DOCTOR_GPUS_MAX];
	int ngpus;
	struct doctor_env env;
	char driver[64]; /* the amdgpu driver's version ("" unknown: rocmd_sdk_driver_version) */
	/* the HIP runtime the GPUs were probed with (rocmd_sdk_hip_runtime) */
	char hip_runtime[PATH_MAX];
	int hip_runtime_version, hip_from_driver;
	struct rocmd_tune_override_view *ov; /* rocmd's overrides (rocmd_tune_override_views) */
	int overrides_rechecked;             /* --fix ran the recovery */
	size_t nov;
	cJSON *findings; /* the reply's array */
};

/* A check: of each target (TARGET set) or of the machine and the caller
 * (GLOBAL set). WORKER: it reads or hashes files, so it runs on the deploy
 * queue's worker thread; else on the loop thread (it reads the database). */
struct doctor_check {
	const char *id;
	int worker;
	void (*target)(struct doctor *d, struct doctor_target *dt);
	void (*global)(struct doctor *d);
};

extern const struct doctor_check doctor_checks_targets[];
extern const struct doctor_check doctor_checks_env[];
/* The matching package can replace what is in place: a fix (DOCTOR_FIX_*).
 * SAME: a deploy of the package in place again fixes it too (the SDK
 * changed under it). */
int doctor_matching_fix(const struct doctor_target *dt, int same);
/* The fix's words: the matching package when it is the fix, else OTHERWISE
 * and why no stored package fits. */
const char *doctor_matching_text(const struct doctor_target *dt, int same, char *buf, size_t len,
                                 const char *otherwise);
/* The amdgpu driver's version in words, saying how to see it when unknown. */
const char *doctor_driver_text(const struct doctor *d);
/* The HIP runtime the GPUs are served by against target DT's SDK (doctor-runtime.c). */
void doctor_check_runtime(struct doctor *d, struct doctor_target *dt);
/* Deployed packages and the driver against the feeds' catalogues (doctor-feeds.c). */
void doctor_check_known_bad(struct doctor *d);
/* The overrides the machine's and the caller's environment name (doctor-override.c). */
void doctor_check_overrides(struct doctor *d);
/* --fix of a finding of doctor_check_overrides (the done hook, loop thread):
 * the overrides' recovery, once, and what it left in finding F. */
void doctor_fix_override(struct doctor *d, cJSON *f);
#ifndef _WIN32
/* Programs with a target's replaced rocBLAS still mapped (doctor-maps-unix.c). */
void doctor_check_old_mapped(struct doctor *d, struct doctor_target *dt);
#endif

/*
 * Appends a finding of check ID: SEVERITY, target DT (NULL: none), the
 * explanation (printf format), the fix in words (NULL: none) and what --fix
 * can do (FIX). Returns its "evidence" object, for the check to fill.
 */
cJSON *doctor_add(struct doctor *d, const char *id, int severity, const struct doctor_target *dt,
                  int fix, const char *fix_text, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

#endif
