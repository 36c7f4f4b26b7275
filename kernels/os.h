/*
 * The few C library calls kernels/ needs that the Microsoft C runtime lacks,
 * one file per platform: os-unix.c (aligned_alloc, fmemopen) and os-win.c
 * (_aligned_malloc, a temporary file).
 */
#ifndef ROCMD_KERNELS_OS_H
#define ROCMD_KERNELS_OS_H

#include <stddef.h>
#include <stdio.h>

/* SIZE bytes aligned to ALIGN (a power of two); free with kernels_aligned_free. */
void *kernels_aligned_alloc(size_t align, size_t size);
void kernels_aligned_free(void *p);
/* A stream reading the LEN bytes at DATA (which must outlive it), or NULL. */
FILE *kernels_memfile(const void *data, size_t len);

#endif
