/*
 * POSIX record locks (fcntl F_SETLK) over the whole file: see lockfile.h.
 * Such a lock belongs to the process, not to the descriptor: a child never
 * inherits it, so a daemon killed while a child it had just spawned was still
 * between clone and exec (holding copies of every descriptor) leaves no lock
 * behind (flock's lock, owned by the open file description, lived on in that
 * copy and refused the restarted daemon). The price: closing any descriptor
 * of the file drops the lock, so nothing but this module opens lock files,
 * and each process takes a given lock once.
 */
#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"

int
rocmd_lockfile_acquire(const char *path, pid_t *holder)
{
	struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	char buf[32];
	ssize_t n;
	int fd, len;

	*holder = 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETLK, &whole) != 0) {
		int err = errno;
		if (err == EAGAIN || err == EACCES) {
			struct flock q = whole;

			/* The kernel knows the holder; the file says who wrote it. */
			if (fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK && q.l_pid > 0) {
				*holder = q.l_pid;
			} else if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) > 0) {
				buf[n] = '\0';
				*holder = (pid_t)strtol(buf, NULL, 10);
			}
			close(fd);
			return ROCMD_ELOCKED;
		}
		close(fd);
		return -err;
	}
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

void
rocmd_lockfile_release(int fd)
{
	if (fd < 0)
		return;
	close(fd); /* drops the process's lock */
}
