/*
 * The file layer's Windows calls (fs.h). Paths arrive as UTF-8 with '/'
 * or '\' and go to the wide-character API as \\?\ paths (no MAX_PATH limit).
 * Nothing follows a reparse point (a symlink or a junction): files and
 * identities are opened with FILE_FLAG_OPEN_REPARSE_POINT, and an opened
 * object that turns out to be one is refused as O_NOFOLLOW refuses a
 * symlink; walks refuse reparse points inside a tree and removal deletes the
 * reparse point itself, never what it leads to (I4).
 *
 * Descriptors are C-runtime descriptors over the handles (_open_osfhandle);
 * reading, writing and flushing use the handle directly. Durability: a file
 * is flushed with FlushFileBuffers; a folder is opened with
 * FILE_FLAG_BACKUP_SEMANTICS and flushed the same way where the file system
 * allows it (NTFS does for a handle with write access); where it refuses,
 * the flush of the folder is skipped (NTFS journals its metadata, so a
 * rename is not lost half done, but it may be lost whole: docs/DEPLOY.md).
 * There is no syncfs: rocmd_fs_copy_file flushes each file instead.
 *
 * NTFS has no atomic exchange of two folders: rocmd_fs_exchange answers
 * "unsupported" and the deploy engine does its two renames (journaled;
 * recovery finishes or undoes them). A DLL that a process has loaded cannot
 * be replaced or deleted but can be renamed (rocmd_fs_remove_loaded).
 *
 * The readers' part at the end (SDK discovery): GetFileAttributesExW gives
 * the type, size and times without opening the file; a reparse point is
 * reported as a link unless FOLLOW, when the target is opened and described
 * instead. Mapping uses CreateFileMappingW/MapViewOfFile; the view keeps the
 * mapping alive after both handles are closed. Listing uses
 * FindFirstFileW/FindNextFileW. These take paths as they come (no \\?\
 * prefix: an SDK's paths may hold "..") and report -errno values.
 */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include "error.h"
#include "failpoint.h"
#include "win-util.h"

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

/* A Win32 error as a rocmd code, with the errno values POSIX callers test. */
static int
err_of(DWORD err)
{
	switch (err) {
	case ERROR_PATH_NOT_FOUND:
	case ERROR_INVALID_DRIVE:
	case ERROR_BAD_NETPATH:
		return -ENOENT;
	case ERROR_DIR_NOT_EMPTY:
		return -ENOTEMPTY;
	case ERROR_DIRECTORY:
		return -ENOTDIR;
	case ERROR_NOT_SAME_DEVICE:
		return -EXDEV;
	case ERROR_CANT_RESOLVE_FILENAME:
		return -ELOOP;
	default:
		return rocmd_win_error(err);
	}
}

static int
last_err(void)
{
	return err_of(GetLastError());
}

/* Length of the root of PATH in either separator. */
size_t
rocmd_fs_path_root(const char *p)
{
	size_t i;
	int seps = 0;

#define SEP(c) ((c) == '/' || (c) == '\\')
	if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':' &&
	    SEP(p[2]))
		return 3;
	if (!(SEP(p[0]) && SEP(p[1])))
		return 0;
	/* //server/share/ */
	for (i = 2; p[i] != '\0'; i++)
		if (SEP(p[i]) && ++seps == 2)
			return i + 1;
	return seps == 1 && p[i - 1] != '/' && p[i - 1] != '\\' ? i : 0;
#undef SEP
}

int
rocmd_fs_path_norm(const char *path, char *out, size_t len)
{
	const char *p = path;
	size_t n;

	if (strncmp(p, "\\\\?\\UNC\\", 8) == 0) {
		if (len < 3)
			return ROCMD_EINVAL;
		out[0] = out[1] = '/';
		out[2] = '\0';
		p += 8;
	} else {
		if (strncmp(p, "\\\\?\\", 4) == 0)
			p += 4;
		out[0] = '\0';
	}
	n = strlen(out);
	if (n + strlen(p) >= len)
		return ROCMD_EINVAL;
	for (; *p != '\0'; p++)
		out[n++] = *p == '\\' ? '/' : *p;
	out[n] = '\0';
	return 0;
}

/* PATH as a wide \\?\ path for the W functions (absolute paths only get the
 * prefix); NULL when out of memory or not UTF-8. */
static wchar_t *
wide(const char *path)
{
	char norm[ROCMD_FS_PATH_MAX + 16];
	const char *prefix = "";
	char *buf;
	wchar_t *w;
	size_t root;

	if (rocmd_fs_path_norm(path, norm, sizeof(norm)) < 0)
		return NULL;
	root = rocmd_fs_path_root(norm);
	if (root == 3)
		prefix = "\\\\?\\";
	else if (root > 3)
		prefix = "\\\\?\\UNC";
	if ((buf = malloc(strlen(prefix) + strlen(norm) + 1)) == NULL)
		return NULL;
	/* \\?\UNC\server\share: the UNC form keeps one of the two leading separators. */
	sprintf(buf, "%s%s", prefix, root > 3 ? norm + 1 : norm);
	for (char *c = buf + strlen(prefix); *c != '\0'; c++)
		if (*c == '/')
			*c = '\\';
	w = rocmd_win_wide(buf);
	free(buf);
	return w;
}

static HANDLE
handle_of(int fd)
{
	return (HANDLE)_get_osfhandle(fd);
}

int rocmd_fs_test_no_openat2; /* POSIX only: there is no openat2 here */

/* ---- beneath a root ---- */

/*
 * Windows has no openat: PATH is checked below ROOT one component at a time
 * (every folder from ROOT down to PATH's parent a real folder, none a
 * reparse point: a symlink or a junction), then the operation takes the
 * whole path, its last name opened with FILE_FLAG_OPEN_REPARSE_POINT where
 * it is opened. A folder swapped for a junction between the check and the
 * operation is not seen (docs/DEPLOY.md says so). SELF: PATH may be ROOT.
 */
static int
win_beneath(const char *root, const char *path, int self)
{
	const char *rel;
	char why[256];

	if (root == NULL)
		return 0;
	if ((rel = rocmd_fs_below(root, path)) == NULL || (*rel == '\0' && !self))
		return ROCMD_EUNSAFE;
	return rocmd_fs_resolve(root, path, 0, why, sizeof(why));
}

/* Whether folder W's owner may be trusted: SYSTEM, Administrators,
 * TrustedInstaller or rocmd's own user. Where the owner cannot be read
 * (a file system without ACLs), it is. */
static int
win_owner_ok(const wchar_t *w, const char *path, char *why, size_t whylen)
{
	PSECURITY_DESCRIPTOR sd = NULL;
	PSID owner = NULL, ti = NULL;
	HANDLE token;
	int ok;

	if (GetNamedSecurityInfoW(w, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, &owner, NULL, NULL,
	                          NULL, &sd) != ERROR_SUCCESS ||
	    owner == NULL) {
		LocalFree(sd);
		return 1;
	}
	ok = IsWellKnownSid(owner, WinLocalSystemSid) ||
	     IsWellKnownSid(owner, WinBuiltinAdministratorsSid);
	if (!ok && ConvertStringSidToSidW(
	               L"S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464", &ti)) {
		ok = EqualSid(owner, ti);
		LocalFree(ti);
	}
	if (!ok && OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) {
		union {
			TOKEN_USER u;
			char buf[256];
		} tu;
		DWORD len;
		if (GetTokenInformation(token, TokenUser, &tu, sizeof(tu), &len))
			ok = EqualSid(owner, tu.u.User.Sid);
		CloseHandle(token);
	}
	if (!ok) {
		wchar_t *sid = NULL;
		char *u8 = NULL;
		if (ConvertSidToStringSidW(owner, &sid))
			u8 = rocmd_win_utf8(sid);
		rocmd_fs_fmt(why, whylen,
		             "%s is owned by %s, not by SYSTEM, Administrators or rocmd's user",
		             path, u8 != NULL ? u8 : "another user");
		free(u8);
		LocalFree(sid);
	}
	LocalFree(sd);
	return ok;
}

int
rocmd_fs_resolve(const char *root, const char *path, unsigned flags, char *why, size_t whylen)
{
	char buf[ROCMD_FS_PATH_MAX];
	const char *rel = rocmd_fs_below(root, path), *p;
	size_t n;

	if (rel == NULL) {
		rocmd_fs_fmt(why, whylen, "%s is not inside %s", path, root);
		return ROCMD_EUNSAFE;
	}
	n = (size_t)rocmd_fs_fmt(buf, sizeof(buf), "%s", root);
	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	for (p = rel;;) {
		size_t len = strcspn(p, "/");
		int last = *p == '\0' || p[len] == '\0';
		wchar_t *w;
		DWORD a;

		if ((w = wide(buf)) == NULL)
			return ROCMD_EINVAL;
		a = GetFileAttributesW(w);
		if (a == INVALID_FILE_ATTRIBUTES) {
			int rc = last_err();
			free(w);
			/* A folder to be created (the last one only). */
			if (rc == -ENOENT && buf[strlen(root)] != '\0' && *p == '\0')
				return 0;
			rocmd_fs_fmt(why, whylen, "%s: %s", buf, rocmd_strerror(rc));
			return rc;
		}
		if (a & FILE_ATTRIBUTE_REPARSE_POINT) {
			free(w);
			rocmd_fs_fmt(
			    why, whylen,
			    "%s is a reparse point (a symlink or a junction): every folder "
			    "below %s must be a real folder, none may be followed (I4)",
			    buf, root);
			return ROCMD_EUNSAFE;
		}
		if (!(a & FILE_ATTRIBUTE_DIRECTORY)) {
			free(w);
			rocmd_fs_fmt(why, whylen, "%s is not a folder", buf);
			return -ENOTDIR;
		}
		if ((flags & ROCMD_FS_RESOLVE_OWNER) && !win_owner_ok(w, buf, why, whylen)) {
			free(w);
			return ROCMD_EPERM;
		}
		free(w);
		if (*p == '\0' || (last && !(flags & ROCMD_FS_RESOLVE_LAST)))
			return 0;
		n = strlen(buf);
		if (rocmd_fs_fmt(buf + n, sizeof(buf) - n, "%s%.*s",
		                 n > 0 && buf[n - 1] == '/' ? "" : "/", (int)len,
		                 p) >= (int)(sizeof(buf) - n))
			return -ENAMETOOLONG;
		p += len + (p[len] == '/');
	}
}

int
rocmd_fs_mkdir_in(const char *root, const char *path, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.mkdir");
	wchar_t *w;

	(void)mode;
	if (rc < 0 || (rc = win_beneath(root, path, 0)) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	if (!CreateDirectoryW(w, NULL))
		rc = GetLastError() == ERROR_ALREADY_EXISTS ? -EEXIST : last_err();
	free(w);
	return rc;
}

int
rocmd_fs_os_open_in(const char *root, const char *path, int flags, unsigned mode)
{
	DWORD access, share, disp, attrs;
	BY_HANDLE_FILE_INFORMATION info;
	wchar_t *w;
	HANDLE h;
	int rc, fd;

	if ((rc = win_beneath(root, path, 0)) < 0)
		return rc;
	switch (flags & (O_RDONLY | O_WRONLY | O_RDWR)) {
	case O_WRONLY:
		access = GENERIC_WRITE;
		share = FILE_SHARE_READ | FILE_SHARE_DELETE;
		break;
	case O_RDWR:
		access = GENERIC_READ | GENERIC_WRITE;
		share = FILE_SHARE_READ | FILE_SHARE_DELETE;
		break;
	default:
		access = GENERIC_READ;
		share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
		break;
	}
	if ((flags & O_CREAT) && (flags & O_EXCL))
		disp = CREATE_NEW;
	else if ((flags & O_CREAT) && (flags & O_TRUNC))
		disp = CREATE_ALWAYS;
	else if (flags & O_CREAT)
		disp = OPEN_ALWAYS;
	else if (flags & O_TRUNC)
		disp = TRUNCATE_EXISTING;
	else
		disp = OPEN_EXISTING;
	attrs =
	    (mode & 0200) || !(flags & O_CREAT) ? FILE_ATTRIBUTE_NORMAL : FILE_ATTRIBUTE_READONLY;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	h = CreateFileW(w, access, share, NULL, disp, attrs | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	rc = h == INVALID_HANDLE_VALUE
	         ? (GetLastError() == ERROR_FILE_EXISTS ? -EEXIST : last_err())
	         : 0;
	free(w);
	if (rc < 0)
		return rc;
	/* The link itself was opened: refuse it as O_NOFOLLOW does. */
	if (!GetFileInformationByHandle(h, &info)) {
		rc = last_err();
		CloseHandle(h);
		return rc;
	}
	if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
		CloseHandle(h);
		return -ELOOP;
	}
	fd = _open_osfhandle((intptr_t)h, (access == GENERIC_READ ? _O_RDONLY : 0) | _O_BINARY);
	if (fd < 0) {
		CloseHandle(h);
		return -EMFILE;
	}
	return fd;
}

int
rocmd_fs_open_in(const char *root, const char *path, int flags, unsigned mode)
{
	int rc = ROCMD_FAILPOINT("fs.open");

	return rc < 0 ? rc : rocmd_fs_os_open_in(root, path, flags, mode);
}

int
rocmd_fs_close(int fd)
{
	return _close(fd) < 0 ? -EIO : 0;
}

int
rocmd_fs_os_read(int fd, void *buf, size_t n, size_t *got)
{
	DWORD r = 0;

	*got = 0;
	if (!ReadFile(handle_of(fd), buf, n > (1u << 30) ? (1u << 30) : (DWORD)n, &r, NULL))
		return GetLastError() == ERROR_HANDLE_EOF ? 0 : last_err();
	*got = r;
	return 0;
}

int
rocmd_fs_read(int fd, void *buf, size_t n, size_t *got)
{
	int rc = ROCMD_FAILPOINT("fs.read");

	*got = 0;
	return rc < 0 ? rc : rocmd_fs_os_read(fd, buf, n, got);
}

int
rocmd_fs_pread(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
	int rc = ROCMD_FAILPOINT("fs.read");
	OVERLAPPED ov = {0};
	DWORD r = 0;

	*got = 0;
	if (rc < 0)
		return rc;
	ov.Offset = (DWORD)off;
	ov.OffsetHigh = (DWORD)(off >> 32);
	if (!ReadFile(handle_of(fd), buf, n > (1u << 30) ? (1u << 30) : (DWORD)n, &r, &ov))
		return GetLastError() == ERROR_HANDLE_EOF ? 0 : last_err();
	*got = r;
	return 0;
}

int
rocmd_fs_write_all(int fd, const void *buf, size_t n)
{
	int rc = ROCMD_FAILPOINT("fs.write");
	const char *p = buf;

	if (rc < 0)
		return rc;
	while (n > 0) {
		DWORD w = 0;
		if (!WriteFile(handle_of(fd), p, n > (1u << 30) ? (1u << 30) : (DWORD)n, &w, NULL))
			return last_err();
		if (w == 0)
			return ROCMD_EIO;
		p += w;
		n -= w;
	}
	return 0;
}

int
rocmd_fs_fsync(int fd)
{
	int rc = ROCMD_FAILPOINT("fs.fsync");

	if (rc == 0 && !FlushFileBuffers(handle_of(fd)))
		rc = last_err();
	return rc;
}

int
rocmd_fs_fsync_dir_in(const char *root, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.fsync");
	wchar_t *w;
	HANDLE h;

	if (rc < 0 || (rc = win_beneath(root, path, 1)) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
	                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD err = GetLastError();
		/* A folder we may not open for writing: nothing to flush through it. */
		if (err == ERROR_ACCESS_DENIED && GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES)
			rc = 0;
		else
			rc = err_of(err);
		free(w);
		return rc;
	}
	free(w);
	if (!FlushFileBuffers(h)) {
		DWORD err = GetLastError();
		/* File systems that cannot flush a folder say so; it is not an error. */
		if (err != ERROR_INVALID_FUNCTION && err != ERROR_ACCESS_DENIED &&
		    err != ERROR_INVALID_PARAMETER && err != ERROR_INVALID_HANDLE)
			rc = err_of(err);
	}
	CloseHandle(h);
	return rc;
}

int
rocmd_fs_syncfs_in(const char *root, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.fsync");

	return rc < 0 ? rc : win_beneath(root, path, 1);
}

int
rocmd_fs_rename_in(const char *root, const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.rename");
	wchar_t *wf, *wt;

	if (rc < 0 || (rc = win_beneath(root, from, 0)) < 0 || (rc = win_beneath(root, to, 0)) < 0)
		return rc;
	wf = wide(from);
	wt = wide(to);
	if (wf == NULL || wt == NULL)
		rc = ROCMD_EINVAL;
	else if (!MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		rc = last_err();
	free(wf);
	free(wt);
	return rc;
}

/* Deletes file or link W; a read-only file loses the attribute first. */
static int
delete_w(const wchar_t *w)
{
	DWORD attr = GetFileAttributesW(w);

	if (attr == INVALID_FILE_ATTRIBUTES)
		return GetLastError() == ERROR_FILE_NOT_FOUND ||
		               GetLastError() == ERROR_PATH_NOT_FOUND
		           ? 0
		           : last_err();
	/* A link to a folder (symlink or junction) is removed as a folder: the
	 * link itself goes, never what it leads to. */
	if ((attr & FILE_ATTRIBUTE_REPARSE_POINT) && (attr & FILE_ATTRIBUTE_DIRECTORY))
		return RemoveDirectoryW(w) ? 0 : last_err();
	if (attr & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesW(w, attr & ~(DWORD)FILE_ATTRIBUTE_READONLY);
	if (DeleteFileW(w))
		return 0;
	if (GetLastError() == ERROR_FILE_NOT_FOUND)
		return 0;
	return last_err();
}

int
rocmd_fs_unlink_in(const char *root, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.unlink");
	wchar_t *w;

	if (rc < 0 || (rc = win_beneath(root, path, 0)) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	rc = delete_w(w);
	free(w);
	return rc;
}

void
rocmd_fs_os_unlink_in(const char *root, const char *path)
{
	wchar_t *w;

	if (win_beneath(root, path, 0) < 0 || (w = wide(path)) == NULL)
		return;
	delete_w(w);
	free(w);
}

int
rocmd_fs_symlink_in(const char *root, const char *target, const char *path)
{
	int rc = ROCMD_FAILPOINT("fs.symlink");
	char t[ROCMD_FS_PATH_MAX];
	wchar_t *wt = NULL, *wp = NULL;

	if (rc < 0 || (rc = win_beneath(root, path, 0)) < 0)
		return rc;
	/* The target stays relative: backslashes, no \\?\ prefix. */
	if (rocmd_fs_fmt(t, sizeof(t), "%s", target) >= (int)sizeof(t))
		return ROCMD_EINVAL;
	for (char *c = t; *c != '\0'; c++)
		if (*c == '/')
			*c = '\\';
	wt = rocmd_win_wide(t);
	wp = wide(path);
	if (wt == NULL || wp == NULL)
		rc = ROCMD_EINVAL;
	else if (!CreateSymbolicLinkW(wp, wt, SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE))
		rc = last_err();
	free(wt);
	free(wp);
	return rc;
}

int
rocmd_fs_link_in(const char *root, const char *from, const char *to)
{
	int rc = ROCMD_FAILPOINT("fs.link");
	wchar_t *wf, *wt;

	if (rc < 0 || (rc = win_beneath(root, from, 0)) < 0 || (rc = win_beneath(root, to, 0)) < 0)
		return rc;
	wf = wide(from);
	wt = wide(to);
	if (wf == NULL || wt == NULL)
		rc = ROCMD_EINVAL;
	else if (!CreateHardLinkW(wt, wf, NULL))
		rc = last_err();
	free(wf);
	free(wt);
	return rc;
}

int
rocmd_fs_set_writable_in(const char *root, const char *path, int writable)
{
	wchar_t *w;
	DWORD attr;
	int rc;

	if ((rc = win_beneath(root, path, 0)) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	attr = GetFileAttributesW(w);
	if (attr == INVALID_FILE_ATTRIBUTES)
		rc = last_err();
	else if (!SetFileAttributesW(w, writable ? attr & ~(DWORD)FILE_ATTRIBUTE_READONLY
	                                         : attr | FILE_ATTRIBUTE_READONLY))
		rc = last_err();
	free(w);
	return rc;
}

int
rocmd_fs_kind_in(const char *root, const char *path, uint64_t *size, int *exec)
{
	WIN32_FILE_ATTRIBUTE_DATA a;
	wchar_t *w;
	int rc;

	if ((rc = win_beneath(root, path, 1)) < 0)
		return rc == -ENOENT || rc == -ENOTDIR ? 0 : rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	if (!GetFileAttributesExW(w, GetFileExInfoStandard, &a)) {
		DWORD err = GetLastError();
		free(w);
		return err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ? 0 : err_of(err);
	}
	free(w);
	if (size != NULL)
		*size = ((uint64_t)a.nFileSizeHigh << 32) | a.nFileSizeLow;
	if (exec != NULL)
		*exec = 0;
	if (a.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
		rc = 'l';
	else if (a.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
		rc = 'd';
	else if (a.dwFileAttributes & FILE_ATTRIBUTE_DEVICE)
		rc = 'o';
	else
		rc = 'f';
	return rc;
}

int
rocmd_fs_id_of_in(const char *root, const char *path, struct rocmd_fs_id *id)
{
	BY_HANDLE_FILE_INFORMATION info;
	wchar_t *w;
	HANDLE h;
	int rc;

	id->dev = id->ino = 0;
	if ((rc = win_beneath(root, path, 1)) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	h = CreateFileW(w, FILE_READ_ATTRIBUTES,
	                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return GetLastError() == ERROR_FILE_NOT_FOUND ? -ENOENT : last_err();
	if (GetFileInformationByHandle(h, &info)) {
		id->dev = info.dwVolumeSerialNumber;
		id->ino = ((uint64_t)info.nFileIndexHigh << 32) | info.nFileIndexLow;
	} else {
		rc = last_err();
	}
	CloseHandle(h);
	return rc;
}

int
rocmd_fs_id_eq(const struct rocmd_fs_id *a, const struct rocmd_fs_id *b)
{
	return a->ino != 0 && a->dev == b->dev && a->ino == b->ino;
}

int
rocmd_fs_readlink_in(const char *root, const char *path, char *buf, size_t len)
{
	(void)root;
	(void)path;
	if (len > 0)
		buf[0] = '\0';
	return ROCMD_EUNSUPPORTED;
}

int
rocmd_fs_realpath(const char *path, char *out, size_t len)
{
	wchar_t *w = wide(path), final[ROCMD_FS_PATH_MAX];
	char *u8;
	HANDLE h;
	DWORD n;
	int rc;

	if (w == NULL)
		return ROCMD_EINVAL;
	/* Opened without FILE_FLAG_OPEN_REPARSE_POINT: links are resolved. */
	h = CreateFileW(w, FILE_READ_ATTRIBUTES,
	                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
	                FILE_FLAG_BACKUP_SEMANTICS, NULL);
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return last_err();
	n = GetFinalPathNameByHandleW(h, final, ROCMD_FS_PATH_MAX,
	                              FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	rc = n == 0 ? last_err() : n >= ROCMD_FS_PATH_MAX ? -ENAMETOOLONG : 0;
	CloseHandle(h);
	if (rc < 0)
		return rc;
	if ((u8 = rocmd_win_utf8(final)) == NULL)
		return ROCMD_ENOMEM;
	rc = rocmd_fs_path_norm(u8, out, len);
	free(u8);
	/* "C:" alone would be drive-relative. */
	if (rc == 0 && strlen(out) == 2 && out[1] == ':') {
		if (len < 4)
			return -ENAMETOOLONG;
		out[2] = '/';
		out[3] = '\0';
	}
	return rc;
}

static void
note_fail(struct rocmd_fs_fail *fail, const char *path, int rc)
{
	if (fail == NULL || fail->err != 0)
		return;
	fail->err = rc < 0 ? -rc : rc;
	rocmd_fs_fmt(fail->path, sizeof(fail->path), "%s", path);
}

/* Empties folder PATH depth-first; reparse points go as links. */
static int
remove_contents(const char *path, int depth, struct rocmd_fs_fail *fail)
{
	char pattern[ROCMD_FS_PATH_MAX + 4];
	WIN32_FIND_DATAW fd;
	wchar_t *w;
	HANDLE f;
	int rc = 0;

	if (rocmd_fs_fmt(pattern, sizeof(pattern), "%s/*", path) >= (int)sizeof(pattern))
		return -ENAMETOOLONG;
	if ((w = wide(pattern)) == NULL)
		return ROCMD_EINVAL;
	f = FindFirstFileW(w, &fd);
	free(w);
	if (f == INVALID_HANDLE_VALUE)
		return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : last_err();
	do {
		char child[ROCMD_FS_PATH_MAX], *name;
		wchar_t *wc;
		int r;

		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
			continue;
		if ((name = rocmd_win_utf8(fd.cFileName)) == NULL) {
			rc = ROCMD_EINVAL;
			break;
		}
		r = rocmd_fs_fmt(child, sizeof(child), "%s/%s", path, name);
		free(name);
		if (r >= (int)sizeof(child)) {
			rc = -ENAMETOOLONG;
			break;
		}
		if ((fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) &&
		    !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				break;
			}
			if ((rc = remove_contents(child, depth + 1, fail)) < 0)
				break;
			if ((rc = ROCMD_FAILPOINT("fs.unlink")) < 0)
				break;
			if ((wc = wide(child)) == NULL) {
				rc = ROCMD_EINVAL;
				break;
			}
			if (!RemoveDirectoryW(wc) && GetLastError() != ERROR_FILE_NOT_FOUND) {
				note_fail(fail, child, (int)GetLastError());
				rc = last_err();
			}
			free(wc);
		} else {
			if ((rc = ROCMD_FAILPOINT("fs.unlink")) < 0)
				break;
			if ((wc = wide(child)) == NULL) {
				rc = ROCMD_EINVAL;
				break;
			}
			if ((rc = delete_w(wc)) < 0)
				note_fail(fail, child, (int)GetLastError());
			free(wc);
		}
		if (rc < 0)
			break;
	} while (FindNextFileW(f, &fd));
	FindClose(f);
	return rc;
}

int
rocmd_fs_remove_tree_in(const char *root, const char *path, struct rocmd_fs_fail *fail)
{
	int kind, rc;
	wchar_t *w;

	if (fail != NULL)
		fail->err = 0;
	if ((kind = rocmd_fs_kind_in(root, path, NULL, NULL)) <= 0)
		return kind;
	if (kind != 'd') {
		if ((rc = rocmd_fs_unlink_in(root, path)) < 0)
			note_fail(fail, path, (int)GetLastError());
		return rc;
	}
	if ((rc = win_beneath(root, path, 0)) < 0)
		return rc;
	if ((rc = remove_contents(path, 0, fail)) < 0)
		return rc;
	if ((rc = ROCMD_FAILPOINT("fs.rmdir")) < 0)
		return rc;
	if ((w = wide(path)) == NULL)
		return ROCMD_EINVAL;
	if (!RemoveDirectoryW(w) && GetLastError() != ERROR_FILE_NOT_FOUND) {
		note_fail(fail, path, (int)GetLastError());
		rc = last_err();
	}
	free(w);
	return rc;
}

int
rocmd_fs_os_clone(int src, int dst)
{
	(void)src;
	(void)dst;
	return ROCMD_EUNSUPPORTED;
}

void
rocmd_fs_os_writeback(int fd, uint64_t off, uint64_t len)
{
	(void)fd;
	(void)off;
	(void)len;
}

int
rocmd_fs_os_fstat(int fd, uint64_t *size, int *regular)
{
	BY_HANDLE_FILE_INFORMATION info;

	if (!GetFileInformationByHandle(handle_of(fd), &info))
		return last_err();
	*size = ((uint64_t)info.nFileSizeHigh << 32) | info.nFileSizeLow;
	*regular =
	    !(info.dwFileAttributes &
	      (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DEVICE));
	return 0;
}

/* ---- walking a tree ---- */

static int
walk_dir(const char *dir, const char *prefix, const char *root, int depth, rocmd_fs_walk_fn add,
         void *ctx, char *why, size_t whylen)
{
	char pattern[ROCMD_FS_PATH_MAX + 4];
	WIN32_FIND_DATAW fd;
	wchar_t *w;
	HANDLE f;
	int rc = 0;

	if (rocmd_fs_fmt(pattern, sizeof(pattern), "%s/*", dir) >= (int)sizeof(pattern))
		return -ENAMETOOLONG;
	if ((w = wide(pattern)) == NULL)
		return ROCMD_EINVAL;
	f = FindFirstFileW(w, &fd);
	free(w);
	if (f == INVALID_HANDLE_VALUE) {
		if (GetLastError() == ERROR_FILE_NOT_FOUND)
			return 0;
		rc = last_err();
		rocmd_fs_fmt(why, whylen, "cannot open %s: %s", dir, rocmd_strerror(rc));
		return rc;
	}
	do {
		char rel[ROCMD_FS_PATH_MAX], sub[ROCMD_FS_PATH_MAX * 2], *name;
		DWORD a = fd.dwFileAttributes;
		int r;

		if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
			continue;
		if ((name = rocmd_win_utf8(fd.cFileName)) == NULL) {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen, "a name under %s is not valid UTF-16", root);
			break;
		}
		r = rocmd_fs_fmt(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", name);
		free(name);
		if (r >= (int)sizeof(rel)) {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen, "path too long under %s", root);
			break;
		}
		if (a & FILE_ATTRIBUTE_REPARSE_POINT) {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen,
			             "%s/%s is a reparse point (a symlink or a junction)", root,
			             rel);
			break;
		}
		if (a & FILE_ATTRIBUTE_DIRECTORY) {
			if (depth > 64) {
				rc = ROCMD_EUNSAFE;
				rocmd_fs_fmt(why, whylen, "%s/%s is nested too deep", root, rel);
				break;
			}
			if ((rc = add(ctx, rel, 'd', 0, 0, NULL)) < 0)
				break;
			rocmd_fs_fmt(sub, sizeof(sub), "%s/%s", root, rel);
			if ((rc = walk_dir(sub, rel, root, depth + 1, add, ctx, why, whylen)) < 0)
				break;
		} else if (a & FILE_ATTRIBUTE_DEVICE) {
			rc = ROCMD_EUNSAFE;
			rocmd_fs_fmt(why, whylen, "%s/%s is not a file or folder", root, rel);
			break;
		} else if ((rc = add(ctx, rel, 'f', 0,
		                     ((uint64_t)fd.nFileSizeHigh << 32) | fd.nFileSizeLow, NULL)) <
		           0) {
			break;
		}
	} while (FindNextFileW(f, &fd));
	FindClose(f);
	return rc;
}

int
rocmd_fs_os_walk_in(const char *root, const char *path, rocmd_fs_walk_fn add, void *ctx, char *why,
                    size_t whylen)
{
	int kind = rocmd_fs_kind_in(root, path, NULL, NULL);

	if (kind != 'd') {
		int rc = kind < 0 ? kind : kind == 0 ? -ENOENT : ROCMD_EUNSAFE;
		rocmd_fs_fmt(why, whylen, "cannot open %s: %s", path,
		             kind == 'l'             ? "a reparse point (symlink or junction)"
		             : kind == ROCMD_EUNSAFE ? "a folder on its way is a reparse point"
		                                     : rocmd_strerror(rc));
		return rc;
	}
	return walk_dir(path, "", path, 0, add, ctx, why, whylen);
}

/* ---- added for the package store (wpkg) ---- */

/* Opening ROOT/REL follows a junction or symlink in REL's folders (only the
 * last component is opened with FILE_FLAG_OPEN_REPARSE_POINT), so the file
 * opened must prove where it is: its final path is ROOT's final path plus
 * REL, compared as NTFS compares names (ordinal, case-insensitive). */
int
rocmd_fs_open_beneath(const char *root, const char *rel, int flags)
{
	char want[ROCMD_FS_PATH_MAX], got[ROCMD_FS_PATH_MAX], path[ROCMD_FS_PATH_MAX], *u8;
	wchar_t final[ROCMD_FS_PATH_MAX], *a = NULL, *b = NULL;
	size_t n;
	DWORD len;
	int fd, rc;

	if ((rc = rocmd_fs_realpath(root, want, sizeof(want))) < 0)
		return rc;
	n = strlen(want);
	if (rocmd_fs_fmt(want + n, sizeof(want) - n, "%s%s", n > 0 && want[n - 1] == '/' ? "" : "/",
	                 rel) >= (int)(sizeof(want) - n) ||
	    rocmd_fs_fmt(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = rocmd_fs_open(path, flags, 0)) < 0)
		return fd;
	len = GetFinalPathNameByHandleW(handle_of(fd), final, ROCMD_FS_PATH_MAX,
	                                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
	if (len == 0 || len >= ROCMD_FS_PATH_MAX) {
		rc = len == 0 ? last_err() : -ENAMETOOLONG;
	} else if ((u8 = rocmd_win_utf8(final)) == NULL) {
		rc = ROCMD_ENOMEM;
	} else {
		rc = rocmd_fs_path_norm(u8, got, sizeof(got));
		free(u8);
		if (rc == 0) {
			a = rocmd_win_wide(want);
			b = rocmd_win_wide(got);
			rc = a == NULL || b == NULL ? ROCMD_ENOMEM
			     : CompareStringOrdinal(a, -1, b, -1, TRUE) == CSTR_EQUAL
			         ? 0
			         : ROCMD_EUNSAFE;
			free(a);
			free(b);
		}
	}
	if (rc < 0) {
		rocmd_fs_close(fd);
		return rc;
	}
	return fd;
}

/* ---- swapping folders, removing what a process may have loaded ---- */

int
rocmd_fs_exchange_in(const char *root, const char *a, const char *b)
{
	/* The failpoint as on POSIX: a fault here is a swap that failed before
	 * either rename (a file in use is EBUSY). */
	int rc = ROCMD_FAILPOINT("deploy.exchange");

	(void)root;
	(void)a;
	(void)b;
	return rc < 0 ? rc : ROCMD_EUNSUPPORTED;
}

int
rocmd_fs_remove_loaded_in(const char *root, const char *path)
{
	char later[ROCMD_FS_PATH_MAX + 64];
	wchar_t *w;
	int rc = rocmd_fs_unlink_in(root, path);

	/* Deleting a loaded DLL is refused with access denied. */
	if (rc != ROCMD_EPERM && rc != ROCMD_EBUSY)
		return rc;
	rocmd_fs_fmt(later, sizeof(later), "%s.%lu-%lu.del", path,
	             (unsigned long)GetCurrentProcessId(), (unsigned long)GetTickCount());
	if ((rc = rocmd_fs_rename_in(root, path, later)) < 0)
		return rc;
	for (char *c = later; *c != '\0'; c++)
		if (*c == '/')
			*c = '\\';
	if ((w = rocmd_win_wide(later)) != NULL)
		MoveFileExW(w, NULL, MOVEFILE_DELAY_UNTIL_REBOOT);
	free(w);
	return 0;
}

/* ---- reading what others installed ---- */

/* FILETIME (100 ns since 1601) as ns since 1970. */
static int64_t
ft_ns(FILETIME ft)
{
	int64_t t = (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);

	return (t - 116444736000000000LL) * 100;
}

/* A Win32 error as -errno, the readers' contract (rocmd_fsinfo_get). */
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

/* FindFirstFileW on PATH/"*": the handle, or INVALID_HANDLE_VALUE with the
 * Win32 error in *ERR. */
static HANDLE
find_first(const char *path, WIN32_FIND_DATAW *fd, DWORD *err)
{
	char pattern[ROCMD_FS_PATH_MAX];
	wchar_t *w;
	HANDLE h;

	if (rocmd_fs_fmt(pattern, sizeof(pattern), "%s/*", path) >= (int)sizeof(pattern)) {
		*err = ERROR_FILENAME_EXCED_RANGE;
		return INVALID_HANDLE_VALUE;
	}
	if ((w = rocmd_win_wide(pattern)) == NULL) {
		*err = ERROR_NOT_ENOUGH_MEMORY;
		return INVALID_HANDLE_VALUE;
	}
	h = FindFirstFileW(w, fd);
	*err = GetLastError();
	free(w);
	return h;
}

struct rocmd_dir *
rocmd_dir_open(const char *path)
{
	struct rocmd_dir *d = calloc(1, sizeof(*d));
	DWORD err;

	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	d->h = find_first(path, &d->fd, &err);
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
	WIN32_FIND_DATAW fd;
	DWORD err;
	HANDLE h = find_first(path, &fd, &err);

	if (h == INVALID_HANDLE_VALUE)
		return err == ERROR_FILE_NOT_FOUND ? 0 : errno_of(err);
	FindClose(h);
	return 0;
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
	(void)len;
	if (data != NULL)
		UnmapViewOfFile(data);
}
