/*
 * The idle monitor's Windows signals (see idle.h): the power setting
 * notifications the service control handler receives (service-win.c
 * registers them with rocmd_idle_win_register and forwards each
 * PBT_POWERSETTINGCHANGE here). GUID_GLOBAL_USER_PRESENCE says whether a user
 * is present (Windows' own idle timer decides "inactive"), GUID_ACDC_POWER_SOURCE
 * the power source, GUID_IDLE_BACKGROUND_TASK that Windows considers the machine
 * idle enough for background work. The notifications arrive on the SCM's
 * dispatcher thread: values are stored atomically and the loop is woken with
 * uv_async_send, where a user's return is reported to the scheduler. Outside
 * the service (console mode) no notification comes.
 *
 * Presence says only whether Windows' own idle timer ran out, and a service
 * in session 0 cannot read another session's last input. Each interactive
 * session's agent (tools/idle-agent-win.c, started at logon) therefore
 * reports its GetLastInputInfo idle time over the pipe (tune.input): while a
 * report is fresh, input idleness is the least over the sessions that
 * reported, counted on from each report, and the source reads "session
 * agent"; presence is the fallback.
 */
#include "idle.h"

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"

/* The three settings (winnt.h's values, spelled out so that no GUID library is
 * needed at link time). */
static const GUID acdc_power_source = {
    0x5d3e9a59, 0xe9d5, 0x4b00, {0xa6, 0xbd, 0xff, 0x34, 0xff, 0x51, 0x65, 0x48}};
static const GUID global_user_presence = {
    0x786e8a1d, 0xb427, 0x4344, {0x92, 0x07, 0x09, 0xe7, 0x0b, 0xdc, 0xbe, 0xa9}};
static const GUID idle_background_task = {
    0x515c31d8, 0xf734, 0x163d, {0xa0, 0xfd, 0x11, 0xa0, 0x8c, 0x91, 0xe8, 0xf1}};

#define MAX_SESSIONS 16

struct session_report {
	long session; /* -1: free */
	double idle_s; /* what it said */
	uint64_t at_ns; /* when (uv_hrtime) */
};

struct rocmd_idle {
	struct session_report reports[MAX_SESSIONS];
	uv_loop_t *loop;
	uv_async_t async;
	rocmd_idle_activity_fn cb;
	void *ctx;
	int watching;
	uint64_t last_input_ns;
};

/* Written by the dispatcher thread, read by the loop. */
static volatile LONG presence = -1;   /* 1 present, 0 inactive */
static volatile LONG on_ac = -1;      /* 1 AC, 0 battery or UPS */
static volatile LONG background = -1; /* 1 in the idle background-task window */
static volatile LONG returned;        /* a user came back since the loop last looked */
static CRITICAL_SECTION live_lock;
static INIT_ONCE live_once = INIT_ONCE_STATIC_INIT;
static struct rocmd_idle *live; /* the open monitor, under live_lock */

static BOOL CALLBACK
init_lock(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
	InitializeCriticalSection(&live_lock);
	return TRUE;
}

int
rocmd_idle_win_register(void *status_handle)
{
	const GUID *guids[] = {&acdc_power_source, &global_user_presence, &idle_background_task};
	int ok = 0;

	for (int i = 0; i < 3; i++)
		if (RegisterPowerSettingNotification((HANDLE)status_handle, guids[i],
		                                     DEVICE_NOTIFY_SERVICE_HANDLE) != NULL)
			ok++;
	return ok == 3 ? 0 : ROCMD_EUNSUPPORTED;
}

void
rocmd_idle_win_power_setting(const void *guid, const void *data, unsigned long len)
{
	DWORD v = 0;

	InitOnceExecuteOnce(&live_once, init_lock, NULL, NULL);
	if (data != NULL && len >= sizeof(DWORD))
		memcpy(&v, data, sizeof(DWORD));
	if (IsEqualGUID(guid, &global_user_presence)) {
		/* PowerUserPresent = 0, PowerUserInactive = 2 */
		InterlockedExchange(&presence, v == 0 ? 1 : 0);
		if (v == 0) {
			InterlockedExchange(&background, 0);
			InterlockedExchange(&returned, 1);
		}
	} else if (IsEqualGUID(guid, &acdc_power_source)) {
		/* PoAc = 0, PoDc = 1, PoHot = 2 */
		InterlockedExchange(&on_ac, v == 0 ? 1 : 0);
	} else if (IsEqualGUID(guid, &idle_background_task)) {
		InterlockedExchange(&background, 1);
	} else {
		return;
	}
	EnterCriticalSection(&live_lock);
	if (live != NULL)
		uv_async_send(&live->async);
	LeaveCriticalSection(&live_lock);
}

static void
on_async(uv_async_t *a)
{
	struct rocmd_idle *m = a->data;

	if (InterlockedExchange(&returned, 0)) {
		m->last_input_ns = uv_hrtime();
		if (m->watching && m->cb != NULL)
			m->cb(m->ctx, m->last_input_ns, 0);
	}
}

int
rocmd_idle_open(uv_loop_t *loop, const char *root, rocmd_idle_activity_fn cb, void *ctx,
                struct rocmd_idle **out, char *why, size_t whylen)
{
	struct rocmd_idle *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (m == NULL)
		return ROCMD_ENOMEM;
	InitOnceExecuteOnce(&live_once, init_lock, NULL, NULL);
	m->loop = loop;
	m->cb = cb;
	m->ctx = ctx;
	m->last_input_ns = uv_hrtime();
	for (int i = 0; i < MAX_SESSIONS; i++)
		m->reports[i].session = -1;
	uv_async_init(loop, &m->async, on_async);
	m->async.data = m;
	EnterCriticalSection(&live_lock);
	live = m;
	LeaveCriticalSection(&live_lock);
	*out = m;
	return 0;
}

void
rocmd_idle_watch(struct rocmd_idle *m, int on)
{
	if (m == NULL || on == m->watching)
		return;
	m->watching = on;
	if (on)
		m->last_input_ns = uv_hrtime();
}

int
rocmd_idle_report(struct rocmd_idle *m, long session, int64_t idle_ms, char *why, size_t whylen)
{
	uint64_t now = uv_hrtime();
	struct session_report *slot = NULL;

	if (session < 0) {
		snprintf(why, whylen, "the caller's logon session is not known");
		return ROCMD_EPERM;
	}
	/* Its own slot, else a free or expired one, else the oldest. */
	for (int i = 0; i < MAX_SESSIONS && slot == NULL; i++)
		if (m->reports[i].session == session)
			slot = &m->reports[i];
	for (int i = 0; i < MAX_SESSIONS && slot == NULL; i++)
		if (m->reports[i].session < 0 ||
		    now - m->reports[i].at_ns > (uint64_t)ROCMD_IDLE_REPORT_TTL_S * 1000000000u)
			slot = &m->reports[i];
	if (slot == NULL) {
		slot = &m->reports[0];
		for (int i = 1; i < MAX_SESSIONS; i++)
			if (m->reports[i].at_ns < slot->at_ns)
				slot = &m->reports[i];
	}
	/* Input since the last report: a user's return, as the presence notification says it. */
	if (slot->session == session && idle_ms / 1e3 < slot->idle_s &&
	    now - slot->at_ns < (uint64_t)ROCMD_IDLE_REPORT_TTL_S * 1000000000u) {
		m->last_input_ns = now - (uint64_t)idle_ms * 1000000u;
		if (m->watching && m->cb != NULL)
			m->cb(m->ctx, now, 0);
	}
	slot->session = session;
	slot->idle_s = (double)idle_ms / 1e3;
	slot->at_ns = now;
	return 0;
}

/* The least input idleness over the fresh session reports; -1 when none is fresh. */
static double
reported_idle(const struct rocmd_idle *m, int *nsessions)
{
	uint64_t now = uv_hrtime();
	double least = -1;

	*nsessions = 0;
	for (int i = 0; i < MAX_SESSIONS; i++) {
		const struct session_report *r = &m->reports[i];
		double idle;

		if (r->session < 0 ||
		    now - r->at_ns > (uint64_t)ROCMD_IDLE_REPORT_TTL_S * 1000000000u)
			continue;
		idle = r->idle_s + (double)(now - r->at_ns) / 1e9;
		least = least < 0 || idle < least ? idle : least;
		(*nsessions)++;
	}
	return least;
}

void
rocmd_idle_sample(struct rocmd_idle *m, struct rocmd_idle_signals *s)
{
	LONG p = presence, ac = on_ac, bg = background;
	SYSTEM_INFO si;

	memset(s, 0, sizeof(*s));
	GetSystemInfo(&si);
	s->ncpu = (int)si.dwNumberOfProcessors;
	s->load1 = -1;
	s->gpu_users = -1;
	s->logind_idle = -1;
	s->background_ok = (int)bg;
	snprintf(s->input_source, sizeof(s->input_source), p >= 0 ? "windows" : "none");
	/* Windows tells presence, not the time of the last input: inactive means
	 * its own idle timer ran out, counted from the notification on. */
	if (p == 0)
		s->input_idle_s = (double)(uv_hrtime() - m->last_input_ns) / 1e9 + 1e6;
	else if (p == 1)
		s->input_idle_s = 0;
	else
		s->input_idle_s = m->watching ? (double)(uv_hrtime() - m->last_input_ns) / 1e9 : -1;
	{
		int n;
		double least = reported_idle(m, &n);

		if (least >= 0) {
			snprintf(s->input_source, sizeof(s->input_source), "session agent (%d)", n);
			s->input_idle_s = least;
		}
	}
	s->ac = (int)ac;
	snprintf(s->power, sizeof(s->power), "%s",
	         ac < 0 ? "no power notification yet"
	         : ac   ? "AC (GUID_ACDC_POWER_SOURCE)"
	                : "battery or UPS (GUID_ACDC_POWER_SOURCE)");
}

static void
on_closed(uv_handle_t *h)
{
	free(h->data);
}

void
rocmd_idle_close(struct rocmd_idle *m)
{
	if (m == NULL)
		return;
	EnterCriticalSection(&live_lock);
	if (live == m)
		live = NULL;
	LeaveCriticalSection(&live_lock);
	uv_close((uv_handle_t *)&m->async, on_closed);
}
