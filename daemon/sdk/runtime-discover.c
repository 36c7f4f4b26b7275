/*
 * Discovery of ROCm runtimes outside SDK installs: see runtime-discover.h.
 * This file enumerates the places (every home folder, sdk.runtime_roots) and
 * hands each to the rules of runtime-python.c and runtime-apps.c; TheRock
 * tarballs come through the SDK candidates (runtime-therock.c).
 */
#include "runtime-discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/text.h"

#define JSON_FILE_MAX (1024 * 1024)
#define MAX_HOMES 64

/* The home folders of the machine, as system paths: /root and each of /home on
 * Linux, of C:\Users on Windows (less the profiles nobody logs into). */
static size_t
list_homes(struct rocmd_disc *s, char **homes, size_t max)
{
	static const char *const skip[] = {"Public", "Default", "Default User", "All Users", NULL};
	const char *base = s->o->windows ? "C:\\Users" : "/home";
	char h[PATH_MAX], sys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;
	size_t n = 0;

	if (!s->o->windows && rocmd_disc_host(s, "/root", NULL, h, sizeof(h)) == 0 &&
	    rocmd_disc_is_dir(h) && (homes[n] = strdup("/root")) != NULL)
		n++;
	if (rocmd_disc_host(s, base, NULL, h, sizeof(h)) < 0 || (d = rocmd_dir_open(h)) == NULL)
		return n;
	while (n < max && (de = rocmd_dir_read(d)) != NULL) {
		int skipped = de->d_name[0] == '.';
		for (size_t i = 0; skip[i] != NULL && !skipped; i++)
			skipped = strcasecmp(skip[i], de->d_name) == 0;
		if (skipped)
			continue;
		rocmd_disc_join(base, de->d_name, sys, sizeof(sys));
		if ((homes[n] = strdup(sys)) != NULL)
			n++;
	}
	rocmd_dir_close(d);
	return n;
}

/* Looks at host folder H (system path SYS) and below, DEPTH levels more. */
static void
walk_root(struct rocmd_disc *s, const char *h, const char *sys, int depth, size_t *budget)
{
	char ch[PATH_MAX], csys[PATH_MAX];
	struct rocmd_dirent *de;
	struct rocmd_dir *d;

	if (*budget == 0)
		return;
	(*budget)--;
	rocmd_pathf(ch, sizeof(ch), "%s/pyvenv.cfg", h);
	if (rocmd_disc_exists(ch)) {
		rocmd_python_env(s, sys, "sdk.runtime_roots");
		return;
	}
	rocmd_pathf(ch, sizeof(ch), "%s/conda-meta", h);
	if (rocmd_disc_is_dir(ch)) {
		rocmd_python_env(s, sys, "sdk.runtime_roots");
		/* A conda base environment holds the others under envs/. */
	}
	if (rocmd_apps_llamacpp(s, sys) || depth == 0 || (d = rocmd_dir_open(h)) == NULL)
		return;
	while ((de = rocmd_dir_read(d)) != NULL) {
		struct rocmd_fsinfo st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		rocmd_pathf(ch, sizeof(ch), "%s/%s", h, de->d_name);
		/* No following symlinks: a link may lead anywhere, the whole disk included. */
		if (rocmd_fsinfo_get(ch, 0, &st) < 0 || st.type != ROCMD_FS_DIR)
			continue;
		rocmd_disc_join(sys, de->d_name, csys, sizeof(csys));
		walk_root(s, ch, csys, depth - 1, budget);
	}
	rocmd_dir_close(d);
}

void
rocmd_runtime_discover(struct rocmd_disc *s)
{
	char *homes[MAX_HOMES + 1] = {0};
	size_t nhomes = list_homes(s, homes, MAX_HOMES);

	rocmd_python_discover(s, homes);
	rocmd_apps_discover(s, homes);
	for (size_t i = 0; s->o->runtime_roots != NULL && s->o->runtime_roots[i] != NULL; i++) {
		const char *r = s->o->runtime_roots[i];
		char h[PATH_MAX];
		size_t budget = ROCMD_RUNTIME_ROOT_DIRS;
		struct rocmd_fsinfo st;
		if (rocmd_disc_host(s, r, NULL, h, sizeof(h)) < 0 ||
		    rocmd_fsinfo_get(h, 0, &st) < 0 || st.type != ROCMD_FS_DIR) {
			rocmd_text_addf(&s->out->problems,
			                "%s (from sdk.runtime_roots): not found or not a folder",
			                r);
			continue;
		}
		rocmd_disc_watch(s, r);
		walk_root(s, h, r, ROCMD_RUNTIME_ROOT_DEPTH, &budget);
		if (budget == 0)
			rocmd_text_addf(
			    &s->out->problems,
			    "%s (from sdk.runtime_roots): more than %d folders; the rest "
			    "was not searched",
			    r, ROCMD_RUNTIME_ROOT_DIRS);
	}
	for (size_t i = 0; i < nhomes; i++)
		free(homes[i]);
}

int
rocmd_disc_real_below(const struct rocmd_disc *s, const char *top, const char *sys)
{
	size_t n = strlen(top), end;
	char part[PATH_MAX], h[PATH_MAX];

	if (strncmp(sys, top, n) != 0 || strlen(sys) >= sizeof(part))
		return 0;
	for (end = n; sys[end] != '\0';) {
		struct rocmd_fsinfo st;
		end++;
		end += strcspn(sys + end, "/\\");
		memcpy(part, sys, end);
		part[end] = '\0';
		if (rocmd_disc_host(s, part, NULL, h, sizeof(h)) < 0 ||
		    rocmd_fsinfo_get(h, 0, &st) < 0 || st.type != ROCMD_FS_DIR)
			return 0;
	}
	return 1;
}

/* Never through a link nor waiting on a FIFO (rocmd_fs_read_file). */
cJSON *
rocmd_runtime_read_json(const char *h)
{
	char *buf = NULL;
	cJSON *j;

	if (rocmd_fs_read_file(h, JSON_FILE_MAX, &buf, NULL) < 0)
		return NULL;
	j = cJSON_Parse(buf);
	free(buf);
	return j;
}

/* Lines of TEXT as a JSON array; SEPS split further ("gfx1100;gfx1103"). */
static cJSON *
split(const char *text, const char *seps)
{
	cJSON *a = cJSON_CreateArray();

	for (const char *p = text; p != NULL && *p != '\0';) {
		size_t n = strcspn(p, seps);
		if (n > 0) {
			char *item = strndup(p, n);
			if (item != NULL)
				cJSON_AddItemToArray(a, cJSON_CreateString(item));
			free(item);
		}
		p += n;
		if (*p != '\0')
			p++;
	}
	return a;
}

void
rocmd_runtime_to_json(const struct rocmd_sdk_found *f, cJSON *o)
{
	if (f->release[0] != '\0') {
		cJSON *r = cJSON_AddObjectToObject(o, "release");
		cJSON_AddStringToObject(r, "name", f->release);
		if (f->release_from != NULL)
			cJSON_AddStringToObject(r, "from", f->release_from);
	}
	if (f->owner != NULL) {
		cJSON *w = cJSON_AddObjectToObject(o, "owner");
		cJSON_AddStringToObject(w, "by", f->owner);
		if (f->owner_record != NULL)
			cJSON_AddStringToObject(w, "record", f->owner_record);
	}
	if (f->built_for != NULL)
		cJSON_AddItemToObject(o, "built_for", split(f->built_for, "; ,\t\n"));
	if (strcmp(f->layout, "therock") == 0) {
		cJSON_AddNumberToObject(o, "kpack_archives", f->nkpack);
		cJSON_AddItemToObject(o, "kpack_archs", split(f->kpack_archs, "\n"));
	}
	if (f->hipblaslt_dir != NULL)
		cJSON_AddStringToObject(o, "hipblaslt_dir", f->hipblaslt_dir);
	if (f->packages != NULL)
		cJSON_AddItemToObject(o, "packages", split(f->packages, "\n"));
}
