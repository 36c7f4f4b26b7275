/*
 * The merged library (issue 17, "every GPU counts"): a package that lacks the
 * arch of one of the machine's GPUs, which the library in place serves, is
 * deployed together with the files of that library for that arch, so no GPU
 * loses its kernels. The base is what the target holds: the deployment in
 * place (current.json, its files read from the target), else the originals
 * (their backup, or the target's own files before the first deploy, hashed
 * by the job's worker). A base file joins when the package has no file of
 * its path and its name is for an arch being kept (TensileLibrary_lazy_
 * gfx803.dat, Kernels.so-000-gfx803.hsaco), or it is the one index for every
 * arch (TensileLibrary.dat) and the package has none. Only archs the rocBLAS
 * binary in place after the deploy was built for can be kept this way
 * (rocmd_rocblas_binary_archs); deploy-checks.c refuses the rest. The
 * merged list then goes through the engine like any other (one transaction,
 * every GPU's arch verified after the swap). Loop thread, but for
 * deploy_merge_hash, which the worker runs.
 */
#include "deploy-jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/rocblas-library.h"
#include "db/db-pkg.h"

struct bin_find {
	const char *path;
	char sha[72];
};

static int
bin_row(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct bin_find *b = arg;

	if (f->kind == 'f' && f->sha256 != NULL && strcmp(f->path, b->path) == 0)
		deploy_copy(b->sha, sizeof(b->sha), f->sha256);
	return 0;
}

/* The last binaries read (lib status asks at every call, through matching):
 * their archs by path, size, modification and inode. Loop thread only. */
static struct bin_cache {
	char path[PATH_MAX];
	struct rocmd_fsinfo st;
	char archs[512];
} bin_cache[4];
static unsigned bin_cache_next;

static int
cache_get(const char *path, char *archs, size_t alen)
{
	struct rocmd_fsinfo st;

	if (rocmd_fsinfo_get(path, 1, &st) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(bin_cache) / sizeof(bin_cache[0]); i++) {
		const struct bin_cache *c = &bin_cache[i];
		if (strcmp(c->path, path) == 0 && c->st.size == st.size &&
		    c->st.mtime_ns == st.mtime_ns && c->st.ino == st.ino && c->st.dev == st.dev) {
			deploy_copy(archs, alen, c->archs);
			return 1;
		}
	}
	return 0;
}

static void
cache_put(const char *path, const char *archs)
{
	struct bin_cache *c = &bin_cache[bin_cache_next++ % 4];

	if (rocmd_fsinfo_get(path, 1, &c->st) != 0) {
		c->path[0] = '\0';
		return;
	}
	deploy_copy(c->path, sizeof(c->path), path);
	deploy_copy(c->archs, sizeof(c->archs), archs);
}

int
deploy_merge_binary_archs(struct rocmd_deploy_service *ds, const struct deploy_tgt *t,
                          int64_t pkg_id, const char *pkg_binary, const char *pkg_platform,
                          char *archs, size_t alen, char *bin, size_t binlen, char *why,
                          size_t whylen)
{
	char path[PATH_MAX], **v = NULL;
	size_t n = 0, l = 0;
	int rc;

	archs[0] = '\0';
	path[0] = '\0';
	if (pkg_binary[0] != '\0' && t->host_bin[0] != '\0' &&
	    (strcmp(pkg_platform, "any") == 0 || strcmp(pkg_platform, t->platform) == 0)) {
		struct bin_find b = {.path = pkg_binary};
		rocmd_pkg_db_files(ds->pdb, pkg_id, 0, 0, bin_row, &b);
		if (b.sha[0] != '\0' &&
		    rocmd_store_object_path(ds->store, b.sha, path, sizeof(path)) == 0)
			deploy_fmt(bin, binlen, "the package's %s", pkg_binary);
	}
	if (path[0] == '\0') {
		if (t->host_bin[0] == '\0') {
			snprintf(why, whylen, "%s has no rocBLAS binary of its own", t->name);
			return ROCMD_ENOTFOUND;
		}
		deploy_copy(path, sizeof(path), t->host_bin);
		deploy_fmt(bin, binlen, "the SDK's %s", t->sys_bin);
	}
	if (cache_get(path, archs, alen))
		return 0;
	if ((rc = rocmd_rocblas_binary_archs(path, &v, &n, why, whylen)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (l + strlen(v[i]) + 2 < alen)
			l += (size_t)snprintf(archs + l, alen - l, "%s%s", l ? "," : "", v[i]);
		free(v[i]);
	}
	free(v);
	cache_put(path, archs);
	return 0;
}

/* ---- the base ---- */

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL ? s + 1 : p;
}

/* Whether base file F joins the package's files for archs KEEP. */
static int
joins(const struct deploy_job *j, const struct rocmd_deploy_file *f, const char *keep)
{
	char arch[ROCMD_GFX_MAX];
	const char *b = base_name(f->path);

	if (f->kind != ROCMD_DEPLOY_FILE ||
	    bsearch(f, j->files, j->nfiles, sizeof(*j->files), deploy_file_cmp) != NULL)
		return 0;
	if (rocmd_rocblas_name_arch(b, arch, sizeof(arch)) == 0)
		return deploy_arch_listed(keep, arch);
	return strcmp(b, "TensileLibrary.dat") == 0;
}

/* The target's library folder as a file list: names and sizes, sources in
 * it, no hashes yet (deploy_merge_hash). */
static int
live_files(const struct deploy_job *j, struct rocmd_deploy_files *out, char *why, size_t whylen)
{
	struct rocmd_fs_entry *e = NULL;
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = rocmd_fs_walk_in(NULL, j->t.host_lib, 0, &e, &n, why, whylen)) < 0)
		return rc;
	out->files = calloc(n + 1, sizeof(*out->files));
	for (size_t i = 0; out->files != NULL && i < n; i++) {
		struct rocmd_deploy_file *f = &out->files[out->n];
		if (e[i].kind != 'f')
			continue;
		f->path = strdup(e[i].path);
		f->kind = ROCMD_DEPLOY_FILE;
		f->exec = e[i].exec;
		f->size = e[i].size;
		if (f->path == NULL)
			break;
		out->n++;
	}
	rocmd_fs_entries_free(e, n);
	return out->files != NULL ? 0 : ROCMD_ENOMEM;
}

/* The base into B, its description into J->merge_from. */
static int
load_base(struct deploy_job *j, struct rocmd_deploy_files *b, char *why, size_t whylen)
{
	const char *state = j->ds->srv->cfg->state_dir;
	int fresh = (j->flags & ROCMD_DEPLOY_NEW_ORIGINALS) != 0;
	int rc;

	if (!fresh && rocmd_deploy_current_load(state, j->t.name, b, why, whylen) == 0) {
		if (b->label != NULL && strncmp(b->label, "pkg ", 4) == 0) {
			deploy_fmt(j->merge_from, sizeof(j->merge_from),
			           "the deployment in place (package #%lld)",
			           strtoll(b->label + 4, NULL, 10));
			return 0; /* sources: the target's files (set by the caller) */
		}
		rocmd_deploy_files_free(b);
		memset(b, 0, sizeof(*b));
	}
	if (!fresh && rocmd_deploy_backup_load(state, j->t.name, b, why, whylen) == 0) {
		deploy_copy(j->merge_from, sizeof(j->merge_from), "the originals (their backup)");
		return 0;
	}
	memset(b, 0, sizeof(*b));
	deploy_copy(j->merge_from, sizeof(j->merge_from),
	            fresh ? "the SDK's new originals (in place)" : "the originals (in place)");
	if ((rc = live_files(j, b, why, whylen)) < 0)
		return rc;
	return 0;
}

static int
add_file(struct deploy_job *j, const struct rocmd_deploy_file *f)
{
	char src[PATH_MAX];
	struct rocmd_deploy_file *d;
	void *p = realloc(j->files, (j->nfiles + 1) * sizeof(*j->files));
	void *q = realloc(j->mpaths, (j->nmpaths + 1) * sizeof(*j->mpaths));

	if (p != NULL)
		j->files = p;
	if (q != NULL)
		j->mpaths = q;
	if (p == NULL || q == NULL)
		return ROCMD_ENOMEM;
	if (f->source != NULL)
		deploy_copy(src, sizeof(src), f->source);
	else if (snprintf(src, sizeof(src), "%s/%s", j->t.host_lib, f->path) >= (int)sizeof(src))
		return ROCMD_EINVAL;
	d = &j->files[j->nfiles];
	*d = *f;
	d->path = strdup(f->path);
	d->source = strdup(src);
	d->link = NULL;
	j->mpaths[j->nmpaths] = strdup(f->path);
	if (d->path == NULL || d->source == NULL || j->mpaths[j->nmpaths] == NULL) {
		free((char *)d->path);
		free((char *)d->source);
		free(j->mpaths[j->nmpaths]);
		return ROCMD_ENOMEM;
	}
	j->nfiles++;
	j->nmpaths++;
	j->merge_bytes += f->size;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
deploy_merge_build(struct deploy_job *j, char *why, size_t whylen)
{
	struct rocmd_deploy_files b = {0};
	int rc;

	if (j->merge_archs[0] == '\0')
		return 0;
	if ((rc = load_base(j, &b, why, whylen)) < 0) {
		deploy_fmt(why, whylen, "cannot read the library in place at %s to merge %s: %s",
		           j->t.name, j->merge_archs, rocmd_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < b.n && rc == 0; i++)
		if (joins(j, &b.files[i], j->merge_archs))
			rc = add_file(j, &b.files[i]);
	rocmd_deploy_files_free(&b);
	if (rc < 0) {
		snprintf(why, whylen, "cannot build the merged library: %s", rocmd_strerror(rc));
		return rc;
	}
	qsort(j->files, j->nfiles, sizeof(*j->files), deploy_file_cmp);
	if (j->nmpaths > 1)
		qsort(j->mpaths, j->nmpaths, sizeof(*j->mpaths), cmp_str);
	deploy_files_fingerprint(j->files, j->nfiles, 1, j->fingerprint);
	return 0;
}

int
deploy_merge_hash(struct deploy_job *j)
{
	int hashed = 0;

	for (size_t i = 0; i < j->nfiles; i++) {
		struct rocmd_deploy_file *f = &j->files[i];
		uint64_t size = 0;
		int rc;
		if (f->kind != ROCMD_DEPLOY_FILE || f->sha256[0] != '\0')
			continue;
		if ((rc = rocmd_fs_hash_file_in(NULL, f->source, f->sha256, &size)) < 0 ||
		    size != f->size) {
			deploy_fmt(j->base.why, sizeof(j->base.why),
			           "cannot read %s to merge it: %s", f->source,
			           rc < 0 ? rocmd_strerror(rc) : "it changed while being read");
			return rc < 0 ? rc : ROCMD_EBUSY;
		}
		hashed = 1;
	}
	if (hashed)
		deploy_files_fingerprint(j->files, j->nfiles, 1, j->fingerprint);
	return 0;
}

int
deploy_merge_has(const struct deploy_job *j, const char *path)
{
	return j->nmpaths > 0 &&
	       bsearch(&path, j->mpaths, j->nmpaths, sizeof(*j->mpaths), cmp_str) != NULL;
}

cJSON *
deploy_merge_json(const struct deploy_job *j)
{
	cJSON *m, *a;

	if (j->merge_archs[0] == '\0' || j->nmpaths == 0)
		return NULL;
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "from", j->merge_from);
	a = cJSON_AddArrayToObject(m, "archs");
	for (const char *p = j->merge_archs; *p != '\0';) {
		size_t l = strcspn(p, ",");
		char one[ROCMD_GFX_MAX];
		deploy_fmt(one, sizeof(one), "%.*s", (int)l, p);
		cJSON_AddItemToArray(a, cJSON_CreateString(one));
		p += l + (p[l] == ',');
	}
	cJSON_AddNumberToObject(m, "files", (double)j->nmpaths);
	cJSON_AddNumberToObject(m, "bytes", (double)j->merge_bytes);
	return m;
}
