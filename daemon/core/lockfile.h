/*
 * Advisory single-holder locks on files, used for the state folder's
 * single-instance lock and the socket's lock. They belong to the holding
 * process (POSIX record locks on Linux, LockFileEx on Windows): they vanish
 * the moment it dies, even while a child it was starting still has a copy of
 * the descriptor. The holder's pid is written into the file so a refused
 * second instance can name the first.
 */
#ifndef ROCMD_LOCKFILE_H
#define ROCMD_LOCKFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Takes the lock on PATH (created 0644 if missing) without waiting. Returns
 * the held descriptor, ROCMD_ELOCKED with *holder set to the holder's pid (0
 * if unknown), or -errno.
 */
int rocmd_lockfile_acquire(const char *path, pid_t *holder);
/* Releases and closes; the file stays (removing it would race a new holder). */
void rocmd_lockfile_release(int fd);

#endif
