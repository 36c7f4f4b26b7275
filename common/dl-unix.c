/*
 * Loading a library with dlopen: see dl.h.
 */
#include "dl.h"

#include <dlfcn.h>
#include <stdio.h>

void *
rocmd_dl_open(const char *path, char *why, size_t whylen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL)
		snprintf(why, whylen, "%s", dlerror());
	return h;
}

void *
rocmd_dl_sym(void *h, const char *name)
{
	return dlsym(h, name);
}

const char *
rocmd_dl_arg(char **argv, int i)
{
	return argv[i];
}
