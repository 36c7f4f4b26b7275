/*
 * What deploy says out loud. Each deploy, auto-sync, drift, failed
 * verification and automatic rollback is an event, a log line at the
 * default level (notice; warning for what failed) and, when rocmd did it on
 * its own or it failed, a problem that rocmctl status and lib status list
 * until an admin marks it seen (lib.ack). The problems are the deploy
 * events after the last one seen, whose id is kept durably in
 * <state>/deploy/seen.json; a user's own deploy or rollback, answered to
 * them, is none. Loop thread.
 */
#include "deploy-jobs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/proto.h"
#include "daemon/core/server.h"
#include "db/db.h"
#include "deploy-jobs-os.h"

/* At most this many problems are listed (the newest); the count says all. */
#define PROBLEMS_MAX 20

void
deploy_say(struct rocmd_server *srv, int level, const char *kind, cJSON *detail, const char *fmt,
           ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rocmd_log((enum rocmd_log_level)level, "%s", msg);
	rocmd_server_event(srv, kind, detail, "%s", msg);
}

/* Whether event EV is a problem: a failure, or what rocmd did on its own. */
static int
is_problem(const struct rocmd_event *ev)
{
	static const char *const always[] = {
	    "lib.deploy_failed",   "lib.verify_failed",  "lib.drift",      "lib.sync",
	    "lib.rollback_failed", "lib.recover_failed", "lib.unrecorded", NULL};
	int r = 0;

	for (int i = 0; always[i] != NULL; i++)
		if (strcmp(ev->kind, always[i]) == 0)
			return 1;
	if (strcmp(ev->kind, "lib.deployed") == 0 || strcmp(ev->kind, "lib.rolled_back") == 0) {
		cJSON *d = cJSON_Parse(ev->detail != NULL ? ev->detail : "{}");
		const cJSON *reason = cJSON_GetObjectItemCaseSensitive(d, "reason");
		r = cJSON_IsString(reason) && strcmp(reason->valuestring, "user") != 0 &&
		    strcmp(reason->valuestring, "rollback") != 0;
		cJSON_Delete(d);
	}
	return r;
}

struct problems {
	cJSON *a;
	int n;
};

static int
problem_one(const struct rocmd_event *ev, void *arg)
{
	struct problems *p = arg;
	cJSON *o;

	if (!is_problem(ev))
		return 0;
	p->n++;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)ev->id);
	cJSON_AddNumberToObject(o, "time_ms", (double)ev->time_ms);
	cJSON_AddStringToObject(o, "kind", ev->kind);
	cJSON_AddStringToObject(o, "message", ev->message);
	cJSON_AddItemToArray(p->a, o);
	if (cJSON_GetArraySize(p->a) > PROBLEMS_MAX)
		cJSON_DeleteItemFromArray(p->a, 0);
	return 0;
}

static void
seen_path(const struct rocmd_deploy_service *ds, char *out, size_t n, int dir)
{
	snprintf(out, n, rocmd_deploy_native_windows ? "%s\\deploy%s" : "%s/deploy%s",
	         ds->srv->cfg->state_dir,
	         !dir ? (rocmd_deploy_native_windows ? "\\seen.json" : "/seen.json") : "");
}

void
deploy_seen_load(struct rocmd_deploy_service *ds)
{
	char path[PATH_MAX];
	cJSON *j = NULL;
	const cJSON *v;

	seen_path(ds, path, sizeof(path), 0);
	ds->seen = 0;
	if (rocmd_fs_json_read(path, &j) < 0)
		return;
	v = cJSON_GetObjectItemCaseSensitive(j, "seen");
	if (cJSON_IsNumber(v) && v->valuedouble > 0)
		ds->seen = (int64_t)v->valuedouble;
	cJSON_Delete(j);
}

int
deploy_problems(struct rocmd_deploy_service *ds, cJSON *array)
{
	struct problems p = {.a = array};
	int rc = rocmd_db_events_list(ds->srv->db, ds->seen, 0, "lib.", problem_one, &p);

	return rc < 0 ? rc : p.n;
}

/* The engine's status notes: each problem not seen yet, as a sentence. */
void
deploy_status_notes(void *self, cJSON *notes)
{
	struct rocmd_deploy_service *ds = self;
	cJSON *a = cJSON_CreateArray(), *it;
	char line[1400];
	int n = deploy_problems(ds, a);

	cJSON_ArrayForEach(it, a)
	{
		snprintf(line, sizeof(line), "deploy problem #%.0f: %s",
		         cJSON_GetObjectItemCaseSensitive(it, "id")->valuedouble,
		         cJSON_GetObjectItemCaseSensitive(it, "message")->valuestring);
		cJSON_AddItemToArray(notes, cJSON_CreateString(line));
	}
	if (n > 0) {
		snprintf(line, sizeof(line),
		         "%d deploy problem%s not seen yet%s: rocmctl lib ack marks %s seen", n,
		         n == 1 ? "" : "s", n > PROBLEMS_MAX ? " (the newest listed)" : "",
		         n == 1 ? "it" : "them");
		cJSON_AddItemToArray(notes, cJSON_CreateString(line));
	}
	cJSON_Delete(a);
}

/* lib.ack: every problem up to event "id" (default: all) is seen. */
int
deploy_m_ack(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = conn->srv->deploy;
	static const char *const keys[] = {"id", NULL};
	int64_t id = 0, last = rocmd_db_events_last_id(ds->srv->db);
	char path[PATH_MAX];
	cJSON *j;
	int rc, n;

	if ((rc = rocmd_params_only(params, keys, why, whylen)) < 0 ||
	    ((rc = rocmd_param_int(params, "id", 0, 1, INT64_MAX, &id, why, whylen)) < 0 &&
	     rc != ROCMD_ENOTFOUND))
		return rc;
	if (last < 0) {
		snprintf(why, whylen, "cannot read the events: %s", rocmd_db_errmsg(ds->srv->db));
		return (int)last;
	}
	if (id == 0 || id > last)
		id = last;
	j = cJSON_CreateArray();
	n = deploy_problems(ds, j);
	cJSON_Delete(j);
	if (id > ds->seen) {
		seen_path(ds, path, sizeof(path), 1);
		if ((rc = rocmd_paths_mkdir_p(path, 0755)) < 0) {
			snprintf(why, whylen, "cannot create %s: %s", path, rocmd_strerror(rc));
			return rc;
		}
		seen_path(ds, path, sizeof(path), 0);
		j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "seen", (double)id);
		rc = rocmd_fs_json_write(path, j);
		cJSON_Delete(j);
		if (rc < 0) {
			snprintf(why, whylen, "cannot write %s: %s", path, rocmd_strerror(rc));
			return rc;
		}
		ds->seen = id;
	}
	*result = cJSON_CreateObject();
	cJSON_AddNumberToObject(*result, "seen", (double)ds->seen);
	j = cJSON_AddArrayToObject(*result, "problems");
	rc = deploy_problems(ds, j);
	cJSON_AddNumberToObject(*result, "acknowledged", (double)(n - (rc > 0 ? rc : 0)));
	return 0;
}
