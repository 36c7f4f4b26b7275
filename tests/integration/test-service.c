/*
 * rocmd under a service manager, without one installed: this test plays
 * systemd. It binds the notify datagram socket and checks what the real
 * rocmd sends (READY=1 with a STATUS line, WATCHDOG=1 only when
 * WATCHDOG_USEC names our pid, STOPPING=1 on SIGTERM), and it passes a
 * listening socket as fd 3 with LISTEN_FDS/LISTEN_PID (socket activation)
 * and checks that rocmd serves on it, binds nothing of its own and leaves
 * the socket in place when it stops. TAP output.
 *
 * Every wait is for a condition (a datagram, an answer, an exit), bounded
 * only by GUARD_MS against a hang, so a rocmd slowed down (a loaded machine,
 * valgrind) passes or fails alike. The one window, that no WATCHDOG=1 comes
 * when none is asked for, ends with an answered hello: rocmd's loop ran
 * after any watchdog timer it could have armed was due.
 *
 * Usage: test-service PATH-TO-ROCMD
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD_MS 120000 /* against a hang only: never a figure */

static const char *rocmd;
static char dir[] = "/tmp/rocmd-test-service-XXXXXX";
static int failed, ntest;

static void
ok(int cond, const char *name)
{
	ntest++;
	printf("%sok %d - %s\n", cond ? "" : "not ", ntest, name);
	if (!cond)
		failed++;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
unix_socket(int type, const char *path, struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "path too long: %s\n", path);
		exit(1);
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return fd;
}

/* Binds the notify socket systemd would own. */
static int
notify_socket(const char *path)
{
	struct sockaddr_un sa;
	int fd = unix_socket(SOCK_DGRAM, path, &sa);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("notify socket");
		exit(1);
	}
	return fd;
}

/*
 * Starts rocmd in the foreground with ENV (NAME=VALUE strings, NULL-ended)
 * added. LISTEN_FD >= 0 is passed as fd 3 with LISTEN_PID set to the child's
 * own pid, as systemd does.
 */
static pid_t
spawn(const char *sock, char *const env[], int listen_fd)
{
	char state[256], config[256];
	pid_t pid;

	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(config, sizeof(config), "%s/rocmd.json", dir);
	pid = fork();
	if (pid != 0)
		return pid;
	for (int i = 0; env[i] != NULL; i++)
		putenv(env[i]);
	if (listen_fd >= 0) {
		char buf[32];
		/* dup2 onto itself keeps close-on-exec: clear it explicitly. */
		if ((listen_fd != 3 && dup2(listen_fd, 3) < 0) || fcntl(3, F_SETFD, 0) != 0)
			_exit(126);
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		setenv("LISTEN_PID", buf, 1);
		setenv("LISTEN_FDS", "1", 1);
	}
	execl(rocmd, rocmd, "--foreground", "--state-dir", state, "--socket", sock, "--config",
	      config, "--log-level", "info", (char *)NULL);
	_exit(127);
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* Appends the datagrams that arrive to LOG until NEEDLE is in it, counted
 * from offset FROM, at least N times (N 0: only those already queued); 1 if
 * it came, 0 at GUARD_MS. */
static int
collect(int fd, char *log, size_t loglen, size_t from, const char *needle, int n)
{
	int64_t end = now_ms() + GUARD_MS;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char buf[2048];
		ssize_t got;
		size_t used = strlen(log);
		int64_t left = end - now_ms();

		if (n > 0 && count(log + from, needle) >= n)
			return 1;
		if (left <= 0 || poll(&p, 1, n > 0 ? (int)left : 0) <= 0) {
			if (n == 0 || left <= 0)
				return n == 0;
			continue;
		}
		got = recv(fd, buf, sizeof(buf) - 1, 0);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		snprintf(log + used, loglen - used, "%s\n--\n", buf);
	}
}

static int
wait_exit(pid_t pid, int ms)
{
	int64_t end = now_ms() + ms;
	int status;

	while (now_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void
test_notify(void)
{
	char sock[256], nsock[256], env_notify[300], log[16384] = "";
	char *env[] = {env_notify, "WATCHDOG_USEC=200000", NULL};
	int fd, rc;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rocmd.sock", dir);
	snprintf(nsock, sizeof(nsock), "%s/notify", dir);
	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", nsock);
	fd = notify_socket(nsock);
	pid = spawn(sock, env, -1);
	collect(fd, log, sizeof(log), 0, "READY=1", 1);
	ok(strstr(log, "READY=1\nSTATUS=Listening on ") != NULL, "READY=1 with a STATUS line");
	ok(collect(fd, log, sizeof(log), 0, "WATCHDOG=1", 5),
	   "WATCHDOG=1 every 100 ms for WATCHDOG_USEC=200000");
	kill(pid, SIGTERM);
	collect(fd, log, sizeof(log), 0, "STOPPING=1", 1);
	ok(strstr(log, "STOPPING=1\nSTATUS=Stopping: SIGTERM") != NULL, "STOPPING=1 on SIGTERM");
	rc = wait_exit(pid, GUARD_MS);
	ok(rc == 0, "clean exit after SIGTERM");
	if (failed)
		printf("# datagrams:\n%s", log);
	close(fd);
	unlink(nsock);
}

static int hello(const char *path);

/*
 * Collects the datagrams of a rocmd started with a watchdog that is not its
 * own (or none) into LOG: until READY=1, then for a second, then until a
 * hello on SOCK is answered (so the loop ran after any watchdog timer it
 * could have armed was due), then what is queued. 1 if READY=1 came and
 * the hello was answered.
 */
static int
quiet_after_ready(int fd, const char *sock, char *log, size_t loglen)
{
	int64_t end = now_ms() + GUARD_MS;
	int answered = 0;

	if (!collect(fd, log, loglen, 0, "READY=1", 1))
		return 0;
	usleep(1000000);
	while (!answered && now_ms() < end)
		if (!(answered = hello(sock)))
			usleep(50000);
	collect(fd, log, loglen, 0, "", 0);
	return answered;
}

static void
test_no_watchdog(void)
{
	char sock[256], nsock[256], env_notify[300], log[16384] = "";
	/* WATCHDOG_PID names another process: the watchdog is not ours. */
	char *env[] = {env_notify, "WATCHDOG_USEC=100000", "WATCHDOG_PID=1", NULL};
	char *env2[] = {env_notify, NULL};
	int fd;
	pid_t pid;

	snprintf(sock, sizeof(sock), "%s/rocmd.sock", dir);
	snprintf(nsock, sizeof(nsock), "%s/notify2", dir);
	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", nsock);
	fd = notify_socket(nsock);
	pid = spawn(sock, env, -1);
	ok(quiet_after_ready(fd, sock, log, sizeof(log)) && count(log, "WATCHDOG=1") == 0,
	   "no WATCHDOG=1 when WATCHDOG_PID is another process");
	kill(pid, SIGTERM);
	ok(wait_exit(pid, GUARD_MS) == 0, "clean exit");
	log[0] = '\0';
	pid = spawn(sock, env2, -1);
	ok(quiet_after_ready(fd, sock, log, sizeof(log)) && count(log, "WATCHDOG=1") == 0,
	   "no WATCHDOG=1 without WATCHDOG_USEC");
	kill(pid, SIGTERM);
	ok(wait_exit(pid, GUARD_MS) == 0, "clean exit");
	close(fd);
}

/* Sends hello on a fresh connection to PATH; 1 if rocmd answered it. */
static int
hello(const char *path)
{
	static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\","
				  "\"params\":{\"client\":\"test-service\",\"protocol\":1}}";
	unsigned char hdr[4] = {0, 0, 0, (unsigned char)(sizeof(msg) - 1)};
	struct sockaddr_un sa;
	char buf[4096];
	ssize_t n, got = 0;
	struct timeval tv = {.tv_sec = 2};
	int fd = unix_socket(SOCK_STREAM, path, &sa), answered = 0;

	/* A socket nobody accepts on still takes the connection: bound the wait. */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    write(fd, hdr, 4) != 4 || write(fd, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
		goto out;
	while (got < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0) {
		got += n;
		buf[got] = '\0';
		if (got > 4 && strstr(buf + 4, "\"server\":\"rocmd\"") != NULL) {
			answered = 1;
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return answered;
}

static void
test_socket_activation(void)
{
	char act[256], own[256];
	char *env[] = {NULL};
	struct sockaddr_un sa;
	struct stat st;
	int lfd, answered = 0;
	pid_t pid;

	snprintf(act, sizeof(act), "%s/activated.sock", dir);
	snprintf(own, sizeof(own), "%s/own.sock", dir);
	lfd = unix_socket(SOCK_STREAM, act, &sa);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 16) != 0) {
		perror("activation socket");
		exit(1);
	}
	pid = spawn(own, env, lfd);
	for (int64_t end = now_ms() + GUARD_MS; !answered && now_ms() < end;) {
		answered = hello(act);
		if (!answered)
			usleep(50000);
	}
	ok(answered, "serves on the socket passed as fd 3 (LISTEN_FDS=1, LISTEN_PID=its pid)");
	ok(lstat(own, &st) != 0, "binds no socket of its own under socket activation");
	kill(pid, SIGTERM);
	ok(wait_exit(pid, GUARD_MS) == 0, "clean exit");
	ok(lstat(act, &st) == 0 && S_ISSOCK(st.st_mode),
	   "leaves the passed socket in place (it belongs to rocmd.socket)");
	close(lfd);
}

int
main(int argc, char **argv)
{
	char path[300];
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PATH-TO-ROCMD\n", argv[0]);
		return 2;
	}
	rocmd = argv[1];
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/rocmd.json", dir);
	f = fopen(path, "w");
	if (f == NULL || fputs("{}\n", f) < 0 || fclose(f) != 0)
		return 1;
	printf("1..12\n");
	test_notify();
	test_no_watchdog();
	test_socket_activation();
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return failed ? 1 : 0;
}
