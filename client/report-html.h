/*
 * The HTML page of `rocmctl tune report --html` (report-html.c).
 */
#ifndef ROCMD_REPORT_HTML_H
#define ROCMD_REPORT_HTML_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Writes the page for tune.report's result R to F; returns the number of plots drawn. */
int report_html_write(FILE *f, const cJSON *r);

#endif
