/*
 * Deploy's jobs (see deploy-service.h). Everything that reads the database
 * happens on the loop thread before a job is queued: the target resolved
 * (deploy-targets.c), the package chosen and its files turned into the
 * engine's file list with store objects as sources. The worker then asks who
 * holds the GPU or the target's files (gpu-users.h; the deploy.gpu_busy
 * policy refuses or defers), runs the engine, and inside the transaction the
 * GEMM smoke test (rocmd-rocblas-smoke in a child process). The done hook,
 * on the loop thread again, writes the outcome (db-deploy.h), emits the event
 * and shapes the client's reply.
 *
 * The engine's label in current.json ("pkg <id> <digest>" or "original") is
 * how start-up recovery brings the database in line with the disk after a
 * crash between the engine's commit and the database write.
 */
#include "deploy-jobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/spawn.h"
#include "daemon/core/server.h"
#include "daemon/pkg/pkg.h"
#include "daemon/sdk/sdk.h"
#include "daemon/tune/tune-sched.h"
#include "db/db-deploy.h"
#include "db/db-pkg.h"
#include "deploy-jobs-os.h"
#include "gpu-users.h"

static const struct rocmd_job_ops job_ops;

/* ---- a package as the engine's file list ---- */

struct pkg_meta {
	char name[256];
	char digest[72];
	char platform[8];
	char libdir[PATH_MAX];
	char binary[PATH_MAX];
	char lt_dir[PATH_MAX]; /* hipBLASLt's folder in the package, "" none */
	int rocblas;           /* 0: the package carries hipBLASLt's folder only */
	int found;
};

static int
pkg_row(const struct rocmd_db_pkg *p, void *arg)
{
	struct pkg_meta *m = arg;
	cJSON *id = cJSON_Parse(p->identity != NULL ? p->identity : "{}");
	const cJSON *lib = cJSON_GetObjectItemCaseSensitive(id, "library");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(id, "hipblaslt_library");

	m->found = 1;
	m->rocblas = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(id, "carries_rocblas"));
	deploy_copy(m->name, sizeof(m->name), p->name);
	deploy_copy(m->digest, sizeof(m->digest), p->digest);
	deploy_copy(m->platform, sizeof(m->platform), p->platform);
	deploy_copy(m->libdir, sizeof(m->libdir), cJSON_IsString(lib) ? lib->valuestring : "");
	deploy_copy(m->binary, sizeof(m->binary), p->binary);
	deploy_copy(m->lt_dir, sizeof(m->lt_dir), cJSON_IsString(lt) ? lt->valuestring : "");
	cJSON_Delete(id);
	return 0;
}

struct file_build {
	struct deploy_job *j;
	const struct pkg_meta *m;
	size_t cap, ltcap;
	int use_binary;
	int rc;
};

static void
file_free(struct rocmd_deploy_file *f)
{
	free((char *)f->path);
	free((char *)f->link);
	free((char *)f->source);
}

static int
fill_file(const char *store, struct rocmd_deploy_file *d, const struct rocmd_db_pkg_file *f,
          const char *rel)
{
	char src[PATH_MAX];

	memset(d, 0, sizeof(*d));
	d->kind = f->kind == 'l' ? ROCMD_DEPLOY_SYMLINK : ROCMD_DEPLOY_FILE;
	d->exec = f->exec;
	d->size = (uint64_t)f->size;
	d->path = strdup(rel);
	if (f->kind == 'l') {
		d->link = strdup(f->link != NULL ? f->link : "");
		return d->path != NULL && d->link != NULL ? 0 : ROCMD_ENOMEM;
	}
	deploy_copy(d->sha256, sizeof(d->sha256), f->sha256);
	if (rocmd_store_object_path(store, f->sha256, src, sizeof(src)) < 0)
		return ROCMD_EINVAL;
	d->source = strdup(src);
	return d->path != NULL && d->source != NULL ? 0 : ROCMD_ENOMEM;
}

/* Appends package file F as REL to the list *V (*N, *CAP). */
static int
file_add(const char *store, struct rocmd_deploy_file **v, size_t *n, size_t *cap,
         const struct rocmd_db_pkg_file *f, const char *rel)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void *p = realloc(*v, ncap * sizeof(**v));
		if (p == NULL)
			return ROCMD_ENOMEM;
		*v = p;
		*cap = ncap;
	}
	if (fill_file(store, &(*v)[*n], f, rel) < 0) {
		file_free(&(*v)[*n]);
		return ROCMD_ENOMEM;
	}
	(*n)++;
	return 0;
}

static int
file_one(const struct rocmd_db_pkg_file *f, void *arg)
{
	struct file_build *b = arg;
	struct deploy_job *j = b->j;
	size_t n = strlen(b->m->libdir), ln = strlen(b->m->lt_dir);

	if (b->m->binary[0] != '\0' && strcmp(f->path, b->m->binary) == 0) {
		if (!b->use_binary || f->kind != 'f' || j->binary != NULL)
			return 0;
		j->binary = calloc(1, sizeof(*j->binary));
		if (j->binary == NULL)
			return ROCMD_ENOMEM;
		return fill_file(j->ds->store, j->binary, f, "binary");
	}
	/* hipBLASLt's folder first: it is never part of rocBLAS's. */
	if (ln > 0 && strncmp(f->path, b->m->lt_dir, ln) == 0 && f->path[ln] == '/')
		return file_add(j->ds->store, &j->lt_files, &j->nlt_files, &b->ltcap, f,
		                f->path + ln + 1);
	if (!b->m->rocblas)
		return 0; /* hipBLASLt's folder alone: nothing of it is rocBLAS's */
	if (n == 0)
		return file_add(j->ds->store, &j->files, &j->nfiles, &b->cap, f, f->path);
	if (strncmp(f->path, b->m->libdir, n) == 0 && f->path[n] == '/')
		return file_add(j->ds->store, &j->files, &j->nfiles, &b->cap, f, f->path + n + 1);
	return 0; /* not part of the library folder (a readme, another binary) */
}

/* Fills J's file list from package J->pkg_id. */
static int
build_files(struct deploy_job *j, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = j->ds;
	struct pkg_meta m = {0};
	struct file_build b = {.j = j, .m = &m};
	int rc;

	rc = rocmd_pkg_db_list(ds->pdb, j->pkg_id, pkg_row, &m);
	if (rc < 0 || !m.found) {
		snprintf(why, whylen, "no package #%lld in the store", (long long)j->pkg_id);
		return ROCMD_ENOTFOUND;
	}
	deploy_copy(j->pkg_name, sizeof(j->pkg_name), m.name);
	deploy_copy(j->pkg_digest, sizeof(j->pkg_digest), m.digest);
	j->pkg_has_lt = m.lt_dir[0] != '\0';
	/* A package's binary replaces the target's only on the same platform. */
	b.use_binary = j->t.host_bin[0] != '\0' &&
	               (strcmp(m.platform, "any") == 0 || strcmp(m.platform, j->t.platform) == 0);
	rc = rocmd_pkg_db_files(ds->pdb, j->pkg_id, 0, 0, file_one, &b);
	if (rc < 0) {
		snprintf(why, whylen, "cannot read package #%lld's files: %s", (long long)j->pkg_id,
		         rocmd_strerror(rc));
		return rc;
	}
	j->lt_only = !m.rocblas;
	if (j->lt_only ? j->nlt_files == 0 : j->nfiles == 0) {
		snprintf(why, whylen, "package #%lld has no library files", (long long)j->pkg_id);
		return ROCMD_EINVAL;
	}
	if (j->nfiles > 1)
		qsort(j->files, j->nfiles, sizeof(*j->files), deploy_file_cmp);
	if (j->nlt_files > 1)
		qsort(j->lt_files, j->nlt_files, sizeof(*j->lt_files), deploy_file_cmp);
	deploy_files_fingerprint(j->files, j->nfiles, 1, j->fingerprint);
	snprintf(j->label, sizeof(j->label), "pkg %lld %s", (long long)j->pkg_id, m.digest);
	return 0;
}

void
deploy_job_free(struct deploy_job *j)
{
	for (size_t i = 0; i < j->nfiles; i++)
		file_free(&j->files[i]);
	free(j->files);
	for (size_t i = 0; i < j->nlt_files; i++)
		file_free(&j->lt_files[i]);
	free(j->lt_files);
	if (j->binary != NULL)
		file_free(j->binary);
	free(j->binary);
	rocmd_deploy_files_free(&j->loaded);
	rocmd_deploy_files_free(&j->ours);
	for (size_t i = 0; i < j->nmpaths; i++)
		free(j->mpaths[i]);
	free(j->mpaths);
	free(j->recover);
	rocmd_job_fini(&j->base);
	free(j);
}

struct deploy_job *
deploy_job_new(struct rocmd_deploy_service *ds, enum deploy_job_type type)
{
	struct deploy_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	if (rocmd_job_init(&j->base, &job_ops) < 0) {
		free(j);
		return NULL;
	}
	j->ds = ds;
	j->type = type;
	j->smoke_timeout_ms = (int)ds->srv->cfg->deploy_smoke_timeout_ms;
	j->gpu_busy_defer = strcmp(ds->srv->cfg->deploy_gpu_busy, "defer") == 0;
	return j;
}

static int
on_progress(const struct rocmd_deploy_progress *p, void *ctx)
{
	struct deploy_job *j = ctx;

	uv_mutex_lock(&j->base.lock);
	deploy_copy(j->step, sizeof(j->step), p->step);
	j->bytes_done = p->bytes_done;
	j->bytes_total = p->bytes_total;
	j->files_done = p->files_done;
	j->files_total = p->files_total;
	uv_mutex_unlock(&j->base.lock);
	return rocmd_job_canceled(&j->base);
}

static void
set_step(struct deploy_job *j, const char *step)
{
	uv_mutex_lock(&j->base.lock);
	deploy_copy(j->step, sizeof(j->step), step);
	uv_mutex_unlock(&j->base.lock);
}

/* The GEMM smoke test in a child; 0 unless it ran and failed. */
static int
smoke_run(struct deploy_job *j)
{
	struct rocmd_deploy_service *ds = j->ds;
	char *argv[5];
	char out[512] = "", crash[64];
	int status = 0, rc, n = 0;

	if (j->smoke_timeout_ms <= 0 || ds->smoke[0] == '\0') {
		j->smoke_state = 0;
		deploy_copy(j->smoke, sizeof(j->smoke), "not run (deploy.smoke_timeout_ms is 0)");
		return 0;
	}
	if ((j->t.windows && !rocmd_deploy_native_windows) || j->t.host_hip[0] == '\0' ||
	    j->t.host_smoke_bin[0] == '\0') {
		j->smoke_state = 2;
		deploy_copy(
		    j->smoke, sizeof(j->smoke),
		    j->t.windows && !rocmd_deploy_native_windows
		        ? "skipped: no GPU/runtime: not run for a Windows target on Linux"
		        : "skipped: no GPU/runtime: no HIP runtime or rocBLAS binary known");
		return 0;
	}
	argv[n++] = ds->smoke;
	argv[n++] = j->t.host_smoke_bin;
	argv[n++] = j->t.host_hip;
	/* An overlay's library is named only while it holds rocBLAS's files
	 * (a package of hipBLASLt's alone leaves the SDK's own serving). */
	if ((strcmp(j->t.kind, "overlay") == 0 && deploy_dir_has_files(j->t.host_lib)) ||
	    (strcmp(j->t.kind, "overlay") != 0 && j->t.host_bin[0] == '\0'))
		argv[n++] = j->t.host_lib;
	argv[n] = NULL;
	rc = rocmd_child_run(argv, NULL, j->smoke_timeout_ms, out, sizeof(out), &status);
	out[strcspn(out, "\n")] = '\0';
	if (rc == ROCMD_ETIMEDOUT) {
		j->smoke_state = 3;
		snprintf(j->smoke, sizeof(j->smoke),
		         "failed: the GEMM smoke test hung (over %d ms)", j->smoke_timeout_ms);
		return -1;
	}
	if (rc < 0) {
		j->smoke_state = 2;
		deploy_fmt(j->smoke, sizeof(j->smoke), "skipped: cannot run %s: %s", ds->smoke,
		           rocmd_strerror(rc));
		return 0;
	}
	if (rocmd_child_exit_code(status) == 0) {
		j->smoke_state = 1;
		deploy_copy(j->smoke, sizeof(j->smoke), out);
		return 0;
	}
	if (rocmd_child_exit_code(status) == 77) {
		j->smoke_state = 2;
		deploy_copy(j->smoke, sizeof(j->smoke), out);
		return 0;
	}
	j->smoke_state = 3;
	if (rocmd_child_crashed(status, crash, sizeof(crash)))
		snprintf(j->smoke, sizeof(j->smoke), "failed: the GEMM smoke test died (%s)%s%s",
		         crash, out[0] ? ": " : "", out);
	else
		snprintf(j->smoke, sizeof(j->smoke), "%s", out[0] ? out : "failed: no output");
	return -1;
}

static int
on_check(const struct rocmd_deploy_target *t, void *ctx, char *why, size_t whylen)
{
	struct deploy_job *j = ctx;

	set_step(j, "smoke");
	if (smoke_run(j) == 0)
		return 0;
	snprintf(why, whylen, "GEMM smoke test %s", j->smoke);
	return ROCMD_ECORRUPT;
}

/* Refuses (or defers) while anyone holds the GPU or the target's files. */
static int
check_users(struct deploy_job *j)
{
	struct rocmd_deploy_service *ds = j->ds;
	struct rocmd_gpu_users u;
	const char *paths[2];
	size_t n = 0;
	int rc;

	paths[n++] = j->t.host_lib;
	if (j->t.host_bin[0] != '\0')
		paths[n++] = j->t.host_bin;
	rc = rocmd_gpu_users_find(ds->root[0] ? ds->root : NULL, paths, n, &u);
	if (rc < 0 || u.n == 0)
		return 0;
	rocmd_gpu_users_describe(&u, j->users, sizeof(j->users));
	rocmd_gpu_users_free(&u);
	if (j->gpu_busy_defer) {
		j->deferred = 1;
		return ROCMD_EBUSY;
	}
	deploy_fmt(j->base.why, sizeof(j->base.why),
	           "refused: processes hold the GPU or %s's rocBLAS: %s (stop them, or set "
	           "deploy.gpu_busy to defer)",
	           j->t.name, j->users);
	return ROCMD_EBUSY;
}

/*
 * Runs recovery for target NAME now (it finishes or undoes from what is on
 * disk, idempotently), tried again every 2 s as a deploy is (on Windows a
 * recovery fails mostly because a file was in use for a moment). 0, with R
 * saying what it did; or the error, with WHY saying what stands in the way
 * (an immutable file: the chattr to run), and the journal stays.
 */
static int
recover_one(const char *state_dir, const char *name, struct rocmd_deploy_recovery *r, char *why,
            size_t whylen)
{
	for (int tries = 0;; tries++) {
		int rc = rocmd_deploy_recover(state_dir, name, r, why, whylen);
		if (rc == 0) {
			if (r->action != ROCMD_DEPLOY_RECOVER_NONE)
				log_notice("%s: %s", name, r->what);
			return 0;
		}
		if (tries >= rocmd_deploy_busy_retries) {
			log_warn("%s: recovery failed (%s); it runs again at the next start, or "
			         "with rocmctl lib recover",
			         name, why);
			return rc;
		}
		log_notice("%s: recovery failed (%s); trying again in 2 s", name, why);
		uv_sleep(2000);
	}
}

/*
 * Runs the engine; on Windows tries again while the target was in use (see
 * rocmd_deploy_busy_retries), every 2 s, unless the job is cancelled. A
 * failed run whose undo failed too leaves its journal, and so does an earlier
 * one (the engine then refuses with ROCMD_EBUSY): recovery runs at once, the
 * run is tried again once when it cleared an earlier journal, and when it
 * could not, the reply says what stands in the way and what to run.
 */
static int
run_engine(struct deploy_job *j, const struct rocmd_deploy_request *req)
{
	int rc, healed = 0, backup_made = 0;

	for (int tries = 0;; tries++) {
		struct rocmd_deploy_recovery r;
		char rwhy[1024];
		int rrc;

		memset(&j->res, 0, sizeof(j->res));
		rc = rocmd_deploy_run(req, &j->res, j->base.why, sizeof(j->base.why));
		/* A try that made the backup and then met a busy target leaves it
		 * to the next, which finds it made: the job made it. */
		backup_made |= j->res.backup_made;
		j->res.backup_made = backup_made;
		if (rc == 0 || j->res.committed)
			return rc;
		rrc = recover_one(req->state_dir, j->t.name, &r, rwhy, sizeof(rwhy));
		if (rrc < 0) {
			size_t l = strlen(j->base.why);
			deploy_fmt(
			    j->base.why + l, sizeof(j->base.why) - l,
			    "; recovering it failed: %s; once that is dealt with, run rocmctl "
			    "lib recover %s",
			    rwhy, j->t.name);
			return rc;
		}
		if (rc == ROCMD_EBUSY && r.action != ROCMD_DEPLOY_RECOVER_NONE && !healed) {
			healed = 1; /* an earlier run's journal, cleared just now */
			tries--;
			continue;
		}
		/* Busy as Windows says it (a sharing violation) or as errno does. */
		if ((rc != ROCMD_EBUSY && rc != -EBUSY) || tries >= rocmd_deploy_busy_retries)
			return rc;
		if (rocmd_job_canceled(&j->base))
			return rc;
		log_notice("%s: %s; trying again in 2 s (%d of %d)", j->t.name, j->base.why,
		           tries + 1, rocmd_deploy_busy_retries);
		uv_sleep(2000);
	}
}

/* lib.recover: recovery for each of the job's targets. */
static void
recover_work(struct deploy_job *j)
{
	const char *state = j->ds->srv->cfg->state_dir;

	set_step(j, "recover");
	for (size_t i = 0; i < j->nrecover; i++) {
		struct deploy_recover_item *it = &j->recover[i];
		it->rc = recover_one(state, it->name, &it->rec, it->why, sizeof(it->why));
		if (it->rc < 0 && j->base.rc == 0) {
			/* The file system's "operation not permitted" (an immutable
			 * file) is not the client's: the target stays refused. */
			j->base.rc = it->rc == ROCMD_EPERM ? ROCMD_EBUSY : it->rc;
			deploy_copy(j->base.why, sizeof(j->base.why), it->why);
		}
	}
}

static void
deploy_work(struct rocmd_job *b)
{
	struct deploy_job *j = (struct deploy_job *)b;
	struct rocmd_deploy_service *ds = j->ds;
	struct rocmd_deploy_request req = {0};

	j->deferred = 0;
	j->users[0] = '\0';
	if (j->type == JOB_RECOVER) {
		recover_work(j);
		return;
	}
	set_step(j, "plan");
	if (!(j->type == JOB_VERIFY) && (j->base.rc = check_users(j)) < 0)
		return;
	if (j->remove_overlay) {
		/* rocmd's own overlay folder holds nothing of the user's. */
		{
			req.state_dir = ds->srv->cfg->state_dir;
			deploy_target_engine(&j->t, &req.target);
			/* An empty library: rocBLAS then uses the SDK's own again
			 * (and hipBLASLt, its folder no longer named). */
			req.files = NULL;
			req.nfiles = 0;
			req.lt = req.target.lt_dir != NULL && deploy_exists(req.target.lt_dir);
			j->lt_state = req.lt ? LT_EMPTIED : LT_LEFT;
			req.label = "original";
			req.flags = ROCMD_DEPLOY_NO_BACKUP | ROCMD_DEPLOY_CREATE;
			req.progress = on_progress;
			req.ctx = j;
			j->base.rc =
			    rocmd_deploy_run(&req, &j->res, j->base.why, sizeof(j->base.why));
		}
		return;
	}
	req.state_dir = ds->srv->cfg->state_dir;
	deploy_target_engine(&j->t, &req.target);
	req.target.ours = j->ours.files;
	req.target.nours = j->ours.n;
	req.target.lt_ours = j->ours.lt_files;
	req.target.nlt_ours = j->ours.nlt;
	req.progress = on_progress;
	req.ctx = j;
	req.arch = j->arch[0] ? j->arch : NULL;
	if (strcmp(j->t.kind, "overlay") == 0 && j->type == JOB_DEPLOY) {
		/* rocmd's own folder: its parent is made here; the engine creates
		 * the library folder itself. */
		char parent[PATH_MAX];
		for (int i = 0; i < 2; i++) {
			const char *dir = i == 0 ? j->t.host_lib : j->t.ov_lt;
			if (dir[0] == '\0')
				continue;
			deploy_sys_dirname(dir, parent, sizeof(parent));
			if ((j->base.rc = rocmd_paths_mkdir_p(parent, 0755)) < 0) {
				deploy_fmt(j->base.why, sizeof(j->base.why), "cannot create %s: %s",
				           parent, rocmd_strerror(j->base.rc));
				return;
			}
		}
	}
	if (j->type == JOB_VERIFY) {
		/* An overlay of hipBLASLt's files alone: its empty rocBLAS folder
		 * is checked as such, the SDK's own rocBLAS serving the archs. */
		if (strcmp(j->t.kind, "overlay") == 0 && !deploy_dir_has_files(j->t.host_lib))
			req.arch = NULL;
		j->base.rc = rocmd_deploy_verify(req.state_dir, &req.target, req.arch, on_progress,
		                                 j, &j->vrep, j->base.why, sizeof(j->base.why));
		if (j->base.rc == 0 && smoke_run(j) < 0) {
			j->base.rc = ROCMD_ECORRUPT;
			snprintf(j->base.why, sizeof(j->base.why), "GEMM smoke test %s", j->smoke);
		}
		deploy_check_gpus(j);
		deploy_backups_verify(j);
		return;
	}
	if (j->type == JOB_ROLLBACK && strcmp(j->to, "original") == 0) {
		j->base.rc =
		    rocmd_deploy_backup_load_gen(req.state_dir, j->t.name, j->generation,
		                                 &j->loaded, j->base.why, sizeof(j->base.why));
		if (j->base.rc < 0)
			return;
		req.files = j->loaded.files;
		req.nfiles = j->loaded.n;
		req.binary = j->t.host_bin[0] != '\0' ? j->loaded.binary : NULL;
		req.label = "original";
		req.arch = NULL; /* the vendor's library may well lack the arch */
		req.flags = 0;
	} else {
		if ((j->base.rc = deploy_merge_hash(j)) < 0)
			return;
		req.files = j->files;
		req.nfiles = j->nfiles;
		req.binary = j->binary;
		req.label = j->label;
		req.check = on_check;
		req.flags = j->flags;
	}
	deploy_lt_choose(j, &req);
	if (j->lt_only && (j->base.rc = deploy_lt_only_request(j, &req)) < 0)
		return;
	j->base.rc = run_engine(j, &req);
	if (j->base.rc == 0 && j->lt_only)
		deploy_lt_only_fingerprint(j);
	if (j->base.rc == -EACCES && strcmp(j->t.kind, "overlay") != 0) {
		char dir[PATH_MAX];
		deploy_sys_dirname(j->t.host_bin[0] ? j->t.host_bin : j->t.host_lib, dir,
		                   sizeof(dir));
		rocmd_deploy_denied_hint(dir, j->base.why, sizeof(j->base.why));
	}
	if (j->base.rc < 0 && j->res.committed) {
		/* In place and verified; only the cleanup after the commit failed.
		 * Recovery finishes it now (or at the next start): the target holds
		 * the new content either way, and the database must say so. When
		 * it cannot (an immutable file), the reply says what to do. */
		struct rocmd_deploy_recovery r;
		char rwhy[1024];
		log_warn("%s: deployed, but the cleanup failed (%s); finishing it", j->t.name,
		         j->base.why);
		if (recover_one(req.state_dir, j->t.name, &r, rwhy, sizeof(rwhy)) < 0)
			deploy_fmt(
			    j->warning, sizeof(j->warning),
			    "deployed and verified, but the old library could not be removed: "
			    "%s; every later deploy to %s is refused until rocmctl lib recover "
			    "%s succeeds",
			    rwhy, j->t.name, j->t.name);
		j->base.rc = 0;
		j->base.why[0] = '\0';
	}
	if (j->base.rc == 0 && j->res.backup_retired > 0)
		deploy_backups_prune(j);
	if (j->base.rc == 0 && strcmp(j->t.kind, "overlay") != 0) {
		char why[256];
		if (rocmd_deploy_backup(req.state_dir, &req.target, 0, &j->binfo, why,
		                        sizeof(why)) < 0)
			memset(&j->binfo, 0, sizeof(j->binfo));
	}
}

/* Loop thread, after a recover job: history, events, and the database in
 * line with what each target now holds. */
static void
recover_done(struct deploy_job *j)
{
	struct rocmd_deploy_service *ds = j->ds;

	for (size_t i = 0; i < j->nrecover; i++) {
		const struct deploy_recover_item *it = &j->recover[i];
		struct deploy_row row;
		if (it->rc == 0 && it->rec.action == ROCMD_DEPLOY_RECOVER_NONE)
			continue;
		deploy_target_lookup(ds, it->name, &row);
		if (row.found) {
			struct rocmd_db_history h = {.target_id = row.id,
			                             .time_ms = rocmd_now_ms(),
			                             .action = "recover",
			                             .outcome = it->rc == 0 ? "ok" : "failed",
			                             .message =
			                                 it->rc == 0 ? it->rec.what : it->why};
			rocmd_deploy_db_history_add(ds->db, &h, NULL);
		}
		if (it->rc == 0)
			rocmd_server_event(ds->srv, "lib.recovered", NULL, "%s: %s", it->name,
			                   it->rec.what);
		else
			rocmd_server_event(ds->srv, "lib.recover_failed", NULL,
			                   "recovery of %s failed: %s", it->name, it->why);
	}
	if (deploy_reconcile_all(ds) > 0)
		deploy_unrecorded(ds);
}

/*
 * The engine committed, but the database could not record it (a full disk):
 * the client is told so (an error saying what is on disk), never a plain
 * success, and the database is brought in line as soon as it takes writes
 * again (deploy_unrecorded's timer; every start reconciles from
 * current.json too). WHAT is what is in place, with its verb ("package #3
 * (name) is").
 */
static void
unrecorded(struct deploy_job *j, const char *what)
{
	char dbwhy[256];

	deploy_copy(dbwhy, sizeof(dbwhy), rocmd_deploy_db_errmsg(j->ds->db));
	deploy_fmt(j->base.why, sizeof(j->base.why),
	           "%s in place at %s and verified, but the database could not record it "
	           "(%s): rocmd records it as soon as the database takes writes again (it tries "
	           "every %d s, and at each start); until then lib status shows what was there "
	           "before",
	           what, j->t.name, dbwhy[0] ? dbwhy : "database error", DEPLOY_RECORD_RETRY_S);
	j->base.rc = ROCMD_EDB;
	log_err("%s", j->base.why);
	rocmd_server_event(j->ds->srv, "lib.unrecorded", NULL, "%s", j->base.why);
	deploy_unrecorded(j->ds);
}

/* Records the outcome of a deploy or a rollback to a package; 0, or the
 * database's error. */
static int
record_deploy(struct deploy_job *j, cJSON *result)
{
	struct rocmd_deploy_service *ds = j->ds;
	struct rocmd_db_deployment d = {0};
	char *detail = cJSON_PrintUnformatted(result);
	int64_t dep_id = 0;
	int rc;

	d.target_id = j->target_id;
	d.package_id = j->pkg_id;
	d.package_name = j->pkg_name[0] ? j->pkg_name : NULL;
	d.package_digest = j->pkg_digest[0] ? j->pkg_digest : NULL;
	d.reason = j->reason;
	d.fingerprint = j->fingerprint[0] ? j->fingerprint : NULL;
	d.started_ms = j->base.started_ms;
	d.finished_ms = rocmd_now_ms();
	d.detail = detail;
	if (j->base.rc == 0) {
		d.state = "live";
		char msg[320];
		deploy_fmt(msg, sizeof(msg), "%s package #%lld %s%s%s%s%s",
		           j->type == JOB_ROLLBACK ? "rolled back to the previous" : "deployed",
		           (long long)j->pkg_id, j->pkg_name, j->nmpaths ? ", merged with " : "",
		           j->nmpaths ? j->merge_archs : "", j->nmpaths ? " from " : "",
		           j->nmpaths ? j->merge_from : "");
		rc = rocmd_deploy_db_record(
		    ds->db, &d, j->type == JOB_ROLLBACK ? "rolled_back" : "superseded",
		    j->type == JOB_ROLLBACK ? "rollback" : "deploy", "ok", msg, &dep_id);
	} else {
		d.state = "failed";
		rc = rocmd_deploy_db_record(
		    ds->db, &d, NULL, j->type == JOB_ROLLBACK ? "rollback" : "deploy",
		    j->base.rc == ROCMD_EBUSY ? "refused" : "failed", j->base.why, &dep_id);
	}
	if (rc < 0)
		log_err("%s: cannot record the deployment: %s", j->t.name,
		        rocmd_deploy_db_errmsg(ds->db));
	cJSON_free(detail);
	return rc;
}

static void
record_backup(struct deploy_job *j)
{
	struct rocmd_deploy_service *ds = j->ds;
	char path[PATH_MAX];
	int rc;

	if (!j->binfo.exists)
		return;
	snprintf(path, sizeof(path),
	         rocmd_deploy_native_windows ? "%s\\deploy\\%s\\backup" : "%s/deploy/%s/backup",
	         ds->srv->cfg->state_dir, j->t.name);
	if (j->res.backup_retired > 0) {
		char msg[256];
		rc = rocmd_deploy_db_backup_renew(ds->db, j->target_id, path, j->binfo.manifest,
		                                  (int64_t)j->binfo.files, (int64_t)j->binfo.bytes,
		                                  rocmd_now_ms());
		int rb = (j->flags & ROCMD_DEPLOY_NEW_ORIGINALS) != 0,
		    lt = (j->flags & ROCMD_DEPLOY_NEW_LT_ORIGINALS) != 0;
		snprintf(msg, sizeof(msg),
		         "new originals (%s) backed up; the earlier ones kept as backup.%d%s",
		         rb && lt ? "an update of rocBLAS's and hipBLASLt's libraries"
		         : lt     ? "an update of the hipBLASLt library"
		                  : "an SDK update",
		         j->res.backup_retired,
		         j->pruned > 0
		             ? "; older generations beyond deploy.keep_generations removed"
		             : "");
		struct rocmd_db_history h = {.target_id = j->target_id,
		                             .time_ms = rocmd_now_ms(),
		                             .action = "backup",
		                             .outcome = rc == 0 ? "ok" : "failed",
		                             .message = msg};
		rocmd_deploy_db_history_add(ds->db, &h, NULL);
		deploy_say(ds->srv, ROCMD_LOG_NOTICE, "lib.backup_renewed", NULL, "%s: %s",
		           j->t.name, msg);
		return;
	}
	rc = rocmd_deploy_db_backup_put(ds->db, j->target_id, path, j->binfo.manifest,
	                                (int64_t)j->binfo.files, (int64_t)j->binfo.bytes,
	                                j->binfo.adopted ? "rocblas_backup" : NULL, rocmd_now_ms());
	if (rc == 0) {
		struct rocmd_db_history h = {
		    .target_id = j->target_id,
		    .time_ms = rocmd_now_ms(),
		    .action = "backup",
		    .outcome = "ok",
		    .message = j->binfo.adopted ? "originals adopted from rocblas_backup"
		                                : "originals backed up"};
		rocmd_deploy_db_history_add(ds->db, &h, NULL);
	}
}

static void
job_done(struct deploy_job *j, cJSON **out)
{
	struct rocmd_deploy_service *ds = j->ds;
	cJSON *r = j->type == JOB_RECOVER ? deploy_recover_json(j) : deploy_result_json(j);
	struct rocmd_server *srv = ds->srv;

	if (j->type == JOB_RECOVER) {
		recover_done(j);
		goto finish;
	}
	if (j->type == JOB_VERIFY) {
		struct rocmd_db_history h = {.target_id = j->target_id,
		                             .time_ms = rocmd_now_ms(),
		                             .action = "verify",
		                             .outcome = j->base.rc == 0 ? "ok" : "failed",
		                             .message = j->base.rc == 0 ? "verified" : j->base.why};
		if (j->target_id > 0)
			rocmd_deploy_db_history_add(ds->db, &h, NULL);
		if (j->base.rc == 0) {
			deploy_say(srv, ROCMD_LOG_NOTICE, "lib.verified", cJSON_Duplicate(r, 1),
			           "%s verified: %llu files, GEMM smoke test %s", j->t.name,
			           (unsigned long long)j->vrep.files_checked,
			           j->smoke[0] ? j->smoke : "not run");
		} else {
			deploy_say(srv, ROCMD_LOG_WARNING, "lib.verify_failed",
			           cJSON_Duplicate(r, 1), "%s failed verification: %s", j->t.name,
			           j->base.why);
			if (j->base.rc == ROCMD_ECORRUPT && !j->backup_bad)
				deploy_queue_auto_rollback(ds, &j->t, j->target_id, j->base.why);
		}
		goto finish;
	}
	if (j->type == JOB_ROLLBACK && strcmp(j->to, "original") == 0) {
		char *detail = cJSON_PrintUnformatted(r);
		int rc = 0;
		if (j->base.rc == 0)
			rc = rocmd_deploy_db_end_live(
			    ds->db, j->target_id, rocmd_now_ms(),
			    strcmp(j->reason, "verify") == 0
			        ? "rolled back to the originals after a failed verification"
			        : "rolled back to the originals",
			    detail);
		cJSON_free(detail);
		if (j->base.rc == 0 && rc < 0 && rc != ROCMD_ENOTFOUND) {
			unrecorded(j, "the originals are");
		} else if (j->base.rc == 0) {
			deploy_say(srv, ROCMD_LOG_NOTICE, "lib.rolled_back", cJSON_Duplicate(r, 1),
			           "%s rolled back to the originals (%s)", j->t.name, j->reason);
		} else {
			struct rocmd_db_history h = {
			    .target_id = j->target_id,
			    .time_ms = rocmd_now_ms(),
			    .action = "rollback",
			    .outcome = j->base.rc == ROCMD_EBUSY ? "refused" : "failed",
			    .message = j->base.why};
			rocmd_deploy_db_history_add(ds->db, &h, NULL);
			deploy_say(
			    srv, ROCMD_LOG_WARNING, "lib.rollback_failed", cJSON_Duplicate(r, 1),
			    "%s: rollback to the originals failed: %s", j->t.name, j->base.why);
		}
		goto finish;
	}
	if (record_deploy(j, r) < 0 && j->base.rc == 0) {
		char what[320];
		/* unrecorded() first: it reads the database's message, which the
		 * backup's write would clear. */
		deploy_fmt(what, sizeof(what), "package #%lld (%s) is", (long long)j->pkg_id,
		           j->pkg_name);
		unrecorded(j, what);
		record_backup(j);
	} else if (j->base.rc == 0) {
		record_backup(j);
		char note[PATH_MAX + 200] = "";
		if (j->type == JOB_DEPLOY)
			deploy_lt_note(j, note, sizeof(note));
		if (strcmp(j->t.kind, "overlay") == 0)
			deploy_say(srv, ROCMD_LOG_NOTICE, "lib.deployed", cJSON_Duplicate(r, 1),
			           "package #%lld (%s) deployed to %s (%s); use it with %s%s",
			           (long long)j->pkg_id, j->pkg_name, j->t.name, j->reason,
			           cJSON_GetStringValue(
			               cJSON_GetObjectItemCaseSensitive(r, "environment")),
			           note);
		else
			deploy_say(srv, ROCMD_LOG_NOTICE, "lib.deployed", cJSON_Duplicate(r, 1),
			           "package #%lld (%s) %s to %s (%s); GEMM smoke test %s%s",
			           (long long)j->pkg_id, j->pkg_name,
			           j->type == JOB_ROLLBACK ? "restored" : "deployed", j->t.name,
			           j->reason, j->smoke[0] ? j->smoke : "not run", note);
		if (j->warning[0])
			rocmd_server_event(srv, "lib.recover_failed", NULL, "%s: %s", j->t.name,
			                   j->warning);
	} else {
		deploy_say(srv, ROCMD_LOG_WARNING,
		           j->base.rc == ROCMD_EBUSY ? "lib.refused" : "lib.deploy_failed",
		           cJSON_Duplicate(r, 1), "deploy of package #%lld to %s failed: %s",
		           (long long)j->pkg_id, j->t.name, j->base.why);
	}
finish:
	rocmd_server_counts_changed(srv);
	*out = r;
}

/* ---- the job's hooks ---- */

int
deploy_pkg_has_lt(struct rocmd_deploy_service *ds, int64_t pkg_id)
{
	struct pkg_meta m = {0};

	if (pkg_id <= 0 || rocmd_pkg_db_list(ds->pdb, pkg_id, pkg_row, &m) < 0)
		return 0;
	return m.lt_dir[0] != '\0';
}

/* Loop thread: whether the package live at J's target carries hipBLASLt's
 * folder (then a deploy without one puts hipBLASLt's originals back). */
static int
live_has_lt(struct deploy_job *j)
{
	struct deploy_row row;

	deploy_target_lookup(j->ds, j->t.name, &row);
	return row.found && deploy_pkg_has_lt(j->ds, row.live_pkg);
}

/* Loop thread, as the job starts: writes into an SDK are announced to
 * discovery, so they are not mistaken for an SDK update. */
static int
job_start(struct rocmd_job *b)
{
	struct deploy_job *j = (struct deploy_job *)b;
	struct rocmd_sdk *sdk = j->ds->srv->sdk;
	char dir[PATH_MAX];

	/* Idle tuning (issue 18): the vendor overrides measured on this target's
	 * library are withdrawn before the swap, so that no program reads them
	 * with another library (daemon/tune/tune-override.c). */
	if (j->type != JOB_VERIFY)
		rocmd_tune_withdraw_target(j->ds->srv->tune, j->t.name,
		                           j->type == JOB_ROLLBACK ? "a rollback" : "a deploy");
	if (j->type == JOB_VERIFY || strcmp(j->t.kind, "sdk") != 0 || sdk == NULL)
		return 0;
	deploy_sys_dirname(j->t.sys_lib, dir, sizeof(dir));
	j->suppress[0] = rocmd_sdk_suppress_begin(sdk, dir, 0);
	if (j->t.sys_lt[0] && (j->nlt_files > 0 || j->type == JOB_ROLLBACK || live_has_lt(j))) {
		/* hipBLASLt's folder, which the job may replace too. */
		deploy_sys_dirname(j->t.sys_lt, dir, sizeof(dir));
		j->suppress[2] = rocmd_sdk_suppress_begin(sdk, dir, 0);
	}
	if (j->t.sys_bin[0]) {
		/* The binary's folder holds hipBLASLt's and others' folders too. */
		deploy_sys_dirname(j->t.sys_bin, dir, sizeof(dir));
		j->suppress[1] = rocmd_sdk_suppress_begin(sdk, dir, 1);
	}
	return 0;
}

static void
suppress_end(struct deploy_job *j)
{
	for (int i = 0; i < 3; i++) {
		if (j->suppress[i] > 0 && j->ds->srv->sdk != NULL)
			rocmd_sdk_suppress_end(j->ds->srv->sdk, j->suppress[i]);
		j->suppress[i] = 0;
	}
}

static cJSON *
job_progress(struct rocmd_job *b)
{
	struct deploy_job *j = (struct deploy_job *)b;
	cJSON *p = cJSON_CreateObject();

	uv_mutex_lock(&j->base.lock);
	cJSON_AddStringToObject(p, "phase", j->step);
	cJSON_AddNumberToObject(p, "bytes_done", (double)j->bytes_done);
	cJSON_AddNumberToObject(p, "bytes_total", (double)j->bytes_total);
	cJSON_AddNumberToObject(p, "files_done", (double)j->files_done);
	cJSON_AddNumberToObject(p, "files_total", (double)j->files_total);
	uv_mutex_unlock(&j->base.lock);
	if (j->users[0])
		cJSON_AddStringToObject(p, "gpu_users", j->users);
	return p;
}

/* Loop thread, after the work: deploy.gpu_busy = defer waits and tries
 * again; anything else is recorded and answered. */
static int
job_finish(struct rocmd_job *b, cJSON **out)
{
	struct deploy_job *j = (struct deploy_job *)b;
	struct rocmd_server *srv = j->ds->srv;

	suppress_end(j);
	if (j->deferred && !srv->shutting_down) {
		if (b->deferrals == 0)
			rocmd_server_event(srv, "lib.deferred", NULL,
			                   "%s: waiting for %s to let go of the GPU", j->t.name,
			                   j->users);
		if (b->pending != NULL && rocmd_pending_alive(b->pending)) {
			cJSON *p = job_progress(b);
			cJSON_ReplaceItemInObject(p, "phase", cJSON_CreateString("deferred"));
			rocmd_pending_progress(b->pending, p);
		}
		return ROCMD_JOB_RETRY;
	}
	job_done(j, out);
	return 0;
}

static void
job_free_cb(struct rocmd_job *b)
{
	deploy_job_free((struct deploy_job *)b);
}

static const struct rocmd_job_ops job_ops = {
    .what = "deploy",
    .start = job_start,
    .work = deploy_work,
    .done = job_finish,
    .progress = job_progress,
    .free = job_free_cb,
};

/* ---- queueing ---- */

/* Prepares a deploy job of package PKG_ID (0: match) to target T. */
int
deploy_job_prepare(struct deploy_job *j, int64_t pkg_id, char *why, size_t whylen)
{
	struct rocmd_deploy_service *ds = j->ds;
	int rc;

	struct deploy_gpu_archs g;
	char all[512];

	deploy_gpu_archs(ds, &g);
	deploy_gpu_list(&g, all, sizeof(all));
	/* An application's copy has no discovery row: what its library in
	 * place serves is read now, so a merge can keep it (every GPU counts). */
	if (strcmp(j->t.kind, "app") == 0 && j->t.sdk_archs[0] == '\0')
		deploy_served_now(j->t.host_lib, j->t.sdk_archs, sizeof(j->t.sdk_archs));
	if (pkg_id > 0) {
		j->pkg_id = pkg_id;
	} else {
		char first[32];
		rc = deploy_match_package(ds, &j->t, &j->pkg_id, j->pkg_name, sizeof(j->pkg_name),
		                          first, sizeof(first), why, whylen);
		if (rc < 0)
			return rc;
	}
	/* The same checks for the package matching chose and the one named,
	 * for every GPU of the machine; an arch the package lacks that a merged
	 * library keeps passes (deploy-merge.c). */
	if ((rc = deploy_check_package(ds, &j->t, j->pkg_id, all,
	                               j->force | (j->dry_run || j->accept_loss ? DEPLOY_CHECK_LOSS : 0),
	                               !j->no_merge, j->merge_archs, sizeof(j->merge_archs), j->lost,
	                               sizeof(j->lost), why, whylen)) < 0)
		return rc;
	/* After the swap every GPU's arch is asked of the library, unless the
	 * arch check was forced; not those whose loss the user confirmed. */
	deploy_arch_minus((j->force & DEPLOY_CHECK_ARCH) ? "" : all, j->lost, j->arch,
	                  sizeof(j->arch));
	if ((rc = build_files(j, why, whylen)) < 0)
		return rc;
	j->flags = strcmp(j->t.kind, "overlay") == 0
	               ? ROCMD_DEPLOY_NO_BACKUP | ROCMD_DEPLOY_CREATE
	               : (j->t.windows ? ROCMD_DEPLOY_MANUAL_BACKUP : 0);
	if (strcmp(j->t.kind, "app") == 0 && !deploy_exists(j->t.host_lib))
		j->flags |= ROCMD_DEPLOY_CREATE;
	{
		struct deploy_row row;
		deploy_target_lookup(ds, j->t.name, &row);
		/* Each library's new originals, told by its own fingerprint. */
		if (deploy_originals_changed(ds, &j->t, &row))
			j->flags |= ROCMD_DEPLOY_NEW_ORIGINALS;
		if (j->t.host_lt[0] != '\0' && deploy_lt_originals_changed(ds, &j->t, &row))
			j->flags |= ROCMD_DEPLOY_NEW_LT_ORIGINALS;
		if (j->flags & (ROCMD_DEPLOY_NEW_ORIGINALS | ROCMD_DEPLOY_NEW_LT_ORIGINALS)) {
			/* What rocmd put there never becomes the vendor's (I1). */
			if ((rc = deploy_ours_load(ds, j->t.name, row.id, &j->ours)) < 0) {
				snprintf(why, whylen, "cannot read what rocmd deployed at %s: %s",
				         j->t.name, rocmd_strerror(rc));
				return rc;
			}
		}
	}
	if ((rc = deploy_merge_build(j, why, whylen)) < 0)
		return rc;
	if (j->dry_run)
		return 0; /* nothing recorded either */
	if ((rc = deploy_target_record(ds, &j->t, &j->target_id)) < 0) {
		snprintf(why, whylen, "cannot record the target: %s",
		         rocmd_deploy_db_errmsg(ds->db));
		return rc;
	}
	return 0;
}

int
deploy_job_submit(struct deploy_job *j, struct rocmd_conn *conn)
{
	struct rocmd_jobs *q = &j->ds->jobs;
	int rc = 0;

	if (conn != NULL) {
		if ((rc = rocmd_job_defer_reply(&j->base, conn)) < 0) {
			deploy_job_free(j);
			return rc;
		}
		if (rocmd_jobs_count(q) > 0) {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddStringToObject(p, "phase", "queued");
			rocmd_pending_progress(j->base.pending, p);
		}
	}
	rocmd_jobs_submit(q, &j->base);
	return rc;
}

static int
same_target(struct rocmd_job *b, void *name)
{
	/* The queue runs doctor's jobs too (doctor.c): only deploy jobs count. */
	return b->ops == &job_ops && strcmp(((struct deploy_job *)b)->t.name, name) == 0;
}

int
deploy_target_queued(struct rocmd_deploy_service *ds, const char *name)
{
	return rocmd_jobs_each(&ds->jobs, same_target, (void *)name);
}
