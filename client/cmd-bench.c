/*
 * rocmctl bench: the community's way of measuring a gain, automated. For the
 * chosen GEMM shapes (the workload the daemon captured from the user's
 * programs, else the LLM shape families, or the shapes given) each variant is
 * measured in a process of its own (`rocmtune bench-run`,
 * tools/rocmtune-bench.c), the variants interleaved round by round in
 * alternating order; the figure per shape is the median of the rounds'
 * medians, its spread the lowest and highest round. Which variants run
 * depends on the machine (choose_variants):
 *
 *   original  rocBLAS with the vendor's Tensile files from a deploy's backup
 *             (ROCBLAS_TENSILE_LIBPATH) against deployed (what is in place),
 *             wherever an SDK target has a deployed package and a backup;
 *   cuda      else on the daemon's NVIDIA device: cublas (cuBLASLt's own
 *             choice) against rocmd (librocmd-gemm with the daemon's tuned
 *             library);
 *   cpu       else: default (librocmd-gemm's CPU backend without a tuned
 *             library) against tuned (with the daemon's).
 *
 * The daemon is only read (status, tune.status, tune.results, lib.status).
 * Runs are stored as the caller's (bench-store.h); bench list, compare and
 * report read them (cmd-bench-runs.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <sys/utsname.h>
#endif

#include "bench-store.h"
#include "cmd.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/paths.h"
#include "common/spawn.h"
#include "kernels/families.h"
#include "kernels/gemm.h"
#include "version.h"

#ifdef _WIN32
#define bench_environ _environ /* the C runtime's, a macro there */
#else
extern char **environ;
#define bench_environ environ
#endif

#define MAX_PROBLEMS 64
#define MAX_VARIANTS 2
#define CHILD_OUT (1u << 20)
#define CHILD_TIMEOUT_MS (30 * 60 * 1000)

struct variant {
	char name[32];
	char backend[16];
	int api;
	char tuned[2048];  /* --tuned, "" for none */
	char library[2048];
	char tensile[2048];
	char env[2100]; /* one extra VAR=VALUE, "" for none */
	char why[512];  /* why it measures what it does */
	int dead;       /* could not run here: left out of the run */
	cJSON *pids, *info;
	double *ms[MAX_PROBLEMS]; /* per round */
	double *energy[MAX_PROBLEMS];
	int nms[MAX_PROBLEMS], nenergy[MAX_PROBLEMS];
	double mem[MAX_PROBLEMS];
	int have_mem[MAX_PROBLEMS];
	char fail[MAX_PROBLEMS][240];
	char how[MAX_PROBLEMS][16]; /* API variants: exact, nearest or default */
	char ewhy[MAX_PROBLEMS][16]; /* no energy: "not reported" or "not measured" */
};

struct bench {
	char problems[MAX_PROBLEMS][64];
	int nproblems;
	char source[160]; /* where the shapes came from */
	struct variant v[MAX_VARIANTS];
	int nv;
	cJSON *not_run; /* [{"variant", "why"}] */
	cJSON *daemon;  /* what the daemon said: version, state_dir, device, sdk */
};

/* ---- the shapes ---- */

static int
add_problem(struct bench *b, const struct gemm_problem *p)
{
	char key[64];

	if (b->nproblems >= MAX_PROBLEMS || gemm_problem_key(p, key, sizeof(key)) < 0)
		return 0;
	for (int i = 0; i < b->nproblems; i++)
		if (!strcmp(b->problems[i], key))
			return 0;
	snprintf(b->problems[b->nproblems++], sizeof(b->problems[0]), "%s", key);
	return 1;
}

/* "[TT:]MxNxK[,...]" in DT: 0, or a usage error's sentence in WHY. */
static int
parse_shapes(struct bench *b, const char *list, enum gemm_dtype dt, char *why, size_t whylen)
{
	char *copy = strdup(list), *save = NULL, *s;
	int rc = 0;

	for (s = copy != NULL ? strtok_r(copy, ",", &save) : NULL; s != NULL && rc == 0;
	     s = strtok_r(NULL, ",", &save)) {
		enum gemm_trans ta = GEMM_N, tb = GEMM_N;
		struct gemm_problem p;
		int64_t m, n, k, batch;

		if (strlen(s) > 3 && s[2] == ':' && strchr("NT", s[0]) && strchr("NT", s[1])) {
			ta = s[0] == 'T' ? GEMM_T : GEMM_N;
			tb = s[1] == 'T' ? GEMM_T : GEMM_N;
			s += 3;
		}
		if (gemm_shape_parse(s, &m, &n, &k, &batch) < 0 || batch != 1) {
			snprintf(why, whylen,
			         "--shapes: '%s' is not a shape: give captured, families or "
			         "[TT:]MxNxK[,...] (64x64x64, TN:4096x16x4096)",
			         s);
			rc = ROCMD_EINVAL;
			break;
		}
		gemm_problem_init(&p, dt, ta, tb, m, n, k, 1);
		if (gemm_problem_check(&p, why, whylen) < 0) {
			rc = ROCMD_EINVAL;
			break;
		}
		if (b->nproblems >= MAX_PROBLEMS) {
			snprintf(why, whylen, "--shapes: at most %d shapes", MAX_PROBLEMS);
			rc = ROCMD_EINVAL;
		}
		add_problem(b, &p);
	}
	free(copy);
	return rc;
}

/* The GEMMs the daemon knows from the user's programs (tune capture,
 * import-log): its vendor jobs, queued or finished, by their source. */
static void
captured_shapes(struct bench *b, const cJSON *jobs, const char *dtype)
{
	const cJSON *j;

	cJSON_ArrayForEach(j, jobs)
	{
		const char *src = out_str(j, "source"), *tt = out_str(j, "trans");
		struct gemm_problem p;
		enum gemm_dtype dt;
		int64_t m, n, k, batch;

		if (strcmp(src, "capture") && strcmp(src, "log") && strcmp(src, "tunableop"))
			continue;
		if (gemm_dtype_parse(out_str(j, "dtype"), &dt) < 0 ||
		    (dtype != NULL && strcmp(dtype, out_str(j, "dtype"))) ||
		    gemm_shape_parse(out_str(j, "shape"), &m, &n, &k, &batch) < 0 ||
		    out_num(j, "batch") > 1 || strlen(tt) != 2)
			continue;
		gemm_problem_init(&p, dt, tt[0] == 'T' ? GEMM_T : GEMM_N, tt[1] == 'T' ? GEMM_T : GEMM_N,
		                  m, n, k, 1);
		add_problem(b, &p);
	}
}

/* The families' layers at one decode and one prefill token count; on the CPU
 * at the decode count alone (a prefill GEMM takes seconds there). */
static void
family_shapes(struct bench *b, enum gemm_dtype dt, int cpu)
{
	static const int64_t tokens[] = {1, 512};

	for (int t = 0; t < (cpu ? 1 : 2); t++)
		for (const struct tune_family_gemm *g = tune_family_gemms; g->family != NULL; g++) {
			struct gemm_problem p;

			tune_family_problem(g, tokens[t], dt, &p);
			add_problem(b, &p);
		}
	snprintf(b->source, sizeof(b->source), "the LLM shape families (layers at %s)",
	         cpu ? "1 token" : "1 and 512 tokens");
}

/* ---- the daemon, read only ---- */

static cJSON *
daemon_call(struct rocmd_client *c, const char *method, char *why, size_t whylen)
{
	cJSON *r = NULL;

	if (c == NULL || rocmd_client_call(c, method, NULL, &r, NULL, NULL, NULL, why, whylen) < 0)
		return NULL;
	return r;
}

/* The rocBLAS target to compare: an SDK's, deployed, with its backup. */
static const cJSON *
deployed_target(const cJSON *lib)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(lib, "targets"))
	{
		const cJSON *dep = cJSON_GetObjectItemCaseSensitive(t, "deployed");
		const cJSON *bk = cJSON_GetObjectItemCaseSensitive(t, "backup");

		if (!strcmp(out_str(t, "kind"), "sdk") && cJSON_IsObject(dep) && cJSON_IsObject(bk) &&
		    strcmp(out_str(bk, "path"), "-") && strcmp(out_str(t, "binary"), "-"))
			return t;
	}
	return NULL;
}

static struct variant *
variant_add(struct bench *b, const char *name, const char *backend, int api)
{
	struct variant *v = &b->v[b->nv++];

	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->backend, sizeof(v->backend), "%s", backend);
	v->api = api;
	v->pids = cJSON_CreateArray();
	return v;
}

static void
not_run(struct bench *b, const char *name, const char *fmt, const char *arg)
{
	cJSON *o = cJSON_CreateObject();
	char why[600];

	snprintf(why, sizeof(why), fmt, arg);
	cJSON_AddStringToObject(o, "variant", name);
	cJSON_AddStringToObject(o, "why", why);
	cJSON_AddItemToArray(b->not_run, o);
}

/* Chooses the variants: rocBLAS's original against deployed where a deploy
 * with a backup of the originals exists; else by the daemon's tuning device
 * BACKEND: cuBLAS against rocmd on cuda, default against tuned on the CPU. */
static void
choose_variants(struct bench *b, const char *backend, const char *state_dir, const cJSON *lib)
{
	const cJSON *t = deployed_target(lib);
	char tuned[2048] = "";
	struct variant *v;

	if (state_dir != NULL)
		snprintf(tuned, sizeof(tuned), "%s/tuned", state_dir);
	if (t != NULL) {
		/* The SDK's binary both times (its HIP runtime is beside it, where the
		 * backend looks); the Tensile files are the backup's or those in place. */
		v = variant_add(b, "original", "rocblas", 0);
		snprintf(v->library, sizeof(v->library), "%s", out_str(t, "binary"));
		snprintf(v->tensile, sizeof(v->tensile), "%.2000s/library",
		         out_str(cJSON_GetObjectItemCaseSensitive(t, "backup"), "path"));
		snprintf(v->env, sizeof(v->env), "ROCBLAS_TENSILE_LIBPATH=%s", v->tensile);
		snprintf(v->why, sizeof(v->why), "rocBLAS with the vendor's files from the backup");
		v = variant_add(b, "deployed", "rocblas", 0);
		snprintf(v->library, sizeof(v->library), "%s", out_str(t, "binary"));
		snprintf(v->tensile, sizeof(v->tensile), "%s", out_str(t, "library"));
		snprintf(v->why, sizeof(v->why), "rocBLAS as deployed now (%s)", out_str(t, "name"));
		return;
	}
	if (!strcmp(backend, "hip")) {
		not_run(b, "original/deployed", "%s",
		        "no SDK target has a deployed package with a backup of the originals "
		        "(rocmctl lib status)");
		return;
	}
	if (!strcmp(backend, "cuda")) {
		v = variant_add(b, "cublas", "cublaslt", 0);
		snprintf(v->why, sizeof(v->why), "cuBLASLt's own choice (the vendor's library)");
		v = variant_add(b, "rocmd", "cuda", 1);
		snprintf(v->tuned, sizeof(v->tuned), "%s", tuned);
		snprintf(v->why, sizeof(v->why), "librocmd-gemm with the daemon's tuned library");
		return;
	}
	v = variant_add(b, "default", "cpu", 1);
	snprintf(v->why, sizeof(v->why), "librocmd-gemm's CPU backend, no tuned library");
	if (state_dir == NULL) {
		not_run(b, "tuned", "%s", "the daemon is unreachable: its tuned library is unknown");
		return;
	}
	v = variant_add(b, "tuned", "cpu", 1);
	snprintf(v->tuned, sizeof(v->tuned), "%s", tuned);
	snprintf(v->why, sizeof(v->why), "librocmd-gemm's CPU backend with the daemon's tuned library");
	not_run(b, "original/deployed", "%s",
	        "no rocBLAS target has a deployed package with a backup of the originals, and the "
	        "daemon's device is the CPU: no rocBLAS or cuBLAS to compare");
}

/* ---- running the children ---- */

static int
rocmtune_path(char *out, size_t len)
{
	const char *env = getenv("ROCMD_ROCMTUNE");

	if (env != NULL && env[0] != '\0') {
		snprintf(out, len, "%s", env);
		return 0;
	}
#ifdef _WIN32
	return rocmd_self_beside("rocmtune.exe", out, len);
#else
	return rocmd_self_beside("rocmtune", out, len);
#endif
}

/* One child for variant V: its JSON object, or NULL with WHY. */
static cJSON *
run_child(const char *exe, const struct bench *b, const struct variant *v, int runs, char *why,
          size_t whylen)
{
	char problems[MAX_PROBLEMS * 64 + 1] = "", runs_s[16], *out, **envp;
	const char *argv[24];
	int n = 0, ne = 0, status, rc;
	cJSON *j;

	for (int i = 0; i < b->nproblems; i++) {
		strcat(problems, i ? "," : "");
		strcat(problems, b->problems[i]);
	}
	snprintf(runs_s, sizeof(runs_s), "%d", runs);
	argv[n++] = exe;
	argv[n++] = "bench-run";
	argv[n++] = "--variant";
	argv[n++] = v->name;
	argv[n++] = "--backend";
	argv[n++] = v->backend;
	argv[n++] = "--problems";
	argv[n++] = problems;
	argv[n++] = "--runs";
	argv[n++] = runs_s;
	if (v->api)
		argv[n++] = "--api";
	if (v->tuned[0]) {
		argv[n++] = "--tuned";
		argv[n++] = v->tuned;
	}
	if (v->library[0]) {
		argv[n++] = "--library";
		argv[n++] = v->library;
	}
	if (v->tensile[0]) {
		argv[n++] = "--tensile-dir";
		argv[n++] = v->tensile;
	}
	argv[n] = NULL;
	for (char **e = bench_environ; e != NULL && *e != NULL; e++)
		ne++;
	envp = calloc((size_t)ne + 2, sizeof(*envp));
	out = malloc(CHILD_OUT);
	if (envp == NULL || out == NULL) {
		free(envp);
		free(out);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	ne = 0;
	for (char **e = bench_environ; e != NULL && *e != NULL; e++)
		if (strncmp(*e, "ROCBLAS_TENSILE_LIBPATH=", 24) != 0 || v->env[0] == '\0')
			envp[ne++] = *e;
	if (v->env[0])
		envp[ne++] = (char *)v->env;
	rc = rocmd_child_run((char *const *)argv, envp, CHILD_TIMEOUT_MS, out, CHILD_OUT, &status);
	free(envp);
	if (rc < 0) {
		snprintf(why, whylen, "%.900s bench-run: %s", exe, rocmd_strerror(rc));
		free(out);
		return NULL;
	}
	j = cJSON_Parse(out);
	if (j == NULL) {
		char what[64];

		rocmd_child_describe(status, what, sizeof(what));
		snprintf(why, whylen, "%.900s bench-run %s without a result (%s)", exe, what,
		         out[0] ? "output not JSON" : "no output");
	} else if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "error"))) {
		snprintf(why, whylen, "%s", out_str(j, "error"));
	}
	free(out);
	return j;
}

/* Takes the child's figures of one round into V. */
static void
take_round(struct bench *b, struct variant *v, const cJSON *j)
{
	const cJSON *r;

	cJSON_AddItemToArray(v->pids, cJSON_CreateNumber(out_num(j, "pid")));
	if (v->info == NULL) {
		v->info = cJSON_Duplicate(j, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(v->info, "results");
	} else if (out_num(j, "peak_rss_kib") > out_num(v->info, "peak_rss_kib")) {
		/* The peak over the rounds' processes. */
		cJSON_ReplaceItemInObjectCaseSensitive(v->info, "peak_rss_kib",
		                                       cJSON_CreateNumber(out_num(j, "peak_rss_kib")));
	}
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "results"))
	{
		int i;

		for (i = 0; i < b->nproblems && strcmp(b->problems[i], out_str(r, "problem")); i++)
			;
		if (i == b->nproblems)
			continue;
		if (strcmp(out_str(r, "outcome"), "ok") != 0) {
			snprintf(v->fail[i], sizeof(v->fail[i]), "%s: %s", out_str(r, "outcome"),
			         out_str(r, "detail"));
			continue;
		}
		v->ms[i][v->nms[i]++] = out_num(r, "median_ms");
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, "how")))
			snprintf(v->how[i], sizeof(v->how[i]), "%s", out_str(r, "how"));
		if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "energy_j")))
			v->energy[i][v->nenergy[i]++] = out_num(r, "energy_j");
		else
			snprintf(v->ewhy[i], sizeof(v->ewhy[i]), "%s", out_str(r, "energy_why"));
		if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "device_mem_bytes"))) {
			v->mem[i] = fmax(v->mem[i], out_num(r, "device_mem_bytes"));
			v->have_mem[i] = 1;
		}
	}
}

/* ---- the stored run ---- */

static void
add_env(cJSON *env, const struct bench *b)
{
	char buf[256];
	double load[3];

#ifndef _WIN32
	struct utsname u;

	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		cJSON_AddStringToObject(env, "os", buf);
		cJSON_AddStringToObject(env, "host", u.nodename);
	}
	if (getloadavg(load, 3) == 3) {
		snprintf(buf, sizeof(buf), "%.2f %.2f %.2f", load[0], load[1], load[2]);
		cJSON_AddStringToObject(env, "load", buf);
	}
#else
	(void)load;
	(void)buf;
	cJSON_AddStringToObject(env, "os", "Windows");
#endif
	cJSON_AddStringToObject(env, "rocmctl", ROCMD_VERSION_STRING);
	for (int i = 0; i < b->nv; i++) {
		const cJSON *in = b->v[i].info;
		static const char *keys[] = {"device", "arch", "driver", "runtime", "kernel_driver",
		                             "clocks", "sensors"};

		for (size_t k = 0; in != NULL && k < sizeof(keys) / sizeof(keys[0]); k++)
			if (cJSON_GetObjectItemCaseSensitive(env, keys[k]) == NULL &&
			    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(in, keys[k])))
				cJSON_AddStringToObject(env, keys[k], out_str(in, keys[k]));
	}
}

static cJSON *
run_json(struct bench *b, int rounds)
{
	cJSON *run = cJSON_CreateObject(), *vs = cJSON_CreateArray(), *ps = cJSON_CreateArray();
	cJSON *env = cJSON_CreateObject();

	cJSON_AddNumberToObject(run, "version", 1);
	cJSON_AddNumberToObject(run, "created_unix", (double)time(NULL));
	cJSON_AddStringToObject(run, "shapes", b->source);
	cJSON_AddNumberToObject(run, "rounds", rounds);
	add_env(env, b);
	if (b->daemon != NULL)
		cJSON_AddItemToObject(env, "daemon", cJSON_Duplicate(b->daemon, 1));
	cJSON_AddItemToObject(run, "environment", env);
	for (int i = 0; i < b->nv; i++) {
		struct variant *v = &b->v[i];
		cJSON *o;

		if (v->dead)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", v->name);
		cJSON_AddStringToObject(o, "backend", v->backend);
		cJSON_AddStringToObject(o, "what", v->why);
		cJSON_AddItemToObject(o, "pids", cJSON_Duplicate(v->pids, 1));
		if (v->info != NULL) {
			cJSON_AddStringToObject(o, "library", out_str(v->info, "library"));
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v->info, "tuned")))
				cJSON_AddStringToObject(o, "tuned", out_str(v->info, "tuned"));
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v->info, "note")))
				cJSON_AddStringToObject(o, "note", out_str(v->info, "note"));
			cJSON_AddNumberToObject(o, "peak_rss_kib", out_num(v->info, "peak_rss_kib"));
		}
		cJSON_AddItemToArray(vs, o);
	}
	cJSON_AddItemToObject(run, "variants", vs);
	cJSON_AddItemToObject(run, "not_run", cJSON_Duplicate(b->not_run, 1));
	for (int p = 0; p < b->nproblems; p++) {
		cJSON *o = cJSON_CreateObject(), *pv = cJSON_CreateObject();
		struct gemm_problem gp;

		gemm_problem_parse(b->problems[p], &gp);
		cJSON_AddStringToObject(o, "problem", b->problems[p]);
		cJSON_AddNumberToObject(o, "flops", gemm_flops(&gp));
		for (int i = 0; i < b->nv; i++) {
			struct variant *v = &b->v[i];
			cJSON *f, *s;
			double med, lo, hi;

			if (v->dead)
				continue;
			f = cJSON_CreateObject();
			s = cJSON_CreateArray();
			for (int k = 0; k < v->nms[p]; k++)
				cJSON_AddItemToArray(s, cJSON_CreateNumber(v->ms[p][k]));
			cJSON_AddItemToObject(f, "samples_ms", s);
			if (v->nms[p] == 0) {
				cJSON_AddStringToObject(f, "failed", v->fail[p][0] ? v->fail[p] : "did not run");
			} else {
				bench_stats(v->ms[p], v->nms[p], &med, &lo, &hi);
				cJSON_AddNumberToObject(f, "median_ms", med);
				cJSON_AddNumberToObject(f, "lo_ms", lo);
				cJSON_AddNumberToObject(f, "hi_ms", hi);
				cJSON_AddNumberToObject(f, "gflops", gemm_flops(&gp) / (med * 1e6));
			}
			if (v->how[p][0] != '\0')
				cJSON_AddStringToObject(f, "how", v->how[p]);
			if (v->nenergy[p] > 0) {
				bench_stats(v->energy[p], v->nenergy[p], &med, &lo, &hi);
				cJSON_AddNumberToObject(f, "energy_j", med);
			} else {
				cJSON_AddNullToObject(f, "energy_j");
				cJSON_AddStringToObject(f, "energy_why",
				                        v->ewhy[p][0] ? v->ewhy[p] : "not reported");
			}
			if (v->have_mem[p])
				cJSON_AddNumberToObject(f, "device_mem_bytes", v->mem[p]);
			else
				cJSON_AddNullToObject(f, "device_mem_bytes");
			cJSON_AddItemToObject(pv, v->name, f);
		}
		cJSON_AddItemToObject(o, "variants", pv);
		cJSON_AddItemToArray(ps, o);
	}
	cJSON_AddItemToObject(run, "problems", ps);
	return run;
}

/* ---- printing ---- */

/* A over B with both spreads: "1.23x", and whether the spreads overlap. */
static const char *
versus(const cJSON *a, const cJSON *b, char *buf, size_t len)
{
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "median_ms")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(b, "median_ms")))
		return "-";
	snprintf(buf, len, "%.2fx%s", out_num(a, "median_ms") / out_num(b, "median_ms"),
	         bench_within_noise(a, b) ? " (within the noise)" : "");
	return buf;
}

/* A variant's energy per GEMM, or why there is none. */
static void
energy(const cJSON *f, char *buf, size_t len)
{
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "energy_j")))
		snprintf(buf, len, "%.3g mJ", out_num(f, "energy_j") * 1e3);
	else
		snprintf(buf, len, "%s", out_str(f, "energy_why"));
}

static void
print_run(const cJSON *run)
{
	const cJSON *vs = cJSON_GetObjectItemCaseSensitive(run, "variants"), *v, *p;
	int two = cJSON_GetArraySize(vs) >= 2, nc = two ? 6 : 4;
	const char *h[6] = {"SHAPE"};
	char head[3][80], cell[6][120];
	struct out_table *t;

	snprintf(head[0], sizeof(head[0]), "%s", out_str(cJSON_GetArrayItem(vs, 0), "name"));
	snprintf(head[1], sizeof(head[1]), "%s", out_str(cJSON_GetArrayItem(vs, 1), "name"));
	snprintf(head[2], sizeof(head[2]), "%.38s/%.38s", head[0], head[1]);
	h[1] = head[0];
	if (two) {
		h[2] = head[1];
		h[3] = head[2];
	}
	h[nc - 2] = "GFLOP/S";
	h[nc - 1] = "ENERGY/GEMM";
	t = out_table_new(nc, h);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(run, "problems"))
	{
		const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "variants");
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(pv, head[0]);
		const cJSON *b = two ? cJSON_GetObjectItemCaseSensitive(pv, head[1]) : NULL;
		const cJSON *last = b != NULL ? b : a;
		const char *row[6];

		row[0] = out_str(p, "problem");
		row[1] = bench_fig(a, cell[1], sizeof(cell[1]));
		if (two) {
			row[2] = bench_fig(b, cell[2], sizeof(cell[2]));
			row[3] = versus(a, b, cell[3], sizeof(cell[3]));
		}
		snprintf(cell[4], sizeof(cell[4]), "%.3g", out_num(last, "gflops"));
		row[nc - 2] = cell[4];
		energy(a, cell[5], sizeof(cell[5]));
		if (two) {
			size_t n = strlen(cell[5]);

			snprintf(cell[5] + n, sizeof(cell[5]) - n, " / ");
			n = strlen(cell[5]);
			energy(b, cell[5] + n, sizeof(cell[5]) - n);
		}
		row[nc - 1] = cell[5];
		out_table_row(t, row);
	}
	out_table_print(t, stdout);
	out_table_free(t);
	if (two)
		printf("%s: %s's time over %s's (above 1: %s is faster); GFLOP/s is %s's; "
		       "energy %s's / %s's\n",
		       head[2], head[0], head[1], head[1], head[1], head[0], head[1]);
	cJSON_ArrayForEach(v, vs)
	{
		char rss[32];

		printf("ran: %s (%s), %d process(es), one per round, peak memory %s (the process's)\n",
		       out_str(v, "name"), out_str(v, "what"),
		       cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v, "pids")),
		       out_num(v, "peak_rss_kib") > 0
		           ? out_size(out_num(v, "peak_rss_kib") * 1024, rss, sizeof(rss))
		           : "not reported");
		if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "note")))
			printf("  %s\n", out_str(v, "note"));
	}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(run, "not_run"))
	printf("not run: %s: %s\n", out_str(v, "variant"), out_str(v, "why"));
}

/* ---- the commands ---- */

static void
bench_free(struct bench *b)
{
	for (int i = 0; i < b->nv; i++) {
		cJSON_Delete(b->v[i].pids);
		cJSON_Delete(b->v[i].info);
		for (int p = 0; p < MAX_PROBLEMS; p++) {
			free(b->v[i].ms[p]);
			free(b->v[i].energy[p]);
		}
	}
	cJSON_Delete(b->not_run);
	cJSON_Delete(b->daemon);
}

/* The daemon's view: its state folder, device, SDK, jobs and targets (every
 * call read-only). Unreachable: the reason in WHY, and nothing. */
static void
read_daemon(struct cmd_ctx *ctx, struct bench *b, cJSON **status, cJSON **tune, cJSON **results,
            cJSON **lib, char *why, size_t whylen)
{
	char path[4096];

	if (ctx->socket != NULL)
		snprintf(path, sizeof(path), "%s", ctx->socket);
	else
		rocmd_paths_client_socket(path, sizeof(path));
	if (rocmd_client_open(path, "rocmctl", &ctx->client, NULL, why, whylen) < 0) {
		ctx->client = NULL;
		return;
	}
	*status = daemon_call(ctx->client, "status", why, whylen);
	*tune = daemon_call(ctx->client, "tune.status", why, whylen);
	*results = daemon_call(ctx->client, "tune.results", why, whylen);
	*lib = daemon_call(ctx->client, "lib.status", why, whylen);
	b->daemon = cJSON_CreateObject();
	if (*status != NULL) {
		cJSON_AddStringToObject(b->daemon, "version", out_str(*status, "version"));
		cJSON_AddStringToObject(b->daemon, "state_dir", out_str(*status, "state_dir"));
	}
	if (*tune != NULL) {
		cJSON_AddItemToObject(b->daemon, "device", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(*tune, "device"), 1));
		cJSON_AddStringToObject(b->daemon, "sdk", out_str(*tune, "sdk"));
	}
}

int
cmd_bench(void *arg, const struct cli_args *a)
{
	struct cmd_ctx *ctx = arg;
	const char *shapes = cli_str(a, "shapes", "captured"), *dtype = cli_str(a, "dtype", NULL);
	int rounds = (int)cli_int(a, "rounds", 5), runs = (int)cli_int(a, "runs", 9), rc = 0;
	cJSON *status = NULL, *tune = NULL, *results = NULL, *lib = NULL, *run = NULL;
	char why[1024] = "", dwhy[1024] = "", exe[4096], path[4096];
	const char *backend = "cpu", *state_dir = NULL;
	struct bench b;
	enum gemm_dtype dt = GEMM_FP32;

	memset(&b, 0, sizeof(b));
	b.not_run = cJSON_CreateArray();
	if (dtype != NULL)
		gemm_dtype_parse(dtype, &dt);
	if (strcmp(shapes, "captured") && strcmp(shapes, "families") &&
	    parse_shapes(&b, shapes, dt, why, sizeof(why)) < 0) {
		bench_free(&b);
		return out_usage("%s", why);
	}
	if (rocmtune_path(exe, sizeof(exe)) < 0) {
		bench_free(&b);
		snprintf(why, sizeof(why), "rocmtune, which measures each variant, is not at %.900s "
		         "(ROCMD_ROCMTUNE names it)", exe[0] ? exe : "the folder of rocmctl");
		return out_error(EXIT_ERROR, why);
	}
	read_daemon(ctx, &b, &status, &tune, &results, &lib, dwhy, sizeof(dwhy));
	if (tune != NULL) {
		const char *be = out_str(cJSON_GetObjectItemCaseSensitive(tune, "device"), "backend");

		if (!strcmp(be, "cuda") || !strcmp(be, "hip"))
			backend = be;
	}
	if (status != NULL)
		state_dir = out_str(status, "state_dir");
	if (!strcmp(shapes, "captured")) {
		captured_shapes(&b, cJSON_GetObjectItemCaseSensitive(tune, "queue"), dtype);
		captured_shapes(&b, cJSON_GetObjectItemCaseSensitive(results, "jobs"), dtype);
		snprintf(b.source, sizeof(b.source), "captured from your programs (%d shape(s))",
		         b.nproblems);
		if (b.nproblems == 0 && cli_has(a, "shapes")) {
			rc = out_error(EXIT_NOTHING, ctx->client == NULL
			                                 ? "no captured workload: the daemon is unreachable"
			                                 : "no captured workload: the daemon knows no GEMM "
			                                   "of your programs (rocmctl tune capture)");
			goto out;
		}
		if (b.nproblems == 0) {
			family_shapes(&b, dt, !strcmp(backend, "cpu"));
			strncat(b.source, ", nothing captured yet",
			        sizeof(b.source) - strlen(b.source) - 1);
		}
	} else if (!strcmp(shapes, "families")) {
		family_shapes(&b, dt, !strcmp(backend, "cpu"));
	} else {
		snprintf(b.source, sizeof(b.source), "given: %s", shapes);
	}
	choose_variants(&b, backend, state_dir, lib);
	if (ctx->client == NULL)
		not_run(&b, "daemon",
		        "unreachable: %s; without its captured shapes, tuned library and device the "
		        "CPU variants stand in",
		        dwhy);
	if (b.nv == 0) {
		rc = out_error(EXIT_NOTHING, "no variant can run here (rocmctl bench --json says why)");
		goto out;
	}
	for (int i = 0; i < b.nv; i++)
		for (int p = 0; p < b.nproblems; p++) {
			b.v[i].ms[p] = calloc((size_t)rounds, sizeof(double));
			b.v[i].energy[p] = calloc((size_t)rounds, sizeof(double));
			if (b.v[i].ms[p] == NULL || b.v[i].energy[p] == NULL) {
				rc = out_fail(ROCMD_ENOMEM, "out of memory");
				goto out;
			}
		}
	ctx->bar.unit = "processes";
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < b.nv; k++) {
			/* Alternate the order: no variant always runs on a device the other warmed. */
			struct variant *v = &b.v[r % 2 ? b.nv - 1 - k : k];
			cJSON *j;

			if (v->dead)
				continue;
			if (ctx->bar.plain)
				fprintf(stderr, "rocmctl: bench: round %d of %d: %s\n", r + 1, rounds,
				        v->name);
			else
				out_bar_draw(&ctx->bar, 6, "bench", r * b.nv + k, rounds * b.nv,
				             "round %d of %d: %s", r + 1, rounds, v->name);
			j = run_child(exe, &b, v, runs, why, sizeof(why));
			if (j == NULL || cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "error"))) {
				out_bar_clear(&ctx->bar);
				not_run(&b, v->name, "%s", why);
				cJSON_Delete(j);
				/* A variant that cannot run here does not run again. */
				v->dead = 1;
				if (b.v[0].dead && (b.nv < 2 || b.v[1].dead)) {
					rc = out_error(EXIT_ERROR, why);
					goto out;
				}
				continue;
			}
			take_round(&b, v, j);
			cJSON_Delete(j);
		}
	out_bar_clear(&ctx->bar);
	run = run_json(&b, rounds);
	if (bench_store_save(run, path, sizeof(path), why, sizeof(why)) < 0) {
		rc = out_error(EXIT_ERROR, why);
		goto out;
	}
	if (ctx->json) {
		out_json(run);
	} else {
		const cJSON *env = cJSON_GetObjectItemCaseSensitive(run, "environment");

		printf("bench %s: %s (%s), %d round(s), load %s; shapes %s\n", out_str(run, "id"),
		       out_str(env, "device"), out_str(env, "driver"), rounds, out_str(env, "load"),
		       b.source);
		print_run(run);
		printf("stored: %s\n", path);
	}
out:
	cJSON_Delete(run);
	cJSON_Delete(status);
	cJSON_Delete(tune);
	cJSON_Delete(results);
	cJSON_Delete(lib);
	bench_free(&b);
	return rc;
}
