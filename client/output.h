/*
 * What every rocmctl command shares: connecting and calling with uniform
 * error reporting (plain, or one JSON object under --json), aligned tables
 * and key/value blocks (cut to the terminal's width like systemctl's, states
 * coloured on a terminal), progress bars, and small JSON accessors.
 */
#ifndef ROCMD_OUTPUT_H
#define ROCMD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "client.h"

/*
 * Sets the output's mode once, before anything is printed: JSON errors under
 * --json; colour when stdout is a terminal and NO_COLOR is unset or empty;
 * tables cut to COLUMNS when set, else to the terminal's width when stdout is
 * one, else never.
 */
void out_init(int json);
/* The width tables are cut to; 0 when they are not cut. */
int out_width(void);
/* The terminal's columns on FD (term-unix.c, term-win.c); 0 when FD is not one. */
int out_term_columns(int fd);
/* Waits MS milliseconds (term-unix.c, term-win.c). */
void out_sleep_ms(int ms);

struct out_table;

struct out_table *out_table_new(int ncols, const char *const *headers);
/* Adds a row of NCOLS cells (copied); NULL cells print as "-". */
void out_table_row(struct out_table *t, const char *const *cells);
/* Column COL holds states: each cell is coloured by out_severity. */
void out_table_state_col(struct out_table *t, int col);
/* Prints the table; the widest columns are cut (with "...") to out_width(). */
void out_table_print(struct out_table *t, FILE *f);
void out_table_free(struct out_table *t);

/* Prints "key:   value" lines aligned on the longest key. */
void out_kv(FILE *f, int n, const char *const *keys, const char *const *values);

/* Formats a Unix time in milliseconds as local "YYYY-MM-DD HH:MM:SS". */
const char *out_time(long long ms, char *buf, size_t len);
/* Formats seconds as "3d 4h", "5h 12m", "42s". */
const char *out_duration(long long s, char *buf, size_t len);

/* How a state word reads: 0 plain, 1 good, 2 a warning, 3 bad. */
int out_severity(const char *word);
/* WORD in its severity's colour when colour is on, else as it is (BUF holds it). */
const char *out_paint(const char *word, int severity, char *buf, size_t len);

/* rocmctl's documented exit codes (docs: rocmctl.1's EXIT STATUS). */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,
	EXIT_DENIED = 4,
	EXIT_NOTHING = 5, /* a valid request with nothing to do */
	EXIT_FINDINGS = 6 /* doctor found a problem of severity error */
};
/* The exit code for a rocmd error: unreachable 3, permission denied 4, else 1. */
int out_exit_for(int err);
/* Prints "rocmctl: WHY" (or the error's message) to stderr, or under --json
 * {"error": {"code": EXIT, "kind": "...", "message": WHY}}; returns the exit code. */
int out_fail(int err, const char *why);
/* A usage error found by a command (a bad ID): printed as out_fail does; 2. */
int out_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints an error of exit code CODE with message MSG, plain or JSON; returns CODE. */
int out_error(int code, const char *msg);
/* A number member, or 0. */
double out_num(const cJSON *o, const char *key);
/* A non-empty string member, or "-". */
const char *out_str(const cJSON *o, const char *key);
/* Pretty-prints JSON on stdout. */
void out_json(const cJSON *j);
/* Formats a byte count as "1.5 GiB". */
const char *out_size(double bytes, char *buf, size_t len);

/* A progress line on stderr, redrawn in place; ON when stderr is a terminal
 * and the output is not JSON. Cleared before anything else is printed. The
 * rate and the time left are measured from the first draw of each label.
 * PLAIN (stderr not a terminal, not JSON): a plain line instead, once per
 * phase (label or text). */
struct out_bar {
	int on, plain;
	int drawn;
	char label[32];
	double t0, done0; /* when LABEL was first drawn, and its DONE then */
	const char *unit; /* NULL: DONE and TOTAL are bytes; else counts of UNIT */
};
void out_bar_clear(struct out_bar *b);
/* A line of text in the bar's place (printf format). */
void out_bar_text(struct out_bar *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* LABEL padded to WIDTH, a bar filled DONE/TOTAL (empty when TOTAL is not
 * positive), the percentage (0 to 100), "X of Y" in bytes (or in B->unit),
 * the rate and the
 * time left, then TAIL (format); the bar takes what the terminal's width
 * leaves, and TAIL is cut to fit. */
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
