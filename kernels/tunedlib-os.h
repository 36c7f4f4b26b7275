/*
 * The few file operations of the tuned library's on-disk form (tunedlib.c)
 * that differ between systems: tunedlib-unix.c (open(2) flags, fsync of
 * files and folders, rename(2)) and tunedlib-win.c (binary mode, _commit,
 * no folder fsync: NTFS journals its metadata; MoveFileExW to replace the
 * CURRENT file, which rename() refuses on Windows).
 */
#ifndef ROCMD_KERNELS_TUNEDLIB_OS_H
#define ROCMD_KERNELS_TUNEDLIB_OS_H

/* A new file for writing (fails when it exists): a descriptor or -errno. */
int tunedlib_os_create(const char *path);
/* An existing file for reading, not through a symlink where the system has
 * them: a descriptor or -errno. */
int tunedlib_os_open_read(const char *path);
/* Flushes descriptor FD's data to the disk: 0 or -errno. */
int tunedlib_os_sync_fd(int fd);
/* Flushes folder PATH's entries to the disk (a rename in it): 0 or -errno. */
int tunedlib_os_sync_dir(const char *path);
/* Creates folder PATH: 0 or -errno (-EEXIST when it exists). */
int tunedlib_os_mkdir(const char *path);
/* Renames FROM to TO, replacing a file TO atomically: 0 or -errno. */
int tunedlib_os_replace(const char *from, const char *to);

#endif
