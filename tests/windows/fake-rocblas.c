/*
 * A stand-in for an SDK's bin\rocblas.dll in the Windows tests under wine:
 * a real PE DLL (SDK discovery records the file; deploying will rename it
 * aside and back), with rocBLAS's version query so it is recognisably one.
 */
#include <stdio.h>

#define EXPORT __declspec(dllexport)

EXPORT int rocblas_get_version_string(char *buf, size_t len);

EXPORT int
rocblas_get_version_string(char *buf, size_t len)
{
	if (buf == NULL || len < 16)
		return 3; /* rocblas_status_invalid_pointer / size */
	snprintf(buf, len, "4.2.0-stand-in");
	return 0;
}
