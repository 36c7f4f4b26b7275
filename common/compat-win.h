/*
 * POSIX names the Windows C runtime lacks, force-included into every file of
 * the Windows build (CMakeLists.txt, -include) so shared code needs no
 * #ifdef. On Windows the "uid" of a peer carries its process id and the "gid"
 * whether its token is in Administrators (see daemon/core/ipc-win.c).
 */
#ifndef ROCMD_COMPAT_WIN_H
#define ROCMD_COMPAT_WIN_H

#ifdef _WIN32
#include <limits.h>
#include <stdlib.h>

typedef unsigned int uid_t;
typedef unsigned int gid_t;

/* realpath(3) for callers that pass a PATH_MAX buffer: the CRT's _fullpath
 * makes the path absolute (it does not resolve links, which Windows SDK
 * folders do not use). */
#define realpath(path, resolved) _fullpath((resolved), (path), PATH_MAX)

/* strndup(3): mingw-w64's C runtime has no strndup. */
#include <string.h>
static inline char *
rocmd_compat_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = malloc(len + 1);

	if (d != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}
#define strndup rocmd_compat_strndup

/* setenv(3) over _putenv_s, which also sets the process's Win32 environment
 * (what a DLL's own C runtime reads when it starts). */
static inline int
rocmd_compat_setenv(const char *name, const char *value, int overwrite)
{
	if (!overwrite && getenv(name) != NULL)
		return 0;
	return _putenv_s(name, value) == 0 ? 0 : -1;
}
#define setenv rocmd_compat_setenv

/* unsetenv(3): _putenv_s with an empty value removes the variable. */
static inline int
rocmd_compat_unsetenv(const char *name)
{
	return _putenv_s(name, "") == 0 ? 0 : -1;
}
#define unsetenv rocmd_compat_unsetenv
#endif

#endif
