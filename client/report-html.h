/*
 * The HTML pages of `rocmctl tune report --html` and `rocmctl bench report
 * --html` (report-html.c).
 */
#ifndef ROCMD_REPORT_HTML_H
#define ROCMD_REPORT_HTML_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Writes the page for tune.report's result R to F, with the caller's bench
 * runs BENCH_RUNS (an array, oldest first); returns the number of plots drawn. */
int report_html_write(FILE *f, const cJSON *r, const cJSON *bench_runs);
/* The page of `rocmctl bench report --html`: the bench runs RUNS alone. */
int report_html_bench_write(FILE *f, const cJSON *runs);

#endif
