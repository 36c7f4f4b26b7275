/*
 * libarchive on Windows: see archive-dl.h. The Windows build links
 * libarchive statically (scripts/build-windows.sh), so there is nothing to
 * load: the sym_ pointers are the functions themselves, set at build time,
 * and callers keep one code path. Archive names are opened through the
 * wide-character API.
 */
#include "archive-dl.h"

#include <errno.h>
#include <stdlib.h>

#include "common/win-util.h"

#define ROCMD_ARCHIVE_DEFINE(name) __typeof__(name) *sym_##name = name;
ROCMD_ARCHIVE_SYMBOLS(ROCMD_ARCHIVE_DEFINE)
#undef ROCMD_ARCHIVE_DEFINE

int
rocmd_archive_dl_load(char *why, size_t whylen)
{
	return 0;
}

int
rocmd_archive_open_file(struct archive *a, const char *path, int fd, size_t block)
{
	wchar_t *w = rocmd_win_wide(path);
	int rc;

	(void)fd;
	if (w == NULL) {
		archive_set_error(a, ENOMEM, "cannot convert the name %s to UTF-16", path);
		return ARCHIVE_FATAL;
	}
	rc = archive_read_open_filename_w(a, w, block);
	free(w);
	return rc;
}
