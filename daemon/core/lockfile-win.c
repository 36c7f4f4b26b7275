/*
 * Single-holder file locks on Windows (see lockfile.h): LockFileEx on one
 * byte far past the end of the file, so the pid written at the start stays
 * readable by the process that is refused. The lock dies with its holder.
 * The returned value is a C runtime descriptor over the file handle.
 */
#include "lockfile.h"

#include <errno.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <windows.h>

#include "common/error.h"
#include "common/win-util.h"

#define LOCK_OFFSET 0x40000000u

int
rocmd_lockfile_acquire(const char *path, pid_t *holder)
{
	OVERLAPPED ov = {.Offset = LOCK_OFFSET};
	wchar_t *w = rocmd_win_wide(path);
	char buf[32];
	DWORD n = 0;
	HANDLE f;
	int fd, len;

	*holder = 0;
	if (w == NULL)
		return ROCMD_EINVAL;
	f = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (f == INVALID_HANDLE_VALUE)
		return rocmd_win_error(GetLastError());
	if (!LockFileEx(f, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
		DWORD err = GetLastError();
		if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
			if (ReadFile(f, buf, sizeof(buf) - 1, &n, NULL) && n > 0) {
				buf[n] = '\0';
				*holder = (pid_t)strtol(buf, NULL, 10);
			}
			CloseHandle(f);
			return ROCMD_ELOCKED;
		}
		CloseHandle(f);
		return rocmd_win_error(err);
	}
	len = snprintf(buf, sizeof(buf), "%ld\n", (long)GetCurrentProcessId());
	if (SetFilePointer(f, 0, NULL, FILE_BEGIN) == INVALID_SET_FILE_POINTER ||
	    !SetEndOfFile(f) || !WriteFile(f, buf, (DWORD)len, &n, NULL) || n != (DWORD)len) {
		int rc = rocmd_win_error(GetLastError());
		CloseHandle(f);
		return rc;
	}
	fd = _open_osfhandle((intptr_t)f, 0);
	if (fd < 0) {
		CloseHandle(f);
		return -EMFILE;
	}
	return fd;
}

void
rocmd_lockfile_release(int fd)
{
	OVERLAPPED ov = {.Offset = LOCK_OFFSET};
	HANDLE f;

	if (fd < 0)
		return;
	f = (HANDLE)_get_osfhandle(fd);
	if (f != INVALID_HANDLE_VALUE)
		UnlockFileEx(f, 0, 1, 0, &ov);
	_close(fd);
}
