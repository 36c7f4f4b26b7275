/*
 * rocmd-hip-probe: loads one HIP runtime (argv[1]: libamdhip64.so.N, or on
 * Windows an SDK's bin\amdhip64*.dll) through dl.h and prints what it sees,
 * for gpu-hip.c. A separate program so that a runtime that crashes, hangs or
 * aborts takes only this process down. Output lines:
 *   count N                      hipGetDeviceCount succeeded
 *   driver V, runtime V          hipDriverGetVersion, hipRuntimeGetVersion
 *   device I <arch>\t<name>\t<CUs>   per device, from hipGetDeviceProperties and
 *                                hipDeviceGetAttribute(MultiprocessorCount)
 *   error <text>                 why nothing more could be said
 * Exit status 0 when the runtime answered (zero devices included), 1 otherwise.
 * "rocmd-hip-probe --adapters" lists the display adapters instead, for a
 * machine without any HIP runtime (adapters.h).
 * The arch comes out of hipDeviceProp_t as common/hip-runtime.h reads it.
 */
#include <stdio.h>
#include <string.h>

#include "adapters.h"
#include "common/dl.h"
#include "common/hip-runtime.h"

typedef int (*count_fn)(int *);
typedef int (*props_fn)(void *, int);
typedef const char *(*errstr_fn)(int);
typedef int (*version_fn)(int *);
typedef int (*attr_fn)(int *, int, int);

/* Prints "WHAT V" when the runtime has SYMBOL and it answers. */
static void
print_version(void *h, const char *symbol, const char *what)
{
	version_fn f = (version_fn)rocmd_dl_sym(h, symbol);
	int v = 0;

	if (f != NULL && f(&v) == 0 && v > 0)
		printf("%s %d\n", what, v);
}

int
main(int argc, char **argv)
{
	static unsigned char props[ROCMD_HIP_PROPS_BUF];
	count_fn get_count;
	props_fn get_props;
	errstr_fn errstr;
	attr_fn get_attr;
	char why[1024];
	const char *path;
	void *h;
	int n = 0, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: rocmd-hip-probe LIBAMDHIP64 | --adapters\n");
		return 2;
	}
	if (strcmp(argv[1], "--adapters") == 0)
		return rocmd_probe_adapters();
	path = rocmd_dl_arg(argv, 1);
	h = rocmd_dl_open(path, why, sizeof(why));
	if (h == NULL) {
		printf("error not loadable: %s\n", why);
		return 1;
	}
	get_count = (count_fn)rocmd_dl_sym(h, "hipGetDeviceCount");
	get_props = (props_fn)rocmd_dl_sym(h, "hipGetDevicePropertiesR0600");
	if (get_props == NULL)
		get_props = (props_fn)rocmd_dl_sym(h, "hipGetDeviceProperties");
	errstr = (errstr_fn)rocmd_dl_sym(h, "hipGetErrorString");
	if (get_count == NULL || get_props == NULL) {
		printf("error %s has no hipGetDeviceCount/hipGetDeviceProperties\n", path);
		return 1;
	}
	rc = get_count(&n);
	if (rc != 0) {
		/* hipErrorNoDevice (100) is the normal answer of a machine without a GPU. */
		if (rc == 100) {
			printf("count 0\n");
			return 0;
		}
		printf("error hipGetDeviceCount failed: %s (%d)\n",
		       errstr != NULL ? errstr(rc) : "?", rc);
		return 1;
	}
	printf("count %d\n", n);
	print_version(h, "hipDriverGetVersion", "driver");
	print_version(h, "hipRuntimeGetVersion", "runtime");
	get_attr = (attr_fn)rocmd_dl_sym(h, "hipDeviceGetAttribute");
	for (int i = 0; i < n && i < 64; i++) {
		int cus = 0;

		memset(props, 0, sizeof(props));
		if (get_props(props, i) != 0)
			continue;
		props[255] = '\0';
		if (get_attr == NULL || get_attr(&cus, ROCMD_HIP_ATTR_MULTIPROCESSOR_COUNT, i) != 0)
			cus = 0;
		printf("device %d %s\t%s\t%d\n", i, rocmd_hip_props_arch(props, sizeof(props)),
		       (char *)props, cus);
	}
	fflush(stdout);
	return 0;
}
