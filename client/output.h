/*
 * What every rocmctl command shares: connecting and calling with uniform
 * error reporting, aligned tables and key/value blocks (columns sized to their
 * widest cell; nothing is truncated), and small JSON accessors.
 */
#ifndef ROCMD_OUTPUT_H
#define ROCMD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "client.h"

struct out_table;

struct out_table *out_table_new(int ncols, const char *const *headers);
/* Adds a row of NCOLS cells (copied); NULL cells print as "-". */
void out_table_row(struct out_table *t, const char *const *cells);
void out_table_print(struct out_table *t, FILE *f);
void out_table_free(struct out_table *t);

/* Prints "key:   value" lines aligned on the longest key. */
void out_kv(FILE *f, int n, const char *const *keys, const char *const *values);

/* Formats a Unix time in milliseconds as local "YYYY-MM-DD HH:MM:SS". */
const char *out_time(long long ms, char *buf, size_t len);
/* Formats seconds as "3d 4h", "5h 12m", "42s". */
const char *out_duration(long long s, char *buf, size_t len);

/* rocmctl's documented exit codes. */
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3, EXIT_DENIED = 4 };
/* The exit code for a rocmd error: unreachable 3, permission denied 4, else 1. */
int out_exit_for(int err);
/* Prints "rocmctl: WHY" (or the error's message) to stderr; returns the exit code. */
int out_fail(int err, const char *why);
/* A number member, or 0. */
double out_num(const cJSON *o, const char *key);
/* A non-empty string member, or "-". */
const char *out_str(const cJSON *o, const char *key);
/* Pretty-prints JSON on stdout. */
void out_json(const cJSON *j);
/* Formats a byte count as "1.5 GiB". */
const char *out_size(double bytes, char *buf, size_t len);

/* A progress line on stderr, redrawn in place; ON when stderr is a terminal
 * and the output is not JSON. Cleared before anything else is printed. */
struct out_bar {
	int on;
	int drawn;
};
void out_bar_clear(struct out_bar *b);
/* A line of text in the bar's place (printf format). */
void out_bar_text(struct out_bar *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* LABEL padded to WIDTH, a 30-column bar filled DONE/TOTAL (empty when TOTAL
 * is not positive), the percentage, "X of Y" in bytes, then TAIL (format). */
void out_bar_draw(struct out_bar *b, int width, const char *label, double done, double total,
		  const char *tail, ...) __attribute__((format(printf, 6, 7)));

/*
 * Connects once (to SOCKET, else the default socket) into *CLIENT, then calls
 * METHOD with PARAMS (consumed); notifications go to ON_NOTIFY. On failure
 * prints the reason and returns the exit code; 0 on success.
 */
int out_call(struct rocmd_client **client, const char *socket, const char *method,
	     cJSON *params, cJSON **result, rocmd_notify_fn on_notify, void *arg);

#endif
