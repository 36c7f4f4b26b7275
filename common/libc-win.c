/*
 * C library calls on Windows (see libc.h): the Microsoft C runtime has
 * _aligned_malloc (freed by _aligned_free, not free) and no fmemopen, so a
 * memory stream is a temporary file holding a copy (removed when closed).
 */
#include "libc.h"

#include <malloc.h>

void *
rocmd_aligned_alloc(size_t align, size_t size)
{
	return _aligned_malloc(size, align);
}

void
rocmd_aligned_free(void *p)
{
	_aligned_free(p);
}

FILE *
rocmd_memfile(const void *data, size_t len)
{
	FILE *f = tmpfile();

	if (f == NULL)
		return NULL;
	if (fwrite(data, 1, len, f) != len || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return NULL;
	}
	return f;
}
