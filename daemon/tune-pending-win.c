/*
 * The Windows build's stand-in for the tune scheduler (tune-sched.c,
 * methods-tune.c) until the tuner is ported: kernels/measure.c isolates each
 * candidate in a fork()ed child, which Windows lacks. The idle monitor
 * (idle-win.c) does build and hears the service's power notifications;
 * tune.status shows those signals, and the other tune.* methods answer "not
 * supported on this platform" with the reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/proto.h"
#include "idle.h"
#include "methods-tune.h"
#include "server.h"
#include "tune-sched.h"

struct rocmd_tune {
	struct rocmd_idle *idle;
};

int
rocmd_tune_start(struct rocmd_server *srv, const char *root, struct rocmd_tune **out, char *why,
                 size_t whylen)
{
	struct rocmd_tune *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (t == NULL)
		return ROCMD_ENOMEM;
	rc = rocmd_idle_open(srv->loop, root, NULL, NULL, &t->idle, why, whylen);
	if (rc < 0) {
		free(t);
		return rc;
	}
	log_notice("idle tuning: the tuner is not ported to Windows yet; idle signals only");
	*out = t;
	return 0;
}

void
rocmd_tune_stop(struct rocmd_tune *t)
{
	if (t != NULL) {
		rocmd_idle_close(t->idle);
		t->idle = NULL;
	}
}

void
rocmd_tune_free(struct rocmd_tune *t)
{
	free(t);
}

void
rocmd_tune_on_event(struct rocmd_tune *t, const char *kind)
{
}

static int
m_status(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	struct rocmd_tune *t = conn->srv->tune;
	struct rocmd_idle_signals s;
	cJSON *r, *o;

	if (t == NULL || t->idle == NULL) {
		snprintf(why, whylen, "idle tuning is not running in this daemon");
		return ROCMD_EUNSUPPORTED;
	}
	rocmd_idle_sample(t->idle, &s);
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "state", "unsupported");
	cJSON_AddStringToObject(r, "decision", "the tuner is not ported to Windows yet");
	o = cJSON_AddObjectToObject(r, "signals");
	cJSON_AddStringToObject(o, "input_source", s.input_source);
	if (s.input_idle_s >= 0)
		cJSON_AddNumberToObject(o, "input_idle_s", s.input_idle_s);
	else
		cJSON_AddNullToObject(o, "input_idle_s");
	if (s.ac >= 0)
		cJSON_AddBoolToObject(o, "ac", s.ac);
	else
		cJSON_AddNullToObject(o, "ac");
	cJSON_AddStringToObject(o, "power", s.power);
	if (s.background_ok >= 0)
		cJSON_AddBoolToObject(o, "background_ok", s.background_ok);
	else
		cJSON_AddNullToObject(o, "background_ok");
	*result = r;
	return 0;
}

static int
m_pending(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	snprintf(why, whylen, "the tuner is not ported to Windows yet");
	return ROCMD_EUNSUPPORTED;
}

const struct rocmd_method rocmd_methods_tune[] = {
    {"tune.status", 0, m_status},
    {"tune.results", 0, m_pending},
    {"tune.export", 0, m_pending},
    {"tune.start", ROCMD_METHOD_MUTATING, m_pending},
    {"tune.pause", ROCMD_METHOD_MUTATING, m_pending},
    {"tune.resume", ROCMD_METHOD_MUTATING, m_pending},
    {"tune.add", ROCMD_METHOD_MUTATING, m_pending},
    {"tune.import", ROCMD_METHOD_MUTATING, m_pending},
    {NULL, 0, NULL},
};
