/*
 * Fuzz target for SDK discovery's parsers of files found on disk: HIP version
 * files (HIP_VERSION_* lines), version strings, folder names, Debian changelog
 * heads, registry exports (.reg), a TensileLibrary.dat (MessagePack), AMD
 * code-object ELF headers, TheRock's .kpack archives and release names, and a
 * rocBLAS binary's clang offload bundles. The first byte picks the parser; the
 * rest is the file. Every parser must return a code and bounded text, never
 * crash, leak or read out of bounds. Parsers that read files get the input
 * through a file in a private temporary folder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/amdgpu-elf.h"
#include "common/error.h"
#include "daemon/sdk/registry.h"
#include "daemon/sdk/rocblas-library.h"
#include "daemon/sdk/runtime-discover.h"
#include "daemon/sdk/sdk-version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static int
write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL)
		return -1;
	if (size > 0 && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static void
cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/registry/HKLM.reg", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/registry", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/TensileLibrary.dat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/a.kpack", dir);
	unlink(path);
	rmdir(dir);
}

static int
on_key(const char *key, const char *install_dir, void *ctx)
{
	/* Strings must be terminated and bounded. */
	if (strlen(key) > 4096 || (install_dir != NULL && strlen(install_dir) > 4096))
		abort();
	(*(int *)ctx)++;
	return 0;
}

static int
on_env(const char *name, const char *value, void *ctx)
{
	if (strlen(name) > 4096 || strlen(value) > 4096)
		abort();
	(*(int *)ctx)++;
	return 0;
}

static void
check_version(int rc, const char *v)
{
	if (rc == 0 && (v[0] < '0' || v[0] > '9'))
		abort();
	if (rc != 0 && rc != ROCMD_EINVAL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char v[ROCMD_VERSION_MAX], path[128], *text;
	uint8_t which;

	if (size < 1)
		return 0;
	which = data[0] % 9;
	data++;
	size--;
	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/rocmd-fuzz-sdk.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		atexit(cleanup);
		snprintf(path, sizeof(path), "%s/registry", dir);
		mkdir(path, 0700);
	}
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	switch (which) {
	case 0:
		check_version(rocmd_version_parse_hip_lines(text, v, sizeof(v)), v);
		break;
	case 1:
		check_version(rocmd_version_normalize(text, size & 1, v, sizeof(v)), v);
		check_version(rocmd_version_from_folder(text, v, sizeof(v)), v);
		if (rocmd_version_normalize(text, 0, v, sizeof(v)) == 0 &&
		    !rocmd_version_agree(v, v))
			abort();
		break;
	case 2:
		check_version(rocmd_version_from_changelog(text, v, sizeof(v)), v);
		break;
	case 3: {
		int n = 0;
		snprintf(path, sizeof(path), "%s/registry/HKLM.reg", dir);
		if (write_file(path, data, size) == 0) {
			rocmd_registry_rocm_installs(dir, on_key, &n);
			rocmd_registry_machine_env(dir, on_env, &n);
		}
		break;
	}
	case 4: {
		char **archs = NULL, why[512];
		size_t n = 0;
		snprintf(path, sizeof(path), "%s/TensileLibrary.dat", dir);
		if (write_file(path, data, size) == 0 &&
		    rocmd_rocblas_dat_archs(path, &archs, &n, why, sizeof(why)) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (strncmp(archs[i], "gfx", 3) != 0)
					abort();
				free(archs[i]);
			}
			free(archs);
		}
		break;
	}
	case 6: {
		char *archs = NULL, why[256];
		snprintf(path, sizeof(path), "%s/a.kpack", dir);
		if (write_file(path, data, size) == 0 &&
		    rocmd_kpack_archs(path, &archs, why, sizeof(why)) == 0) {
			for (const char *p = archs; p != NULL && *p != '\0';) {
				if (strncmp(p, "gfx", 3) != 0)
					abort();
				p = strchr(p, '\n');
				p = p != NULL ? p + 1 : NULL;
			}
		}
		free(archs);
		break;
	}
	case 7: {
		char rel[64];
		int rc = rocmd_version_release(text, v, sizeof(v), rel, sizeof(rel));
		check_version(rc, v);
		if (rc == 0 && (rel[0] == '\0' || strlen(rel) >= sizeof(rel)))
			abort();
		break;
	}
	case 8: {
		/* A rocBLAS binary's offload bundles (the merged library's check). */
		char **archs = NULL, why[512];
		size_t n = 0;
		snprintf(path, sizeof(path), "%s/librocblas.so.0", dir);
		if (write_file(path, data, size) == 0 &&
		    rocmd_rocblas_binary_archs(path, &archs, &n, why, sizeof(why)) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (strncmp(archs[i], "gfx", 3) != 0)
					abort();
				free(archs[i]);
			}
			free(archs);
		}
		break;
	}
	default: {
		char arch[ROCMD_GFX_MAX];
		int rc = rocmd_amdgpu_elf_arch(data, size, arch, sizeof(arch));
		if (rc == 0 && strncmp(arch, "gfx", 3) != 0)
			abort();
		break;
	}
	}
	free(text);
	return 0;
}
