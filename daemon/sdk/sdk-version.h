/*
 * The version of a HIP SDK install, read from every source present and
 * reconciled. Sources, in the order they win:
 *   .info/version        AMD's packages ("5.7.1-152")
 *   package changelog    Debian/Ubuntu: usr/share/doc/libamdhip64-N/changelog.Debian.gz,
 *                        whose first line names the upstream version ("5.2.3-8")
 *   .hipVersion          bin/.hipVersion (AMD, Windows), HIP_VERSION_* lines
 *   hip version file     share/hip/version, HIP_VERSION_* lines
 *   TheRock manifest     share/therock/therock_manifest.json: rocm_package_version,
 *                        else rocm_version (TheRock tarballs and rocm-sdk-core)
 *   wheel METADATA       the "Version:" line of pip's <name>-<ver>.dist-info/METADATA
 *   torch version.py     torch/version.py's hip = '6.2.41134-...' (PyTorch ROCm wheels)
 *   folder name          /opt/rocm-5.7.1, ROCm\6.2
 *   HIP_PATH_NN          the Windows variable's name (HIP_PATH_62 → 6.2)
 *   registry             the Windows registry key name (ROCm\6.2)
 *   hipconfig            `hipconfig --version`, run only when all others are missing
 * HIP's own files carry a build number as their patch level (HIP 5.7.31921),
 * so a HIP_VERSION_PATCH of 1000 or more counts as X.Y only. Two sources
 * agree when they are equal to the precision of the less precise one
 * ("6.2" and "6.2.4"); the winner is the first source in the order above, made
 * more precise by a later source that agrees with it. Any disagreement is a
 * conflict that is reported with every source's value; no source at all
 * leaves the version unknown, never guessed.
 */
#ifndef ROCMD_SDK_VERSION_H
#define ROCMD_SDK_VERSION_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define ROCMD_VERSION_MAX 32
#define ROCMD_VERSION_SOURCES 11

enum rocmd_version_source {
	ROCMD_VSRC_INFO = 0,   /* .info/version */
	ROCMD_VSRC_CHANGELOG,  /* package changelog */
	ROCMD_VSRC_HIPVERSION, /* bin/.hipVersion */
	ROCMD_VSRC_HIPFILE,    /* share/hip/version */
	ROCMD_VSRC_THEROCK,    /* share/therock/therock_manifest.json */
	ROCMD_VSRC_WHEEL,      /* <wheel>.dist-info/METADATA */
	ROCMD_VSRC_TORCH,      /* torch/version.py */
	ROCMD_VSRC_FOLDER,     /* folder name */
	ROCMD_VSRC_ENVNAME,    /* HIP_PATH_NN */
	ROCMD_VSRC_REGISTRY,   /* registry key */
	ROCMD_VSRC_HIPCONFIG,  /* hipconfig --version */
};

struct rocmd_sdk_version {
	/* Per source: "" when absent, else "X.Y" or "X.Y.Z". */
	char found[ROCMD_VERSION_SOURCES][ROCMD_VERSION_MAX];
	char version[ROCMD_VERSION_MAX]; /* reconciled; "" when unknown */
	int source;                      /* winning enum rocmd_version_source, -1 when unknown */
	int conflict;                    /* sources disagree */
	char problem[256];               /* a sentence when conflict or unknown */
};

/* The source's name as users see it (".info/version", "folder name", ...). */
const char *rocmd_version_source_name(int source);

/* Normalizes "5.7.1-152", "v6.2", "6.2.41134" (HIP) into OUT ("5.7.1", "6.2",
 * "6.2"); HIP is set for HIP's own numbering. Returns 0 or ROCMD_EINVAL. */
int rocmd_version_normalize(const char *text, int hip, char *out, size_t outlen);
/* Parses HIP_VERSION_MAJOR/MINOR/PATCH lines (share/hip/version, .hipVersion). */
int rocmd_version_parse_hip_lines(const char *text, char *out, size_t outlen);
/* Parses the version from a folder name: "rocm-5.7.1", "6.2", "rocm-6.0.0-beta". */
int rocmd_version_from_folder(const char *name, char *out, size_t outlen);
/* Checks a release as TheRock names it: X.Y.Z, X.Y.ZrcN, X.Y.ZaYYYYMMDD, or
 * X.Y.Z.devN+hash; copies it to RELEASE and its X.Y.Z to OUT. Returns 0 or
 * ROCMD_EINVAL. */
int rocmd_version_release(const char *text, char *out, size_t outlen, char *release,
                          size_t releaselen);
/* Parses the first line of a Debian changelog ("rocm-hipamd (5.2.3-8) unstable; ..."). */
int rocmd_version_from_changelog(const char *text, char *out, size_t outlen);
/* 1 when A and B agree to the less precise one's precision. */
int rocmd_version_agree(const char *a, const char *b);
/* Compares dotted versions numerically (-1, 0, 1). */
int rocmd_version_cmp(const char *a, const char *b);

/* Reconciles V->found into version, source, conflict and problem. */
void rocmd_version_reconcile(struct rocmd_sdk_version *v);
/* {"version", "source", "conflict", "problem", "sources": {name: value}} */
cJSON *rocmd_version_to_json(const struct rocmd_sdk_version *v);

#endif
