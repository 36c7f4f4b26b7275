/*
 * C library calls of kernels/ on POSIX systems (see os.h).
 */
#include "kernels/os.h"

#include <stdlib.h>

void *
kernels_aligned_alloc(size_t align, size_t size)
{
	return aligned_alloc(align, (size + align - 1) / align * align);
}

void
kernels_aligned_free(void *p)
{
	free(p);
}

FILE *
kernels_memfile(const void *data, size_t len)
{
	return fmemopen((void *)data, len, "r");
}
