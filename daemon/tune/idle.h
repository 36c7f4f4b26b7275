/*
 * The idle monitor: whether the machine is idle enough to tune GEMM kernels,
 * from the platform's signals, and the policy that turns the signals into a
 * decision. The tune scheduler (tune-sched.c) is its only user.
 *
 * Linux (idle-unix.c): user input from logind's IdleHint where a session sets
 * it, and from the input devices themselves (evdev: /dev/input/event* read on
 * the loop with uv_poll, so a key press reaches the scheduler at once); AC
 * power from /sys/class/power_supply; other processes holding the GPU from
 * /sys/class/kfd/kfd/proc; the 1-minute load average from /proc/loadavg. The
 * /sys, /proc and /dev paths resolve under `rocmd --root` (sysroot.h), so
 * tests drive every signal from a sandbox. Windows (idle-win.c): the power
 * setting notifications the service receives (GUID_GLOBAL_USER_PRESENCE,
 * GUID_ACDC_POWER_SOURCE, GUID_IDLE_BACKGROUND_TASK).
 *
 * Nothing here wakes the daemon on a timer: input devices are watched only
 * while the scheduler asks (rocmd_idle_watch), and the other signals are read
 * when the scheduler samples them.
 */
#ifndef ROCMD_IDLE_H
#define ROCMD_IDLE_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct rocmd_idle;

/* What the platform says now. -1 in an int field: the signal is unavailable. */
struct rocmd_idle_signals {
	char input_source[32]; /* "logind+evdev", "evdev", "session agent", "windows", "none" */
	double input_idle_s;   /* seconds since the last user input; -1 unknown */
	int input_devices;     /* input devices watched (evdev) */
	int logind_idle;       /* logind's IdleHint: 1 idle, 0 active, -1 no session sets it */
	int ac;                /* 1 on mains power, 0 on battery, -1 unknown */
	char power[64];        /* how that was decided, for `rocmctl tune status` */
	int gpu_users;         /* other processes holding the GPU; -1 unknown */
	double load1;          /* 1-minute load average; -1 unknown */
	int ncpu;
	int background_ok; /* Windows' idle background-task window: 1 open, 0, -1 unknown */
};

/* The policy (the tune.* configuration keys). */
struct rocmd_idle_policy {
	int64_t idle_s;
	int ac_only;
	int64_t max_cpu_load;     /* percent of the CPUs */
	int quiet_from, quiet_to; /* minutes after local midnight; -1: no quiet hours */
};

/* Called on the loop thread when the user touches an input device while the
 * devices are watched; NS is uv_hrtime() at the read, EVENT_US the event's own
 * time stamp (CLOCK_REALTIME, microseconds), 0 when the source has none. */
typedef void (*rocmd_idle_activity_fn)(void *ctx, uint64_t ns, int64_t event_us);

/* Sets up the monitor on LOOP; ROOT is the sysroot (NULL: the machine). */
int rocmd_idle_open(uv_loop_t *loop, const char *root, rocmd_idle_activity_fn cb, void *ctx,
                    struct rocmd_idle **out, char *why, size_t whylen);
/* Starts (ON = 1) or stops watching the input devices. Starting counts as
 * input now: idle time is measured from there. */
void rocmd_idle_watch(struct rocmd_idle *m, int on);
/* Reads every signal into *OUT. */
void rocmd_idle_sample(struct rocmd_idle *m, struct rocmd_idle_signals *out);
/* Closes the monitor's handles and frees it once they are closed. NULL is fine. */
void rocmd_idle_close(struct rocmd_idle *m);

/*
 * A user session's own report of its input idleness (the session agent,
 * rocmd-idle-agent.exe on Windows: GetLastInputInfo, which a service in
 * session 0 cannot read for another session): SESSION from the reporter's
 * token, never from what it says; IDLE_MS its milliseconds without input. The
 * input idle time is then the least over the sessions that reported within
 * ROCMD_IDLE_REPORT_TTL_S: a session cannot make another look idle. Where the
 * platform reads input itself (Linux: evdev and logind), ROCMD_EUNSUPPORTED.
 */
#define ROCMD_IDLE_REPORT_TTL_S 30
int rocmd_idle_report(struct rocmd_idle *m, long session, int64_t idle_ms, char *why,
                      size_t whylen);

/* ---- Windows only (idle-win.c), called by service-win.c ---- */

/* Registers the three power settings for the service's STATUS_HANDLE. */
int rocmd_idle_win_register(void *status_handle);
/* One PBT_POWERSETTINGCHANGE (POWERBROADCAST_SETTING's GUID, data, length),
 * on the SCM's dispatcher thread. */
void rocmd_idle_win_power_setting(const void *guid, const void *data, unsigned long len);

/* ---- the policy (idle.c, portable) ---- */

/* Parses "HH:MM-HH:MM" (NULL or "": none) into minutes; ROCMD_EINVAL with WHY. */
int rocmd_idle_parse_quiet(const char *s, int *from, int *to, char *why, size_t whylen);
/*
 * Whether tuning may run now: 1 yes, 0 no, with the reason in WHY either way.
 * RUNNING says a job is already running: the load limit then no longer
 * applies (the tuner's own load would stop it). LOCAL_MIN is the local time
 * in minutes after midnight. *WAIT_S (may be NULL) gets how many seconds of
 * further input idleness would be needed, 0 when input is not what blocks.
 */
int rocmd_idle_decide(const struct rocmd_idle_policy *p, const struct rocmd_idle_signals *s,
                      int running, int local_min, double *wait_s, char *why, size_t whylen);

#endif
