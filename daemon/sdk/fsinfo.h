/*
 * The file facts SDK discovery needs where POSIX and Windows differ: a file's
 * type, size and times in nanoseconds (Linux st_mtim/st_ctim; Windows
 * FILETIME, 100 ns), whether it is a link (a symlink; on Windows a reparse
 * point: a symlink or a junction), and a read-only view of a whole file
 * (mmap; MapViewOfFile), and directory listing (opendir; FindFirstFileW).
 * Paths and names are UTF-8; the Windows file (fsinfo-win.c) calls the
 * wide-character API, so no name depends on the ANSI code page.
 */
#ifndef ROCMD_FSINFO_H
#define ROCMD_FSINFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rocmd_fs_type { ROCMD_FS_OTHER, ROCMD_FS_FILE, ROCMD_FS_DIR, ROCMD_FS_LINK };

struct rocmd_fsinfo {
	enum rocmd_fs_type type;
	uint64_t size;
	int64_t mtime_ns;  /* last write */
	int64_t change_ns; /* Unix: status change (ctime); Windows: the later of
	                    * creation and last write (a copied file is created anew) */
	uint64_t dev, ino; /* identity when the platform has it cheaply; else 0 */
};

/* Describes PATH; FOLLOW 0 describes a link itself (ROCMD_FS_LINK). Returns 0
 * or -errno (-ENOENT, -EACCES, ...). */
int rocmd_fsinfo_get(const char *path, int follow, struct rocmd_fsinfo *out);

/* fopen(3) with a UTF-8 path (Windows: _wfopen). */
FILE *rocmd_fs_fopen(const char *path, const char *mode);

/* A folder being listed; rocmd_dir_read returns its entries one at a time. */
struct rocmd_dir;
struct rocmd_dirent {
	char d_name[1024]; /* UTF-8; "." and ".." are listed too, as readdir does */
};
/* Opens folder PATH for listing; NULL with errno set (ENOENT, EACCES, ENOTDIR). */
struct rocmd_dir *rocmd_dir_open(const char *path);
/* The next entry, or NULL at the end (valid until the next call). */
struct rocmd_dirent *rocmd_dir_read(struct rocmd_dir *d);
void rocmd_dir_close(struct rocmd_dir *d);

/* 0 when folder PATH can be listed (and entered), else -errno (-EACCES). */
int rocmd_fs_dir_readable(const char *path);

/* Maps all of PATH read-only: *DATA and *LEN, for rocmd_fs_unmap. An empty
 * file is ROCMD_ECORRUPT. Returns 0 or a negative error. */
int rocmd_fs_map(const char *path, const void **data, size_t *len);
void rocmd_fs_unmap(const void *data, size_t len);

#endif
