/*
 * The package store's engine: reading a library package (an archive or an
 * unpacked folder) safely into a staging folder while hashing every file,
 * identifying what the package holds from its content, moving its files into
 * the content-addressed store, re-hashing the store, collecting objects no
 * package uses any more, and choosing a package for an SDK and a GPU arch.
 *
 * Nothing here touches libuv or the database: the daemon (pkg-jobs.c) runs
 * the slow parts (rocmd_pkg_read, rocmd_pkg_identify, rocmd_store_commit,
 * rocmd_store_verify, rocmd_store_gc) as jobs off the loop thread and writes
 * the database on the loop thread; tests and tools call them directly.
 *
 * Store layout under <state>/store:
 *   objects/ab/cdef...   one file per distinct content, named by its SHA-256
 *   staging/<name>/      an import in progress; removed on success or refusal
 *   partial/<sha256>     a feed download cut short, kept to be resumed (feed.h)
 */
#ifndef ROCMD_PKG_H
#define ROCMD_PKG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "common/hash.h"

/* Limits a package must stay within; bytes are counted as they are written,
 * never taken from archive headers. */
struct rocmd_pkg_limits {
	uint64_t max_total; /* uncompressed bytes of all files */
	uint64_t max_file;  /* uncompressed bytes of one file */
	uint64_t max_files; /* entries of any kind */
};

enum rocmd_pkg_kind { ROCMD_PKG_FILE = 'f', ROCMD_PKG_SYMLINK = 'l' };

/* One file of a package, its path relative to the package root. */
struct rocmd_pkg_entry {
	char *path; /* cleaned, '/'-separated, relative */
	int kind;   /* enum rocmd_pkg_kind */
	int exec;   /* executable bit */
	uint64_t size;
	uint8_t sha256[ROCMD_SHA256_LEN];
	char *link;   /* symlink target (relative, checked), else NULL */
	char *staged; /* file in the staging folder, else NULL (symlinks, hardlink copies) */
};

/* Counters the reader updates while it runs; another thread may read them
 * under the caller's lock (see rocmd_pkg_read). */
struct rocmd_pkg_progress {
	uint64_t bytes_in;    /* archive bytes consumed (or folder bytes read) */
	uint64_t bytes_total; /* archive size (or folder bytes), 0 when unknown */
	uint64_t bytes_out;   /* bytes written to staging */
	uint64_t files;
	char current[256]; /* entry being read */
};

/*
 * Whose rights a package is read with: an import's caller (pkg-cred-unix.c).
 * The daemon runs as root; an admin-group member who asks it to import a
 * path must not get root's reading rights with it. The reading thread takes
 * the caller's file-system identity (uid, gid, supplementary groups) for
 * every open, list and lookup of the source, so the kernel decides what it
 * may read exactly as it would for the caller (modes, ACLs, every component
 * of the path, symlinks), at the moment of each open: nothing to race.
 * Writing the staging folder is done with the daemon's own rights.
 */
struct rocmd_pkg_cred {
	uid_t uid;
	gid_t gid;
	size_t ngroups;
	gid_t *groups;
};
/* (A client's rights: rocmd_pkg_cred_of in pkg-service.h.) */
void rocmd_pkg_cred_free(struct rocmd_pkg_cred *c);
/* The calling thread's file access takes C's rights (C NULL: nothing
 * changes) / goes back to the daemon's own. Enter returns 0 or a negative
 * error (the daemon may not change its file identity: not root). */
int rocmd_pkg_cred_enter(const struct rocmd_pkg_cred *c);
void rocmd_pkg_cred_leave(const struct rocmd_pkg_cred *c);

struct rocmd_pkg_read_opts {
	struct rocmd_pkg_limits limits;
	/* The source is read with these rights (NULL: the daemon's own). */
	const struct rocmd_pkg_cred *cred;
	/* Called every few MiB with the reader's counters; a non-zero return
	 * cancels the read (ROCMD_ECANCELED). May be NULL. */
	int (*progress)(const struct rocmd_pkg_progress *pr, void *ctx);
	void *ctx;
	/* Hash only, write nothing (fuzzing, dry runs); staging may be NULL. */
	int dry_run;
};

/* What a read produced. Entries are sorted by path. */
struct rocmd_pkg_contents {
	struct rocmd_pkg_entry *entries;
	size_t count;
	uint64_t total_size;
	char *strip;   /* top folder stripped from every path, or NULL */
	char *format;  /* "7-Zip", "ZIP 2.0 (deflation)", "directory", ... */
	char *staging; /* the staging folder, owned: removed by rocmd_pkg_contents_free */
	/* The archs a single TensileLibrary.dat names, parsed on a thread of its
	 * own while the rest of the package was still being read (its MessagePack
	 * takes seconds); dat_done is 0 when there was none to parse. */
	int dat_done;
	char *dat_path; /* the staged file parsed */
	int dat_rc;
	char **dat_archs;
	size_t dat_narchs;
	char dat_why[256];
};

/*
 * Reads the archive or folder at SOURCE into the (new, empty, existing)
 * folder STAGING, hashing each file while writing it. Refuses, with
 * ROCMD_EUNSAFE and a sentence naming the entry in WHY: absolute paths, "..",
 * symlinks or hardlinks leading outside, device files, FIFOs and sockets,
 * duplicate names (also differing only in case), encrypted entries, and any
 * file count or size over the limits. A truncated or corrupt archive gives
 * ROCMD_ECORRUPT; an unknown format ROCMD_EUNSUPPORTED. On failure the
 * staging folder is emptied and removed and *OUT is zeroed.
 */
int rocmd_pkg_read(const char *source, const char *staging, const struct rocmd_pkg_read_opts *opts,
                   struct rocmd_pkg_contents *out, char *why, size_t whylen);
/* The same over an archive in memory (fuzzing, tests). */
int rocmd_pkg_read_memory(const void *data, size_t len, const char *staging,
                          const struct rocmd_pkg_read_opts *opts, struct rocmd_pkg_contents *out,
                          char *why, size_t whylen);
/* Frees OUT and removes its staging folder (whatever is left in it). */
void rocmd_pkg_contents_free(struct rocmd_pkg_contents *out);
/* The package digest: SHA-256 over the sorted manifest (path, kind, size, hash). */
void rocmd_pkg_digest(const struct rocmd_pkg_contents *c, char hex[ROCMD_SHA256_HEX]);

/*
 * Cleans an archive entry name into a relative '/'-separated path: '\' is a
 * separator, "." and empty components go, and the name is refused
 * (ROCMD_EUNSAFE, with WHY) when absolute (leading '/' or '\', a drive
 * letter), when a component is "..", when it holds control characters or
 * ':', when a component is longer than 255 bytes or the path than OUTLEN-1,
 * or when nothing is left.
 */
int rocmd_pkg_path_clean(const char *in, char *out, size_t outlen, char *why, size_t whylen);
/* Resolves symlink TARGET relative to the folder of the link at LINK_PATH
 * (both inside the package) into OUT; ROCMD_EUNSAFE when it leaves the root. */
int rocmd_pkg_link_resolve(const char *link_path, const char *target, char *out, size_t outlen,
                           char *why, size_t whylen);
/* strcmp's order over UTF-8 names A and B with their case folded as Windows
 * folds it (pkg-names.c): 0 when Windows holds them as one name. */
int rocmd_pkg_name_casecmp(const char *a, const char *b);

/* ---- identification (pkg-ident.c) ---- */

/* Hints read from an archive's or folder's name. */
struct rocmd_pkg_name_hints {
	char sdk[16];     /* "6.2.4", "5.7", or "" */
	char version[16]; /* "V5.0", "V3", or "" */
	char archs[128];  /* "gfx1103,gfx1150" as named, or "" */
};
void rocmd_pkg_name_hints(const char *name, struct rocmd_pkg_name_hints *out);
/* The length of NAME's archive extension (".7z", ".tar.gz", any case), or 0
 * when NAME is not named as an archive the store reads. */
size_t rocmd_pkg_archive_ext(const char *name);

/* A parsed dotted version; parts missing are -1. */
struct rocmd_pkg_version {
	int v[4];
	int n; /* parts given */
};
int rocmd_pkg_version_parse(const char *s, struct rocmd_pkg_version *out);
/* Compares the first min(a.n, b.n) parts when PREFIX, else all (missing = 0). */
int rocmd_pkg_version_cmp(const struct rocmd_pkg_version *a, const struct rocmd_pkg_version *b,
                          int prefix);

/* What a Windows DLL says about itself (PE import table, VERSIONINFO). */
struct rocmd_pe_info {
	char file_version[32]; /* "4.2.0.0" from VS_FIXEDFILEINFO, or "" */
	char product_version[32];
	char hip_runtime[64]; /* "amdhip64_6.dll" if imported, or "" */
	int machine;          /* COFF machine */
	int is_dll;
};
int rocmd_pe_read(const char *path, struct rocmd_pe_info *out, char *why, size_t whylen);
/* What an ELF shared object says (DT_SONAME, DT_NEEDED libamdhip64). */
struct rocmd_elf_info {
	char soname[64];
	char hip_runtime[64]; /* "libamdhip64.so.5" if needed, or "" */
	int machine;
	unsigned flags;
};
int rocmd_elf_read(const char *path, struct rocmd_elf_info *out, char *why, size_t whylen);

/*
 * Identifies a read package from its content: archs (file names and code
 * object ELF headers), the rocBLAS binary with its version resource or
 * SONAME and the HIP runtime it links, the Tensile manifest, the SDK
 * generation (explicit SDK, else the name, checked against the binary's HIP
 * runtime) and the package version hint. Returns a JSON object (see
 * docs/PROTOCOL.md, pkg.show "identity"); ROCMD_EINVAL with WHY when nothing
 * in it is a rocBLAS library. Takes time in O(n log n) for n entries;
 * CANCELED(CTX) (may be NULL) is polled as it goes, and a non-zero answer
 * stops it with ROCMD_ECANCELED.
 */
int rocmd_pkg_identify(const struct rocmd_pkg_contents *c, const char *name,
                       const char *explicit_sdk, int (*canceled)(void *ctx), void *ctx, cJSON **out,
                       char *why, size_t whylen);

/* ---- the store (pkg-store.c) ---- */

/* <store>/objects/ab/cdef... for HEX into OUT. */
int rocmd_store_object_path(const char *store, const char *hex, char *out, size_t outlen);
/* Creates store/, objects/ and staging/; removes staging leftovers of a
 * previous run. */
int rocmd_store_open(const char *store, char *why, size_t whylen);
/* Makes a fresh staging folder for one import into OUT. */
int rocmd_store_staging_new(const char *store, char *out, size_t outlen);
/*
 * Moves every staged file of C into the store: fsync the file, rename it to
 * its object name (or drop it when the object exists), fsync each folder
 * touched. *ADDED gets the number of new objects and *ADDED_BYTES their size.
 */
int rocmd_store_commit(const char *store, struct rocmd_pkg_contents *c, uint64_t *added,
                       uint64_t *added_bytes, char *why, size_t whylen);

/* One object to check, and what the check found. */
struct rocmd_store_check {
	char hex[ROCMD_SHA256_HEX];
	uint64_t size;
	int status; /* 0 ok, ROCMD_ENOTFOUND missing, ROCMD_ECORRUPT wrong hash/size, -errno */
};
/* Re-hashes each object; PROGRESS(done_bytes, total_bytes, ctx) non-zero cancels. */
int rocmd_store_verify(const char *store, struct rocmd_store_check *objs, size_t n,
                       int (*progress)(uint64_t done, uint64_t total, void *ctx), void *ctx);
/*
 * Deletes every object whose hash is not in KEEP (sorted hex strings, KEEP_N
 * of them). *REMOVED / *REMOVED_BYTES count what went.
 */
int rocmd_store_gc(const char *store, char *const *keep, size_t keep_n, uint64_t *removed,
                   uint64_t *removed_bytes);
/* Bytes and objects in the store. */
int rocmd_store_usage(const char *store, uint64_t *objects, uint64_t *bytes);
/* Moves every object whose hash is not in KEEP (sorted, KEEP_N) to
 * store/unclaimed/STAMP/ab/cdef..., out of the collector's way and kept.
 * *MOVED / *MOVED_BYTES count them. */
int rocmd_store_set_aside(const char *store, char *const *keep, size_t keep_n, const char *stamp,
                          uint64_t *moved, uint64_t *moved_bytes);

/* ---- the store's package records (pkg-record.c) ----
 *
 * Each package in the store has a record beside its objects,
 * store/packages/<digest>.json: its name, source, import time, identity and
 * every file (path, kind, exec, size, hash, link). It is written durably
 * after the package's objects and before its database row, and removed
 * before the row is, so the store describes itself without the database:
 * a package a lost or emptied database no longer names is adopted back from
 * its record at the next start, and no object a record names is collected.
 * store/store.json says that every package of the store has its record
 * (a store made before records existed gets them from the database first).
 */
/* A record of the package of C (after rocmd_store_commit), or NULL (no memory). */
cJSON *rocmd_store_record_new(const struct rocmd_pkg_contents *c, const char *digest,
                              const char *name, const char *source, int64_t imported_ms,
                              const cJSON *identity);
/* Writes REC durably. An existing record is kept unless REPLACE; *CREATED
 * says whether this call made it. */
int rocmd_store_record_write(const char *store, const cJSON *rec, int replace, int *created,
                             char *why, size_t whylen);
/* Reads the record of DIGEST into *OUT, only if every field, path and link is
 * sound and its files give DIGEST again; ROCMD_ECORRUPT (WHY) otherwise,
 * -ENOENT when there is none. */
int rocmd_store_record_read(const char *store, const char *digest, cJSON **out, char *why,
                            size_t whylen);
/* The files of REC as the entries of C, sorted by path; their strings are
 * REC's: free only C->entries. ROCMD_ECORRUPT for a file that is not sound. */
int rocmd_store_record_contents(const cJSON *rec, struct rocmd_pkg_contents *c, char *why,
                                size_t whylen);
/* Removes the record of DIGEST durably (none is fine). */
int rocmd_store_record_remove(const char *store, const char *digest);
/* The digests with a record, sorted (rocmd_store_records_free). */
int rocmd_store_records_list(const char *store, char ***digests, size_t *n);
void rocmd_store_records_free(char **digests, size_t n);
/* 0 when every object REC names is in the store, whole (hashed again); else
 * ROCMD_ENOTFOUND or ROCMD_ECORRUPT with WHY. CANCELED (may be NULL) is
 * polled: ROCMD_ECANCELED. */
int rocmd_store_record_check(const char *store, const cJSON *rec, int (*canceled)(void *ctx),
                             void *ctx, char *why, size_t whylen);
/* Appends a copy of S to the string list *V, *N of *CAP (grown as needed). */
int rocmd_pkg_strv_add(char ***v, size_t *n, size_t *cap, const char *s);
/* Appends the hashes REC names (strdup'd) to *KEEP (*N of *CAP). */
int rocmd_store_record_objects(const cJSON *rec, char ***keep, size_t *n, size_t *cap);
/* Whether store.json says the records are complete / says so, durably. */
int rocmd_store_records_complete(const char *store);
int rocmd_store_records_mark_complete(const char *store);

/* ---- matching (pkg-match.c) ---- */

/* A stored package as matching sees it. */
struct rocmd_pkg_candidate {
	int64_t id;
	const char *name;
	const char *platform;     /* "windows", "linux", "any" */
	const char *sdk;          /* "6.2.4", "6.2", "6", or NULL/"" unknown */
	const char *version_hint; /* "V5.0" or NULL */
	const char *archs;        /* "gfx1103,gfx1150" */
	int64_t imported_ms;
	/* 1: hipBLASLt's library folder alone (identity carries_rocblas false):
	 * ranked after the packages carrying rocBLAS. */
	int lt_only;
};

/*
 * Chooses a package for SDK (a version), PLATFORM ("windows"/"linux") and
 * ARCH among CANDS. RULES is the user's override text (config key
 * store.match_rules, may be NULL); the shipped defaults follow it. *CHOSEN
 * gets the index chosen or -1; *EXPLAIN (may be NULL) a JSON object with the
 * rule used and a verdict and reasons for every candidate. ROCMD_EINVAL with
 * WHY for a bad SDK version, platform, arch or rule text.
 */
int rocmd_pkg_match(const char *sdk, const char *platform, const char *arch,
                    const struct rocmd_pkg_candidate *cands, size_t n, const char *rules,
                    int *chosen, cJSON **explain, char *why, size_t whylen);
/* Checks rule text without matching; 0 or ROCMD_EINVAL with WHY. */
int rocmd_pkg_rules_check(const char *rules, char *why, size_t whylen);
/* The SDK generation a version belongs to ("6.2" for 6.2.4, "7" for 7.1.0). */
int rocmd_sdk_generation(const char *version, char *out, size_t outlen);

#endif
