/*
 * A stand-in HIP runtime for testing rocmd-rocblas-smoke without an AMD GPU:
 * "device" memory is host memory, copies are memcpy, one device is reported
 * (none when ROCMD_FAKE_HIP_DEVICES=0). Only the entry points the smoke test
 * uses exist. The real smoke test against a real GPU was never run here.
 */
#include <stdlib.h>
#include <string.h>

int hipGetDeviceCount(int *n);
int hipMalloc(void **p, size_t n);
int hipFree(void *p);
int hipMemcpy(void *dst, const void *src, size_t n, int kind);
int hipDeviceSynchronize(void);

int
hipGetDeviceCount(int *n)
{
	const char *e = getenv("ROCMD_FAKE_HIP_DEVICES");

	*n = e != NULL ? atoi(e) : 1;
	return *n > 0 ? 0 : 100; /* hipErrorNoDevice */
}

int
hipMalloc(void **p, size_t n)
{
	*p = malloc(n);
	return *p != NULL ? 0 : 2;
}

int
hipFree(void *p)
{
	free(p);
	return 0;
}

int
hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
	memcpy(dst, src, n);
	return 0;
}

int
hipDeviceSynchronize(void)
{
	return 0;
}
