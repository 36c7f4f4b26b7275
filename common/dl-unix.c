/*
 * Loading a library with dlopen: see dl.h.
 */
#include "dl.h"

#include <dlfcn.h>
#include <link.h>
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

void
rocmd_dl_close(void *h)
{
	if (h != NULL)
		dlclose(h);
}

void
rocmd_dl_path(void *h, char *out, size_t len)
{
	struct link_map *lm = NULL;

	if (len == 0)
		return;
	out[0] = '\0';
	if (h != NULL && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name != NULL)
		snprintf(out, len, "%s", lm->l_name);
}

int
rocmd_dl_system_dir(char *out, size_t len)
{
	if (len > 0)
		out[0] = '\0';
	return -1;
}
