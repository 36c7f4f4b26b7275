/*
 * bench-gpu-gemm: rocmd's GEMM kernels (kernels/gpu/gemm.cu through the CUDA
 * backend) against cuBLAS on a fixed suite of problems, in one process, on
 * the same inputs and the same stream, both timed by the tuner's own
 * measurement (kernels/measure.h): input sets rotated past twice the L2, one
 * run checked against a double-precision host reference, a warm-up by time,
 * RUNS runs each between its own pair of device events; each candidate is
 * measured in ROUNDS (4) interleaved rounds, the order reversed every other
 * round, and its figure is the median of its round pairs' means
 * (tune_round_order, tune_round_figure: a clock drifting over the rounds
 * reaches each candidate alike).
 *
 * The suite (every problem in fp32, fp16 and bf16; column-major, C = A B):
 *   square   NN 1024^3, 4096^3, 8192^3
 *   layout   NT, TN, TT 4096^3
 *   odd      NN 1000^3, 333x4096x4096, 3333x2222x1111
 *   decode   TN, M = 1, 8, 16 tokens       } x (N, K) of Llama 2 7B and
 *   prefill  TN, M = 128, 512, 4096 tokens } Llama 3 8B: attn 4096x4096,
 *            7b-up 11008x4096, 7b-down 4096x11008, 8b-up 14336x4096,
 *            8b-down 4096x14336 (TN: both operands K-contiguous, x W^T with
 *            row-major weights); prefill attn at M = 4096 is layout's TN
 *            4096^3, listed there: 38 problems per dtype
 *
 * For each problem: rocmd's default configuration (what an application gets
 * with no tuned library: space_default_for() of the tuner's space), the
 * configuration a tuned library chooses (--lib DIR, a folder written by
 * `rocmtune lib build`, or --best FILE, best-known configurations, both
 * through tunedlib_select(): exact, nearest tuned shape or default), and
 * cuBLAS (cublasSgemm in CUBLAS_DEFAULT_MATH, no TF32; cublasGemmEx with
 * CUBLAS_COMPUTE_32F for fp16/bf16). The ratio is cuBLAS's time over
 * rocmd's (above 1: rocmd is faster); "err" is max |C - ref| / max |ref| over
 * the checked entries, and a result outside the tuner's tolerance prints
 * "wrong". Geometric means per dtype and group close the table. It asserts
 * nothing about speed.
 *
 *   bench-gpu-gemm [--dtype fp32,fp16,bf16] [--filter WORD,...] [--lib DIR]
 *                  [--best FILE] [--runs N] [--rounds N] [--warmup MS]
 *                  [--device N] [--csv FILE] [--list] [--backend cuda]
 *
 * --filter keeps a problem when a word names its group (square, layout, odd,
 * decode, prefill, or llm for both), its layout (NN, TN, ...), its LLM
 * matrix (attn, 7b-up, ..., 7b, 8b) or its shape (4096x4096x4096, or the
 * start or end of one: 8x, x4096x14336). --backend cpu
 * runs the same program on the CPU backend, without cuBLAS (a trial without
 * a GPU: pick a small filter). Exit 77 when the backend has no device (the
 * reason printed), 1 on an error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gpu-gemm/cublas.h"
#include "bench/gpu-gemm/suite.h"
#include "common/error.h"
#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/measure.h"
#include "kernels/space.h"
#include "kernels/tune.h"
#include "kernels/tunedlib.h"

#define MAX_ROUNDS 9
#define MAX_PROBLEMS 256

/* One candidate's figures over the rounds. */
struct figure {
	int used;                  /* measured for this problem */
	enum tune_outcome outcome; /* of the first failing round, else ok */
	char detail[200];
	double med[MAX_ROUNDS];
	int nmed;
	double lo, hi; /* the lowest p20 and highest p80 of the rounds */
	double rel_err;
	double ms; /* tune_round_figure of the rounds' medians */
};

enum cand { C_DEFAULT, C_TUNED, C_VENDOR, C_COUNT };
static const char *const cand_name[C_COUNT] = {"default", "tuned", "cuBLAS"};

struct row {
	const struct problem *pr;
	char dkey[SPACE_KEY_MAX], tkey[SPACE_KEY_MAX];
	const char *how; /* tunedlib_how_name(), NULL without a library */
	char skipped[200]; /* why the library's entry for this very problem was not used */
	struct figure f[C_COUNT];
};

struct opts {
	int dtypes[GEMM_DTYPE_COUNT];
	char filter[32][32];
	int nfilter;
	const char *lib, *best, *csv, *backend;
	int runs, rounds, device, list;
	double warmup_ms;
};

/* ---------------------------------------------------------------- suite */

static int
word_matches(const struct problem *pr, const char *w)
{
	char shape[64];

	snprintf(shape, sizeof(shape), "%" PRId64 "x%" PRId64 "x%" PRId64, pr->m, pr->n, pr->k);
	if (!strcmp(w, group_name[pr->g]) || !strcmp(w, pr->op))
		return 1;
	if (!strcmp(w, "llm") && (pr->g == G_DECODE || pr->g == G_PREFILL))
		return 1;
	if (pr->what[0] != '\0' &&
	    (!strcmp(w, pr->what) || (!strcmp(pr->what, "attn") && strlen(w) == 2 && w[1] == 'b') ||
	     (strlen(w) == 2 && !strncmp(w, pr->what, 2))))
		return 1;
	/* A shape: the whole MxNxK, or its start ("8x") or its end ("x4096x14336"). */
	if (strchr(w, 'x') == NULL)
		return 0;
	if (w[0] == 'x')
		return strlen(shape) >= strlen(w) && !strcmp(shape + strlen(shape) - strlen(w), w);
	if (w[strlen(w) - 1] == 'x')
		return !strncmp(shape, w, strlen(w));
	return !strcmp(shape, w);
}

static int
selected(const struct opts *o, const struct problem *pr)
{
	int i;

	if (!o->dtypes[pr->dt])
		return 0;
	for (i = 0; i < o->nfilter; i++)
		if (word_matches(pr, o->filter[i]))
			return 1;
	return o->nfilter == 0;
}

/* Whether the same problem is among the first N (prefill attn 4096 is layout TN). */
static int
listed(const struct problem *out, int n, const struct problem *pr)
{
	int i;

	for (i = 0; i < n; i++)
		if (out[i].dt == pr->dt && !strcmp(out[i].op, pr->op) && out[i].m == pr->m &&
		    out[i].n == pr->n && out[i].k == pr->k)
			return 1;
	return 0;
}

/* The suite in table order (dtype, then group), filtered, each problem once: the count. */
static int
suite_build(const struct opts *o, struct problem *out, int max)
{
	int n = 0, d, i, j, t;

	for (d = 0; d < GEMM_DTYPE_COUNT; d++) {
		struct problem pr = {.dt = (enum gemm_dtype)d, .what = ""};

		for (i = 0; i < (int)(sizeof(fixed_shapes) / sizeof(fixed_shapes[0])); i++) {
			pr.g = fixed_shapes[i].g;
			snprintf(pr.op, sizeof(pr.op), "%s", fixed_shapes[i].op);
			pr.m = fixed_shapes[i].m;
			pr.n = fixed_shapes[i].n;
			pr.k = fixed_shapes[i].k;
			if (selected(o, &pr) && n < max)
				out[n++] = pr;
		}
		snprintf(pr.op, sizeof(pr.op), "TN");
		for (t = 0; t < (int)(sizeof(llm_tokens) / sizeof(llm_tokens[0])); t++)
			for (j = 0; j < (int)(sizeof(llm_layers) / sizeof(llm_layers[0])); j++) {
				pr.g = llm_tokens[t] <= 16 ? G_DECODE : G_PREFILL;
				pr.what = llm_layers[j].what;
				pr.m = llm_tokens[t];
				pr.n = llm_layers[j].n;
				pr.k = llm_layers[j].k;
				if (selected(o, &pr) && !listed(out, n, &pr) && n < max)
					out[n++] = pr;
			}
	}
	return n;
}

static void
problem_of(const struct problem *pr, struct gemm_problem *p)
{
	gemm_problem_init(p, pr->dt, pr->op[0] == 'T' ? GEMM_T : GEMM_N,
	                  pr->op[1] == 'T' ? GEMM_T : GEMM_N, pr->m, pr->n, pr->k, 1);
}

/* ------------------------------------------------------ tuned library */

/*
 * A library of best-known configurations from FILE: one "problem-key
 * config-key [ms]" a line, '#' comments. Built in memory under ID, so that
 * selection is the tuned library's own (exact, nearest valid, default).
 */
static int
best_load(const char *path, const struct tune_key *id, struct tunedlib **out, char *why,
          size_t whylen)
{
	char line[1024], prob[128], cfg[SPACE_KEY_MAX];
	FILE *f = fopen(path, "r");
	int err, ln = 0;

	if (f == NULL) {
		snprintf(why, whylen, "%s: cannot open", path);
		return ROCMD_ENOTFOUND;
	}
	if ((err = tunedlib_new(id, out)) < 0) {
		fclose(f);
		return err;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		double ms = 1.0;
		char w[200];
		int nf;

		ln++;
		if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
			continue;
		nf = sscanf(line, "%127s %511s %lf", prob, cfg, &ms);
		if (nf < 2 || (err = tunedlib_add(*out, prob, cfg, ms > 0 ? ms : 1.0, 0, w,
		                                  sizeof(w))) < 0) {
			snprintf(why, whylen, "%s:%d: %s", path, ln, nf < 2 ? "expected a problem and a configuration" : w);
			tunedlib_free(*out);
			*out = NULL;
			fclose(f);
			return nf < 2 ? ROCMD_EINVAL : err;
		}
	}
	fclose(f);
	return 0;
}

static int
library_open(const struct opts *o, const struct backend_device_info *dev, const char *hash,
             struct tunedlib **lib)
{
	char why[256] = "";
	int err = 0;

	*lib = NULL;
	if (o->lib != NULL) {
		const struct tune_key *id;

		err = tunedlib_open(o->lib, lib, why, sizeof(why));
		if (err == 0) {
			id = tunedlib_id(*lib);
			if (strcmp(id->arch, dev->arch) || strcmp(id->source_hash, hash))
				printf("note: the library at %s was tuned for %s, kernel source %s; this "
				       "is %s, kernel source %s\n",
				       o->lib, id->arch, id->source_hash, dev->arch, hash);
		}
	} else if (o->best != NULL) {
		struct tune_key id;
		struct gemm_problem p0;

		gemm_problem_init(&p0, GEMM_FP32, GEMM_N, GEMM_N, 1, 1, 1, 1);
		tune_key_init(&id, dev, hash, &p0);
		err = best_load(o->best, &id, lib, why, sizeof(why));
	}
	if (err < 0)
		fprintf(stderr, "bench-gpu-gemm: %s\n", why);
	return err;
}

/* -------------------------------------------------------- measurement */

/* Why LIB's entry for P itself (if any) is not a configuration for P: "" when it is. */
static void
entry_skipped(const struct tunedlib *lib, const struct space_def *space,
              const struct gemm_problem *p, const struct backend_device_info *dev, char *why,
              size_t len)
{
	const struct tunedlib_entry *e;
	struct space_point pt;
	char key[64], w[160] = "";

	why[0] = '\0';
	gemm_problem_key(p, key, sizeof(key));
	if ((e = tunedlib_find(lib, key)) == NULL)
		return;
	if (space_key_parse(space, e->config, &pt) < 0)
		snprintf(why, len, "not a point of the tuner's %s space for this problem", space->name);
	else if (!space_valid(space, &pt, p, dev, w, sizeof(w)))
		snprintf(why, len, "ruled out: %s", w);
}

/* One round of candidate C: 0, or a negative error of the harness. */
static int
measure_round(struct measure *m, struct row *rw, enum cand c, int round)
{
	struct figure *f = &rw->f[c];
	struct tune_result r;
	int flags = round == 0 ? 0 : TUNE_EVAL_TIME_ONLY;
	double err_rel = -1;
	int err;

	if (!f->used || f->outcome != TUNE_OK)
		return 0;
	if (c == C_VENDOR)
		err = measure_local_eval_call(m, bench_cublas_gemm, NULL, flags, &r, &err_rel);
	else
		err = measure_local_eval(m, c == C_DEFAULT ? rw->dkey : rw->tkey, flags, &r, &err_rel);
	if (err < 0)
		return err;
	if (round == 0)
		f->rel_err = err_rel;
	if (r.outcome != TUNE_OK) {
		f->outcome = r.outcome;
		snprintf(f->detail, sizeof(f->detail), "%s", r.detail);
		return 0;
	}
	f->med[f->nmed++] = r.median_ms;
	if (f->nmed == 1 || r.p20_ms < f->lo)
		f->lo = r.p20_ms;
	if (r.p80_ms > f->hi)
		f->hi = r.p80_ms;
	return 0;
}

/*
 * Measures one problem: the default configuration, the library's choice
 * where it differs from the default, and cuBLAS, in ROUNDS rounds in the
 * order A B C | C B A (tune_round_order), each figure tune_round_figure's. 0, or a negative error
 * of the harness.
 */
static int
measure_problem(struct measure *m, const struct opts *o, const struct backend_device_info *dev,
                const struct tunedlib *lib, int vendor, struct row *rw)
{
	const struct space_def *space;
	struct gemm_problem p;
	struct space_point pt;
	char why[256] = "";
	int err, r, i;

	problem_of(rw->pr, &p);
	for (i = 0; i < C_COUNT; i++)
		rw->f[i].rel_err = -1;
	if ((err = measure_local_set_problem(m, &p, &space, why, sizeof(why))) < 0) {
		fprintf(stderr, "bench-gpu-gemm: %s\n", why[0] ? why : rocmd_err_name(err));
		return err;
	}
	rw->f[C_DEFAULT].used = 1;
	if (space_default_for(space, &p, dev, &pt) < 0 ||
	    space_key(space, &pt, rw->dkey, sizeof(rw->dkey)) < 0) {
		/* rocmd has no kernel for this problem: say why the default is ruled out. */
		space_point_default(space, &pt);
		space_valid(space, &pt, &p, dev, why, sizeof(why));
		rw->f[C_DEFAULT].outcome = TUNE_RULED_OUT;
		snprintf(rw->f[C_DEFAULT].detail, sizeof(rw->f[C_DEFAULT].detail),
		         "no configuration of the tuner's %s space is valid (the default: %s)",
		         space->name, why);
	} else if (lib != NULL) {
		struct tunedlib_choice ch;

		if (tunedlib_select(lib, space, &p, dev, &ch) == 0) {
			rw->how = tunedlib_how_name(ch.how);
			/* In the space's own form, so that the default's twin is not run twice. */
			if (space_key(space, &ch.pt, rw->tkey, sizeof(rw->tkey)) < 0)
				snprintf(rw->tkey, sizeof(rw->tkey), "%s", ch.config);
			rw->f[C_TUNED].used = strcmp(rw->tkey, rw->dkey) != 0;
		}
		entry_skipped(lib, space, &p, dev, rw->skipped, sizeof(rw->skipped));
	}
	rw->f[C_VENDOR].used = vendor;
	for (r = 0; r < o->rounds; r++)
		for (i = 0; i < C_COUNT; i++)
			if ((err = measure_round(m, rw, (enum cand)tune_round_order(r, i, C_COUNT),
			                         r)) < 0)
				return err;
	for (i = 0; i < C_COUNT; i++)
		if (rw->f[i].nmed > 0)
			rw->f[i].ms = tune_round_figure(rw->f[i].med, rw->f[i].nmed);
	return 0;
}

/* -------------------------------------------------------------- table */

/* The library's figure when it chose something else, else the default's. */
static const struct figure *
rocmd_best(const struct row *rw)
{
	return rw->f[C_TUNED].used ? &rw->f[C_TUNED] : &rw->f[C_DEFAULT];
}

static int
fig_ok(const struct figure *f)
{
	return f->used && f->outcome == TUNE_OK && f->nmed > 0;
}

static void
put_ms(const struct figure *f, char *buf, size_t len)
{
	if (!f->used)
		snprintf(buf, len, "-");
	else if (f->outcome == TUNE_RULED_OUT && !strncmp(f->detail, "no configuration", 16))
		snprintf(buf, len, "none");
	else if (f->outcome != TUNE_OK)
		snprintf(buf, len, "%s", f->outcome == TUNE_WRONG_RESULT ? "wrong"
		                                                         : tune_outcome_name(f->outcome));
	else
		snprintf(buf, len, "%.4f", f->ms);
}

static void
put_err(const struct figure *f, char *buf, size_t len)
{
	if (!f->used || f->rel_err < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1e", f->rel_err);
}

static void
put_ratio(const struct figure *f, const struct figure *vendor, char *buf, size_t len)
{
	if (fig_ok(f) && fig_ok(vendor))
		snprintf(buf, len, "%.3f", vendor->ms / f->ms);
	else
		snprintf(buf, len, "-");
}

static void
print_header(const struct opts *o)
{
	printf("%-4s %-2s %-16s %-15s %9s %9s %-7s %9s %7s %7s %7s %6s %7s %7s %7s\n", "type", "op",
	       "MxNxK", "group", "default", o->lib || o->best ? "tuned" : "-", "choice", "cuBLAS",
	       "dflt", o->lib || o->best ? "tuned" : "-", "TFLOP/s", "noise", "err d", "err t",
	       "err c");
	printf("%-4s %-2s %-16s %-15s %9s %9s %-7s %9s %7s %7s %7s %6s %7s %7s %7s\n", "", "", "", "",
	       "ms", "ms", "", "ms", "/cuBLAS", "/cuBLAS", "rocmd", "%", "", "", "");
}

static void
print_row(const struct row *rw)
{
	const struct problem *pr = rw->pr;
	const struct figure *best = rocmd_best(rw);
	struct gemm_problem p;
	char shape[32], grp[32], ms[C_COUNT][24], er[C_COUNT][16], rd[16], rt[16], tf[16];
	double noise = 0;
	int i;

	problem_of(pr, &p);
	snprintf(shape, sizeof(shape), "%" PRId64 "x%" PRId64 "x%" PRId64, pr->m, pr->n, pr->k);
	snprintf(grp, sizeof(grp), "%s%s%s", group_name[pr->g], pr->what[0] ? " " : "", pr->what);
	for (i = 0; i < C_COUNT; i++) {
		const struct figure *f = &rw->f[i];

		put_ms(f, ms[i], sizeof(ms[i]));
		put_err(f, er[i], sizeof(er[i]));
		if (fig_ok(f) && (f->hi - f->lo) / f->ms > noise)
			noise = (f->hi - f->lo) / f->ms;
	}
	if (!rw->f[C_TUNED].used && rw->how != NULL)
		snprintf(ms[C_TUNED], sizeof(ms[C_TUNED]), "=");
	put_ratio(&rw->f[C_DEFAULT], &rw->f[C_VENDOR], rd, sizeof(rd));
	if (rw->f[C_TUNED].used)
		put_ratio(&rw->f[C_TUNED], &rw->f[C_VENDOR], rt, sizeof(rt));
	else
		snprintf(rt, sizeof(rt), "%s", rw->how != NULL ? "=" : "-");
	if (fig_ok(best))
		snprintf(tf, sizeof(tf), "%.1f", gemm_flops(&p) / (best->ms * 1e9));
	else
		snprintf(tf, sizeof(tf), "-");
	printf("%-4s %-2s %-16s %-15s %9s %9s %-7s %9s %7s %7s %7s %6.1f %7s %7s %7s\n",
	       gemm_dtype_name(pr->dt), pr->op, shape, grp, ms[C_DEFAULT], ms[C_TUNED],
	       rw->how != NULL ? rw->how : "", ms[C_VENDOR], rd, rt, tf, 100 * noise,
	       er[C_DEFAULT], er[C_TUNED], er[C_VENDOR]);
	for (i = 0; i < C_COUNT; i++)
		if (rw->f[i].used && rw->f[i].outcome != TUNE_OK)
			printf("     %s: %s: %s\n", cand_name[i], tune_outcome_name(rw->f[i].outcome),
			       rw->f[i].detail);
	if (rw->skipped[0] != '\0')
		printf("     the library's entry for this problem is not used: %s\n", rw->skipped);
	fflush(stdout);
}

struct geo {
	double sum;
	int n;
};

static void
geo_add(struct geo *g, const struct figure *f, const struct figure *vendor)
{
	if (fig_ok(f) && fig_ok(vendor)) {
		g->sum += log(vendor->ms / f->ms);
		g->n++;
	}
}

static void
put_geo(const struct geo *g, char *buf, size_t len)
{
	if (g->n > 0)
		snprintf(buf, len, "%.3f (%d)", exp(g->sum / g->n), g->n);
	else
		snprintf(buf, len, "-");
}

/* Geometric means of cuBLAS ms / rocmd ms per dtype: default, library, by group. */
static void
print_geomeans(const struct row *rows, int n, int with_lib)
{
	int d, i, g;

	printf("\ngeometric mean of cuBLAS ms / rocmd ms (above 1: rocmd faster; in brackets the "
	       "problems)\n");
	printf("%-5s %-12s %-12s", "type", "default", with_lib ? "tuned" : "-");
	for (g = 0; g < G_COUNT; g++)
		printf(" %-12s", group_name[g]);
	printf("\n");
	for (d = 0; d < GEMM_DTYPE_COUNT; d++) {
		struct geo all = {0}, lib = {0}, grp[G_COUNT] = {{0}};
		char buf[32];

		for (i = 0; i < n; i++) {
			const struct row *rw = &rows[i];

			if (rw->pr->dt != (enum gemm_dtype)d)
				continue;
			geo_add(&all, &rw->f[C_DEFAULT], &rw->f[C_VENDOR]);
			geo_add(&lib, rocmd_best(rw), &rw->f[C_VENDOR]);
			geo_add(&grp[rw->pr->g], rocmd_best(rw), &rw->f[C_VENDOR]);
		}
		if (all.n == 0 && lib.n == 0)
			continue;
		printf("%-5s", gemm_dtype_name((enum gemm_dtype)d));
		put_geo(&all, buf, sizeof(buf));
		printf(" %-12s", buf);
		if (with_lib)
			put_geo(&lib, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "-");
		printf(" %-12s", buf);
		for (g = 0; g < G_COUNT; g++) {
			put_geo(&grp[g], buf, sizeof(buf));
			printf(" %-12s", buf);
		}
		printf("\n");
	}
	if (with_lib)
		printf("(the groups: the tuned figure where the library chose something else, else "
		       "the default's)\n");
}

static void
csv_row(FILE *f, const struct row *rw)
{
	const struct problem *pr = rw->pr;
	int i;

	fprintf(f, "%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%s,%s", gemm_dtype_name(pr->dt),
	        pr->op, pr->m, pr->n, pr->k, group_name[pr->g], pr->what,
	        rw->how != NULL ? rw->how : "");
	for (i = 0; i < C_COUNT; i++) {
		const struct figure *fg = &rw->f[i];

		if (fig_ok(fg))
			fprintf(f, ",ok,%.6f,%.6f,%.6f,%.3g", fg->ms, fg->lo, fg->hi, fg->rel_err);
		else
			fprintf(f, ",%s,,,,", fg->used ? tune_outcome_name(fg->outcome) : "");
	}
	fprintf(f, ",%s,%s\n", rw->dkey, rw->f[C_TUNED].used ? rw->tkey : "");
}

/* --------------------------------------------------------------- main */

static void
usage(void)
{
	fprintf(stderr, "usage: bench-gpu-gemm [--dtype fp32,fp16,bf16] [--filter WORD,...] "
	                "[--lib DIR | --best FILE]\n"
	                "                      [--runs N] [--rounds N] [--warmup MS] [--device N] "
	                "[--csv FILE] [--list]\n"
	                "                      [--backend cuda|cpu]\n");
}

static int
split_words(const char *s, char out[][32], int max)
{
	char buf[1024], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL && n < max;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(out[n++], 32, "%s", tok);
	return n;
}

static int
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"dtype", required_argument, NULL, 'd'},  {"filter", required_argument, NULL, 'f'},
	    {"lib", required_argument, NULL, 'l'},    {"best", required_argument, NULL, 'b'},
	    {"runs", required_argument, NULL, 'r'},   {"rounds", required_argument, NULL, 'R'},
	    {"warmup", required_argument, NULL, 'w'}, {"device", required_argument, NULL, 'D'},
	    {"csv", required_argument, NULL, 'c'},    {"list", no_argument, NULL, 'L'},
	    {"backend", required_argument, NULL, 'B'}, {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0}};
	char words[GEMM_DTYPE_COUNT + 1][32];
	int c, i, n;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < GEMM_DTYPE_COUNT; i++)
		o->dtypes[i] = 1;
	o->runs = 20;
	o->rounds = 4;
	o->warmup_ms = 10;
	o->backend = "cuda";
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			memset(o->dtypes, 0, sizeof(o->dtypes));
			n = split_words(optarg, words, GEMM_DTYPE_COUNT + 1);
			for (i = 0; i < n; i++) {
				enum gemm_dtype dt;

				if (gemm_dtype_parse(words[i], &dt) < 0)
					return -1;
				o->dtypes[dt] = 1;
			}
			break;
		case 'f':
			o->nfilter += split_words(optarg, o->filter + o->nfilter, 32 - o->nfilter);
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'b':
			o->best = optarg;
			break;
		case 'r':
			o->runs = atoi(optarg);
			break;
		case 'R':
			o->rounds = atoi(optarg);
			break;
		case 'w':
			o->warmup_ms = atof(optarg);
			break;
		case 'D':
			o->device = atoi(optarg);
			break;
		case 'c':
			o->csv = optarg;
			break;
		case 'L':
			o->list = 1;
			break;
		case 'B':
			o->backend = optarg;
			break;
		default:
			return -1;
		}
	}
	if (optind < argc || o->runs < 1 || o->runs > 256 || o->rounds < 1 ||
	    o->rounds > MAX_ROUNDS || o->warmup_ms < 0 || (o->lib != NULL && o->best != NULL))
		return -1;
	return 0;
}

static void
print_setup(const struct opts *o, const struct backend_device_info *dev, const char *hash,
            const char *vendor, int nprob)
{
	char date[64];
	time_t now = time(NULL);

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("bench-gpu-gemm, %s\n", date);
	printf("device: %s (%s), %d compute units, last-level cache %" PRId64 " MiB; %s, %s; kernel "
	       "source %s; %s\n",
	       dev->name, dev->arch, dev->compute_units, dev->llc_bytes >> 20,
	       dev->driver_version, dev->compiler_version, hash, vendor);
	printf("%d problems; %d rounds of %d timed runs each (warm-up %.0f ms), median of the "
	       "rounds' medians; tuned: %s\n\n",
	       nprob, o->rounds, o->runs, o->warmup_ms,
	       o->lib != NULL ? o->lib : o->best != NULL ? o->best : "none");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	static struct problem probs[MAX_PROBLEMS];
	static struct row rows[MAX_PROBLEMS];
	struct tune_measure_opts mo;
	struct backend_device_info dev;
	const struct backend_ops *ops;
	struct tunedlib *lib = NULL;
	struct measure *m = NULL;
	struct opts o;
	char hash[17], why[256] = "", vendor[64] = "cuBLAS not loaded";
	FILE *csv = NULL;
	int n, i, err, have_vendor, rc = 1;
	time_t t0 = time(NULL);

	if (parse_opts(argc, argv, &o) < 0) {
		usage();
		return 2;
	}
	n = suite_build(&o, probs, MAX_PROBLEMS);
	if (o.list) {
		for (i = 0; i < n; i++)
			printf("%s %s %" PRId64 "x%" PRId64 "x%" PRId64 " %s %s\n",
			       gemm_dtype_name(probs[i].dt), probs[i].op, probs[i].m, probs[i].n,
			       probs[i].k, group_name[probs[i].g], probs[i].what);
		return 0;
	}
	if (n == 0) {
		fprintf(stderr, "bench-gpu-gemm: no problem of the suite matches\n");
		return 2;
	}
	ops = backend_find(o.backend);
	if (ops == NULL) {
		printf("bench-gpu-gemm: this build has no %s backend\n", o.backend);
		return 77;
	}
	memset(&mo, 0, sizeof(mo));
	mo.runs = o.runs;
	mo.warmup_ms = o.warmup_ms > 0 ? o.warmup_ms : 0.001;
	err = measure_local_open(ops, o.device, &mo, &m, &dev, hash, why, sizeof(why));
	if (err < 0) {
		printf("bench-gpu-gemm: %s\n", why[0] ? why : rocmd_err_name(err));
		return err == ROCMD_EUNSUPPORTED ? 77 : 1;
	}
	have_vendor = !strcmp(o.backend, "cuda") &&
	              bench_cublas_open(vendor, sizeof(vendor), why, sizeof(why)) == 0;
	if (!have_vendor)
		printf("note: %s; rocmd's figures only\n",
		       strcmp(o.backend, "cuda") ? "cuBLAS runs with the CUDA backend only" : why);
	if (library_open(&o, &dev, hash, &lib) < 0)
		goto out;
	if (o.csv != NULL && (csv = fopen(o.csv, "w")) == NULL) {
		fprintf(stderr, "bench-gpu-gemm: cannot write %s\n", o.csv);
		goto out;
	}
	if (csv != NULL)
		fprintf(csv, "dtype,op,m,n,k,group,what,choice,default,default_ms,default_p20_lo,"
		             "default_p80_hi,default_err,tuned,tuned_ms,tuned_p20_lo,tuned_p80_hi,"
		             "tuned_err,cublas,cublas_ms,cublas_p20_lo,cublas_p80_hi,cublas_err,"
		             "default_config,tuned_config\n");
	print_setup(&o, &dev, hash, vendor, n);
	print_header(&o);
	for (i = 0; i < n; i++) {
		rows[i].pr = &probs[i];
		if (measure_problem(m, &o, &dev, lib, have_vendor, &rows[i]) < 0)
			goto out;
		print_row(&rows[i]);
		if (csv != NULL)
			csv_row(csv, &rows[i]);
		if (rows[i].f[C_DEFAULT].outcome == TUNE_LAUNCH_FAILED ||
		    rows[i].f[C_TUNED].outcome == TUNE_LAUNCH_FAILED ||
		    rows[i].f[C_VENDOR].outcome == TUNE_LAUNCH_FAILED) {
			printf("a launch failed: the context may be lost, stopping here\n");
			n = i + 1;
			goto out;
		}
	}
	print_geomeans(rows, n, lib != NULL);
	printf("\n%d problems in %.0f s\n", n, difftime(time(NULL), t0));
	rc = 0;
out:
	if (csv != NULL)
		fclose(csv);
	tunedlib_free(lib);
	bench_cublas_close();
	measure_local_close(m);
	return rc;
}
