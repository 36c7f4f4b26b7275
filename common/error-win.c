/*
 * The platform part of the error table on Windows: the C runtime has no
 * strerrorname_np, so the errno values rocmd can meet (the CRT's and the
 * POSIX-supplement ones that mingw-w64 defines) are named from a table.
 */
#include "error.h"

#include <errno.h>
#include <stddef.h>

struct errno_name {
	int value;
	const char *name;
};

#define NAME(e) {e, #e}

static const struct errno_name names[] = {
	NAME(EPERM),	   NAME(ENOENT),       NAME(ESRCH),	  NAME(EINTR),
	NAME(EIO),	   NAME(ENXIO),	       NAME(E2BIG),	  NAME(ENOEXEC),
	NAME(EBADF),	   NAME(ECHILD),       NAME(EAGAIN),	  NAME(ENOMEM),
	NAME(EACCES),	   NAME(EFAULT),       NAME(EBUSY),	  NAME(EEXIST),
	NAME(EXDEV),	   NAME(ENODEV),       NAME(ENOTDIR),	  NAME(EISDIR),
	NAME(EINVAL),	   NAME(ENFILE),       NAME(EMFILE),	  NAME(ENOTTY),
	NAME(EFBIG),	   NAME(ENOSPC),       NAME(ESPIPE),	  NAME(EROFS),
	NAME(EMLINK),	   NAME(EPIPE),	       NAME(EDOM),	  NAME(ERANGE),
	NAME(EDEADLK),	   NAME(ENAMETOOLONG), NAME(ENOLCK),	  NAME(ENOSYS),
	NAME(ENOTEMPTY),   NAME(EILSEQ),       NAME(EADDRINUSE),  NAME(ECONNREFUSED),
	NAME(ECONNRESET),  NAME(ETIMEDOUT),    NAME(ENOTSUP),	  NAME(ECANCELED),
	NAME(ELOOP),	   NAME(EOVERFLOW),    NAME(EWOULDBLOCK), NAME(EOPNOTSUPP),
};

const char *
rocmd_err_errno_name(int errnum)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].value == errnum)
			return names[i].name;
	return NULL;
}
