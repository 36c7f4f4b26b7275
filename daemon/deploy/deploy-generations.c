/*
 * The generations of a target's originals (see deploy.h). The one in use is
 * <state>/deploy/<name>/backup; each SDK update that replaced what rocmd
 * deployed kept the one before as backup.<N> (deploy-backup.c). Here they
 * are listed (oldest first, by the time their manifest was written), pruned
 * to deploy.keep_generations (never the oldest, the first originals rocmd
 * backed up, never the one in use), checked file by file against their
 * manifest, and loaded as a file list for a rollback to an older one. Only
 * rocmd's state folder is touched.
 */
#include "deploy-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static void
gen_dir(const char *state_dir, const char *name, int gen, char *out, size_t n)
{
	if (gen == 0)
		rocmd_fs_fmt(out, n, "%s/deploy/%s/backup", state_dir, name);
	else
		rocmd_fs_fmt(out, n, "%s/deploy/%s/backup.%d", state_dir, name, gen);
}

/* Reads generation GEN's manifest into G; ROCMD_ENOTFOUND when it has none. */
static int
gen_read(const char *state_dir, const char *name, int gen, struct rocmd_deploy_generation *g)
{
	char dir[DEPLOY_PATH_MAX], mpath[DEPLOY_PATH_MAX + 32];
	struct rocmd_deploy_files f;
	const cJSON *c;
	cJSON *m = NULL;
	int rc;

	memset(g, 0, sizeof(*g));
	g->gen = gen;
	gen_dir(state_dir, name, gen, dir, sizeof(dir));
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/manifest.json", dir);
	if ((rc = rocmd_fs_json_read(mpath, &m)) < 0)
		return rc == -ENOENT ? ROCMD_ENOTFOUND : rc;
	if ((rc = deploy_manifest_parse(m, NULL, NULL, &f)) == 0) {
		g->files = f.n + f.nlt + (f.binary != NULL);
		for (size_t i = 0; i < f.n; i++)
			g->bytes += f.files[i].size;
		for (size_t i = 0; i < f.nlt; i++)
			g->bytes += f.lt_files[i].size;
		if (f.binary != NULL)
			g->bytes += f.binary->size;
		rocmd_deploy_files_free(&f);
	}
	c = cJSON_GetObjectItemCaseSensitive(m, "created_unix");
	g->created_unix = cJSON_IsNumber(c) ? (int64_t)c->valuedouble : 0;
	cJSON_Delete(m);
	return rc;
}

static int
gen_cmp(const void *a, const void *b)
{
	const struct rocmd_deploy_generation *x = a, *y = b;

	/* The one in use is the newest whatever its time says. */
	if ((x->gen == 0) != (y->gen == 0))
		return x->gen == 0 ? 1 : -1;
	if (x->created_unix != y->created_unix)
		return x->created_unix < y->created_unix ? -1 : 1;
	return x->gen - y->gen;
}

/* N of "backup" (0) or "backup.<N>", N 1 to 999 written as retire_backup
 * does; -1 for any other name. */
static int
gen_of(const char *name)
{
	char *end;
	long v;

	if (strcmp(name, "backup") == 0)
		return 0;
	if (strncmp(name, "backup.", 7) != 0 || name[7] < '1' || name[7] > '9')
		return -1;
	v = strtol(name + 7, &end, 10);
	return *end == '\0' && v < 1000 ? (int)v : -1;
}

static int
int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int
rocmd_deploy_generations(const char *state_dir, const char *name,
                         struct rocmd_deploy_generation *out, size_t max, size_t *n)
{
	char dir[DEPLOY_PATH_MAX];
	int gens[1000], rc = 0;
	size_t ng = 0;
	struct rocmd_dir *d;
	struct rocmd_dirent *e;

	*n = 0;
	if (rocmd_deploy_name_check(name) < 0)
		return ROCMD_EINVAL;
	/* The target's folder listed, not each possible name tried: lib status
	 * asks this for every target. */
	rocmd_fs_fmt(dir, sizeof(dir), "%s/deploy/%s", state_dir, name);
	if ((d = rocmd_dir_open(dir)) == NULL)
		return errno == ENOENT ? 0 : rocmd_err_errno(errno);
	while ((e = rocmd_dir_read(d)) != NULL && ng < sizeof(gens) / sizeof(gens[0])) {
		int gen = gen_of(e->d_name);
		if (gen >= 0)
			gens[ng++] = gen;
	}
	rocmd_dir_close(d);
	qsort(gens, ng, sizeof(gens[0]), int_cmp);
	for (size_t i = 0; i < ng && *n < max; i++) {
		rc = gen_read(state_dir, name, gens[i], &out[*n]);
		if (rc == 0)
			(*n)++;
		else if (rc != ROCMD_ENOTFOUND && rc != ROCMD_EINVAL && rc != ROCMD_ECORRUPT)
			return rc;
	}
	qsort(out, *n, sizeof(*out), gen_cmp);
	return 0;
}

int
rocmd_deploy_generations_prune(const char *state_dir, const char *name, int keep, int *removed,
                               char *why, size_t whylen)
{
	struct rocmd_deploy_generation g[ROCMD_DEPLOY_GENERATIONS_MAX];
	size_t n, i = 1;
	int rc;

	*removed = 0;
	if ((rc = rocmd_deploy_generations(state_dir, name, g, ROCMD_DEPLOY_GENERATIONS_MAX, &n)) <
	    0)
		return rc;
	if (keep < 2)
		keep = 2;
	/* g[0] is the oldest, g[n - 1] the one in use: both stay. */
	while (n - (size_t)*removed > (size_t)keep && i + 1 < n) {
		char dir[DEPLOY_PATH_MAX], mpath[DEPLOY_PATH_MAX + 32];
		gen_dir(state_dir, name, g[i].gen, dir, sizeof(dir));
		rocmd_fs_fmt(mpath, sizeof(mpath), "%s/manifest.json", dir);
		/* The manifest first: a half-removed generation is no generation. */
		if ((rc = rocmd_fs_unlink(mpath)) < 0 || (rc = rocmd_fs_remove_tree(dir)) < 0) {
			rocmd_fs_fmt(why, whylen, "cannot remove %s: %s", dir, rocmd_strerror(rc));
			return rc;
		}
		(*removed)++;
		i++;
	}
	return 0;
}

int
rocmd_deploy_backup_load_gen(const char *state_dir, const char *name, int gen,
                             struct rocmd_deploy_files *out, char *why, size_t whylen)
{
	char dir[DEPLOY_PATH_MAX], mpath[DEPLOY_PATH_MAX + 32], lib[DEPLOY_PATH_MAX + 32],
	    bin[DEPLOY_PATH_MAX + 32];
	cJSON *m = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (rocmd_deploy_name_check(name) < 0 || gen < 0)
		return ROCMD_EINVAL;
	gen_dir(state_dir, name, gen, dir, sizeof(dir));
	rocmd_fs_fmt(mpath, sizeof(mpath), "%s/manifest.json", dir);
	rocmd_fs_fmt(lib, sizeof(lib), "%s/library", dir);
	rocmd_fs_fmt(bin, sizeof(bin), "%s/binary", dir);
	if ((rc = rocmd_fs_json_read(mpath, &m)) < 0) {
		rocmd_fs_fmt(why, whylen, "%s",
		             rc == -ENOENT ? "no such generation of the originals"
		                           : rocmd_strerror(rc));
		return rc == -ENOENT ? ROCMD_ENOTFOUND : rc;
	}
	rc = deploy_manifest_parse(m, lib, bin, out);
	if (rc < 0)
		rocmd_fs_fmt(why, whylen, "%s is damaged", mpath);
	cJSON_Delete(m);
	return rc;
}

/* Hashes file F (its source in the backup) against its manifest entry. */
static int
file_ok(const struct rocmd_deploy_file *f)
{
	char hex[ROCMD_SHA256_HEX];
	uint64_t size = 0;

	if (f->kind != ROCMD_DEPLOY_FILE)
		return 1;
	return rocmd_fs_hash_file(f->source, hex, &size) == 0 && size == f->size &&
	       strcmp(hex, f->sha256) == 0;
}

int
rocmd_deploy_backup_check(const char *state_dir, const char *name, int gen,
                          struct rocmd_deploy_backup_check *c, char *why, size_t whylen)
{
	struct rocmd_deploy_files f;
	int rc;

	memset(c, 0, sizeof(*c));
	c->gen = gen;
	if ((rc = rocmd_deploy_backup_load_gen(state_dir, name, gen, &f, why, whylen)) < 0)
		return rc;
	for (size_t i = 0; i < f.n; i++) {
		c->checked++;
		if (!file_ok(&f.files[i]) && c->bad++ == 0)
			rocmd_fs_fmt(c->first_bad, sizeof(c->first_bad), "library/%s",
			             f.files[i].path);
	}
	for (size_t i = 0; i < f.nlt; i++) {
		c->checked++;
		if (!file_ok(&f.lt_files[i]) && c->bad++ == 0)
			rocmd_fs_fmt(c->first_bad, sizeof(c->first_bad), "hipblaslt/%s",
			             f.lt_files[i].path);
	}
	if (f.binary != NULL) {
		c->checked++;
		if (!file_ok(f.binary) && c->bad++ == 0)
			rocmd_fs_fmt(c->first_bad, sizeof(c->first_bad), "binary");
	}
	rocmd_deploy_files_free(&f);
	return 0;
}
