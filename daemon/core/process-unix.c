/*
 * Process set-up on Unix (see process.h): SIGPIPE ignored (a vanished client
 * is a write error, not a death), the descriptor limit raised to the hard
 * limit (1000 connections need 1000 descriptors), and the double-fork detach
 * whose original process waits on a pipe for the daemon's report: one byte,
 * the exit status (0: ready), then the reason it could not start; the
 * original process prints the reason and exits with that status.
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/log.h"

static int ready_fd = -1; /* write end of the readiness pipe, when detached */

void
rocmd_process_init(void)
{
	struct rlimit rl;

	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			log_warn("cannot raise the descriptor limit: %s", strerror(errno));
	}
}

int
rocmd_process_detach(void)
{
	int p[2], devnull;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		char msg[1024];
		ssize_t n;
		close(p[1]);
		n = read(p[0], msg, sizeof(msg) - 1);
		if (n >= 1 && msg[0] == '\0')
			_exit(0);
		if (n <= 0) {
			fprintf(stderr, "rocmd: the daemon exited during start-up\n");
			_exit(1);
		}
		msg[n] = '\0';
		if (n > 1)
			fprintf(stderr, "rocmd: %s\n", msg + 1);
		_exit((unsigned char)msg[0]);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	ready_fd = p[1];
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		/* stderr stays until start-up succeeded; then logs go to the file. */
		close(devnull);
	}
	if (chdir("/") != 0)
		return -errno;
	return 0;
}

int
rocmd_process_detached(void)
{
	return ready_fd >= 0;
}

void
rocmd_process_report(int status, const char *msg)
{
	char buf[1024];
	int devnull;

	if (ready_fd < 0)
		return;
	buf[0] = (char)(status != 0 ? (status & 0xff ? status & 0xff : 1) : 0);
	snprintf(buf + 1, sizeof(buf) - 1, "%s", status != 0 && msg != NULL ? msg : "");
	if (write(ready_fd, buf, 1 + strlen(buf + 1)) < 0)
		log_debug("cannot report to the parent: %s", strerror(errno));
	close(ready_fd);
	ready_fd = -1;
	if (status != 0)
		return;
	/* Serving: the terminal that started rocmd is no longer its business. */
	rocmd_log_set_stderr(0);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDERR_FILENO);
		close(devnull);
	}
}
