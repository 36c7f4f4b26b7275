/*
 * The platform part of deploy in the daemon (deploy-methods.c), chosen by the
 * build: deploy-jobs-unix.c or deploy-jobs-win.c. It says where the GEMM
 * smoke test program is, which file a target's rocBLAS binary path really
 * names, and whether this build can run the smoke test of a Windows-layout
 * target at all (a Windows tree deployed from Linux in the tests cannot).
 */
#ifndef ROCMD_DEPLOY_JOBS_OS_H
#define ROCMD_DEPLOY_JOBS_OS_H

#include <stddef.h>

/* 1 in the Windows build: a Windows target's rocblas.dll can be loaded here. */
extern const int rocmd_deploy_native_windows;

/* How many more times a deploy is tried when it failed because a file or
 * folder of the target was in use (ROCMD_EBUSY, -EACCES), having left the
 * target as it was: 0 on Linux, where renames ignore open files; on Windows
 * a folder with a file open inside cannot be renamed, and indexers, virus
 * scanners and rocmd's own SDK inspection (the quiet rescan after each
 * deploy) open the library's files for a moment. */
extern const int rocmd_deploy_busy_retries;

/* The smoke test program into OUT: rocmd-rocblas-smoke beside the running
 * rocmd (Windows: rocmd-rocblas-smoke.exe beside rocmd.exe), else where it
 * is installed (libexec). */
void rocmd_deploy_smoke_find(char *out, size_t n);

/* After a deploy was refused access (-EACCES) to FOLDER (the SDK's bin
 * folder): appends to WHY how to give rocmd the right to write there. On
 * Windows the service runs as LocalService, which has no rights under
 * C:\Program Files (docs/SERVICE.md); on Linux nothing is added. */
void rocmd_deploy_denied_hint(const char *folder, char *why, size_t whylen);

/* Rewrites host path PATH of a rocBLAS binary to the file it names: on Linux
 * librocblas.so.0 is usually a symlink to librocblas.so.0.N beside it, and
 * the file itself is what gets replaced (one that leads to another folder is
 * left as it is); Windows DLLs are plain files, left as they are. */
void rocmd_deploy_binary_resolve(char *path, size_t n);

#endif
