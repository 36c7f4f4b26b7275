/*
 * `rocmctl tune report --html FILE`: one self-contained page from tune.report
 * (docs/PROTOCOL.md) with inline SVG drawn here, no script and nothing
 * fetched: a page that opens from a mail attachment or an air-gapped
 * machine. Our own small drawing code rather than a charting library: four
 * kinds of plot, a few hundred lines, no licence or update to track.
 *
 *   convergence  per job: every evaluation's time (dots, failures as ticks on
 *                the floor) and the best so far (a step line), over the
 *                evaluation count, with the default's time as a dashed rule;
 *   tuned        per shape: the default's time against the tuned one;
 *   roofline     achieved GFLOP/s against arithmetic intensity (log-log),
 *                with the highest rate measured as the roof (the device's
 *                peak is not known to rocmd);
 *   bench        the caller's bench runs (client/bench-store.h): each run's
 *                speed-up (the geometric mean over its shapes of the first
 *                variant's time over the second's) over the runs, and per
 *                shape of the newest run the two variants' times with their
 *                spread (lowest to highest round) as whiskers; also the page
 *                of `rocmctl bench report --html`.
 *
 * Each plot draws its marks in a colour of its own, named in its
 * data-mark attribute: tests/integration/test-tune-report.sh counts those
 * pixels in a headless Chromium screenshot to see that every plot drew.
 */
#include "report-html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "output.h"

#define W 420
#define H 240
#define ML 58 /* margins: left, right, top, bottom */
#define MR 12
#define MT 26
#define MB 34

struct axis {
	double lo, hi;
	int log;
};

/* A distinct colour for plot I: hues around the circle, full saturation. */
static void
mark_colour(int i, char *out, size_t len)
{
	double h = fmod(i * 137.508, 360.0) / 60.0, x = 1 - fabs(fmod(h, 2) - 1);
	double r = 0, g = 0, b = 0, v = 0.82;

	switch ((int)h) {
	case 0: r = 1, g = x; break;
	case 1: r = x, g = 1; break;
	case 2: g = 1, b = x; break;
	case 3: g = x, b = 1; break;
	case 4: r = x, b = 1; break;
	default: r = 1, b = x; break;
	}
	snprintf(out, len, "#%02x%02x%02x", (int)(r * v * 255), (int)(g * v * 255),
	         (int)(b * v * 255));
}

static double
pos(const struct axis *a, double v, double from, double to)
{
	double f;

	if (a->log)
		f = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	else
		f = (v - a->lo) / (a->hi - a->lo);
	return from + f * (to - from);
}

static void
esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* The frame of one plot: its box, title, axis labels and end values. */
static void
frame(FILE *f, int plot, const char *title, const char *xl, const char *yl, const struct axis *x,
      const struct axis *y, char *colour, size_t clen)
{
	mark_colour(plot, colour, clen);
	fprintf(f, "<svg class=\"plot\" width=\"%d\" height=\"%d\" data-mark=\"%s\">", W, H, colour);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"box\"/>", ML, MT,
	        W - ML - MR, H - MT - MB);
	fputs("<text x=\"8\" y=\"16\" class=\"title\">", f);
	esc(f, title);
	fprintf(f, "</text><text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"middle\">%s</text>",
	        ML + (W - ML - MR) / 2, H - 6, xl);
	fprintf(f,
	        "<text x=\"12\" y=\"%d\" class=\"lab\" transform=\"rotate(-90 12 %d)\" "
	        "text-anchor=\"middle\">%s</text>",
	        MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2, yl);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\">%.4g</text>", ML, H - MB + 14, x->lo);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%.4g</text>", W - MR,
	        H - MB + 14, x->hi);
	if (yl[0] == '\0')
		return; /* rows, not a scale */
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%.4g</text>", ML - 4,
	        H - MB, y->lo);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%.4g</text>", ML - 4,
	        MT + 8, y->hi);
}

static void
job_title(const cJSON *j, char *out, size_t len)
{
	snprintf(out, len, "#%.0f %s %s %s%s%s", out_num(j, "id"), out_str(j, "dtype"),
	         out_str(j, "trans"), out_str(j, "shape"),
	         cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "target")) ? " on " : "",
	         cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "target"))
	             ? out_str(j, "target")
	             : "");
}

/* Convergence of one job; 0 when it has no evaluation with a time. */
static int
convergence(FILE *f, int plot, const cJSON *j)
{
	const cJSON *evals = cJSON_GetObjectItemCaseSensitive(j, "evals"), *e;
	int n = cJSON_GetArraySize(evals), i = 0;
	struct axis x = {1, n > 1 ? n : 2, 0}, y = {INFINITY, 0, 1};
	double dflt = out_num(j, "default_ms"), best = INFINITY;
	char title[200], colour[16];

	cJSON_ArrayForEach(e, evals)
	{
		double v = cJSON_GetArrayItem(e, 0)->valuedouble;

		if (!cJSON_IsNumber(cJSON_GetArrayItem(e, 0)))
			continue;
		y.lo = v < y.lo ? v : y.lo;
		y.hi = v > y.hi ? v : y.hi;
	}
	if (!isfinite(y.lo))
		return 0;
	if (dflt > 0) {
		y.lo = dflt < y.lo ? dflt : y.lo;
		y.hi = dflt > y.hi ? dflt : y.hi;
	}
	y.lo *= 0.9;
	y.hi *= 1.1;
	job_title(j, title, sizeof(title));
	frame(f, plot, title, "evaluation", "ms", &x, &y, colour, sizeof(colour));
	if (dflt > 0)
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"dflt\"/>", ML,
		        W - MR, pos(&y, dflt, H - MB, MT), pos(&y, dflt, H - MB, MT));
	fputs("<polyline class=\"best\" points=\"", f);
	cJSON_ArrayForEach(e, evals)
	{
		const cJSON *v = cJSON_GetArrayItem(e, 0);

		i++;
		if (cJSON_IsNumber(v) && v->valuedouble < best)
			best = v->valuedouble;
		if (isfinite(best))
			fprintf(f, "%.1f,%.1f ", pos(&x, i, ML, W - MR), pos(&y, best, H - MB, MT));
	}
	fputs("\"/>", f);
	i = 0;
	cJSON_ArrayForEach(e, evals)
	{
		const cJSON *v = cJSON_GetArrayItem(e, 0);
		double px = pos(&x, ++i, ML, W - MR);

		if (cJSON_IsNumber(v))
			fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>",
			        px, pos(&y, v->valuedouble, H - MB, MT), colour);
		else
			fprintf(f, "<rect class=\"fail\" x=\"%.1f\" y=\"%d\" width=\"2\" height=\"6\"/>",
			        px - 1, H - MB - 6);
	}
	fputs("</svg>\n", f);
	return 1;
}

/* Default against tuned per shape; 0 when no job has both times. */
static int
tuned_bars(FILE *f, int plot, const cJSON *jobs)
{
	const cJSON *j;
	struct axis x = {0, 0, 0}, y = {0, 1, 0};
	char colour[16], title[200];
	int n = 0, row = 0;
	double bh;

	cJSON_ArrayForEach(j, jobs)
	{
		if (out_num(j, "best_ms") > 0 && out_num(j, "default_ms") > 0) {
			n++;
			x.hi = fmax(x.hi, fmax(out_num(j, "best_ms"), out_num(j, "default_ms")));
		}
	}
	if (n == 0)
		return 0;
	x.hi *= 1.05;
	frame(f, plot, "tuned (colour) against the default (grey), per shape", "ms", "", &x, &y,
	      colour, sizeof(colour));
	bh = (double)(H - MT - MB) / n;
	cJSON_ArrayForEach(j, jobs)
	{
		double top = MT + row * bh;

		if (!(out_num(j, "best_ms") > 0 && out_num(j, "default_ms") > 0))
			continue;
		fprintf(f, "<rect class=\"dbar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
		        ML, top + bh * 0.1, pos(&x, out_num(j, "default_ms"), 0, W - ML - MR),
		        bh * 0.4);
		fprintf(f,
		        "<rect class=\"mark\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		        "fill=\"%s\"/>",
		        ML, top + bh * 0.5, fmax(2, pos(&x, out_num(j, "best_ms"), 0, W - ML - MR)),
		        bh * 0.4, colour);
		job_title(j, title, sizeof(title));
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"tick\">", ML + 4, top + bh * 0.45);
		esc(f, title);
		fprintf(f, " %.2fx</text>", out_num(j, "default_ms") / out_num(j, "best_ms"));
		row++;
	}
	fputs("</svg>\n", f);
	return 1;
}

/* Achieved GFLOP/s against flops per byte; 0 when no job has a time. */
static int
roofline(FILE *f, int plot, const cJSON *jobs)
{
	const cJSON *j;
	struct axis x = {INFINITY, 0, 1}, y = {INFINITY, 0, 1};
	char colour[16], title[200];

	cJSON_ArrayForEach(j, jobs)
	{
		double ai = out_num(j, "flops") / out_num(j, "bytes");
		double gf = out_num(j, "flops") / (out_num(j, "best_ms") * 1e6);

		if (!(out_num(j, "best_ms") > 0 && out_num(j, "bytes") > 0))
			continue;
		x.lo = fmin(x.lo, ai), x.hi = fmax(x.hi, ai);
		y.lo = fmin(y.lo, gf), y.hi = fmax(y.hi, gf);
	}
	if (!isfinite(x.lo))
		return 0;
	x.lo /= 2, x.hi *= 2, y.lo /= 2, y.hi *= 1.5;
	frame(f, plot, "roofline position (roof: the highest rate measured)", "flop/byte",
	      "GFLOP/s", &x, &y, colour, sizeof(colour));
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"dflt\"/>", ML, W - MR,
	        pos(&y, y.hi / 1.5, H - MB, MT), pos(&y, y.hi / 1.5, H - MB, MT));
	cJSON_ArrayForEach(j, jobs)
	{
		double ai = out_num(j, "flops") / out_num(j, "bytes");
		double gf = out_num(j, "flops") / (out_num(j, "best_ms") * 1e6);

		if (!(out_num(j, "best_ms") > 0 && out_num(j, "bytes") > 0))
			continue;
		job_title(j, title, sizeof(title));
		fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>",
		        pos(&x, ai, ML, W - MR), pos(&y, gf, H - MB, MT), colour);
		esc(f, title);
		fprintf(f, ": %.3g GFLOP/s</title></circle>", gf);
	}
	fputs("</svg>\n", f);
	return 1;
}

/* Each run's speed-up over the runs (x: the run's number, oldest first);
 * 0 when no run has two variants with a shape in common. */
static int
bench_over_time(FILE *f, int plot, const cJSON *runs)
{
	struct axis x = {1, 2, 0}, y = {INFINITY, 0, 1};
	double sp[256];
	char colour[16], id[256][32];
	const cJSON *r;
	int n = 0;

	cJSON_ArrayForEach(r, runs)
	{
		const cJSON *vs = cJSON_GetObjectItemCaseSensitive(r, "variants"), *p;
		const char *a = out_str(cJSON_GetArrayItem(vs, 0), "name");
		const char *b = out_str(cJSON_GetArrayItem(vs, 1), "name");
		double logsum = 0;
		int k = 0;

		if (n >= 256 || cJSON_GetArraySize(vs) < 2)
			continue;
		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "problems"))
		{
			const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "variants");
			double ta = out_num(cJSON_GetObjectItemCaseSensitive(pv, a), "median_ms");
			double tb = out_num(cJSON_GetObjectItemCaseSensitive(pv, b), "median_ms");

			if (ta > 0 && tb > 0) {
				logsum += log(ta / tb);
				k++;
			}
		}
		if (k == 0)
			continue;
		sp[n] = exp(logsum / k);
		snprintf(id[n], sizeof(id[n]), "%s: %s/%s", out_str(r, "id"), a, b);
		y.lo = fmin(y.lo, sp[n]);
		y.hi = fmax(y.hi, sp[n]);
		n++;
	}
	if (n == 0)
		return 0;
	x.hi = n > 1 ? n : 2;
	y.lo = fmin(y.lo, 1) / 1.2;
	y.hi = fmax(y.hi, 1) * 1.2;
	frame(f, plot, "speed-up of each run (geometric mean over shapes)",
	      "run", "x", &x, &y, colour, sizeof(colour));
	fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"dflt\"/>", ML, W - MR,
	        pos(&y, 1, H - MB, MT), pos(&y, 1, H - MB, MT));
	fputs("<polyline class=\"best\" points=\"", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%.1f,%.1f ", pos(&x, i + 1, ML, W - MR), pos(&y, sp[i], H - MB, MT));
	fputs("\"/>", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>",
		        pos(&x, i + 1, ML, W - MR), pos(&y, sp[i], H - MB, MT), colour);
		esc(f, id[i]);
		fprintf(f, " %.3gx</title></circle>", sp[i]);
	}
	fputs("</svg>\n", f);
	return 1;
}

/* Per shape of run R: the first variant (grey) and the second (colour), each
 * with its spread; 0 when no shape has a time. */
static int
bench_shapes(FILE *f, int plot, const cJSON *r)
{
	const cJSON *vs = cJSON_GetObjectItemCaseSensitive(r, "variants"), *p;
	const char *names[2] = {out_str(cJSON_GetArrayItem(vs, 0), "name"),
	                        out_str(cJSON_GetArrayItem(vs, 1), "name")};
	int nv = cJSON_GetArraySize(vs) < 2 ? cJSON_GetArraySize(vs) : 2, n = 0, row = 0;
	struct axis x = {0, 0, 0}, y = {0, 1, 0};
	char colour[16], title[300];
	double bh;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "problems"))
	{
		const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "variants");
		int any = 0;

		for (int v = 0; v < nv; v++) {
			const cJSON *fv = cJSON_GetObjectItemCaseSensitive(pv, names[v]);

			if (out_num(fv, "median_ms") > 0) {
				x.hi = fmax(x.hi, out_num(fv, "hi_ms"));
				any = 1;
			}
		}
		n += any;
	}
	if (n == 0)
		return 0;
	x.hi *= 1.05;
	snprintf(title, sizeof(title), "%s: %s (grey), %s (colour)", out_str(r, "id"), names[0],
	         nv > 1 ? names[1] : "-");
	frame(f, plot, title, "ms", "", &x, &y, colour, sizeof(colour));
	bh = (double)(H - MT - MB) / n;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "problems"))
	{
		const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "variants");
		double top = MT + row * bh;
		int any = 0;

		for (int v = 0; v < nv; v++) {
			const cJSON *fv = cJSON_GetObjectItemCaseSensitive(pv, names[v]);
			double yy = top + bh * (v ? 0.5 : 0.1);

			if (!(out_num(fv, "median_ms") > 0))
				continue;
			any = 1;
			if (v == 0)
				fprintf(f, "<rect class=\"dbar\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
				        "height=\"%.1f\"/>",
				        ML, yy, fmax(2, pos(&x, out_num(fv, "median_ms"), 0, W - ML - MR)),
				        bh * 0.4);
			else
				fprintf(f, "<rect class=\"mark\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
				        "height=\"%.1f\" fill=\"%s\"/>",
				        ML, yy, fmax(2, pos(&x, out_num(fv, "median_ms"), 0, W - ML - MR)),
				        bh * 0.4, colour);
			fprintf(f, "<line class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			        pos(&x, out_num(fv, "lo_ms"), ML, W - MR),
			        pos(&x, out_num(fv, "hi_ms"), ML, W - MR), yy + bh * 0.2, yy + bh * 0.2);
		}
		if (!any)
			continue;
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"tick\">", ML + 4, top + bh * 0.45);
		esc(f, out_str(p, "problem"));
		fputs("</text>", f);
		row++;
	}
	fputs("</svg>\n", f);
	return 1;
}

/* The bench section: runs over time and the newest run's shapes. */
static int
bench_section(FILE *f, int *plot, const cJSON *runs)
{
	int plots = 0, n = cJSON_GetArraySize(runs);

	fputs("<h2>Bench runs over time</h2>\n", f);
	if (n == 0) {
		fputs("<p>No bench runs are stored for this user (rocmctl bench runs one).</p>\n", f);
		return 0;
	}
	fputs("<div class=\"plots\">\n", f);
	plots += bench_over_time(f, (*plot)++, runs);
	plots += bench_shapes(f, (*plot)++, cJSON_GetArrayItem(runs, n - 1));
	fputs("</div>\n", f);
	return plots;
}

static const char style[] =
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222;background:#fff}\n"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
    ".plots{display:flex;flex-wrap:wrap;gap:12px}\n"
    ".box{fill:#fafafa;stroke:#bbb}.title{font-size:12px;font-weight:600}\n"
    ".lab,.tick{font-size:11px;fill:#555}.best{fill:none;stroke:#222;stroke-width:1.5}\n"
    ".dflt{stroke:#888;stroke-dasharray:4 3}.dbar{fill:#c8c8c8}.fail{fill:#222}\n"
    ".whisker{stroke:#222;stroke-width:1.5}\n";

int
report_html_bench_write(FILE *f, const cJSON *runs)
{
	char when[64];
	time_t now = time(NULL);
	int plot = 0, plots;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	        "<title>rocmd bench report</title><style>\n%s</style></head><body>\n"
	        "<h1>rocmd bench report</h1>\n<p>Generated %s; %d bench run(s).</p>\n",
	        style, when, cJSON_GetArraySize(runs));
	plots = bench_section(f, &plot, runs);
	fputs("</body></html>\n", f);
	return plots;
}

int
report_html_write(FILE *f, const cJSON *r, const cJSON *bench_runs)
{
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(r, "jobs"), *j;
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(r, "device");
	char when[64];
	time_t now = time(NULL);
	int plot = 0, plots = 0;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	        "<title>rocmd tuning report</title><style>\n%s</style></head><body>\n"
	        "<h1>rocmd tuning report</h1>\n<p>", style);
	esc(f, cJSON_IsObject(dev) ? out_str(dev, "name") : "");
	fprintf(f, " (%s backend), generated %s; %d finished job(s)%s.</p>\n",
	        cJSON_IsObject(dev) ? out_str(dev, "backend") : "-", when, cJSON_GetArraySize(jobs),
	        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "truncated")) ? ", the first 64 shown"
	                                                                      : "");
	fputs("<h2>Tuned against the default, and the roofline</h2>\n<div class=\"plots\">\n", f);
	plots += tuned_bars(f, plot++, jobs);
	plots += roofline(f, plot++, jobs);
	fputs("</div>\n<h2>Convergence: every configuration tried, and the best so far</h2>\n"
	      "<div class=\"plots\">\n",
	      f);
	cJSON_ArrayForEach(j, jobs)
	plots += convergence(f, plot++, j);
	fputs("</div>\n", f);
	plots += bench_section(f, &plot, bench_runs);
	if (plots == 0)
		fputs("<p>No job has finished yet: nothing to draw.</p>\n", f);
	fputs("</body></html>\n", f);
	return plots;
}
