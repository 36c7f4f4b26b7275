/*
 * Parameter spaces: the built-in CPU and GPU definitions with their constraint
 * predicates, lazy mixed-radix enumeration, neighbours for local search and
 * the key / JSON / define forms of a point. See space.h for the vocabulary.
 */
#include "kernels/space.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/backend.h"

#define V(...)                                                                                     \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define NV(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define PARAM(nm, dfl, ...) {nm, NV(__VA_ARGS__), V(__VA_ARGS__), dfl}

static int64_t
pow2_ceil(int64_t x)
{
	int64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/*
 * CPU space (backend-cpu.c): MT0/MT1/DU are the GotoBLAS MC/NC/KC blocks, TT0 x
 * TT1 the register micro-tile, VW 1 selects the scalar micro-kernel, THREADS
 * the worker count, PAR which loop the workers split (0: MT0 blocks of A, 1:
 * TT1 panels of B), PGR software prefetch of the next micro-panels.
 */
enum { C_MT0, C_MT1, C_DU, C_TT0, C_TT1, C_UNROLL, C_VW, C_THREADS, C_PAR, C_PGR };

static int
cpu_check(const struct space_def *s, const int64_t *v, const struct gemm_problem *p,
	  const struct backend_device_info *dev, char *why, size_t whylen)
{
	int64_t mt0 = v[C_MT0], mt1 = v[C_MT1], du = v[C_DU], tt0 = v[C_TT0], tt1 = v[C_TT1];

	if (mt0 % tt0 || mt1 % tt1) {
		snprintf(why, whylen, "thread tile does not divide the macro tile");
		return 0;
	}
	if (du % v[C_UNROLL]) {
		snprintf(why, whylen, "UNROLL does not divide DU");
		return 0;
	}
	if (p != NULL) {
		/* Blocks far beyond the problem only repeat smaller ones. */
		if (mt0 > pow2_ceil(p->m) && mt0 > 32) {
			snprintf(why, whylen, "MT0 exceeds M");
			return 0;
		}
		if (mt1 > pow2_ceil(p->n) && mt1 > 32) {
			snprintf(why, whylen, "MT1 exceeds N");
			return 0;
		}
		if (du > pow2_ceil(p->k) && du > 16) {
			snprintf(why, whylen, "DU exceeds K");
			return 0;
		}
	}
	if (dev != NULL) {
		if (v[C_THREADS] > dev->compute_units) {
			snprintf(why, whylen, "more threads than CPUs");
			return 0;
		}
		if (dev->regs_per_block > 0 && tt0 * tt1 > dev->regs_per_block) {
			snprintf(why, whylen, "accumulators exceed the register budget");
			return 0;
		}
		if (dev->shared_mem_per_block > 0 &&
		    mt0 * du * 4 > dev->shared_mem_per_block) {
			snprintf(why, whylen, "packed A block exceeds the L2 budget");
			return 0;
		}
		if (dev->shared_mem_per_cu > 0 && du * tt1 * 4 > dev->shared_mem_per_cu) {
			snprintf(why, whylen, "B micro-panel exceeds the L1 budget");
			return 0;
		}
	}
	return 1;
}

static const struct space_def cpu_space = {
	.name = "cpu",
	.nparams = 10,
	.params =
		{
			PARAM("MT0", 2, 32, 64, 128, 256, 512),
			PARAM("MT1", 3, 32, 64, 128, 256, 512, 1024),
			PARAM("DU", 3, 16, 32, 64, 128, 256, 512),
			PARAM("TT0", 1, 4, 8, 16),
			PARAM("TT1", 2, 1, 2, 4, 8),
			PARAM("UNROLL", 2, 1, 2, 4, 8),
			PARAM("VW", 1, 1, 4),
			PARAM("THREADS", 0, 1, 2, 4),
			PARAM("PAR", 0, 0, 1),
			PARAM("PGR", 0, 0, 1),
		},
	.check = cpu_check,
};

/*
 * GPU space, Tensile-style: MT0 x MT1 macro tile per workgroup of WG0 x WG1
 * threads (thread tile MT/WG), DU deep, VW-wide global reads, PGR 0/1/2 (none,
 * register prefetch, double-buffered LDS), LDSPAD, GSU split-K, MC matrix
 * cores. Register and LDS needs are estimated here; backends refine them
 * after compile with kernel_info().
 */
enum { G_MT0, G_MT1, G_DU, G_WG0, G_WG1, G_VW, G_PGR, G_LDSPAD, G_GSU, G_MC };

static int
gpu_check(const struct space_def *s, const int64_t *v, const struct gemm_problem *p,
	  const struct backend_device_info *dev, char *why, size_t whylen)
{
	int64_t tt0, tt1, threads, lds, regs, esz = p != NULL ? (int64_t)gemm_dtype_size(p->dtype) : 4;

	if (v[G_MT0] % v[G_WG0] || v[G_MT1] % v[G_WG1]) {
		snprintf(why, whylen, "workgroup does not divide the macro tile");
		return 0;
	}
	tt0 = v[G_MT0] / v[G_WG0];
	tt1 = v[G_MT1] / v[G_WG1];
	threads = v[G_WG0] * v[G_WG1];
	if (tt0 > 16 || tt1 > 16) {
		snprintf(why, whylen, "thread tile larger than 16");
		return 0;
	}
	if (tt0 % v[G_VW] && tt1 % v[G_VW]) {
		snprintf(why, whylen, "VW divides neither thread tile dimension");
		return 0;
	}
	if ((v[G_MT0] * v[G_DU]) % (threads * v[G_VW]) &&
	    (v[G_MT1] * v[G_DU]) % (threads * v[G_VW])) {
		snprintf(why, whylen, "global reads do not divide evenly among threads");
		return 0;
	}
	lds = ((v[G_MT0] + v[G_LDSPAD]) + (v[G_MT1] + v[G_LDSPAD])) * v[G_DU] * esz *
	      (v[G_PGR] == 2 ? 2 : 1);
	/* accumulators + A/B fragments + prefetch registers + ~24 for addressing */
	regs = tt0 * tt1 + tt0 + tt1 +
	       (v[G_PGR] >= 1 ? (v[G_MT0] + v[G_MT1]) * v[G_DU] / threads : 0) + 24;
	if (v[G_MC]) {
		if (p != NULL && p->dtype == GEMM_FP32) {
			snprintf(why, whylen, "matrix cores need fp16 or bf16");
			return 0;
		}
		if (v[G_MT0] % 16 || v[G_MT1] % 16 || v[G_DU] % 16) {
			snprintf(why, whylen, "matrix-core tiles must be multiples of 16");
			return 0;
		}
	}
	if (regs > 255) {
		snprintf(why, whylen, "estimated %" PRId64 " registers per thread", regs);
		return 0;
	}
	if (p != NULL) {
		if (v[G_GSU] > 1 && p->k / v[G_GSU] < v[G_DU]) {
			snprintf(why, whylen, "split-K leaves less than DU per slice");
			return 0;
		}
		if (v[G_GSU] > 1 && p->batch * ((p->m + v[G_MT0] - 1) / v[G_MT0]) *
		                            ((p->n + v[G_MT1] - 1) / v[G_MT1]) >
		                        BACKEND_SK_COUNTERS) {
			snprintf(why, whylen,
			         "split-K: tiles x batch over the workspace's %d counters",
			         BACKEND_SK_COUNTERS);
			return 0;
		}
		if (v[G_MT0] > pow2_ceil(p->m) && v[G_MT0] > 16) {
			snprintf(why, whylen, "MT0 exceeds M");
			return 0;
		}
		if (v[G_MT1] > pow2_ceil(p->n) && v[G_MT1] > 16) {
			snprintf(why, whylen, "MT1 exceeds N");
			return 0;
		}
	}
	if (dev != NULL) {
		if (v[G_MC] && !dev->matrix_cores) {
			snprintf(why, whylen, "device has no matrix cores");
			return 0;
		}
		if (dev->max_threads_per_block > 0 && threads > dev->max_threads_per_block) {
			snprintf(why, whylen, "workgroup larger than the device allows");
			return 0;
		}
		if (dev->wave_size > 1 && threads % dev->wave_size) {
			snprintf(why, whylen, "workgroup is not whole waves");
			return 0;
		}
		if (dev->shared_mem_per_block > 0 && lds > dev->shared_mem_per_block) {
			snprintf(why, whylen, "needs %" PRId64 " bytes of LDS", lds);
			return 0;
		}
		if (dev->regs_per_block > 0 && regs * threads > dev->regs_per_block) {
			snprintf(why, whylen, "registers exceed the per-block budget");
			return 0;
		}
	}
	return 1;
}

static const struct space_def gpu_space = {
	.name = "gpu",
	.nparams = 10,
	.params =
		{
			PARAM("MT0", 3, 16, 32, 64, 128, 256),
			PARAM("MT1", 3, 16, 32, 64, 128, 256),
			PARAM("DU", 1, 8, 16, 32, 64),
			PARAM("WG0", 1, 8, 16, 32),
			PARAM("WG1", 2, 4, 8, 16, 32),
			PARAM("VW", 2, 1, 2, 4, 8),
			PARAM("PGR", 1, 0, 1, 2),
			PARAM("LDSPAD", 0, 0, 1, 2, 4),
			PARAM("GSU", 0, 1, 2, 4, 8, 16),
			PARAM("MC", 0, 0, 1),
		},
	.check = gpu_check,
};

const struct space_def *
space_cpu(void)
{
	return &cpu_space;
}

const struct space_def *
space_gpu(void)
{
	return &gpu_space;
}

uint64_t
space_size(const struct space_def *s)
{
	uint64_t n = 1;
	int i;

	for (i = 0; i < s->nparams; i++)
		n *= (uint64_t)s->params[i].nvalues;
	return n;
}

int
space_param_index(const struct space_def *s, const char *name)
{
	int i;

	for (i = 0; i < s->nparams; i++)
		if (!strcmp(s->params[i].name, name))
			return i;
	return -1;
}

void
space_point_from_index(const struct space_def *s, uint64_t index, struct space_point *pt)
{
	int i;

	memset(pt, 0, sizeof(*pt));
	for (i = 0; i < s->nparams; i++) {
		uint64_t r = (uint64_t)s->params[i].nvalues;

		pt->idx[i] = (uint8_t)(index % r);
		index /= r;
	}
}

uint64_t
space_point_index(const struct space_def *s, const struct space_point *pt)
{
	uint64_t index = 0;
	int i;

	for (i = s->nparams - 1; i >= 0; i--)
		index = index * (uint64_t)s->params[i].nvalues + pt->idx[i];
	return index;
}

void
space_point_default(const struct space_def *s, struct space_point *pt)
{
	int i;

	memset(pt, 0, sizeof(*pt));
	for (i = 0; i < s->nparams; i++)
		pt->idx[i] = (uint8_t)s->params[i].dflt;
}

/* The valid points exactly LEFT one-step moves from the default over
 * parameters K and up, the one of lowest index kept: what the scan below
 * would find at that distance. */
struct near_search {
	const struct space_def *s;
	const struct gemm_problem *p;
	const struct backend_device_info *dev;
	struct space_point dflt, cur, best;
	uint64_t best_index, calls;
	int found;
};

static void
near_at(struct near_search *ns, int k, int left)
{
	int d, v, v0;

	if (k == ns->s->nparams || left == 0) {
		uint64_t idx;

		if (left != 0)
			return;
		ns->calls++;
		if (!space_valid(ns->s, &ns->cur, ns->p, ns->dev, NULL, 0))
			return;
		idx = space_point_index(ns->s, &ns->cur);
		if (!ns->found || idx < ns->best_index) {
			ns->found = 1;
			ns->best_index = idx;
			ns->best = ns->cur;
		}
		return;
	}
	v0 = ns->dflt.idx[k];
	for (d = -left; d <= left; d++) {
		v = v0 + d;
		if (v < 0 || v >= ns->s->params[k].nvalues)
			continue;
		ns->cur.idx[k] = (uint8_t)v;
		near_at(ns, k + 1, left - abs(d));
	}
	ns->cur.idx[k] = (uint8_t)v0;
}

int
space_default_for(const struct space_def *s, const struct gemm_problem *p,
		  const struct backend_device_info *dev, struct space_point *pt)
{
	struct space_point dflt, cur;
	struct near_search ns;
	uint64_t size = space_size(s), i;
	int best = -1, k, dist;

	space_point_default(s, &dflt);
	*pt = dflt;
	if (space_valid(s, &dflt, p, dev, NULL, 0))
		return 0;
	/* Nearest first: the points 1, 2, ... steps away, while that costs less
	 * than the scan would (valid points are usually a few steps away). */
	memset(&ns, 0, sizeof(ns));
	ns.s = s;
	ns.p = p;
	ns.dev = dev;
	ns.dflt = ns.cur = dflt;
	for (dist = 1; dist <= 6 && ns.calls < size / 4; dist++) {
		near_at(&ns, 0, dist);
		if (ns.found) {
			*pt = ns.best;
			return 0;
		}
	}
	/* A scan, nearest in steps: 10^6 predicate calls cost milliseconds. */
	for (i = 0; i < size; i++) {
		int d = 0;

		space_point_from_index(s, i, &cur);
		for (k = 0; k < s->nparams; k++)
			d += abs((int)cur.idx[k] - (int)dflt.idx[k]);
		if ((best < 0 || d < best) && space_valid(s, &cur, p, dev, NULL, 0)) {
			best = d;
			*pt = cur;
		}
	}
	return best < 0 ? ROCMD_ENOTFOUND : 0;
}

void
space_point_values(const struct space_def *s, const struct space_point *pt, int64_t *v)
{
	int i;

	for (i = 0; i < s->nparams; i++)
		v[i] = s->params[i].values[pt->idx[i]];
}

void
space_config(const struct space_def *s, const struct space_point *pt, struct tune_config *c)
{
	memset(c, 0, sizeof(*c));
	c->space = s;
	space_point_values(s, pt, c->v);
}

int64_t
tune_config_get(const struct tune_config *c, const char *name, int64_t dflt)
{
	int i = space_param_index(c->space, name);

	return i < 0 ? dflt : c->v[i];
}

int
space_valid(const struct space_def *s, const struct space_point *pt, const struct gemm_problem *p,
	    const struct backend_device_info *dev, char *why, size_t whylen)
{
	int64_t v[SPACE_MAX_PARAMS];
	char dummy[8];

	if (why == NULL) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	if (whylen > 0)
		why[0] = '\0';
	if (s->check == NULL)
		return 1;
	space_point_values(s, pt, v);
	return s->check(s, v, p, dev, why, whylen);
}

int
space_neighbours(const struct space_def *s, const struct space_point *pt, struct space_point *out,
		 int max)
{
	int n = 0, i, d;

	for (i = 0; i < s->nparams; i++) {
		for (d = -1; d <= 1; d += 2) {
			int j = (int)pt->idx[i] + d;

			if (j < 0 || j >= s->params[i].nvalues || n >= max)
				continue;
			out[n] = *pt;
			out[n].idx[i] = (uint8_t)j;
			n++;
		}
	}
	return n;
}

int
space_key(const struct space_def *s, const struct space_point *pt, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	if (len == 0)
		return ROCMD_EINVAL;
	buf[0] = '\0';
	for (i = 0; i < s->nparams; i++) {
		int n = snprintf(buf + off, len - off, "%s%s=%" PRId64, i ? ";" : "",
				 s->params[i].name, s->params[i].values[pt->idx[i]]);

		if (n < 0 || (size_t)n >= len - off)
			return ROCMD_EINVAL;
		off += (size_t)n;
	}
	return 0;
}

int
space_key_parse(const struct space_def *s, const char *key, struct space_point *pt)
{
	int seen[SPACE_MAX_PARAMS] = {0};
	const char *p = key;
	int i;

	memset(pt, 0, sizeof(*pt));
	while (*p != '\0') {
		char name[SPACE_NAME_MAX];
		const char *eq = strchr(p, '=');
		char *end;
		long long val;
		int pi, vi;

		if (eq == NULL || eq - p >= SPACE_NAME_MAX || eq == p)
			return ROCMD_EINVAL;
		memcpy(name, p, eq - p);
		name[eq - p] = '\0';
		pi = space_param_index(s, name);
		if (pi < 0 || seen[pi])
			return ROCMD_EINVAL;
		val = strtoll(eq + 1, &end, 10);
		if (end == eq + 1 || (*end != ';' && *end != '\0'))
			return ROCMD_EINVAL;
		for (vi = 0; vi < s->params[pi].nvalues; vi++)
			if (s->params[pi].values[vi] == val)
				break;
		if (vi == s->params[pi].nvalues)
			return ROCMD_EINVAL;
		pt->idx[pi] = (uint8_t)vi;
		seen[pi] = 1;
		p = *end == ';' ? end + 1 : end;
	}
	for (i = 0; i < s->nparams; i++) {
		const struct space_param *sp = &s->params[i];
		int vi;

		if (seen[i])
			continue;
		if (!sp->absent_ok)
			return ROCMD_EINVAL;
		for (vi = 0; vi < sp->nvalues && sp->values[vi] != sp->absent_value; vi++)
			;
		if (vi == sp->nvalues)
			return ROCMD_EINVAL;
		pt->idx[i] = (uint8_t)vi;
	}
	return 0;
}

int
space_json(const struct space_def *s, const struct space_point *pt, char *buf, size_t len)
{
	size_t off = 0;
	int i, n;

	n = snprintf(buf, len, "{");
	if (n < 0 || (size_t)n >= len)
		return ROCMD_EINVAL;
	off = (size_t)n;
	for (i = 0; i < s->nparams; i++) {
		n = snprintf(buf + off, len - off, "%s\"%s\":%" PRId64, i ? "," : "",
			     s->params[i].name, s->params[i].values[pt->idx[i]]);
		if (n < 0 || (size_t)n >= len - off)
			return ROCMD_EINVAL;
		off += (size_t)n;
	}
	n = snprintf(buf + off, len - off, "}");
	return n < 0 || (size_t)n >= len - off ? ROCMD_EINVAL : 0;
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

int
space_json_parse(const struct space_def *s, const char *json, struct space_point *pt)
{
	int seen[SPACE_MAX_PARAMS] = {0}, n = 0, i;
	const char *p = skip_ws(json);

	memset(pt, 0, sizeof(*pt));
	if (*p++ != '{')
		return ROCMD_EINVAL;
	p = skip_ws(p);
	if (*p == '}')
		p++;
	else {
		for (;;) {
			char name[SPACE_NAME_MAX];
			const char *q;
			char *end;
			long long v;
			int pi, vi;

			if (*p++ != '"')
				return ROCMD_EINVAL;
			q = strchr(p, '"');
			if (q == NULL || q - p >= SPACE_NAME_MAX)
				return ROCMD_EINVAL;
			memcpy(name, p, q - p);
			name[q - p] = '\0';
			p = skip_ws(q + 1);
			if (*p++ != ':')
				return ROCMD_EINVAL;
			p = skip_ws(p);
			v = strtoll(p, &end, 10);
			if (end == p)
				return ROCMD_EINVAL;
			pi = space_param_index(s, name);
			if (pi < 0 || seen[pi])
				return ROCMD_EINVAL;
			for (vi = 0; vi < s->params[pi].nvalues; vi++)
				if (s->params[pi].values[vi] == v)
					break;
			if (vi == s->params[pi].nvalues)
				return ROCMD_EINVAL;
			pt->idx[pi] = (uint8_t)vi;
			seen[pi] = 1;
			n++;
			p = skip_ws(end);
			if (*p == ',') {
				p = skip_ws(p + 1);
				continue;
			}
			if (*p++ != '}')
				return ROCMD_EINVAL;
			break;
		}
	}
	if (*skip_ws(p) != '\0')
		return ROCMD_EINVAL;
	for (i = 0; i < s->nparams; i++)
		if (!seen[i])
			return ROCMD_EINVAL;
	return n == s->nparams ? 0 : ROCMD_EINVAL;
}

int
space_defines(const struct space_def *s, const struct space_point *pt, char store[][40],
	      const char **defs)
{
	int i;

	for (i = 0; i < s->nparams; i++) {
		snprintf(store[i], 40, "%s=%" PRId64, s->params[i].name,
			 s->params[i].values[pt->idx[i]]);
		defs[i] = store[i];
	}
	return s->nparams;
}

int
space_fix(struct space_def *s, const char *name, int64_t value)
{
	int pi = space_param_index(s, name), vi;
	struct space_param *sp;

	if (pi < 0)
		return ROCMD_ENOTFOUND;
	sp = &s->params[pi];
	for (vi = 0; vi < sp->nvalues; vi++)
		if (sp->values[vi] == value)
			break;
	if (vi == sp->nvalues)
		return ROCMD_EINVAL;
	sp->values[0] = value;
	sp->nvalues = 1;
	sp->dflt = 0;
	return 0;
}

int
space_param_line(const struct space_param *sp, char *buf, size_t len)
{
	size_t off;
	int i, n;

	n = snprintf(buf, len, "%s=", sp->name);
	if (n < 0 || (size_t)n >= len)
		return ROCMD_EINVAL;
	off = (size_t)n;
	for (i = 0; i < sp->nvalues; i++) {
		n = snprintf(buf + off, len - off, "%s%s%" PRId64, i ? "," : "",
			     i == sp->dflt ? "*" : "", sp->values[i]);
		if (n < 0 || (size_t)n >= len - off)
			return ROCMD_EINVAL;
		off += (size_t)n;
	}
	return 0;
}

int
space_param_parse_line(const char *line, struct space_param *out)
{
	const char *eq = strchr(line, '='), *p;
	int k;

	memset(out, 0, sizeof(*out));
	if (eq == NULL || eq == line || eq - line >= SPACE_NAME_MAX)
		return ROCMD_EINVAL;
	for (p = line; p < eq; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return ROCMD_EINVAL;
	memcpy(out->name, line, eq - line);
	p = eq + 1;
	while (*p != '\0' && *p != '\n' && *p != '\r') {
		char *end;
		int star = 0;

		if (*p == '*') {
			star = 1;
			p++;
		}
		if (out->nvalues >= SPACE_MAX_VALUES)
			return ROCMD_EINVAL;
		out->values[out->nvalues] = strtoll(p, &end, 10);
		if (end == p)
			return ROCMD_EINVAL;
		for (k = 0; k < out->nvalues; k++)
			if (out->values[k] == out->values[out->nvalues])
				return ROCMD_EINVAL; /* a value twice: two points, one key */
		if (star)
			out->dflt = out->nvalues;
		out->nvalues++;
		p = end;
		if (*p == ',')
			p++;
		else if (*p != '\0' && *p != '\n' && *p != '\r')
			return ROCMD_EINVAL;
	}
	return out->nvalues > 0 ? 0 : ROCMD_EINVAL;
}
