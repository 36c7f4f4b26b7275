/*
 * What the deploy engine's files share beyond the file layer (fs.h, whose
 * operations each pass a failpoint and never follow a link): the check of a
 * tree against a file list (deploy-fs.c) and the manifest formats
 * (deploy-journal.c). The platform's primitives (the atomic folder swap,
 * removing a DLL still loaded) are the file layer's. Not for use outside
 * daemon/deploy/.
 */
#ifndef ROCMD_DEPLOY_INTERNAL_H
#define ROCMD_DEPLOY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "deploy.h"
#include "common/fs.h"

#define DEPLOY_PATH_MAX ROCMD_FS_PATH_MAX

/* ---- checks of trees on disk (deploy-fs.c); file operations: fs.h ---- */
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

/* ---- manifests and the journal (deploy-journal.c) ---- */
/* A manifest: label, files, binary, digest. */
cJSON *deploy_manifest_json(const char *label, const struct rocmd_deploy_file *files, size_t n,
                            const struct rocmd_deploy_file *binary, char digest[ROCMD_SHA256_HEX]);
int deploy_manifest_parse(const cJSON *m, const char *source_root, const char *binary_source,
                          struct rocmd_deploy_files *out);

#endif
