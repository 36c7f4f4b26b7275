/*
 * The deploy engine: replaces a target's rocBLAS (its library folder and,
 * where it has one, its binary; hipBLASLt's library folder beside it when
 * the package carries one) with the files of a package, as one
 * transaction that a crash, an I/O error or a failed verification cannot
 * leave half done (DESIGN §5, invariants I1-I4). docs/DEPLOY.md describes
 * the steps, the journal, the recovery table and the backup layout.
 *
 * Like the package store (pkg.h) this is blocking library code: no libuv, no
 * database. The daemon runs rocmd_deploy_run, _recover, _verify and _backup as
 * jobs on its job runner (deploy-jobs.c, one job at a time) and records the
 * outcome itself; tests, benchmarks and tools call them directly.
 *
 * State under <state>/deploy/<name>/ (NAME is the target's stable name):
 *   journal          the intent record of a transaction in progress (JSON)
 *   current.json     the manifest of what is deployed now (after a commit)
 *   backup/          the vendor's originals, kept once, never overwritten:
 *     manifest.json  every file with its hash; written last, so a backup
 *                    without it is incomplete and is redone
 *     library/       the original library folder
 *     hipblaslt/     the original hipBLASLt library folder (target.lt_dir);
 *                    added to a backup made without it before a deploy
 *                    first replaces that folder
 *     binary         the original rocBLAS binary (when the target has one)
 *
 * Rollback is a deploy like any other: rocmd_deploy_backup_load gives the
 * original files as a file list whose sources point into backup/, and the
 * previous package's files come from the store as for any deploy.
 */
#ifndef ROCMD_DEPLOY_H
#define ROCMD_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

/* Longest target name (letters, digits, '.', '_', '-'; not starting with '.'). */
#define ROCMD_DEPLOY_NAME_MAX 64

/* A place rocBLAS is deployed to. */
struct rocmd_deploy_file;

struct rocmd_deploy_target {
	const char *name;    /* stable name: <state>/deploy/<name>/ */
	const char *lib_dir; /* absolute library folder, replaced as a whole */
	/* Absolute path of the rocBLAS binary to replace (librocblas.so.N,
	 * rocblas.dll), or NULL: app-private and overlay targets have none. */
	const char *binary;
	/* Windows layout and rules: a loaded DLL is renamed aside
	 * (to .rocmd-old-<name> beside it) before the new one is renamed in, and the
	 * manual backup names are bin\rocblas_backup.dll + bin\rocblas_backup\. */
	int windows;
	/* The tree the target belongs to (the SDK's install folder, the
	 * application's folder, rocmd's state folder for an overlay), or NULL.
	 * It is resolved once (/opt/rocm -> /opt/rocm-6.2.4 is fine); the
	 * library folder and the binary must lie inside it, and no folder
	 * below it on their way may be a symlink (Windows: a reparse point):
	 * ROCMD_EUNSAFE naming it (I4). Every file operation then opens those
	 * folders again from the root without following any. Without a root,
	 * the library folder's grandparent and the binary's folder stand for
	 * it. */
	const char *root;
	/* 1: the folders from the root down may belong to (or be writable by)
	 * a user other than root and rocmd's own: configured as such. 0: such
	 * a target is refused with ROCMD_EUNSAFE (I4). Nothing is followed
	 * either way. */
	int user_owned_ok;
	/* What rocmd itself put in the library folder (each file's path
	 * relative to it and its SHA-256; NOURS of them, may be 0): with
	 * ROCMD_DEPLOY_NEW_ORIGINALS a file of the target whose path and hash
	 * are one of these is left out of the new originals (I1: an SDK update
	 * that left rocmd's files in place does not make them the vendor's). */
	const struct rocmd_deploy_file *ours;
	size_t nours;
	/* The same for hipBLASLt's folder (paths relative to LT_DIR), left out
	 * of its new originals with ROCMD_DEPLOY_NEW_LT_ORIGINALS. */
	const struct rocmd_deploy_file *lt_ours;
	size_t nlt_ours;
	/* hipBLASLt's library folder beside rocBLAS's (absolute, inside ROOT),
	 * or NULL: backed up with the originals, and replaced in the same
	 * transaction when a request carries its files (LT). */
	const char *lt_dir;
};

enum rocmd_deploy_kind { ROCMD_DEPLOY_FILE = 'f', ROCMD_DEPLOY_SYMLINK = 'l' };

/* One file to place. For the library folder PATH is relative to lib_dir;
 * for the binary PATH is ignored (the target's binary path is used). */
struct rocmd_deploy_file {
	const char *path; /* cleaned, '/'-separated, relative, no ".." */
	int kind;         /* enum rocmd_deploy_kind */
	int exec;         /* executable bit */
	uint64_t size;
	char sha256[ROCMD_SHA256_HEX]; /* lower-case hex; "" for symlinks */
	const char *link;              /* symlink target (relative, inside), else NULL */
	/* Absolute file to copy from: a store object (rocmd_store_object_path)
	 * or a backup file; NULL for symlinks. Read, never modified or linked. */
	const char *source;
};

/* Progress: STEP is "plan", "stage", "swap", "verify", "commit", "backup",
 * "rollback". A non-zero return cancels (ROCMD_ECANCELED), which is honoured
 * until the swap; after it the transaction finishes or rolls back. */
struct rocmd_deploy_progress {
	const char *step;
	uint64_t bytes_done, bytes_total;
	uint64_t files_done, files_total;
};
typedef int (*rocmd_deploy_progress_fn)(const struct rocmd_deploy_progress *p, void *ctx);

/* A check run after the swap and before the commit (the GEMM smoke test, in
 * the daemon): 0 keeps the deployment, anything else rolls it back with WHY. */
typedef int (*rocmd_deploy_check_fn)(const struct rocmd_deploy_target *t, void *ctx, char *why,
                                     size_t whylen);

/* Request flags. */
#define ROCMD_DEPLOY_NO_BACKUP 0x1     /* do not back up the originals (overlay targets) */
#define ROCMD_DEPLOY_MANUAL_BACKUP 0x2 /* also copy them to the rocblas_backup names */
#define ROCMD_DEPLOY_CREATE 0x4        /* lib_dir may not exist yet (overlay, new app copy) */
/* The target holds new originals: an SDK update replaced what rocmd had put
 * there (or the originals it had backed up). The backup is kept, renamed to
 * backup.<N> (I1: never overwritten, never dropped), and the current content
 * becomes the backup of the originals; a manual rocblas_backup, which holds
 * the older originals, is not adopted. */
#define ROCMD_DEPLOY_NEW_ORIGINALS 0x8
/* The same for hipBLASLt's folder alone: an update replaced what rocmd had
 * put there (or the originals it had backed up). Each folder's originals come
 * from where its own flag says: the target with the flag, else the earlier
 * generation (copied, every file checked against its manifest), so that an
 * update of one library never makes what rocmd put in the other an original. */
#define ROCMD_DEPLOY_NEW_LT_ORIGINALS 0x10

struct rocmd_deploy_request {
	const char *state_dir;
	struct rocmd_deploy_target target;
	const struct rocmd_deploy_file *files; /* the new library folder's content */
	size_t nfiles;
	const struct rocmd_deploy_file *binary; /* the new binary, or NULL (kept as is) */
	/* 1: target.lt_dir is replaced by LT_FILES (NLT_FILES, paths relative
	 * to it) in the same transaction; 0: it stays as it is. */
	int lt;
	const struct rocmd_deploy_file *lt_files;
	size_t nlt_files;
	/* 1 (with LT, without a BINARY; FILES unused): rocBLAS's library folder
	 * stays as it is, never staged or swapped (a package carrying only
	 * hipBLASLt's folder). The manifest records what it holds: current.json's
	 * files, or the originals' after an SDK update or before any deploy. */
	int keep_lib;
	/* Recorded in the journal and current.json (e.g. "pkg 12 <digest>",
	 * "original"); the daemon's own reference to what was deployed. */
	const char *label;
	/* The GPU archs the library must serve, comma-separated ("gfx1103" or
	 * "gfx1030,gfx803": every GPU's), or NULL; checked after the swap. */
	const char *arch;
	/* The same for hipBLASLt's folder when LT (NULL: not asked). */
	const char *lt_arch;
	unsigned flags; /* ROCMD_DEPLOY_* */
	rocmd_deploy_progress_fn progress;
	rocmd_deploy_check_fn check; /* may be NULL */
	void *ctx;                   /* for progress and check */
};

struct rocmd_deploy_result {
	int backup_made;    /* the originals were backed up by this run */
	int backup_adopted; /* ... from an existing manual rocblas_backup */
	int exchange;       /* the folder swap was one RENAME_EXCHANGE (else two renames) */
	int rolled_back;    /* swapped, then undone (verify or check failed) */
	/* The commit was journaled: the new content is in place and verified.
	 * Set with a negative return when only the cleanup after it failed; the
	 * journal then stays and rocmd_deploy_recover finishes it. */
	int committed;
	uint64_t files;        /* files placed */
	uint64_t bytes;        /* bytes placed */
	uint64_t bytes_copied; /* of which copied (the rest cloned by reflink) */
	/* Microseconds per step, and the window during which the binary and the
	 * library folder did not belong to the same package (the time between the
	 * folder swap and the binary rename; 0 without a binary). */
	int64_t stage_us, swap_us, verify_us, commit_us, pair_window_ns;
	char manifest[ROCMD_SHA256_HEX]; /* digest of the deployed manifest */
	int backup_retired;              /* N: the earlier originals were kept as backup.<N> */
	/* hipBLASLt's originals were added to a backup made without them (it
	 * was made before the target had a hipBLASLt folder), before this run
	 * replaced that folder. */
	int lt_backup_added;
};

/*
 * Deploys REQ: plan (check paths: I4), back up the originals on the first
 * deploy to this target (I1), stage a full copy of the new library in
 * <parent of lib_dir>/.rocmd-stage-<name> with every hash checked, journal,
 * swap the folder (and the binary), verify every file's hash, the arch and
 * the binary/library pairing, run REQ->check, then commit (journal removed,
 * old tree removed) or roll back. Returns 0, or a negative code with a
 * sentence in WHY; on any failure the target is left exactly as it was
 * (RESULT->rolled_back says when it had been swapped). Refuses with
 * ROCMD_EBUSY when a journal of an unfinished transaction exists (run
 * rocmd_deploy_recover first).
 */
int rocmd_deploy_run(const struct rocmd_deploy_request *req, struct rocmd_deploy_result *result,
                     char *why, size_t whylen);

/* What recovery found and did. */
enum rocmd_deploy_recovery_action {
	ROCMD_DEPLOY_RECOVER_NONE = 0, /* no journal: nothing to do */
	ROCMD_DEPLOY_RECOVER_UNDONE,   /* the target is back to the old tree */
	ROCMD_DEPLOY_RECOVER_FINISHED, /* the new tree was complete and is kept */
};
struct rocmd_deploy_recovery {
	int action;      /* enum rocmd_deploy_recovery_action */
	char step[32];   /* the last step the journal recorded */
	char label[256]; /* what was being deployed */
	char what[512];  /* one sentence for the event log */
};

/*
 * Finishes or undoes the transaction journaled for target NAME under
 * STATE_DIR (the journal names the paths; TARGET may be NULL, else its paths
 * must agree). Idempotent: running it again, or after a crash inside it,
 * gives the same result. Also removes stage and old-tree leftovers.
 */
int rocmd_deploy_recover(const char *state_dir, const char *name, struct rocmd_deploy_recovery *out,
                         char *why, size_t whylen);
/* Names of targets with a journal under STATE_DIR (start-up recovery); free
 * each and the array. */
int rocmd_deploy_pending(const char *state_dir, char ***names, size_t *n);

/* What target NAME holds while its journal stays (a recovery that failed):
 * the old tree, the new one (the journal's label), a mix of the two (the
 * library folder of one, the binary of the other) or neither. */
enum rocmd_deploy_holds {
	ROCMD_DEPLOY_HOLDS_UNKNOWN = 0,
	ROCMD_DEPLOY_HOLDS_OLD,
	ROCMD_DEPLOY_HOLDS_NEW,
	ROCMD_DEPLOY_HOLDS_MIXED,
};
struct rocmd_deploy_journal_state {
	char step[32];   /* the last step the journal recorded */
	char label[256]; /* what was being deployed */
	int holds;       /* enum rocmd_deploy_holds */
};
/* Reads target NAME's journal and looks at the disk (device and inode, as
 * recovery does); ROCMD_ENOTFOUND without a journal, ROCMD_ECORRUPT for one
 * that cannot be read (HOLDS is then UNKNOWN). */
int rocmd_deploy_journal_state(const char *state_dir, const char *name,
                               struct rocmd_deploy_journal_state *out);

/* What verification found. */
struct rocmd_deploy_verify_report {
	uint64_t files_checked;
	uint64_t files_bad;  /* missing, extra, wrong size, type or hash */
	char first_bad[512]; /* the first such path and what is wrong */
	int arch_ok;         /* 1 covers ARCH, 0 not, -1 not asked */
	int pair_ok;         /* 1 binary and library of one manifest, 0 not, -1 no binary */
	int lt_checked;      /* hipBLASLt's folder was deployed too and was checked */
	char label[256];     /* current.json's label */
};

/*
 * Checks target NAME against its current.json: every file's size and hash
 * (and that no other file exists), the binary's hash, that the library
 * serves each of the comma-separated ARCH (may be NULL) through
 * rocblas-library.h. 0 when all is well,
 * ROCMD_ECORRUPT when something differs (REPORT says what), ROCMD_ENOTFOUND
 * when nothing was deployed there.
 */
int rocmd_deploy_verify(const char *state_dir, const struct rocmd_deploy_target *t,
                        const char *arch, rocmd_deploy_progress_fn progress, void *ctx,
                        struct rocmd_deploy_verify_report *report, char *why, size_t whylen);

/* What the backup holds. */
struct rocmd_deploy_backup_info {
	int exists;     /* a complete backup (manifest.json) is there */
	int adopted;    /* made from an existing manual rocblas_backup */
	uint64_t files; /* library files */
	uint64_t bytes;
	int has_binary;
	int has_lt;        /* hipBLASLt's folder was backed up too (hipblaslt/) */
	uint64_t lt_files; /* its files */
	char manifest[ROCMD_SHA256_HEX];
	int retired; /* N: this call kept the earlier backup as backup.<N>; 0 none */
};

/*
 * Backs up target T's current content (or an existing manual rocblas_backup
 * whose content checks out) under <state>/deploy/<name>/backup, hashing each
 * file; with ROCMD_DEPLOY_MANUAL_BACKUP in FLAGS also to the rocblas_backup
 * names. Does nothing when a complete backup exists (I1): INFO describes it;
 * with ROCMD_DEPLOY_NEW_ORIGINALS or ROCMD_DEPLOY_NEW_LT_ORIGINALS that
 * backup is first renamed to backup.<N> (the lowest free N) and a new one is
 * made, each folder from the target or from backup.<N> as its flag says.
 */
int rocmd_deploy_backup(const char *state_dir, const struct rocmd_deploy_target *t, unsigned flags,
                        struct rocmd_deploy_backup_info *info, char *why, size_t whylen);

/* ---- generations of the originals (deploy-generations.c) ---- */

struct rocmd_deploy_files;

#define ROCMD_DEPLOY_GENERATIONS_MAX 64
/* One generation: GEN 0 is backup/ (in use), N is backup.<N>. */
struct rocmd_deploy_generation {
	int gen;
	int64_t created_unix;
	uint64_t files, bytes; /* the binary counted as a file */
};
/* Target NAME's generations with a manifest, oldest first, the one in use
 * last; at most MAX into OUT, *N of them. */
int rocmd_deploy_generations(const char *state_dir, const char *name,
                             struct rocmd_deploy_generation *out, size_t max, size_t *n);
/* Removes the oldest generations but the first beyond KEEP (at least 2: the
 * oldest originals and the one in use are never removed); *REMOVED of them. */
int rocmd_deploy_generations_prune(const char *state_dir, const char *name, int keep, int *removed,
                                   char *why, size_t whylen);
/* Generation GEN of target NAME's originals as a deploy file list (sources
 * inside it); GEN 0 is rocmd_deploy_backup_load's. */
int rocmd_deploy_backup_load_gen(const char *state_dir, const char *name, int gen,
                                 struct rocmd_deploy_files *out, char *why, size_t whylen);
/* Every file of generation GEN hashed again against its manifest. */
struct rocmd_deploy_backup_check {
	int gen;
	uint64_t checked, bad;
	char first_bad[512]; /* "library/<path>", "hipblaslt/<path>" or "binary" */
};
int rocmd_deploy_backup_check(const char *state_dir, const char *name, int gen,
                              struct rocmd_deploy_backup_check *c, char *why, size_t whylen);

/* What the backup of target NAME's originals holds (INFO->exists 0: none,
 * or one cut short); 0, or an error reading its manifest. */
int rocmd_deploy_backup_info(const char *state_dir, const char *name,
                             struct rocmd_deploy_backup_info *info);

/* A file list owned by the engine (rocmd_deploy_files_free). */
struct rocmd_deploy_files {
	struct rocmd_deploy_file *files;
	size_t n;
	struct rocmd_deploy_file *binary; /* or NULL */
	/* hipBLASLt's folder (HAS_LT: the manifest names it, maybe empty). */
	int has_lt;
	struct rocmd_deploy_file *lt_files;
	size_t nlt;
	char *label;
};
void rocmd_deploy_files_free(struct rocmd_deploy_files *f);

/* The originals of target NAME as a deploy file list (sources inside
 * backup/), for rollback to the original; ROCMD_ENOTFOUND without a backup. */
int rocmd_deploy_backup_load(const char *state_dir, const char *name,
                             struct rocmd_deploy_files *out, char *why, size_t whylen);
/* What is deployed at target NAME now (current.json; sources are NULL). */
int rocmd_deploy_current_load(const char *state_dir, const char *name,
                              struct rocmd_deploy_files *out, char *why, size_t whylen);

/* Removes target NAME's backup of the originals: only on the user's explicit
 * request (I1). ROCMD_EBUSY while a journal exists. */
int rocmd_deploy_backup_discard(const char *state_dir, const char *name, char *why, size_t whylen);

/* 0 when NAME is a valid target name, else ROCMD_EINVAL. */
int rocmd_deploy_name_check(const char *name);

#endif
