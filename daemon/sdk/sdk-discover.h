/*
 * Finding HIP SDK installs on a machine (or a sandbox root), the layouts of
 * ../shared/DESIGN.md §3:
 *   Linux    AMD's /opt/rocm-X.Y.Z (and /opt/rocm, often a symlink to one of
 *            them), the distribution layout under /usr (/usr/share/hip/version,
 *            /usr/lib/<triplet>/libamdhip64.so.N, librocblas.so.N and
 *            rocblas/<ver>/library), $ROCM_PATH, $HIP_PATH and configured roots;
 *   Windows  %HIP_PATH% and every %HIP_PATH_NN%, C:\Program Files\AMD\ROCm\<X.Y>\,
 *            HKLM\Software\AMD\ROCm\<X.Y> InstallDir (registry.h), with the
 *            runtime DLL names each version ships.
 * The Windows rules are plain path logic over the sysroot, so they run and are
 * tested on Linux against a Windows-shaped tree. Every install is reported
 * once, by its canonical path; the other names that lead to it are aliases.
 *
 * Blocking file I/O and possibly a child process (hipconfig): run it off the
 * loop thread.
 */
#ifndef ROCMD_SDK_DISCOVER_H
#define ROCMD_SDK_DISCOVER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "rocblas-library.h"
#include "sdk-version.h"

struct rocmd_sdk_scan_opts {
	const char *root;               /* sysroot; NULL or "/" for the machine itself */
	int windows;                    /* apply the Windows layout rules */
	char *const *env;               /* "NAME=value" strings, NULL-terminated; NULL: none */
	char *const *extra_roots;       /* configured install roots (system paths); may be NULL */
	int hipconfig_timeout_ms;       /* 0: never run hipconfig */
	struct rocmd_hash_cache *cache; /* file hashes between scans; may be NULL */
	unsigned lib_flags;             /* ROCMD_ROCBLAS_* for each library */
	char *const *runtime_roots;     /* sdk.runtime_roots (system paths); may be NULL */
};

struct rocmd_sdk_found {
	char *path;         /* canonical system path of the install */
	char *aliases;      /* other names leading here ("/opt/rocm"), '\n'-separated, or NULL */
	/* "opt", "distro", "windows", "env", "config", or a runtime outside an SDK
	 * install (runtime-discover.h): "therock", "rocm-wheels", "torch",
	 * "ollama", "lmstudio", "llama.cpp". */
	const char *layout;
	int unreadable;     /* the folder exists but cannot be read */
	struct rocmd_sdk_version ver;
	char *hip_runtime;    /* system path of libamdhip64.so.N / amdhip64*.dll, or NULL */
	char *hiprtc;         /* Windows: the hiprtc DLL, or NULL */
	char *rocblas_binary; /* librocblas.so.N / rocblas.dll (system path), or NULL */
	char *rocblas_dir;    /* the library folder (system path), or NULL: no rocBLAS */
	int have_lib;
	struct rocmd_rocblas_lib lib; /* when have_lib; lib.dir is the host path */
	char *problems;               /* one sentence per line, or NULL */
	/* Runtimes outside SDK installs (runtime-discover.h); all may be empty. */
	char release[64];    /* the full release named by the files ("7.10.0a20251124") */
	char *release_from;  /* the file that named it (system path), or NULL */
	const char *owner;   /* "pip" when a RECORD lists the files, else NULL */
	char *owner_record;  /* that RECORD (system path), or NULL */
	char *built_for;     /* TheRock's dist_info.json targets ("gfx1100;gfx1103"), or NULL */
	int nkpack;          /* TheRock .kpack archives present */
	char *kpack_archs;   /* archs their tables of contents hold kernels for, per line */
	char *hipblaslt_dir; /* hipBLASLt's library folder (system path), or NULL */
	int have_lt;
	struct rocmd_rocblas_lib lt; /* hipBLASLt's folder, when have_lt; lt.dir is the host path */
	char *packages;      /* wheels seen beside it, "name version" per line, or NULL */
};

struct rocmd_sdk_scan {
	struct rocmd_sdk_found *sdks; /* sorted by path */
	size_t nsdks;
	char *problems; /* not tied to one install: loops, unreadable parents, bad env paths */
	char **watch;   /* system paths of folders worth watching, NULL-terminated */
	size_t nwatch;
};

/* Scans for installs. Returns 0 (nothing found is 0 too) or ROCMD_ENOMEM;
 * free OUT with rocmd_sdk_scan_free in every case. */
int rocmd_sdk_discover(const struct rocmd_sdk_scan_opts *o, struct rocmd_sdk_scan *out);
void rocmd_sdk_scan_free(struct rocmd_sdk_scan *s);

/* The runtime DLL names a Windows HIP SDK of VERSION ships: 5.x amdhip64.dll,
 * 6.x amdhip64_6.dll, 7.x amdhip64_7.dll; hiprtc<MMmm>.dll. Returns 0 or
 * ROCMD_EINVAL for a version that is not X.Y[.Z]. */
int rocmd_sdk_win_runtime_names(const char *version, char *hip, size_t hiplen, char *rtc,
                                size_t rtclen);

/* One install as JSON (as sdk.show returns it, less the database's fields). */
cJSON *rocmd_sdk_found_to_json(const struct rocmd_sdk_found *f, int files);

/* The value of NAME in ENV ("NAME=value" strings), or NULL. */
const char *rocmd_sdk_env_get(char *const *env, const char *name);

#endif
