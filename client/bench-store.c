/*
 * The caller's bench runs on disk (bench-store.h): one JSON file per run,
 * written durably (common/fs.h's replace), listed by id, which is the run's
 * start time, so that the folder's order is the runs' order.
 */
#include "bench-store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/paths.h"
#include "output.h"

#define RUN_MAX (16u << 20)

static const char *
env_dir(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

int
bench_store_dir(char *out, size_t len)
{
	const char *base;
	int n;

#ifdef _WIN32
	if ((base = env_dir("LOCALAPPDATA")) == NULL)
		return ROCMD_ENOTFOUND;
	n = snprintf(out, len, "%s\\rocmd\\bench", base);
#else
	if ((base = env_dir("XDG_STATE_HOME")) != NULL)
		n = snprintf(out, len, "%s/rocmd/bench", base);
	else if ((base = env_dir("HOME")) != NULL)
		n = snprintf(out, len, "%s/.local/state/rocmd/bench", base);
	else
		return ROCMD_ENOTFOUND;
#endif
	return n < 0 || (size_t)n >= len ? ROCMD_EINVAL : 0;
}

static int
id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64)
		return 0;
	for (; *id; id++)
		if (!((*id >= '0' && *id <= '9') || *id == '-'))
			return 0;
	return 1;
}

int
bench_store_save(cJSON *run, char *path, size_t pathlen, char *why, size_t whylen)
{
	char dir[3000], id[64], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	if (bench_store_dir(dir, sizeof(dir)) < 0) {
		snprintf(why, whylen, "no folder to store the run in ($XDG_STATE_HOME and $HOME unset)");
		return ROCMD_ENOTFOUND;
	}
	if ((rc = rocmd_paths_mkdir_p(dir, 0700)) < 0) {
		snprintf(why, whylen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
#ifdef _WIN32
	gmtime_s(&tm, &now);
#else
	gmtime_r(&now, &tm);
#endif
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	/* A second run in the same second gets -2, -3, ... */
	for (int i = 1; i < 100; i++) {
		if (i == 1)
			snprintf(id, sizeof(id), "%s", stamp);
		else
			snprintf(id, sizeof(id), "%s-%d", stamp, i);
		snprintf(path, pathlen, "%s/%s.json", dir, id);
		if (rocmd_fs_kind(path, NULL, NULL) == 0)
			break;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(run, "id");
	cJSON_AddStringToObject(run, "id", id);
	if ((rc = rocmd_fs_json_write(path, run)) < 0)
		snprintf(why, whylen, "%s: %s", path, rocmd_strerror(rc));
	return rc;
}

int
bench_store_load(const char *id, cJSON **out, char *why, size_t whylen)
{
	char dir[3000], path[3200];
	cJSON *j = NULL;
	int rc;

	*out = NULL;
	if (id_ok(id)) {
		if (bench_store_dir(dir, sizeof(dir)) < 0) {
			snprintf(why, whylen, "no bench folder ($XDG_STATE_HOME and $HOME unset)");
			return ROCMD_ENOTFOUND;
		}
		snprintf(path, sizeof(path), "%s/%s.json", dir, id);
	} else {
		snprintf(path, sizeof(path), "%s", id);
	}
	rc = rocmd_fs_json_read(path, &j);
	if (rc == -ENOENT) {
		snprintf(why, whylen, "no bench run '%s' (%s does not exist; rocmctl bench list)", id,
		         path);
		return ROCMD_ENOTFOUND;
	}
	if (rc == ROCMD_ECORRUPT) {
		snprintf(why, whylen, "bench run '%s': %s is not valid JSON (damaged or not a run)", id,
		         path);
		return rc;
	}
	if (rc < 0) {
		snprintf(why, whylen, "bench run '%s': %s: %s", id, path, rocmd_strerror(rc));
		return rc;
	}
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "problems")) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "variants")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "id"))) {
		snprintf(why, whylen, "bench run '%s': %s is JSON but not a bench run (no id, "
		         "variants or problems)", id, path);
		cJSON_Delete(j);
		return ROCMD_ECORRUPT;
	}
	*out = j;
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
bench_store_list(int readable_only, cJSON **out)
{
	char dir[3000], why[512], *names[4096];
	struct rocmd_dir *d;
	struct rocmd_dirent *e;
	int n = 0;

	*out = cJSON_CreateArray();
	if (bench_store_dir(dir, sizeof(dir)) < 0 || (d = rocmd_dir_open(dir)) == NULL)
		return 0;
	while ((e = rocmd_dir_read(d)) != NULL && n < 4096) {
		size_t len = strlen(e->d_name);

		if (len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
		    (names[n] = strndup(e->d_name, len - 5)) != NULL)
			n++;
	}
	rocmd_dir_close(d);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	for (int i = 0; i < n; i++) {
		cJSON *run;

		if (bench_store_load(names[i], &run, why, sizeof(why)) < 0) {
			run = NULL;
			if (!readable_only) {
				run = cJSON_CreateObject();
				cJSON_AddStringToObject(run, "id", names[i]);
				cJSON_AddStringToObject(run, "error", why);
			}
		}
		if (run != NULL)
			cJSON_AddItemToArray(*out, run);
		free(names[i]);
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
bench_stats(double *v, int n, double *median, double *lo, double *hi)
{
	if (n <= 0) {
		*median = *lo = *hi = 0;
		return;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

const char *
bench_fig(const cJSON *f, char *buf, size_t len)
{
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "median_ms")))
		return "failed";
	snprintf(buf, len, "%.4g ms [%.4g-%.4g]", out_num(f, "median_ms"), out_num(f, "lo_ms"),
	         out_num(f, "hi_ms"));
	return buf;
}

int
bench_within_noise(const cJSON *a, const cJSON *b)
{
	return out_num(a, "lo_ms") <= out_num(b, "hi_ms") && out_num(b, "lo_ms") <= out_num(a, "hi_ms");
}
