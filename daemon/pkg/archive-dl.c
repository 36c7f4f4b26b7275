/*
 * Run-time loading of libarchive: see archive-dl.h. The library's soname is
 * the one the build was configured against (ROCMD_LIBARCHIVE_SONAME), so the
 * prototypes in archive.h match what is loaded.
 */
#include "archive-dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "common/error.h"
#include "common/log.h"

#ifndef ROCMD_LIBARCHIVE_SONAME
#define ROCMD_LIBARCHIVE_SONAME "libarchive.so.13"
#endif

#define ROCMD_ARCHIVE_DEFINE(name) __typeof__(name) *sym_##name;
ROCMD_ARCHIVE_SYMBOLS(ROCMD_ARCHIVE_DEFINE)
#undef ROCMD_ARCHIVE_DEFINE

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_why[256];

static void
load(void)
{
	void *h = dlopen(ROCMD_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(load_why, sizeof(load_why), "cannot load %s: %s", ROCMD_LIBARCHIVE_SONAME,
			 dlerror());
		load_rc = ROCMD_EUNSUPPORTED;
		return;
	}
#define ROCMD_ARCHIVE_RESOLVE(name)                                                                \
	if (load_rc == 0 && (sym_##name = (__typeof__(name) *)dlsym(h, #name)) == NULL) {         \
		snprintf(load_why, sizeof(load_why), "%s lacks %s", ROCMD_LIBARCHIVE_SONAME,       \
			 #name);                                                                   \
		load_rc = ROCMD_EUNSUPPORTED;                                                      \
	}
	ROCMD_ARCHIVE_SYMBOLS(ROCMD_ARCHIVE_RESOLVE)
#undef ROCMD_ARCHIVE_RESOLVE
	if (load_rc == 0)
		log_debug("loaded %s", ROCMD_LIBARCHIVE_SONAME);
}

int
rocmd_archive_dl_load(char *why, size_t whylen)
{
	pthread_once(&load_once, load);
	if (load_rc < 0 && why != NULL)
		snprintf(why, whylen, "%s", load_why);
	return load_rc;
}

int
rocmd_archive_open_file(struct archive *a, const char *path, int fd, size_t block)
{
	(void)path;
	return sym_archive_read_open_fd(a, fd, block);
}
