/*
 * lib deploy --dry-run: what a deploy would change, and nothing changed. The
 * job has been prepared as for a deploy (the package chosen or named, every
 * check passed, its file list built); here its files are compared with what
 * the target holds: what rocmd put there last (current.json, with hashes),
 * else the folder's names and sizes (metadata only: a file of the same name
 * is counted as replaced). Each file is added, replaced, kept (same content)
 * or removed; each GPU's arch is served before and after, from discovery's
 * archs of the library in place and the package's (with the archs a merged
 * library keeps); each file says where it comes from, the package or the
 * library in place (deploy-merge.c). Loop thread.
 */
#include "deploy-jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "daemon/core/server.h"
#include "db/db-pkg.h"

static int
pkg_archs(const struct rocmd_db_pkg *p, void *arg)
{
	deploy_copy(arg, 512, p->archs);
	return 0;
}

/* What the target holds as a sorted file list; HASHED 0 when only names
 * and sizes are known. */
static int
current_files(struct deploy_job *j, struct rocmd_deploy_files *cur, int *hashed)
{
	char why[256];
	struct rocmd_fs_entry *e = NULL;
	size_t n = 0, k = 0;

	*hashed = 1;
	if (rocmd_deploy_current_load(j->ds->srv->cfg->state_dir, j->t.name, cur, why,
	                              sizeof(why)) == 0)
		return 0;
	*hashed = 0;
	memset(cur, 0, sizeof(*cur));
	if (!deploy_exists(j->t.host_lib) ||
	    rocmd_fs_walk_in(NULL, j->t.host_lib, 0, &e, &n, why, sizeof(why)) < 0)
		return 0; /* nothing there yet */
	cur->files = calloc(n + 1, sizeof(*cur->files));
	if (cur->files == NULL) {
		rocmd_fs_entries_free(e, n);
		return ROCMD_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].kind == 'd')
			continue;
		cur->files[k].path = strdup(e[i].path);
		cur->files[k].size = e[i].size;
		cur->files[k].kind = e[i].kind == 'l' ? ROCMD_DEPLOY_SYMLINK : ROCMD_DEPLOY_FILE;
		if (cur->files[k].path != NULL)
			k++;
	}
	cur->n = k;
	rocmd_fs_entries_free(e, n);
	qsort(cur->files, cur->n, sizeof(*cur->files), deploy_file_cmp);
	return 0;
}

static void
add_file(cJSON *list, const char *action, const char *path, uint64_t size, const char *from)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "action", action);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "bytes", (double)size);
	if (from != NULL)
		cJSON_AddStringToObject(o, "from", from);
	cJSON_AddItemToArray(list, o);
}

cJSON *
deploy_dry_run(struct deploy_job *j)
{
	struct rocmd_deploy_files cur = {0};
	struct deploy_gpu_archs g;
	char after[512] = "";
	uint64_t copy = 0;
	int hashed = 0, nadd = 0, nrep = 0, nkeep = 0, nrem = 0;
	cJSON *r = cJSON_CreateObject(), *t, *files, *list, *gpus;

	cJSON_AddBoolToObject(r, "dry_run", 1);
	t = cJSON_AddObjectToObject(r, "target");
	cJSON_AddStringToObject(t, "name", j->t.name);
	cJSON_AddStringToObject(t, "kind", j->t.kind);
	cJSON_AddStringToObject(t, "library", j->t.sys_lib);
	cJSON_AddNumberToObject(r, "package", (double)j->pkg_id);
	cJSON_AddStringToObject(r, "package_name", j->pkg_name);
	current_files(j, &cur, &hashed);
	files = cJSON_AddObjectToObject(r, "files");
	list = cJSON_AddArrayToObject(files, "list");
	for (size_t i = 0; i < j->nfiles; i++) {
		const struct rocmd_deploy_file *f = &j->files[i];
		const struct rocmd_deploy_file *c =
		    bsearch(f, cur.files, cur.n, sizeof(*cur.files), deploy_file_cmp);
		int merged = deploy_merge_has(j, f->path);
		/* A file of the merge is the one in place (or the backup's copy
		 * of it): kept. */
		int same = c != NULL && (merged || (hashed && f->kind == ROCMD_DEPLOY_FILE &&
		                                    c->kind == ROCMD_DEPLOY_FILE &&
		                                    strcmp(c->sha256, f->sha256) == 0));
		add_file(list,
		         c == NULL ? "add"
		         : same    ? "keep"
		                   : "replace",
		         f->path, f->size, merged ? j->merge_from : "the package");
		if (!same)
			copy += f->size;
		if (c == NULL)
			nadd++;
		else if (same)
			nkeep++;
		else
			nrep++;
	}
	for (size_t i = 0; i < cur.n; i++)
		if (bsearch(&cur.files[i], j->files, j->nfiles, sizeof(*j->files),
		            deploy_file_cmp) == NULL) {
			add_file(list, "remove", cur.files[i].path, cur.files[i].size, NULL);
			nrem++;
		}
	cJSON_AddNumberToObject(files, "add", nadd);
	cJSON_AddNumberToObject(files, "replace", nrep);
	cJSON_AddNumberToObject(files, "keep", nkeep);
	cJSON_AddNumberToObject(files, "remove", nrem);
	cJSON_AddBoolToObject(files, "compared_by_hash", hashed);
	cJSON_AddNumberToObject(r, "bytes_to_copy", (double)copy);
	cJSON_AddBoolToObject(r, "binary_replaced", j->binary != NULL);
	rocmd_deploy_files_free(&cur);
	/* Each GPU: served by the library in place, and after. */
	rocmd_pkg_db_list(j->ds->pdb, j->pkg_id, pkg_archs, after);
	{
		cJSON *m = deploy_merge_json(j);
		size_t l = strlen(after);
		if (m != NULL) {
			cJSON_AddItemToObject(r, "merged", m);
			deploy_fmt(after + l, sizeof(after) - l, "%s%s", l ? "," : "",
			           j->merge_archs);
		}
		cJSON_AddBoolToObject(r, "no_merge", j->no_merge);
	}
	deploy_gpu_archs(j->ds, &g);
	gpus = cJSON_AddArrayToObject(r, "gpus");
	for (int i = 0; i < g.n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "arch", g.archs[i]);
		if (j->t.sdk_archs[0])
			cJSON_AddBoolToObject(o, "before",
			                      deploy_arch_listed(j->t.sdk_archs, g.archs[i]));
		else
			cJSON_AddNullToObject(o, "before");
		cJSON_AddBoolToObject(o, "after", deploy_arch_listed(after, g.archs[i]));
		cJSON_AddItemToArray(gpus, o);
	}
	deploy_forced_json(r, j->force);
	return r;
}
