/*
 * The evaluation process on POSIX systems (see measure-os.h): this same
 * program started again (posix_spawn of /proc/self/exe) with the hidden
 * argument --rocmd-tune-eval and its parent's pid; main() hands such a command
 * line to tune_evaluator_child() before anything else, as on Windows. The
 * child gets its two pipe ends as descriptors 3 and 4 and nothing else of the
 * parent: not fork() without exec, because a daemon is multi-threaded (a
 * forked copy may find another thread's lock held forever) and a forked copy
 * holds every descriptor of the daemon, its listening socket and state-folder
 * lock included, until it gets round to closing them; a daemon killed in that
 * moment left a socket that answered and then reset the restarted daemon's
 * first client. The child reads its specification as the first message, asks
 * to be killed when the thread that started it dies, and serves requests
 * (measure_child_serve). Reads poll() in slices of at most 10 ms while a
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
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"

#define EVAL_ARG "--rocmd-tune-eval"
#define SELF_EXE "/proc/self/exe"
#define CHILD_RFD 3 /* the child's request pipe */
#define CHILD_WFD 4 /* its reply pipe */
#define MIN_FD 10   /* parent-side pipe ends sit above both */

extern char **environ;

/* Set by tune_evaluator_child() in a program that does not run as the
 * evaluation process: its main() takes the hidden argument, so starting it
 * again is safe. */
static int exec_ready;
static char *prog_name = (char *)"rocmd"; /* argv[0] for the child, as ps shows it */

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

/* F moved to a descriptor >= MIN_FD (close-on-exec): the spawn's dup2() onto
 * CHILD_RFD/CHILD_WFD must never find a source already sitting there. */
static int
move_high(int *f)
{
	int g = fcntl(*f, F_DUPFD_CLOEXEC, MIN_FD);

	if (g < 0)
		return -errno;
	close(*f);
	*f = g;
	return 0;
}

int
measure_proc_start(struct measure_proc *c, const struct measure_spec *spec, char *why,
		   size_t whylen)
{
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, err = 0;
	char parent[24];
	char *argv[] = {prog_name, (char *)EVAL_ARG, parent, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	pid_t pid;

	if (!exec_ready) {
		snprintf(why, whylen, "cannot start the evaluation process: this program's main() "
				      "does not call tune_evaluator_child()");
		return ROCMD_EINTERNAL;
	}
	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(from_child, O_CLOEXEC) < 0 ||
	    move_high(&to_child[0]) < 0 || move_high(&from_child[1]) < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot start the evaluation process: pipe: %s",
			 strerror(errno));
		goto fail;
	}
	snprintf(parent, sizeof(parent), "%ld", (long)getpid());
	/* Only stdin/out/err and the two pipe ends reach the child (exec closes
	 * the rest: every descriptor of ours is close-on-exec, and closefrom
	 * makes sure of it). Signals start at their defaults, unblocked: a
	 * daemon's ignored SIGPIPE is not the child's. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to_child[0], CHILD_RFD);
	posix_spawn_file_actions_adddup2(&fa, from_child[1], CHILD_WFD);
	posix_spawn_file_actions_addclosefrom_np(&fa, CHILD_WFD + 1);
	posix_spawnattr_init(&attr);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	err = posix_spawn(&pid, SELF_EXE, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (err != 0) {
		snprintf(why, whylen, "cannot start the evaluation process: %s: %s", SELF_EXE,
			 strerror(err));
		err = -err;
		goto fail;
	}
	close(to_child[0]);
	close(from_child[1]);
	c->pid = pid;
	c->live = pid;
	c->wfd = to_child[1];
	c->rfd = from_child[0];
	/* The specification is the first message. */
	err = write_all(c->wfd, spec, sizeof(*spec));
	if (err < 0) {
		measure_proc_stop(c, 1, NULL, 0);
		snprintf(why, whylen, "the evaluation process ended before it read its task");
	}
	return err;
fail:
	for (int i = 0; i < 2; i++) {
		if (to_child[i] >= 0)
			close(to_child[i]);
		if (from_child[i] >= 0)
			close(from_child[i]);
	}
	return err;
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

/* ---- the child ---- */

int
tune_evaluator_child(int argc, char **argv)
{
	static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	int fds[2] = {CHILD_RFD, CHILD_WFD};
	struct measure_io io = {io_read, io_write, fds};
	long parent;
	char tail;

	if (argc < 2 || strcmp(argv[1], EVAL_ARG) != 0) {
		exec_ready = 1;
		if (argc >= 1 && argv[0] != NULL)
			prog_name = argv[0];
		return -1;
	}
	if (argc != 3 || sscanf(argv[2], "%ld%c", &parent, &tail) != 1)
		return 2;
	/* Killed with the thread that started us; if it is gone already the
	 * signal was never armed, so leave now. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if ((long)getppid() != parent)
		return 1;
	/* Handlers installed before main() (a sanitizer's) are not ours: a
	 * crashing candidate must kill this process by its signal, and the
	 * watchdog see it. */
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		signal(crash_sigs[i], SIG_DFL);
	/* Ctrl-C is for the parent, which stops cleanly; a child killed by it
	 * would look like a crashing candidate. */
	signal(SIGINT, SIG_IGN);
	return measure_child_serve(&io);
}
