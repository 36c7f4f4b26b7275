/*
 * What the discovery modules share: one scan's state and the path helpers of
 * sdk-discover.c, used by the runtime rules (runtime-discover.h) that find
 * ROCm outside SDK installs. Worker thread only, like the scan itself.
 */
#ifndef ROCMD_DISCOVER_INTERNAL_H
#define ROCMD_DISCOVER_INTERNAL_H

#include <limits.h>
#include <stddef.h>

#include "sdk-discover.h"

#define ROCMD_DISC_MAX_CANDIDATES 256

struct rocmd_disc_candidate {
	char sys[PATH_MAX]; /* as named by its rule */
	const char *layout;
	char envname[ROCMD_VERSION_MAX];  /* from HIP_PATH_NN */
	char registry[ROCMD_VERSION_MAX]; /* from the registry key */
	int from_user;                    /* env or config: report when missing */
	const char *origin;               /* "ROCM_PATH", "HIP_PATH_62", "registry 6.2", ... */
};

struct rocmd_disc {
	const struct rocmd_sdk_scan_opts *o;
	struct rocmd_sdk_scan *out;
	struct rocmd_disc_candidate cand[ROCMD_DISC_MAX_CANDIDATES];
	size_t ncand;
	int err;
};

/* Host path of system path SYS + "/" + REL (REL may be NULL). */
int rocmd_disc_host(const struct rocmd_disc *s, const char *sys, const char *rel, char *out,
                    size_t outlen);
/* System path SYS joined with REL, in the path's own syntax. */
void rocmd_disc_join(const char *sys, const char *rel, char *out, size_t outlen);
/* The system path of host path H. */
void rocmd_disc_to_sys(const struct rocmd_disc *s, const char *h, char *out, size_t outlen);
int rocmd_disc_is_dir(const char *h);
int rocmd_disc_exists(const char *h);
void rocmd_disc_watch(struct rocmd_disc *s, const char *sys);
void rocmd_disc_set_str(char **dst, const char *src, int *err);
/* Reads a small file (up to LEN - 1 bytes, NUL-terminated). */
int rocmd_disc_read_small(const char *h, char *buf, size_t len);
/* The best file in folder H named PREFIX*SUFFIX (sdk-discover.c's rule). */
int rocmd_disc_find_named(const char *h, const char *prefix, const char *suffix, char *name,
                          size_t namelen);
/* A new install at system path SYS of LAYOUT, found by rule ORIGIN: resolved
 * inside the sysroot, watched, added to the scan. NULL when it is not a
 * folder, is one already found (SYS becomes an alias), or memory ran out. */
struct rocmd_sdk_found *rocmd_disc_add_found(struct rocmd_disc *s, const char *sys,
                                             const char *layout, const char *origin);
/* Locates and inspects the rocBLAS library beside the binary in host folder
 * BINARY_DIR_H; USE_ENV: honour the daemon's ROCBLAS_TENSILE_LIBPATH (an SDK),
 * not for an application's private copy. */
void rocmd_disc_inspect_library(struct rocmd_disc *s, struct rocmd_sdk_found *f,
                                const char *binary_dir_h, int use_env);
/* Sets F's runtime and rocBLAS binary from host folder DIR_H (lib/ or bin/
 * of a runtime) and inspects the library beside the binary. */
void rocmd_disc_runtime_files(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *dir_h);

#endif
