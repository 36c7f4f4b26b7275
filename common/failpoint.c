/*
 * The failpoint state: one armed fault and one armed kill point, parsed from
 * the environment on first use (a constructor) or set by tests. Counting is
 * atomic so a multi-threaded caller still fails exactly one operation.
 */
#include "failpoint.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

int rocmd_failpoint_armed;

static char fail_name[64];
static uint64_t fail_count;
static int fail_errno;
static char kill_name[64];
static uint64_t kill_count;
static uint64_t hits;
static uint64_t kill_hits;
static int fired;
static char fired_name[64];

static int
errno_parse(const char *s)
{
	static const struct {
		const char *name;
		int value;
	} names[] = {{"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EACCES", EACCES}, {"EPERM", EPERM},
	             {"ENOMEM", ENOMEM}, {"EROFS", EROFS},   {"EXDEV", EXDEV},   {"EBUSY", EBUSY}};
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].value;
	v = strtol(s, &end, 10);
	return *end == '\0' && v > 0 && v < 4096 ? (int)v : -1;
}

/* NAME[:COUNT] into NAME and COUNT (default 1); the rest after a second ':'
 * goes to *REST. */
static int
spec_parse(const char *spec, char *name, size_t namelen, uint64_t *count, const char **rest)
{
	const char *c1 = strchr(spec, ':');
	size_t n = c1 != NULL ? (size_t)(c1 - spec) : strlen(spec);
	char *end;

	if (n == 0 || n >= namelen)
		return ROCMD_EINVAL;
	memcpy(name, spec, n);
	name[n] = '\0';
	*count = 1;
	*rest = NULL;
	if (c1 == NULL)
		return 0;
	*count = strtoull(c1 + 1, &end, 10);
	if (end == c1 + 1 || *count == 0 || (*end != '\0' && *end != ':'))
		return ROCMD_EINVAL;
	if (*end == ':')
		*rest = end + 1;
	return 0;
}

int
rocmd_failpoint_set(const char *fail_spec, const char *kill_spec)
{
	const char *rest;

	rocmd_failpoint_armed = 0;
	fail_name[0] = kill_name[0] = fired_name[0] = '\0';
	__atomic_store_n(&hits, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&kill_hits, 0, __ATOMIC_SEQ_CST);
	fired = 0;
	fail_errno = EIO;
	if (fail_spec != NULL && *fail_spec != '\0') {
		if (spec_parse(fail_spec, fail_name, sizeof(fail_name), &fail_count, &rest) < 0)
			return ROCMD_EINVAL;
		if (rest != NULL && (fail_errno = errno_parse(rest)) < 0) {
			fail_name[0] = '\0';
			return ROCMD_EINVAL;
		}
	}
	if (kill_spec != NULL && *kill_spec != '\0') {
		if (spec_parse(kill_spec, kill_name, sizeof(kill_name), &kill_count, &rest) < 0 ||
		    rest != NULL) {
			kill_name[0] = '\0';
			return ROCMD_EINVAL;
		}
	}
	rocmd_failpoint_armed = fail_name[0] != '\0' || kill_name[0] != '\0';
	return 0;
}

__attribute__((constructor)) static void
failpoint_from_env(void)
{
	const char *f = getenv("ROCMD_FAILPOINT"), *k = getenv("ROCMD_KILLPOINT");

	if ((f != NULL || k != NULL) && rocmd_failpoint_set(f, k) < 0)
		fprintf(stderr, "rocmd: ignoring malformed ROCMD_FAILPOINT/ROCMD_KILLPOINT\n");
}

int
rocmd_failpoint_hit(const char *name)
{
	uint64_t n;

	if (fail_name[0] == '\0')
		return 0;
	if (strcmp(fail_name, "*") != 0 && strcmp(fail_name, name) != 0)
		return 0;
	n = __atomic_add_fetch(&hits, 1, __ATOMIC_SEQ_CST);
	if (n != fail_count)
		return 0;
	fired = 1;
	snprintf(fired_name, sizeof(fired_name), "%s", name);
	return rocmd_err_errno(fail_errno);
}

void
rocmd_killpoint_hit(const char *name)
{
	uint64_t n;

	if (kill_name[0] == '\0')
		return;
	if (strcmp(kill_name, "*") != 0 && strcmp(kill_name, name) != 0)
		return;
	n = __atomic_add_fetch(&kill_hits, 1, __ATOMIC_SEQ_CST);
	if (n == kill_count) {
#ifdef SIGKILL
		raise(SIGKILL);
#endif
		_exit(137); /* Windows: no SIGKILL; end as abruptly */
	}
}

uint64_t
rocmd_failpoint_hits(void)
{
	return __atomic_load_n(&hits, __ATOMIC_SEQ_CST);
}

int
rocmd_failpoint_fired(void)
{
	return fired;
}

const char *
rocmd_failpoint_fired_name(void)
{
	return fired_name;
}
