/*
 * Running a helper program with a time limit and capturing its output:
 * hipconfig (a version source of last resort) and rocmd-hip-probe (which
 * loads the HIP runtime, something that may crash or hang, in a process of
 * its own). Safe to call from a worker thread: spawn-unix.c uses
 * posix_spawn, never a bare fork of the multi-threaded daemon; spawn-win.c
 * uses CreateProcessW with the child in a job object, so a timeout ends the
 * child and anything it started.
 */
#ifndef ROCMD_SPAWN_H
#define ROCMD_SPAWN_H

#include <stddef.h>

/*
 * Runs ARGV (ARGV[0] a path; UTF-8) with ENVP (NULL: an empty environment;
 * Windows adds the few variables a process cannot start without), stdin
 * from the null device, stdout captured into OUT (NUL-terminated, cut at
 * OUTLEN-1), stderr discarded. Waits at most TIMEOUT_MS, then kills it.
 * *STATUS gets the wait status (Windows: the exit code). Returns 0,
 * ROCMD_ETIMEDOUT, or a negative error when it cannot start.
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

#endif
