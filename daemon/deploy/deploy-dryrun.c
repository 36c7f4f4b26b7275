/*
 * lib deploy --dry-run: what a deploy would change, and nothing changed. The
 * job has been prepared as for a deploy (the package chosen or named, every
 * check passed, its file list built); here its files are compared with what
 * the target holds: what rocmd put there last (current.json, with hashes),
 * else the folder's names and sizes (metadata only: a file of the same name
 * is counted as replaced). Each file is added, replaced, kept (same content)
 * or removed, rocBLAS's and hipBLASLt's (what the deploy would do to that
 * folder decided as the job decides it: the package's, the originals back,
 * or left as it is); each GPU's arch is served before and after, from discovery's
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

/* What folder DIR (host path) holds as a sorted file list, names and sizes
 * only (metadata: not hashed); nothing when it is not there. */
static int
walk_files(const char *dir, struct rocmd_deploy_file **out, size_t *nout)
{
	char why[256];
	struct rocmd_fs_entry *e = NULL;
	size_t n = 0, k = 0;

	*out = NULL;
	*nout = 0;
	if (dir == NULL || !deploy_exists(dir) ||
	    rocmd_fs_walk_in(NULL, dir, 0, &e, &n, why, sizeof(why)) < 0)
		return 0; /* nothing there yet */
	if ((*out = calloc(n + 1, sizeof(**out))) == NULL) {
		rocmd_fs_entries_free(e, n);
		return ROCMD_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (e[i].kind == 'd')
			continue;
		(*out)[k].path = strdup(e[i].path);
		(*out)[k].size = e[i].size;
		(*out)[k].kind = e[i].kind == 'l' ? ROCMD_DEPLOY_SYMLINK : ROCMD_DEPLOY_FILE;
		if ((*out)[k].path != NULL)
			k++;
	}
	*nout = k;
	rocmd_fs_entries_free(e, n);
	qsort(*out, k, sizeof(**out), deploy_file_cmp);
	return 0;
}

/* What the target holds as sorted file lists, rocBLAS's and hipBLASLt's
 * (host folder LT, may be NULL): what rocmd put there last (current.json,
 * hashed: *HASHED, *LT_HASHED 1), else the folder's names and sizes. */
static int
current_files(struct deploy_job *j, const char *lt, struct rocmd_deploy_files *cur, int *hashed,
              int *lt_hashed)
{
	char why[256];
	int rc;

	*hashed = *lt_hashed = 1;
	if (rocmd_deploy_current_load(j->ds->srv->cfg->state_dir, j->t.name, cur, why,
	                              sizeof(why)) < 0) {
		memset(cur, 0, sizeof(*cur));
		*hashed = 0;
		if ((rc = walk_files(j->t.host_lib, &cur->files, &cur->n)) < 0)
			return rc;
	}
	if (!cur->has_lt) {
		*lt_hashed = 0;
		return walk_files(lt, &cur->lt_files, &cur->nlt);
	}
	return 0;
}

static void
add_file(cJSON *list, const char *folder, const char *action, const char *path, uint64_t size,
         const char *from)
{
	cJSON *o = cJSON_CreateObject();

	if (folder != NULL)
		cJSON_AddStringToObject(o, "folder", folder);
	cJSON_AddStringToObject(o, "action", action);
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddNumberToObject(o, "bytes", (double)size);
	if (from != NULL)
		cJSON_AddStringToObject(o, "from", from);
	cJSON_AddItemToArray(list, o);
}

/* One folder's new files NF (N) against what it holds, CF (CN; HASHED:
 * compared by hash, else by name): each added, replaced or kept, then each
 * of CF that NF lacks removed; into LIST (FOLDER: "hipblaslt" for
 * hipBLASLt's, NULL rocBLAS's, whose files may come from a merge) and the
 * counts of O, whose bytes to copy go to *COPY. */
static void
compare(const struct deploy_job *j, const char *folder, const struct rocmd_deploy_file *nf,
        size_t n, const struct rocmd_deploy_file *cf, size_t cn, int hashed, cJSON *list,
        cJSON *o, uint64_t *copy)
{
	int nadd = 0, nrep = 0, nkeep = 0, nrem = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rocmd_deploy_file *f = &nf[i];
		const struct rocmd_deploy_file *c = cn > 0 ? bsearch(f, cf, cn, sizeof(*cf),
		                                                     deploy_file_cmp)
		                                           : NULL;
		int merged = folder == NULL && deploy_merge_has(j, f->path);
		/* A file of the merge is the one in place (or the backup's copy
		 * of it): kept. */
		int same = c != NULL && (merged || (hashed && f->kind == ROCMD_DEPLOY_FILE &&
		                                    c->kind == ROCMD_DEPLOY_FILE &&
		                                    strcmp(c->sha256, f->sha256) == 0));
		add_file(list, folder,
		         c == NULL ? "add"
		         : same    ? "keep"
		                   : "replace",
		         f->path, f->size,
		         merged                                         ? j->merge_from
		         : folder != NULL && j->lt_state == LT_RESTORED ? "the backup"
		                                                        : "the package");
		if (!same)
			*copy += f->size;
		if (c == NULL)
			nadd++;
		else if (same)
			nkeep++;
		else
			nrep++;
	}
	for (size_t i = 0; i < cn; i++)
		if (n == 0 || bsearch(&cf[i], nf, n, sizeof(*nf), deploy_file_cmp) == NULL) {
			add_file(list, folder, "remove", cf[i].path, cf[i].size, NULL);
			nrem++;
		}
	cJSON_AddNumberToObject(o, "add", nadd);
	cJSON_AddNumberToObject(o, "replace", nrep);
	cJSON_AddNumberToObject(o, "keep", nkeep);
	cJSON_AddNumberToObject(o, "remove", nrem);
	cJSON_AddBoolToObject(o, "compared_by_hash", hashed);
}

/* hipBLASLt's part: what the deploy would do to its folder (deploy_lt_choose,
 * as the job will ask it), its files into LIST and R's "hipblaslt" counts. */
static void
dry_run_lt(struct deploy_job *j, const struct rocmd_deploy_request *req,
           const struct rocmd_deploy_files *cur, int lt_hashed, cJSON *r, cJSON *list,
           uint64_t *copy)
{
	char note[PATH_MAX + 300];
	cJSON *o;

	deploy_lt_note(j, note, sizeof(note));
	if (note[0] != '\0')
		cJSON_AddStringToObject(r, "hipblaslt_note", note + 2);
	if (!req->lt)
		return; /* left as it is: nothing of it listed */
	o = cJSON_AddObjectToObject(r, "hipblaslt");
	cJSON_AddStringToObject(o, "library", req->target.lt_dir);
	compare(j, "hipblaslt", req->lt_files, req->nlt_files, cur->lt_files, cur->nlt, lt_hashed,
	        list, o, copy);
}

cJSON *
deploy_dry_run(struct deploy_job *j)
{
	struct rocmd_deploy_files cur = {0};
	struct rocmd_deploy_request req = {0};
	struct deploy_gpu_archs g;
	char after[512] = "";
	uint64_t copy = 0;
	int hashed = 0, lt_hashed = 0;
	cJSON *r = cJSON_CreateObject(), *t, *files, *list, *gpus;

	cJSON_AddBoolToObject(r, "dry_run", 1);
	t = cJSON_AddObjectToObject(r, "target");
	cJSON_AddStringToObject(t, "name", j->t.name);
	cJSON_AddStringToObject(t, "kind", j->t.kind);
	cJSON_AddStringToObject(t, "library", j->t.sys_lib);
	cJSON_AddNumberToObject(r, "package", (double)j->pkg_id);
	cJSON_AddStringToObject(r, "package_name", j->pkg_name);
	/* hipBLASLt's folder: as the job will decide it. */
	req.state_dir = j->ds->srv->cfg->state_dir;
	req.flags = j->flags;
	deploy_target_engine(&j->t, &req.target);
	deploy_lt_choose(j, &req);
	current_files(j, req.target.lt_dir, &cur, &hashed, &lt_hashed);
	files = cJSON_AddObjectToObject(r, "files");
	list = cJSON_AddArrayToObject(files, "list");
	if (j->lt_only) {
		/* rocBLAS's folder stays: nothing of it listed. */
		cJSON_AddStringToObject(r, "rocblas", "left as it is: the package carries no "
		                                      "rocBLAS library");
		compare(j, NULL, NULL, 0, NULL, 0, hashed, list, files, &copy);
	} else {
		compare(j, NULL, j->files, j->nfiles, cur.files, cur.n, hashed, list, files, &copy);
	}
	dry_run_lt(j, &req, &cur, lt_hashed, r, list, &copy);
	cJSON_AddNumberToObject(r, "bytes_to_copy", (double)copy);
	cJSON_AddBoolToObject(r, "binary_replaced", j->binary != NULL && !j->lt_only);
	rocmd_deploy_files_free(&cur);
	/* Each GPU: served by the library in place, and after. */
	if (j->lt_only)
		deploy_copy(after, sizeof(after), j->t.sdk_archs); /* rocBLAS's stays */
	else
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
