/*
 * A target's history read as a sequence of steps (see deploy-jobs.h): the
 * history rows replayed in order give, for each, what was in place before
 * and after it (lib.history's "from" and "to"), and what lib.rollback --to
 * previous restores. A deploy pushes its package on a stack (a redeploy of
 * the package on top replaces it), a rollback to the previous package pops
 * one, a rollback to the originals empties it: so rolling back walks back
 * one step at a time instead of toggling between the last two. And the
 * files rocmd ever deployed at a target (from its deployments' packages),
 * which a new generation of originals leaves out (I1). Loop thread: reads
 * the database.
 */
#include "deploy-jobs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/core/server.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"

static void
ref_set(struct deploy_pkg_ref *r, const struct rocmd_db_history *h)
{
	memset(r, 0, sizeof(*r));
	r->present = 1;
	r->id = h->package_id;
	deploy_copy(r->name, sizeof(r->name), h->package_name);
	deploy_copy(r->version, sizeof(r->version), h->package_version);
	r->removed = h->package_id == 0;
}

static int
collect(const struct rocmd_db_history *h, void *arg)
{
	struct deploy_steps *s = arg;
	struct deploy_step *st;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		void *p = realloc(s->v, ncap * sizeof(*s->v));
		if (p == NULL)
			return ROCMD_ENOMEM;
		s->v = p;
		s->cap = ncap;
	}
	st = &s->v[s->n++];
	memset(st, 0, sizeof(*st));
	st->hist_id = h->id;
	st->target_id = h->target_id;
	st->deployment_id = h->deployment_id;
	if (h->deployment_id > 0)
		ref_set(&st->to, h);
	deploy_copy(st->action, sizeof(st->action), h->action);
	deploy_copy(st->outcome, sizeof(st->outcome), h->outcome);
	return 0;
}

/* Replays the steps of one target, oldest first, into STACK (*N of CAP). */
static void
replay(struct deploy_steps *s, int64_t target_id, struct deploy_pkg_ref *stack, size_t cap,
       size_t *n)
{
	*n = 0;
	for (size_t i = s->n; i-- > 0;) {
		struct deploy_step *st = &s->v[i];
		int deploy =
		    strcmp(st->action, "deploy") == 0 || strcmp(st->action, "recover") == 0;
		int rollback = strcmp(st->action, "rollback") == 0;
		if (st->target_id != target_id || strcmp(st->outcome, "ok") != 0 ||
		    !(deploy || rollback) || (deploy && st->deployment_id == 0))
			continue;
		st->changed = 1;
		if (*n > 0)
			st->from = stack[*n - 1]; /* else originals: present 0 */
		if (rollback && st->deployment_id == 0) {
			*n = 0; /* back to the originals */
			memset(&st->to, 0, sizeof(st->to));
			continue;
		}
		if (rollback && *n > 0)
			(*n)--;
		if (rollback && *n > 0)
			continue; /* what it restored is on top now */
		if (deploy && *n > 0 && stack[*n - 1].id == st->to.id &&
		    strcmp(stack[*n - 1].name, st->to.name) == 0) {
			stack[*n - 1] = st->to; /* the same package again (a drift redeploy) */
			continue;
		}
		if (*n == cap) {
			memmove(stack, stack + 1, (cap - 1) * sizeof(*stack));
			(*n)--;
		}
		stack[(*n)++] = st->to;
	}
}

int
deploy_steps_load(struct rocmd_deploy_service *ds, int64_t target_id, struct deploy_steps *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	rc = rocmd_deploy_db_history(ds->db, target_id, 0, 0, collect, s);
	if (rc < 0) {
		deploy_steps_free(s);
		return rc;
	}
	/* Each target of the rows, replayed on its own. */
	for (size_t i = 0; i < s->n; i++) {
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = s->v[k].target_id == s->v[i].target_id;
		if (!seen) {
			struct deploy_pkg_ref stack[DEPLOY_STEPS_MAX];
			size_t n;
			replay(s, s->v[i].target_id, stack, DEPLOY_STEPS_MAX, &n);
			if (target_id == s->v[i].target_id) {
				s->depth = n;
				if (n >= 2)
					s->previous = stack[n - 2];
			}
		}
	}
	return 0;
}

const struct deploy_step *
deploy_steps_find(const struct deploy_steps *s, int64_t hist_id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].hist_id == hist_id)
			return &s->v[i];
	return NULL;
}

void
deploy_steps_free(struct deploy_steps *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- what rocmd ever deployed at a target ---- */

struct ours_build {
	struct rocmd_deploy_service *ds;
	struct rocmd_deploy_files *out;
	const struct rocmd_deploy_files *orig; /* the originals' files: never ours */
	size_t cap, ltcap;
	int64_t pkgs[DEPLOY_STEPS_MAX];
	size_t npkgs;
	char libdir[PATH_MAX];
	char ltdir[PATH_MAX]; /* the package's hipBLASLt folder, "" none */
	int rocblas;          /* 0: the package carries hipBLASLt's folder only */
	int rc;
};

static int
ours_libdir(const struct rocmd_db_pkg *p, void *arg)
{
	struct ours_build *b = arg;
	cJSON *id = cJSON_Parse(p->identity != NULL ? p->identity : "{}");
	const cJSON *lib = cJSON_GetObjectItemCaseSensitive(id, "library");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(id, "hipblaslt_library");

	deploy_copy(b->libdir, sizeof(b->libdir), cJSON_IsString(lib) ? lib->valuestring : "");
	deploy_copy(b->ltdir, sizeof(b->ltdir), cJSON_IsString(lt) ? lt->valuestring : "");
	b->rocblas = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(id, "carries_rocblas"));
	cJSON_Delete(id);
	return 0;
}

/* Whether PATH with hash SHA is one of the originals' files O (N). */
static int
is_original(const struct rocmd_deploy_file *o, size_t n, const char *path, const char *sha)
{
	for (size_t i = 0; o != NULL && i < n; i++)
		if (strcmp(o[i].path, path) == 0 && strcmp(o[i].sha256, sha) == 0)
			return 1;
	return 0;
}

/* Appends REL (hash SHA) to the list *V (*N, *CAP). */
static int
ours_add(struct rocmd_deploy_file **v, size_t *n, size_t *cap, const char *rel, const char *sha)
{
	struct rocmd_deploy_file *d;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(*v, ncap * sizeof(**v));
		if (p == NULL)
			return ROCMD_ENOMEM;
		*v = p;
		*cap = ncap;
	}
	d = &(*v)[*n];
	memset(d, 0, sizeof(*d));
	d->kind = ROCMD_DEPLOY_FILE;
	d->path = strdup(rel);
	if (d->path == NULL)
		return ROCMD_ENOMEM;
	deploy_copy(d->sha256, sizeof(d->sha256), sha);
	(*n)++;
	return 0;
}

static int
ours_file(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct ours_build *b = arg;
	size_t n = strlen(b->libdir), ln = strlen(b->ltdir);
	const char *rel = f->path;
	const struct rocmd_deploy_files *o = b->orig;

	if (f->kind != 'f' || f->sha256 == NULL)
		return 0;
	if (ln > 0 && strncmp(f->path, b->ltdir, ln) == 0 && f->path[ln] == '/') {
		/* hipBLASLt's folder: never rocBLAS's. */
		rel += ln + 1;
		if (o != NULL && is_original(o->lt_files, o->nlt, rel, f->sha256))
			return 0;
		return ours_add(&b->out->lt_files, &b->out->nlt, &b->ltcap, rel, f->sha256);
	}
	if (!b->rocblas)
		return 0;
	if (n > 0 && (strncmp(f->path, b->libdir, n) != 0 || f->path[n] != '/'))
		return 0; /* not in the library folder */
	if (n > 0)
		rel += n + 1;
	if (o != NULL && is_original(o->files, o->n, rel, f->sha256))
		return 0; /* the vendor's file, deployed unchanged */
	return ours_add(&b->out->files, &b->out->n, &b->cap, rel, f->sha256);
}

static int
ours_deployment(const struct rocmd_db_deployment *d, void *arg)
{
	struct ours_build *b = arg;
	int rc;

	if (d->package_id <= 0 || strcmp(d->state, "failed") == 0)
		return 0;
	for (size_t i = 0; i < b->npkgs; i++)
		if (b->pkgs[i] == d->package_id)
			return 0;
	if (b->npkgs < DEPLOY_STEPS_MAX)
		b->pkgs[b->npkgs++] = d->package_id;
	b->libdir[0] = b->ltdir[0] = '\0';
	b->rocblas = 1;
	if (rocmd_pkg_db_list(b->ds->pdb, d->package_id, ours_libdir, b) < 0)
		return 0;
	rc = rocmd_pkg_db_files(b->ds->pdb, d->package_id, 0, 0, ours_file, b);
	return rc < 0 ? rc : 0;
}

int
deploy_ours_load(struct rocmd_deploy_service *ds, const char *name, int64_t target_id,
                 struct rocmd_deploy_files *out)
{
	struct rocmd_deploy_files orig = {0};
	struct ours_build *b = calloc(1, sizeof(*b));
	char why[256];
	int rc;

	memset(out, 0, sizeof(*out));
	if (b == NULL)
		return ROCMD_ENOMEM;
	b->ds = ds;
	b->out = out;
	if (rocmd_deploy_backup_load(ds->srv->cfg->state_dir, name, &orig, why, sizeof(why)) == 0)
		b->orig = &orig;
	rc = rocmd_deploy_db_deployments(ds->db, target_id, 0, ours_deployment, b);
	rocmd_deploy_files_free(&orig);
	free(b);
	if (rc < 0)
		rocmd_deploy_files_free(out);
	return rc;
}
