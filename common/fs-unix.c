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

int rocmd_fs_test_no_openat2;

/* ---- beneath a root ---- */

/* A link met while resolving below a root (ELOOP), or a path that would
 * leave it (EXDEV from RESOLVE_BENEATH): refused as unsafe (I4). */
static int
beneath_err(int e)
{
	return e == ELOOP || e == EXDEV ? ROCMD_EUNSAFE : rocmd_err_errno(e);
}

/* Kernels before 5.6 (and tests): opens PATH relative to DFD (AT_FDCWD for
 * an absolute PATH) one component at a time, each with O_NOFOLLOW |
 * O_DIRECTORY, the last with FLAGS too. -1 with errno set on failure. */
static int
walk_open(int dfd, const char *path, int flags)
{
	const char *p = path;
	int cur;

	if (*p == '/')
		cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (dfd == AT_FDCWD)
		cur = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else
		cur = dup(dfd);
	if (cur < 0)
		return -1;
	while (*p != '\0') {
		char name[256];
		size_t len;
		int next, last;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len >= sizeof(name)) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		last = p[strspn(p, "/")] == '\0';
		next = openat(cur, name,
		              (last ? flags & ~O_PATH : O_RDONLY) | O_DIRECTORY | O_NOFOLLOW |
		                  O_CLOEXEC);
		if (next < 0) {
			struct stat st;
			int e = errno;
			/* O_DIRECTORY answers ENOTDIR before O_NOFOLLOW's ELOOP. */
			if (e == ENOTDIR && fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				e = ELOOP;
			close(cur);
			errno = e;
			return -1;
		}
		close(cur);
		cur = next;
	}
	return cur;
}

static int
openat2_or_walk(int dfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_DIRECTORY | O_CLOEXEC),
	    .resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = -1;

	if (!rocmd_fs_test_no_openat2)
		fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	if (rocmd_fs_test_no_openat2 || (fd < 0 && errno == ENOSYS))
		fd = walk_open(dfd, path, flags);
	return fd < 0 ? beneath_err(errno) : fd;
}

/* Folder ROOT, every component of its absolute path a real folder. */
static int
root_open(const char *root, int flags)
{
	return openat2_or_walk(AT_FDCWD, root, flags, 0);
}

/* Folder PATH itself, opened with FLAGS: below ROOT as fs.h says, or (ROOT
 * NULL) as open(2) does it. */
static int
at_dir(const char *root, const char *path, int flags)
{
	const char *rel;
	int rfd, fd;

	if (root == NULL) {
		fd = open(path, flags | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? rocmd_err_errno(errno) : fd;
	}
	if ((rel = rocmd_fs_below(root, path)) == NULL)
		return ROCMD_EUNSAFE;
	if (*rel == '\0')
		return root_open(root, flags);
	if ((rfd = root_open(root, O_PATH)) < 0)
		return rfd;
	fd = openat2_or_walk(rfd, rel, flags, RESOLVE_BENEATH);
	close(rfd);
	return fd;
}

/* The folder holding PATH's last name, opened below ROOT (O_PATH), and that
 * name (inside PATH); ROOT NULL: AT_FDCWD and PATH itself. Release with
 * at_close. */
static int
at_parent(const char *root, const char *path, int *dfd, const char **name)
{
	char parent[ROCMD_FS_PATH_MAX];
	const char *rel, *slash;
	int rfd;

	*dfd = AT_FDCWD;
	*name = path;
	if (root == NULL)
		return 0;
	if ((rel = rocmd_fs_below(root, path)) == NULL || *rel == '\0')
		return ROCMD_EUNSAFE;
	if ((rfd = root_open(root, O_PATH)) < 0)
		return rfd;
	if ((slash = strrchr(rel, '/')) == NULL) {
		*dfd = rfd;
		*name = rel;
		return 0;
	}
	if (rocmd_fs_fmt(parent, sizeof(parent), "%.*s", (int)(slash - rel), rel) >=
	    (int)sizeof(parent)) {
		close(rfd);
		return -ENAMETOOLONG;
	}
	*dfd = openat2_or_walk(rfd, parent, O_PATH, RESOLVE_BENEATH);
	close(rfd);
	if (*dfd < 0)
		return *dfd;
	*name = slash + 1;
	return 0;
}

static void
at_close(int dfd)
{
	if (dfd >= 0)
		close(dfd);
}

/* lstat(2) of PATH below ROOT (ROOT itself included). */
static int
lstat_in(const char *root, const char *path, struct stat *st)
{
	const char *name;
	int dfd, rc;

	if (root != NULL && rocmd_fs_below(root, path) != NULL &&
	    *rocmd_fs_below(root, path) == '\0') {
		if ((dfd = root_open(root, O_PATH)) < 0)
			return dfd;
		rc = fstat(dfd, st) < 0 ? -errno : 0;
		close(dfd);
		return rc;
	}
	if ((rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	rc = fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	at_close(dfd);
	return rc;
}

/* Whether ST, a folder on the way to a target, may be trusted: owned by
 * root or rocmd's own user, writable by no one else (I4). Says why not. */
static int
owner_ok(const struct stat *st, const char *path, char *why, size_t whylen)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		rocmd_fs_fmt(why, whylen, "%s is owned by uid %u, a user other than root", path,
		             (unsigned)st->st_uid);
		return 0;
	}
	if (st->st_mode & S_IWOTH) {
		rocmd_fs_fmt(why, whylen, "%s may be written by every user (mode %04o)", path,
		             (unsigned)(st->st_mode & 07777));
		return 0;
	}
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0 && st->st_gid != getegid()) {
		rocmd_fs_fmt(why, whylen, "%s may be written by group %u (mode %04o)", path,
		             (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
		return 0;
	}
	return 1;
}

int
rocmd_fs_resolve(const char *root, const char *path, unsigned flags, char *why, size_t whylen)
{
	char here[ROCMD_FS_PATH_MAX];
	const char *rel = rocmd_fs_below(root, path), *p;
	struct stat st;
	int cur, rc = 0;

	if (rel == NULL) {
		rocmd_fs_fmt(why, whylen, "%s is not inside %s", path, root);
		return ROCMD_EUNSAFE;
	}
	if ((cur = root_open(root, O_PATH)) < 0) {
		rocmd_fs_fmt(why, whylen, "cannot open %s: %s", root,
		             cur == ROCMD_EUNSAFE ? "a folder of its path is a symlink"
		                                  : rocmd_strerror(cur));
		return cur;
	}
	rocmd_fs_fmt(here, sizeof(here), "%s", root);
	if ((flags & ROCMD_FS_RESOLVE_OWNER) &&
	    (fstat(cur, &st) < 0 || !owner_ok(&st, here, why, whylen))) {
		close(cur);
		return ROCMD_EPERM;
	}
	for (p = rel; *p != '\0';) {
		size_t len = strcspn(p, "/"), hl = strlen(here);
		char name[256];
		int next, last = p[len] == '\0';

		if (last && !(flags & ROCMD_FS_RESOLVE_LAST))
			break;
		if (len >= sizeof(name)) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		rocmd_fs_fmt(here + hl, sizeof(here) - hl, "%s%s",
		             hl > 0 && here[hl - 1] == '/' ? "" : "/", name);
		p += len + !last;
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = -errno;
			if (rc == -ENOENT && last)
				rc = 0; /* a folder to be created */
			else
				rocmd_fs_fmt(why, whylen, "%s: %s", here, strerror(errno));
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[ROCMD_FS_PATH_MAX];
			ssize_t n = readlinkat(cur, name, target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = '\0';
			rocmd_fs_fmt(
			    why, whylen,
			    "%s is a symlink (to %s): every folder below %s must be a real "
			    "folder, none may be followed (I4)",
			    here, target, root);
			rc = ROCMD_EUNSAFE;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			rocmd_fs_fmt(why, whylen, "%s is not a folder", here);
			rc = -ENOTDIR;
			break;
		}
		next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			rc = beneath_err(errno);
			rocmd_fs_fmt(why, whylen, "%s: %s", here, strerror(errno));
			break;
		}
		close(cur);
		cur = next;
		/* The facts of the folder opened, not of the name looked at. */
		if ((flags & ROCMD_FS_RESOLVE_OWNER) &&
		    (fstat(cur, &st) < 0 || !owner_ok(&st, here, why, whylen))) {
			rc = ROCMD_EPERM;
			break;
		}
	}
	close(cur);
	return rc;
}

int
rocmd_fs_mkdir_in(const char *root, const char *path, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.mkdir"), dfd;
	const char *name;

	if (rc < 0 || (rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	if (mkdirat(dfd, name, (mode_t)mode) < 0)
		rc = rocmd_err_errno(errno);
	at_close(dfd);
	return rc;
}

int
rocmd_fs_os_open_in(const char *root, const char *path, int flags, unsigned mode)
{
	const char *name;
	int dfd, fd, rc;

	if ((rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	fd = openat(dfd, name, flags | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
	rc = fd < 0 ? rocmd_err_errno(errno) : fd;
	at_close(dfd);
	return rc;
}

int
rocmd_fs_open_in(const char *root, const char *path, int flags, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.open");

	return rc < 0 ? rc : rocmd_fs_os_open_in(root, path, flags, mode);
}

int
rocmd_fs_close(int fd)
{
	return close(fd) < 0 ? rocmd_err_errno(errno) : 0;
}

int
rocmd_fs_os_read(int fd, void *buf, size_t n, size_t *got)
{
	ssize_t r;

	*got = 0;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return rocmd_err_errno(errno);
	*got = (size_t)r;
	return 0;
}

int
rocmd_fs_read(int fd, void *buf, size_t n, size_t *got)
{
	int rc = ROCMD_FAILPOINT("fs.read");

	*got = 0;
	return rc < 0 ? rc : rocmd_fs_os_read(fd, buf, n, got);
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

/* Opens folder PATH (below ROOT) and applies SYNC (fsync or syncfs) to it. */
static int
sync_folder(const char *root, const char *path, int (*sync)(int))
{
	int rc = ROCMD_FAILPOINT("fs.fsync"), fd;

	if (rc < 0)
		return rc;
	if ((fd = at_dir(root, path, O_RDONLY)) < 0)
		return fd;
	if (sync(fd) < 0)
		rc = rocmd_err_errno(errno);
	close(fd);
	return rc;
}

int
rocmd_fs_fsync_dir_in(const char *root, const char *path)
{
	return sync_folder(root, path, fsync);
}

int
rocmd_fs_syncfs_in(const char *root, const char *path)
{
	return sync_folder(root, path, syncfs);
}

/* FROM and TO resolved below ROOT, then OP on their folders. */
static int
two_at(const char *root, const char *from, const char *to,
       int (*op)(int, const char *, int, const char *, void *), void *arg)
{
	const char *fn, *tn;
	int fd1, fd2, rc;

	if ((rc = at_parent(root, from, &fd1, &fn)) < 0)
		return rc;
	if ((rc = at_parent(root, to, &fd2, &tn)) < 0) {
		at_close(fd1);
		return rc;
	}
	rc = op(fd1, fn, fd2, tn, arg);
	at_close(fd1);
	at_close(fd2);
	return rc;
}

static int
op_rename(int fd1, const char *a, int fd2, const char *b, void *arg)
{
	unsigned flags = *(unsigned *)arg;

	if (flags == 0 ? renameat(fd1, a, fd2, b) == 0 : renameat2(fd1, a, fd2, b, flags) == 0)
		return 0;
	/* EINVAL: the file system has no RENAME_EXCHANGE; ENOSYS: the kernel. */
	if (flags != 0 && (errno == EINVAL || errno == ENOSYS))
		return ROCMD_EUNSUPPORTED;
	return rocmd_err_errno(errno);
}

static int
op_link(int fd1, const char *a, int fd2, const char *b, void *arg)
{
	(void)arg;
	return linkat(fd1, a, fd2, b, 0) < 0 ? rocmd_err_errno(errno) : 0;
}

int
rocmd_fs_rename_in(const char *root, const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.rename");
	unsigned flags = 0;

	return rc < 0 ? rc : two_at(root, from, to, op_rename, &flags);
}

int
rocmd_fs_unlink_in(const char *root, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.unlink"), dfd;
	const char *name;

	if (rc < 0 || (rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		rc = rocmd_err_errno(errno);
	at_close(dfd);
	return rc;
}

void
rocmd_fs_os_unlink_in(const char *root, const char *path)
{
	const char *name;
	int dfd;

	if (at_parent(root, path, &dfd, &name) == 0) {
		unlinkat(dfd, name, 0);
		at_close(dfd);
	}
}

int
rocmd_fs_symlink_in(const char *root, const char *target, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.symlink"), dfd;
	const char *name;

	if (rc < 0 || (rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	if (symlinkat(target, dfd, name) < 0)
		rc = rocmd_err_errno(errno);
	at_close(dfd);
	return rc;
}

int
rocmd_fs_link_in(const char *root, const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.link");

	return rc < 0 ? rc : two_at(root, from, to, op_link, NULL);
}

int
rocmd_fs_set_writable_in(const char *root, const char *path, int writable)
{
	const char *name;
	struct stat st;
	mode_t mode;
	int dfd, rc;

	if ((rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = rocmd_err_errno(errno);
	} else if (S_ISLNK(st.st_mode)) {
		rc = ROCMD_EUNSAFE;
	} else {
		mode = writable ? st.st_mode | S_IWUSR
		                : st.st_mode & ~(mode_t)(S_IWUSR | S_IWGRP | S_IWOTH);
		if (fchmodat(dfd, name, mode & 07777, 0) < 0)
			rc = rocmd_err_errno(errno);
	}
	at_close(dfd);
	return rc;
}

int
rocmd_fs_kind_in(const char *root, const char *path, uint64_t *size, int *exec)
{
	struct stat st;
	int rc = lstat_in(root, path, &st);

	if (rc < 0)
		return rc == -ENOENT || rc == -ENOTDIR ? 0 : rc;
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
rocmd_fs_id_of_in(const char *root, const char *path, struct rocmd_fs_id *id)
{
	struct stat st;
	int rc = lstat_in(root, path, &st);

	id->dev = id->ino = 0;
	if (rc < 0)
		return rc;
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
rocmd_fs_readlink_in(const char *root, const char *path, char *buf, size_t len)
{
	const char *name;
	ssize_t n;
	int dfd, rc;

	if (len == 0)
		return ROCMD_EINVAL;
	if ((rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	n = readlinkat(dfd, name, buf, len - 1);
	rc = n < 0 ? -errno : (size_t)n >= len - 1 ? -ENAMETOOLONG : 0;
	if (rc == 0)
		buf[n] = '\0';
	at_close(dfd);
	return rc;
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

static void
note_fail(struct rocmd_fs_fail *fail, const char *dir, const char *name, int err)
{
	if (fail == NULL || fail->err != 0)
		return;
	fail->err = err;
	rocmd_fs_fmt(fail->path, sizeof(fail->path), "%s%s%s", dir, name[0] ? "/" : "", name);
}

/* Empties the folder open at FD (consumed), DIR by name, depth-first,
 * through descriptors. */
static int
remove_contents(int fd, const char *dir, int depth, struct rocmd_fs_fail *fail)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = -errno;
		note_fail(fail, dir, "", errno);
		close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		char sub_path[ROCMD_FS_PATH_MAX];
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
				note_fail(fail, dir, de->d_name, errno);
				break;
			}
			rocmd_fs_fmt(sub_path, sizeof(sub_path), "%s/%s", dir, de->d_name);
			if ((r = remove_contents(sub, sub_path, depth + 1, fail)) < 0) {
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
			note_fail(fail, dir, de->d_name, errno);
			break;
		}
	}
	closedir(d);
	return rc;
}

int
rocmd_fs_remove_tree_in(const char *root, const char *path, struct rocmd_fs_fail *fail)
{
	const char *name;
	struct stat st;
	int fd, dfd, rc;

	if (fail != NULL)
		fail->err = 0;
	if ((rc = lstat_in(root, path, &st)) < 0)
		return rc == -ENOENT ? 0 : rc;
	if (S_ISDIR(st.st_mode)) {
		if ((fd = at_dir(root, path, O_RDONLY | O_NOFOLLOW)) < 0)
			return fd;
		if ((rc = remove_contents(fd, path, 0, fail)) < 0)
			return rc;
	}
	if ((rc = ROCMD_FAILPOINT(S_ISDIR(st.st_mode) ? "fs.rmdir" : "fs.unlink")) < 0)
		return rc;
	if ((rc = at_parent(root, path, &dfd, &name)) < 0)
		return rc;
	if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT) {
		rc = rocmd_err_errno(errno);
		note_fail(fail, path, "", errno);
	}
	at_close(dfd);
	return rc;
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
rocmd_fs_os_walk_in(const char *root, const char *path, rocmd_fs_walk_fn add, void *ctx, char *why,
                    size_t whylen)
{
	int fd = at_dir(root, path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0) {
		rocmd_fs_fmt(why, whylen, "cannot open %s: %s", path,
		             fd == ROCMD_EUNSAFE ? "a folder on its way is a symlink"
		                                 : rocmd_strerror(fd));
		return fd;
	}
	return walk_dir(fd, "", path, 0, add, ctx, why, whylen);
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
rocmd_fs_exchange_in(const char *root, const char *a, const char *b)
{
	int rc = ROCMD_FAILPOINT("deploy.exchange");
	unsigned flags = RENAME_EXCHANGE;

	if (rc == -EINVAL || rc == -ENOSYS)
		return ROCMD_EUNSUPPORTED;
	return rc < 0 ? rocmd_err_errno(-rc) : two_at(root, a, b, op_rename, &flags);
}

int
rocmd_fs_remove_loaded_in(const char *root, const char *path)
{
	return rocmd_fs_unlink_in(root, path);
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
	/* O_NONBLOCK: a FIFO in a folder someone else owns must not hang the
	 * reader; it is then refused as not a regular file. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return rocmd_err_errno(errno);
	if (fstat(fd, &st) != 0) {
		rc = rocmd_err_errno(errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
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
