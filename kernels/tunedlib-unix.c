/*
 * The tuned library's file operations on POSIX systems (see tunedlib-os.h).
 */
#include "kernels/tunedlib-os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int
tunedlib_os_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);

	return fd < 0 ? -errno : fd;
}

int
tunedlib_os_open_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	return fd < 0 ? -errno : fd;
}

int
tunedlib_os_sync_fd(int fd)
{
	return fsync(fd) < 0 ? -errno : 0;
}

int
tunedlib_os_sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}

int
tunedlib_os_mkdir(const char *path)
{
	return mkdir(path, 0755) < 0 ? -errno : 0;
}

int
tunedlib_os_replace(const char *from, const char *to)
{
	return rename(from, to) < 0 ? -errno : 0;
}
