/*
 * The vendor overrides (see db/db-tune-override.h, kernels/vendor-override.h):
 * what the jobs of a deploy target found, written where the target's library
 * reads it, and named by the machine's environment (tune-env.h).
 *
 * Files. <state>/tune-overrides/<target>/rocblas.csv (rocBLAS's
 * ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH: the CSV rocblas-gemm-tune writes) and
 * .../hipblaslt.txt (HIPBLASLT_TUNING_OVERRIDE_FILE), each replaced whole,
 * atomically and durably (rocmd_fs_replace). Each starts with the identity
 * line: the library's digest and its files' fingerprint, the GPU and the
 * driver the entries were measured on.
 *
 * Entries. One per finished job of the target and library that ran on the
 * library the target holds now and the driver now, whose winner is a solution
 * of the library's own (not its default) and beat the default by more than
 * the spread of the re-timing (tune_summary: the p80 of the winner's rounds
 * below the p20 of the default's, the two re-timed interleaved).
 *
 * Visibility. rocBLAS and hipBLASLt read one machine-wide variable each, and
 * an override's indices mean something only to the library they were
 * measured on (Tensile's override reader takes the index as it is: "possible
 * library mismatch"). So the variable is set only where it cannot reach
 * another library: when the machine has one target of that library. With
 * several (two SDKs), every override is 'written': a program is pointed at
 * its file by hand (`rocmctl tune results` names it), and the status says so.
 * A library whose binary lacks the variable's name cannot read an override:
 * 'unsupported', and the file is not written.
 *
 * Order, so that a crash at any step leaves every program either no override
 * or one that matches its library:
 *   write      the file (identity and entries), then the row, then the
 *              environment;
 *   withdraw   the file emptied (identity alone), then the environment, then
 *              the row;
 *   recover    at every start and after each SDK event: an override whose
 *              library no longer has the fingerprint its file names (its
 *              digest then compared) is withdrawn, and its jobs go stale with
 *              seeded re-tunes; a row that says live while its file or the
 *              environment disagree is made true again.
 * A deploy, a rollback or lib.recover withdraws the target's overrides before
 * it swaps the library (deploy-jobs.c calls rocmd_tune_withdraw_target); the
 * re-tunes come once the new library is there.
 */
#include "tune-internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "common/fs.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "kernels/vendor-override.h"
#include "kernels/vendor.h"
#include "tune-env.h"

#define OVERRIDE_MAX (16u << 20) /* an override file read back */

static const char *
variable_of(const char *kind)
{
	return !strcmp(kind, "rocblas") ? "ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH"
	                                : "HIPBLASLT_TUNING_OVERRIDE_FILE";
}

static enum vendor_kind
vkind(const char *kind)
{
	return !strcmp(kind, "rocblas") ? VENDOR_ROCBLAS : VENDOR_HIPBLASLT;
}

int
tune_override_reaches_programs(const char *kind)
{
	return !strcmp(kind, "rocblas") || !strcmp(kind, "hipblaslt");
}

static void
override_path(const struct rocmd_tune *t, const char *target, const char *kind, char *out,
              size_t len)
{
	rocmd_fs_fmt(out, len, "%s/tune-overrides/%s/%s", t->cfg->state_dir, target,
	             !strcmp(kind, "rocblas") ? "rocblas.csv" : "hipblaslt.txt");
}

static int
mkdirs(const char *path)
{
	char dir[1200];
	char *slash;
	int rc;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		return 0;
	*slash = '\0';
	rc = rocmd_fs_mkdir(dir, 0755);
	if (rc == -ENOENT) {
		if ((rc = mkdirs(dir)) < 0)
			return rc;
		rc = rocmd_fs_mkdir(dir, 0755);
	}
	return rc == -EEXIST ? 0 : rc;
}

/* Replaces the file at PATH with the identity ID and entries E (N of them). */
static int
put_file(const char *kind, const char *path, const struct vendor_override_id *id,
         const struct vendor_override_entry *e, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = vendor_override_write(!strcmp(kind, "rocblas"), id, e, n, &text, &len);
	if (rc == 0)
		rc = mkdirs(path);
	if (rc == 0)
		rc = rocmd_fs_replace(path, NULL, text, len, 0644);
	free(text);
	return rc;
}

/* ---- which override the environment names ---- */

struct count_ctx {
	const char *kind;
	int n;
};

static int
count_cb(const struct tune_target *tg, void *ctx)
{
	struct count_ctx *c = ctx;

	c->n += strcmp(tg->kind, c->kind) == 0;
	return 0;
}

/* How many targets of library KIND this machine has. */
static int
targets_of(struct rocmd_tune *t, const char *kind)
{
	struct count_ctx c = {kind, 0};

	tune_vendor_targets(t, count_cb, &c);
	return c.n;
}

struct env_ctx {
	const char *value[2]; /* rocblas, hipblaslt */
	char path[2][1024];
};

static int
env_cb(const struct rocmd_tune_override *o, void *ctx)
{
	struct env_ctx *e = ctx;
	int i = !strcmp(o->library, "rocblas") ? 0 : 1;

	if (strcmp(o->state, "live") == 0 && e->value[i] == NULL) {
		snprintf(e->path[i], sizeof(e->path[i]), "%s", o->path);
		e->value[i] = e->path[i];
	}
	return 0;
}

int
tune_override_env_sync(struct rocmd_tune *t)
{
	struct env_ctx e;
	struct tune_env_var vars[2];
	char why[512] = "";
	int rc;

	memset(&e, 0, sizeof(e));
	rocmd_tune_override_list(t->odb, env_cb, &e);
	vars[0].name = variable_of("rocblas");
	vars[0].value = e.value[0];
	vars[1].name = variable_of("hipblaslt");
	vars[1].value = e.value[1];
	rc = tune_env_apply(t->root[0] ? t->root : NULL, vars, 2, why, sizeof(why));
	if (rc < 0)
		log_err("tune: the machine's environment: %s", why[0] ? why : rocmd_strerror(rc));
	return rc;
}

/* ---- writing ---- */

struct entries_ctx {
	const char *target, *kind, *digest, *driver;
	int rocblas;
	struct vendor_override_entry *e;
	size_t n, cap;
	int err;
};

static int64_t
winner_sol(const char *winner)
{
	const char *s = strstr(winner, "SOL=");

	return s != NULL ? strtoll(s + 4, NULL, 10) : 0;
}

static int
entries_cb(const struct rocmd_tune_job *j, void *ctx)
{
	struct entries_ctx *c = ctx;
	struct vendor_override_entry *grown;
	struct gemm_problem p;
	int64_t sol = winner_sol(j->winner);
	int64_t index = c->rocblas ? sol : sol - 1;

	if (strcmp(j->target, c->target) != 0 || strcmp(j->backend, c->kind) != 0 ||
	    strcmp(j->state, "done") != 0 || strcmp(j->lib_digest, c->digest) != 0 ||
	    strcmp(j->driver, c->driver) != 0)
		return 0;
	/* Beat the default by more than the spread, and not the default itself. */
	if (sol <= 0 || index <= 0 || !(j->best_hi_ms > 0) || !(j->default_lo_ms > 0) ||
	    !(j->best_hi_ms < j->default_lo_ms))
		return 0;
	if (tune_vendor_job_problem(j, &p) < 0)
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		grown = realloc(c->e, c->cap * sizeof(*c->e));
		if (grown == NULL) {
			c->err = ROCMD_ENOMEM;
			return 1;
		}
		c->e = grown;
	}
	c->e[c->n].p = p;
	c->e[c->n].index = index;
	c->e[c->n].ms = j->best_ms;
	c->n++;
	return 0;
}

static void
fill_id(struct vendor_override_id *id, const struct rocmd_tune_override *o, const char *stat)
{
	memset(id, 0, sizeof(*id));
	snprintf(id->library, sizeof(id->library), "%.63s", vendor_basename(o->lib_path));
	snprintf(id->digest, sizeof(id->digest), "%s", o->lib_digest);
	snprintf(id->stat, sizeof(id->stat), "%s", stat);
	snprintf(id->arch, sizeof(id->arch), "%s", o->arch);
	id->compute_units = (int)o->compute_units;
	snprintf(id->driver, sizeof(id->driver), "%s", o->driver);
	id->written_ms = rocmd_now_ms();
}

/*
 * Writes target TG's override of library KIND for the library with digest
 * DIGEST on device ARCH/DEVICE/CUS with DRIVER: the file, the row, the
 * environment. A row switched off stays off (the file is still kept true).
 */
static void
write_override(struct rocmd_tune *t, const struct tune_target *tg, const char *kind,
               const char *digest, const char *arch, const char *device, int cus,
               const char *driver)
{
	struct entries_ctx c = {tg->name, kind, digest, driver, !strcmp(kind, "rocblas"), NULL,
	                        0, 0, 0};
	struct rocmd_tune_override o, old;
	struct vendor_override_id id;
	char stat[17] = "", why[256] = "";
	int had = rocmd_tune_override_get(t->odb, tg->name, kind, &old) == 0;
	int rc, has_var, nt;

	memset(&o, 0, sizeof(o));
	snprintf(o.target, sizeof(o.target), "%s", tg->name);
	snprintf(o.library, sizeof(o.library), "%s", kind);
	snprintf(o.lib_path, sizeof(o.lib_path), "%s", tg->library);
	snprintf(o.lib_digest, sizeof(o.lib_digest), "%s", digest);
	snprintf(o.arch, sizeof(o.arch), "%s", arch);
	snprintf(o.device, sizeof(o.device), "%s", device);
	o.compute_units = cus;
	snprintf(o.driver, sizeof(o.driver), "%s", driver);
	override_path(t, tg->name, kind, o.path, sizeof(o.path));
	snprintf(o.variable, sizeof(o.variable), "%s", variable_of(kind));

	has_var = vendor_binary_has_string(tg->library, o.variable);
	if (has_var == 0) {
		snprintf(o.state, sizeof(o.state), "unsupported");
		snprintf(o.detail, sizeof(o.detail), "%.120s does not read %s: no override written",
		         tg->library, o.variable);
		rocmd_tune_override_put(t->odb, &o, rocmd_now_ms());
		return;
	}
	rocmd_tune_queue_list(t->q, 0, entries_cb, &c);
	if (c.err < 0) {
		free(c.e);
		return;
	}
	if (had && !strcmp(old.state, "off"))
		c.n = 0; /* switched off: the file says what it is for, and nothing else */
	vendor_library_stat(vkind(kind), tg->library, tg->tensile_dir, stat, why, sizeof(why));
	fill_id(&id, &o, stat);
	rc = put_file(kind, o.path, &id, c.e, c.n);
	free(c.e);
	if (rc < 0) {
		log_err("tune: cannot write %s: %s", o.path, rocmd_strerror(rc));
		return;
	}
	ROCMD_KILLPOINT("tune.override.written");
	o.entries = (int64_t)c.n;
	nt = targets_of(t, kind);
	if (had && !strcmp(old.state, "off")) {
		snprintf(o.state, sizeof(o.state), "off");
		snprintf(o.detail, sizeof(o.detail), "switched off (rocmctl tune on %s)", tg->name);
	} else if (c.n == 0) {
		snprintf(o.state, sizeof(o.state), "written");
		snprintf(o.detail, sizeof(o.detail),
		         "no solution beat the library's own choice by more than the spread");
	} else if (nt > 1) {
		snprintf(o.state, sizeof(o.state), "written");
		snprintf(o.detail, sizeof(o.detail),
		         "%d %s libraries here: the machine-wide %s would reach them all; set it "
		         "for a program of this one",
		         nt, kind, o.variable);
	} else {
		snprintf(o.state, sizeof(o.state), "live");
		if (has_var < 0)
			snprintf(o.detail, sizeof(o.detail), "could not read %.120s for %s", tg->library,
			         o.variable);
	}
	if (rocmd_tune_override_put(t->odb, &o, rocmd_now_ms()) < 0) {
		log_err("tune: cannot record the override of %s: %s", tg->name,
		        rocmd_tune_override_errmsg(t->odb));
		return;
	}
	if (!(had && !strcmp(old.state, o.state) && !strcmp(old.path, o.path)) ||
	    !strcmp(o.state, "live"))
		tune_override_env_sync(t);
	if (!(had && old.entries == o.entries && !strcmp(old.state, o.state))) {
		cJSON *d = cJSON_CreateObject();

		cJSON_AddStringToObject(d, "target", o.target);
		cJSON_AddStringToObject(d, "library", o.library);
		cJSON_AddStringToObject(d, "path", o.path);
		cJSON_AddNumberToObject(d, "entries", (double)o.entries);
		cJSON_AddStringToObject(d, "state", o.state);
		rocmd_server_event(t->srv, "tune.override", d, "%s %s override: %lld entr%s, %s",
		                   o.target, o.library, (long long)o.entries,
		                   o.entries == 1 ? "y" : "ies", o.state);
	}
}

/* The identity of the last job done on TARGET's KIND: what an override is
 * written for when no run just told (tune on, recovery). */
struct last_ctx {
	const char *target, *kind;
	struct rocmd_tune_job j;
	int found;
};

static int
last_cb(const struct rocmd_tune_job *j, void *ctx)
{
	struct last_ctx *l = ctx;

	if (!strcmp(j->target, l->target) && !strcmp(j->backend, l->kind) &&
	    !strcmp(j->state, "done") && j->lib_digest[0] != '\0' &&
	    (!l->found || j->finished_ms >= l->j.finished_ms)) {
		l->j = *j;
		l->found = 1;
	}
	return 0;
}

void
tune_override_refresh(struct rocmd_tune *t, const char *target, const char *kind)
{
	struct last_ctx l;
	struct tune_target tg;
	struct rocmd_tune_override o;
	int cus = 0;

	if (!tune_override_reaches_programs(kind) || tune_vendor_target_find(t, target, kind, &tg) < 0)
		return;
	memset(&l, 0, sizeof(l));
	l.target = target;
	l.kind = kind;
	rocmd_tune_queue_list(t->q, 0, last_cb, &l);
	if (!l.found)
		return;
	if (rocmd_tune_override_get(t->odb, target, kind, &o) == 0 &&
	    !strcmp(o.lib_digest, l.j.lib_digest))
		cus = (int)o.compute_units;
	if (cus == 0 && !strcmp(t->dev.arch, l.j.arch))
		cus = t->dev.compute_units;
	write_override(t, &tg, kind, l.j.lib_digest, l.j.arch, l.j.device, cus, l.j.driver);
}

void
tune_override_after_job(struct rocmd_tune *t)
{
	const struct run *r = &t->run;
	struct tune_target tg;

	if (!tune_override_reaches_programs(r->job.backend) ||
	    tune_vendor_target_find(t, r->job.target, r->job.backend, &tg) < 0)
		return;
	write_override(t, &tg, r->job.backend, r->dev.library_digest, r->dev.arch, r->dev.name,
	               r->dev.compute_units, r->dev.driver_version);
}

/* ---- withdrawing ---- */

static int
withdraw_one(struct rocmd_tune *t, struct rocmd_tune_override *o, const char *state,
             const char *reason)
{
	struct vendor_override_id id;
	char *text = NULL;
	size_t len = 0;
	int was_live = !strcmp(o->state, "live");
	int rc;

	/* The file first: from here on a program sees no override. Its
	 * identity stays, so that the file says what it was for. */
	if (rocmd_fs_read_file(o->path, OVERRIDE_MAX, &text, &len) == 0 &&
	    vendor_override_identity(text, len, &id) == 0) {
		id.written_ms = rocmd_now_ms();
	} else {
		fill_id(&id, o, "");
	}
	free(text);
	rc = put_file(o->library, o->path, &id, NULL, 0);
	if (rc < 0 && rc != -ENOENT) {
		log_err("tune: cannot withdraw %s: %s", o->path, rocmd_strerror(rc));
		return rc;
	}
	ROCMD_KILLPOINT("tune.withdraw.file");
	o->entries = 0;
	snprintf(o->state, sizeof(o->state), "%s", state);
	snprintf(o->detail, sizeof(o->detail), "%.250s", reason);
	/* The environment is worked out from the rows, so the row comes before
	 * it; a crash between them leaves the variable naming an empty file,
	 * which the next start's recovery unsets. */
	rc = rocmd_tune_override_put(t->odb, o, rocmd_now_ms());
	ROCMD_KILLPOINT("tune.withdraw.db");
	if (rc == 0 && was_live) {
		rc = tune_override_env_sync(t);
		ROCMD_KILLPOINT("tune.withdraw.env");
	}
	return rc;
}

struct wd_ctx {
	const char *target, *kind;
	struct rocmd_tune_override o[8];
	int n;
};

static int
wd_cb(const struct rocmd_tune_override *o, void *ctx)
{
	struct wd_ctx *w = ctx;

	if (strcmp(o->target, w->target) == 0 && (w->kind == NULL || !strcmp(o->library, w->kind)) &&
	    w->n < 8)
		w->o[w->n++] = *o;
	return 0;
}

int
tune_override_withdraw(struct rocmd_tune *t, const char *target, const char *kind,
                       const char *state, const char *reason)
{
	struct wd_ctx *w = calloc(1, sizeof(*w));
	int rc = 0, n = 0;

	if (w == NULL)
		return ROCMD_ENOMEM;
	w->target = target;
	w->kind = kind;
	rocmd_tune_override_list(t->odb, wd_cb, w);
	for (int i = 0; i < w->n; i++) {
		int r;

		if (!strcmp(w->o[i].state, state) && w->o[i].entries == 0)
			continue;
		/* Off stays off: a library swap empties the file, the state stays. */
		r = withdraw_one(t, &w->o[i], !strcmp(w->o[i].state, "off") ? "off" : state,
		                 reason);
		if (r < 0 && rc == 0)
			rc = r;
		n += r == 0;
	}
	if (n > 0) {
		cJSON *d = cJSON_CreateObject();

		cJSON_AddStringToObject(d, "target", target);
		cJSON_AddStringToObject(d, "reason", reason);
		cJSON_AddNumberToObject(d, "withdrawn", n);
		rocmd_server_event(t->srv, "tune.withdrawn", d, "%s: %d override(s) %s: %s", target,
		                   n, state, reason);
	}
	free(w);
	return rc;
}

/* ---- recovery ---- */

struct rec_ctx {
	struct rocmd_tune_override *o;
	size_t n, cap;
};

static int
rec_cb(const struct rocmd_tune_override *o, void *ctx)
{
	struct rec_ctx *r = ctx;
	struct rocmd_tune_override *grown;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		if ((grown = realloc(r->o, r->cap * sizeof(*grown))) == NULL)
			return 1;
		r->o = grown;
	}
	r->o[r->n++] = *o;
	return 0;
}

/* Whether override O's library is still the one its entries were measured
 * on: 1 yes, 0 no (it changed, or is gone), and the new digest in NEW. */
static int
same_library(const struct rocmd_tune_override *o, const struct tune_target *tg,
             const struct vendor_override_id *id, char new_digest[65])
{
	return rocmd_tune_library_same(o->library, tg->library, tg->tensile_dir,
	                               id != NULL ? id->stat : NULL, o->lib_digest, new_digest);
}

int
rocmd_tune_library_same(const char *kind, const char *library, const char *tensile_dir,
                        const char *stat_seen, const char *digest_seen, char now_digest[65])
{
	char stat[17] = "", why[256];

	now_digest[0] = '\0';
	if (vendor_library_stat(vkind(kind), library, tensile_dir, stat, why, sizeof(why)) < 0)
		return 0;
	if (stat_seen != NULL && strcmp(stat, stat_seen) == 0)
		return 1;
	/* The files' times or sizes moved: their content decides. */
	if (vendor_library_digest(vkind(kind), library, tensile_dir, now_digest, why, sizeof(why)) <
	    0)
		return 0;
	return strcmp(now_digest, digest_seen) == 0;
}

void
tune_override_recover(struct rocmd_tune *t)
{
	struct rec_ctx r = {NULL, 0, 0};
	char *same;

	rocmd_tune_override_list(t->odb, rec_cb, &r);
	same = calloc(r.n + 1, 1);
	if (same == NULL) {
		free(r.o);
		return;
	}
	/* First every override whose library changed is withdrawn, so that a
	 * crash in what follows leaves none of them visible. */
	for (size_t i = 0; i < r.n; i++) {
		struct rocmd_tune_override *o = &r.o[i];
		struct vendor_override_id id;
		struct tune_target tg;
		char *text = NULL, digest[65], why[256];
		size_t len = 0;
		int have_id, found;

		if (!strcmp(o->state, "unsupported"))
			continue;
		found = tune_vendor_target_find(t, o->target, o->library, &tg) == 0;
		have_id = rocmd_fs_read_file(o->path, OVERRIDE_MAX, &text, &len) == 0 &&
		          vendor_override_identity(text, len, &id) == 0;
		free(text);
		if (found && same_library(o, &tg, have_id ? &id : NULL, digest)) {
			same[i] = 1;
			continue;
		}
		if (!found)
			snprintf(why, sizeof(why), "the target's %s is gone", o->library);
		else
			snprintf(why, sizeof(why), "the library changed (%.12s -> %.12s)", o->lib_digest,
			         digest[0] ? digest : "unreadable");
		if (o->entries > 0 ||
		    (strcmp(o->state, "withdrawn") != 0 && strcmp(o->state, "off") != 0))
			tune_override_withdraw(t, o->target, o->library, "withdrawn", why);
		if (found) {
			tune_vendor_stale(t, o->target, o->library, digest[0] ? digest : NULL, NULL,
			                  why);
			same[i] = 2;
		}
	}
	/* Then each file is written again from the jobs done on the library
	 * there is now (none: nothing is written): a crash between the file, the
	 * row and the environment leaves them agreeing after this. */
	for (size_t i = 0; i < r.n; i++)
		if (same[i])
			tune_override_refresh(t, r.o[i].target, r.o[i].library);
	free(same);
	free(r.o);
	if (r.n > 0)
		tune_override_env_sync(t);
}

/* ---- for the deploy jobs and the tune.* methods ---- */

void
rocmd_tune_withdraw_target(struct rocmd_tune *t, const char *target, const char *reason)
{
	static const char *const kinds[] = {"rocblas", "hipblaslt"};
	char why[300];

	if (t == NULL || target == NULL)
		return;
	snprintf(why, sizeof(why), "%.200s changes %.60s's library", reason, target);
	/* What programs see first: no override from here on. */
	tune_override_withdraw(t, target, NULL, "withdrawn", why);
	/* Its jobs are for the old library; the re-tunes, seeded with their
	 * winners, wait until the change is over (lib.* event). */
	for (int i = 0; i < 2; i++)
		tune_vendor_stale(t, target, kinds[i], NULL, NULL, why);
	for (int i = 0; i < t->nfence; i++)
		if (!strcmp(t->fence[i].target, target))
			t->fence[i].until_ms = rocmd_now_ms() + TUNE_FENCE_MS;
	if (!tune_fenced(t, target) && t->nfence < TUNE_FENCES) {
		snprintf(t->fence[t->nfence].target, sizeof(t->fence[0].target), "%s", target);
		t->fence[t->nfence++].until_ms = rocmd_now_ms() + TUNE_FENCE_MS;
	}
	if (t->running && !t->run.probe && !strcmp(t->run.job.target, target))
		tune_preempt(t, "the target's library is being replaced", uv_hrtime(), 0);
}

int
tune_fenced(struct rocmd_tune *t, const char *target)
{
	int64_t now = rocmd_now_ms();

	for (int i = 0; i < t->nfence; i++)
		if (!strcmp(t->fence[i].target, target) && t->fence[i].until_ms > now)
			return 1;
	return 0;
}

int
rocmd_tune_switch(struct rocmd_tune *t, const char *target, int on, int *changed, char *why,
                  size_t whylen)
{
	static const char *const kinds[] = {"rocblas", "hipblaslt"};
	struct rocmd_tune_override o;
	int found = 0, rc = 0;

	*changed = 0;
	for (int i = 0; i < 2; i++) {
		if (rocmd_tune_override_get(t->odb, target, kinds[i], &o) < 0)
			continue;
		found = 1;
		if (!on && strcmp(o.state, "off") != 0 && strcmp(o.state, "unsupported") != 0) {
			rc = tune_override_withdraw(t, target, kinds[i], "off",
			                            "switched off by rocmctl tune off");
			*changed += rc == 0;
		} else if (on && strcmp(o.state, "off") == 0) {
			/* Out of 'off' first, then written again from the jobs. */
			snprintf(o.state, sizeof(o.state), "withdrawn");
			snprintf(o.detail, sizeof(o.detail), "switched on again");
			rc = rocmd_tune_override_put(t->odb, &o, rocmd_now_ms());
			if (rc == 0)
				tune_override_refresh(t, target, kinds[i]);
			*changed += rc == 0;
		}
		if (rc < 0) {
			snprintf(why, whylen, "cannot switch %s's %s override: %s", target, kinds[i],
			         rocmd_strerror(rc));
			return rc;
		}
	}
	if (!found) {
		struct tune_target tg;

		if (tune_vendor_target_find(t, target, NULL, &tg) < 0) {
			snprintf(why, whylen, "no tuning target %s (rocmctl tune results lists them)",
			         target);
			return ROCMD_ENOTFOUND;
		}
		snprintf(why, whylen, "%s has no override yet", target);
	}
	return 0;
}

int
rocmd_tune_override_views(struct rocmd_tune *t, struct rocmd_tune_override_view **out, size_t *n)
{
	struct rec_ctx r = {NULL, 0, 0};
	struct rocmd_tune_override_view *v;

	*out = NULL;
	*n = 0;
	if (t == NULL)
		return 0;
	rocmd_tune_override_list(t->odb, rec_cb, &r);
	if (r.n == 0)
		return 0;
	if ((v = calloc(r.n, sizeof(*v))) == NULL) {
		free(r.o);
		return ROCMD_ENOMEM;
	}
	for (size_t i = 0; i < r.n; i++) {
		struct tune_target tg;
		v[i].o = r.o[i];
		v[i].found = tune_vendor_target_find(t, r.o[i].target, r.o[i].library, &tg) == 0;
		if (v[i].found) {
			snprintf(v[i].library, sizeof(v[i].library), "%s", tg.library);
			snprintf(v[i].tensile_dir, sizeof(v[i].tensile_dir), "%s", tg.tensile_dir);
		}
	}
	free(r.o);
	*out = v;
	*n = r.n;
	return 0;
}

int
rocmd_tune_override_read_id(const char *path, struct vendor_override_id *id)
{
	char *text = NULL;
	size_t len = 0;
	int rc = rocmd_fs_read_file(path, OVERRIDE_MAX, &text, &len);

	if (rc == 0)
		rc = vendor_override_identity(text, len, id) == 0 ? 0 : ROCMD_ECORRUPT;
	free(text);
	return rc;
}

void
rocmd_tune_override_recheck(struct rocmd_tune *t)
{
	if (t == NULL)
		return;
	tune_override_recover(t);
	/* The recovery syncs the environment only when rocmd has overrides: a
	 * variable left naming a file with none recorded is cleared here. */
	tune_override_env_sync(t);
}

static cJSON *
override_json(const struct rocmd_tune_override *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "target", o->target);
	cJSON_AddStringToObject(j, "library", o->library);
	cJSON_AddStringToObject(j, "lib_path", o->lib_path);
	cJSON_AddStringToObject(j, "lib_digest", o->lib_digest);
	cJSON_AddStringToObject(j, "arch", o->arch);
	cJSON_AddStringToObject(j, "device", o->device);
	cJSON_AddNumberToObject(j, "compute_units", (double)o->compute_units);
	cJSON_AddStringToObject(j, "driver", o->driver);
	cJSON_AddStringToObject(j, "path", o->path);
	cJSON_AddNumberToObject(j, "entries", (double)o->entries);
	cJSON_AddStringToObject(j, "state", o->state);
	cJSON_AddBoolToObject(j, "live", !strcmp(o->state, "live"));
	cJSON_AddStringToObject(j, "variable", o->variable);
	cJSON_AddStringToObject(j, "detail", o->detail);
	cJSON_AddNumberToObject(j, "updated_ms", (double)o->updated_ms);
	return j;
}

static int
ov_list_cb(const struct rocmd_tune_override *o, void *ctx)
{
	cJSON_AddItemToArray(ctx, override_json(o));
	return 0;
}

cJSON *
rocmd_tune_overrides(struct rocmd_tune *t)
{
	cJSON *a = cJSON_CreateArray();

	rocmd_tune_override_list(t->odb, ov_list_cb, a);
	return a;
}

int
rocmd_tune_override_state(struct rocmd_tune *t, const char *target, const char *library,
                          struct rocmd_tune_override *o)
{
	return rocmd_tune_override_get(t->odb, target, library, o);
}

int
rocmd_tune_entry_written(const struct rocmd_tune_job *j)
{
	int64_t sol = winner_sol(j->winner);

	return strcmp(j->state, "done") == 0 &&
	       (!strcmp(j->backend, "rocblas") ? sol > 0 : sol > 1) && j->best_hi_ms > 0 &&
	       j->default_lo_ms > 0 && j->best_hi_ms < j->default_lo_ms;
}
