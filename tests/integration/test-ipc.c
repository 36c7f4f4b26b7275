/*
 * Integration tests of the daemon's IPC: the real rocmd binary on a private
 * socket and state folder, driven over raw sockets so that hostile input can
 * be sent byte for byte. Each bad input must be answered with an error or
 * cost only its own connection, while a second client keeps getting answers.
 *
 * Usage: test-ipc PATH-TO-ROCMD
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "common/proto.h"
#include "db/db.h"

static const char *rocmd_bin;

struct daemon {
	char dir[256];
	char state[300];
	char sock[300];
	char config[300];
	pid_t pid;
};

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
fill_sun(struct sockaddr_un *sa, const char *path)
{
	size_t len = strlen(path);

	assert_true(len < sizeof(sa->sun_path));
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, len + 1);
}

static int
sock_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	fill_sun(&sa, path);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static pid_t
spawn_rocmd(struct daemon *d, const char *state, const char *sock, int *errfd)
{
	int p[2] = {-1, -1};
	pid_t pid;

	if (errfd != NULL)
		assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (errfd != NULL) {
			dup2(p[1], STDERR_FILENO);
			close(p[0]);
		}
		execl(rocmd_bin, rocmd_bin, "--foreground", "--state-dir", state, "--socket", sock,
		      "--config", d->config, (char *)NULL);
		_exit(127);
	}
	if (errfd != NULL) {
		close(p[1]);
		*errfd = p[0];
	}
	return pid;
}

/*
 * Waits until the daemon PID listens on PATH. The socket's listener is asked
 * (SO_PEERCRED: the process that called listen()), because after a kill -9 the
 * dead daemon's socket may still answer for a moment: a child it was starting
 * holds a copy of the descriptor until its exec.
 */
static void
wait_for_socket(const char *path, pid_t pid)
{
	/* Generous: a loaded CI machine can take seconds to start a process. */
	for (int i = 0; i < 3000; i++) {
		struct sockaddr_un sa;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		/* Non-blocking: the old socket's queue may be full (nobody accepts). */
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), ours;

		assert_true(fd >= 0);
		fill_sun(&sa, path);
		ours = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		       getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid == pid;
		close(fd);
		if (ours)
			return;
		usleep(10000);
	}
	fail_msg("rocmd (pid %ld) did not start listening on %s", (long)pid, path);
}

static void
daemon_start_with(struct daemon *d, const char *config_json)
{
	snprintf(d->state, sizeof(d->state), "%s/state", d->dir);
	snprintf(d->sock, sizeof(d->sock), "%s/rocmd.sock", d->dir);
	snprintf(d->config, sizeof(d->config), "%s/rocmd.json", d->dir);
	write_file(d->config, config_json);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
}

static int
daemon_stop(struct daemon *d)
{
	int status = 0;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	waitpid(d->pid, &status, 0);
	d->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int
setup(void **state)
{
	struct daemon *d = calloc(1, sizeof(*d));

	snprintf(d->dir, sizeof(d->dir), "/tmp/rocmd-test-ipc-XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	chmod(d->dir, 0755);
	daemon_start_with(d, "{\"log\": {\"level\": \"warning\"}}\n");
	*state = d;
	return 0;
}

static int
teardown(void **state)
{
	struct daemon *d = *state;
	char cmd[400];

	if (d->pid > 0)
		daemon_stop(d);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", d->dir);
	free(d);
	return 0;
}

static void
send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the daemon may close first: callers check replies */
		p += n;
		len -= (size_t)n;
	}
}

static void
send_frame(int fd, const char *payload)
{
	char *frame;
	size_t len;

	assert_int_equal(rocmd_frame_encode(payload, strlen(payload), &frame, &len), 0);
	send_all(fd, frame, len);
	free(frame);
}

/* Reads exactly LEN bytes within the timeout; returns 0 or -1 (EOF, timeout). */
static int
read_exact(int fd, char *buf, size_t len, int timeout_ms)
{
	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		n = recv(fd, buf, len, 0);
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads one frame (never past it); returns its payload (caller frees) or
 * NULL at EOF or timeout. The header goes through the project's decoder. */
static char *
read_frame(int fd, int timeout_ms)
{
	struct rocmd_frame_decoder dec;
	char hdr[4], *frame = NULL, *body;
	size_t used, flen, len;

	if (read_exact(fd, hdr, 4, timeout_ms) < 0)
		return NULL;
	len = (size_t)(unsigned char)hdr[0] << 24 | (size_t)(unsigned char)hdr[1] << 16 |
	      (size_t)(unsigned char)hdr[2] << 8 | (unsigned char)hdr[3];
	body = malloc(len + 1);
	assert_non_null(body);
	if (read_exact(fd, body, len, timeout_ms) < 0) {
		free(body);
		return NULL;
	}
	rocmd_frame_decoder_init(&dec, 16u << 20);
	assert_int_equal(rocmd_frame_feed(&dec, hdr, 4, &used, &frame, &flen), 0);
	assert_int_equal(rocmd_frame_feed(&dec, body, len, &used, &frame, &flen), 0);
	assert_non_null(frame);
	assert_int_equal(flen, len);
	rocmd_frame_decoder_free(&dec);
	free(body);
	return frame;
}

/* True if the daemon closed FD (EOF) within the timeout. */
static int
closed_by_peer(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	return recv(fd, &c, 1, MSG_PEEK) <= 0;
}

static cJSON *
reply(int fd)
{
	char *frame = read_frame(fd, 5000);
	cJSON *j;

	assert_non_null(frame);
	j = cJSON_Parse(frame);
	free(frame);
	assert_non_null(j);
	return j;
}

static const char *
error_name(const cJSON *r)
{
	const cJSON *name = cJSON_GetObjectItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"), "name");
	return cJSON_IsString(name) ? name->valuestring : "";
}

static int
error_code(const cJSON *r)
{
	const cJSON *code = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code");
	return cJSON_IsNumber(code) ? code->valueint : 0;
}

static int
hello(const char *sock)
{
	int fd = sock_connect(sock);
	cJSON *r;

	assert_true(fd >= 0);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\","
		       "\"params\":{\"client\":\"test\",\"protocol\":1}}");
	r = reply(fd);
	assert_non_null(cJSON_GetObjectItem(r, "result"));
	cJSON_Delete(r);
	return fd;
}

/* The witness: a separate connection that must keep getting status answers. */
static void
assert_daemon_answers(const char *sock)
{
	int fd = hello(sock);
	cJSON *r;

	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}");
	r = reply(fd);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "pid"));
	cJSON_Delete(r);
	close(fd);
}

static void
test_truncated_frame(void **state)
{
	struct daemon *d = *state;
	int witness = hello(d->sock), fd = hello(d->sock);
	const char part[] = "\0\0\0\x64{\"jsonrpc\":";

	send_all(fd, part, sizeof(part) - 1);
	close(fd); /* EOF in the middle of the frame */
	assert_daemon_answers(d->sock);
	close(witness);
}

static void
test_length_over_limit(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	const unsigned char hdr[4] = {0x00, 0x10, 0x00, 0x01}; /* 1 MiB + 1 */
	cJSON *r;

	send_all(fd, hdr, sizeof(hdr));
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_EFRAME_TOO_BIG");
	cJSON_Delete(r);
	assert_true(closed_by_peer(fd, 5000));
	close(fd);
	assert_daemon_answers(d->sock);
}

static void
test_zero_length_frame(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	const unsigned char hdr[4] = {0, 0, 0, 0};
	cJSON *r;

	send_all(fd, hdr, sizeof(hdr));
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_EPROTO");
	cJSON_Delete(r);
	assert_true(closed_by_peer(fd, 5000));
	close(fd);
	assert_daemon_answers(d->sock);
}

static void
test_invalid_json_keeps_connection(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	cJSON *r;

	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":");
	r = reply(fd);
	assert_int_equal(error_code(r), -32700);
	cJSON_Delete(r);
	/* The stream is still in step: the same connection keeps working. */
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"status\"}");
	r = reply(fd);
	assert_non_null(cJSON_GetObjectItem(r, "result"));
	cJSON_Delete(r);
	close(fd);
}

static void
test_nesting_over_limit(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	char payload[512];
	size_t n = 0;
	cJSON *r;

	n += (size_t)snprintf(payload, sizeof(payload),
			      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"status\",\"params\":");
	for (int i = 0; i < ROCMD_PROTO_MAX_DEPTH + 1; i++)
		payload[n++] = '[';
	for (int i = 0; i < ROCMD_PROTO_MAX_DEPTH + 1; i++)
		payload[n++] = ']';
	payload[n++] = '}';
	payload[n] = '\0';
	send_frame(fd, payload);
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_ETOO_DEEP");
	cJSON_Delete(r);
	close(fd);
	assert_daemon_answers(d->sock);
}

static void
test_wrong_param_types(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	const cJSON *msg;
	cJSON *r;

	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"events.list\","
		       "\"params\":{\"limit\":\"ten\"}}");
	r = reply(fd);
	assert_int_equal(error_code(r), -32602);
	msg = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "message");
	assert_non_null(strstr(msg->valuestring, "limit"));
	cJSON_Delete(r);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"events.list\","
		       "\"params\":{\"bogus\":1}}");
	r = reply(fd);
	assert_int_equal(error_code(r), -32602);
	cJSON_Delete(r);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"events.list\","
		       "\"params\":[1,2]}");
	r = reply(fd);
	assert_int_equal(error_code(r), -32602);
	cJSON_Delete(r);
	close(fd);
}

static void
test_unknown_method(void **state)
{
	struct daemon *d = *state;
	int fd = hello(d->sock);
	cJSON *r;

	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"no.such.method\"}");
	r = reply(fd);
	assert_int_equal(error_code(r), -32601);
	assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, 9);
	cJSON_Delete(r);
	close(fd);
}

static void
test_hello_required(void **state)
{
	struct daemon *d = *state;
	int fd = sock_connect(d->sock);
	cJSON *r;

	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}");
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_EHELLO");
	cJSON_Delete(r);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"hello\","
		       "\"params\":{\"client\":\"t\",\"protocol\":0}}");
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_EVERSION");
	cJSON_Delete(r);
	close(fd);
}

static void
test_random_bytes(void **state)
{
	struct daemon *d = *state;
	unsigned char junk[8192];
	uint64_t x = 0x243f6a8885a308d3ull;

	for (int round = 0; round < 20; round++) {
		int fd = sock_connect(d->sock);
		assert_true(fd >= 0);
		for (size_t i = 0; i < sizeof(junk); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			junk[i] = (unsigned char)x;
		}
		/* Every other round, a plausible small header first. */
		if (round % 2) {
			junk[0] = junk[1] = 0;
			junk[2] &= 0x0f;
		}
		send_all(fd, junk, sizeof(junk));
		close(fd);
	}
	assert_daemon_answers(d->sock);
}

/*
 * Starts rocmd on STATE and SOCK expecting it to refuse to start: waits for it
 * (30 s at most: a hang is a failure) and returns its exit status, with what
 * it wrote to stderr in ERR.
 */
static int
expect_refusal(struct daemon *d, const char *state, const char *sock, char *err,
	       size_t errlen)
{
	int errfd, status = 0, i;
	pid_t pid = spawn_rocmd(d, state, sock, &errfd);
	ssize_t n;

	for (i = 0; i < 3000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (i == 3000) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("rocmd (pid %ld) hung instead of refusing to start", (long)pid);
	}
	n = read(errfd, err, errlen - 1);
	close(errfd);
	err[n > 0 ? n : 0] = '\0';
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
test_second_instance_refused(void **state)
{
	struct daemon *d = *state;
	char other_sock[320], err[1024] = "";

	snprintf(other_sock, sizeof(other_sock), "%s/other.sock", d->dir);
	assert_int_equal(expect_refusal(d, d->state, other_sock, err, sizeof(err)), 4);
	assert_non_null(strstr(err, "another rocmd"));
	assert_daemon_answers(d->sock);
}

static void
test_live_socket_not_replaced(void **state)
{
	struct daemon *d = *state;
	char other_state[320], err[1024] = "";

	snprintf(other_state, sizeof(other_state), "%s/state2", d->dir);
	assert_int_not_equal(expect_refusal(d, other_state, d->sock, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "socket"));
	assert_daemon_answers(d->sock);
}

static void
test_stale_socket_replaced(void **state)
{
	struct daemon *d = *state;
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	daemon_stop(d);
	/* A socket file nobody listens on, as a crashed daemon leaves behind. */
	unlink(d->sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	fill_sun(&sa, d->sock);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	assert_int_equal(stat(d->sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666);
	assert_daemon_answers(d->sock);
}

/*
 * A socket that still answers although the process that listened on it is
 * gone: what a daemon killed while starting a child leaves for a moment (the
 * child holds a copy of the listening descriptor until its exec). Here made
 * for as long as needed: A listens, forks B, which keeps the descriptor, and
 * A exits. While A lives, the socket is someone's and rocmd must leave it
 * alone; once A is gone, rocmd (holding the socket's lock) replaces it.
 */
static void
test_orphaned_listener_replaced(void **state)
{
	struct daemon *d = *state;
	struct sockaddr_un sa;
	int go[2], ready[2], quit[2], status;
	char c = 0, err[1024] = "";
	pid_t a, b = 0;

	daemon_stop(d);
	unlink(d->sock);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(quit), 0);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		/* (A long queue: wait_for_socket() below connects to this socket,
		 * and nobody accepts, until rocmd has replaced it.) */
		/* Only the ends each process reads or writes stay open. */
		close(go[1]);
		close(quit[1]);
		close(ready[0]);
		fill_sun(&sa, d->sock);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    listen(fd, SOMAXCONN) != 0)
			_exit(1);
		b = fork();
		if (b == 0) {
			/* B: holds the listening socket until the test closes "go". */
			close(quit[0]);
			close(ready[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		if (write(ready[1], &b, sizeof(b)) != (ssize_t)sizeof(b))
			_exit(1);
		/* A: exits once the test closes "quit". */
		close(go[0]);
		while (read(quit[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(go[0]);
	close(quit[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &b, sizeof(b)), (ssize_t)sizeof(b));
	close(ready[0]);

	/* A lives: its socket is not rocmd's to take. */
	assert_int_not_equal(expect_refusal(d, d->state, d->sock, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "already answering"));

	/* A is gone, B still holds the descriptor: the socket answers, but no
	 * one will ever accept there. */
	close(quit[1]);
	waitpid(a, &status, 0);
	{
		int probe = sock_connect(d->sock);
		assert_true(probe >= 0);
		close(probe);
	}
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	assert_daemon_answers(d->sock);
	close(go[1]); /* B may go */
}

/* A listener that accepts nothing, with its queue full: rocmd must refuse it
 * at once, not hang in connect(). The listener is this test process. */
static void
test_stuck_listener_refused(void **state)
{
	struct daemon *d = *state;
	struct sockaddr_un sa;
	char err[1024] = "";
	int lfd, fds[64], nfds = 0;

	daemon_stop(d);
	unlink(d->sock);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	fill_sun(&sa, d->sock);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	for (nfds = 0; nfds < 64; nfds++) {
		fds[nfds] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (connect(fds[nfds], (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			assert_int_equal(errno, EAGAIN);
			break;
		}
	}
	assert_true(nfds < 64); /* the queue is full now */
	assert_int_not_equal(expect_refusal(d, d->state, d->sock, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "queue is full"));
	for (int i = 0; i <= nfds; i++)
		close(fds[i]);
	close(lfd);
}

static void
test_connection_limit(void **state)
{
	struct daemon *d = *state;
	int fds[4];
	cJSON *r;

	daemon_stop(d);
	write_file(d->config, "{\"ipc\": {\"max_connections\": 3}}\n");
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	for (int i = 0; i < 3; i++)
		fds[i] = hello(d->sock);
	fds[3] = sock_connect(d->sock);
	r = reply(fds[3]);
	assert_string_equal(error_name(r), "ROCMD_EOVERLOAD");
	cJSON_Delete(r);
	assert_true(closed_by_peer(fds[3], 5000));
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	usleep(100000);
	assert_daemon_answers(d->sock);
}

static void
test_events_subscription(void **state)
{
	struct daemon *d = *state;
	int sub = hello(d->sock), ctl;
	const cJSON *params;
	cJSON *r;

	if (geteuid() != 0)
		skip();
	send_frame(sub, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"events.subscribe\","
			"\"params\":{\"kind\":\"daemon.log\"}}");
	r = reply(sub);
	assert_non_null(cJSON_GetObjectItem(r, "result"));
	cJSON_Delete(r);
	ctl = hello(d->sock);
	send_frame(ctl, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"daemon.set_log_level\","
			"\"params\":{\"level\":\"info\"}}");
	r = reply(ctl);
	assert_non_null(cJSON_GetObjectItem(r, "result"));
	cJSON_Delete(r);
	r = reply(sub);
	assert_string_equal(cJSON_GetObjectItem(r, "method")->valuestring, "event");
	params = cJSON_GetObjectItem(r, "params");
	assert_string_equal(cJSON_GetObjectItem(params, "kind")->valuestring, "daemon.log_level");
	cJSON_Delete(r);
	close(sub);
	close(ctl);
}

/* A large reply is in flight when SIGTERM arrives: it must arrive whole, the
 * daemon must exit 0, and the next start must see a clean previous stop. */
static void
test_sigterm_during_request(void **state)
{
	struct daemon *d = *state;
	struct rocmd_db *db;
	char path[400], why[256], msg[600];
	const cJSON *events;
	cJSON *r;
	int fd;

	daemon_stop(d);
	snprintf(path, sizeof(path), "%s/rocmd.db", d->state);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rocmd_db_event_add(db, "test.bulk", msg, NULL, NULL), 0);
	rocmd_db_close(db);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);

	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"events.list\","
		       "\"params\":{\"limit\":1000,\"kind\":\"test.\"}}");
	{
		/* Once the first bytes are readable the daemon is mid-reply, with far
		 * more queued than the socket holds: now stop it. */
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		assert_int_equal(poll(&pfd, 1, 5000), 1);
	}
	kill(d->pid, SIGTERM);
	usleep(100000);
	r = reply(fd);
	events = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "events");
	assert_true(cJSON_GetArraySize(events) > 500);
	cJSON_Delete(r);
	assert_true(closed_by_peer(fd, 5000));
	close(fd);
	{
		int status;
		waitpid(d->pid, &status, 0);
		d->pid = 0;
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	/* The socket is gone, and the next run sees a clean previous stop. */
	assert_int_not_equal(access(d->sock, F_OK), 0);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}");
	r = reply(fd);
	assert_true(cJSON_IsTrue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "previous_run_clean")));
	cJSON_Delete(r);
	close(fd);
}

/* Paging through the history: limit, more, last_id as the next after_id. */
static void
test_events_paging(void **state)
{
	struct daemon *d = *state;
	struct rocmd_db *db;
	char path[400], why[256], req[200];
	int64_t after = 0, total = 0;
	int fd, pages = 0;

	daemon_stop(d);
	snprintf(path, sizeof(path), "%s/rocmd.db", d->state);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	for (int i = 0; i < 250; i++)
		assert_int_equal(rocmd_db_event_add(db, "test.page", "page me", "{\"i\":1}", NULL),
				 0);
	rocmd_db_close(db);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	fd = hello(d->sock);
	for (;;) {
		const cJSON *res;
		cJSON *r;
		int n;
		snprintf(req, sizeof(req),
			 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"events.list\","
			 "\"params\":{\"after_id\":%lld,\"limit\":100,\"kind\":\"test.\"}}",
			 (long long)after);
		send_frame(fd, req);
		r = reply(fd);
		res = cJSON_GetObjectItem(r, "result");
		n = cJSON_GetArraySize(cJSON_GetObjectItem(res, "events"));
		total += n;
		pages++;
		after = (int64_t)cJSON_GetObjectItem(res, "last_id")->valuedouble;
		if (!cJSON_IsTrue(cJSON_GetObjectItem(res, "more"))) {
			assert_int_equal(n, 50);
			cJSON_Delete(r);
			break;
		}
		assert_int_equal(n, 100);
		cJSON_Delete(r);
	}
	assert_int_equal(total, 250);
	assert_int_equal(pages, 3);
	close(fd);
}

static void
test_kill9_is_unclean(void **state)
{
	struct daemon *d = *state;
	int fd, status;
	cJSON *r;

	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	/* The socket file is left behind; the lock died with the process. */
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}");
	r = reply(fd);
	assert_true(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "previous_run_clean")));
	cJSON_Delete(r);
	close(fd);
}

/* Kilobytes of resident memory of process PID (VmRSS), or -1. */
static long
rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void
restart_with(struct daemon *d, const char *config_json)
{
	daemon_stop(d);
	write_file(d->config, config_json);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
}

/*
 * One client sends hundreds of requests with large replies in one write and
 * never reads: the daemon must stop reading it before its queued output
 * passes the limit (not after dispatching the whole write), so its memory
 * stays bounded, and another client keeps being answered meanwhile.
 */
static void
test_flood_output_bounded(void **state)
{
	struct daemon *d = *state;
	struct rocmd_db *db;
	char path[400], why[256], msg[600], *frame;
	size_t flen, sent = 0;
	long before, after;
	int fd, n = 0;

	daemon_stop(d);
	snprintf(path, sizeof(path), "%s/rocmd.db", d->state);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rocmd_db_event_add(db, "test.flood", msg, NULL, NULL), 0);
	rocmd_db_close(db);
	restart_with(d, "{\"ipc\": {\"max_queued_output\": 4194304}}\n");
	before = rss_kb(d->pid);
	fd = hello(d->sock);
	assert_int_equal(rocmd_frame_encode("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"events.list\","
	                                    "\"params\":{\"limit\":1000}}",
	                                    strlen("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	                                           "\"events.list\",\"params\":{\"limit\":1000}}"),
	                                    &frame, &flen),
	                 0);
	/* 500 requests (each ~700 KB of reply) in as few writes as the socket takes. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (int i = 0; i < 2000 && n < 500; i++) {
		ssize_t w = send(fd, frame + sent, flen - sent, MSG_NOSIGNAL);
		if (w < 0) {
			usleep(1000);
			continue;
		}
		sent += (size_t)w;
		if (sent == flen) {
			sent = 0;
			n++;
		}
	}
	free(frame);
	assert_true(n > 40); /* far more than the limit holds */
	usleep(500000);
	assert_daemon_answers(d->sock);
	after = rss_kb(d->pid);
	/* Unbounded, 500 replies would be ~350 MB; the limit allows 4 MB + one reply. */
	print_message("rocmd RSS %ld kB before, %ld kB with %d requests pending\n", before, after,
	              n);
	assert_true(after > 0 && after - before < 64 * 1024);
	close(fd);
	usleep(100000);
	assert_daemon_answers(d->sock);
}

/* Runs FN as UID in a child; each int FN writes to OUT reaches the parent,
 * which reads them with as_user_read. The child lives until the parent
 * closes the control pipe. */
struct as_user {
	pid_t pid;
	int from_child, to_child;
};

static void
as_user(struct as_user *u, uid_t uid, void (*fn)(const char *sock, int out), const char *sock)
{
	int a[2], b[2];

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	u->pid = fork();
	assert_true(u->pid >= 0);
	if (u->pid == 0) {
		char c;
		close(a[0]);
		close(b[1]);
		if (setgid(uid) != 0 || setuid(uid) != 0)
			_exit(99);
		fn(sock, a[1]);
		while (read(b[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(a[1]);
	close(b[0]);
	u->from_child = a[0];
	u->to_child = b[1];
}

static int
as_user_read(struct as_user *u)
{
	struct pollfd pfd = {.fd = u->from_child, .events = POLLIN};
	int v = -1;

	/* A pipe: read(2), not recv(2). */
	if (poll(&pfd, 1, 30000) != 1 || read(u->from_child, &v, sizeof(v)) != sizeof(v))
		return -1000;
	return v;
}

static void
as_user_end(struct as_user *u)
{
	int status = 0;

	close(u->to_child);
	close(u->from_child);
	waitpid(u->pid, &status, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Opens 8 connections: writes 1 for each that completed the handshake, else
 * 0; keeps them open. */
static void
open_eight(const char *sock, int out)
{
	for (int i = 0; i < 8; i++) {
		int fd = sock_connect(sock), ok = 0;
		char *f;
		if (fd >= 0) {
			send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\","
			               "\"params\":{\"client\":\"test\",\"protocol\":1}}");
			f = read_frame(fd, 5000);
			ok = f != NULL && strstr(f, "\"result\"") != NULL;
			free(f);
		}
		if (write(out, &ok, sizeof(ok)) != sizeof(ok))
			_exit(98);
	}
}

/*
 * Local users cannot lock root out: a user's connections are limited, and
 * the last slots of the total are kept for root and the admin group.
 */
static void
test_admin_slots(void **state)
{
	struct daemon *d = *state;
	struct as_user u1, u2;
	int ok1 = 0, ok2 = 0, fds[3];

	if (geteuid() != 0)
		skip();
	restart_with(d, "{\"ipc\": {\"max_connections\": 12, \"admin_reserved\": 3, "
	                "\"max_connections_per_user\": 5}}\n");
	as_user(&u1, 65534, open_eight, d->sock);
	for (int i = 0; i < 8; i++)
		ok1 += as_user_read(&u1) == 1;
	assert_int_equal(ok1, 5); /* the per-user limit */
	as_user(&u2, 1, open_eight, d->sock);
	for (int i = 0; i < 8; i++)
		ok2 += as_user_read(&u2) == 1;
	assert_int_equal(ok2, 4); /* 12 - 3 kept for admins, 5 taken */
	for (int i = 0; i < 3; i++) {
		fds[i] = hello(d->sock); /* root still gets in */
	}
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	/* The second child holds a copy of the first one's pipe: end it first. */
	as_user_end(&u2);
	as_user_end(&u1);
	usleep(200000);
	assert_daemon_answers(d->sock);
}

/* A connection that never says hello is closed after ipc.hello_timeout_ms. */
static void
test_hello_timeout(void **state)
{
	struct daemon *d = *state;
	cJSON *r;
	int fd;

	restart_with(d, "{\"ipc\": {\"hello_timeout_ms\": 300}}\n");
	fd = sock_connect(d->sock);
	assert_true(fd >= 0);
	r = reply(fd);
	assert_string_equal(error_name(r), "ROCMD_EHELLO");
	cJSON_Delete(r);
	assert_true(closed_by_peer(fd, 5000));
	close(fd);
	assert_daemon_answers(d->sock);
}

/* Holds one connection after hello; writes 1 once the daemon closed it
 * (within 20 s), else 0. */
static void
idle_one(const char *sock, int out)
{
	int fd = sock_connect(sock), closed = 0;
	char *f;

	if (fd >= 0) {
		send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\","
		               "\"params\":{\"client\":\"test\",\"protocol\":1}}");
		free(read_frame(fd, 5000));
		f = read_frame(fd, 20000); /* the timeout's error, then EOF */
		closed = f != NULL && strstr(f, "ROCMD_ETIMEDOUT") != NULL && closed_by_peer(fd, 5000);
		free(f);
	}
	if (write(out, &closed, sizeof(closed)) != sizeof(closed))
		_exit(98);
}

/* A non-admin's silent connection is closed after ipc.idle_timeout_s; root's stays. */
static void
test_idle_timeout(void **state)
{
	struct daemon *d = *state;
	struct as_user u;
	int fd;

	if (geteuid() != 0)
		skip();
	restart_with(d, "{\"ipc\": {\"idle_timeout_s\": 1}}\n");
	fd = hello(d->sock);
	as_user(&u, 65534, idle_one, d->sock);
	assert_int_equal(as_user_read(&u), 1);
	as_user_end(&u);
	assert_false(closed_by_peer(fd, 100));
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}");
	cJSON_Delete(reply(fd));
	close(fd);
}

/* events.subscribe from event 0 over a history far larger than the output
 * limit: a client that reads promptly gets every event, in order, and stays
 * connected; a live event follows the history. */
static void
test_subscribe_replay_large(void **state)
{
	struct daemon *d = *state;
	struct rocmd_db *db;
	char path[400], why[256], msg[600];
	int64_t last = 0;
	int fd, ctl, events = 0, reply_seen = 0, live = 0;

	if (geteuid() != 0)
		skip();
	daemon_stop(d);
	snprintf(path, sizeof(path), "%s/rocmd.db", d->state);
	assert_int_equal(rocmd_db_open(path, &db, why, sizeof(why)), 0);
	memset(msg, 'y', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	for (int i = 0; i < 6000; i++)
		assert_int_equal(rocmd_db_event_add(db, "test.replay", msg, NULL, NULL), 0);
	rocmd_db_close(db);
	restart_with(d, "{\"ipc\": {\"max_queued_output\": 262144}}\n");
	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"events.subscribe\","
	               "\"params\":{\"after_id\":0}}");
	/* Every kind: the 6000 of the history, the daemon's own, then a live one. */
	while (!live) {
		char *f = read_frame(fd, 10000);
		const cJSON *params, *kind;
		cJSON *j;
		if (f == NULL)
			break;
		j = cJSON_Parse(f);
		free(f);
		assert_non_null(j);
		params = cJSON_GetObjectItem(j, "params");
		kind = cJSON_GetObjectItem(params, "kind");
		if (cJSON_GetObjectItem(j, "result") != NULL) {
			reply_seen = 1;
		} else if (cJSON_IsString(kind)) {
			int64_t id = (int64_t)cJSON_GetObjectItem(params, "id")->valuedouble;
			assert_true(id > last); /* in order, none twice */
			last = id;
			events += strcmp(kind->valuestring, "test.replay") == 0;
			live = strcmp(kind->valuestring, "daemon.log_level") == 0;
			if (events == 6000 && strcmp(kind->valuestring, "test.replay") == 0) {
				/* The history is through: now a live event. */
				ctl = hello(d->sock);
				send_frame(ctl, "{\"jsonrpc\":\"2.0\",\"id\":3,"
				                "\"method\":\"daemon.set_log_level\","
				                "\"params\":{\"level\":\"notice\"}}");
				cJSON_Delete(reply(ctl));
				close(ctl);
			}
		}
		cJSON_Delete(j);
	}
	assert_true(reply_seen);
	assert_int_equal(events, 6000); /* 3.6 MB through a 256 KiB limit */
	assert_true(live);
	close(fd);
	assert_daemon_answers(d->sock);
}

/* Sets the log level over a fresh connection (one event each time). */
static void
set_level(const char *sock, const char *level)
{
	char req[160];
	int fd = hello(sock);
	cJSON *r;

	snprintf(req, sizeof(req),
	         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"daemon.set_log_level\","
	         "\"params\":{\"level\":\"%s\"}}",
	         level);
	send_frame(fd, req);
	r = reply(fd);
	assert_non_null(cJSON_GetObjectItem(r, "result"));
	cJSON_Delete(r);
	close(fd);
}

/*
 * The write-ahead log deleted while rocmd runs, then kill -9: the events
 * written after the deletion used to live only in the unlinked log and were
 * lost, and the restart claimed a clean stop. Now the daemon notices at its
 * next commit, folds the log into the database and makes a new one.
 */
static void
test_wal_deleted_then_kill9(void **state)
{
	struct daemon *d = *state;
	char wal[400];
	const cJSON *events, *it;
	int fd, found = 0, status;
	cJSON *r;

	set_level(d->sock, "info");
	snprintf(wal, sizeof(wal), "%s/rocmd.db-wal", d->state);
	assert_int_equal(unlink(wal), 0);
	set_level(d->sock, "debug");
	set_level(d->sock, "warning");
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"events.list\","
	               "\"params\":{\"kind\":\"daemon.log_level\"}}");
	r = reply(fd);
	events = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "events");
	cJSON_ArrayForEach(it, events)
	{
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(it, "message"));
		found += m != NULL && (strstr(m, "set to debug") != NULL ||
		                       strstr(m, "set to warning") != NULL);
	}
	cJSON_Delete(r);
	assert_int_equal(found, 2);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"status\"}");
	r = reply(fd);
	assert_true(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "previous_run_clean")));
	cJSON_Delete(r);
	close(fd);
}

/*
 * The write-ahead log deleted just after a start, then kill -9 with nothing
 * written between: the run's own row (unclean until its stop) lived only in
 * the deleted log, so the restart read the clean stop of the run before and
 * claimed one. Now the start folds its row into the database file.
 */
static void
test_wal_deleted_at_start_then_kill9(void **state)
{
	struct daemon *d = *state;
	char wal[400];
	int fd, status;
	cJSON *r;

	daemon_stop(d); /* the run before: a clean stop */
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	snprintf(wal, sizeof(wal), "%s/rocmd.db-wal", d->state);
	unlink(wal);
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &status, 0);
	d->pid = spawn_rocmd(d, d->state, d->sock, NULL);
	wait_for_socket(d->sock, d->pid);
	fd = hello(d->sock);
	send_frame(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}");
	r = reply(fd);
	assert_true(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "previous_run_clean")));
	cJSON_Delete(r);
	close(fd);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_truncated_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_length_over_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_length_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_json_keeps_connection, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nesting_over_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_param_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_method, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello_required, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_instance_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_socket_not_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_socket_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphaned_listener_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_listener_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_subscription, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigterm_during_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill9_is_unclean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flood_output_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hello_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_subscribe_replay_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_deleted_then_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wal_deleted_at_start_then_kill9, setup, teardown),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-ROCMD\n", argv[0]);
		return 2;
	}
	rocmd_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	if (getenv("ROCMD_TEST_FILTER") != NULL) /* one test, by name pattern */
		cmocka_set_test_filter(getenv("ROCMD_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
