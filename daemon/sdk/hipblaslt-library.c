/*
 * Where hipBLASLt looks for its kernel library, by its own loader
 * (hipBLASLt's library/src/amd_detail/rocblaslt/src/tensile_host.cpp,
 * TensileHost::initialize): HIPBLASLT_TENSILE_LIBPATH, else the folder of
 * libhipblaslt plus ../Tensile/library or hipblaslt/library. The folder is
 * read like rocBLAS's (rocblas-library.c, with ROCMD_ROCBLAS_ARCH_SUBDIRS):
 * the same Tensile index and code objects. docs/LAYOUTS.md lists the layouts.
 */
#include "rocblas-library.h"

#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "common/fs.h"

/* Whether DIR holds hipBLASLt's binary. */
static int
has_binary(const char *dir, int windows)
{
	struct rocmd_dir *d = rocmd_dir_open(dir);
	struct rocmd_dirent *de;
	int found = 0;

	while (d != NULL && !found && (de = rocmd_dir_read(d)) != NULL) {
		const char *n = de->d_name;
		if (windows)
			found = strcasecmp(n, "hipblaslt.dll") == 0 ||
			        strcasecmp(n, "libhipblaslt.dll") == 0;
		else
			found = strcmp(n, "libhipblaslt.so") == 0 ||
			        strncmp(n, "libhipblaslt.so.", 16) == 0;
	}
	if (d != NULL)
		rocmd_dir_close(d);
	return found;
}

const char *const rocmd_hipblaslt_rel[ROCMD_HIPBLASLT_NREL] = {"../Tensile/library",
                                                               "hipblaslt/library"};

int
rocmd_hipblaslt_locate(const char *binary_dir, int windows, const char *env_libpath, char *out,
                       size_t outlen)
{
	int by_env = env_libpath != NULL && env_libpath[0] != '\0';

	/* Without the variable the folders count only beside hipBLASLt's binary. */
	if (!by_env && (binary_dir == NULL || !has_binary(binary_dir, windows)))
		binary_dir = NULL;
	return rocmd_tensile_locate(binary_dir, env_libpath, rocmd_hipblaslt_rel,
	                            ROCMD_HIPBLASLT_NREL, out, outlen);
}
