/*
 * The file layer: every file operation of rocmd that touches a path, in one
 * place. Two kinds of callers share it:
 *
 * - Code that writes trees users trust, the deploy engine (daemon/deploy/),
 *   the package store (daemon/pkg/) and the tuned library
 *   (kernels/tunedlib.c). Every operation passes a failpoint first
 *   (common/failpoint.h: "fs.open", "fs.read", "fs.write", "fs.fsync",
 *   "fs.rename", "fs.mkdir", "fs.unlink", "fs.rmdir", "fs.symlink",
 *   "fs.link", "fs.clone", "deploy.exchange"), so fault tests can fail each
 *   one in turn, and nothing here follows a symlink (or, on Windows, any
 *   reparse point: symlink or junction) (I4). Files are replaced the way
 *   dpkg does it: new beside old, fsync, rename, fsync the folder
 *   (rocmd_fs_replace).
 * - Code that reads what others installed, SDK discovery (daemon/sdk/):
 *   the facts of a path with or without following links, listing a folder
 *   and mapping a file ("reading what others installed", below). These
 *   follow links where asked and pass no failpoint.
 *
 * fs.c holds what is portable (copying with hashing, walking, durable files
 * and JSON, path checks); fs-unix.c and fs-win.c the system calls, chosen by
 * CMake.
 *
 * Decisions that callers rely on (kept stable):
 * - Paths are UTF-8 with '/' separators. On Windows a path may also use
 *   '\\'; fs-win.c converts to UTF-16, turns '/' into '\\' and prefixes
 *   absolute paths with \\?\ (no MAX_PATH limit, no "." or ".." processing:
 *   callers pass clean paths). rocmd_fs_path_norm gives the '/' form the
 *   engine records in its journal ("C:/Program Files/AMD/ROCm/6.2/bin").
 *   The readers' functions hand paths to the W functions as they are.
 * - Open files are int descriptors, as POSIX has them. On Windows the
 *   descriptor is a C-runtime one made with _open_osfhandle over the handle
 *   CreateFileW gave (FILE_FLAG_OPEN_REPARSE_POINT: never follows), and is
 *   closed with rocmd_fs_close; read, write and fsync go to the handle
 *   (ReadFile, WriteFile, FlushFileBuffers), never through the CRT's text
 *   mode. Only the O_RDONLY / O_WRONLY / O_RDWR, O_CREAT, O_EXCL and O_TRUNC
 *   flags are honoured on Windows.
 * - Return values: 0 (or a descriptor) on success, a negative rocmd error
 *   code (ROCMD_E* or -errno) on failure; a missing file is -ENOENT on both
 *   systems.
 * - MODE: POSIX permission bits. On Windows a mode without 0200 sets the
 *   read-only attribute (store objects are 0444); the exec bit has no
 *   equivalent and walks report exec = 0.
 */
#ifndef ROCMD_FS_H
#define ROCMD_FS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "hash.h"

#define ROCMD_FS_PATH_MAX 4096

/* snprintf for paths and messages whose truncation is checked by length
 * limits elsewhere (a function of its own, so the compiler's truncation
 * analysis does not flag every join); returns what snprintf does. */
int rocmd_fs_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- single operations, each with its failpoint ---- */
int rocmd_fs_mkdir(const char *path, unsigned mode);
int rocmd_fs_open(const char *path, int flags, unsigned mode); /* descriptor, or < 0 */
int rocmd_fs_close(int fd);
int rocmd_fs_read(int fd, void *buf, size_t n, size_t *got);
/* Reads up to N bytes at offset OFF (pread; ReadFile with an OVERLAPPED offset). */
int rocmd_fs_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got);
int rocmd_fs_write_all(int fd, const void *buf, size_t n);
/* Data and metadata of the open file on disk (fsync; FlushFileBuffers). */
int rocmd_fs_fsync(int fd);
/* The folder's names on disk (fsync of the folder; on Windows
 * FlushFileBuffers on the folder opened with FILE_FLAG_BACKUP_SEMANTICS,
 * which NTFS honours; where the file system refuses it, 0: see DEPLOY.md). */
int rocmd_fs_fsync_dir(const char *path);
/* Everything written on PATH's file system (syncfs). Windows has no such
 * call for one user's files (flushing a volume needs its handle and admin
 * rights): there it returns 0 having done nothing, and rocmd_fs_copy_file
 * flushes each copy itself (ROCMD_FS_HAS_SYNCFS 0). */
#ifdef _WIN32
#define ROCMD_FS_HAS_SYNCFS 0
#else
#define ROCMD_FS_HAS_SYNCFS 1
#endif
/* Whether trees may hold symlinks: on Windows a symlink is a reparse point,
 * which needs a privilege to create and which walks refuse (I4). */
#ifdef _WIN32
#define ROCMD_FS_HAS_SYMLINKS 0
#else
#define ROCMD_FS_HAS_SYMLINKS 1
#endif
int rocmd_fs_syncfs(const char *path);
/* Renames FROM to TO, replacing a file TO (not a folder) atomically;
 * MoveFileExW(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) on Windows. */
int rocmd_fs_rename(const char *from, const char *to);
/* Removes a file or symlink; a missing PATH is fine. */
int rocmd_fs_unlink(const char *path);
/* Windows: CreateSymbolicLinkW, which needs a privilege or developer mode. */
int rocmd_fs_symlink(const char *target, const char *path);
int rocmd_fs_link(const char *from, const char *to);
/* Removes PATH (a file, symlink or whole folder) without following any
 * symlink; a missing PATH is fine. On Windows read-only files go too. */
int rocmd_fs_remove_tree(const char *path);
/* Sets or clears the write permission of a file (chmod; the read-only
 * attribute on Windows). */
int rocmd_fs_set_writable(const char *path, int writable);

/* ---- facts ---- */
/* What PATH is, not following a final link: 'f' file, 'd' folder, 'l'
 * symlink (Windows: any reparse point), 'o' other; 0 when it does not exist;
 * negative on other errors. SIZE and EXEC may be NULL. */
int rocmd_fs_kind(const char *path, uint64_t *size, int *exec);
/* Identity of PATH itself (lstat's device and inode; on Windows the volume
 * serial and the file index of GetFileInformationByHandle, the handle opened
 * with FILE_FLAG_OPEN_REPARSE_POINT); 0, or -ENOENT. */
struct rocmd_fs_id {
	uint64_t dev, ino;
};
int rocmd_fs_id_of(const char *path, struct rocmd_fs_id *id);
int rocmd_fs_id_eq(const struct rocmd_fs_id *a, const struct rocmd_fs_id *b);
/* The target of symlink PATH into BUF; ROCMD_EUNSUPPORTED on Windows. */
int rocmd_fs_readlink(const char *path, char *buf, size_t len);
/* The canonical absolute form of existing folder or file PATH, every link
 * resolved (realpath; GetFinalPathNameByHandleW), '/'-separated. */
int rocmd_fs_realpath(const char *path, char *out, size_t len);

/* ---- paths ---- */
/* Length of the root of absolute PATH ("/" 1; "C:/" 3; "//server/share/"
 * its length), or 0 when PATH is not absolute. */
size_t rocmd_fs_path_root(const char *path);
/* Copies PATH into OUT with '/' separators (Windows: '\\' become '/' and a
 * \\?\ prefix is dropped; elsewhere a plain copy). ROCMD_EINVAL when too long. */
int rocmd_fs_path_norm(const char *path, char *out, size_t len);
/* Checks a relative path: no "..", no empty or "." component, no leading
 * '/', no '\\', ':' or control characters, components of at most 255 bytes. */
int rocmd_fs_relpath_ok(const char *path);
/* 0 when symlink TARGET, found at relative path REL, stays inside the root. */
int rocmd_fs_link_inside(const char *rel, const char *target);

/* ---- copying, hashing, walking ---- */
/* Copies the regular file SRC (never a symlink) to DST (created, exclusive)
 * with MODE, hashing what is written; ROCMD_ECORRUPT when the size or hash
 * differs from WANT_SIZE / WANT_HEX (WANT_HEX NULL: only compute). HEX_OUT
 * (may be NULL) gets the hash. Adds to ST->bytes as it goes and calls
 * ST->tick every few MiB (non-zero cancels). ST->reflink tries a clone
 * first. With ST->fsync, or where there is no syncfs, the copy is fsync'd
 * before it is closed. */
struct rocmd_fs_copy_stats {
	uint64_t bytes, bytes_copied;
	int (*tick)(void *ctx, uint64_t bytes);
	void *ctx;
	int reflink;
	int fsync;
};
int rocmd_fs_copy_file(const char *src, const char *dst, unsigned mode, uint64_t want_size,
                       const char *want_hex, char hex_out[ROCMD_SHA256_HEX],
                       struct rocmd_fs_copy_stats *st);
/* Hashes one regular file (never a symlink), with a failpoint. */
int rocmd_fs_hash_file(const char *path, char hex[ROCMD_SHA256_HEX], uint64_t *size);

/* One entry of a walked tree. */
struct rocmd_fs_entry {
	char *path; /* relative, '/'-separated */
	int kind;   /* 'f', 'l', 'd' */
	int exec;
	uint64_t size;
	char sha256[ROCMD_SHA256_HEX]; /* files, when hashed */
	char *link;
};
/* Lists ROOT (a real folder) recursively, sorted by path, never following a
 * symlink; refuses other file types and symlinks leaving ROOT with
 * ROCMD_EUNSAFE (on Windows every reparse point is refused). HASH hashes
 * each regular file. */
int rocmd_fs_walk(const char *root, int hash, struct rocmd_fs_entry **out, size_t *n, char *why,
                  size_t whylen);
void rocmd_fs_entries_free(struct rocmd_fs_entry *e, size_t n);

/* ---- durable files ---- */
/* The mode of a file written once and afterwards only replaced or removed
 * whole: read-only on POSIX systems; writable on Windows, where MoveFileExW
 * cannot replace a read-only file. */
#ifdef _WIN32
#define ROCMD_FS_MODE_SEALED 0644
#else
#define ROCMD_FS_MODE_SEALED 0444
#endif
/* Writes the LEN bytes at DATA to PATH, a new file (-EEXIST when it exists)
 * with MODE, flushed to disk before it is closed; on failure PATH is gone. */
int rocmd_fs_write_new(const char *path, const void *data, size_t len, unsigned mode);
/* Renames FROM to TO (rocmd_fs_rename), then flushes TO's folder, so the
 * rename survives a crash. */
int rocmd_fs_rename_sync(const char *from, const char *to);
/* Replaces file PATH (or creates it) with the LEN bytes at DATA, atomically
 * and durably: TMP, a name in PATH's folder (NULL: PATH.tmp; a crash's
 * leftover there is removed first), is written with rocmd_fs_write_new and
 * renamed over PATH with rocmd_fs_rename_sync. A reader, a crash included,
 * finds the old file or the new one, whole. */
int rocmd_fs_replace(const char *path, const char *tmp, const void *data, size_t len,
                     unsigned mode);
/* The first LEN - 1 bytes (at most) of regular file PATH into BUF, NUL-ended:
 * never through a link, never waiting on a FIFO (ROCMD_ECORRUPT: not a
 * regular file), for reading files in folders other users own. */
int rocmd_fs_read_head(const char *path, char *buf, size_t len);
/* Reads all of regular file PATH (never through a link) into *OUT (malloc'd,
 * NUL-terminated) and its length into *LEN (may be NULL): 0, -ENOENT when it
 * is absent, ROCMD_ECORRUPT when it is longer than MAX or not a regular file. */
int rocmd_fs_read_file(const char *path, size_t max, char **out, size_t *len);
/* Writes J to PATH durably (rocmd_fs_replace, 0644), printed, with a newline. */
int rocmd_fs_json_write(const char *path, const cJSON *j);
/* Reads a JSON file; -ENOENT when absent, ROCMD_ECORRUPT when unparsable. */
int rocmd_fs_json_read(const char *path, cJSON **out);

/* ---- swapping folders, removing what a process may have loaded ---- */
/* Swaps folders A and B atomically (renameat2 RENAME_EXCHANGE, which ext4,
 * xfs, btrfs and tmpfs support): 0, ROCMD_EUNSUPPORTED when the file system
 * or the system cannot (Windows: NTFS has no such call; the caller then does
 * two renames), or another error. Failpoint "deploy.exchange". */
int rocmd_fs_exchange(const char *a, const char *b);
/* Removes file PATH, which a process may have loaded. POSIX: an unlink (a
 * mapped library stays valid for the processes that loaded it). Windows: a
 * loaded DLL cannot be deleted but can be renamed, so it is renamed once
 * more, to a name of its own (PATH.<pid>-<ticks>.del), which frees PATH, and
 * that file is deleted at the next reboot (MOVEFILE_DELAY_UNTIL_REBOOT,
 * which needs admin rights; without them it stays, harmless). */
int rocmd_fs_remove_loaded(const char *path);

/* ---- reading what others installed (SDK discovery) ---- */
/* A file's type, size and times in nanoseconds (Linux st_mtim/st_ctim;
 * Windows FILETIME, 100 ns), and whether it is a link (a symlink; on Windows
 * a reparse point: a symlink or a junction). */
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

/* A folder being listed; rocmd_dir_read returns its entries one at a time
 * (opendir; FindFirstFileW, names converted to UTF-8). */
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

/* Maps all of PATH read-only (mmap; MapViewOfFile): *DATA and *LEN, for
 * rocmd_fs_unmap. An empty file is ROCMD_ECORRUPT. Returns 0 or a negative
 * error. */
int rocmd_fs_map(const char *path, const void **data, size_t *len);
void rocmd_fs_unmap(const void *data, size_t len);

/* ---- the system part (fs-unix.c, fs-win.c), for fs.c ---- */
/* Clones SRC's data into DST (reflink); ROCMD_EUNSUPPORTED when not possible. */
int rocmd_fs_os_clone(int src, int dst);
/* Starts the write-back of LEN bytes at OFF of FD without waiting (a hint). */
void rocmd_fs_os_writeback(int fd, uint64_t off, uint64_t len);
/* Size of the open file and whether it is a regular file. */
int rocmd_fs_os_fstat(int fd, uint64_t *size, int *regular);
/* Removes file PATH without a failpoint (cleaning up after a failure). */
void rocmd_fs_os_unlink(const char *path);
void rocmd_fs_os_unlink_in(const char *root, const char *path);
/* rocmd_fs_open_in and rocmd_fs_read without their failpoints (hashing
 * passes one "fs.read" for a whole file, as it always has). */
int rocmd_fs_os_open_in(const char *root, const char *path, int flags, unsigned mode);
int rocmd_fs_os_read(int fd, void *buf, size_t n, size_t *got);
/* Walks ROOT depth-first without following links, calling ADD for every
 * entry with its path relative to ROOT; refuses what rocmd_fs_walk refuses,
 * with a sentence in WHY. */
typedef int (*rocmd_fs_walk_fn)(void *ctx, const char *rel, int kind, int exec, uint64_t size,
                                const char *link);
int rocmd_fs_os_walk(const char *root, rocmd_fs_walk_fn add, void *ctx, char *why, size_t whylen);
/* The same for folder PATH below ROOT (entries relative to PATH). */
int rocmd_fs_os_walk_in(const char *root, const char *path, rocmd_fs_walk_fn add, void *ctx,
                        char *why, size_t whylen);

/* ---- beneath a root: the trees rocmd writes (I4) ---- */
/*
 * A deploy target's tree is reached from its root: the SDK's install folder,
 * the application's folder, rocmd's state folder for an overlay. The root is
 * given canonical (rocmd_fs_realpath, resolved once where an admin named
 * it); below it nothing is followed. Each function ending in _in opens the
 * folders of its PATH from ROOT without following a link in any component,
 * the root's own included (Linux: the root with openat2
 * RESOLVE_NO_SYMLINKS, the rest below it with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, or one openat(O_NOFOLLOW | O_DIRECTORY) per component
 * on kernels without openat2; Windows: every component below the root
 * checked for FILE_ATTRIBUTE_REPARSE_POINT, the handle opened with
 * FILE_FLAG_OPEN_REPARSE_POINT), then acts on PATH's last name relative to
 * that folder, not following it either. So a folder swapped for a symlink
 * at any moment makes the operation fail (ROCMD_EUNSAFE), never reach
 * outside the root.
 *
 * PATH must be ROOT followed by '/' and a relative path with no empty, "."
 * or ".." component (ROCMD_EUNSAFE otherwise); only the _in functions that
 * read facts (kind, identity, fsync, walk) take ROOT itself. ROOT NULL: no
 * root, PATH used as it is, exactly as the function without _in does (that
 * one is this one with NULL).
 */
/* PATH's part below ROOT: "" for ROOT itself, NULL when PATH is not ROOT or
 * below it, or has an empty, "." or ".." component below it. */
const char *rocmd_fs_below(const char *root, const char *path);
int rocmd_fs_mkdir_in(const char *root, const char *path, unsigned mode);
int rocmd_fs_open_in(const char *root, const char *path, int flags, unsigned mode);
/* FROM and TO both below ROOT. */
int rocmd_fs_rename_in(const char *root, const char *from, const char *to);
int rocmd_fs_exchange_in(const char *root, const char *a, const char *b);
int rocmd_fs_unlink_in(const char *root, const char *path);
int rocmd_fs_symlink_in(const char *root, const char *target, const char *path);
int rocmd_fs_link_in(const char *root, const char *from, const char *to);
int rocmd_fs_set_writable_in(const char *root, const char *path, int writable);
int rocmd_fs_kind_in(const char *root, const char *path, uint64_t *size, int *exec);
int rocmd_fs_id_of_in(const char *root, const char *path, struct rocmd_fs_id *id);
int rocmd_fs_readlink_in(const char *root, const char *path, char *buf, size_t len);
int rocmd_fs_fsync_dir_in(const char *root, const char *path);
int rocmd_fs_syncfs_in(const char *root, const char *path);
int rocmd_fs_remove_loaded_in(const char *root, const char *path);
/* What stopped a removal: the path that could not be removed and the
 * system's error (errno; on Windows the Win32 error), so that a caller can
 * say what to do about it (an immutable file: EPERM for root on Linux). */
struct rocmd_fs_fail {
	char path[ROCMD_FS_PATH_MAX];
	int err;
};
/* rocmd_fs_remove_tree below ROOT; FAIL (may be NULL) is filled when it fails. */
int rocmd_fs_remove_tree_in(const char *root, const char *path, struct rocmd_fs_fail *fail);
int rocmd_fs_walk_in(const char *root, const char *path, int hash, struct rocmd_fs_entry **out,
                     size_t *n, char *why, size_t whylen);
/* Copies SRC (below SROOT) to DST (below DROOT), as rocmd_fs_copy_file. */
int rocmd_fs_copy_file_in(const char *sroot, const char *src, const char *droot, const char *dst,
                          unsigned mode, uint64_t want_size, const char *want_hex,
                          char hex_out[ROCMD_SHA256_HEX], struct rocmd_fs_copy_stats *st);
int rocmd_fs_hash_file_in(const char *root, const char *path, char hex[ROCMD_SHA256_HEX],
                          uint64_t *size);

/* Flags of rocmd_fs_resolve. */
#define ROCMD_FS_RESOLVE_OWNER 0x1 /* also refuse a folder a non-admin owns or may write */
#define ROCMD_FS_RESOLVE_LAST 0x2  /* PATH's last component is checked as a folder too */
/*
 * Checks the folders from ROOT (itself included) down to PATH's parent (and
 * PATH itself with ROCMD_FS_RESOLVE_LAST, when it exists): each a real
 * folder, none a symlink (Windows: a reparse point), and with
 * ROCMD_FS_RESOLVE_OWNER none owned by anyone but root or rocmd's own user
 * (Windows: Administrators, SYSTEM, TrustedInstaller or rocmd's own user),
 * nor writable by the world (sticky or not) or by a group other than root's
 * and rocmd's own (POSIX only). 0; ROCMD_EUNSAFE (a link) or ROCMD_EPERM
 * (an owner or a mode refused) with a sentence naming the component in
 * WHY; -ENOENT or -ENOTDIR (and WHY) when a folder is missing or a file.
 */
int rocmd_fs_resolve(const char *root, const char *path, unsigned flags, char *why, size_t whylen);
/* For tests: take the component walk of kernels without openat2. */
extern int rocmd_fs_test_no_openat2;

/* ---- added for the package store (wpkg) ---- */
/* Opens ROOT/REL (REL relative, '/'-separated, as rocmd_fs_os_walk gives it)
 * with FLAGS, following no link in any component of REL, so a folder being
 * walked cannot have a subfolder swapped for a link between the walk and the
 * open (-ELOOP on Linux: openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
 * ROCMD_EUNSAFE on Windows, where the opened file's final path must be ROOT's
 * final path plus REL). Only ROOT itself may be reached through links. */
int rocmd_fs_open_beneath(const char *root, const char *rel, int flags);

#endif
