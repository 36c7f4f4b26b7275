/*
 * ROCm outside the SDK installers' layouts (docs/LAYOUTS.md), each reported
 * as an install of its own layout beside the SDKs of sdk-discover.h:
 *   therock      a TheRock tarball unpacked anywhere an SDK rule looks
 *                (share/therock/therock_manifest.json marks it; its .kpack
 *                archives' tables of contents are read, runtime-kpack.c);
 *   rocm-wheels  a Python environment holding TheRock's rocm-sdk-core /
 *                rocm-sdk-libraries / rocm-sdk-device-gfxNNNN wheels;
 *   torch        a PyTorch ROCm wheel carrying its own rocBLAS in torch/lib;
 *   ollama, lmstudio, llama.cpp
 *                an application's private runtime.
 * Python environments and applications are looked for in the usual per-user
 * places of every home folder and under sdk.runtime_roots, to a fixed depth,
 * never through a symlink. pip's RECORD beside a wheel's files is recorded
 * as its owner. Worker thread only, like the scan.
 */
#ifndef ROCMD_RUNTIME_DISCOVER_H
#define ROCMD_RUNTIME_DISCOVER_H

#include <cjson/cJSON.h>

#include "discover-internal.h"

/* How deep sdk.runtime_roots are searched for environments and applications. */
#define ROCMD_RUNTIME_ROOT_DEPTH 3
/* At most this many folders are looked at under each configured root. */
#define ROCMD_RUNTIME_ROOT_DIRS 4096

/* Adds the Python environments and applications of the scan's machine. */
void rocmd_runtime_discover(struct rocmd_disc *s);
/* An SDK candidate F that is a TheRock tarball install: its layout, release,
 * targets, kpack archives and hipBLASLt folder. */
void rocmd_therock_examine(struct rocmd_disc *s, struct rocmd_sdk_found *f);
/* Reads TheRock's manifest under system path ROOT into F's version sources. */
void rocmd_therock_version(struct rocmd_disc *s, struct rocmd_sdk_found *f, const char *root);
/* Python environments under the homes and the configured roots. */
void rocmd_python_discover(struct rocmd_disc *s, char *const *homes);
/* Examines one environment folder (system path) for wheels and torch. */
void rocmd_python_env(struct rocmd_disc *s, const char *env, const char *origin);
/* Applications' private runtimes: ollama, LM Studio, llama.cpp. */
void rocmd_apps_discover(struct rocmd_disc *s, char *const *homes);
/* A folder (system path) holding llama-server beside a rocBLAS: 1 when added. */
int rocmd_apps_llamacpp(struct rocmd_disc *s, const char *dir);

/* The archs kpack archive H (host path) holds kernels for, added to the
 * list *ARCHS, one per line (runtime-kpack.c). Returns 0, or a negative error code
 * with WHY set. */
int rocmd_kpack_archs(const char *h, char **archs, char *why, size_t whylen);

/* 1 when every component of system path SYS below its prefix TOP is a real
 * folder, not a symlink: a user's link must not lead discovery elsewhere. */
int rocmd_disc_real_below(const struct rocmd_disc *s, const char *top, const char *sys);

/* A small JSON file (host path) parsed, or NULL. */
cJSON *rocmd_runtime_read_json(const char *h);
/* The runtime fields of F added to O (sdk-discover.c's JSON of an install). */
void rocmd_runtime_to_json(const struct rocmd_sdk_found *f, cJSON *o);

#endif
