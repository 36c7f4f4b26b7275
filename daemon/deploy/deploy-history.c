/*
 * A target's history read as a sequence of steps (see deploy-jobs.h): the
 * history rows replayed in order give, for each, what was in place before
 * and after it (lib.history's "from" and "to"), and what lib.rollback --to
 * previous restores. A deploy pushes its package on a stack (a redeploy of
 * the package on top replaces it), a rollback to the previous package pops
 * one, a rollback to the originals empties it: so rolling back walks back
 * one step at a time instead of toggling between the last two. Loop
 * thread: reads the database.
 */
#include "deploy-jobs.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "daemon/core/server.h"
#include "db/db-deploy.h"

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
		int deploy = strcmp(st->action, "deploy") == 0 || strcmp(st->action, "recover") == 0;
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
