/*
 * The tuned library's file operations on Windows (see tunedlib-os.h). Paths
 * are UTF-8 and go through the wide-character API. Files are opened in binary
 * mode and created writable (a read-only file could not be removed with the
 * generation it belongs to). Folders are not flushed: there is no fsync of a
 * folder on Windows, and NTFS journals the metadata of a rename.
 */
#include "kernels/tunedlib-os.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <wchar.h>

#include <windows.h>

#include "common/win-util.h"

int
tunedlib_os_create(const char *path)
{
	wchar_t *w = rocmd_win_wide(path);
	int fd;

	if (w == NULL)
		return -ENOMEM;
	fd = _wopen(w, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT,
	            _S_IREAD | _S_IWRITE);
	free(w);
	return fd < 0 ? -errno : fd;
}

int
tunedlib_os_open_read(const char *path)
{
	wchar_t *w = rocmd_win_wide(path);
	int fd;

	if (w == NULL)
		return -ENOMEM;
	fd = _wopen(w, _O_RDONLY | _O_BINARY | _O_NOINHERIT);
	free(w);
	return fd < 0 ? -errno : fd;
}

int
tunedlib_os_sync_fd(int fd)
{
	return _commit(fd) < 0 ? -errno : 0;
}

int
tunedlib_os_sync_dir(const char *path)
{
	(void)path;
	return 0;
}

int
tunedlib_os_mkdir(const char *path)
{
	wchar_t *w = rocmd_win_wide(path);
	int rc;

	if (w == NULL)
		return -ENOMEM;
	rc = _wmkdir(w);
	free(w);
	return rc < 0 ? -errno : 0;
}

int
tunedlib_os_replace(const char *from, const char *to)
{
	wchar_t *wf = rocmd_win_wide(from), *wt = rocmd_win_wide(to);
	int err = 0;

	if (wf == NULL || wt == NULL)
		err = -ENOMEM;
	else if (!MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		err = GetLastError() == ERROR_ACCESS_DENIED ? -EACCES : -EIO;
	free(wf);
	free(wt);
	return err;
}
