/*
 * Deploy's rows on SQLite (see db-deploy.h), through the statement helper of
 * db-internal.h: each statement below is prepared on first use and kept
 * until detach.
 */
#include "db/db-deploy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "db/db-internal.h"

enum {
	Q_TARGET_PUT,
	Q_TARGETS,
	Q_HISTORY_ADD,
	Q_END_LIVE,
	Q_RECORD,
	Q_SET_FINGERPRINT,
	Q_DEPLOYMENTS,
	Q_BACKUP_PUT,
	Q_BACKUP_RENEW,
	Q_HISTORY,
	Q_FORGET_HISTORY,
	Q_FORGET_BACKUP,
	Q_FORGET_DEPLOYMENTS,
	Q_FORGET_TARGET,
	Q_COUNT_
};

static const char *const queries[Q_COUNT_] = {
    [Q_TARGET_PUT] = "INSERT INTO target (kind, name, sdk_id, platform, sdk_version, "
                     "binary_path, library_path, created_ms, updated_ms) VALUES (?1, ?2, ?3, "
                     "?4, ?5, ?6, ?7, ?8, ?8) ON CONFLICT (name) DO UPDATE SET kind = ?1, "
                     "sdk_id = ?3, platform = ?4, sdk_version = ?5, binary_path = ?6, "
                     "library_path = ?7, updated_ms = ?8 RETURNING id",
    [Q_TARGETS] = "SELECT t.id, t.kind, t.name, coalesce(t.sdk_id, 0), t.platform, "
                  "t.sdk_version, t.binary_path, t.library_path, t.created_ms, t.updated_ms, "
                  "coalesce(d.id, 0), coalesce(d.package_id, 0), d.fingerprint, "
                  "coalesce(d.finished_ms, 0), b.path, b.fingerprint, b.adopted, "
                  "coalesce(b.nfiles, 0), coalesce(b.total_size, 0), coalesce(b.created_ms, 0) "
                  "FROM target t LEFT JOIN deployment d ON d.target_id = t.id AND "
                  "d.state = 'live' LEFT JOIN backup b ON b.target_id = t.id "
                  "WHERE (?1 = 0 AND ?2 IS NULL) OR t.id = ?1 OR t.name = ?2 ORDER BY t.id",
    [Q_HISTORY_ADD] = "INSERT INTO deploy_history (target_id, deployment_id, time_ms, "
                      "action, outcome, message, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_END_LIVE] = "UPDATE deployment SET state = ?2, ended_ms = ?3 "
                   "WHERE target_id = ?1 AND state = 'live'",
    [Q_RECORD] = "INSERT INTO deployment (target_id, package_id, state, reason, fingerprint, "
                 "started_ms, finished_ms, ended_ms, detail, package_name, package_digest) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [Q_SET_FINGERPRINT] = "UPDATE deployment SET fingerprint = ?2 WHERE id = ?1",
    [Q_DEPLOYMENTS] = "SELECT id, target_id, coalesce(package_id, 0), state, reason, "
                      "fingerprint, started_ms, coalesce(finished_ms, 0), "
                      "coalesce(ended_ms, 0), detail, package_name, package_digest "
                      "FROM deployment WHERE target_id = ?1 ORDER BY id DESC LIMIT ?2",
    /* OR IGNORE plus changes(): an existing backup row is never touched. */
    [Q_BACKUP_PUT] = "INSERT OR IGNORE INTO backup (target_id, path, fingerprint, nfiles, "
                     "total_size, adopted, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_BACKUP_RENEW] = "UPDATE backup SET path = ?2, fingerprint = ?3, nfiles = ?4, "
                       "total_size = ?5, adopted = NULL, created_ms = ?6 WHERE target_id = ?1",
    [Q_FORGET_HISTORY] = "DELETE FROM deploy_history WHERE target_id = ?1",
    [Q_FORGET_BACKUP] = "DELETE FROM backup WHERE target_id = ?1",
    [Q_FORGET_DEPLOYMENTS] = "DELETE FROM deployment WHERE target_id = ?1",
    [Q_FORGET_TARGET] = "DELETE FROM target WHERE id = ?1",
    [Q_HISTORY] = "SELECT h.id, h.target_id, coalesce(h.deployment_id, 0), h.time_ms, "
                  "h.action, h.outcome, h.message, h.detail, coalesce(d.package_id, 0), "
                  "coalesce(d.package_name, p.name), coalesce(d.package_digest, p.digest), "
                  "coalesce(d.reason, json_extract(h.detail, '$.reason')), p.version_hint "
                  "FROM deploy_history h "
                  "LEFT JOIN deployment d ON d.id = h.deployment_id "
                  "LEFT JOIN package p ON p.id = d.package_id "
                  "WHERE (?1 = 0 OR h.target_id = ?1) AND (?2 = 0 OR h.id < ?2) "
                  "ORDER BY h.id DESC LIMIT ?3",
};

struct rocmd_deploy_db {
	struct db_conn c; /* first: the daemon's connection, borrowed */
};

DB_MODULE_DEFINE(struct rocmd_deploy_db, rocmd_deploy_db_attach, rocmd_deploy_db_detach,
                 rocmd_deploy_db_errmsg, queries, Q_COUNT_)

/* Runs S; ROCMD_ENOTFOUND (or NONE) when it changed no row. */
static int
exec_changed(struct rocmd_deploy_db *db, struct db_stmt *s, int none)
{
	int err = db_stmt_exec(s);

	return err == 0 && db_changes(&db->c) == 0 ? none : err;
}

int
rocmd_deploy_db_target_put(struct rocmd_deploy_db *db, const struct rocmd_db_target *t, int64_t now,
                           int64_t *id)
{
	struct db_stmt s;

	*id = 0;
	db_stmt_open(&s, &db->c, Q_TARGET_PUT);
	db_bind_text(&s, 1, t->kind);
	db_bind_text(&s, 2, t->name);
	db_bind_id(&s, 3, t->sdk_id);
	db_bind_text(&s, 4, t->platform);
	db_bind_text(&s, 5, t->sdk_version);
	db_bind_text(&s, 6, t->binary_path);
	db_bind_text(&s, 7, t->library_path);
	db_bind_int64(&s, 8, now);
	if (db_stmt_row(&s))
		*id = db_col_int64(&s, 0);
	return db_stmt_exec(&s);
}

int
rocmd_deploy_db_targets(struct rocmd_deploy_db *db, int64_t id, const char *name,
                        int (*cb)(const struct rocmd_db_target *t, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0, found = 0;

	db_stmt_open(&s, &db->c, Q_TARGETS);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, name);
	while (err == 0 && db_stmt_row(&s)) {
		struct rocmd_db_target t = {
		    .id = db_col_int64(&s, 0),
		    .kind = db_col_text(&s, 1),
		    .name = db_col_text(&s, 2),
		    .sdk_id = db_col_int64(&s, 3),
		    .platform = db_col_text(&s, 4),
		    .sdk_version = db_col_text(&s, 5),
		    .binary_path = db_col_text(&s, 6),
		    .library_path = db_col_text(&s, 7),
		    .created_ms = db_col_int64(&s, 8),
		    .updated_ms = db_col_int64(&s, 9),
		    .live_id = db_col_int64(&s, 10),
		    .live_package_id = db_col_int64(&s, 11),
		    .live_fingerprint = db_col_text(&s, 12),
		    .live_finished_ms = db_col_int64(&s, 13),
		    .backup_path = db_col_text(&s, 14),
		    .backup_fingerprint = db_col_text(&s, 15),
		    .backup_adopted = db_col_text(&s, 16),
		    .backup_nfiles = db_col_int64(&s, 17),
		    .backup_total_size = db_col_int64(&s, 18),
		    .backup_created_ms = db_col_int64(&s, 19),
		};
		found = 1;
		err = cb(&t, ctx);
	}
	err = db_stmt_end(&s, err);
	if (err == 0 && (id != 0 || name != NULL) && !found)
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_deploy_db_history_add(struct rocmd_deploy_db *db, const struct rocmd_db_history *h,
                            int64_t *id)
{
	struct db_stmt s;
	int err;

	if (id != NULL)
		*id = 0;
	db_stmt_open(&s, &db->c, Q_HISTORY_ADD);
	db_bind_int64(&s, 1, h->target_id);
	db_bind_id(&s, 2, h->deployment_id);
	db_bind_int64(&s, 3, h->time_ms);
	db_bind_text(&s, 4, h->action);
	db_bind_text(&s, 5, h->outcome);
	db_bind_text(&s, 6, h->message != NULL ? h->message : "");
	db_bind_text(&s, 7, h->detail);
	err = db_stmt_exec(&s);
	if (err == 0 && id != NULL)
		*id = db_last_id(&db->c);
	return err;
}

/* Ends target TARGET_ID's live deployment as STATE; ROCMD_ENOTFOUND when
 * nothing was live. */
static int
end_live(struct rocmd_deploy_db *db, int64_t target_id, const char *state, int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, Q_END_LIVE);
	db_bind_int64(&s, 1, target_id);
	db_bind_text(&s, 2, state);
	db_bind_int64(&s, 3, now);
	return exec_changed(db, &s, ROCMD_ENOTFOUND);
}

/* Adds deployment D, ended at NOW when it failed; *ID gets its id. */
static int
deployment_add(struct rocmd_deploy_db *db, const struct rocmd_db_deployment *d, int64_t now,
               int64_t *id)
{
	struct db_stmt s;
	int err;

	db_stmt_open(&s, &db->c, Q_RECORD);
	db_bind_int64(&s, 1, d->target_id);
	db_bind_id(&s, 2, d->package_id);
	db_bind_text(&s, 3, d->state);
	db_bind_text(&s, 4, d->reason != NULL ? d->reason : "user");
	db_bind_text(&s, 5, d->fingerprint);
	db_bind_int64(&s, 6, d->started_ms);
	if (d->finished_ms != 0)
		db_bind_int64(&s, 7, d->finished_ms);
	/* A failed attempt never was in place: it ends as it finishes. */
	if (strcmp(d->state, "failed") == 0)
		db_bind_int64(&s, 8, now);
	db_bind_text(&s, 9, d->detail);
	db_bind_text(&s, 10, d->package_name);
	db_bind_text(&s, 11, d->package_digest);
	err = db_stmt_exec(&s);
	if (err == 0)
		*id = db_last_id(&db->c);
	return err;
}

/*
 * The commit of a deploy's rows, where a full disk makes SQLite answer
 * SQLITE_FULL (ROCMD_ENOSPACE) and roll the transaction back. Failpoint
 * "db.deploy.commit" stands for it (ROCMD_FAILPOINT=db.deploy.commit:1:ENOSPC):
 * the rows written so far are rolled back, as they are then.
 */
static int
commit(struct rocmd_deploy_db *db, int err)
{
	int fp;

	if (err == 0 && (fp = ROCMD_FAILPOINT("db.deploy.commit")) < 0) {
		err = rocmd_err_errno(-fp);
		snprintf(db->c.msg, sizeof(db->c.msg), "%s (failpoint db.deploy.commit)",
		         err == ROCMD_ENOSPACE ? "database or disk is full" : rocmd_strerror(err));
	}
	return db_end(&db->c, err);
}

int
rocmd_deploy_db_record(struct rocmd_deploy_db *db, const struct rocmd_db_deployment *d,
                       const char *old_state, const char *action, const char *outcome,
                       const char *message, int64_t *id)
{
	int64_t now = d->finished_ms != 0 ? d->finished_ms : d->started_ms;
	int err;

	*id = 0;
	if (d->state == NULL ||
	    (strcmp(d->state, "live") != 0 && strcmp(d->state, "failed") != 0) ||
	    (old_state != NULL && strcmp(old_state, "superseded") != 0 &&
	     strcmp(old_state, "rolled_back") != 0))
		return ROCMD_EINVAL;
	err = db_begin(&db->c);
	if (err != 0)
		return err;
	/* A live D replaces whatever was live, if anything was. */
	if (strcmp(d->state, "live") == 0) {
		err = end_live(db, d->target_id, old_state != NULL ? old_state : "superseded", now);
		if (err == ROCMD_ENOTFOUND)
			err = 0;
	}
	if (err == 0)
		err = deployment_add(db, d, now, id);
	if (err == 0) {
		struct rocmd_db_history h = {
		    .target_id = d->target_id,
		    .deployment_id = *id,
		    .time_ms = now,
		    .action = action != NULL ? action : "deploy",
		    .outcome = outcome != NULL ? outcome : "ok",
		    .message = message,
		    .detail = d->detail,
		};
		err = rocmd_deploy_db_history_add(db, &h, NULL);
	}
	err = commit(db, err);
	if (err != 0)
		*id = 0;
	return err;
}

int
rocmd_deploy_db_end_live(struct rocmd_deploy_db *db, int64_t target_id, int64_t now,
                         const char *message, const char *detail)
{
	int err;

	err = db_begin(&db->c);
	if (err != 0)
		return err;
	err = end_live(db, target_id, "rolled_back", now);
	if (err == 0) {
		struct rocmd_db_history h = {
		    .target_id = target_id,
		    .time_ms = now,
		    .action = "rollback",
		    .outcome = "ok",
		    .message = message,
		    .detail = detail,
		};
		err = rocmd_deploy_db_history_add(db, &h, NULL);
	}
	return commit(db, err);
}

int
rocmd_deploy_db_set_fingerprint(struct rocmd_deploy_db *db, int64_t id, const char *fingerprint)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, Q_SET_FINGERPRINT);
	db_bind_int64(&s, 1, id);
	db_bind_text(&s, 2, fingerprint);
	return exec_changed(db, &s, ROCMD_ENOTFOUND);
}

int
rocmd_deploy_db_deployments(struct rocmd_deploy_db *db, int64_t target_id, int64_t limit,
                            int (*cb)(const struct rocmd_db_deployment *d, void *ctx), void *ctx)
{
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &db->c, Q_DEPLOYMENTS);
	db_bind_int64(&s, 1, target_id);
	db_bind_limit(&s, 2, limit);
	while (err == 0 && db_stmt_row(&s)) {
		struct rocmd_db_deployment d = {
		    .id = db_col_int64(&s, 0),
		    .target_id = db_col_int64(&s, 1),
		    .package_id = db_col_int64(&s, 2),
		    .state = db_col_text(&s, 3),
		    .reason = db_col_text(&s, 4),
		    .fingerprint = db_col_text(&s, 5),
		    .started_ms = db_col_int64(&s, 6),
		    .finished_ms = db_col_int64(&s, 7),
		    .ended_ms = db_col_int64(&s, 8),
		    .detail = db_col_text(&s, 9),
		    .package_name = db_col_text(&s, 10),
		    .package_digest = db_col_text(&s, 11),
		};
		err = cb(&d, ctx);
	}
	return db_stmt_end(&s, err);
}

/* Binds a backup's columns: ?1 target, ?2 path, ?3 fingerprint, ?4 files, ?5 bytes. */
static void
bind_backup(struct db_stmt *s, int64_t target_id, const char *path, const char *fingerprint,
            int64_t nfiles, int64_t total_size)
{
	db_bind_int64(s, 1, target_id);
	db_bind_text(s, 2, path);
	db_bind_text(s, 3, fingerprint);
	db_bind_int64(s, 4, nfiles);
	db_bind_int64(s, 5, total_size);
}

int
rocmd_deploy_db_backup_put(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                           const char *fingerprint, int64_t nfiles, int64_t total_size,
                           const char *adopted, int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, Q_BACKUP_PUT);
	bind_backup(&s, target_id, path, fingerprint, nfiles, total_size);
	db_bind_text(&s, 6, adopted);
	db_bind_int64(&s, 7, now);
	return exec_changed(db, &s, ROCMD_EEXISTS);
}

int
rocmd_deploy_db_backup_renew(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                             const char *fingerprint, int64_t nfiles, int64_t total_size,
                             int64_t now)
{
	struct db_stmt s;

	db_stmt_open(&s, &db->c, Q_BACKUP_RENEW);
	bind_backup(&s, target_id, path, fingerprint, nfiles, total_size);
	db_bind_int64(&s, 6, now);
	return exec_changed(db, &s, ROCMD_ENOTFOUND);
}

int
rocmd_deploy_db_history(struct rocmd_deploy_db *db, int64_t target_id, int64_t before_id,
                        int64_t limit, int (*cb)(const struct rocmd_db_history *h, void *ctx),
                        void *ctx)
{
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &db->c, Q_HISTORY);
	db_bind_int64(&s, 1, target_id);
	db_bind_int64(&s, 2, before_id);
	db_bind_limit(&s, 3, limit);
	while (err == 0 && db_stmt_row(&s)) {
		struct rocmd_db_history h = {
		    .id = db_col_int64(&s, 0),
		    .target_id = db_col_int64(&s, 1),
		    .deployment_id = db_col_int64(&s, 2),
		    .time_ms = db_col_int64(&s, 3),
		    .action = db_col_text(&s, 4),
		    .outcome = db_col_text(&s, 5),
		    .message = db_col_text(&s, 6),
		    .detail = db_col_text(&s, 7),
		    .package_id = db_col_int64(&s, 8),
		    .package_name = db_col_text(&s, 9),
		    .package_digest = db_col_text(&s, 10),
		    .reason = db_col_text(&s, 11),
		    .package_version = db_col_text(&s, 12),
		};
		err = cb(&h, ctx);
	}
	return db_stmt_end(&s, err);
}

int
rocmd_deploy_db_target_forget(struct rocmd_deploy_db *db, int64_t target_id)
{
	static const int order[] = {Q_FORGET_HISTORY, Q_FORGET_BACKUP, Q_FORGET_DEPLOYMENTS,
	                            Q_FORGET_TARGET};
	int err = db_begin(&db->c);

	for (size_t i = 0; err == 0 && i < sizeof(order) / sizeof(order[0]); i++) {
		struct db_stmt s;
		db_stmt_open(&s, &db->c, order[i]);
		db_bind_int64(&s, 1, target_id);
		err = db_stmt_exec(&s);
	}
	return db_end(&db->c, err);
}
