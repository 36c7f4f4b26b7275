/*
 * libarchive on Windows: see archive-dl.h. The Windows build links
 * libarchive statically (scripts/build-windows.sh), so there is nothing to
 * load: the sym_ pointers are the functions themselves, set at build time,
 * and callers keep one code path.
 */
#include "archive-dl.h"

#define ROCMD_ARCHIVE_DEFINE(name) __typeof__(name) *sym_##name = name;
ROCMD_ARCHIVE_SYMBOLS(ROCMD_ARCHIVE_DEFINE)
#undef ROCMD_ARCHIVE_DEFINE

int
rocmd_archive_dl_load(char *why, size_t whylen)
{
	return 0;
}
