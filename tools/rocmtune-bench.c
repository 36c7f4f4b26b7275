/*
 * `rocmtune bench-run`: one variant of `rocmctl bench` (client/cmd-bench.c)
 * measured in a process of its own, so that variants never share a device
 * context, a loaded library or a heap; the parent starts one per variant and
 * round, interleaved. It prints one JSON object on standard output (its
 * standard error is not read): the device, what the platform's sensors
 * report (kernels/sensors.h), and per problem the time, throughput, device
 * memory and energy, or why the problem did not run.
 *
 * Every variant is timed the tuner's way (kernels/measure.h: rotating input
 * sets, one run checked against a double-precision reference, a warm-up by
 * time, then --runs runs between their own pair of events: median, p20,
 * p80), on the same buffers and stream for every variant of a device:
 *
 *   --api      librocmd-gemm's public C API (rocmd_gemm()) on BACKEND (cpu,
 *              cuda), with the tuned library --tuned names (a library
 *              folder, or a folder of them: the first that opens on this
 *              device), or none: what an application linking it gets;
 *   otherwise  the vendor library's own default choice (SOL=0 of the vendor
 *              backends, kernels/vendor.h) of BACKEND (rocblas, hipblaslt,
 *              cublaslt), from --library and --tensile-dir (the parent sets
 *              ROCBLAS_TENSILE_LIBPATH for the vendor's original files).
 *
 * Energy per GEMM (--energy-ms, on a device with a sensor): an API variant's
 * GEMM runs back to back for that long after the timing, with the energy
 * counter read before and after, or the power sampled between calls; a
 * vendor variant's GEMM runs only inside measurements, so it is measured
 * again for that long and the mean power times its median time is its
 * energy (an estimate: the measurement's gaps between runs count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif

#include <cjson/cJSON.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/fs.h"
#include "kernels/measure.h"
#include "kernels/measure-proc.h"
#include "kernels/sensors.h"
#include "rocmd/rocmd-gemm.h"
#include "tools/rocmtune.h"

#define MAX_PROBLEMS 64

extern const struct cli_prog rocmtune_prog; /* rocmtune-table.c */

struct api {
	rocmd_gemm_t *h;
	struct gemm_bufs bufs; /* the last call's: the energy loop runs on them */
	int called;
};

static int
api_gemm(void *arg, const struct gemm_problem *p, const struct gemm_bufs *b)
{
	struct api *a = arg;

	a->bufs = *b;
	a->called = 1;
	return rocmd_gemm(a->h, (enum rocmd_gemm_dtype)p->dtype, (enum rocmd_gemm_op)p->ta,
	                  (enum rocmd_gemm_op)p->tb, p->m, p->n, p->k, p->alpha,
	                  (const void *)(uintptr_t)b->a, p->lda, (const void *)(uintptr_t)b->b,
	                  p->ldb, p->beta, (void *)(uintptr_t)b->c, p->ldc) < 0;
}

/* Opens the API on BACKEND with the library TUNED, or the first library
 * folder inside it that opens on the device; none at all when TUNED is NULL,
 * or when none opens (then NOTE says so: the defaults are what such an
 * application gets). */
static int
api_open(const char *tuned, const char *backend, int device, rocmd_gemm_t **h, char *used,
         size_t usedlen, char *note, size_t notelen, char *why, size_t whylen)
{
	struct rocmd_dir *d;
	struct rocmd_dirent *e;
	char sub[2048], first[512] = "";

	used[0] = '\0';
	if (tuned == NULL)
		return rocmd_gemm_open(NULL, backend, device, h, why, whylen);
	if (rocmd_gemm_open(tuned, backend, device, h, first, sizeof(first)) == 0) {
		snprintf(used, usedlen, "%s", tuned);
		return 0;
	}
	if ((d = rocmd_dir_open(tuned)) != NULL) {
		while ((e = rocmd_dir_read(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", tuned, e->d_name);
			if (rocmd_gemm_open(sub, backend, device, h, why, whylen) == 0) {
				snprintf(used, usedlen, "%.1000s", sub);
				rocmd_dir_close(d);
				return 0;
			}
		}
		rocmd_dir_close(d);
	}
	snprintf(note, notelen, "no tuned library in %s opens on the %s backend (%s): the defaults",
	         tuned, backend, first);
	return rocmd_gemm_open(NULL, backend, device, h, why, whylen);
}

/* GEMMs back to back for MS milliseconds: the energy each took. */
static int
energy_per_gemm(struct api *a, const struct gemm_problem *p, struct sensors *s, double ms,
                double *j)
{
	double t0 = measure_mono_ms(), t = t0, e0, e1, w, wsum = 0, last = -1e9;
	int counter = sensors_energy_j(s, &e0) == 0, n = 0, samples = 0;

	if (!counter && sensors_power_w(s, &w) < 0)
		return ROCMD_EUNSUPPORTED;
	while (t - t0 < ms || n == 0) {
		if (api_gemm(a, p, &a->bufs) != 0 || rocmd_gemm_synchronize(a->h) < 0)
			return ROCMD_EIO;
		n++;
		t = measure_mono_ms();
		if (!counter && t - last >= 20 && sensors_power_w(s, &w) == 0) {
			wsum += w;
			samples++;
			last = t;
		}
	}
	if (counter && sensors_energy_j(s, &e1) == 0 && e1 > e0)
		*j = (e1 - e0) / n;
	else if (samples > 0)
		*j = wsum / samples * (t - t0) / 1000.0 / n;
	else
		return ROCMD_EUNSUPPORTED;
	return 0;
}

/* A vendor variant's: its GEMM runs only inside measurements, so for MS
 * milliseconds it is measured again and again (time only), the device's mean
 * power over that time (from the energy counter, or sampled between
 * measurements) times the GEMM's median time MEDIAN_MS. */
static int
energy_vendor(struct measure *m, struct sensors *s, double ms, double median_ms, double *j)
{
	double t0 = measure_mono_ms(), t = t0, e0, e1, w, wsum = 0, rel;
	int counter = sensors_energy_j(s, &e0) == 0, samples = 0;
	struct tune_result r;

	if (!counter && sensors_power_w(s, &w) < 0)
		return ROCMD_EUNSUPPORTED;
	while (t - t0 < ms || samples == 0) {
		if (measure_local_eval(m, "SOL=0", TUNE_EVAL_TIME_ONLY, &r, &rel) < 0 ||
		    r.outcome != TUNE_OK)
			return ROCMD_EIO;
		t = measure_mono_ms();
		if (!counter && sensors_power_w(s, &w) == 0)
			wsum += w;
		samples++;
	}
	if (counter && sensors_energy_j(s, &e1) == 0 && e1 > e0)
		*j = (e1 - e0) / ((t - t0) / 1000.0) * median_ms / 1000.0;
	else if (!counter)
		*j = wsum / samples * median_ms / 1000.0;
	else
		return ROCMD_EUNSUPPORTED;
	return 0;
}

static void
add_num_or_null(cJSON *o, const char *key, int ok, double v)
{
	if (ok)
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* One problem on the opened measurement M: its object in the output. */
static cJSON *
bench_problem(struct measure *m, struct api *api, struct sensors *s, const char *key,
              double energy_ms)
{
	cJSON *o = cJSON_CreateObject();
	const struct space_def *space;
	struct gemm_problem p;
	struct tune_result r;
	struct rocmd_gemm_choice ch;
	char why[512] = "";
	double rel = -1, j = 0;
	int64_t mem0 = 0, mem1 = 0;
	int have_mem, rc;

	cJSON_AddStringToObject(o, "problem", key);
	rc = gemm_problem_parse(key, &p);
	if (rc < 0 || p.batch != 1) {
		cJSON_AddStringToObject(o, "outcome", "skipped");
		cJSON_AddStringToObject(o, "detail", rc < 0 ? "not a problem key"
		                                            : "batched GEMMs are not benched yet");
		return o;
	}
	have_mem = sensors_mem_used(s, &mem0) == 0;
	rc = measure_local_set_problem(m, &p, &space, why, sizeof(why));
	if (rc == 0 && api != NULL)
		rc = measure_local_eval_call(m, api_gemm, api, 0, &r, &rel);
	else if (rc == 0)
		rc = measure_local_eval(m, "SOL=0", 0, &r, &rel);
	have_mem = have_mem && sensors_mem_used(s, &mem1) == 0;
	if (rc < 0) {
		cJSON_AddStringToObject(o, "outcome", "error");
		cJSON_AddStringToObject(o, "detail", why[0] ? why : rocmd_strerror(rc));
		return o;
	}
	cJSON_AddStringToObject(o, "outcome", tune_outcome_name(r.outcome));
	if (r.outcome != TUNE_OK) {
		cJSON_AddStringToObject(o, "detail", r.detail);
		return o;
	}
	cJSON_AddNumberToObject(o, "median_ms", r.median_ms);
	cJSON_AddNumberToObject(o, "p20_ms", r.p20_ms);
	cJSON_AddNumberToObject(o, "p80_ms", r.p80_ms);
	cJSON_AddNumberToObject(o, "runs", r.runs);
	cJSON_AddNumberToObject(o, "gflops", gemm_flops(&p) / (r.median_ms * 1e6));
	add_num_or_null(o, "rel_err", rel >= 0, rel);
	add_num_or_null(o, "device_mem_bytes", have_mem, (double)(mem1 - mem0));
	if (api != NULL &&
	    rocmd_gemm_query(api->h, (enum rocmd_gemm_dtype)p.dtype, (enum rocmd_gemm_op)p.ta,
	                     (enum rocmd_gemm_op)p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, &ch) == 0) {
		cJSON_AddStringToObject(o, "how", ch.how == ROCMD_GEMM_EXACT     ? "exact"
		                                  : ch.how == ROCMD_GEMM_NEAREST ? "nearest"
		                                                                 : "default");
		cJSON_AddStringToObject(o, "config", ch.config);
	}
	if (energy_ms <= 0)
		rc = ROCMD_EUNSUPPORTED;
	else if (api != NULL)
		rc = api->called ? energy_per_gemm(api, &p, s, energy_ms, &j) : ROCMD_EUNSUPPORTED;
	else
		rc = energy_vendor(m, s, energy_ms, r.median_ms, &j);
	add_num_or_null(o, "energy_j", rc == 0, j);
	/* Why there is none: the platform has no sensor here, or measuring
	 * failed. */
	if (rc < 0)
		cJSON_AddStringToObject(o, "energy_why",
		                        sensors_power_w(s, &j) < 0 && sensors_energy_j(s, &j) < 0
		                            ? "not reported"
		                            : "not measured");
	return o;
}

int
rocmtune_bench_run(int argc, char **argv)
{
	struct cli_args c;
	struct tune_measure_opts mo;
	struct backend_device_info dev;
	const struct backend_ops *ops;
	struct measure *m = NULL;
	struct sensors *s = NULL;
	struct api api = {0};
	const char *backend, *tuned, *v;
	char why[1024] = "", hash[17], source[300], text[256], used[1024], note[1200] = "";
	char *list = NULL, *save = NULL;
	cJSON *out = cJSON_CreateObject(), *res = cJSON_CreateArray();
	int rc, device, apimode, n = 0;
	char *printed;

	if (cli_parse(&rocmtune_prog, argc, argv, &c, why, sizeof(why)) != CLI_OK)
		return 2; /* main() parsed the same line already */
	backend = cli_str(&c, "backend", "cpu");
	tuned = cli_str(&c, "tuned", NULL);
	device = (int)cli_int(&c, "device", 0);
	apimode = cli_has(&c, "api");
	memset(&mo, 0, sizeof(mo));
	mo.runs = (int)cli_int(&c, "runs", 9);
	mo.warmup_ms = cli_num(&c, "warmup", 0);
	mo.isolate = -1;
	snprintf(mo.library, sizeof(mo.library), "%s", cli_str(&c, "library", ""));
	snprintf(mo.tensile_dir, sizeof(mo.tensile_dir), "%s", cli_str(&c, "tensile-dir", ""));
	snprintf(mo.sysroot, sizeof(mo.sysroot), "%s", cli_str(&c, "sysroot", ""));
	cJSON_AddStringToObject(out, "variant", cli_str(&c, "variant", backend));
	cJSON_AddNumberToObject(out, "pid", (double)getpid());
	cJSON_AddStringToObject(out, "backend", backend);
	cJSON_AddBoolToObject(out, "api", apimode);
	sensors_open(backend, device, cli_str(&c, "sysroot", ""), &s, source, sizeof(source));
	cJSON_AddStringToObject(out, "sensors", source);
	if (s != NULL && sensors_driver(s, text, sizeof(text)) == 0)
		cJSON_AddStringToObject(out, "kernel_driver", text);
	if (s != NULL && sensors_clocks(s, text, sizeof(text)) == 0)
		cJSON_AddStringToObject(out, "clocks", text);
	rc = (ops = backend_find(backend)) == NULL ? ROCMD_EUNSUPPORTED : 0;
	if (rc < 0)
		snprintf(why, sizeof(why), "not available: backend '%s' is not in this build", backend);
	if (rc == 0 && apimode) {
		rc = api_open(tuned, backend, device, &api.h, used, sizeof(used), note, sizeof(note),
		              why, sizeof(why));
		if (rc == 0 && note[0] != '\0')
			cJSON_AddStringToObject(out, "note", note);
		if (rc == 0) {
			cJSON_AddStringToObject(out, "library", rocmd_gemm_describe(api.h));
			if (used[0] != '\0')
				cJSON_AddStringToObject(out, "tuned", used);
			else
				cJSON_AddNullToObject(out, "tuned");
		}
	}
	if (rc == 0)
		rc = measure_local_open(ops, device, &mo, &m, &dev, hash, why, sizeof(why));
	if (rc < 0) {
		cJSON_AddStringToObject(out, "error", why[0] ? why : rocmd_strerror(rc));
		cJSON_AddBoolToObject(out, "unavailable", rc == ROCMD_EUNSUPPORTED);
		goto out;
	}
	cJSON_AddStringToObject(out, "device", dev.name);
	cJSON_AddStringToObject(out, "arch", dev.arch);
	cJSON_AddStringToObject(out, "driver", dev.driver_version);
	cJSON_AddStringToObject(out, "runtime", dev.runtime_version);
	if (!apimode)
		cJSON_AddStringToObject(out, "library", dev.library);
	list = strdup(cli_str(&c, "problems", ""));
	for (v = list != NULL ? strtok_r(list, ",", &save) : NULL; v != NULL && n < MAX_PROBLEMS;
	     v = strtok_r(NULL, ",", &save), n++)
		cJSON_AddItemToArray(res, bench_problem(m, apimode ? &api : NULL, s, v,
		                                        cli_num(&c, "energy-ms", 200)));
out:
#ifndef _WIN32
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			cJSON_AddNumberToObject(out, "peak_rss_kib", (double)ru.ru_maxrss);
	}
#endif
	cJSON_AddItemToObject(out, "results", res);
	printed = cJSON_PrintUnformatted(out);
	if (printed != NULL)
		puts(printed);
	free(printed);
	free(list);
	cJSON_Delete(out);
	if (m != NULL)
		measure_local_close(m);
	if (api.h != NULL)
		rocmd_gemm_close(api.h);
	sensors_close(s);
	return rc == ROCMD_EUNSUPPORTED ? 3 : rc < 0 ? 1 : 0;
}
