/*
 * Child processes, the one layer every part starts them through. Safe to
 * call from a worker thread of the multi-threaded daemon: spawn-unix.c uses
 * posix_spawn, never a bare fork (a forked copy of a threaded process may
 * find a lock held for ever, and holds every descriptor of the daemon until
 * it closes them); spawn-win.c uses CreateProcessW, the child created
 * suspended and put in a job object that kills everything in it when the
 * job's handle closes, inheriting only the handles it is given
 * (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
 *
 * Three shapes:
 * - A helper program run to its end with a time limit, its output captured
 *   (rocmd_child_run): hipconfig, rocmd-hip-probe (which loads the HIP
 *   runtime, something that may crash or hang), the rocBLAS smoke test.
 * - A child that serves requests over a pipe each way for as long as its
 *   parent wants (struct rocmd_child): the tuner's evaluation process,
 *   which is this program started again. Reads wait with a deadline and
 *   look at a cancel flag every few milliseconds; another thread may kill
 *   the child at any time; a killed child is reaped in the background, so
 *   nobody waits for a GPU context's teardown.
 * - POSIX only: a fork()ed child that runs a function and writes its answer
 *   to the same pipes (rocmd_child_fork: the hiprtc compile inside the
 *   evaluation process, for a library that aborts its process; on Windows
 *   that child is a started one, kernels/backend-hip-rtc.c).
 *
 * The wait status of an ended child is an int: POSIX the waitpid status,
 * Windows the process's exit code.
 *
 * spawn.c holds what is portable (running a helper to its end, reading
 * whole messages); spawn-unix.c and spawn-win.c the system calls, chosen by
 * CMake.
 */
#ifndef ROCMD_SPAWN_H
#define ROCMD_SPAWN_H

#include <stddef.h>
#include <stdint.h>

/* ---- a helper program, run to its end ---- */

/*
 * Runs ARGV (ARGV[0] a path; UTF-8) with ENVP (NULL: an empty environment;
 * Windows adds the few variables a process cannot start without), stdin
 * from the null device, stdout captured into OUT (NUL-terminated, cut at
 * OUTLEN-1), stderr discarded. Waits at most TIMEOUT_MS, then kills it.
 * *STATUS gets the wait status. Returns 0, ROCMD_ETIMEDOUT, or a negative
 * error when it cannot start.
 */
int rocmd_child_run(char *const argv[], char *const envp[], int timeout_ms, char *out,
                    size_t outlen, int *status);

/* Whether STATUS says the child crashed rather than exited: writes "signal 11"
 * or "exception 0xC0000005" to WHAT and returns 1; else 0. */
int rocmd_child_crashed(int status, char *what, size_t whatlen);

/* The exit code STATUS carries when the child exited on its own (POSIX
 * WEXITSTATUS; Windows the process's exit code), or -1 when it was killed
 * by a signal or ended by an unhandled exception. */
int rocmd_child_exit_code(int status);

/* How the child ended, for a message: "exited with 1", "killed by signal 9";
 * on Windows "exited with 1", "killed" (by rocmd_child_stop or
 * rocmd_child_kill) or "ended by exception 0xC0000005". */
void rocmd_child_describe(int status, char *what, size_t whatlen);

/* Monotonic milliseconds: the clock of the deadlines below. */
double rocmd_child_now_ms(void);

/* ---- this program ---- */

/*
 * Resolves this program's own executable, once: main() calls it first thing,
 * before it detaches, changes folder or starts a thread; the functions below
 * and rocmd_child_start call it themselves in a program whose main() did not.
 * Every start of this program again and every helper found beside it goes
 * through what it kept, never through a fresh look at /proc/self/exe.
 */
void rocmd_self_init(void);
/* The path this program was started from ("" when it cannot be known). */
const char *rocmd_self_exe(void);
/* The path of NAME in this program's folder, into OUT: 0 when that file is
 * there (POSIX: executable), ROCMD_ENOTFOUND when not (OUT still the path) or
 * when the folder is unknown (OUT empty). */
int rocmd_self_beside(const char *name, char *out, size_t outlen);

/* ---- a child serving requests over a pipe each way ---- */

/* One slot for such a child, which may be started, stopped and started
 * again; on Windows it owns the job object the children run in. */
struct rocmd_child;

int rocmd_child_new(struct rocmd_child **out);
/* Stops the child (waiting for it to exit) and frees. NULL is fine. */
void rocmd_child_free(struct rocmd_child *c);
/*
 * Starts EXE (NULL: this program again, the very file rocmd_self_init found)
 * with the arguments ARGV[1..] followed by those that
 * tell it where its pipes are, for rocmd_child_attach: POSIX the parent's
 * pid (the pipes are the child's descriptors 3 and 4), Windows the values
 * of the two pipe handles it inherits. It inherits this process's
 * environment. POSIX: ARGV[0] is the name it runs under (as ps shows it);
 * stdin, stdout and stderr are ours, every other descriptor closed, signal
 * handlers and the mask at their defaults. Windows: the command line starts
 * with EXE's path; the standard handles are the null device. Returns 0, or
 * a negative error with the reason in WHY.
 */
int rocmd_child_start(struct rocmd_child *c, const char *exe, char *const argv[], char *why,
                      size_t whylen);
/* Whether a child is running (started and not stopped). */
int rocmd_child_alive(const struct rocmd_child *c);
/* Writes all of BUF to the child: 0, or ROCMD_EIO when it is gone (never a
 * SIGPIPE). */
int rocmd_child_write(struct rocmd_child *c, const void *buf, size_t len);
/* Reads LEN bytes from the child before DEADLINE (rocmd_child_now_ms; 0:
 * none): 0, ROCMD_ETIMEDOUT, ROCMD_ECLOSED when it went away, or
 * ROCMD_ECANCELED once *CANCEL (may be NULL) is set, looked at every few
 * milliseconds (at most 10). */
int rocmd_child_read(struct rocmd_child *c, void *buf, size_t len, double deadline,
                     volatile int *cancel);
/* Ends the child: its pipes closed, killed first when KILL_IT, then waited
 * for. Returns its wait status (0 when none was running). */
int rocmd_child_stop(struct rocmd_child *c, int kill_it);
/* Kills the child and forgets it without waiting for its exit; POSIX reaps
 * it on a detached thread. */
void rocmd_child_abandon(struct rocmd_child *c);
/* Kills the child now, from any thread, while C exists; frees nothing. */
void rocmd_child_kill(struct rocmd_child *c);

/* ---- the child's side ---- */

/* The child's ends of its pipes: a descriptor (POSIX) or a handle (Windows). */
struct rocmd_child_chan {
	intptr_t rd, wr;
};
/*
 * In a child rocmd_child_start started, first thing: ARGC and ARGV are the
 * arguments it appended. Makes the child die with its parent (POSIX
 * PR_SET_PDEATHSIG, then a check that the parent is still there; Windows:
 * the job object does it), makes a crash end it visibly (POSIX: crash
 * signals at their defaults, whatever handlers a sanitizer installed;
 * Windows: no error dialog, no debugger), leaves Ctrl-C to the parent,
 * closes the descriptor it was exec'd through (POSIX) and fills CH. Returns 0, ROCMD_EINVAL when the arguments are not such, or
 * ROCMD_ECLOSED when the parent is already gone.
 */
int rocmd_child_attach(int argc, char **argv, struct rocmd_child_chan *ch);
/* Reads exactly LEN bytes (0, or ROCMD_ECLOSED at the end of input) / writes
 * all LEN bytes (0, or ROCMD_EIO) on the child's side. */
int rocmd_child_chan_read(const struct rocmd_child_chan *ch, void *buf, size_t len);
int rocmd_child_chan_write(const struct rocmd_child_chan *ch, const void *buf, size_t len);

/* ---- fork()ed children (POSIX only: spawn-unix.c) ---- */

/*
 * Forks a child that runs FN(ARG, its channel) and exits with what FN
 * returns; the parent talks to it through C as to a started child. The
 * child keeps only stdin/out/err and its channel, and dies with the thread
 * that forked it (rocmd_child_after_fork). For code that must not run in
 * the caller's process and has nothing to exec. Returns 0 in the parent or
 * a negative error.
 */
int rocmd_child_fork(struct rocmd_child *c, int (*fn)(void *arg, const struct rocmd_child_chan *ch),
                     void *arg);
/* In a fork()ed child, first thing: asks to be killed when the thread that
 * forked it dies and exits at once if that already happened (PARENT is
 * getpid() taken before the fork), then closes every descriptor from 3 up
 * but those in KEEP. */
void rocmd_child_after_fork(long parent, const int *keep, size_t nkeep);
/* Closes every descriptor from 3 up except those in KEEP (any order). */
void rocmd_child_close_fds(const int *keep, size_t nkeep);

/* ---- the system part (spawn-unix.c, spawn-win.c), for spawn.c ---- */

/* Starts EXE in slot C as rocmd_child_start does (CAPTURE 0), or, with
 * CAPTURE 1, as rocmd_child_run does: ARGV as it is, stdin and stderr the
 * null device, stdout a pipe that C reads, no pipe to the child. ENVP: the
 * child's environment (Windows adds SystemRoot and windir); NULL: this
 * process's. */
int rocmd_child_os_start(struct rocmd_child *c, const char *exe, char *const argv[],
                         char *const envp[], int capture, char *why, size_t whylen);
/* Reads what the pipe end FD holds (a descriptor; on Windows a HANDLE), at
 * most LEN bytes, once something comes: 0 with *GOT (0 at the end of the
 * pipe), ROCMD_ETIMEDOUT once DEADLINE (0: none) has passed, ROCMD_ECANCELED
 * once *CANCEL (may be NULL) is set. C (may be NULL) is the child writing
 * it, which Windows waits on between its looks at the pipe. */
int rocmd_child_os_read(intptr_t fd, const struct rocmd_child *c, void *buf, size_t len,
                        double deadline, volatile int *cancel, size_t *got);
/* Our read end of C's pipe, for rocmd_child_os_read. */
intptr_t rocmd_child_os_fd(const struct rocmd_child *c);
/* Waits until C's child has exited or DEADLINE passes: 0, ROCMD_ETIMEDOUT. */
int rocmd_child_os_wait(struct rocmd_child *c, double deadline);

#endif
