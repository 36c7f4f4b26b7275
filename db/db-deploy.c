/*
 * Deploy's rows on SQLite (see db-deploy.h). Statements are prepared per
 * call, as in db-pkg.c: deploys are rare, and a callback may call back in.
 */
#include "db/db-deploy.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

struct rocmd_deploy_db {
	sqlite3 *h; /* first: borrowed from the daemon's struct rocmd_db */
};

int
rocmd_deploy_db_attach(struct rocmd_db *main, struct rocmd_deploy_db **out)
{
	void *db;
	int rc = rocmd_db_view_new(main, sizeof(**out), &db);

	*out = db;
	return rc;
}

void
rocmd_deploy_db_detach(struct rocmd_deploy_db *db)
{
	free(db);
}

const char *
rocmd_deploy_db_errmsg(struct rocmd_deploy_db *db)
{
	return db != NULL ? sqlite3_errmsg(db->h) : "no database";
}

static const char *
col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

static void
bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

/* Runs one prepared write to completion and finalizes it. */
static int
step_done(sqlite3_stmt *st, int rc)
{
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
}

static int
finish_tx(struct rocmd_deploy_db *db, int err)
{
	int rc;

	if (err == 0) {
		rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
		err = rocmd_db_map_rc(rc);
	}
	if (err != 0)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

int
rocmd_deploy_db_target_put(struct rocmd_deploy_db *db, const struct rocmd_db_target *t, int64_t now,
                           int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	*id = 0;
	rc = sqlite3_prepare_v2(
	    db->h,
	    "INSERT INTO target (kind, name, sdk_id, platform, sdk_version, binary_path, "
	    "library_path, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) "
	    "ON CONFLICT (name) DO UPDATE SET kind = ?1, sdk_id = ?3, platform = ?4, "
	    "sdk_version = ?5, binary_path = ?6, library_path = ?7, updated_ms = ?8 "
	    "RETURNING id",
	    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rocmd_db_bind_text(st, 1, t->kind);
		rocmd_db_bind_text(st, 2, t->name);
		bind_id(st, 3, t->sdk_id);
		rocmd_db_bind_text(st, 4, t->platform);
		rocmd_db_bind_text(st, 5, t->sdk_version);
		rocmd_db_bind_text(st, 6, t->binary_path);
		rocmd_db_bind_text(st, 7, t->library_path);
		sqlite3_bind_int64(st, 8, now);
		rc = sqlite3_step(st);
	}
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(st, 0);
		rc = sqlite3_step(st);
	}
	err = rc == SQLITE_DONE ? 0 : rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_deploy_db_targets(struct rocmd_deploy_db *db, int64_t id, const char *name,
                        int (*cb)(const struct rocmd_db_target *t, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0, found = 0;

	rc = sqlite3_prepare_v2(
	    db->h,
	    "SELECT t.id, t.kind, t.name, coalesce(t.sdk_id, 0), t.platform, t.sdk_version, "
	    "t.binary_path, t.library_path, t.created_ms, t.updated_ms, "
	    "coalesce(d.id, 0), coalesce(d.package_id, 0), d.fingerprint, "
	    "coalesce(d.finished_ms, 0), b.path, b.fingerprint, b.adopted, "
	    "coalesce(b.nfiles, 0), coalesce(b.total_size, 0), coalesce(b.created_ms, 0) "
	    "FROM target t LEFT JOIN deployment d ON d.target_id = t.id AND d.state = 'live' "
	    "LEFT JOIN backup b ON b.target_id = t.id "
	    "WHERE (?1 = 0 AND ?2 IS NULL) OR t.id = ?1 OR t.name = ?2 ORDER BY t.id",
	    -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		rocmd_db_bind_text(st, 2, name);
	}
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_target t = {
		    .id = sqlite3_column_int64(st, 0),
		    .kind = col_text(st, 1),
		    .name = col_text(st, 2),
		    .sdk_id = sqlite3_column_int64(st, 3),
		    .platform = col_text(st, 4),
		    .sdk_version = col_text(st, 5),
		    .binary_path = col_text(st, 6),
		    .library_path = col_text(st, 7),
		    .created_ms = sqlite3_column_int64(st, 8),
		    .updated_ms = sqlite3_column_int64(st, 9),
		    .live_id = sqlite3_column_int64(st, 10),
		    .live_package_id = sqlite3_column_int64(st, 11),
		    .live_fingerprint = col_text(st, 12),
		    .live_finished_ms = sqlite3_column_int64(st, 13),
		    .backup_path = col_text(st, 14),
		    .backup_fingerprint = col_text(st, 15),
		    .backup_adopted = col_text(st, 16),
		    .backup_nfiles = sqlite3_column_int64(st, 17),
		    .backup_total_size = sqlite3_column_int64(st, 18),
		    .backup_created_ms = sqlite3_column_int64(st, 19),
		};
		found = 1;
		rc = SQLITE_OK;
		if ((err = cb(&t, ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	if (err == 0 && (id != 0 || name != NULL) && !found)
		err = ROCMD_ENOTFOUND;
	return err;
}

static int
history_insert(struct rocmd_deploy_db *db, const struct rocmd_db_history *h, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->h,
	                        "INSERT INTO deploy_history (target_id, deployment_id, time_ms, "
	                        "action, outcome, message, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
	                        "?7)",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, h->target_id);
		bind_id(st, 2, h->deployment_id);
		sqlite3_bind_int64(st, 3, h->time_ms);
		rocmd_db_bind_text(st, 4, h->action);
		rocmd_db_bind_text(st, 5, h->outcome);
		rocmd_db_bind_text(st, 6, h->message != NULL ? h->message : "");
		rocmd_db_bind_text(st, 7, h->detail);
	}
	rc = step_done(st, rc);
	if (rc == 0 && id != NULL)
		*id = sqlite3_last_insert_rowid(db->h);
	return rc;
}

int
rocmd_deploy_db_history_add(struct rocmd_deploy_db *db, const struct rocmd_db_history *h,
                            int64_t *id)
{
	if (id != NULL)
		*id = 0;
	return history_insert(db, h, id);
}

static int
end_live(struct rocmd_deploy_db *db, int64_t target_id, const char *state, int64_t now,
         int64_t *ended)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db->h,
	                        "UPDATE deployment SET state = ?2, ended_ms = ?3 "
	                        "WHERE target_id = ?1 AND state = 'live'",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, target_id);
		rocmd_db_bind_text(st, 2, state);
		sqlite3_bind_int64(st, 3, now);
	}
	rc = step_done(st, rc);
	if (ended != NULL)
		*ended = rc == 0 ? sqlite3_changes(db->h) : 0;
	return rc;
}

int
rocmd_deploy_db_record(struct rocmd_deploy_db *db, const struct rocmd_db_deployment *d,
                       const char *old_state, const char *action, const char *outcome,
                       const char *message, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	int64_t now = d->finished_ms != 0 ? d->finished_ms : d->started_ms;
	int rc, err;

	*id = 0;
	if (d->state == NULL ||
	    (strcmp(d->state, "live") != 0 && strcmp(d->state, "failed") != 0) ||
	    (old_state != NULL && strcmp(old_state, "superseded") != 0 &&
	     strcmp(old_state, "rolled_back") != 0))
		return ROCMD_EINVAL;
	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rocmd_db_map_rc(rc);
	err = 0;
	if (strcmp(d->state, "live") == 0)
		err = end_live(db, d->target_id, old_state != NULL ? old_state : "superseded", now,
		               NULL);
	if (err == 0) {
		rc = sqlite3_prepare_v2(db->h,
		                        "INSERT INTO deployment (target_id, package_id, state, "
		                        "reason, fingerprint, started_ms, finished_ms, ended_ms, "
		                        "detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
		                        -1, &st, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, d->target_id);
			bind_id(st, 2, d->package_id);
			rocmd_db_bind_text(st, 3, d->state);
			rocmd_db_bind_text(st, 4, d->reason != NULL ? d->reason : "user");
			rocmd_db_bind_text(st, 5, d->fingerprint);
			sqlite3_bind_int64(st, 6, d->started_ms);
			if (d->finished_ms != 0)
				sqlite3_bind_int64(st, 7, d->finished_ms);
			/* A failed attempt never was in place: it ends as it finishes. */
			if (strcmp(d->state, "failed") == 0)
				sqlite3_bind_int64(st, 8, now);
			rocmd_db_bind_text(st, 9, d->detail);
		}
		err = step_done(st, rc);
		if (err == 0)
			*id = sqlite3_last_insert_rowid(db->h);
	}
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
		err = history_insert(db, &h, NULL);
	}
	err = finish_tx(db, err);
	if (err != 0)
		*id = 0;
	return err;
}

int
rocmd_deploy_db_end_live(struct rocmd_deploy_db *db, int64_t target_id, int64_t now,
                         const char *message, const char *detail)
{
	int64_t ended = 0;
	int rc, err;

	rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rocmd_db_map_rc(rc);
	err = end_live(db, target_id, "rolled_back", now, &ended);
	if (err == 0 && ended == 0)
		err = ROCMD_ENOTFOUND;
	if (err == 0) {
		struct rocmd_db_history h = {
		    .target_id = target_id,
		    .time_ms = now,
		    .action = "rollback",
		    .outcome = "ok",
		    .message = message,
		    .detail = detail,
		};
		err = history_insert(db, &h, NULL);
	}
	return finish_tx(db, err);
}

int
rocmd_deploy_db_set_fingerprint(struct rocmd_deploy_db *db, int64_t id, const char *fingerprint)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	rc = sqlite3_prepare_v2(db->h, "UPDATE deployment SET fingerprint = ?2 WHERE id = ?1", -1,
	                        &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, id);
		rocmd_db_bind_text(st, 2, fingerprint);
	}
	err = step_done(st, rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_deploy_db_deployments(struct rocmd_deploy_db *db, int64_t target_id, int64_t limit,
                            int (*cb)(const struct rocmd_db_deployment *d, void *ctx), void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc =
	    sqlite3_prepare_v2(db->h,
	                       "SELECT id, target_id, coalesce(package_id, 0), state, reason, "
	                       "fingerprint, started_ms, coalesce(finished_ms, 0), "
	                       "coalesce(ended_ms, 0), detail FROM deployment WHERE target_id = ?1 "
	                       "ORDER BY id DESC LIMIT ?2",
	                       -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, target_id);
		sqlite3_bind_int64(st, 2, limit > 0 ? limit : -1);
	}
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_deployment d = {
		    .id = sqlite3_column_int64(st, 0),
		    .target_id = sqlite3_column_int64(st, 1),
		    .package_id = sqlite3_column_int64(st, 2),
		    .state = col_text(st, 3),
		    .reason = col_text(st, 4),
		    .fingerprint = col_text(st, 5),
		    .started_ms = sqlite3_column_int64(st, 6),
		    .finished_ms = sqlite3_column_int64(st, 7),
		    .ended_ms = sqlite3_column_int64(st, 8),
		    .detail = col_text(st, 9),
		};
		rc = SQLITE_OK;
		if ((err = cb(&d, ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}

int
rocmd_deploy_db_backup_put(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                           const char *fingerprint, int64_t nfiles, int64_t total_size,
                           const char *adopted, int64_t now)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	/* OR IGNORE plus changes(): an existing backup row is never touched. */
	rc = sqlite3_prepare_v2(db->h,
	                        "INSERT OR IGNORE INTO backup (target_id, path, fingerprint, "
	                        "nfiles, total_size, adopted, created_ms) VALUES (?1, ?2, ?3, ?4, "
	                        "?5, ?6, ?7)",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, target_id);
		rocmd_db_bind_text(st, 2, path);
		rocmd_db_bind_text(st, 3, fingerprint);
		sqlite3_bind_int64(st, 4, nfiles);
		sqlite3_bind_int64(st, 5, total_size);
		rocmd_db_bind_text(st, 6, adopted);
		sqlite3_bind_int64(st, 7, now);
	}
	err = step_done(st, rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_EEXISTS;
	return err;
}

int
rocmd_deploy_db_backup_renew(struct rocmd_deploy_db *db, int64_t target_id, const char *path,
                             const char *fingerprint, int64_t nfiles, int64_t total_size,
                             int64_t now)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	rc = sqlite3_prepare_v2(db->h,
	                        "UPDATE backup SET path = ?2, fingerprint = ?3, nfiles = ?4, "
	                        "total_size = ?5, adopted = NULL, created_ms = ?6 "
	                        "WHERE target_id = ?1",
	                        -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, target_id);
		rocmd_db_bind_text(st, 2, path);
		rocmd_db_bind_text(st, 3, fingerprint);
		sqlite3_bind_int64(st, 4, nfiles);
		sqlite3_bind_int64(st, 5, total_size);
		sqlite3_bind_int64(st, 6, now);
	}
	err = step_done(st, rc);
	if (err == 0 && sqlite3_changes(db->h) == 0)
		err = ROCMD_ENOTFOUND;
	return err;
}

int
rocmd_deploy_db_history(struct rocmd_deploy_db *db, int64_t target_id, int64_t before_id,
                        int64_t limit, int (*cb)(const struct rocmd_db_history *h, void *ctx),
                        void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc =
	    sqlite3_prepare_v2(db->h,
	                       "SELECT id, target_id, coalesce(deployment_id, 0), time_ms, action, "
	                       "outcome, message, detail FROM deploy_history "
	                       "WHERE (?1 = 0 OR target_id = ?1) AND (?2 = 0 OR id < ?2) "
	                       "ORDER BY id DESC LIMIT ?3",
	                       -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, target_id);
		sqlite3_bind_int64(st, 2, before_id);
		sqlite3_bind_int64(st, 3, limit > 0 ? limit : -1);
	}
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rocmd_db_history h = {
		    .id = sqlite3_column_int64(st, 0),
		    .target_id = sqlite3_column_int64(st, 1),
		    .deployment_id = sqlite3_column_int64(st, 2),
		    .time_ms = sqlite3_column_int64(st, 3),
		    .action = col_text(st, 4),
		    .outcome = col_text(st, 5),
		    .message = col_text(st, 6),
		    .detail = col_text(st, 7),
		};
		rc = SQLITE_OK;
		if ((err = cb(&h, ctx)) != 0)
			break;
	}
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
		err = rocmd_db_map_rc(rc);
	sqlite3_finalize(st);
	return err;
}
