/*
 * Windows helpers: see win-util.h.
 */
#include "win-util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "error.h"

wchar_t *
rocmd_win_wide(const char *utf8)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = malloc((size_t)n * sizeof(wchar_t));
	if (w != NULL && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

char *
rocmd_win_utf8(const wchar_t *wide)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, wide, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return NULL;
	s = malloc((size_t)n);
	if (s != NULL && WideCharToMultiByte(CP_UTF8, 0, wide, -1, s, n, NULL, NULL) != n) {
		free(s);
		s = NULL;
	}
	return s;
}

const char *
rocmd_win_strerror(unsigned long err, char *buf, size_t len)
{
	wchar_t w[512];
	DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
				 err, 0, w, sizeof(w) / sizeof(w[0]), NULL);

	/* Messages end with ".\r\n": drop the line break. */
	while (n > 0 && (w[n - 1] == L'\n' || w[n - 1] == L'\r' || w[n - 1] == L' '))
		w[--n] = L'\0';
	if (n == 0 || WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, (int)len, NULL, NULL) <= 0)
		snprintf(buf, len, "Windows error %lu", err);
	return buf;
}

int
rocmd_win_error(unsigned long err)
{
	switch (err) {
	case ERROR_SUCCESS:
		return 0;
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return -ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_PRIVILEGE_NOT_HELD:
		return ROCMD_EPERM;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ROCMD_ENOMEM;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		return ROCMD_ENOSPACE;
	case ERROR_ALREADY_EXISTS:
	case ERROR_FILE_EXISTS:
		return -EEXIST;
	case ERROR_LOCK_VIOLATION:
	case ERROR_SHARING_VIOLATION:
		return ROCMD_EBUSY;
	case ERROR_BROKEN_PIPE:
	case ERROR_NO_DATA:
	case ERROR_PIPE_NOT_CONNECTED:
		return ROCMD_ECLOSED;
	case ERROR_INVALID_NAME:
	case ERROR_FILENAME_EXCED_RANGE:
		return -ENAMETOOLONG;
	default:
		return ROCMD_EIO;
	}
}
