/*
 * The idle policy (see idle.h): turns the platform's signals and the tune.*
 * configuration into "tune now" or "wait, because ...". Portable; the
 * signals come from idle-unix.c or idle-win.c.
 */
#include "idle.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"

static int
parse_hm(const char *s, int *min, const char **end)
{
	int h = 0, m = 0, n = 0;

	if (sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2 || n != 5 || h < 0 || h > 23 || m < 0 || m > 59)
		return -1;
	*min = h * 60 + m;
	*end = s + n;
	return 0;
}

int
rocmd_idle_parse_quiet(const char *s, int *from, int *to, char *why, size_t whylen)
{
	const char *p;

	*from = *to = -1;
	if (s == NULL || s[0] == '\0')
		return 0;
	if (parse_hm(s, from, &p) < 0 || *p != '-' || parse_hm(p + 1, to, &p) < 0 || *p != '\0' ||
	    *from == *to) {
		*from = *to = -1;
		snprintf(why, whylen,
		         "tune.quiet_hours: expected HH:MM-HH:MM with two different times, got "
		         "\"%.40s\"",
		         s);
		return ROCMD_EINVAL;
	}
	return 0;
}

static int
in_quiet(const struct rocmd_idle_policy *p, int now)
{
	if (p->quiet_from < 0)
		return 0;
	if (p->quiet_from < p->quiet_to)
		return now >= p->quiet_from && now < p->quiet_to;
	return now >= p->quiet_from || now < p->quiet_to; /* wraps midnight */
}

int
rocmd_idle_decide(const struct rocmd_idle_policy *p, const struct rocmd_idle_signals *s,
                  int running, int local_min, double *wait_s, char *why, size_t whylen)
{
	if (wait_s != NULL)
		*wait_s = 0;
	if (in_quiet(p, local_min)) {
		snprintf(why, whylen, "quiet hours (%02d:%02d-%02d:%02d)", p->quiet_from / 60,
		         p->quiet_from % 60, p->quiet_to / 60, p->quiet_to % 60);
		return 0;
	}
	if (p->ac_only && s->ac == 0) {
		snprintf(why, whylen, "on battery (%s)", s->power);
		return 0;
	}
	if (s->gpu_users > 0) {
		snprintf(why, whylen, "%d other process%s using the GPU", s->gpu_users,
		         s->gpu_users == 1 ? "" : "es");
		return 0;
	}
	if (s->background_ok == 0) {
		snprintf(why, whylen, "Windows has closed the idle background-task window");
		return 0;
	}
	if (s->input_idle_s >= 0 && s->input_idle_s < (double)p->idle_s) {
		if (wait_s != NULL)
			*wait_s = (double)p->idle_s - s->input_idle_s;
		snprintf(why, whylen, "user active %.0f s ago (idle after %lld s)", s->input_idle_s,
		         (long long)p->idle_s);
		return 0;
	}
	if (!running && s->load1 >= 0 && s->ncpu > 0 &&
	    s->load1 * 100.0 > (double)p->max_cpu_load * s->ncpu) {
		snprintf(why, whylen, "CPU load %.2f over %lld%% of %d CPUs", s->load1,
		         (long long)p->max_cpu_load, s->ncpu);
		return 0;
	}
	if (s->input_idle_s < 0)
		snprintf(why, whylen, "idle (no input source: power, GPU and load only)");
	else
		snprintf(why, whylen, "idle for %.0f s", s->input_idle_s);
	return 1;
}
