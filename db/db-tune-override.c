/*
 * The vendor overrides on SQLite (see db-tune-override.h), through the
 * statement helper of db-internal.h.
 */
#include "db/db-tune-override.h"

#include <string.h>

#include "common/error.h"
#include "db/db-internal.h"

#define COLS                                                                                       \
	"id, target, library, lib_path, lib_digest, arch, device, compute_units, driver, path, "   \
	"entries, state, variable, detail, updated_ms"

enum { O_PUT, O_GET, O_LIST, O_COUNT_ };

static const char *const queries[O_COUNT_] = {
    "INSERT INTO tune_override (target, library, lib_path, lib_digest, arch, device, "
    "compute_units, driver, path, entries, state, variable, detail, updated_ms) VALUES (?1, "
    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) ON CONFLICT (target, library) DO "
    "UPDATE SET lib_path = ?3, lib_digest = ?4, arch = ?5, device = ?6, compute_units = ?7, "
    "driver = ?8, path = ?9, entries = ?10, state = ?11, variable = ?12, detail = ?13, "
    "updated_ms = ?14",
    "SELECT " COLS " FROM tune_override WHERE target = ?1 AND library = ?2",
    "SELECT " COLS " FROM tune_override ORDER BY target, library",
};

struct rocmd_tune_override_db {
	struct db_conn c; /* first: the daemon's connection, borrowed */
};

DB_MODULE_DEFINE(struct rocmd_tune_override_db, rocmd_tune_override_attach,
                 rocmd_tune_override_detach, rocmd_tune_override_errmsg, queries, O_COUNT_)

static void
row(struct db_stmt *s, struct rocmd_tune_override *o)
{
	memset(o, 0, sizeof(*o));
	o->id = db_col_int64(s, 0);
	db_col_copy(s, 1, o->target, sizeof(o->target));
	db_col_copy(s, 2, o->library, sizeof(o->library));
	db_col_copy(s, 3, o->lib_path, sizeof(o->lib_path));
	db_col_copy(s, 4, o->lib_digest, sizeof(o->lib_digest));
	db_col_copy(s, 5, o->arch, sizeof(o->arch));
	db_col_copy(s, 6, o->device, sizeof(o->device));
	o->compute_units = db_col_int64(s, 7);
	db_col_copy(s, 8, o->driver, sizeof(o->driver));
	db_col_copy(s, 9, o->path, sizeof(o->path));
	o->entries = db_col_int64(s, 10);
	db_col_copy(s, 11, o->state, sizeof(o->state));
	db_col_copy(s, 12, o->variable, sizeof(o->variable));
	db_col_copy(s, 13, o->detail, sizeof(o->detail));
	o->updated_ms = db_col_int64(s, 14);
}

int
rocmd_tune_override_put(struct rocmd_tune_override_db *db, const struct rocmd_tune_override *o,
                        int64_t now)
{
	struct db_stmt s;
	int err;

	db_stmt_open(&s, &db->c, O_PUT);
	db_bind_text(&s, 1, o->target);
	db_bind_text(&s, 2, o->library);
	db_bind_text(&s, 3, o->lib_path);
	db_bind_text(&s, 4, o->lib_digest);
	db_bind_text(&s, 5, o->arch);
	db_bind_text(&s, 6, o->device);
	db_bind_int64(&s, 7, o->compute_units);
	db_bind_text(&s, 8, o->driver);
	db_bind_text(&s, 9, o->path);
	db_bind_int64(&s, 10, o->entries);
	db_bind_text(&s, 11, o->state);
	db_bind_text(&s, 12, o->variable[0] ? o->variable : NULL);
	db_bind_text(&s, 13, o->detail[0] ? o->detail : NULL);
	db_bind_int64(&s, 14, now);
	err = db_stmt_exec(&s);
	return err == ROCMD_EEXISTS ? ROCMD_EINVAL : err;
}

int
rocmd_tune_override_get(struct rocmd_tune_override_db *db, const char *target, const char *library,
                        struct rocmd_tune_override *o)
{
	struct db_stmt s;
	int found;

	db_stmt_open(&s, &db->c, O_GET);
	db_bind_text(&s, 1, target);
	db_bind_text(&s, 2, library);
	found = db_stmt_row(&s);
	if (found)
		row(&s, o);
	return db_stmt_found(&s, found);
}

int
rocmd_tune_override_list(struct rocmd_tune_override_db *db,
                         int (*cb)(const struct rocmd_tune_override *o, void *ctx), void *ctx)
{
	struct rocmd_tune_override o;
	struct db_stmt s;
	int err = 0;

	db_stmt_open(&s, &db->c, O_LIST);
	while (err == 0 && db_stmt_row(&s)) {
		row(&s, &o);
		err = cb(&o, ctx);
	}
	return db_stmt_end(&s, err);
}
