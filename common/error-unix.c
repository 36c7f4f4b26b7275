/*
 * The platform part of the error table on glibc: errno values are named by
 * the C library itself (strerrorname_np, glibc 2.32+).
 */
#include "error.h"

#include <string.h>

const char *
rocmd_err_errno_name(int errnum)
{
	return strerrorname_np(errnum);
}
