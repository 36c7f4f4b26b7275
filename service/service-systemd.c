/*
 * rocmd under systemd: the notify protocol and socket activation (see
 * service.h).
 *
 * The notify protocol is implemented here rather than taken from
 * libsystemd's sd_notify: it is one datagram of "KEY=VALUE\n" lines sent to
 * the AF_UNIX socket named by $NOTIFY_SOCKET (a leading '@' means the
 * abstract namespace), documented as a stable interface in sd_notify(3).
 * Doing it ourselves keeps libsystemd (and its own dependencies) out of the
 * daemon's address space and out of the Debian package's dependencies, and
 * makes the same binary work where systemd is absent. The same goes for
 * sd_listen_fds(3): $LISTEN_PID must be our pid, $LISTEN_FDS counts the
 * descriptors starting at 3.
 *
 * The environment variables are read once and removed, so that processes
 * rocmd starts later (compilers, GPU probes) never talk to systemd in our name.
 * The watchdog keep-alive is a timer on the loop thread at half the interval
 * systemd asked for, so a wedged loop is what stops the pings; without
 * $WATCHDOG_USEC for our pid there is no timer at all.
 */
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <uv.h>

#include "common/log.h"
#include "daemon/core/server.h"

#define LISTEN_FDS_START 3

static struct {
	int inited;
	struct sockaddr_un addr; /* NOTIFY_SOCKET */
	socklen_t addrlen;       /* 0: no service manager listens */
	int fd;                  /* datagram socket, opened on first use */
	uint64_t watchdog_usec;  /* 0: no watchdog for us */
	int listen_fd;           /* socket activation: the passed socket, or -1 */
	uv_timer_t watchdog;
	int timer_on;
} sd = {.fd = -1, .listen_fd = -1};

static unsigned long long
env_ull(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (v == NULL || v[0] < '0' || v[0] > '9')
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno != 0 || *end != '\0' ? 0 : n;
}

/* Reads and removes the variables systemd gave us; idempotent. */
static void
env_init(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	unsigned long long wpid, lpid, nfds;
	size_t len;

	if (sd.inited)
		return;
	sd.inited = 1;
	if (path != NULL && (path[0] == '/' || path[0] == '@') &&
	    (len = strlen(path)) < sizeof(sd.addr.sun_path)) {
		sd.addr.sun_family = AF_UNIX;
		memcpy(sd.addr.sun_path, path, len);
		if (path[0] == '@')
			sd.addr.sun_path[0] = '\0';
		sd.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	/* WATCHDOG_PID may be absent (older systemd); when present it must be us. */
	wpid = env_ull("WATCHDOG_PID");
	if (wpid == 0 || wpid == (unsigned long long)getpid())
		sd.watchdog_usec = env_ull("WATCHDOG_USEC");
	lpid = env_ull("LISTEN_PID");
	nfds = env_ull("LISTEN_FDS");
	if (lpid == (unsigned long long)getpid() && nfds >= 1) {
		sd.listen_fd = LISTEN_FDS_START;
		fcntl(sd.listen_fd, F_SETFD, FD_CLOEXEC);
		if (nfds > 1)
			log_warn("socket activation passed %llu sockets; using the first", nfds);
		/* The others (none with rocmd.socket) are closed so they cannot leak. */
		for (unsigned long long i = 1; i < nfds && i < 64; i++)
			close(LISTEN_FDS_START + (int)i);
	}
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

/* Sends one notify datagram; failures are logged once at debug level. */
static void
notify(const char *msg)
{
	env_init();
	if (sd.addrlen == 0)
		return;
	if (sd.fd < 0)
		sd.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sd.fd < 0 || sendto(sd.fd, msg, strlen(msg), MSG_NOSIGNAL,
				(const struct sockaddr *)&sd.addr, sd.addrlen) < 0)
		log_debug("sd_notify(%s): %s", msg, strerror(errno));
}

static void
vnotify_status(const char *prefix, const char *fmt, va_list ap)
{
	char msg[1024];
	int n = snprintf(msg, sizeof(msg), "%sSTATUS=", prefix);

	if (n < 0 || (size_t)n >= sizeof(msg))
		return;
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	/* A status is one line: the protocol separates assignments with newlines. */
	for (char *p = msg + n; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	notify(msg);
}

int
rocmd_service_run(int argc, char **argv, rocmd_service_main_fn main_fn)
{
	return main_fn(argc, argv);
}

int
rocmd_service_managed(void)
{
	env_init();
	return sd.addrlen != 0;
}

static void
on_watchdog(uv_timer_t *t)
{
	notify("WATCHDOG=1");
}

int
rocmd_service_attach(struct rocmd_server *srv)
{
	uint64_t ms;
	int rc;

	env_init();
	if (sd.watchdog_usec == 0 || sd.timer_on)
		return 0;
	ms = sd.watchdog_usec / 2000;
	if (ms == 0)
		ms = 1;
	uv_timer_init(srv->loop, &sd.watchdog);
	rc = uv_timer_start(&sd.watchdog, on_watchdog, ms, ms);
	if (rc < 0) {
		uv_close((uv_handle_t *)&sd.watchdog, NULL);
		return rc;
	}
	uv_unref((uv_handle_t *)&sd.watchdog);
	sd.timer_on = 1;
	log_info("systemd watchdog: pinging every %llu ms", (unsigned long long)ms);
	return 0;
}

void
rocmd_service_detach(void)
{
	if (sd.timer_on && !uv_is_closing((uv_handle_t *)&sd.watchdog))
		uv_close((uv_handle_t *)&sd.watchdog, NULL);
	sd.timer_on = 0;
}

void
rocmd_service_ready(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnotify_status("READY=1\n", fmt, ap);
	va_end(ap);
}

void
rocmd_service_status(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnotify_status("", fmt, ap);
	va_end(ap);
}

void
rocmd_service_stopping(const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "STOPPING=1\nSTATUS=Stopping: %s", why);
	notify(msg);
	/* Draining may take the grace period; keep pinging until the loop ends. */
}

int
rocmd_service_listen_fd(void)
{
	int fd;

	env_init();
	fd = sd.listen_fd;
	sd.listen_fd = -1;
	return fd;
}
