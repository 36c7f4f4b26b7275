/*
 * Human output for rocmctl: aligned tables and key/value blocks. Columns are
 * sized to their widest cell; nothing is truncated.
 */
#ifndef ROCMD_OUTPUT_H
#define ROCMD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

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

#endif
