/*
 * Loading a shared library at run time, for rocmd-hip-probe (hip-probe.c):
 * dlopen on POSIX systems (dl-unix.c), LoadLibraryExW on Windows (dl-win.c),
 * where the library's own folder is searched first for the DLLs it needs,
 * as an SDK's bin\amdhip64_6.dll expects. Paths are UTF-8, also the one the
 * probe gets on its command line (rocmd_dl_arg).
 */
#ifndef ROCMD_DL_H
#define ROCMD_DL_H

#include <stddef.h>

/* Loads PATH; NULL with the loader's reason in WHY when it cannot. */
void *rocmd_dl_open(const char *path, char *why, size_t whylen);
/* The address of NAME in H, or NULL. */
void *rocmd_dl_sym(void *h, const char *name);
/* The program's argument I as UTF-8: ARGV[I], except on Windows, where argv
 * is in the ANSI code page and the wide command line is read instead. */
const char *rocmd_dl_arg(char **argv, int i);

#endif
