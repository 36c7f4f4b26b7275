/*
 * Loading a shared library at run time, for rocmd-hip-probe (hip-probe.c),
 * the smoke test and the GPU backends (kernels/): dlopen on POSIX systems
 * (dl-unix.c), LoadLibraryExW on Windows (dl-win.c), where a library named
 * by its path has its own folder searched first for the DLLs it needs, as an
 * SDK's bin\amdhip64_6.dll expects, and a bare name is looked for only in
 * the program's folder and System32 (not along PATH). Paths are UTF-8, also the one the probe gets on its command line
 * (rocmd_dl_arg).
 */
#ifndef ROCMD_DL_H
#define ROCMD_DL_H

#include <stddef.h>

/* Loads PATH; NULL with the loader's reason in WHY when it cannot. */
void *rocmd_dl_open(const char *path, char *why, size_t whylen);
/* The address of NAME in H, or NULL. */
void *rocmd_dl_sym(void *h, const char *name);
/* Unloads H (NULL is fine). */
void rocmd_dl_close(void *h);
/* The file the loader took H from (the full path of a name it searched
 * for), into OUT; "" when it cannot say. */
void rocmd_dl_path(void *h, char *out, size_t len);
/* Windows: the system folder (System32, where the display driver puts its
 * runtimes), UTF-8, into OUT: 0. Elsewhere, or when it cannot be read: -1. */
int rocmd_dl_system_dir(char *out, size_t len);
/* The program's argument I as UTF-8: ARGV[I], except on Windows, where argv
 * is in the ANSI code page and the wide command line is read instead. */
const char *rocmd_dl_arg(char **argv, int i);

#endif
