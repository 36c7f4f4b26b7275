/*
 * Deploy's rows (migration 6): table target (each place a rocBLAS lives that
 * rocmd manages: an SDK's, an application's private copy, rocmd's overlay
 * folder), deployment (each deploy to a target; at most one per target is
 * 'live', the others are history), backup (the vendor's originals of a
 * target, recorded once and never replaced: invariant I1) and deploy_history
 * (every action on a target with its outcome). The files themselves are the
 * deploy engine's (daemon/deploy.h); these rows say what rocmd did and what it
 * believes is in place. Works on the daemon's own connection
 * (rocmd_deploy_db_attach); only the loop thread uses it. Each write that
 * touches more than one row is one BEGIN IMMEDIATE transaction.
 */
#ifndef ROCMD_DB_DEPLOY_H
#define ROCMD_DB_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

struct rocmd_db;
struct rocmd_deploy_db;

/* A target with its live deployment and its backup; strings may be NULL
 * where the column is. */
struct rocmd_db_target {
	int64_t id;
	const char *kind; /* "sdk", "app", "overlay" */
	const char *name; /* unique, the engine's name too: "sdk-3", "app-ollama", "overlay-3" */
	int64_t sdk_id;   /* 0: none */
	const char *platform;     /* "windows", "linux" */
	const char *sdk_version;  /* the SDK (generation) its rocBLAS belongs to */
	const char *binary_path;  /* system path of rocblas.dll / librocblas.so.N, or NULL */
	const char *library_path; /* system path of the Tensile library folder */
	int64_t created_ms, updated_ms;
	/* live deployment (live_id 0: none, the originals are in place) */
	int64_t live_id, live_package_id;
	const char *live_fingerprint;
	int64_t live_finished_ms;
	/* backup of the originals (backup_path NULL: none yet) */
	const char *backup_path;
	const char *backup_fingerprint;
	const char *backup_adopted; /* the manual backup it was adopted from, or NULL */
	int64_t backup_nfiles, backup_total_size, backup_created_ms;
};

/* A deployment row. */
struct rocmd_db_deployment {
	int64_t id;
	int64_t target_id;
	int64_t package_id; /* 0: none (a rollback to the originals has none, or the
	                     * package was removed from the store since) */
	const char *package_name, *package_digest; /* kept after pkg rm; NULL: none */
	const char *state;   /* "live", "superseded", "rolled_back", "failed" */
	const char *reason;  /* "user", "sync", "drift", "rollback", "recover" */
	const char *fingerprint;
	int64_t started_ms, finished_ms, ended_ms;
	const char *detail; /* JSON or NULL */
};

struct rocmd_db_history {
	int64_t id;
	int64_t target_id;
	int64_t deployment_id; /* 0: none */
	int64_t time_ms;
	const char *action;  /* deploy, verify, rollback, drift, recover, backup */
	const char *outcome; /* ok, failed, refused, reported */
	const char *message;
	const char *detail; /* JSON or NULL */
	/* Read only (rocmd_deploy_db_history): the deployment's package (id 0
	 * once removed; name and digest NULL without a deployment) and reason. */
	int64_t package_id;
	const char *package_name, *package_digest, *package_version, *reason;
};

int rocmd_deploy_db_attach(struct rocmd_db *main, struct rocmd_deploy_db **out);
/* Frees the accessor; the connection stays with MAIN. NULL is fine. */
void rocmd_deploy_db_detach(struct rocmd_deploy_db *db);
const char *rocmd_deploy_db_errmsg(struct rocmd_deploy_db *db);

/* Inserts the target named T->name, or updates its paths, SDK and version;
 * *ID gets its id. */
int rocmd_deploy_db_target_put(struct rocmd_deploy_db *db, const struct rocmd_db_target *t,
                               int64_t now, int64_t *id);
/* Calls CB for every target by id (ID 0 and NAME NULL), or the one with ID or
 * NAME (ROCMD_ENOTFOUND when none). Strings live during the call. */
int rocmd_deploy_db_targets(struct rocmd_deploy_db *db, int64_t id, const char *name,
                            int (*cb)(const struct rocmd_db_target *t, void *ctx), void *ctx);

/*
 * Records that D (state "live", or "failed") is now what the target holds or
 * tried to hold: a live D ends the current live deployment, which becomes
 * OLD_STATE ("superseded" or "rolled_back"); then D is added, with a history
 * row (ACTION, OUTCOME, MESSAGE), all in one transaction. *ID gets D's id.
 * A full disk fails its commit (ROCMD_ENOSPACE, nothing written); failpoint
 * "db.deploy.commit" does the same, here and in rocmd_deploy_db_end_live.
 */
int rocmd_deploy_db_record(struct rocmd_deploy_db *db, const struct rocmd_db_deployment *d,
                           const char *old_state, const char *action, const char *outcome,
                           const char *message, int64_t *id);
/* Ends target TARGET_ID's live deployment as rolled back (the originals are
 * in place again) and adds the history row, in one transaction;
 * ROCMD_ENOTFOUND when nothing was live. */
int rocmd_deploy_db_end_live(struct rocmd_deploy_db *db, int64_t target_id, int64_t now,
                             const char *message, const char *detail);
/* Sets the fingerprint of deployment ID (as the next scan saw it). */
int rocmd_deploy_db_set_fingerprint(struct rocmd_deploy_db *db, int64_t id,
                                    const char *fingerprint);
/* Calls CB for target TARGET_ID's deployments, newest first, at most LIMIT
 * (0 all). */
int rocmd_deploy_db_deployments(struct rocmd_deploy_db *db, int64_t target_id, int64_t limit,
                                int (*cb)(const struct rocmd_db_deployment *d, void *ctx),
                                void *ctx);

/* Records the backup of target TARGET_ID's originals; ROCMD_EEXISTS when one
 * is recorded (it is never replaced: I1). */
int rocmd_deploy_db_backup_put(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                               const char *fingerprint, int64_t nfiles, int64_t total_size,
                               const char *adopted, int64_t now);

/* Points target TARGET_ID's backup row at a new generation of originals (an
 * SDK update brought them; the engine kept the earlier one as backup.<N>, and
 * a history row says so). ROCMD_ENOTFOUND when no backup is recorded. */
int rocmd_deploy_db_backup_renew(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                                 const char *fingerprint, int64_t nfiles, int64_t total_size,
                                 int64_t now);

/* Removes target TARGET_ID with its deployments, backup row and history, in
 * one transaction (lib.forget: its SDK is gone). */
int rocmd_deploy_db_target_forget(struct rocmd_deploy_db *db, int64_t target_id);

/* Adds one history row; DETAIL (JSON) may be NULL. *ID (may be NULL) gets it. */
int rocmd_deploy_db_history_add(struct rocmd_deploy_db *db, const struct rocmd_db_history *h,
                                int64_t *id);
/* Calls CB for history rows of TARGET_ID (0: every target) newest first,
 * older than BEFORE_ID (0: from the newest), at most LIMIT (0 all). */
int rocmd_deploy_db_history(struct rocmd_deploy_db *db, int64_t target_id, int64_t before_id,
                            int64_t limit, int (*cb)(const struct rocmd_db_history *h, void *ctx),
                            void *ctx);

#endif
