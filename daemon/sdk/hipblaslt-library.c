/*
 * Where hipBLASLt looks for its kernel library, by its own loader
 * (hipBLASLt's library/src/amd_detail/rocblaslt/src/tensile_host.cpp,
 * TensileHost::initialize): HIPBLASLT_TENSILE_LIBPATH, else the folder of
 * libhipblaslt plus ../Tensile/library or hipblaslt/library. The folder is
 * read like rocBLAS's (rocblas-library.c, with ROCMD_ROCBLAS_ARCH_SUBDIRS):
 * the same Tensile index and code objects. docs/LAYOUTS.md lists the layouts.
 */
#include "rocblas-library.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "common/fs.h"

static int
is_dir(const char *path)
{
	struct rocmd_fsinfo st;

	return rocmd_fsinfo_get(path, 1, &st) == 0 && st.type == ROCMD_FS_DIR;
}

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

int
rocmd_hipblaslt_locate(const char *binary_dir, int windows, const char *env_libpath, char *out,
                       size_t outlen)
{
	static const char *const rel[] = {"../Tensile/library", "hipblaslt/library"};
	char path[PATH_MAX];

	if (outlen > 0)
		out[0] = '\0';
	if (env_libpath != NULL && env_libpath[0] != '\0') {
		if (!is_dir(env_libpath))
			return ROCMD_ENOTFOUND;
		snprintf(out, outlen, "%s", env_libpath);
		return 0;
	}
	if (binary_dir == NULL || !has_binary(binary_dir, windows))
		return ROCMD_ENOTFOUND;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", binary_dir, rel[i]);
		if (is_dir(path)) {
			snprintf(out, outlen, "%s", path);
			return 0;
		}
	}
	return ROCMD_ENOTFOUND;
}
