/*
 * The few C library calls rocmd needs that the Microsoft C runtime lacks, one
 * file per platform: libc-unix.c (aligned_alloc, fmemopen) and libc-win.c
 * (_aligned_malloc, a temporary file). POSIX names that map one to one are
 * compat-win.h's; these need a function of their own.
 */
#ifndef ROCMD_LIBC_H
#define ROCMD_LIBC_H

#include <stddef.h>
#include <stdio.h>

/* SIZE bytes aligned to ALIGN (a power of two); free with rocmd_aligned_free. */
void *rocmd_aligned_alloc(size_t align, size_t size);
void rocmd_aligned_free(void *p);
/* A stream reading the LEN bytes at DATA (which must outlive it), or NULL. */
FILE *rocmd_memfile(const void *data, size_t len);

#endif
