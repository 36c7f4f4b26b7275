/*
 * The file layer's POSIX calls (fs.h). Files are opened with O_NOFOLLOW,
 * folders are walked and removed through descriptors opened with
 * O_NOFOLLOW | O_DIRECTORY, and removal unlinks a symlink itself, never what
 * it points to (I4). Linux extras: the reflink clone (FICLONE on btrfs and
 * xfs), early write-back (sync_file_range), syncfs and the atomic folder
 * swap (renameat2 RENAME_EXCHANGE). The readers' part at the end: lstat or
 * stat, readdir, mmap.
 */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "failpoint.h"

int
rocmd_fs_mkdir(const char *path, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.mkdir");

	if (rc == 0 && mkdir(path, (mode_t)mode) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
rocmd_fs_open(const char *path, int flags, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.open"), fd;

	if (rc < 0)
		return rc;
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
	return fd < 0 ? rocmd_err_errno(errno) : fd;
}

int
rocmd_fs_close(int fd)
{
	return close(fd) < 0 ? rocmd_err_errno(errno) : 0;
}

int
rocmd_fs_read(int fd, void *buf, size_t n, size_t *got)
{
	int rc = ROCMD_FAILPOINT("fs.read");
	ssize_t r;

	*got = 0;
	if (rc < 0)
		return rc;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return rocmd_err_errno(errno);
	*got = (size_t)r;
	return 0;
}

int
rocmd_fs_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	int rc = ROCMD_FAILPOINT("fs.read");
	ssize_t r;

	*got = 0;
	if (rc < 0)
		return rc;
	do
		r = pread(fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return rocmd_err_errno(errno);
	*got = (size_t)r;
	return 0;
}

int
rocmd_fs_write_all(int fd, const void *buf, size_t n)
{
	int rc = ROCMD_FAILPOINT("fs.write");
	const char *p = buf;

	if (rc < 0)
		return rc;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return rocmd_err_errno(errno);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
rocmd_fs_fsync(int fd)
{
	int rc = ROCMD_FAILPOINT("fs.fsync");

	if (rc == 0 && fsync(fd) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

/* Opens folder PATH and applies SYNC (fsync or syncfs) to it. */
static int
sync_folder(const char *path, int (*sync)(int))
{
	int rc = ROCMD_FAILPOINT("fs.fsync"), fd;

	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if (sync(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

int
rocmd_fs_fsync_dir(const char *path)
{
	return sync_folder(path, fsync);
}

int
rocmd_fs_syncfs(const char *path)
{
	return sync_folder(path, syncfs);
}

int
rocmd_fs_rename(const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.rename");

	if (rc == 0 && rename(from, to) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
rocmd_fs_unlink(const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.unlink");

	if (rc == 0 && unlink(path) < 0 && errno != ENOENT)
		rc = rocmd_err_errno(errno);
	return rc;
}

void
rocmd_fs_os_unlink(const char *path)
{
	unlink(path);
}

int
rocmd_fs_symlink(const char *target, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.symlink");

	if (rc == 0 && symlink(target, path) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
rocmd_fs_link(const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.link");

	if (rc == 0 && link(from, to) < 0)
		rc = rocmd_err_errno(errno);
	return rc;
}

int
rocmd_fs_set_writable(const char *path, int writable)
{
	struct stat st;
	mode_t mode;

	if (lstat(path, &st) < 0)
		return rocmd_err_errno(errno);
	mode =
	    writable ? st.st_mode | S_IWUSR : st.st_mode & ~(mode_t)(S_IWUSR | S_IWGRP | S_IWOTH);
	if (chmod(path, mode & 07777) < 0)
		return rocmd_err_errno(errno);
	return 0;
}

int
rocmd_fs_kind(const char *path, uint64_t *size, int *exec)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (size != NULL)
		*size = (uint64_t)st.st_size;
	if (exec != NULL)
		*exec = (st.st_mode & 0111) != 0;
	return S_ISREG(st.st_mode)   ? 'f'
	       : S_ISDIR(st.st_mode) ? 'd'
	       : S_ISLNK(st.st_mode) ? 'l'
	                             : 'o';
}

int
rocmd_fs_id_of(const char *path, struct rocmd_fs_id *id)
{
	struct stat st;

	id->dev = id->ino = 0;
	if (lstat(path, &st) < 0)
		return -errno;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	return 0;
}

int
rocmd_fs_id_eq(const struct rocmd_fs_id *a, const struct rocmd_fs_id *b)
{
	return a->ino != 0 && a->dev == b->dev && a->ino == b->ino;
}

int
rocmd_fs_readlink(const char *path, char *buf, size_t len)
{
	ssize_t n;

	if (len == 0)
		return ROCMD_EINVAL;
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int
rocmd_fs_realpath(const char *path, char *out, size_t len)
{
	char real[PATH_MAX];

	if (realpath(path, real) == NULL)
		return -errno;
	if (strlen(real) >= len)
		return -ENAMETOOLONG;
	memcpy(out, real, strlen(real) + 1);
	return 0;
}

size_t
rocmd_fs_path_root(const char *path)
{
	return path[0] == '/' ? 1 : 0;
}

int
rocmd_fs_path_norm(const char *path, char *out, size_t len)
{
	return rocmd_fs_fmt(out, len, "%s", path) >= (int)len ? ROCMD_EINVAL : 0;
}

/* Empties the folder open at FD (consumed) depth-first, through descriptors. */
static int
remove_contents(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		int sub, r;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				break;
			}
			sub = openat(dirfd(d), de->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				rc = rocmd_err_errno(errno);
				break;
			}
			if ((r = remove_contents(sub, depth + 1)) < 0) {
				rc = r;
				break;
			}
		}
		if ((r = ROCMD_FAILPOINT("fs.unlink")) < 0) {
			rc = r;
			break;
		}
		if (unlinkat(dirfd(d), de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 &&
		    errno != ENOENT) {
			rc = rocmd_err_errno(errno);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
rocmd_fs_remove_tree(const char *path)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return rocmd_fs_unlink(path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if ((rc = remove_contents(fd, 0)) < 0)
		return rc;
	if ((rc = ROCMD_FAILPOINT("fs.rmdir")) < 0)
		return rc;
	if (rmdir(path) < 0 && errno != ENOENT)
		return rocmd_err_errno(errno);
	return 0;
}

int
rocmd_fs_os_clone(int src, int dst)
{
	if (ioctl(dst, FICLONE, src) < 0)
		return errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY
		           ? ROCMD_EUNSUPPORTED
		           : -errno;
	return 0;
}

void
rocmd_fs_os_writeback(int fd, uint64_t off, uint64_t len)
{
	sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

int
rocmd_fs_os_fstat(int fd, uint64_t *size, int *regular)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	*regular = S_ISREG(st.st_mode);
	return 0;
}

/* ---- walking a tree ---- */

static int
walk_dir(int fd, const char *prefix, const char *root, int depth, rocmd_fs_walk_fn add, void *ctx,
         char *why, size_t whylen)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		char rel[ROCMD_FS_PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (rocmd_fs_fmt(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "",
		                 de->d_name) >= (int)sizeof(rel)) {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen, "path too long under %s", root);
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
			rocmd_fs_fmt(why, whylen, "cannot read %s/%s: %s", root, rel,
			             strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub;
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				rocmd_fs_fmt(why, whylen, "%s/%s is nested too deep", root, rel);
				break;
			}
			if ((rc = add(ctx, rel, 'd', 0, 0, NULL)) < 0)
				break;
			sub = openat(dirfd(d), de->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				rc = -errno;
				rocmd_fs_fmt(why, whylen, "cannot open %s/%s: %s", root, rel,
				             strerror(errno));
				break;
			}
			if ((rc = walk_dir(sub, rel, root, depth + 1, add, ctx, why, whylen)) < 0)
				break;
		} else if (S_ISREG(st.st_mode)) {
			if ((rc = add(ctx, rel, 'f', (st.st_mode & 0111) != 0, (uint64_t)st.st_size,
			              NULL)) < 0)
				break;
		} else if (S_ISLNK(st.st_mode)) {
			char target[ROCMD_FS_PATH_MAX];
			ssize_t len = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
			if (len < 0) {
				rc = -errno;
				break;
			}
			target[len] = '\0';
			if (rocmd_fs_link_inside(rel, target) < 0) {
				rc = ROCMD_EUNSAFE;
				rocmd_fs_fmt(why, whylen, "%s/%s is a symlink leading outside (%s)",
				             root, rel, target);
				break;
			}
			if ((rc = add(ctx, rel, 'l', 0, 0, target)) < 0)
				break;
		} else {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen, "%s/%s is not a file, folder or symlink", root,
			             rel);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
rocmd_fs_os_walk(const char *root, rocmd_fs_walk_fn add, void *ctx, char *why, size_t whylen)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int rc = -errno;
		rocmd_fs_fmt(why, whylen, "cannot open %s: %s", root, strerror(errno));
		return rc;
	}
	return walk_dir(fd, "", root, 0, add, ctx, why, whylen);
}

/* ---- added for the package store (wpkg) ---- */

int
rocmd_fs_open_beneath(const char *root, const char *rel, int flags)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int rc = ROCMD_FAILPOINT("fs.open"), dfd, fd;

	if (rc < 0)
		return rc;
	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return rocmd_err_errno(errno);
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	/* Kernels before 5.6: openat, which guards the last component only. */
	if (fd < 0 && errno == ENOSYS)
		fd = openat(dfd, rel, flags | O_CLOEXEC | O_NOFOLLOW);
	rc = fd < 0 ? rocmd_err_errno(errno) : fd;
	close(dfd);
	return rc;
}

/* ---- swapping folders, removing what a process may have loaded ---- */

int
rocmd_fs_exchange(const char *a, const char *b)
{
	int rc = ROCMD_FAILPOINT("deploy.exchange");

	if (rc == 0 && renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
		rc = -errno;
	/* EINVAL: the file system has no RENAME_EXCHANGE; ENOSYS: the kernel. */
	if (rc == -EINVAL || rc == -ENOSYS)
		return ROCMD_EUNSUPPORTED;
	return rc < 0 ? rocmd_err_errno(-rc) : 0;
}

int
rocmd_fs_remove_loaded(const char *path)
{
	return rocmd_fs_unlink(path);
}

/* ---- reading what others installed ---- */

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
