/*
 * What the files of deploy in the daemon share (see deploy-service.h): a
 * resolved target, a deploy job, and the functions each file offers the
 * others. Everything here runs on the loop thread except a job's work.
 */
#ifndef ROCMD_DEPLOY_JOBS_H
#define ROCMD_DEPLOY_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "deploy-service.h"
#include "deploy.h"

struct rocmd_conn;
struct rocmd_deploy_file;

/* A target resolved for a request: system paths as discovery or the
 * configuration name them, host paths where the files are (under --root). */
struct deploy_tgt {
	char name[ROCMD_DEPLOY_NAME_MAX + 1];
	char kind[8]; /* sdk, app, overlay */
	int64_t sdk_id;
	char sdk_path[PATH_MAX];
	char sdk_version[32];
	char platform[8];
	char sys_lib[PATH_MAX], sys_bin[PATH_MAX]; /* system paths; sys_bin "" none */
	char host_lib[PATH_MAX], host_bin[PATH_MAX];
	/* The tree the target belongs to, as a host path: the SDK's install
	 * folder, the application's folder, the state folder for an overlay.
	 * Nothing below it is followed (I4). */
	char host_root[PATH_MAX];
	int user_owned_ok;             /* deploy.allow_user_owned_targets */
	char host_hip[PATH_MAX];       /* the SDK's HIP runtime, for the smoke test; "" none */
	char host_smoke_bin[PATH_MAX]; /* the rocBLAS binary the smoke test loads */
	char sdk_fingerprint[72];
	int64_t sdk_fingerprint_ms; /* when discovery first saw that fingerprint */
	char sdk_archs[512];        /* the archs the library in place serves ("": unknown) */
	int windows;
	/* hipBLASLt's library beside the SDK's rocBLAS (discovery's last scan);
	 * "" none. An SDK target's is deployed with rocBLAS's when the package
	 * carries one (deploy_job.lt_state). */
	char sys_lt[PATH_MAX], host_lt[PATH_MAX];
	char lt_archs[512];      /* the archs it serves, as sdk_archs */
	char lt_fingerprint[72]; /* discovery's fingerprint of it ("" unknown) */
	int64_t lt_since_ms;     /* when discovery first read that fingerprint (0 unknown) */
	/* An overlay's own hipBLASLt folder (<state>/overlay/N/hipblaslt/library,
	 * a host path, named by HIPBLASLT_TENSILE_LIBPATH once it holds files);
	 * "" for other targets, and for an overlay of an SDK without hipBLASLt. */
	char ov_lt[PATH_MAX];
	/* Who owns the SDK's copy ("pip", "dpkg"; "" the user or the SDK's
	 * installer) and why the target is served by its overlay (deploy-checks.c). */
	char owner[8];
	char route_why[PATH_MAX + 256];
};

/* What the database says a target holds. */
struct deploy_row {
	int found;
	int64_t id, live_id, live_pkg, live_finished_ms;
	char live_fp[72];
	int has_backup;
};

/* The distinct archs of this machine's present GPUs. */
struct deploy_gpu_archs {
	char archs[8][32];
	int n;
};

enum deploy_job_type { JOB_DEPLOY, JOB_ROLLBACK, JOB_VERIFY, JOB_RECOVER };

/* What a deploy or rollback did to the target's hipBLASLt folder. */
enum deploy_lt_state {
	LT_LEFT = 0,  /* left as it is: no hipBLASLt in the package, none rocmd placed */
	LT_DEPLOYED,  /* the package's hipBLASLt folder replaced it, in the transaction */
	LT_RESTORED,  /* the originals put back (rocmd's earlier hipBLASLt files went) */
	LT_NO_BACKUP, /* left: the backup of the originals was made without it */
	LT_NO_TARGET, /* the package carries one, the target has no hipBLASLt folder */
	LT_EMPTIED,   /* an overlay's hipBLASLt folder emptied: the SDK's own serves again */
};

/* One target of a recover job (lib.recover) and what recovery did there. */
struct deploy_recover_item {
	char name[ROCMD_DEPLOY_NAME_MAX + 1];
	int rc;
	struct rocmd_deploy_recovery rec;
	char why[1024];
};

struct deploy_job {
	struct rocmd_job base; /* first: the runner's view; rc and why are the outcome */
	struct rocmd_deploy_service *ds;
	enum deploy_job_type type;
	struct deploy_tgt t;
	int64_t target_id;
	char reason[16];
	char to[16]; /* rollback: "original" or "previous" */
	int64_t pkg_id;
	char pkg_name[256];
	int pkg_has_lt; /* the package carries a hipBLASLt folder (pkg-ident.c) */
	/* ... and nothing else: rocBLAS's folder and binary stay as they are
	 * (the engine's keep_lib); FILES is empty. */
	int lt_only;
	/* Its files, paths relative to it (sorted), for the target's hipBLASLt
	 * folder; and the archs that folder must still serve after the swap:
	 * the GPUs' that the one in place serves. */
	struct rocmd_deploy_file *lt_files;
	size_t nlt_files;
	char lt_arch[512];
	int lt_state; /* enum deploy_lt_state: what the job did to hipBLASLt's folder */
	/* The backup of the originals lacks hipBLASLt's: the engine adds them
	 * first (deploy_backup_add_lt; the dry run says it will). */
	int lt_backup_first;
	char pkg_digest[72];
	/* The archs the library must serve after the swap: every GPU's,
	 * comma-separated ("" when the arch check was forced). */
	char arch[512];
	unsigned force; /* DEPLOY_CHECK_* the user overrode (--force) */
	int no_merge;   /* lib deploy --no-merge: the whole folder replaced */
	int accept_loss; /* lib deploy --no-merge -y: the GPUs' archs it drops accepted */
	/* The GPUs' archs a confirmed --no-merge deploy drops (comma-separated);
	 * verify reports them, it does not fail for them. */
	char lost[256];
	/* The merged library (deploy-merge.c): the GPUs' archs kept from the
	 * base, what the base is, the paths of its files that joined (sorted)
	 * and their bytes. */
	char merge_archs[256];
	char merge_from[128];
	char **mpaths;
	size_t nmpaths;
	uint64_t merge_bytes;
	int dry_run;    /* lib deploy --dry-run: prepared, answered, never run */
	int generation; /* rollback --to original: 0 the originals in use, N backup.<N> */
	int pruned;     /* older generations removed after this job made a new one */
	int older_gen;  /* verify: the newest older generation that is intact, 0 none */
	int backup_bad; /* verify: the backup in use is damaged (no automatic rollback) */
	struct rocmd_deploy_backup_check bcheck;
	struct deploy_gpu_archs gpus; /* verify: every GPU's arch asked of the library */
	int gpu_covered[8];
	int lt_checked;    /* hipBLASLt's folder was read by deploy_check_gpus */
	int lt_covered[8]; /* ... and serves each of J->gpus */
	/* the engine's request */
	struct rocmd_deploy_file *files;
	size_t nfiles;
	struct rocmd_deploy_file *binary;
	struct rocmd_deploy_files loaded; /* rollback to the originals */
	struct rocmd_deploy_files ours;   /* with NEW_ORIGINALS: never originals */
	char label[160];
	char fingerprint[72];
	unsigned flags;
	int remove_overlay; /* overlay back to "original": remove rocmd's own folder */
	struct deploy_recover_item *recover; /* JOB_RECOVER: its targets */
	size_t nrecover;
	int smoke_timeout_ms;
	int gpu_busy_defer;
	int suppress[3]; /* rocBLAS's folder, the binary's, hipBLASLt's */
	/* outcome */
	int deferred;
	struct rocmd_deploy_result res;
	struct rocmd_deploy_verify_report vrep;
	struct rocmd_deploy_backup_info binfo;
	char users[1024];
	/* In place and verified, but what the admin must still see to (a
	 * cleanup that failed, and recovery with it): said in the reply. */
	char warning[1536];
	char smoke[512];
	int smoke_state; /* 0 not run, 1 ok, 2 skipped, 3 failed */
	/* shared with the worker, under base.lock */
	char step[16];
	uint64_t bytes_done, bytes_total, files_done, files_total;
};

/* Formats / copies into a fixed buffer, cutting what does not fit (paths
 * are checked against PATH_MAX where it matters; messages may be cut). */
void deploy_fmt(char *dst, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
void deploy_copy(char *dst, size_t n, const char *src);
/* Whether host path HOST exists (not following a last symlink). */
int deploy_exists(const char *host);
/* The folder of system path P (Windows or POSIX separators) into OUT. */
void deploy_sys_dirname(const char *p, char *out, size_t n);

/* ---- deploy-targets.c ---- */

/* Resolves a "target" param: "sdk-N", "overlay-N", "app-NAME", an SDK's path
 * or id; with OVERLAY an SDK names its overlay. NULL: the only present SDK. */
int deploy_resolve_target(struct rocmd_deploy_service *ds, const char *spec, int overlay,
                          struct deploy_tgt *t, char *why, size_t whylen);
/* SDK SDK_ID's target (or its overlay). */
int deploy_sdk_target(struct rocmd_deploy_service *ds, int64_t sdk_id, int overlay,
                      struct deploy_tgt *t);
/* Application target NAME of deploy.app_targets; ROCMD_ENOTFOUND when none. */
int deploy_app_target(struct rocmd_deploy_service *ds, const char *name, struct deploy_tgt *t);
/* Calls FN for each application target of deploy.app_targets that resolves. */
int deploy_app_target_each(struct rocmd_deploy_service *ds,
                           void (*fn)(const struct deploy_tgt *t, void *ctx), void *ctx);
void deploy_target_engine(const struct deploy_tgt *t, struct rocmd_deploy_target *e);
int deploy_target_record(struct rocmd_deploy_service *ds, const struct deploy_tgt *t, int64_t *id);
void deploy_target_lookup(struct rocmd_deploy_service *ds, const char *name, struct deploy_row *r);
/* Whether an SDK update replaced what is at T since rocmd last wrote there. */
int deploy_originals_changed(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                             const struct deploy_row *row);
/* Whether an update replaced what is in T's hipBLASLt folder since rocmd
 * last wrote there (ROCMD_DEPLOY_NEW_LT_ORIGINALS). */
int deploy_lt_originals_changed(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                                const struct deploy_row *row);
void deploy_gpu_archs(struct rocmd_deploy_service *ds, struct deploy_gpu_archs *a);
/* The same as one comma-separated list ("gfx1030,gfx803"; "" none). */
void deploy_gpu_list(const struct deploy_gpu_archs *a, char *out, size_t n);
/* The package for target T and this machine's GPUs. */
int deploy_match_package(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                         int64_t *pkg_id, char *name, size_t namelen, char *arch, size_t archlen,
                         char *why, size_t whylen);
/* Orders deploy files by path (qsort, bsearch). */
int deploy_file_cmp(const void *a, const void *b);
/* The fingerprint discovery computes for a library folder holding FILES; a
 * symlink counts as the file it leads to (inside the list). */
void deploy_files_fingerprint(const struct rocmd_deploy_file *files, size_t n, int follow,
                              char out[72]);

/* The environment an overlay target is used with, into OUT:
 * "ROCBLAS_TENSILE_LIBPATH=<LIB>" while its rocBLAS folder LIB holds files,
 * and "HIPBLASLT_TENSILE_LIBPATH=<LT>" while its hipBLASLt folder LT (may be
 * NULL or "") does, separated by a space ("" when neither does: a package
 * of hipBLASLt's folder alone leaves rocBLAS the SDK's own, unnamed). */
void deploy_overlay_env(const char *lib, const char *lt, char *out, size_t n);
/* Whether folder DIR (NULL or "": none) holds anything. */
int deploy_dir_has_files(const char *dir);

/* ---- deploy-checks.c ---- */

/* The checks a package must pass for a target (deploy-checks.c). */
#define DEPLOY_CHECK_PLATFORM 1u
#define DEPLOY_CHECK_SDK 2u
#define DEPLOY_CHECK_BINARY 4u
#define DEPLOY_CHECK_ARCH 8u
/* Not a --force name: an arch the library in place serves that a --no-merge
 * deploy drops. Waived by the user's confirmation (lib.deploy's accept_loss,
 * rocmctl's -y or its question), in a dry run (which reports it) and by
 * forcing the arch check. */
#define DEPLOY_CHECK_LOSS 16u
/* Adds the check NAME ("sdk", "binary", "arch") to *BITS; ROCMD_EPARAMS with
 * WHY for an unknown name and for "platform", which is never forced. */
int deploy_check_parse(const char *name, unsigned *bits, char *why, size_t whylen);
/* 0 when package PKG_ID passes every check for target T and ARCHS (the
 * machine's GPUs' archs, comma-separated; NULL or "": no GPU known) but
 * those in FORCE; else ROCMD_EINVAL with WHY naming each failed check
 * (ROCMD_ENOTFOUND: no such package). With MERGE an arch the package lacks
 * passes when a merged library keeps it (the library in place serves it and
 * the rocBLAS binary in place after the deploy was built for it); those archs
 * go to MERGED (may be NULL). Without MERGE the archs the library in place
 * serves that the package lacks go to LOST (may be NULL), each a
 * DEPLOY_CHECK_LOSS failure. */
int deploy_check_package(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                         int64_t pkg_id, const char *arch, unsigned force, int merge, char *merged,
                         size_t mergedlen, char *lost, size_t lostlen, char *why, size_t whylen);
/* Worker, in lib verify: whether the deployed library serves each of
 * J->gpus (J->gpu_covered); one it does not fails the job (ROCMD_ECORRUPT)
 * unless the deploy forced the arch check. */
void deploy_check_gpus(struct deploy_job *j);
/*
 * Who owns target T's copy: pip when discovery found a RECORD listing it
 * (OWNER "pip", RECORD its system path), dpkg when a list in HOST_DPKG_INFO
 * (the host path of /var/lib/dpkg/info; NULL: none) names its library folder
 * or a file in it. Sets T->owner and T->route_why; a copy owned by either is
 * served through the overlay, never overwritten.
 */
void deploy_check_owner(struct deploy_tgt *t, const char *owner, const char *record,
                        const char *host_dpkg_info);
/* Whether comma-separated LIST names ARCH. */
int deploy_arch_listed(const char *list, const char *arch);
/* OUT: the archs library folder DIR serves now, read from its files
 * (comma-separated; "" when it cannot be read). */
void deploy_served_now(const char *dir, char *out, size_t n);
/* OUT: the archs of comma-separated ALL that MINUS does not name. */
void deploy_arch_minus(const char *all, const char *minus, char *out, size_t n);

/* ---- deploy-history.c ---- */

/* A package in place, as the history knows it; present 0: the originals. */
struct deploy_pkg_ref {
	int present;
	int64_t id; /* 0 once removed from the store (removed 1) */
	int removed;
	char name[256];
	char version[32];
};
/* One history row as a step: what was in place before and after it. */
struct deploy_step {
	int64_t hist_id, target_id, deployment_id;
	char action[16], outcome[16];
	int changed; /* a deploy or rollback that changed what is in place */
	struct deploy_pkg_ref from, to;
};
#define DEPLOY_STEPS_MAX 256
struct deploy_steps {
	struct deploy_step *v; /* newest first */
	size_t n, cap;
	/* for the target asked for: how many steps a rollback can walk back,
	 * and what --to previous restores (present 0: the originals) */
	size_t depth;
	struct deploy_pkg_ref previous;
};
/* Loads and replays the history of TARGET_ID (0: every target). */
int deploy_steps_load(struct rocmd_deploy_service *ds, int64_t target_id, struct deploy_steps *s);
const struct deploy_step *deploy_steps_find(const struct deploy_steps *s, int64_t hist_id);
void deploy_steps_free(struct deploy_steps *s);
/* The library files (path, hash) rocmd ever deployed at target NAME
 * (TARGET_ID) that are not the originals' as backed up: they never become
 * originals (rocmd_deploy_target.ours); hipBLASLt's in OUT's lt_files (.lt_ours).
 * A removed package's files are not known any more. */
int deploy_ours_load(struct rocmd_deploy_service *ds, const char *name, int64_t target_id,
                     struct rocmd_deploy_files *out);

/* ---- deploy-said.c ---- */

/* Reads the last event marked seen (start-up). */
void deploy_seen_load(struct rocmd_deploy_service *ds);
/* Appends the problems not seen yet (the newest 20) to ARRAY; how many there
 * are, or a negative error. */
int deploy_problems(struct rocmd_deploy_service *ds, cJSON *array);
/* The engine's status hook: the problems as notes. */
void deploy_status_notes(void *self, cJSON *notes);
int deploy_m_ack(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                 size_t whylen);

/* ---- deploy-backups.c ---- */

/* Worker: generations beyond deploy.keep_generations removed (J->pruned). */
void deploy_backups_prune(struct deploy_job *j);
/* Worker, in lib verify: the backup in use hashed again (J->bcheck); a
 * damaged one fails the job (ROCMD_ECORRUPT, J->backup_bad) naming the
 * newest older generation that is intact (J->older_gen). */
void deploy_backups_verify(struct deploy_job *j);
/* lib status's view of target NAME's generations and their disk use; NULL:
 * none. */
cJSON *deploy_backups_json(struct rocmd_deploy_service *ds, const char *name);
int deploy_m_forget(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why,
                    size_t whylen);

/* ---- deploy-merge.c ---- */

/* The archs (comma-separated, into ARCHS) of the rocBLAS binary that serves
 * target T after package PKG_ID is deployed: the package's (PKG_BINARY, its
 * path in the package, on PKG_PLATFORM) or the target's own; BIN says
 * which. ROCMD_ENOTFOUND with WHY when it names none. */
int deploy_merge_binary_archs(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                              int64_t pkg_id, const char *pkg_binary, const char *pkg_platform,
                              char *archs, size_t alen, char *bin, size_t binlen, char *why,
                              size_t whylen);
/* Adds the base's files for J->merge_archs to J's file list (J->mpaths,
 * J->merge_from); nothing without merge archs. */
int deploy_merge_build(struct deploy_job *j, char *why, size_t whylen);
/* Worker: hashes the joined files read from the target (J->base.why). */
int deploy_merge_hash(struct deploy_job *j);
/* Whether library path PATH of J comes from the base. */
int deploy_merge_has(const struct deploy_job *j, const char *path);
/* {"from", "archs", "files", "bytes"}, or NULL: not merged. */
cJSON *deploy_merge_json(const struct deploy_job *j);

/* ---- deploy-dryrun.c ---- */

/* What prepared job J would change (lib deploy --dry-run); changes nothing. */
cJSON *deploy_dry_run(struct deploy_job *j);

/* ---- deploy-jobs.c ---- */

struct deploy_job *deploy_job_new(struct rocmd_deploy_service *ds, enum deploy_job_type type);
void deploy_job_free(struct deploy_job *j);
/* Prepares J to deploy package PKG_ID (0: the matching one) to J->t. */
int deploy_job_prepare(struct deploy_job *j, int64_t pkg_id, char *why, size_t whylen);
/* Queues J with CONN's request waiting for it (ROCMD_METHOD_DEFERRED), or
 * with nobody waiting (CONN NULL: 0). */
int deploy_job_submit(struct deploy_job *j, struct rocmd_conn *conn);
/* Whether a job for target NAME is queued, running or deferred. */
int deploy_target_queued(struct rocmd_deploy_service *ds, const char *name);
/* Whether package PKG_ID carries a hipBLASLt folder (0 when it is not stored). */
int deploy_pkg_has_lt(struct rocmd_deploy_service *ds, int64_t pkg_id);

/* ---- deploy-jobs-lt.c ---- */

/*
 * Whether, and with what, REQ (its target, state folder and flags set)
 * replaces the target's hipBLASLt folder too, in the same transaction
 * (J->lt_state says which): the package's hipBLASLt folder where it carries
 * one; the originals where rocmd's hipBLASLt files are in place
 * (current.json names them) and the job brings none, as a rollback to the
 * originals does: they came with another package's rocBLAS, and left alone
 * they would serve beside a rocBLAS they were not deployed with; else
 * nothing. A backup made before the target had a hipBLASLt folder has no
 * originals of it: the engine adds them before it replaces the folder
 * (J->lt_backup_first), so that a rollback can always undo it. Reads the
 * state folder only (a dry run asks it too).
 */
void deploy_lt_choose(struct deploy_job *j, struct rocmd_deploy_request *req);
/* Worker thread: a package of hipBLASLt's folder alone keeps rocBLAS's
 * folder and binary (the engine records what they hold); ROCMD_EINVAL, with
 * the job's why, when nothing of hipBLASLt's would be deployed either. */
int deploy_lt_only_request(struct deploy_job *j, struct rocmd_deploy_request *req);
/* Worker thread: the job's fingerprint is that of the rocBLAS library left
 * in place (its own list is empty), as current.json records it. */
void deploy_lt_only_fingerprint(struct deploy_job *j);

/* ---- deploy-jobs-report.c ---- */

/* What a deploy or rollback did to hipBLASLt beside the target (J->lt_state),
 * said as "; hipBLASLt at ... <what>" ("" when there is nothing to say). */
void deploy_lt_note(const struct deploy_job *j, char *out, size_t outlen);
/* The checks FORCE (DEPLOY_CHECK_*) overrode, as R's "forced" array; nothing
 * when none. */
void deploy_forced_json(cJSON *r, unsigned force);
/* The result of deploy, rollback or verify job J. */
cJSON *deploy_result_json(const struct deploy_job *j);
/* lib.recover's result: what recovery did at each target. */
cJSON *deploy_recover_json(const struct deploy_job *j);

/* ---- deploy-recover.c ---- */

/* Start-up: finishes or undoes interrupted deploys, then brings the database
 * in line with what each target holds. */
int deploy_recover_all(struct rocmd_deploy_service *ds, char *why, size_t whylen);
/* Brings the database in line with what the engine says each known target
 * holds (current.json's label); the number of targets whose rows could not
 * be written (0: all in line). */
int deploy_reconcile_all(struct rocmd_deploy_service *ds);
/* lib.status's target object O (its "name" a target's) while a journal
 * stays (a recovery that failed): "interrupted" says the step and what the
 * target holds, and "deployed" what is on disk, not only what the database
 * recorded before the deploy. */
struct cJSON;
void deploy_status_interrupted(struct rocmd_deploy_service *ds, struct cJSON *o);
/* After a failed verification: back to the originals, unless an SDK update
 * made the files there the vendor's new ones. */
void deploy_queue_auto_rollback(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                                int64_t target_id, const char *why);

/* ---- deploy-service.c ---- */

/* How often the database is brought in line after it could not record a
 * deploy's outcome. */
#define DEPLOY_RECORD_RETRY_S 5
/* The database could not record what a target holds now: retry until it can. */
void deploy_unrecorded(struct rocmd_deploy_service *ds);

#endif
