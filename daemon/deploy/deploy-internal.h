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
/* Checks the tree at ROOT (below TROOT, which may be NULL: a state folder)
 * against a file list: exactly these files, sizes,
 * kinds, links and hashes, nothing else. Counts into *CHECKED and *BAD, the
 * first problem into FIRST_BAD. BYTES_DONE advances (progress). */
int deploy_check_tree(const char *troot, const char *root, const struct rocmd_deploy_file *files,
                      size_t n, uint64_t *checked, uint64_t *bad, char *first_bad, size_t first_len,
                      rocmd_deploy_progress_fn progress, void *ctx, const char *step, char *why,
                      size_t whylen);

/* ---- the backup (deploy-backup.c) ---- */
/* Adds hipBLASLt's originals (T->lt_dir as it is now) to T's complete
 * backup when it was made without them; *ADDED 1 when it did (nothing when
 * the backup has them or T has no hipBLASLt folder). */
int deploy_backup_add_lt(const char *state_dir, const struct rocmd_deploy_target *t, int *added,
                         char *why, size_t whylen);

/* ---- a target's paths (deploy-paths.c) ---- */
/* What deploy_paths makes of a target: canonical, '/'-separated paths and
 * the roots they lie below, which the file operations are given (the
 * rocmd_fs_*_in functions: nothing below a root is followed, I4). */
struct deploy_paths {
	char lroot[DEPLOY_PATH_MAX];  /* the library folder lies below it */
	char lib[DEPLOY_PATH_MAX];    /* the library folder */
	char parent[DEPLOY_PATH_MAX]; /* its folder */
	int lib_kind;                 /* 'd', or 0: absent */
	int has_binary;
	char broot[DEPLOY_PATH_MAX]; /* the binary lies below it */
	/* The binary (a symlink to a sibling resolved: librocblas.so.0 ->
	 * librocblas.so.0.1) and its folder. */
	char bin[DEPLOY_PATH_MAX], bin_dir[DEPLOY_PATH_MAX];
	int bin_kind; /* 'f', or 0: absent */
};
/* Resolves target T, checking every folder on the way (see deploy.c). */
int deploy_paths(const struct rocmd_deploy_target *t, struct deploy_paths *p, char *why,
                 size_t whylen);
/* The root of P that PATH lies below (the library's, else the binary's), or NULL. */
const char *deploy_root_of(const struct deploy_paths *p, const char *path);
/* Path text helpers, every result bounded by DEPLOY_PATH_MAX (ROCMD_EINVAL
 * when it would not fit): FMT with A and B; DIR joined with NAME, no doubled
 * '/' after a root such as "/" or "C:/"; clean absolute PATH split into its
 * folder and last name (the folder of "/x" is "/"). */
int deploy_path_set(char *out, const char *fmt, const char *a, const char *b);
int deploy_join(char *out, const char *dir, const char *name);
void deploy_split(const char *path, char *dir, char *base);

/* ---- manifests and the journal (deploy-journal.c) ---- */
/* A manifest: label, files, binary, with HAS_LT hipBLASLt's folder's files
 * (LT, NLT: "hipblaslt"), digest. */
cJSON *deploy_manifest_json(const char *label, const struct rocmd_deploy_file *files, size_t n,
                            const struct rocmd_deploy_file *binary, int has_lt,
                            const struct rocmd_deploy_file *lt, size_t nlt,
                            char digest[ROCMD_SHA256_HEX]);
/* What rocBLAS's folder and binary of target NAME hold while a request with
 * keep_lib leaves them (FLAGS its ROCMD_DEPLOY_*): current.json's files, else
 * (none, or ROCMD_DEPLOY_NEW_ORIGINALS) the backup's originals;
 * no files for a target without either (an overlay never deployed to). */
int deploy_kept_files(const char *state_dir, const char *name, unsigned flags,
                      struct rocmd_deploy_files *out, char *why, size_t whylen);
/* Manifest M as a file list; with SOURCE_ROOT (a backup's library/) each
 * file's source is inside it, hipBLASLt's in hipblaslt/ beside it. */
int deploy_manifest_parse(const cJSON *m, const char *source_root, const char *binary_source,
                          struct rocmd_deploy_files *out);

/* ---- the deploy transaction (deploy.c, deploy-verify.c) ---- */
/* One library folder of a transaction: rocBLAS's, and hipBLASLt's beside it
 * when the request replaces that too. */
struct txn_dir {
	char lib[DEPLOY_PATH_MAX]; /* the target folder, canonical parent */
	char parent[DEPLOY_PATH_MAX];
	char stage[DEPLOY_PATH_MAX]; /* <parent>/.rocmd-stage-<name> */
	char old[DEPLOY_PATH_MAX];   /* <parent>/.rocmd-old-<name> (two-rename swaps) */
	/* The root the paths above lie below (deploy_paths): nothing beneath
	 * it is followed (I4). */
	char lroot[DEPLOY_PATH_MAX];
	int existed;
	struct rocmd_fs_id new_id, old_id;
};

/* Everything a transaction needs to be undone or finished; what the journal
 * holds. */
struct txn {
	char name[ROCMD_DEPLOY_NAME_MAX + 1];
	char dir[DEPLOY_PATH_MAX];     /* <state>/deploy/<name> */
	char journal[DEPLOY_PATH_MAX]; /* <dir>/journal */
	/* D[0] rocBLAS's library folder, D[1] hipBLASLt's (ND 2: replaced too). */
	struct txn_dir d[2];
	int nd;
	/* 1: D[0] stays as it is (rocmd_deploy_request.keep_lib): recorded in
	 * the journal, never staged, swapped, undone or checked. */
	int keep0;
	int has_binary, windows;
	char bin[DEPLOY_PATH_MAX], bin_dir[DEPLOY_PATH_MAX];
	char bin_new[DEPLOY_PATH_MAX], bin_old[DEPLOY_PATH_MAX];
	struct rocmd_fs_id bin_new_id;
	char label[256];
	char broot[DEPLOY_PATH_MAX]; /* the binary's root, as txn_dir's */
	cJSON *manifest;             /* the new content (owned) */
	/* What stopped the last removal that failed (fail_why says it). */
	struct rocmd_fs_fail fail;
};
/* Fills the paths of T for target TG (deploy.c). */
int deploy_txn_paths(struct txn *t, const char *state_dir, const struct rocmd_deploy_target *tg,
                     int create, int need_lt, char *why, size_t whylen);
/* Checks the swapped-in content of T against REQ (deploy-verify.c). */
int deploy_verify_swapped(struct txn *t, const struct rocmd_deploy_request *req, char *why,
                          size_t whylen);

#endif
