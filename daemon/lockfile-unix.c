/*
 * flock-based locks: see lockfile.h. flock locks belong to the open file
 * description, vanish when the holder dies (kill -9 included) and are not
 * confused by the holder's other descriptors, which is what a
 * single-instance lock needs.
 */
#include "lockfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/error.h"

int
rocmd_lockfile_acquire(const char *path, pid_t *holder)
{
	char buf[32];
	ssize_t n;
	int fd, len;

	*holder = 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;
		if (err == EWOULDBLOCK) {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			if (n > 0) {
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
	flock(fd, LOCK_UN);
	close(fd);
}
