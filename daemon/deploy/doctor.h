/*
 * rocmctl doctor inside the daemon (doctor.run, docs/PROTOCOL.md): a table
 * of small checks, each looking for one cause of the failures users meet
 * (a package for another SDK, an SDK upgraded since the deploy, a GPU's arch
 * missing, a damaged backup, stale files, the caller's environment, programs
 * still running the replaced library), each finding with its evidence and
 * its fix. doctor.c gathers what the checks read of the database, runs the
 * checks that read files on the deploy queue's worker and applies the safe
 * fixes through the deploy jobs (deploy-jobs.c); doctor-checks.c holds the
 * checks of targets, doctor-env.c those of the caller's environment and
 * doctor-maps-unix.c the scan of running programs.
 */
#ifndef ROCMD_DOCTOR_H
#define ROCMD_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "deploy-jobs.h"

#define DOCTOR_TARGETS_MAX 32
#define DOCTOR_GPUS_MAX 8

enum doctor_severity { DOCTOR_INFO, DOCTOR_WARNING, DOCTOR_ERROR };

/* What --fix can do about a finding: nothing, deploy the package that
 * matches the target now (after an SDK upgrade, for a lacking arch), or
 * deploy the live package again (the whole folder replaced: stale files
 * gone). Each goes through the deploy jobs. */
enum doctor_fix { DOCTOR_FIX_NONE, DOCTOR_FIX_MATCHING, DOCTOR_FIX_LIVE };

/* One target and what the checks read of it. */
struct doctor_target {
	struct deploy_tgt t;
	struct deploy_row row;
	/* the live package (row.live_id != 0): its name, SDK and archs */
	char pkg_name[256], pkg_sdk[32], pkg_archs[512];
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
