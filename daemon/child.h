/*
 * Running a helper program with a time limit and capturing its output:
 * hipconfig (a version source of last resort) and rocmd-hip-probe (which
 * loads the HIP runtime, something that may crash or hang, in a process of
 * its own). Safe to call from a worker thread: it uses posix_spawn, never a
 * bare fork of the multi-threaded daemon.
 */
#ifndef ROCMD_CHILD_H
#define ROCMD_CHILD_H

#include <stddef.h>

/*
 * Runs ARGV (ARGV[0] a path) with ENVP (NULL: an empty environment), stdin
 * from /dev/null, stdout captured into OUT (NUL-terminated, cut at OUTLEN-1),
 * stderr discarded. Waits at most TIMEOUT_MS, then kills it. *STATUS gets the
 * wait status. Returns 0, ROCMD_ETIMEDOUT, or -errno when it cannot start.
 */
int rocmd_child_run(char *const argv[], char *const envp[], int timeout_ms, char *out,
                    size_t outlen, int *status);

#endif
