/*
 * Table and key/value printing for rocmctl: see output.h.
 */
#include "output.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/paths.h"

struct out_table {
	int ncols, nrows, cap;
	char **cells; /* nrows+1 rows (headers first) of ncols cells */
};

struct out_table *
out_table_new(int ncols, const char *const *headers)
{
	struct out_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->ncols = ncols;
	out_table_row(t, headers);
	return t;
}

void
out_table_row(struct out_table *t, const char *const *cells)
{
	if (t == NULL)
		return;
	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		char **n = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof(char *));
		if (n == NULL)
			return;
		t->cells = n;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = strdup(cells[i] != NULL ? cells[i] : "-");
	t->nrows++;
}

void
out_table_print(struct out_table *t, FILE *f)
{
	int *w;

	if (t == NULL)
		return;
	w = calloc((size_t)t->ncols, sizeof(int));
	if (w == NULL)
		return;
	for (int r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			int len = s != NULL ? (int)strlen(s) : 0;
			if (len > w[c])
				w[c] = len;
		}
	for (int r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			if (c == t->ncols - 1)
				fprintf(f, "%s\n", s != NULL ? s : "");
			else
				fprintf(f, "%-*s  ", w[c], s != NULL ? s : "");
		}
	}
	free(w);
}

void
out_table_free(struct out_table *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

void
out_kv(FILE *f, int n, const char *const *keys, const char *const *values)
{
	int w = 0;

	for (int i = 0; i < n; i++)
		if ((int)strlen(keys[i]) > w)
			w = (int)strlen(keys[i]);
	for (int i = 0; i < n; i++)
		fprintf(f, "%-*s  %s\n", w + 1, keys[i], values[i] != NULL ? values[i] : "-");
}

const char *
out_time(long long ms, char *buf, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	localtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

const char *
out_duration(long long s, char *buf, size_t len)
{
	if (s >= 86400)
		snprintf(buf, len, "%lldd %lldh", s / 86400, (s % 86400) / 3600);
	else if (s >= 3600)
		snprintf(buf, len, "%lldh %lldm", s / 3600, (s % 3600) / 60);
	else if (s >= 60)
		snprintf(buf, len, "%lldm %llds", s / 60, s % 60);
	else
		snprintf(buf, len, "%llds", s);
	return buf;
}

int
out_exit_for(int err)
{
	if (err == 0)
		return EXIT_OK;
	if (err == ROCMD_ECONNECT)
		return EXIT_UNREACHABLE;
	if (err == ROCMD_EPERM)
		return EXIT_DENIED;
	return EXIT_ERROR;
}

int
out_fail(int err, const char *why)
{
	fprintf(stderr, "rocmctl: %s\n", why != NULL && why[0] ? why : rocmd_strerror(err));
	return out_exit_for(err);
}

double
out_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

const char *
out_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : "-";
}

void
out_json(const cJSON *j)
{
	char *s = cJSON_Print(j);

	if (s != NULL)
		puts(s);
	free(s);
}

const char *
out_size(double bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
	return buf;
}

int
out_call(struct rocmd_client **client, const char *socket, const char *method, cJSON *params,
	 cJSON **result, rocmd_notify_fn on_notify, void *arg)
{
	char why[1024] = "", path[4096];
	int rc;

	if (*client == NULL) {
		if (socket != NULL)
			snprintf(path, sizeof(path), "%s", socket);
		else
			rocmd_paths_client_socket(path, sizeof(path));
		rc = rocmd_client_open(path, "rocmctl", client, NULL, why, sizeof(why));
		if (rc < 0) {
			cJSON_Delete(params);
			return out_fail(rc, why);
		}
	}
	rc = rocmd_client_call(*client, method, params, result, NULL, on_notify, arg, why,
			       sizeof(why));
	return rc < 0 ? out_fail(rc, why) : 0;
}

void
out_bar_clear(struct out_bar *b)
{
	if (b->drawn) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		b->drawn = 0;
	}
}

void
out_bar_text(struct out_bar *b, const char *fmt, ...)
{
	va_list ap;

	if (!b->on)
		return;
	fprintf(stderr, "\r\033[K");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	b->drawn = 1;
}

void
out_bar_draw(struct out_bar *b, int width, const char *label, double done, double total,
	     const char *tail, ...)
{
	char x[32], y[32];
	int cols = 30, fill = 0;
	va_list ap;

	if (!b->on)
		return;
	if (total > 0)
		fill = (int)(cols * (done < total ? done / total : 1.0));
	fprintf(stderr, "\r\033[K%-*s [", width, label);
	for (int i = 0; i < cols; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %3.0f%%  %s of %s  ", total > 0 ? 100.0 * done / total : 0,
		out_size(done, x, sizeof(x)), total > 0 ? out_size(total, y, sizeof(y)) : "?");
	va_start(ap, tail);
	vfprintf(stderr, tail, ap);
	va_end(ap);
	fflush(stderr);
	b->drawn = 1;
}
