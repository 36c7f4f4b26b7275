/*
 * The tune scheduler's vendor targets (see tune-sched.c): the libraries whose
 * own solutions rocmd tunes for the programs that load them, and the jobs
 * queued for them.
 *
 * A target is a deploy target's name ("sdk-3", as deploy names an SDK's
 * rocBLAS) with the vendor libraries of that place: each present SDK's
 * rocBLAS (discovery's rocblas_binary) with the Tensile library discovery
 * found for it, and the hipBLASLt beside it (libhipblaslt.so.N in the same
 * folder, its tables in hipblaslt/library); each application's private copy
 * of deploy.app_targets ("app-NAME", deploy's name for it), with the
 * hipBLASLt beside it; plus the libraries of config key tune.libraries
 * ("KIND:PATH,...", targets "lib-KIND-N"). Paths here are host
 * paths (under --root); the environment and the overrides name system paths.
 *
 * Jobs come from three places, each recorded as the job's source: a capture
 * or an imported log (`tune.add_shapes`: the shapes as the program called
 * them, with their call counts), and the built-in LLM shape families
 * (kernels/families.h) when tune.families is on. The queue runs the vendor
 * job of the largest expected saving (calls x time per call) first.
 */
#include "tune-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "daemon/core/server.h"
#include "daemon/deploy/deploy-service.h"
#include "daemon/sdk/sdk.h"
#include "daemon/sdk/sysroot.h"
#include "db/db-sdk.h"
#include "kernels/families.h"
#include "kernels/vendor-log.h"

static int
exists(const char *path)
{
	struct rocmd_fsinfo fi;

	return path[0] != '\0' && rocmd_fsinfo_get(path, 1, &fi) == 0 && fi.type == ROCMD_FS_FILE;
}

static void
dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(out, len, ".");
	else
		snprintf(out, len, "%.*s", (int)(slash - path), path);
}

/* The first libhipblaslt.so.N (or the unversioned one) in folder DIR. */
static int
find_hipblaslt(const char *dir, char *out, size_t len)
{
	for (int v = -1; v < 10; v++) {
		if (v < 0)
			rocmd_fs_fmt(out, len, "%s/libhipblaslt.so", dir);
		else
			rocmd_fs_fmt(out, len, "%s/libhipblaslt.so.%d", dir, v);
		if (exists(out))
			return 0;
	}
	out[0] = '\0';
	return ROCMD_ENOTFOUND;
}

#define WALK_SEEN 64

struct walk {
	struct rocmd_tune *t;
	int (*cb)(const struct tune_target *tg, void *ctx);
	void *ctx;
	int rc;
	/* The library files met so far (resolved): one file is one target,
	 * whether discovery or the configuration names it. */
	char seen[WALK_SEEN][512];
	int nseen;
};

static int
emit(struct walk *w, struct tune_target *tg)
{
	char real[1024];

	if (rocmd_fs_realpath(tg->library, real, sizeof(real)) < 0)
		snprintf(real, sizeof(real), "%s", tg->library);
	for (int i = 0; i < w->nseen; i++)
		if (strcmp(w->seen[i], real) == 0)
			return w->rc;
	if (w->nseen < WALK_SEEN)
		snprintf(w->seen[w->nseen++], sizeof(w->seen[0]), "%.511s", real);
	if (w->rc == 0)
		w->rc = w->cb(tg, w->ctx);
	return w->rc;
}

/* Emits rocBLAS target TG, then the hipBLASLt beside it (libhipblaslt.so.N
 * in the same folder, its tables where it looks for them itself) under the
 * same name; 1 to stop the walk. */
static int
emit_rocblas(struct walk *w, struct tune_target *tg)
{
	char dir[1024];

	if (emit(w, tg) != 0)
		return 1;
	dir_of(tg->library, dir, sizeof(dir));
	if (find_hipblaslt(dir, tg->library, sizeof(tg->library)) != 0)
		return 0;
	snprintf(tg->kind, sizeof(tg->kind), "hipblaslt");
	tg->tensile_dir[0] = '\0';
	dir_of(tg->sys_library, dir, sizeof(dir));
	rocmd_fs_fmt(tg->sys_library, sizeof(tg->sys_library), "%s/%s", dir,
	             strrchr(tg->library, '/') + 1);
	return emit(w, tg) != 0;
}

static int
sdk_targets(const struct rocmd_db_sdk *s, void *arg)
{
	struct walk *w = arg;
	const char *root = w->t->root[0] ? w->t->root : NULL;
	struct tune_target tg;

	if (strcmp(s->state, "present") != 0 || s->rocblas_binary == NULL ||
	    rocmd_sysroot_is_windows_path(s->path))
		return 0;
	memset(&tg, 0, sizeof(tg));
	snprintf(tg.name, sizeof(tg.name), "sdk-%lld", (long long)s->id);
	snprintf(tg.kind, sizeof(tg.kind), "rocblas");
	snprintf(tg.sys_library, sizeof(tg.sys_library), "%s", s->rocblas_binary);
	snprintf(tg.sdk_version, sizeof(tg.sdk_version), "%s", s->version ? s->version : "");
	if (rocmd_sysroot_map(root, s->rocblas_binary, tg.library, sizeof(tg.library)) < 0 ||
	    !exists(tg.library))
		return 0;
	if (s->lib_path != NULL)
		rocmd_sysroot_map(root, s->lib_path, tg.tensile_dir, sizeof(tg.tensile_dir));
	return emit_rocblas(w, &tg);
}

/* An application's private copy (deploy.app_targets): its rocBLAS, as the
 * deploy target of the same name ("app-NAME"), and the hipBLASLt beside it. */
static int
app_target(const struct rocmd_deploy_app_view *a, void *arg)
{
	struct walk *w = arg;
	struct tune_target tg;

	if (a->windows || a->host_bin[0] == '\0' || !exists(a->host_bin))
		return 0;
	memset(&tg, 0, sizeof(tg));
	snprintf(tg.name, sizeof(tg.name), "%s", a->name);
	snprintf(tg.kind, sizeof(tg.kind), "rocblas");
	snprintf(tg.library, sizeof(tg.library), "%s", a->host_bin);
	snprintf(tg.sys_library, sizeof(tg.sys_library), "%s", a->sys_bin);
	snprintf(tg.tensile_dir, sizeof(tg.tensile_dir), "%s", a->host_lib);
	snprintf(tg.sdk_version, sizeof(tg.sdk_version), "%s", a->sdk_version);
	return emit_rocblas(w, &tg);
}

/* The entries of tune.libraries: "KIND:PATH,KIND:PATH". */
static void
config_targets(struct walk *w)
{
	const char *s = w->t->cfg->tune_libraries;
	int count[3] = {0, 0, 0};

	while (s != NULL && *s != '\0' && w->rc == 0) {
		size_t n = strcspn(s, ",");
		char entry[520], *colon;
		struct tune_target tg;
		int k;

		snprintf(entry, sizeof(entry), "%.*s", (int)n, s);
		s += n + (s[n] == ',');
		colon = strchr(entry, ':');
		if (colon == NULL)
			continue;
		*colon = '\0';
		k = !strcmp(entry, "rocblas")     ? 0
		    : !strcmp(entry, "hipblaslt") ? 1
		    : !strcmp(entry, "cublaslt")  ? 2
		                                  : -1;
		if (k < 0)
			continue;
		memset(&tg, 0, sizeof(tg));
		snprintf(tg.name, sizeof(tg.name), "lib-%.9s-%d", entry, ++count[k]);
		snprintf(tg.kind, sizeof(tg.kind), "%.9s", entry);
		snprintf(tg.library, sizeof(tg.library), "%s", colon + 1);
		snprintf(tg.sys_library, sizeof(tg.sys_library), "%s", colon + 1);
		if (exists(tg.library))
			emit(w, &tg);
	}
}

int
tune_vendor_targets(struct rocmd_tune *t, int (*cb)(const struct tune_target *tg, void *ctx),
                    void *ctx)
{
	struct walk *w = calloc(1, sizeof(*w));
	struct rocmd_sdk_db *db = t->srv->sdk != NULL ? rocmd_sdk_db(t->srv->sdk) : NULL;

	int rc;

	if (w == NULL)
		return ROCMD_ENOMEM;
	w->t = t;
	w->cb = cb;
	w->ctx = ctx;
	if (db != NULL)
		rocmd_sdk_db_list(db, 0, NULL, sdk_targets, w);
	if (w->rc == 0 && t->srv->deploy != NULL)
		rocmd_deploy_svc_apps(t->srv->deploy, app_target, w);
	if (w->rc == 0)
		config_targets(w);
	rc = w->rc > 0 ? 0 : w->rc;
	free(w);
	return rc;
}

struct find {
	const char *name, *kind;
	struct tune_target *out;
	int found;
};

static int
find_cb(const struct tune_target *tg, void *ctx)
{
	struct find *f = ctx;

	if (strcmp(tg->name, f->name) != 0 || (f->kind != NULL && strcmp(tg->kind, f->kind) != 0))
		return 0;
	*f->out = *tg;
	f->found = 1;
	return 1;
}

int
tune_vendor_target_find(struct rocmd_tune *t, const char *name, const char *kind,
                        struct tune_target *out)
{
	struct find f = {name, kind, out, 0};

	memset(out, 0, sizeof(*out));
	tune_vendor_targets(t, find_cb, &f);
	return f.found ? 0 : ROCMD_ENOTFOUND;
}

/* The expected time of one call of P on a GPU when nothing measured it: its
 * flops at 10 TFLOP/s (a measured time replaces it once the job ran). */
static double
guess_ms(const struct gemm_problem *p)
{
	return gemm_flops(p) / 1e10;
}

int
tune_vendor_queue(struct rocmd_tune *t, const struct tune_target *tg,
                  const struct gemm_problem *p, int64_t calls, double ms, const char *source,
                  const char *detail, int64_t budget, int *created)
{
	struct rocmd_tune_job j;
	struct gemm_problem tight;
	int64_t id;
	int rc;

	*created = 0;
	memset(&j, 0, sizeof(j));
	snprintf(j.backend, sizeof(j.backend), "%s", tg->kind);
	snprintf(j.sdk, sizeof(j.sdk), "%s", t->sdk);
	snprintf(j.dtype, sizeof(j.dtype), "%s", gemm_dtype_name(p->dtype));
	snprintf(j.trans, sizeof(j.trans), "%c%c", p->ta == GEMM_T ? 'T' : 'N',
	         p->tb == GEMM_T ? 'T' : 'N');
	j.m = p->m;
	j.n = p->n;
	j.k = p->k;
	j.batch = p->batch;
	/* The layout as the program uses it; 0 where it is the tight one. */
	gemm_problem_init(&tight, p->dtype, p->ta, p->tb, p->m, p->n, p->k, p->batch);
	j.lda = p->lda != tight.lda ? p->lda : 0;
	j.ldb = p->ldb != tight.ldb ? p->ldb : 0;
	j.ldc = p->ldc != tight.ldc ? p->ldc : 0;
	if (p->batch > 1) {
		j.stride_a = p->stride_a != p->lda * gemm_cols_a(p) ? p->stride_a : 0;
		j.stride_b = p->stride_b != p->ldb * gemm_cols_b(p) ? p->stride_b : 0;
		j.stride_c = p->stride_c != p->ldc * p->n ? p->stride_c : 0;
	}
	j.alpha = p->alpha;
	j.beta = p->beta;
	snprintf(j.origin, sizeof(j.origin), "%s", strcmp(source, "family") ? "user" : "default");
	snprintf(j.source, sizeof(j.source), "%s", source);
	snprintf(j.detail, sizeof(j.detail), "%s", detail != NULL ? detail : "");
	snprintf(j.target, sizeof(j.target), "%s", tg->name);
	snprintf(j.library, sizeof(j.library), "%s", tg->library);
	j.calls = calls;
	j.est_ms = ms > 0 ? ms : guess_ms(p);
	j.budget = budget > 0 ? budget : t->cfg->tune_budget;
	rc = rocmd_tune_queue_add(t->q, &j, rocmd_now_ms(), &id, created);
	if (rc == 0 && *created && t->paused)
		rocmd_tune_queue_set_state(t->q, id, "paused", NULL, rocmd_now_ms());
	return rc;
}

struct family_ctx {
	struct rocmd_tune *t;
	int queued;
};

static int
family_cb(const struct tune_target *tg, void *ctx)
{
	static const enum gemm_dtype dts[] = {GEMM_FP16, GEMM_BF16, GEMM_FP32};
	struct family_ctx *fc = ctx;
	const int64_t *lists[] = {tune_family_decode, tune_family_prefill};

	/* Only where the tuning device is one the library runs on: an AMD GPU
	 * (the hip backend) for rocBLAS and hipBLASLt, an NVIDIA one for
	 * cuBLASLt. Captured and imported shapes are queued regardless. */
	if (strcmp(fc->t->backend, strcmp(tg->kind, "cublaslt") ? "hip" : "cuda") != 0)
		return 0;
	for (int gi = 0; tune_family_gemms[gi].family != NULL; gi++)
		for (int li = 0; li < 2; li++)
			for (int ti = 0; lists[li][ti] != 0; ti++)
				for (size_t di = 0; di < sizeof(dts) / sizeof(dts[0]); di++) {
					struct gemm_problem p;
					int created = 0;

					tune_family_problem(&tune_family_gemms[gi], lists[li][ti], dts[di], &p);
					if (tune_vendor_queue(fc->t, tg, &p, 0, 0, "family",
					                      tune_family_gemms[gi].family, 0, &created) == 0)
						fc->queued += created;
				}
	return 0;
}

void
tune_vendor_queue_families(struct rocmd_tune *t)
{
	struct family_ctx fc = {t, 0};

	if (!t->cfg->tune_families || !t->dev_known)
		return;
	tune_vendor_targets(t, family_cb, &fc);
	if (fc.queued > 0)
		log_notice("tune: %d LLM shape(s) queued for the vendor libraries", fc.queued);
}

/* ---- tune.add_shapes ---- */

struct shapes_ctx {
	struct rocmd_tune *t;
	const struct vendor_shapes *s;
	const char *source, *detail;
	int queued, existing, targets;
};

static int
shapes_cb(const struct tune_target *tg, void *ctx)
{
	struct shapes_ctx *sc = ctx;
	int used = 0;

	if (!strcmp(tg->kind, "cublaslt") && sc->t->dev_known && strcmp(sc->t->backend, "cuda"))
		return 0;
	for (size_t i = 0; i < sc->s->n; i++) {
		const struct vendor_shape *v = &sc->s->v[i];
		int created = 0;

		/* A shape is the library's that logged it; TunableOp's default either. */
		if (v->library[0] != '\0' && strcmp(v->library, tg->kind) != 0 &&
		    !(strcmp(tg->kind, "cublaslt") == 0 && !strcmp(v->library, "hipblaslt")))
			continue;
		if (v->library[0] == '\0' && !strcmp(tg->kind, "cublaslt"))
			continue;
		used = 1;
		if (tune_vendor_queue(sc->t, tg, &v->p, v->calls, v->ms, sc->source, sc->detail, 0,
		                      &created) == 0) {
			if (created)
				sc->queued++;
			else
				sc->existing++;
		}
	}
	sc->targets += used;
	return 0;
}

int
tune_vendor_add_shapes(struct rocmd_tune *t, const struct vendor_shapes *s, const char *source,
                       const char *detail, int *queued, int *existing, int *targets)
{
	struct shapes_ctx sc = {t, s, source, detail, 0, 0, 0};
	int rc = tune_vendor_targets(t, shapes_cb, &sc);

	*queued = sc.queued;
	*existing = sc.existing;
	*targets = sc.targets;
	if (rc == 0 && sc.queued > 0)
		tune_schedule(t);
	return rc;
}

int
tune_vendor_job_problem(const struct rocmd_tune_job *j, struct gemm_problem *p)
{
	int rc = tune_job_problem(j, p);

	if (rc < 0)
		return rc;
	if (j->lda > 0)
		p->lda = j->lda;
	if (j->ldb > 0)
		p->ldb = j->ldb;
	if (j->ldc > 0)
		p->ldc = j->ldc;
	if (p->batch > 1) {
		p->stride_a = j->stride_a > 0 ? j->stride_a : p->lda * gemm_cols_a(p);
		p->stride_b = j->stride_b > 0 ? j->stride_b : p->ldb * gemm_cols_b(p);
		p->stride_c = j->stride_c > 0 ? j->stride_c : p->ldc * p->n;
	}
	p->alpha = (float)j->alpha;
	p->beta = (float)j->beta;
	return gemm_problem_check(p, NULL, 0) == 0 ? 0 : ROCMD_EINVAL;
}

/* ---- a changed library or driver ---- */

struct vstale {
	struct rocmd_tune *t;
	const char *why;
	int queued;
};

/* A stale vendor job's seeded re-tune: the same shape for the same target,
 * its device and library learnt again when it runs. The tuner's seed set
 * takes this shape's winners under any earlier library (tune.h). */
static void
on_vendor_stale(const struct rocmd_tune_job *old, void *ctx)
{
	struct vstale *vs = ctx;
	struct rocmd_tune_job j = *old;
	int64_t id;
	int created;

	j.arch[0] = j.device[0] = j.driver[0] = j.lib_digest[0] = '\0';
	snprintf(j.sdk, sizeof(j.sdk), "%s", vs->t->sdk);
	snprintf(j.origin, sizeof(j.origin), "retune");
	j.seeded_from = old->id;
	snprintf(j.detail, sizeof(j.detail), "%.250s", vs->why);
	if (rocmd_tune_queue_add(vs->t->q, &j, rocmd_now_ms(), &id, &created) == 0 && created) {
		vs->queued++;
		if (vs->t->paused)
			rocmd_tune_queue_set_state(vs->t->q, id, "paused", NULL, rocmd_now_ms());
	}
}

int
tune_vendor_stale(struct rocmd_tune *t, const char *target, const char *kind,
                  const char *lib_digest, const char *driver, const char *why)
{
	struct vstale vs = {t, why, 0};
	int n = 0;
	cJSON *d;

	if (rocmd_tune_queue_stale_target(t->q, target, kind, lib_digest, driver, rocmd_now_ms(),
	                                  on_vendor_stale, &vs, &n) < 0) {
		log_err("tune: cannot mark %s's jobs stale: %s", target,
		        rocmd_tune_queue_errmsg(t->q));
		return 0;
	}
	if (n == 0)
		return 0;
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "target", target);
	cJSON_AddStringToObject(d, "library", kind);
	cJSON_AddStringToObject(d, "changed", why);
	cJSON_AddNumberToObject(d, "stale", n);
	cJSON_AddNumberToObject(d, "queued", vs.queued);
	rocmd_server_event(t->srv, "tune.stale", d,
	                   "%s %s: %s: %d tuning job(s) stale, %d seeded re-tune(s) queued", target,
	                   kind, why, n, vs.queued);
	snprintf(t->change.message, sizeof(t->change.message), "%.40s %.16s: %.180s", target, kind,
	         why);
	t->change.at_ms = rocmd_now_ms();
	t->change.stale = n;
	t->change.queued = vs.queued;
	return n;
}

void
tune_vendor_opened(struct rocmd_tune *t)
{
	struct run *r = &t->run;
	struct rocmd_tune_job *j = &r->job;
	struct rocmd_tune_override o;
	char why[256];

	rocmd_tune_queue_adopt(t->q, j->id, r->dev.arch, r->dev.name, r->dev.driver_version,
	                       r->dev.library_digest, rocmd_now_ms());
	snprintf(j->arch, sizeof(j->arch), "%s", r->dev.arch);
	snprintf(j->device, sizeof(j->device), "%s", r->dev.name);
	snprintf(j->driver, sizeof(j->driver), "%s", r->dev.driver_version);
	snprintf(j->lib_digest, sizeof(j->lib_digest), "%s", r->dev.library_digest);
	snprintf(why, sizeof(why), "%s is now %.12s under driver %.100s", j->backend,
	         r->dev.library_digest, r->dev.driver_version);
	/* The override first: it was measured on the old library or driver. */
	if (rocmd_tune_override_get(t->odb, j->target, j->backend, &o) == 0 &&
	    (strcmp(o.lib_digest, r->dev.library_digest) != 0 ||
	     strcmp(o.driver, r->dev.driver_version) != 0))
		tune_override_withdraw(t, j->target, j->backend, "withdrawn", why);
	tune_vendor_stale(t, j->target, j->backend, r->dev.library_digest, r->dev.driver_version,
	                  why);
}

/* ---- tune.add_shapes ---- */

static int
num(const cJSON *o, const char *key, double dflt, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (v == NULL || cJSON_IsNull(v)) {
		*out = dflt;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return ROCMD_EPARAMS;
	*out = v->valuedouble;
	return 0;
}

/* One element of the shapes array into V. */
static int
shape_from_json(const cJSON *o, struct vendor_shape *v, char *why, size_t whylen)
{
	static const char *const ints[] = {"m", "n", "k", "batch", "lda", "ldb", "ldc",
	                                   "stride_a", "stride_b", "stride_c", "calls"};
	const cJSON *lib = cJSON_GetObjectItemCaseSensitive(o, "library");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "trans");
	double d[11], alpha, beta, ms;
	enum gemm_dtype dtype;
	struct gemm_problem *p = &v->p;

	memset(v, 0, sizeof(*v));
	if (!cJSON_IsObject(o) || !cJSON_IsString(dt) || !cJSON_IsString(tr) ||
	    gemm_dtype_parse(dt->valuestring, &dtype) < 0 || strlen(tr->valuestring) != 2 ||
	    strspn(tr->valuestring, "NT") != 2) {
		snprintf(why, whylen, "each shape needs dtype (fp32, fp16, bf16) and trans (NN..TT)");
		return ROCMD_EPARAMS;
	}
	if (lib != NULL && !cJSON_IsNull(lib)) {
		if (!cJSON_IsString(lib) || (strcmp(lib->valuestring, "rocblas") &&
		                             strcmp(lib->valuestring, "hipblaslt") &&
		                             strcmp(lib->valuestring, "rocmd-gemm") &&
		                             lib->valuestring[0] != '\0')) {
			snprintf(why, whylen, "a shape's library is \"rocblas\", \"hipblaslt\", "
			                      "\"rocmd-gemm\" or \"\"");
			return ROCMD_EPARAMS;
		}
		snprintf(v->library, sizeof(v->library), "%s", lib->valuestring);
	}
	for (int i = 0; i < 11; i++)
		if (num(o, ints[i], i == 3 ? 1 : 0, &d[i]) < 0 || d[i] < 0 || d[i] > 1e12 ||
		    d[i] != (double)(int64_t)d[i]) {
			snprintf(why, whylen, "a shape's %s must be a whole number >= 0", ints[i]);
			return ROCMD_EPARAMS;
		}
	if (num(o, "alpha", 1, &alpha) < 0 || num(o, "beta", 0, &beta) < 0 ||
	    num(o, "ms", 0, &ms) < 0 || ms < 0) {
		snprintf(why, whylen, "a shape's alpha, beta and ms must be numbers");
		return ROCMD_EPARAMS;
	}
	if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[0] > 1 << 20 || d[1] > 1 << 20 ||
	    d[2] > 1 << 20 || d[3] < 1 || d[3] > 1 << 16) {
		snprintf(why, whylen, "a shape's m, n, k must be 1..1048576 and batch 1..65536");
		return ROCMD_EPARAMS;
	}
	gemm_problem_init(p, dtype, tr->valuestring[0] == 'T' ? GEMM_T : GEMM_N,
	                  tr->valuestring[1] == 'T' ? GEMM_T : GEMM_N, (int64_t)d[0], (int64_t)d[1],
	                  (int64_t)d[2], (int64_t)d[3]);
	if (d[4] > 0)
		p->lda = (int64_t)d[4];
	if (d[5] > 0)
		p->ldb = (int64_t)d[5];
	if (d[6] > 0)
		p->ldc = (int64_t)d[6];
	if (p->batch > 1) {
		p->stride_a = d[7] > 0 ? (int64_t)d[7] : p->lda * gemm_cols_a(p);
		p->stride_b = d[8] > 0 ? (int64_t)d[8] : p->ldb * gemm_cols_b(p);
		p->stride_c = d[9] > 0 ? (int64_t)d[9] : p->ldc * p->n;
	}
	p->alpha = (float)alpha;
	p->beta = (float)beta;
	if (gemm_problem_check(p, why, whylen) < 0)
		return ROCMD_EPARAMS;
	v->calls = (int64_t)d[10];
	v->ms = ms;
	return 0;
}

int
rocmd_tune_add_shapes(struct rocmd_tune *t, const cJSON *shapes, const char *source,
                      const char *detail, cJSON **result, char *why, size_t whylen)
{
	struct vendor_shapes s;
	const cJSON *o;
	int queued = 0, existing = 0, targets = 0, rc = 0, n = cJSON_GetArraySize(shapes);
	int own_queued = 0, own_existing = 0;

	if (strcmp(source, "capture") && strcmp(source, "log") && strcmp(source, "tunableop")) {
		snprintf(why, whylen, "param 'source' must be \"capture\", \"log\" or \"tunableop\"");
		return ROCMD_EPARAMS;
	}
	if (n < 1 || n > VENDOR_SHAPES_PER_CALL) {
		snprintf(why, whylen, "param 'shapes' holds 1 to %d shapes", VENDOR_SHAPES_PER_CALL);
		return ROCMD_EPARAMS;
	}
	memset(&s, 0, sizeof(s));
	s.v = calloc((size_t)n, sizeof(*s.v));
	if (s.v == NULL)
		return ROCMD_ENOMEM;
	s.cap = (size_t)n;
	cJSON_ArrayForEach(o, shapes)
	{
		char one[200];

		if ((rc = shape_from_json(o, &s.v[s.n], one, sizeof(one))) < 0) {
			snprintf(why, whylen, "shape %zu: %s", s.n + 1, one);
			break;
		}
		s.n++;
	}
	/* librocmd-gemm's calls run rocmd's kernels: jobs of the tuned library;
	 * the vendors' go to their targets (shapes_cb passes over the others). */
	if (rc == 0)
		rc = tune_add_own_shapes(t, &s, source, detail, &own_queued, &own_existing, why,
		                         whylen);
	if (rc == 0 && own_queued + own_existing < (int)s.n)
		rc = tune_vendor_add_shapes(t, &s, source, detail, &queued, &existing, &targets);
	free(s.v);
	if (rc < 0)
		return rc;
	*result = cJSON_CreateObject();
	cJSON_AddNumberToObject(*result, "shapes", n);
	cJSON_AddNumberToObject(*result, "queued", queued + own_queued);
	cJSON_AddNumberToObject(*result, "existing", existing + own_existing);
	cJSON_AddNumberToObject(*result, "targets", targets);
	cJSON_AddNumberToObject(*result, "kernel_jobs", own_queued + own_existing);
	if (targets == 0 && own_queued + own_existing < n)
		cJSON_AddStringToObject(*result, "note",
		                        "no rocBLAS or hipBLASLt on this machine to tune them for "
		                        "(an SDK with rocBLAS, or config key tune.libraries)");
	rocmd_server_counts_changed(t->srv);
	return 0;
}
