/*
 * Table and key/value printing for rocmctl: see output.h.
 */
#include "output.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/paths.h"
#include "common/spawn.h"

static struct {
	int json, colour, width;
} mode;

void
out_init(int json)
{
	const char *nc = getenv("NO_COLOR"), *cols = getenv("COLUMNS");
	int tty = isatty(STDOUT_FILENO);

	mode.json = json;
	mode.colour = !json && tty && (nc == NULL || nc[0] == '\0');
	mode.width = cols != NULL && atoi(cols) > 0 ? atoi(cols)
	             : tty                          ? out_term_columns(STDOUT_FILENO)
	                                            : 0;
}

int
out_width(void)
{
	return mode.width;
}

int
out_severity(const char *w)
{
	static const char *const good[] = {"ok",       "done",    "live",    "present",
	                                   "covered",  "clean",   "yes",     "written",
	                                   "deployed", "applied", "serving", NULL};
	static const char *const warn[] = {"queued",      "paused",  "running", "deferred", "stale",
	                                   "interrupted", "warning", "waiting", "idle",     NULL};
	static const char *const bad[] = {
	    "failed",  "error",   "removed", "NO",      "YES",         "NOT covered", "missing",
	    "corrupt", "unclean", "LOST",    "refused", "rolled back", NULL};
	const char *const *lists[] = {good, warn, bad};

	for (int s = 0; s < 3; s++)
		for (const char *const *x = lists[s]; *x != NULL; x++)
			if (strcmp(w, *x) == 0 || (strncmp(w, *x, strlen(*x)) == 0 &&
			                           (w[strlen(*x)] == ' ' || w[strlen(*x)] == ',')))
				return s + 1;
	return 0;
}

const char *
out_paint(const char *word, int severity, char *buf, size_t len)
{
	static const char *const sgr[] = {"", "32", "33", "1;31"};

	if (!mode.colour || severity <= 0 || severity > 3)
		return word;
	snprintf(buf, len, "\033[%sm%s\033[0m", sgr[severity], word);
	return buf;
}

struct out_table {
	int ncols, nrows, cap;
	char **cells;        /* nrows+1 rows (headers first) of ncols cells */
	unsigned state_cols; /* a bit per column: colour by severity */
};

void
out_table_state_col(struct out_table *t, int col)
{
	if (t != NULL && col < 32)
		t->state_cols |= 1u << col;
}

/* The characters of UTF-8 text S (what a terminal shows), up to byte N. */
static int
text_width(const char *s, size_t n)
{
	int w = 0;

	for (size_t i = 0; i < n && s[i] != '\0'; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* How many bytes of S hold its first W characters. */
static size_t
text_bytes(const char *s, int w)
{
	size_t i = 0;

	for (; s[i] != '\0'; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && w-- == 0)
			break;
	return i;
}

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

/* Narrows the widest columns of W (NCOLS) until the row fits WIDTH; a column
 * keeps at least 5 characters, or its header's width when that is less. */
static void
fit_columns(const struct out_table *t, int *w, int width)
{
	for (;;) {
		int total = 2 * (t->ncols - 1), widest = -1;
		for (int c = 0; c < t->ncols; c++) {
			int floor = text_width(t->cells[c], (size_t)-1);
			total += w[c];
			if (floor > 5)
				floor = 5;
			if (w[c] > floor && (widest < 0 || w[c] > w[widest]))
				widest = c;
		}
		if (total <= width || widest < 0)
			return;
		w[widest]--;
	}
}

/* One cell: cut to W characters with "..." at its end, coloured when STATE. */
static void
print_cell(FILE *f, const char *s, int w, int last, int state, int header)
{
	char cut[1024], paint[1100];
	int tw = text_width(s, (size_t)-1);

	if (tw > w && w >= 3) {
		size_t n = text_bytes(s, w - 3);
		snprintf(cut, sizeof(cut), "%.*s...", (int)n, s);
		s = cut;
		tw = w;
	}
	if (state && !header)
		s = out_paint(s, out_severity(s), paint, sizeof(paint));
	if (last)
		fprintf(f, "%s\n", s);
	else
		fprintf(f, "%s%*s  ", s, w > tw ? w - tw : 0, "");
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
			int len = s != NULL ? text_width(s, (size_t)-1) : 0;
			if (len > w[c])
				w[c] = len;
		}
	if (mode.width > 0)
		fit_columns(t, w, mode.width);
	for (int r = 0; r < t->nrows; r++)
		for (int c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			print_cell(f, s != NULL ? s : "", w[c], c == t->ncols - 1,
			           (t->state_cols >> c) & 1, r == 0);
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
out_error(int code, const char *msg)
{
	static const char *const kinds[] = {"ok",          "error",  "usage",
	                                    "unreachable", "denied", "nothing"};

	if (mode.json) {
		cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
		char *s;
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "kind", code >= 0 && code <= 5 ? kinds[code] : "error");
		cJSON_AddStringToObject(e, "message", msg);
		s = cJSON_PrintUnformatted(o);
		if (s != NULL)
			fprintf(stderr, "%s\n", s);
		free(s);
		cJSON_Delete(o);
	} else {
		fprintf(stderr, "rocmctl: %s\n", msg);
	}
	return code;
}

int
out_fail(int err, const char *why)
{
	return out_error(out_exit_for(err), why != NULL && why[0] ? why : rocmd_strerror(err));
}

int
out_usage(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return out_error(EXIT_USAGE, msg);
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
	int term = out_term_columns(STDERR_FILENO);
	char line[512];
	va_list ap;

	if (!b->on && !b->plain)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!b->on) {
		/* One line per phase: a text of a new kind (its first word). */
		size_t n = strcspn(line, " ");
		if (strlen(b->label) != n || strncmp(b->label, line, n) != 0) {
			snprintf(b->label, sizeof(b->label), "%.*s", (int)n, line);
			fprintf(stderr, "rocmctl: %s\n", line);
		}
		return;
	}
	fprintf(stderr, "\r\033[K%.*s", (int)text_bytes(line, (term > 0 ? term : 80) - 1), line);
	fflush(stderr);
	b->drawn = 1;
}

/* V as the bar counts it: a size, or a count of B->unit. */
static const char *
bar_amount(const struct out_bar *b, double v, char *buf, size_t len)
{
	if (b->unit == NULL)
		return out_size(v, buf, len);
	snprintf(buf, len, v >= 100 || v == (double)(long long)v ? "%.0f" : "%.1f", v);
	return buf;
}

/* "1:05" or "2:03:10". */
static void
clock_text(double s, char *buf, size_t len)
{
	long long t = (long long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lld:%02lld", t / 60, t % 60);
}

void
out_bar_draw(struct out_bar *b, int width, const char *label, double done, double total,
	     const char *tail, ...)
{
	char x[32], y[32], rate[48] = "", eta[48] = "", info[200], rest[256];
	double now = rocmd_child_now_ms() / 1000.0, frac;
	int cols, fill, term = out_term_columns(STDERR_FILENO);
	va_list ap;

	if (!b->on) {
		if (b->plain && strcmp(b->label, label) != 0) {
			snprintf(b->label, sizeof(b->label), "%s", label);
			fprintf(stderr, "rocmctl: %s: %s of %s%s%s\n", label,
			        bar_amount(b, done, x, sizeof(x)),
			        total > 0 ? bar_amount(b, total, y, sizeof(y)) : "?",
			        b->unit ? " " : "", b->unit ? b->unit : "");
		}
		return;
	}
	if (term <= 0)
		term = 80;
	if (strcmp(b->label, label) != 0) {
		snprintf(b->label, sizeof(b->label), "%s", label);
		b->t0 = now;
		b->done0 = done;
	}
	frac = total > 0 ? (done < total ? (done > 0 ? done / total : 0) : 1.0) : 0;
	if (now - b->t0 >= 0.5 && done > b->done0) {
		double r = (done - b->done0) / (now - b->t0);
		snprintf(rate, sizeof(rate), "  %s/s", bar_amount(b, r, x, sizeof(x)));
		if (total > done) {
			clock_text((total - done) / r, y, sizeof(y));
			snprintf(eta, sizeof(eta), "  ETA %s", y);
		}
	}
	snprintf(info, sizeof(info), " %3.0f%%  %s of %s%s%s%s%s", 100.0 * frac,
	         bar_amount(b, done, x, sizeof(x)),
	         total > 0 ? bar_amount(b, total, y, sizeof(y)) : "?", b->unit ? " " : "",
	         b->unit ? b->unit : "", rate, eta);
	va_start(ap, tail);
	vsnprintf(rest, sizeof(rest), tail, ap);
	va_end(ap);
	/* The bar takes what is left of the line, 10 to 40 columns; the tail is
	 * cut to the rest. */
	cols = term - 1 - (width + 3) - (int)strlen(info) - 2;
	cols = cols > 40 ? 40 : cols < 10 ? 10 : cols;
	fill = (int)(cols * frac);
	fprintf(stderr, "\r\033[K%-*.*s [", width, width, label);
	for (int i = 0; i < cols; i++)
		fputc(i < fill ? '#' : '.', stderr);
	{
		int room = term - 1 - (width + 3 + cols) - (int)strlen(info) - 2;
		fprintf(stderr, "]%s", info);
		if (room > 0)
			fprintf(stderr, "  %.*s", (int)text_bytes(rest, room), rest);
	}
	fflush(stderr);
	b->drawn = 1;
}
