/*
 * C library calls on POSIX systems (see libc.h).
 */
#include "libc.h"

#include <stdlib.h>

void *
rocmd_aligned_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, (size + align - 1) / align * align);
}

void
rocmd_aligned_free(void *p)
{
	free(p);
}

FILE *
rocmd_memfile(const void *data, size_t len)
{
	return fmemopen((void *)data, len, "r");
}
