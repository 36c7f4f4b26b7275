/*
 * The failpoint state: one armed fault and one armed kill point, parsed from
 * the environment on first use (a constructor) or set by tests. Counting is
 * atomic so a multi-threaded caller still fails exactly one operation. With
 * ROCMD_FAILPOINT_LOG every hit is also written to a file, which is how the
 * fault harness (tests/fault/) counts a daemon's failure points.
 */
#include "failpoint.h"

#ifndef _WIN32
#include <dlfcn.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
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
/* The kind of the armed fault: an errno (fail_errno), a crash, a short write. */
enum fault_kind { FAULT_ERRNO, FAULT_KILL, FAULT_SHORT };
static enum fault_kind fail_kind;
static uint64_t all_hits;
static int log_fd = -1;

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

/* One line to the ROCMD_FAILPOINT_LOG file, in one write(2). */
static void
log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
log_line(const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	line[n - 1] = '\n';
	if (write(log_fd, line, (size_t)n) < 0) {
		/* A full disk must not change what the process does. */
	}
}

/* A short write through the fault harness's preloaded library; 0 when there
 * is none. */
static int
short_write_arm(void)
{
#ifndef _WIN32
	void (*arm)(void);
	*(void **)&arm = dlsym(RTLD_DEFAULT, "rocmd_fault_short_write");
	if (arm != NULL) {
		arm();
		return 1;
	}
#endif
	return 0;
}

static int
name_is_write(const char *name)
{
	size_t n = strlen(name);

	return n >= 6 && strcmp(name + n - 6, ".write") == 0;
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
	__atomic_store_n(&all_hits, 0, __ATOMIC_SEQ_CST);
	fired = 0;
	fail_errno = EIO;
	fail_kind = FAULT_ERRNO;
	if (fail_spec != NULL && *fail_spec != '\0') {
		if (spec_parse(fail_spec, fail_name, sizeof(fail_name), &fail_count, &rest) < 0)
			return ROCMD_EINVAL;
		if (rest != NULL && strcmp(rest, "KILL") == 0)
			fail_kind = FAULT_KILL;
		else if (rest != NULL && strcmp(rest, "SHORT") == 0)
			fail_kind = FAULT_SHORT;
		else if (rest != NULL && (fail_errno = errno_parse(rest)) < 0) {
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
	rocmd_failpoint_armed = fail_name[0] != '\0' || kill_name[0] != '\0' || log_fd >= 0;
	return 0;
}

__attribute__((constructor)) static void
failpoint_from_env(void)
{
	const char *f = getenv("ROCMD_FAILPOINT"), *k = getenv("ROCMD_KILLPOINT");
	const char *l = getenv("ROCMD_FAILPOINT_LOG"), *pid = getenv("ROCMD_FAILPOINT_PID");

	if (pid != NULL && *pid != '\0' && strtol(pid, NULL, 10) != (long)getpid())
		return;
	if (l != NULL && *l != '\0') {
#ifdef O_CLOEXEC
		log_fd = open(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
#else
		log_fd = open(l, O_WRONLY | O_CREAT | O_APPEND, 0644);
#endif
		if (log_fd < 0)
			fprintf(stderr, "rocmd: cannot open ROCMD_FAILPOINT_LOG %s\n", l);
		rocmd_failpoint_armed = log_fd >= 0;
	}
	if ((f != NULL || k != NULL) && rocmd_failpoint_set(f, k) < 0)
		fprintf(stderr, "rocmd: ignoring malformed ROCMD_FAILPOINT/ROCMD_KILLPOINT\n");
}

static const char *
kind_name(void)
{
	switch (fail_kind) {
	case FAULT_KILL:
		return "KILL";
	case FAULT_SHORT:
		return "SHORT";
	default:
		return rocmd_err_errno_name(fail_errno);
	}
}

int
rocmd_failpoint_hit(const char *name)
{
	uint64_t n, all = __atomic_add_fetch(&all_hits, 1, __ATOMIC_SEQ_CST);

	if (log_fd >= 0)
		log_line("fp %llu %s\n", (unsigned long long)all, name);
	if (fail_name[0] == '\0')
		return 0;
	if (strcmp(fail_name, "*") != 0 && strcmp(fail_name, name) != 0)
		return 0;
	n = __atomic_add_fetch(&hits, 1, __ATOMIC_SEQ_CST);
	if (n != fail_count)
		return 0;
	fired = 1;
	snprintf(fired_name, sizeof(fired_name), "%s", name);
	if (log_fd >= 0)
		log_line("fired fp %llu %s %s\n", (unsigned long long)all, name, kind_name());
	switch (fail_kind) {
	case FAULT_KILL:
#ifdef SIGKILL
		raise(SIGKILL);
#endif
		_exit(137);
	case FAULT_SHORT:
		if (!name_is_write(name) || !short_write_arm()) {
			if (log_fd >= 0)
				log_line("short write not applied at %s (%s)\n", name,
				         name_is_write(name) ? "no fault-preload" : "not a write");
		}
		return 0;
	default:
		return rocmd_err_errno(fail_errno);
	}
}

void
rocmd_killpoint_hit(const char *name)
{
	uint64_t n;

	if (log_fd >= 0 && kill_name[0] == '\0') {
		/* Counting only: every kill point, as "*:N" would count them. */
		n = __atomic_add_fetch(&kill_hits, 1, __ATOMIC_SEQ_CST);
		log_line("kp %llu %s\n", (unsigned long long)n, name);
		return;
	}
	if (kill_name[0] == '\0')
		return;
	if (strcmp(kill_name, "*") != 0 && strcmp(kill_name, name) != 0)
		return;
	n = __atomic_add_fetch(&kill_hits, 1, __ATOMIC_SEQ_CST);
	if (log_fd >= 0)
		log_line("kp %llu %s\n", (unsigned long long)n, name);
	if (n == kill_count) {
		if (log_fd >= 0)
			log_line("fired kp %llu %s\n", (unsigned long long)n, name);
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
