/*
 * Landscape files: every evaluation of one problem as CSV, for replaying
 * strategies without running kernels. The '#' header carries the key and the
 * space's parameters (value lists, '*' marking the default), so a replay
 * rebuilds the exact space from the file alone:
 *
 *   # rocmd-landscape 1
 *   # backend=cpu
 *   # device=x86_64|AMD EPYC|2
 *   # software=linux 6.1.0|rocmd-cpu 1|cc 12.2.0|0123456789abcdef
 *   # problem=fp32:NN:256x256x256:b1
 *   # space=cpu
 *   # param=MT0=32,*64,128
 *   config,outcome,median_ms,p20_ms,p80_ms,gflops
 *   MT0=64;MT1=128;...,ok,1.234,1.210,1.250,27.18
 *
 * A later line for the same config replaces an earlier one. A file without
 * the header (just "config_key,outcome,median_ms,..." lines, as early GPU
 * landscapes were written) is accepted too: the space is inferred from the
 * keys (each parameter's distinct values, in key order) and the first entry is
 * taken as the default.
 */
#include "kernels/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/libc.h"

struct lentry {
	char *key;
	struct tune_result r;
};

struct tune_landscape {
	struct space_def space;
	char problem[64];
	struct lentry *e;
	size_t n, cap;
	int64_t *slots; /* open addressing: entry index + 1 */
	size_t nslots;
	double best;
};

static uint64_t
str_hash(const char *s)
{
	return backend_hash(s, strlen(s), BACKEND_HASH_INIT);
}

static int
find_slot(const struct tune_landscape *l, const char *key, size_t *slot)
{
	size_t i = (size_t)str_hash(key) & (l->nslots - 1);

	while (l->slots[i] != 0) {
		if (!strcmp(l->e[l->slots[i] - 1].key, key)) {
			*slot = i;
			return 1;
		}
		i = (i + 1) & (l->nslots - 1);
	}
	*slot = i;
	return 0;
}

static int
rehash(struct tune_landscape *l, size_t nslots)
{
	int64_t *ns = calloc(nslots, sizeof(int64_t));
	size_t i;

	if (ns == NULL)
		return ROCMD_ENOMEM;
	free(l->slots);
	l->slots = ns;
	l->nslots = nslots;
	for (i = 0; i < l->n; i++) {
		size_t s;

		find_slot(l, l->e[i].key, &s);
		l->slots[s] = (int64_t)i + 1;
	}
	return 0;
}

static int
add_entry(struct tune_landscape *l, const char *key, const struct tune_result *r)
{
	size_t slot;

	if ((l->n + 1) * 2 > l->nslots && rehash(l, l->nslots ? l->nslots * 2 : 1024) < 0)
		return ROCMD_ENOMEM;
	if (find_slot(l, key, &slot)) {
		l->e[l->slots[slot] - 1].r = *r;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct lentry *ne = realloc(l->e, cap * sizeof(*ne));

		if (ne == NULL)
			return ROCMD_ENOMEM;
		l->e = ne;
		l->cap = cap;
	}
	l->e[l->n].key = strdup(key);
	if (l->e[l->n].key == NULL)
		return ROCMD_ENOMEM;
	l->e[l->n].r = *r;
	l->n++;
	l->slots[slot] = (int64_t)l->n;
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Builds the space from the keys of a headerless landscape. */
static int
infer_space(struct tune_landscape *l)
{
	struct space_def *s = &l->space;
	size_t i;
	int k;

	snprintf(s->name, sizeof(s->name), "inferred");
	for (i = 0; i < l->n; i++) {
		const char *p = l->e[i].key;
		int pi = 0;

		while (*p != '\0') {
			const char *eq = strchr(p, '=');
			char *end;
			int64_t v;
			struct space_param *sp;

			if (eq == NULL || eq == p || eq - p >= SPACE_NAME_MAX ||
			    pi >= SPACE_MAX_PARAMS)
				return ROCMD_ECORRUPT;
			sp = &s->params[pi];
			if (i == 0) {
				memcpy(sp->name, p, eq - p);
				sp->name[eq - p] = '\0';
				if (space_param_index(s, sp->name) >= 0)
					return ROCMD_ECORRUPT; /* a name twice */
				s->nparams = pi + 1;
			} else if (pi >= s->nparams || strncmp(sp->name, p, eq - p) ||
				   sp->name[eq - p] != '\0') {
				return ROCMD_ECORRUPT;
			}
			v = strtoll(eq + 1, &end, 10);
			if (end == eq + 1 || (*end != ';' && *end != '\0'))
				return ROCMD_ECORRUPT;
			for (k = 0; k < sp->nvalues; k++)
				if (sp->values[k] == v)
					break;
			if (k == sp->nvalues) {
				if (sp->nvalues >= SPACE_MAX_VALUES)
					return ROCMD_ECORRUPT;
				sp->values[sp->nvalues++] = v;
			}
			pi++;
			p = *end == ';' ? end + 1 : end;
		}
		if (pi != s->nparams)
			return ROCMD_ECORRUPT;
	}
	for (k = 0; k < s->nparams; k++)
		qsort(s->params[k].values, s->params[k].nvalues, sizeof(int64_t), cmp_i64);
	/* The first entry is the default. */
	{
		struct space_point pt;

		if (space_key_parse(s, l->e[0].key, &pt) < 0)
			return ROCMD_ECORRUPT;
		for (k = 0; k < s->nparams; k++)
			s->params[k].dflt = pt.idx[k];
	}
	return 0;
}

int
tune_landscape_entry(const struct tune_landscape *l, int64_t i, const char **key,
		     struct tune_result *r)
{
	if (i < 0 || (size_t)i >= l->n)
		return ROCMD_ENOTFOUND;
	*key = l->e[i].key;
	*r = l->e[i].r;
	return 0;
}

void
tune_landscape_free(struct tune_landscape *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->e[i].key);
	free(l->e);
	free(l->slots);
	free(l);
}

/* Spaces beyond 2^48 points do not fit the mixed-radix index comfortably. */
static int
space_size_ok(const struct space_def *s)
{
	uint64_t n = 1;
	int i;

	for (i = 0; i < s->nparams; i++) {
		n *= (uint64_t)s->params[i].nvalues;
		if (n > ((uint64_t)1 << 48))
			return 0;
	}
	return 1;
}

/* Reads a landscape from F (closed here); PATH names it in messages. */
static int
load_stream(FILE *f, const char *path, struct tune_landscape **out, char *why, size_t whylen)
{
	struct tune_landscape *l;
	char line[8192]; /* a param line of SPACE_MAX_VALUES values */
	int lineno = 0, err = 0, magic = 0;
	size_t i;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL || rehash(l, 1024) < 0) {
		fclose(f);
		free(l);
		return ROCMD_ENOMEM;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *fields[6], *p = line;
		int nf = 0;
		struct tune_result r;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0')
			continue;
		if (line[0] == '#') {
			if (!strcmp(line, "# rocmd-landscape 1"))
				magic = 1;
			else if (!strncmp(line, "# problem=", 10))
				snprintf(l->problem, sizeof(l->problem), "%.63s", line + 10);
			else if (!strncmp(line, "# space=", 8))
				snprintf(l->space.name, sizeof(l->space.name), "%.31s", line + 8);
			else if (!strncmp(line, "# param=", 8)) {
				if (l->space.nparams >= SPACE_MAX_PARAMS ||
				    space_param_parse_line(line + 8,
							   &l->space.params[l->space.nparams]) < 0 ||
				    space_param_index(&l->space,
						      l->space.params[l->space.nparams].name) >= 0) {
					snprintf(why, whylen, "%s:%d: bad parameter line", path,
						 lineno);
					err = ROCMD_ECORRUPT;
					break;
				}
				l->space.nparams++;
			}
			continue;
		}
		if (!strncmp(line, "config,", 7) || !strncmp(line, "config_key,", 11))
			continue;
		while (nf < 6) {
			fields[nf++] = p;
			p = strchr(p, ',');
			if (p == NULL)
				break;
			*p++ = '\0';
		}
		memset(&r, 0, sizeof(r));
		if (nf < 3 || tune_outcome_parse(fields[1], &r.outcome) < 0) {
			snprintf(why, whylen, "%s:%d: bad entry", path, lineno);
			err = ROCMD_ECORRUPT;
			break;
		}
		r.median_ms = atof(fields[2]);
		r.p20_ms = nf > 3 ? atof(fields[3]) : r.median_ms;
		r.p80_ms = nf > 4 ? atof(fields[4]) : r.median_ms;
		r.gflops = nf > 5 ? atof(fields[5]) : 0.0;
		if ((err = add_entry(l, fields[0], &r)) < 0)
			break;
	}
	fclose(f);
	if (err == 0 && !magic && l->space.nparams == 0 && l->n > 0) {
		err = infer_space(l);
		if (err < 0)
			snprintf(why, whylen, "%s: cannot infer the space from the keys", path);
		else
			magic = 1;
	}
	if (err == 0 && (!magic || l->space.nparams == 0)) {
		snprintf(why, whylen, "%s: not a rocmd landscape (header or parameters missing)",
			 path);
		err = ROCMD_ECORRUPT;
	}
	if (err == 0 && !space_size_ok(&l->space)) {
		snprintf(why, whylen, "%s: the space has more than 2^48 points", path);
		err = ROCMD_ECORRUPT;
	}
	if (err < 0) {
		tune_landscape_free(l);
		return err;
	}
	l->best = INFINITY;
	for (i = 0; i < l->n; i++)
		if (l->e[i].r.outcome == TUNE_OK && l->e[i].r.median_ms > 0 &&
		    l->e[i].r.median_ms < l->best)
			l->best = l->e[i].r.median_ms;
	*out = l;
	return 0;
}

int
tune_landscape_load(const char *path, struct tune_landscape **out, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");

	*out = NULL;
	if (f == NULL) {
		snprintf(why, whylen, "cannot open %s", path);
		return ROCMD_ENOTFOUND;
	}
	return load_stream(f, path, out, why, whylen);
}

int
tune_landscape_load_buf(const char *data, size_t len, struct tune_landscape **out, char *why,
			size_t whylen)
{
	FILE *f;

	*out = NULL;
	if (len == 0) {
		snprintf(why, whylen, "empty landscape");
		return ROCMD_ECORRUPT;
	}
	f = rocmd_memfile(data, len);
	if (f == NULL)
		return ROCMD_ENOMEM;
	return load_stream(f, "(buffer)", out, why, whylen);
}

const struct space_def *
tune_landscape_space(const struct tune_landscape *l)
{
	return &l->space;
}

const char *
tune_landscape_problem(const struct tune_landscape *l)
{
	return l->problem;
}

int64_t
tune_landscape_count(const struct tune_landscape *l)
{
	return (int64_t)l->n;
}

double
tune_landscape_best(const struct tune_landscape *l)
{
	return l->best;
}

int
tune_landscape_get(const struct tune_landscape *l, const char *key, struct tune_result *r)
{
	size_t slot;

	if (!find_slot(l, key, &slot))
		return ROCMD_ENOTFOUND;
	*r = l->e[l->slots[slot] - 1].r;
	return 0;
}

int
tune_landscape_write_header(FILE *f, const struct tune_key *key, const struct space_def *s)
{
	char line[8192];
	int i;

	fprintf(f, "# rocmd-landscape 1\n# backend=%s\n# device=%s|%s|%d\n", key->backend, key->arch,
		key->device, key->compute_units);
	fprintf(f, "# software=%s|%s|%s|%s\n# problem=%s\n# space=%s\n", key->driver, key->runtime,
		key->compiler, key->source_hash, key->problem, s->name);
	for (i = 0; i < s->nparams; i++) {
		if (space_param_line(&s->params[i], line, sizeof(line)) < 0)
			return ROCMD_EINVAL;
		fprintf(f, "# param=%s\n", line);
	}
	fprintf(f, "config,outcome,median_ms,p20_ms,p80_ms,gflops\n");
	return fflush(f) == 0 ? 0 : ROCMD_EIO;
}

int
tune_landscape_write_entry(FILE *f, const char *config, const struct tune_result *r)
{
	fprintf(f, "%s,%s,%.6g,%.6g,%.6g,%.4g\n", config, tune_outcome_name(r->outcome),
		r->median_ms, r->p20_ms, r->p80_ms, r->gflops);
	return fflush(f) == 0 ? 0 : ROCMD_EIO;
}
