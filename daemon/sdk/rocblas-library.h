/*
 * rocBLAS library folders: where rocBLAS looks for its Tensile library, which
 * GPU archs a folder covers, and a content fingerprint. Used by SDK discovery
 * (each SDK's own library) and by the package store (the library folder of an
 * imported package), so it knows nothing of the database or the event loop.
 *
 * A library folder holds TensileLibrary_lazy_<gfx>.dat (MessagePack index,
 * lazy loading), TensileLibrary_<gfx>.dat, or one TensileLibrary.dat for every
 * arch, plus code objects (*.co, *.hsaco: AMD GPU ELF files) and sometimes
 * TensileManifest.txt. Archs are read from the index file names, from the
 * MessagePack of a single TensileLibrary.dat, and from each code object's ELF
 * header; all three are reported, so a folder whose index names an arch
 * without code objects for it is visible.
 *
 * Every function here does blocking file I/O and may take seconds on a
 * multi-gigabyte folder: call it off the loop thread (a job, core/jobs.h). The
 * hash cache is the only shared state and it is thread-safe.
 */
#ifndef ROCMD_ROCBLAS_LIBRARY_H
#define ROCMD_ROCBLAS_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/hash.h"

/* Longest arch name with features ("gfx90a:sramecc+:xnack-") and a NUL. */
#define ROCMD_GFX_MAX 32

/* What kind of index a folder uses; the first that exists wins, as in rocBLAS. */
enum rocmd_rocblas_index {
	ROCMD_ROCBLAS_INDEX_NONE = 0, /* no index at all: rocBLAS would abort */
	ROCMD_ROCBLAS_INDEX_LAZY,     /* TensileLibrary_lazy_<gfx>.dat */
	ROCMD_ROCBLAS_INDEX_PER_ARCH, /* TensileLibrary_<gfx>.dat */
	ROCMD_ROCBLAS_INDEX_SINGLE,   /* TensileLibrary.dat */
};

/* One regular file of the folder (symlinks to files inside it included). */
struct rocmd_rocblas_file {
	char *relpath; /* '/'-separated, relative to the folder */
	uint64_t size;
	int64_t mtime_ns;
	char arch[ROCMD_GFX_MAX];         /* code objects: the ELF's arch; "" otherwise */
	uint8_t sha256[ROCMD_SHA256_LEN]; /* valid when the fingerprint was computed */
};

struct rocmd_rocblas_lib {
	char *dir; /* the library folder, as given */
	enum rocmd_rocblas_index index;
	char **archs; /* archs the index covers (sorted, unique) */
	size_t narchs;
	char **co_archs; /* archs of the code objects' ELF headers (sorted, unique) */
	size_t nco_archs;
	struct rocmd_rocblas_file *files; /* sorted by relpath (byte order) */
	size_t nfiles;
	uint64_t total_size; /* bytes of all files */
	int have_fingerprint;
	uint8_t fingerprint[ROCMD_SHA256_LEN];
	/* Things a user should know: unreadable files, a .dat that does not
	 * parse, a symlink loop, code objects of an arch the index lacks. One
	 * sentence per line; NULL when there is nothing to say. */
	char *problems;
};

/* Inspection options. */
#define ROCMD_ROCBLAS_FINGERPRINT 0x1 /* hash every file (the slow part) */
#define ROCMD_ROCBLAS_SKIP_DAT 0x2    /* do not parse a single TensileLibrary.dat */
/* hipBLASLt's folders: an index may also be <gfx>/TensileLibrary_lazy_<gfx>.dat
 * (the per-arch subfolder hipBLASLt descends into when it exists). */
#define ROCMD_ROCBLAS_ARCH_SUBDIRS 0x4

struct rocmd_hash_cache; /* file hashes keyed by path, size, mtime and inode */

/* A cache shared by threads. MAX_ENTRIES 0 means a default (65536). */
int rocmd_hash_cache_new(size_t max_entries, struct rocmd_hash_cache **out);
void rocmd_hash_cache_free(struct rocmd_hash_cache *c);
/* Statistics, for tests and benchmarks: lookups served from the cache / hashed. */
void rocmd_hash_cache_stats(struct rocmd_hash_cache *c, uint64_t *hits, uint64_t *misses);

/*
 * What rocBLAS's and hipBLASLt's loaders share: ENV_LIBPATH (their variable,
 * NULL or "" when unset) wins when set, as the folder it names or nothing;
 * otherwise the first of BINARY_DIR/REL[0..NREL) that is a folder (BINARY_DIR
 * NULL: none). Writes it to OUT and returns 0, or ROCMD_ENOTFOUND.
 */
int rocmd_tensile_locate(const char *binary_dir, const char *env_libpath, const char *const *rel,
                         size_t nrel, char *out, size_t outlen);

/*
 * Finds the library folder rocBLAS would use. ENV_LIBPATH is the value of
 * ROCBLAS_TENSILE_LIBPATH (NULL or "" when unset): when set it wins, as in
 * rocBLAS. Otherwise BINARY_DIR is the folder holding librocblas.so.N or
 * rocblas.dll, and the candidates are tried in rocBLAS's order:
 * BINARY_DIR/library, BINARY_DIR/../rocblas/library, BINARY_DIR/rocblas/library.
 * For the Debian layout (BINARY_DIR/rocblas/<version>/library) the highest
 * version folder is used. Writes the folder to OUT and returns 0, or
 * ROCMD_ENOTFOUND when none exists.
 */
int rocmd_rocblas_locate(const char *binary_dir, const char *env_libpath, char *out, size_t outlen);

/*
 * Inspects library folder DIR (see above). FLAGS are ROCMD_ROCBLAS_*; CACHE
 * (may be NULL) saves rehashing unchanged files. Returns 0 with *OUT filled
 * (free it with rocmd_rocblas_lib_free) even when some files could not be
 * read (they are named in out->problems); ROCMD_ENOTFOUND / -errno when DIR
 * itself is not a readable folder, with WHY set.
 */
int rocmd_rocblas_inspect(const char *dir, unsigned flags, struct rocmd_hash_cache *cache,
                          struct rocmd_rocblas_lib *out, char *why, size_t whylen);
void rocmd_rocblas_lib_free(struct rocmd_rocblas_lib *lib);

/*
 * True when LIB can serve GFX ("gfx1103"): the index covers it. An index
 * entry with features ("gfx90a:xnack+", "gfx90a-xnack-") covers the bare
 * name.
 */
int rocmd_rocblas_covers(const struct rocmd_rocblas_lib *lib, const char *gfx);

/* LIB as JSON: dir, index, archs, code_object_archs, files, total_size,
 * fingerprint (hex or null), problems. FILES adds the per-file list. */
cJSON *rocmd_rocblas_lib_to_json(const struct rocmd_rocblas_lib *lib, int files);

/* The arch names of a single TensileLibrary.dat (MessagePack), read in one
 * pass that builds no tree; *ARCHS is a sorted array of strings (free each and
 * the array). */
int rocmd_rocblas_dat_archs(const char *path, char ***archs, size_t *narchs, char *why,
                            size_t whylen);

/* ---- which archs are served (rocblas-archs.c) ---- */

/*
 * The one rule for whether a library folder serves arch GFX: an index names
 * it (INDEX: the index archs; none, and rocBLAS aborts) and, where the folder
 * has code objects at all (CO), some are for it. Features are ignored
 * ("gfx90a:xnack+" serves gfx90a). pkg import records the archs this says of
 * a package; discovery, lib verify and a deploy's own verification ask it of
 * the folder on disk, so the answers cannot disagree.
 */
int rocmd_rocblas_arch_served(char *const *index, size_t nindex, char *const *co, size_t nco,
                              const char *gfx);
/* The same for an inspected folder. */
int rocmd_rocblas_serves(const struct rocmd_rocblas_lib *lib, const char *gfx);
/* The same over comma-separated lists (the database's columns): the served
 * archs of INDEX_CSV, bare names, into OUT as a list. */
void rocmd_rocblas_served_csv(const char *index_csv, const char *co_csv, char *out, size_t outlen);
/* The same for a folder as JSON (rocmd_rocblas_lib_to_json's archs and
 * code_object_archs, as discovery stores its last scan). */
void rocmd_rocblas_served_json(const cJSON *lib, char *out, size_t outlen);
/* Whether ARCHS ("gfx1030,gfx90a", as the two above give) names GFX,
 * ignoring feature suffixes. */
int rocmd_archs_csv_has(const char *archs, const char *gfx);
/* The arch a library file's name is for ("TensileLibrary_lazy_gfx1103.dat",
 * "Kernels.so-000-gfx90a-xnack+.hsaco": gfx1103, gfx90a); ROCMD_ENOTFOUND. */
int rocmd_rocblas_name_arch(const char *name, char *out, size_t outlen);
/* The archs the rocBLAS binary at PATH (librocblas.so, rocblas.dll) was
 * built for, from its clang offload bundles' entries, bare and sorted (free
 * each and the array); ROCMD_ENOTFOUND with WHY when it holds none. */
int rocmd_rocblas_binary_archs(const char *path, char ***archs, size_t *narchs, char *why,
                               size_t whylen);

/* ---- hipBLASLt's library folder (hipblaslt-library.c) ---- */

/*
 * Finds the library folder hipBLASLt would use, by its tensile_host.cpp:
 * HIPBLASLT_TENSILE_LIBPATH (ENV_LIBPATH, host path; NULL or "" when unset)
 * wins; otherwise BINARY_DIR must hold libhipblaslt.so[.N] (Linux) or
 * hipblaslt.dll / libhipblaslt.dll (WINDOWS), and the candidates are
 * BINARY_DIR/../Tensile/library, then BINARY_DIR/hipblaslt/library. Inspect
 * the folder with ROCMD_ROCBLAS_ARCH_SUBDIRS: hipBLASLt descends into a
 * <gfx> subfolder of it when one exists. Writes the folder to OUT and returns
 * 0, or ROCMD_ENOTFOUND (no hipBLASLt, or no folder where it looks).
 */
int rocmd_hipblaslt_locate(const char *binary_dir, int windows, const char *env_libpath, char *out,
                           size_t outlen);
/* Those candidates, in that order, relative to BINARY_DIR ("../" leads). */
#define ROCMD_HIPBLASLT_NREL 2
extern const char *const rocmd_hipblaslt_rel[ROCMD_HIPBLASLT_NREL];

/* "gfx" + hex digits, then optional features (":xnack+", "-xnack-"): the
 * length of the bare name at S ("gfx90a" of "gfx90a:xnack+"), 0 when S does
 * not start with one. */
size_t rocmd_gfx_bare_len(const char *s);

#endif
