/*
 * The child-process layer's POSIX calls (see spawn.h). Every child is started
 * with posix_spawn: its descriptors are set up by file actions (the ones it
 * is given moved into place, every other one closed: all of rocmd's are
 * close-on-exec, and closefrom makes sure), its signal handlers and mask
 * start at their defaults (a daemon's ignored SIGPIPE is not the child's).
 * Pipes are read with poll, in slices of at most 10 ms while a cancel flag
 * is given; a child past its deadline is SIGKILLed (it may be stuck inside a
 * GPU driver) and reaped.
 *
 * A child started with rocmd_child_start gets its two pipe ends as
 * descriptors 3 and 4 and its parent's pid as its last argument; it asks to
 * be killed when the thread that started it dies (rocmd_child_attach). This
 * program started again is exec'd through the descriptor of its own file
 * that rocmd_self_init kept (see there for why). A
 * helper run to its end (rocmd_child_run, spawn.c) gets the null device as
 * stdin and stderr and the pipe as stdout.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

#define CHILD_RFD 3 /* the child's request pipe */
#define CHILD_WFD 4 /* its reply pipe */
#define CHILD_EXE 5 /* this program's file, while it is exec'd again */
#define MIN_FD 10   /* parent-side pipe ends sit above both */
#define KEEP_MAX 8
#define STR_(x) #x
#define STR(x) STR_(x)

extern char **environ;

struct rocmd_child {
	pid_t pid;
	int wfd, rfd;        /* our ends of its pipes, -1 when it has none */
	volatile pid_t live; /* the child, for rocmd_child_kill(); 0 once reaped */
	int ended, status;   /* reaped by rocmd_child_os_wait, with this status */
};

double
rocmd_child_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* posix_spawn of PATH with the file actions FA, after which every
 * descriptor above LAST_FD is closed; signals at their defaults. */
static int
spawn(pid_t *pid, const char *path, posix_spawn_file_actions_t *fa, int last_fd,
      char *const argv[], char *const envp[])
{
	posix_spawnattr_t attr;
	sigset_t all, none;
	int err;

	posix_spawn_file_actions_addclosefrom_np(fa, last_fd + 1);
	posix_spawnattr_init(&attr);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	err = posix_spawn(pid, path, fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	return -err;
}

int
rocmd_child_os_read(intptr_t fd, const struct rocmd_child *c, void *buf, size_t len,
                    double deadline, volatile int *cancel, size_t *got)
{
	(void)c;
	*got = 0;
	for (;;) {
		ssize_t n;

		if (deadline > 0 || cancel != NULL) {
			struct pollfd pfd = {.fd = (int)fd, .events = POLLIN};
			double left = deadline > 0 ? deadline - rocmd_child_now_ms() : 1e9;
			int rc, slice;

			if (cancel != NULL && *cancel)
				return ROCMD_ECANCELED;
			if (left <= 0)
				return ROCMD_ETIMEDOUT;
			slice = (int)ceil(left);
			if (cancel != NULL && slice > 10)
				slice = 10;
			rc = poll(&pfd, 1, slice);
			if (rc == 0 || (rc < 0 && errno == EINTR))
				continue; /* the deadline and the flag are checked above */
		}
		n = read((int)fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		*got = n > 0 ? (size_t)n : 0;
		return 0;
	}
}

intptr_t
rocmd_child_os_fd(const struct rocmd_child *c)
{
	return c->rfd;
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

static void
reap(pid_t pid, int *status)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status != NULL)
		*status = st;
}

/* ---- how a child ended ---- */

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

void
rocmd_child_describe(int status, char *what, size_t whatlen)
{
	if (WIFSIGNALED(status))
		snprintf(what, whatlen, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(what, whatlen, "exited with %d", rocmd_child_exit_code(status));
}

/* ---- a child serving requests over a pipe each way ---- */

int
rocmd_child_new(struct rocmd_child **out)
{
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? ROCMD_ENOMEM : 0;
}

int
rocmd_child_alive(const struct rocmd_child *c)
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

static void
close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

/* Two pipes, to the child and from it: 0, or -errno. */
static int
make_pipes(int to_child[2], int from_child[2])
{
	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(from_child, O_CLOEXEC) < 0 ||
	    move_high(&to_child[0]) < 0 || move_high(&from_child[1]) < 0)
		return -errno;
	return 0;
}

/* ---- this program ---- */

/*
 * This program's file, found once by rocmd_self_init: its path from
 * readlink("/proc/self/exe") and the file itself, kept open (read-only,
 * close-on-exec). Why this and not a look at /proc/self/exe when a child
 * starts, nor argv[0]:
 * - Under valgrind, /proc/self/exe named to execve is valgrind's own tool,
 *   which refuses to run ("valgrind: You cannot run ... directly"), while
 *   valgrind answers readlink and open of /proc/self/exe with the program it
 *   runs. So the look is a readlink and an open, done here, never an exec.
 * - A package upgrade replaces the file at our path while we run. The
 *   evaluation process must be the build that runs now (it speaks this
 *   build's messages): it is exec'd through the kept descriptor, which holds
 *   the file we were started from whatever the path names now. The helpers
 *   beside us are looked up in the folder of the path kept at start: a later
 *   readlink would say "PATH (deleted)" once an upgrade replaced the file.
 * - argv[0] is whatever the starter wrote there, and resolving it against
 *   PATH or the current folder breaks once a daemon detached and changed
 *   folder; no option or variable is needed that a test harness must set.
 */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static char self_path[PATH_MAX];
static int self_fd = -1;

static void
self_resolve(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path));

	if (n <= 0 || (size_t)n >= sizeof(self_path))
		n = 0;
	self_path[n] = '\0';
	self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	/* Above the slots a child's descriptors are moved into. */
	if (self_fd >= 0 && self_fd < MIN_FD && move_high(&self_fd) < 0) {
		close(self_fd);
		self_fd = -1;
	}
}

void
rocmd_self_init(void)
{
	pthread_once(&self_once, self_resolve);
}

const char *
rocmd_self_exe(void)
{
	rocmd_self_init();
	return self_path;
}

int
rocmd_self_beside(const char *name, char *out, size_t outlen)
{
	const char *slash = strrchr(rocmd_self_exe(), '/');
	int len = slash != NULL ? (int)(slash - self_path) : 0;

	if (slash == NULL || (size_t)snprintf(out, outlen, "%.*s/%s", len, self_path, name) >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return ROCMD_ENOTFOUND;
	}
	return access(out, X_OK) == 0 ? 0 : ROCMD_ENOTFOUND;
}

/* The parent's ends of the pipes, once the child PID has the other two. */
static void
adopt(struct rocmd_child *c, pid_t pid, int to_child[2], int from_child[2])
{
	if (to_child[0] >= 0)
		close(to_child[0]);
	close(from_child[1]);
	c->pid = pid;
	c->live = pid;
	c->ended = 0;
	c->wfd = to_child[1];
	c->rfd = from_child[0];
}

int
rocmd_child_os_start(struct rocmd_child *c, const char *exe, char *const argv[],
                     char *const envp[], int capture, char *why, size_t whylen)
{
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, err;
	posix_spawn_file_actions_t fa;
	char parent[24], **args;
	const char *shown = NULL;
	size_t n = 0;
	int self = 0;
	pid_t pid;

	while (argv[n] != NULL)
		n++;
	if ((args = calloc(n + 2, sizeof(*args))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return ROCMD_ENOMEM;
	}
	memcpy(args, argv, n * sizeof(*args));
	if (!capture) {
		/* Where the child finds its pipes (rocmd_child_attach). */
		snprintf(parent, sizeof(parent), "%ld", (long)getpid());
		args[n] = parent;
	}
	if (exe == NULL) {
		rocmd_self_init();
		self = self_fd >= 0;
		exe = self ? "/proc/self/fd/" STR(CHILD_EXE) : self_path;
		shown = self_path;
		if (!self && self_path[0] == '\0') {
			snprintf(why, whylen, "no path for this program: /proc/self/exe unreadable");
			err = ROCMD_ENOTFOUND;
			goto fail;
		}
	}
	err = capture ? (pipe2(from_child, O_CLOEXEC) < 0 ? -errno : 0)
	              : make_pipes(to_child, from_child);
	if (err < 0) {
		snprintf(why, whylen, "pipe: %s", strerror(-err));
		goto fail;
	}
	/* Only stdin/out/err and the pipe ends reach the child. */
	posix_spawn_file_actions_init(&fa);
	/* What the child is exec'd through; self_fd sits above every slot. */
	if (self)
		posix_spawn_file_actions_adddup2(&fa, self_fd, CHILD_EXE);
	if (capture) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	} else {
		posix_spawn_file_actions_adddup2(&fa, to_child[0], CHILD_RFD);
		posix_spawn_file_actions_adddup2(&fa, from_child[1], CHILD_WFD);
	}
	err = spawn(&pid, exe, &fa, self ? CHILD_EXE : capture ? 2 : CHILD_WFD, args,
	            envp != NULL ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err < 0) {
		snprintf(why, whylen, "%s: %s", shown != NULL ? shown : exe, strerror(-err));
		goto fail;
	}
	adopt(c, pid, to_child, from_child);
	free(args);
	return 0;
fail:
	close_pair(to_child);
	close_pair(from_child);
	free(args);
	return err;
}

int
rocmd_child_write(struct rocmd_child *c, const void *buf, size_t len)
{
	return write_all(c->wfd, buf, len);
}

int
rocmd_child_os_wait(struct rocmd_child *c, double deadline)
{
	for (;;) {
		pid_t w = c->ended ? c->pid : waitpid(c->pid, &c->status, WNOHANG);

		if (w == c->pid) {
			c->ended = 1;
			c->live = 0;
			return 0;
		}
		if (w < 0 && errno != EINTR)
			return 0; /* not ours to wait for: nothing to wait for */
		if (rocmd_child_now_ms() >= deadline)
			return ROCMD_ETIMEDOUT;
		usleep(5000);
	}
}

/* Forgets the child's pipes and pid (it has been reaped or will be). */
static void
forget(struct rocmd_child *c)
{
	c->live = 0;
	if (c->wfd >= 0)
		close(c->wfd);
	close(c->rfd);
	c->pid = 0;
	c->ended = 0;
}

int
rocmd_child_stop(struct rocmd_child *c, int kill_it)
{
	pid_t pid;
	int st = 0, ended;

	if (c == NULL || c->pid <= 0)
		return 0;
	pid = c->pid;
	ended = c->ended;
	st = c->status;
	forget(c);
	if (ended)
		return st;
	if (kill_it)
		kill(pid, SIGKILL);
	reap(pid, &st);
	return st;
}

static void *
reaper(void *arg)
{
	reap((pid_t)(intptr_t)arg, NULL);
	return NULL;
}

void
rocmd_child_abandon(struct rocmd_child *c)
{
	pthread_attr_t attr;
	pthread_t th;
	int started = 0;

	if (c == NULL || c->pid <= 0)
		return;
	if (c->ended) {
		forget(c);
		return;
	}
	kill(c->pid, SIGKILL);
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&th, &attr, reaper, (void *)(intptr_t)c->pid) == 0;
		pthread_attr_destroy(&attr);
	}
	if (!started)
		rocmd_child_stop(c, 1);
	else
		forget(c);
}

void
rocmd_child_kill(struct rocmd_child *c)
{
	pid_t pid = c != NULL ? c->live : 0;

	if (pid > 0)
		kill(pid, SIGKILL);
}

void
rocmd_child_free(struct rocmd_child *c)
{
	if (c == NULL)
		return;
	rocmd_child_stop(c, 0);
	free(c);
}

/* ---- the child's side ---- */

int
rocmd_child_attach(int argc, char **argv, struct rocmd_child_chan *ch)
{
	static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	long parent;
	char tail;

	if (argc != 1 || sscanf(argv[0], "%ld%c", &parent, &tail) != 1)
		return ROCMD_EINVAL;
	/* Killed with the thread that started us; if it is gone already the
	 * signal was never armed, so leave now. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if ((long)getppid() != parent)
		return ROCMD_ECLOSED;
	/* Handlers installed before main() (a sanitizer's) are not ours: a crash
	 * must kill this process by its signal, and the parent see it. */
	for (size_t i = 0; i < sizeof(crash_sigs) / sizeof(crash_sigs[0]); i++)
		signal(crash_sigs[i], SIG_DFL);
	/* Ctrl-C is for the parent, which stops cleanly; a child killed by it
	 * would look like a crash. */
	signal(SIGINT, SIG_IGN);
	/* The file we were exec'd through (rocmd_child_os_start), if it was. */
	close(CHILD_EXE);
	ch->rd = CHILD_RFD;
	ch->wr = CHILD_WFD;
	return 0;
}

int
rocmd_child_chan_write(const struct rocmd_child_chan *ch, const void *buf, size_t len)
{
	return write_all((int)ch->wr, buf, len);
}

/* ---- fork()ed children ---- */

int
rocmd_child_fork(struct rocmd_child *c, int (*fn)(void *arg, const struct rocmd_child_chan *ch),
                 void *arg)
{
	int to_child[2] = {-1, -1}, from_child[2] = {-1, -1}, err;
	pid_t pid, parent = getpid();

	if ((err = make_pipes(to_child, from_child)) < 0)
		goto fail;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto fail;
	}
	if (pid == 0) {
		struct rocmd_child_chan ch = {to_child[0], from_child[1]};
		int keep[2] = {to_child[0], from_child[1]};

		rocmd_child_after_fork(parent, keep, 2);
		_exit(fn(arg, &ch));
	}
	adopt(c, pid, to_child, from_child);
	return 0;
fail:
	close_pair(to_child);
	close_pair(from_child);
	return err;
}

/* close_range() where the kernel has it (5.9+), else one close() per slot. */
static void
close_span(unsigned lo, unsigned hi)
{
	if (lo > hi)
		return;
	if (close_range(lo, hi, 0) == 0)
		return;
	if (hi > 65535) {
		long max = sysconf(_SC_OPEN_MAX);
		hi = max > 0 && max < 65536 ? (unsigned)max - 1 : 65535;
	}
	for (unsigned fd = lo; fd <= hi && fd >= lo; fd++)
		close((int)fd);
}

void
rocmd_child_close_fds(const int *keep, size_t nkeep)
{
	int k[KEEP_MAX];
	size_t n = 0, i, j;
	unsigned lo = 3;

	/* Sorted copy of the descriptors to keep, above stderr. */
	for (i = 0; i < nkeep && n < KEEP_MAX; i++) {
		if (keep[i] < 3)
			continue;
		for (j = n; j > 0 && k[j - 1] > keep[i]; j--)
			k[j] = k[j - 1];
		k[j] = keep[i];
		n++;
	}
	for (i = 0; i < n; i++) {
		if ((unsigned)k[i] > lo)
			close_span(lo, (unsigned)k[i] - 1);
		if ((unsigned)k[i] >= lo)
			lo = (unsigned)k[i] + 1;
	}
	close_span(lo, ~0U);
}

void
rocmd_child_after_fork(long parent, const int *keep, size_t nkeep)
{
	/* Killed with the thread that forked us; if it is gone already the
	 * signal was never armed, so leave now. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if ((long)getppid() != parent)
		_exit(1);
	rocmd_child_close_fds(keep, nkeep);
}
