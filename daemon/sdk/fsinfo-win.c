/*
 * File facts on Windows: see fsinfo.h. GetFileAttributesExW gives the type,
 * size and times without opening the file; a reparse point (symlink or
 * junction) is reported as a link unless FOLLOW, when the target is opened
 * and described instead. Mapping uses CreateFileMappingW/MapViewOfFile; the
 * view keeps the mapping alive after both handles are closed. Listing uses
 * FindFirstFileW/FindNextFileW, names converted to UTF-8.
 */
#include "fsinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/error.h"
#include "common/win-util.h"

/* FILETIME (100 ns since 1601) as ns since 1970. */
static int64_t
ft_ns(FILETIME ft)
{
	int64_t t = (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);

	return (t - 116444736000000000LL) * 100;
}

/* A Win32 error as -errno, the contract of rocmd_fsinfo_get. */
static int
errno_of(DWORD err)
{
	switch (err) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_DRIVE:
	case ERROR_BAD_NETPATH:
		return -ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		return -EACCES;
	case ERROR_DIRECTORY:
		return -ENOTDIR;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return -ENOMEM;
	case ERROR_INVALID_NAME:
	case ERROR_FILENAME_EXCED_RANGE:
		return -ENAMETOOLONG;
	case ERROR_CANT_RESOLVE_FILENAME:
		return -ELOOP;
	default:
		return -EIO;
	}
}

static void
fill(struct rocmd_fsinfo *out, DWORD attr, DWORD size_hi, DWORD size_lo, FILETIME created,
     FILETIME written)
{
	int64_t c = ft_ns(created), w = ft_ns(written);

	if (attr & FILE_ATTRIBUTE_DIRECTORY)
		out->type = ROCMD_FS_DIR;
	else if (attr & FILE_ATTRIBUTE_DEVICE)
		out->type = ROCMD_FS_OTHER;
	else
		out->type = ROCMD_FS_FILE;
	out->size = ((uint64_t)size_hi << 32) | size_lo;
	out->mtime_ns = w;
	out->change_ns = c > w ? c : w;
}

int
rocmd_fsinfo_get(const char *path, int follow, struct rocmd_fsinfo *out)
{
	WIN32_FILE_ATTRIBUTE_DATA a;
	BY_HANDLE_FILE_INFORMATION bh;
	wchar_t *w = rocmd_win_wide(path);
	HANDLE h;
	int rc = 0;

	*out = (struct rocmd_fsinfo){0};
	if (w == NULL)
		return -ENOMEM;
	if (!GetFileAttributesExW(w, GetFileExInfoStandard, &a)) {
		rc = errno_of(GetLastError());
		goto out;
	}
	if (!(a.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
		fill(out, a.dwFileAttributes, a.nFileSizeHigh, a.nFileSizeLow, a.ftCreationTime,
		     a.ftLastWriteTime);
		goto out;
	}
	if (!follow) {
		fill(out, a.dwFileAttributes, a.nFileSizeHigh, a.nFileSizeLow, a.ftCreationTime,
		     a.ftLastWriteTime);
		out->type = ROCMD_FS_LINK;
		goto out;
	}
	/* Opening follows the reparse point; FILE_FLAG_BACKUP_SEMANTICS opens folders. */
	h = CreateFileW(w, FILE_READ_ATTRIBUTES,
	                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                FILE_FLAG_BACKUP_SEMANTICS, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		rc = errno_of(GetLastError());
		goto out;
	}
	if (GetFileInformationByHandle(h, &bh)) {
		fill(out, bh.dwFileAttributes, bh.nFileSizeHigh, bh.nFileSizeLow, bh.ftCreationTime,
		     bh.ftLastWriteTime);
		out->dev = bh.dwVolumeSerialNumber;
		out->ino = ((uint64_t)bh.nFileIndexHigh << 32) | bh.nFileIndexLow;
	} else {
		rc = errno_of(GetLastError());
	}
	CloseHandle(h);
out:
	free(w);
	return rc;
}

FILE *
rocmd_fs_fopen(const char *path, const char *mode)
{
	wchar_t *w = rocmd_win_wide(path), *m = rocmd_win_wide(mode);
	FILE *f = NULL;

	if (w != NULL && m != NULL)
		f = _wfopen(w, m);
	else
		errno = ENOMEM;
	free(w);
	free(m);
	return f;
}

struct rocmd_dir {
	HANDLE h;
	int first; /* fd holds an entry not yet returned */
	WIN32_FIND_DATAW fd;
	struct rocmd_dirent e;
};

struct rocmd_dir *
rocmd_dir_open(const char *path)
{
	char pattern[4096];
	struct rocmd_dir *d;
	wchar_t *w;
	DWORD err;

	if (snprintf(pattern, sizeof(pattern), "%s/*", path) >= (int)sizeof(pattern)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	w = rocmd_win_wide(pattern);
	if (d == NULL || w == NULL) {
		free(d);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	d->h = FindFirstFileW(w, &d->fd);
	err = GetLastError();
	free(w);
	if (d->h == INVALID_HANDLE_VALUE) {
		free(d);
		/* An empty folder still lists "." and ".."; no match at all means no folder. */
		errno = err == ERROR_FILE_NOT_FOUND ? ENOENT : -errno_of(err);
		return NULL;
	}
	d->first = 1;
	return d;
}

struct rocmd_dirent *
rocmd_dir_read(struct rocmd_dir *d)
{
	for (;;) {
		char *u8;

		if (!d->first && !FindNextFileW(d->h, &d->fd))
			return NULL;
		d->first = 0;
		u8 = rocmd_win_utf8(d->fd.cFileName);
		if (u8 == NULL)
			continue; /* not valid UTF-16: no name rocmd could use */
		snprintf(d->e.d_name, sizeof(d->e.d_name), "%s", u8);
		free(u8);
		return &d->e;
	}
}

void
rocmd_dir_close(struct rocmd_dir *d)
{
	if (d == NULL)
		return;
	FindClose(d->h);
	free(d);
}

/* Windows has no "execute" right on folders that matters here: listing is the test. */
int
rocmd_fs_dir_readable(const char *path)
{
	char pattern[4096];
	WIN32_FIND_DATAW fd;
	wchar_t *w;
	HANDLE h;
	int rc = 0;

	if (snprintf(pattern, sizeof(pattern), "%s/*", path) >= (int)sizeof(pattern))
		return -ENAMETOOLONG;
	if ((w = rocmd_win_wide(pattern)) == NULL)
		return -ENOMEM;
	h = FindFirstFileW(w, &fd);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD err = GetLastError();
		if (err != ERROR_FILE_NOT_FOUND)
			rc = errno_of(err);
	} else {
		FindClose(h);
	}
	free(w);
	return rc;
}

int
rocmd_fs_map(const char *path, const void **data, size_t *len)
{
	wchar_t *w = rocmd_win_wide(path);
	HANDLE f = INVALID_HANDLE_VALUE, m = NULL;
	LARGE_INTEGER size;
	void *view;
	int rc = 0;

	*data = NULL;
	*len = 0;
	if (w == NULL)
		return ROCMD_ENOMEM;
	f = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                FILE_FLAG_SEQUENTIAL_SCAN, NULL);
	if (f == INVALID_HANDLE_VALUE) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	if (!GetFileSizeEx(f, &size)) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	if (size.QuadPart == 0) {
		rc = ROCMD_ECORRUPT;
		goto out;
	}
	if ((uint64_t)size.QuadPart > SIZE_MAX) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	m = CreateFileMappingW(f, NULL, PAGE_READONLY, 0, 0, NULL);
	if (m == NULL) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	view = MapViewOfFile(m, FILE_MAP_READ, 0, 0, 0);
	if (view == NULL) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	*data = view;
	*len = (size_t)size.QuadPart;
out:
	if (m != NULL)
		CloseHandle(m);
	if (f != INVALID_HANDLE_VALUE)
		CloseHandle(f);
	free(w);
	return rc;
}

void
rocmd_fs_unmap(const void *data, size_t len)
{
	if (data != NULL)
		UnmapViewOfFile(data);
}
