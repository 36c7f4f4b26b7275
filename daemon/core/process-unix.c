/*
 * Process set-up on Unix (see process.h): SIGPIPE ignored (a vanished client
 * is a write error, not a death), the descriptor limit raised to the hard
 * limit (1000 connections need 1000 descriptors), and the double-fork detach
 * whose original process waits on a pipe for one NUL byte (ready) or an
 * error message, and exits accordingly.
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
		if (n == 1 && msg[0] == '\0')
			_exit(0);
		if (n > 0) {
			msg[n] = '\0';
			fprintf(stderr, "rocmd: %s\n", msg);
		} else {
			fprintf(stderr, "rocmd: the daemon exited during start-up\n");
		}
		_exit(1);
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

void
rocmd_process_report(const char *msg)
{
	if (ready_fd < 0)
		return;
	if (msg == NULL)
		msg = ""; /* the NUL byte alone means ready */
	if (write(ready_fd, msg, strlen(msg) + (msg[0] == '\0')) < 0)
		log_debug("cannot report to the parent: %s", strerror(errno));
	close(ready_fd);
	ready_fd = -1;
}
