/*
 * The override files of rocBLAS and hipBLASLt (see vendor-override.h):
 * written as rocblas-gemm-tune and hipblaslt-bench write them, read as
 * Tensile's and hipBLASLt's UserDrivenTuningParser.cpp read them.
 */
#include "kernels/vendor-override.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

struct buf {
	char *p;
	size_t n, cap;
	int err;
};

static void
put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		/* An empty buffer has no pointer to add to (NULL + 0 is undefined). */
		n = vsnprintf(b->p != NULL ? b->p + b->n : NULL, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = ROCMD_EINVAL;
			return;
		}
		if ((size_t)n < b->cap - b->n) {
			b->n += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap + (size_t)n + 1) * 2;
			char *g = realloc(b->p, cap);

			if (g == NULL) {
				b->err = ROCMD_ENOMEM;
				return;
			}
			b->p = g;
			b->cap = cap;
		}
	}
}

/* A field of the identity line: no comma (both readers skip the line only
 * while it has none), no blank, no newline. */
void
vendor_override_field(char *out, size_t len, const char *s)
{
	size_t i = 0;

	for (; s != NULL && *s && i + 1 < len; s++)
		out[i++] = (*s == ',' || *s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') ? '_' : *s;
	out[i] = '\0';
	if (i == 0)
		snprintf(out, len, "-");
}

static const char *
type_name(enum gemm_dtype dt)
{
	return dt == GEMM_FP16 ? "f16_r" : dt == GEMM_BF16 ? "bf16_r" : "f32_r";
}

static char
op(enum gemm_trans t)
{
	return t == GEMM_T ? 'T' : 'N';
}

static void
identity(struct buf *b, const struct vendor_override_id *id)
{
	char lib[64], dg[65], st[17], arch[32], drv[64];

	vendor_override_field(lib, sizeof(lib), id->library);
	vendor_override_field(dg, sizeof(dg), id->digest);
	vendor_override_field(st, sizeof(st), id->stat);
	vendor_override_field(arch, sizeof(arch), id->arch);
	vendor_override_field(drv, sizeof(drv), id->driver);
	put(b,
	    "# rocmd override library=%s sha256=%s stat=%s gpu=%s cus=%d driver=%s written=%" PRId64
	    "\n",
	    lib, dg, st, arch, id->compute_units, drv, id->written_ms);
}

/* The same problem as hipBLASLt matches it. */
static int
same_lt(const struct gemm_problem *a, const struct gemm_problem *b)
{
	return a->ta == b->ta && a->tb == b->tb && a->m == b->m && a->n == b->n && a->k == b->k &&
	       a->batch == b->batch && a->dtype == b->dtype;
}

int
vendor_override_write(int rocblas, const struct vendor_override_id *id,
                      const struct vendor_override_entry *e, size_t n, char **out, size_t *len)
{
	struct buf b = {0};
	char arch[32];

	*out = NULL;
	*len = 0;
	identity(&b, id);
	if (rocblas) {
		/* The sections rocblas-gemm-tune prints: gemm_ex, then strided batched. */
		for (int sec = 0; sec < 2; sec++) {
			int head = 0;

			for (size_t i = 0; i < n; i++) {
				const struct gemm_problem *p = &e[i].p;

				if ((p->batch > 1) != sec || e[i].index <= 0)
					continue;
				if (!head) {
					put(&b, "%stransA,transB,M,N,batch_count,K,alpha,beta,lda,ldb,ldc,%s"
					        "input_type,output_type,compute_type,solution_index\n",
					    sec ? "\n" : "", sec ? "stride_a,stride_b,stride_c," : "");
					head = 1;
				}
				put(&b, "%c,%c,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%g,%g,%" PRId64
				        ",%" PRId64 ",%" PRId64 ",",
				    op(p->ta), op(p->tb), p->m, p->n, p->batch, p->k, (double)p->alpha,
				    (double)p->beta, p->lda, p->ldb, p->ldc);
				if (sec)
					put(&b, "%" PRId64 ",%" PRId64 ",%" PRId64 ",", p->stride_a,
					    p->stride_b, p->stride_c);
				put(&b, "%s,%s,f32_r,%" PRId64 "\n", type_name(p->dtype),
				    type_name(p->dtype), e[i].index);
			}
		}
	} else {
		vendor_override_field(arch, sizeof(arch), id->arch);
		for (size_t i = 0; i < n; i++) {
			const struct gemm_problem *p = &e[i].p;
			double us = e[i].ms > 0 ? e[i].ms * 1e3 : 0;
			double gflops = us > 0 ? gemm_flops(p) / (us * 1e3) : 0;
			int dup = 0;

			for (size_t j = 0; j < i && !dup; j++)
				dup = e[j].index > 0 && same_lt(&e[j].p, p);
			if (dup || e[i].index <= 0)
				continue;
			/* hipblaslt-bench's matmul value line (testing_matmul.hpp
			 * argument_param, log_perf), then solution index, arch, CUs. */
			put(&b, "%c,%c,0,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%g,%" PRId64
			        ",%" PRId64 ",%g,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
			        ",%" PRId64 ",",
			    op(p->ta), op(p->tb), p->batch, p->m, p->n, p->k, (double)p->alpha, p->lda,
			    p->stride_a, (double)p->beta, p->ldb, p->stride_b, p->ldc, p->stride_c,
			    p->ldc, p->stride_c);
			put(&b, "%s,%s,%s,%s,f32_r,0,0,0,0,0,none,0,f32_r,0,%.2f,0,%.3f,%" PRId64
			        ",%s,%d\n",
			    type_name(p->dtype), type_name(p->dtype), type_name(p->dtype),
			    type_name(p->dtype), gflops, us, e[i].index, arch, id->compute_units);
		}
	}
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	*len = b.n;
	return 0;
}

/* ---- reading, with the libraries' rules ---- */

static int
add(struct vendor_override_entry **out, size_t *n, size_t *cap,
    const struct vendor_override_entry *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct vendor_override_entry *g = realloc(*out, c * sizeof(*g));

		if (g == NULL)
			return ROCMD_ENOMEM;
		*out = g;
		*cap = c;
	}
	(*out)[(*n)++] = *e;
	return 0;
}

/* Splits LINE (modified) at commas, as getline(ss, entry, ',') does: a
 * trailing comma yields no empty last field. */
static int
fields(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	while (*p && n < max) {
		char *c = strchr(p, ',');

		f[n++] = p;
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

/* std::stol / std::stoi: leading blanks, a sign, digits; trailing text ignored. */
static int
sto(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || errno != 0)
		return -1;
	*out = v;
	return 0;
}

static int
stod(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end == s || errno != 0 ? -1 : 0;
}

/* Tensile's convertToDataType, for the types the tuner tunes. */
static int
tensile_type(const char *s, enum gemm_dtype *dt)
{
	if (!strcmp(s, "f32_r") || !strcmp(s, "s"))
		*dt = GEMM_FP32;
	else if (!strcmp(s, "f16_r") || !strcmp(s, "h"))
		*dt = GEMM_FP16;
	else if (!strcmp(s, "bf16_r"))
		*dt = GEMM_BF16;
	else
		return -1;
	return 0;
}

/* Tensile's problemFromEntries: the entry, or -1 for what it drops. */
static int
rocblas_entry(char **f, int n, struct vendor_override_entry *e)
{
	int64_t v[11];
	double beta;
	int ti;
	enum gemm_dtype in, outt, ct;

	if (n != 15 && n != 18)
		return -1;
	memset(e, 0, sizeof(*e));
	for (int i = 2; i <= 5; i++)
		if (sto(f[i], &v[i]) < 0)
			return -1;
	if (stod(f[7], &beta) < 0 || sto(f[8], &v[8]) < 0 || sto(f[9], &v[9]) < 0 ||
	    sto(f[10], &v[10]) < 0)
		return -1;
	/* Bounded as gemm_shape_parse bounds them, so no stride below overflows. */
	for (int i = 2; i <= 10; i++)
		if (i != 6 && i != 7 && (v[i] < 0 || v[i] > GEMM_DIM_MAX))
			return -1;
	e->p.ta = strcmp(f[0], "N") ? GEMM_T : GEMM_N;
	e->p.tb = strcmp(f[1], "N") ? GEMM_T : GEMM_N;
	e->p.m = v[2];
	e->p.n = v[3];
	e->p.batch = v[4];
	e->p.k = v[5];
	e->p.beta = (float)beta;
	e->p.alpha = 1.0f;
	e->p.lda = v[8];
	e->p.ldb = v[9];
	e->p.ldc = v[10];
	if (e->p.batch > 1) {
		e->p.stride_a = e->p.lda * (e->p.ta == GEMM_T ? e->p.m : e->p.k);
		e->p.stride_b = e->p.ldb * (e->p.tb == GEMM_T ? e->p.k : e->p.n);
		e->p.stride_c = e->p.ldc * e->p.n;
	}
	ti = 11;
	if (n == 18) {
		if (sto(f[11], &e->p.stride_a) < 0 || sto(f[12], &e->p.stride_b) < 0 ||
		    sto(f[13], &e->p.stride_c) < 0)
			return -1;
		ti = 14;
	}
	if (tensile_type(f[ti], &in) < 0 || tensile_type(f[ti + 1], &outt) < 0 ||
	    tensile_type(f[ti + 2], &ct) < 0 || in != outt || sto(f[ti + 3], &e->index) < 0)
		return -1;
	e->p.dtype = in;
	return e->index > 0 ? 0 : -1;
}

/* hipBLASLt's problemFromEntries. */
static int
hipblaslt_entry(char **f, int n, struct vendor_override_entry *e)
{
	enum gemm_dtype a, b, c;

	if (n != 37)
		return -1;
	memset(e, 0, sizeof(*e));
	if (sto(f[3], &e->p.batch) < 0 || sto(f[4], &e->p.m) < 0 || sto(f[5], &e->p.n) < 0 ||
	    sto(f[6], &e->p.k) < 0 || sto(f[34], &e->index) < 0)
		return -1;
	if (tensile_type(f[17], &a) < 0 || tensile_type(f[18], &b) < 0 ||
	    tensile_type(f[19], &c) < 0 || (strcmp(f[21], "f32_r") && strcmp(f[21], "xf32_r")) ||
	    a != b || b != c)
		return -1;
	e->p.ta = strcmp(f[0], "N") ? GEMM_T : GEMM_N;
	e->p.tb = strcmp(f[1], "N") ? GEMM_T : GEMM_N;
	e->p.dtype = a;
	e->p.alpha = 1.0f;
	return e->index > 0 ? 0 : -1;
}

int
vendor_override_read(int rocblas, const char *text, size_t len,
                     struct vendor_override_entry **out, size_t *n)
{
	size_t cap = 0, i = 0;
	char line[4096], *f[40];
	int err = 0;

	*out = NULL;
	*n = 0;
	while (i < len && err == 0) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl != NULL ? (size_t)(nl - text) : len, l = end - i;
		struct vendor_override_entry e;
		char *s = line;
		int nf;

		if (l < sizeof(line)) {
			memcpy(line, text + i, l);
			line[l] = '\0';
			line[strcspn(line, "\r")] = '\0';
			if (!rocblas)
				s += strspn(s, " \t\n\r\f\v");
			if (strchr(s, ',') != NULL &&
			    strstr(s, rocblas ? "transA" : "Git Version") == NULL) {
				nf = fields(s, f, 40);
				if ((rocblas ? rocblas_entry(f, nf, &e) : hipblaslt_entry(f, nf, &e)) == 0)
					err = add(out, n, &cap, &e);
			}
		}
		i = end + 1;
	}
	if (err < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

int
vendor_override_identity(const char *text, size_t len, struct vendor_override_id *id)
{
	const char *nl = memchr(text, '\n', len);
	size_t l = nl != NULL ? (size_t)(nl - text) : len;
	char line[1024], *tok, *save = NULL;

	memset(id, 0, sizeof(*id));
	if (l >= sizeof(line) || l < 17 || memcmp(text, "# rocmd override ", 17) != 0)
		return ROCMD_ENOTFOUND;
	memcpy(line, text, l);
	line[l] = '\0';
	for (tok = strtok_r(line + 17, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			continue;
		*eq++ = '\0';
		if (!strcmp(tok, "library"))
			snprintf(id->library, sizeof(id->library), "%s", eq);
		else if (!strcmp(tok, "sha256"))
			snprintf(id->digest, sizeof(id->digest), "%s", eq);
		else if (!strcmp(tok, "stat"))
			snprintf(id->stat, sizeof(id->stat), "%s", eq);
		else if (!strcmp(tok, "gpu"))
			snprintf(id->arch, sizeof(id->arch), "%s", eq);
		else if (!strcmp(tok, "cus"))
			id->compute_units = atoi(eq);
		else if (!strcmp(tok, "driver"))
			snprintf(id->driver, sizeof(id->driver), "%s", eq);
		else if (!strcmp(tok, "written"))
			id->written_ms = strtoll(eq, NULL, 10);
	}
	return id->digest[0] ? 0 : ROCMD_ENOTFOUND;
}
