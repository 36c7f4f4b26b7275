/*
 * The evaluation process on POSIX systems (see measure-os.h): fork() without
 * exec, so the child runs measure_child_serve() on the parent's copy of the
 * specification. The child keeps only its two pipe ends (tune_child_init:
 * no daemon socket, lock or database survives into it) and dies with the
 * thread that forked it. Reads poll() in slices of at most 10 ms while a
 * cancel flag is given; a cancelled child is SIGKILLed and reaped on a
 * detached thread, so a yield does not wait for a GPU context's teardown.
 */
#include "kernels/measure-os.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "kernels/child.h"

struct measure_proc {
	pid_t pid;
	int wfd, rfd;
	volatile pid_t live; /* the child, for measure_proc_kill() */
};

double
measure_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Writes all of BUF. A reader that died (a child that crashed while idle)
 * must give EPIPE, not a SIGPIPE that kills the caller: the signal is blocked
 * in this thread for the write and a pending one is consumed.
 */
static int
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	sigset_t pipe_set, old;
	int err = 0, epipe = 0;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			epipe = n < 0 && errno == EPIPE;
			err = ROCMD_EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (epipe && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = {0, 0};

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* See measure_proc_read(). */
static int
read_all(int fd, void *buf, size_t len, double deadline, volatile int *cancel)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n;

		if (deadline > 0 || cancel != NULL) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			double left = deadline > 0 ? deadline - measure_mono_ms() : 1e9;
			int rc, slice;

			if (cancel != NULL && *cancel)
				return ROCMD_ECANCELED;
			if (left <= 0)
				return ROCMD_ETIMEDOUT;
			slice = (int)ceil(left);
			if (cancel != NULL && slice > 10)
				slice = 10;
			rc = poll(&pfd, 1, slice);
			if (rc < 0 && errno == EINTR)
				continue;
			if (rc == 0)
				continue; /* the deadline and the flag are checked above */
		}
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cancel != NULL && *cancel ? ROCMD_ECANCELED : ROCMD_ECLOSED;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
io_read(void *ctx, void *buf, size_t len)
{
	return read_all(((int *)ctx)[0], buf, len, 0, NULL);
}

static int
io_write(void *ctx, const void *buf, size_t len)
{
	return write_all(((int *)ctx)[1], buf, len);
}

/* The fork()ed child: never returns. */
static void
child_main(const struct measure_spec *spec, int rfd, int wfd)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGPIPE};
	int fds[2] = {rfd, wfd};
	struct measure_io io = {io_read, io_write, fds};
	size_t i;

	/* The parent's handlers (a test runner's, a daemon's) are not ours: a
	 * crashing candidate must kill this process, and the watchdog see it. */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	/* Ctrl-C is for the parent, which stops cleanly; a child killed by it
	 * would look like a crashing candidate. */
	signal(SIGINT, SIG_IGN);
	_exit(measure_child_serve(spec, &io));
}

int
measure_proc_new(struct measure_proc **out)
{
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? ROCMD_ENOMEM : 0;
}

int
measure_proc_alive(const struct measure_proc *c)
{
	return c != NULL && c->pid > 0;
}

int
measure_proc_start(struct measure_proc *c, const struct measure_spec *spec)
{
	int to_child[2], from_child[2], err;
	pid_t pid, parent;

	if (pipe2(to_child, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(from_child, O_CLOEXEC) < 0) {
		err = -errno;
		close(to_child[0]);
		close(to_child[1]);
		return err;
	}
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(to_child[0]);
		close(to_child[1]);
		close(from_child[0]);
		close(from_child[1]);
		return err;
	}
	if (pid == 0) {
		int keep[2] = {to_child[0], from_child[1]};

		tune_child_init(parent, keep, 2);
		child_main(spec, to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	c->pid = pid;
	c->live = pid;
	c->wfd = to_child[1];
	c->rfd = from_child[0];
	return 0;
}

int
measure_proc_write(struct measure_proc *c, const void *buf, size_t len)
{
	return write_all(c->wfd, buf, len);
}

int
measure_proc_read(struct measure_proc *c, void *buf, size_t len, double deadline,
                  volatile int *cancel)
{
	return read_all(c->rfd, buf, len, deadline, cancel);
}

void
measure_proc_stop(struct measure_proc *c, int kill_it, char *what, size_t whatlen)
{
	int st = 0;

	if (c == NULL || c->pid <= 0)
		return;
	c->live = 0;
	close(c->wfd);
	close(c->rfd);
	if (kill_it)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	if (what == NULL)
		return;
	if (WIFSIGNALED(st))
		snprintf(what, whatlen, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(what, whatlen, "exited with %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void *
reaper(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;

	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return NULL;
}

void
measure_proc_cancel(struct measure_proc *c)
{
	pthread_attr_t attr;
	pthread_t th;
	int started = 0;

	if (c == NULL || c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&th, &attr, reaper, (void *)(intptr_t)c->pid) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!started) {
		measure_proc_stop(c, 1, NULL, 0);
		return;
	}
	c->live = 0;
	close(c->wfd);
	close(c->rfd);
	c->pid = 0;
}

void
measure_proc_kill(struct measure_proc *c)
{
	pid_t pid = c != NULL ? c->live : 0;

	if (pid > 0)
		kill(pid, SIGKILL);
}

void
measure_proc_free(struct measure_proc *c)
{
	if (c == NULL)
		return;
	measure_proc_stop(c, 0, NULL, 0);
	free(c);
}

int
tune_evaluator_child(int argc, char **argv)
{
	/* A fork()ed child needs no command line of its own. */
	return -1;
}
