/*
 * What the deploy engine's files share: file operations that each pass a
 * failpoint first (deploy-fs.c), the tree walker that copies, checks and
 * removes without following symlinks, the manifest and journal formats
 * (deploy-journal.c), and the platform primitives chosen by the build
 * (deploy-unix.c, deploy-win.c). Not for use outside daemon/deploy*.c.
 */
#ifndef ROCMD_DEPLOY_INTERNAL_H
#define ROCMD_DEPLOY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "deploy.h"

#define DEPLOY_PATH_MAX 4096

/* snprintf for paths and messages whose truncation is checked by length
 * limits elsewhere (a function of its own, so the compiler's truncation
 * analysis does not flag every path join); returns what snprintf does. */
int deploy_fmt(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- file operations with failpoints (deploy-fs.c): 0 or -errno ---- */
int deploy_mkdir(const char *path, unsigned mode);
int deploy_open(const char *path, int flags, unsigned mode); /* fd or -errno */
int deploy_read(int fd, void *buf, size_t n, size_t *got);
int deploy_write_all(int fd, const void *buf, size_t n);
int deploy_fsync(int fd);
int deploy_fsync_dir(const char *path);
int deploy_syncfs(const char *path);
int deploy_rename(const char *from, const char *to);
int deploy_unlink(const char *path);
int deploy_symlink(const char *target, const char *path);
int deploy_link(const char *from, const char *to);
/* Removes PATH (a file, symlink or whole folder) without following any
 * symlink; a missing PATH is fine. */
int deploy_remove_tree(const char *path);
/* Device and inode of PATH (lstat); 0, or -ENOENT. */
struct deploy_id {
	uint64_t dev, ino;
};
int deploy_id_of(const char *path, struct deploy_id *id);
int deploy_id_eq(const struct deploy_id *a, const struct deploy_id *b);

/* Copies the regular file SRC (never a symlink) to DST (created, exclusive)
 * with MODE, hashing what is written; ROCMD_ECORRUPT when the size or hash
 * differs from WANT_SIZE / WANT_HEX (WANT_HEX NULL: only compute). HEX_OUT
 * (may be NULL) gets the hash. Adds to *BYTES as it goes and calls TICK
 * every few MiB (non-zero cancels). REFLINK tries a clone first. */
struct deploy_copy_stats {
	uint64_t bytes, bytes_copied;
	int (*tick)(void *ctx, uint64_t bytes);
	void *ctx;
	int reflink;
};
int deploy_copy_file(const char *src, const char *dst, unsigned mode, uint64_t want_size,
                     const char *want_hex, char hex_out[ROCMD_SHA256_HEX],
                     struct deploy_copy_stats *st);

/* One entry of a walked tree. */
struct deploy_entry {
	char *path; /* relative, '/'-separated */
	int kind;   /* 'f', 'l', 'd' */
	int exec;
	uint64_t size;
	char sha256[ROCMD_SHA256_HEX]; /* files, when hashed */
	char *link;
};
/* Lists ROOT (a real folder) recursively, sorted by path, never following a
 * symlink; refuses other file types and symlinks leaving ROOT with
 * ROCMD_EUNSAFE. HASH hashes each regular file. */
int deploy_walk(const char *root, int hash, struct deploy_entry **out, size_t *n, char *why,
                size_t whylen);
void deploy_entries_free(struct deploy_entry *e, size_t n);
/* 0 when symlink TARGET, found at relative path REL, stays inside the root. */
int deploy_link_inside(const char *rel, const char *target);
/* Checks the tree at ROOT against a file list: exactly these files, sizes,
 * kinds, links and hashes, nothing else. Counts into *CHECKED and *BAD, the
 * first problem into FIRST_BAD. BYTES_DONE advances (progress). */
int deploy_check_tree(const char *root, const struct rocmd_deploy_file *files, size_t n,
                      uint64_t *checked, uint64_t *bad, char *first_bad, size_t first_len,
                      rocmd_deploy_progress_fn progress, void *ctx, const char *step, char *why,
                      size_t whylen);
/* A binary path that is a symlink to a sibling file (librocblas.so.0 ->
 * librocblas.so.0.1) gives that file; a regular file gives itself; anything
 * else ROCMD_EUNSAFE, a missing file -ENOENT. */
int deploy_binary_resolve(const char *in, char *out, size_t len);
/* Hashes one file (no symlink), with a failpoint; HEX gets the digest. */
int deploy_hash_file(const char *path, char hex[ROCMD_SHA256_HEX], uint64_t *size);

/* ---- manifests and the journal (deploy-journal.c) ---- */
/* A manifest: label, files, binary, digest. */
cJSON *deploy_manifest_json(const char *label, const struct rocmd_deploy_file *files, size_t n,
                            const struct rocmd_deploy_file *binary, char digest[ROCMD_SHA256_HEX]);
int deploy_manifest_parse(const cJSON *m, const char *source_root, const char *binary_source,
                          struct rocmd_deploy_files *out);
/* Writes JSON to PATH durably (temp beside it, fsync, rename, fsync folder). */
int deploy_json_write(const char *path, const cJSON *j);
/* Reads a JSON file; -ENOENT when absent, ROCMD_ECORRUPT when unparsable. */
int deploy_json_read(const char *path, cJSON **out);
/* Checks a relative path: no "..", no empty or "." component, no leading
 * '/', no '\\' or control characters. */
int deploy_path_ok(const char *path);

/* ---- platform primitives (deploy-unix.c / deploy-win.c) ---- */
/* Swaps folders A and B atomically: 0, or ROCMD_EUNSUPPORTED when the file
 * system cannot (the caller then does two renames), or -errno. */
int deploy_os_exchange(const char *a, const char *b);
/* Clones SRC's data into DST (reflink); ROCMD_EUNSUPPORTED when not possible. */
int deploy_os_clone(int src, int dst);
/* Removes a binary renamed aside; on Windows a DLL still loaded is deleted at
 * the next reboot instead. */
int deploy_os_remove_aside(const char *path);

#endif
