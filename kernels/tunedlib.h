/*
 * The tuned kernel library: for one (device, software) pair — GPU arch, name
 * and compute units; driver, runtime, compiler and kernel source hash, the
 * tuning key of tune.h without the problem — the winning configuration of
 * every tuned problem shape (dtype, transposes, M, N, K, batch), its measured
 * time and the default's, and its compiled code object (CUDA: a cubin from
 * NVRTC; HIP: an hsaco from hiprtc). The CPU backend has no code object: its
 * configuration is the parameters of the compiled-in kernel.
 *
 * On disk (docs/TUNEDLIB.md) a library is a folder the caller names (the
 * daemon uses <state>/tuned/<arch>-<sdk>/, see tunedlib_dir_name()) holding
 * generations: CURRENT names the live one ("v12"), v12/index.json lists the
 * entries (versioned JSON), v12/co/<sha256>.<kind> are the code objects,
 * named by the hash of their bytes. tunedlib_write() builds a new generation
 * in a temporary folder, fsyncs every file and the folder, renames it into
 * place, then replaces CURRENT (temp file, fsync, rename, fsync the folder):
 * a reader sees the old library or the new one, never half of one. The
 * previous generation is kept one round for readers that read CURRENT just
 * before the switch; older ones and crash leftovers are removed.
 *
 * Vendor solutions: where a vendor library (cuBLASLt, rocBLAS, hipBLASLt)
 * was tuned on the same device, its winner for a problem replaces rocmd's when
 * it is faster (tunedlib_offer_vendor()); such an entry applies only to its own
 * problem, through that vendor's backend (librocmd-gemm runs it), never as
 * the nearest shape of another.
 *
 * Selection (tunedlib_select(), DESIGN §5): the entry of the same problem
 * when its configuration is valid for it; else, among the tuned shapes of the
 * same dtype and transposes whose configuration the space's predicate accepts
 * for the problem, the one predicted fastest by the GPU cost model
 * (costmodel.h; the default instead where it is predicted 10 % faster) or, on
 * the CPU space, the nearest (distance Σ|log2 ratio| of M, N, K and batch, as
 * the tuner's seed set); else the default configuration (space_default_for()).
 *
 * Export and import carry results (configurations and times, no code
 * objects) between machines with the same GPU and software: an import is
 * refused, with a sentence saying which field differs, unless backend, arch,
 * device name, compute units, driver, runtime, compiler and source hash all
 * match the local key.
 *
 * Functions return 0 or a negative code from common/error.h, with a sentence
 * in WHY where the signature has one. No libuv, no SQLite: the daemon and
 * rocmtune hand in a tune_store.
 */
#ifndef ROCMD_KERNELS_TUNEDLIB_H
#define ROCMD_KERNELS_TUNEDLIB_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/space.h"
#include "kernels/tune.h"

/* The on-disk format version written into index.json and exports. Readers
 * refuse a newer version; bump it when a field changes meaning. */
#define TUNEDLIB_VERSION 1
#define TUNEDLIB_FORMAT "rocmd-tunedlib"            /* index.json "format" */
#define TUNEDLIB_EXPORT_FORMAT "rocmd-tune-results" /* exports */
/* Named limits a reader enforces before it trusts a file. */
#define TUNEDLIB_MAX_ENTRIES 65536
#define TUNEDLIB_MAX_INDEX (16 << 20) /* bytes of index.json or of an import */
#define TUNEDLIB_MAX_CODE (64 << 20)  /* bytes of one code object */
#define TUNEDLIB_MAX_TIME_MS 3.6e6    /* a time above an hour is refused as corrupt */

/* One tuned shape. Code bytes are owned by the library. */
struct tunedlib_entry {
	char problem[64];           /* gemm_problem_key(): "fp32:NN:1024x1024x1024:b1" */
	struct gemm_problem p;      /* parsed back (tight layout) */
	char config[SPACE_KEY_MAX]; /* the winner, space_key() form */
	double winner_ms;           /* > 0 */
	double default_ms;          /* the default re-timed alongside; 0 when unknown */
	/* A vendor library's solution that beat rocmd's kernels on this problem:
	 * the vendor-solution backend that runs it ("cublaslt", "rocblas",
	 * "hipblaslt"; config is then that backend's "SOL=<n>") and the SHA-256 of
	 * the library it was tuned with (another build of it: the entry is not
	 * used). "" for rocmd's own kernels. */
	char vendor[16];
	char vendor_sha256[65];
	char code_kind[8];          /* "cubin", "hsaco", or "" (none: CPU backend) */
	char code_sha256[65];       /* hex, "" when no code object */
	const void *code;
	size_t code_len;
};

struct tunedlib;

/* An empty library for ID (its problem field is ignored). */
int tunedlib_new(const struct tune_key *id, struct tunedlib **out);
void tunedlib_free(struct tunedlib *lib);
/* The device and software the library belongs to (problem empty). */
const struct tune_key *tunedlib_id(const struct tunedlib *lib);
/* The generation number read or last written (0 for a library never on disk). */
uint64_t tunedlib_generation(const struct tunedlib *lib);
int tunedlib_count(const struct tunedlib *lib);
/* Entry I, 0 <= I < count, in problem-key order; NULL past the end. */
const struct tunedlib_entry *tunedlib_entry_at(const struct tunedlib *lib, int i);
/* The entry of PROBLEM (a problem key), or NULL. */
const struct tunedlib_entry *tunedlib_find(const struct tunedlib *lib, const char *problem);

/*
 * Adds (or replaces) PROBLEM's winner. Every field is validated: a problem
 * key that parses back to itself, a non-empty configuration key of at most
 * SPACE_KEY_MAX-1 printable characters, 0 < WINNER_MS <= TUNEDLIB_MAX_TIME_MS,
 * 0 <= DEFAULT_MS <= TUNEDLIB_MAX_TIME_MS. A replaced entry loses its code.
 */
int tunedlib_add(struct tunedlib *lib, const char *problem, const char *config, double winner_ms,
                 double default_ms, char *why, size_t whylen);
/* How much faster rocmd's winner must be than a vendor's solution to stay:
 * two medians measured apart differ by a few percent on a GPU (clocks, the
 * other process's load), and the goal is never slower than the vendor. */
#define TUNEDLIB_VENDOR_MARGIN 0.03
/*
 * Offers a vendor library's tuned solution for PROBLEM (vendor-solution
 * backend VENDOR, library digest SHA256, configuration CONFIG, measured
 * WINNER_MS): it becomes PROBLEM's entry when the problem has none or when the
 * entry's winner is not at least TUNEDLIB_VENDOR_MARGIN faster, so that a
 * tuned problem never runs slower than the vendor's best. The entry's default
 * time is kept (it is rocmd's default). 1 when taken, 0 when rocmd's winner
 * stays, or a negative code.
 */
int tunedlib_offer_vendor(struct tunedlib *lib, const char *problem, const char *vendor,
                          const char *sha256, const char *config, double winner_ms, char *why,
                          size_t whylen);
/* The entry of P that is a vendor's solution (exact problem), or -1. */
int tunedlib_vendor_entry(const struct tunedlib *lib, const struct gemm_problem *p);
/*
 * Offers every winner of VKEY in ST (a vendor-solution backend's results for
 * the same device, VENDOR's library with digest SHA256) to LIB, as
 * tunedlib_offer_vendor(). *TAKEN (may be NULL) gets the count taken.
 */
int tunedlib_merge_vendor(struct tunedlib *lib, struct tune_store *st, const struct tune_key *vkey,
                          const char *vendor, const char *sha256, int *taken, char *why,
                          size_t whylen);
/* Attaches a code object (copied) of KIND ("cubin", "hsaco") to PROBLEM. */
int tunedlib_set_code(struct tunedlib *lib, const char *problem, const char *kind, const void *code,
                      size_t len);

/*
 * Builds a library from the declared winners of ST for ID's device and
 * software (st->winners(), same software only). Default times come from
 * st->winner_default when the store has it, else stay 0 (unknown).
 */
int tunedlib_from_store(struct tune_store *st, const struct tune_key *id, struct tunedlib **out,
                        char *why, size_t whylen);

/*
 * Compiles the code object of every entry that lacks one, for the library's
 * backend and arch: "cuda" through NVRTC without a device (the kernel source's
 * hash must equal the library's source hash, else ROCMD_EINVAL: the winners
 * were tuned on another kernel); "hip" through hiprtc in a child process at
 * HIPRTC_PATH (NULL: ROCMD_EUNSUPPORTED); "cpu": nothing to do (0).
 */
int tunedlib_compile(struct tunedlib *lib, const char *hiprtc_path, char *why, size_t whylen);

/* Writes LIB as the new generation of folder DIR (created if missing), as the
 * file comment says. On success tunedlib_generation() is the new number. */
int tunedlib_write(struct tunedlib *lib, const char *dir, char *why, size_t whylen);
/*
 * Reads the live generation of DIR. ROCMD_ENOTFOUND when DIR holds no
 * library; ROCMD_ECORRUPT (with the file and the field in WHY) for a
 * truncated or damaged index, a missing code object or one whose hash or size
 * does not match; ROCMD_EVERSION for a newer format.
 */
int tunedlib_open(const char *dir, struct tunedlib **out, char *why, size_t whylen);

/* "<arch>-<sdk>" for ID: the folder name under <state>/tuned/. The SDK part
 * is the runtime version (the compiler's for the CPU backend), with every
 * character outside [A-Za-z0-9._] turned into '_'. */
int tunedlib_dir_name(const struct tune_key *id, char *buf, size_t len);

/* ---- selection ---- */

enum tunedlib_how {
	TUNEDLIB_EXACT = 0, /* this very shape was tuned */
	TUNEDLIB_NEAREST,   /* the nearest tuned shape whose configuration is valid */
	TUNEDLIB_DEFAULT,   /* nothing tuned applies: the space's default for P */
};
const char *tunedlib_how_name(enum tunedlib_how how); /* "exact", "nearest", "default" */

struct tunedlib_choice {
	enum tunedlib_how how;
	int entry;                  /* index of the entry used, -1 for the default */
	char config[SPACE_KEY_MAX]; /* the configuration to run */
	struct space_point pt;      /* the same, as a point of SPACE */
	double distance;            /* Σ|log2 ratio| to the entry's shape; 0 for exact */
	char why[256];              /* a sentence: what was chosen and why */
};

/*
 * Chooses the configuration for P on DEV (DEV may be NULL) in SPACE, the
 * space the backend tunes for P. LIB may be NULL (defaults only). An entry
 * whose configuration does not parse in SPACE or that the predicate rules out
 * for P is skipped (the reason lands in OUT->why when nothing else applies).
 * ROCMD_ENOTFOUND only when even the default has no valid point.
 */
int tunedlib_select(const struct tunedlib *lib, const struct space_def *space,
                    const struct gemm_problem *p, const struct backend_device_info *dev,
                    struct tunedlib_choice *out);

/* ---- export and import ---- */

/* The results (no code objects) as JSON or CSV, malloc'd and NUL-terminated. */
int tunedlib_export_json(const struct tunedlib *lib, char **out, size_t *len);
int tunedlib_export_csv(const struct tunedlib *lib, char **out, size_t *len);
/*
 * Parses an export (JSON or CSV, told apart by the first non-blank byte),
 * validates every field, and refuses (ROCMD_EINVAL, WHY names the field and
 * both values) results from another device or software than LOCAL. A
 * malformed file is ROCMD_ECORRUPT, a newer format ROCMD_EVERSION.
 */
int tunedlib_import(const char *data, size_t len, const struct tune_key *local,
                    struct tunedlib **out, char *why, size_t whylen);
/* Declares every entry of LIB as the winner of its problem in ST (set_winner
 * under LIB's key); *STORED (may be NULL) gets the count. */
int tunedlib_to_store(const struct tunedlib *lib, struct tune_store *st, int *stored, char *why,
                      size_t whylen);

#endif
