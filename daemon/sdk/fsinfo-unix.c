/*
 * File facts on POSIX systems: see fsinfo.h. lstat/stat, mmap, readdir.
 */
#include "fsinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

int
rocmd_fsinfo_get(const char *path, int follow, struct rocmd_fsinfo *out)
{
	struct stat st;

	*out = (struct rocmd_fsinfo){0};
	if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
		return -errno;
	out->type = S_ISREG(st.st_mode)   ? ROCMD_FS_FILE
	            : S_ISDIR(st.st_mode) ? ROCMD_FS_DIR
	            : S_ISLNK(st.st_mode) ? ROCMD_FS_LINK
	                                  : ROCMD_FS_OTHER;
	out->size = (uint64_t)st.st_size;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	out->change_ns = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	return 0;
}

FILE *
rocmd_fs_fopen(const char *path, const char *mode)
{
	return fopen(path, mode);
}

struct rocmd_dir {
	DIR *d;
	struct rocmd_dirent e;
};

struct rocmd_dir *
rocmd_dir_open(const char *path)
{
	struct rocmd_dir *d = malloc(sizeof(*d));

	if (d == NULL)
		return NULL;
	d->d = opendir(path);
	if (d->d == NULL) {
		int e = errno;
		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

struct rocmd_dirent *
rocmd_dir_read(struct rocmd_dir *d)
{
	struct dirent *de = readdir(d->d);

	if (de == NULL)
		return NULL;
	snprintf(d->e.d_name, sizeof(d->e.d_name), "%s", de->d_name);
	return &d->e;
}

void
rocmd_dir_close(struct rocmd_dir *d)
{
	if (d == NULL)
		return;
	closedir(d->d);
	free(d);
}

int
rocmd_fs_dir_readable(const char *path)
{
	return access(path, R_OK | X_OK) == 0 ? 0 : -errno;
}

int
rocmd_fs_map(const char *path, const void **data, size_t *len)
{
	struct stat st;
	void *map;
	int fd, rc = 0;

	*data = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if (fstat(fd, &st) != 0) {
		rc = rocmd_err_errno(errno);
		goto out;
	}
	if (st.st_size == 0) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = rocmd_err_errno(errno);
		goto out;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	*data = map;
	*len = (size_t)st.st_size;
out:
	close(fd);
	return rc;
}

void
rocmd_fs_unmap(const void *data, size_t len)
{
	if (data != NULL)
		munmap((void *)data, len);
}
