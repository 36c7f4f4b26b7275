/*
 * Helper programs with a time limit: see spawn.h. The child's stdout is a
 * pipe read with poll until it closes or the deadline passes; then the child
 * is killed (SIGKILL: it may be stuck inside a GPU driver) and reaped.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
rocmd_child_run(char *const argv[], char *const envp[], int timeout_ms, char *out, size_t outlen,
                int *status)
{
	static char *const empty_env[] = {NULL};
	posix_spawn_file_actions_t fa;
	size_t used = 0;
	long long deadline = mono_ms() + timeout_ms;
	int p[2], rc, err = 0, st = 0;
	pid_t pid;

	if (outlen > 0)
		out[0] = '\0';
	if (status != NULL)
		*status = 0;
	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp != NULL ? envp : empty_env);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		return -rc;
	}
	for (;;) {
		struct pollfd pfd = {.fd = p[0], .events = POLLIN};
		long long left = deadline - mono_ms();
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			err = ROCMD_ETIMEDOUT;
			kill(pid, SIGKILL);
			break;
		}
		rc = poll(&pfd, 1, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (outlen > 0 && used < outlen - 1) {
			size_t take = (size_t)n < outlen - 1 - used ? (size_t)n : outlen - 1 - used;
			memcpy(out + used, buf, take);
			used += take;
			out[used] = '\0';
		}
	}
	close(p[0]);
	/* Output closed; the child may still hang on its way out. */
	while (err == 0) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			goto reaped;
		if (w < 0 && errno != EINTR)
			goto reaped;
		if (mono_ms() >= deadline) {
			err = ROCMD_ETIMEDOUT;
			kill(pid, SIGKILL);
			break;
		}
		usleep(5000);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
reaped:
	if (status != NULL)
		*status = st;
	return err;
}

int
rocmd_child_crashed(int status, char *what, size_t whatlen)
{
	if (!WIFSIGNALED(status))
		return 0;
	snprintf(what, whatlen, "signal %d", WTERMSIG(status));
	return 1;
}

int
rocmd_child_exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
