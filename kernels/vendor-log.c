/*
 * The readers of the vendors' GEMM logs (see vendor-log.h), written from what
 * the libraries print:
 *
 * rocBLAS (rocblas_gemm_ex_imp.hpp, rocblas_gemm_imp.hpp,
 * rocblas_gemm_strided_batched_ex_imp.hpp; log_bench joins its arguments with
 * spaces; "./rocblas-bench --api 1" for the 64-bit API):
 *   ./rocblas-bench -f gemm -r f32_r --transposeA N --transposeB T -m M -n N
 *       -k K --alpha A --lda L --ldb L --beta B --ldc L
 *   ./rocblas-bench -f gemm_ex --transposeA N ... --a_type f16_r --lda L
 *       --b_type f16_r ... --c_type f16_r --ldc L --d_type f16_r --ldd L
 *       --compute_type f32_r --algo 0 --solution_index 0 --flags 0
 *   ./rocblas-bench -f gemm_strided_batched_ex ... --stride_a S ...
 *       --batch_count N ...
 * hipBLASLt (the bench line of HIPBLASLT_LOG_MASK & 32, as its offline tuning
 * guide shows it):
 *   hipblaslt-bench --api_method c -m M -n N -k K --lda L --ldb L --ldc L
 *       --ldd L --stride_a S ... --alpha A --beta B --transA N --transB N
 *       --batch_count N --a_type f16_r ... --compute_type f32_r ...
 * PyTorch TunableOp (aten/src/ATen/cuda/tunable: OpName,Signature,Algo,ms;
 * GemmParams::Signature "%c%c_%ld_%ld_%ld_ld_%ld_%ld_%ld", the strided batched
 * one "%c%c_%ld_%ld_%ld_B_%ld_ld_%ld_%ld_%ld", older files without _ld):
 *   Validator,PT_VERSION,2.5.0
 *   GemmTunableOp_Half_TN,tn_4096_16_4096_ld_4096_4096_4096,Gemm_Hipblaslt_1219,0.0152
 *   GemmStridedBatchedTunableOp_float_NT,nt_64_64_128_B_32_ld_64_64_64,Gemm_Rocblas_17,0.01
 * librocmd-gemm (its own log, gemm-api.c: a line at a shape's first call in a
 * handle, one with the calls since when the handle forgets the shape or closes):
 *   rocmd-gemm -f gemm_ex --transposeA T --transposeB N -m M -n N -k K
 *       --alpha A --lda L --ldb L --beta B --ldc L --a_type f16_r
 *       --compute_type f32_r --calls C
 */
#include "kernels/vendor-log.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define MAX_TOKENS 96

static int
skip(struct vendor_shapes *s, const char *why)
{
	s->skipped++;
	if (s->skip_why[0] == '\0')
		snprintf(s->skip_why, sizeof(s->skip_why), "%s", why);
	return 2;
}

/* A dtype the tuner tunes from a type name the libraries print. */
static int
type_of(const char *v, enum gemm_dtype *out)
{
	if (!strcmp(v, "f32_r") || !strcmp(v, "s"))
		*out = GEMM_FP32;
	else if (!strcmp(v, "f16_r") || !strcmp(v, "h"))
		*out = GEMM_FP16;
	else if (!strcmp(v, "bf16_r"))
		*out = GEMM_BF16;
	else
		return -1;
	return 0;
}

static int
int_of(const char *v, int64_t *out)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || x < 0 || x > ((int64_t)1 << 40))
		return -1;
	*out = x;
	return 0;
}

static int
real_of(const char *v, float *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || !isfinite(x) || fabs(x) > 1e30)
		return -1;
	*out = (float)x;
	return 0;
}

static int
same(const struct gemm_problem *a, const struct gemm_problem *b)
{
	return a->dtype == b->dtype && a->ta == b->ta && a->tb == b->tb && a->m == b->m &&
	       a->n == b->n && a->k == b->k && a->lda == b->lda && a->ldb == b->ldb &&
	       a->ldc == b->ldc && a->stride_a == b->stride_a && a->stride_b == b->stride_b &&
	       a->stride_c == b->stride_c && a->batch == b->batch && a->alpha == b->alpha &&
	       a->beta == b->beta;
}

/* Counts CALLS calls of P under LIBRARY, or adds it. */
static int
add(struct vendor_shapes *s, const char *library, const char *source,
    const struct gemm_problem *p, double ms, int64_t calls)
{
	struct vendor_shape *e;

	for (size_t i = 0; i < s->n; i++) {
		e = &s->v[i];
		if (!strcmp(e->library, library) && same(&e->p, p)) {
			e->calls += calls;
			if (ms > e->ms)
				e->ms = ms;
			return 1;
		}
	}
	if (s->n >= VENDOR_LOG_MAX_SHAPES)
		return ROCMD_EINVAL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct vendor_shape *g = realloc(s->v, cap * sizeof(*g));

		if (g == NULL)
			return ROCMD_ENOMEM;
		s->v = g;
		s->cap = cap;
	}
	e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->library, sizeof(e->library), "%s", library);
	snprintf(e->source, sizeof(e->source), "%s", source);
	e->p = *p;
	e->calls = calls;
	e->ms = ms;
	return 1;
}

/* The problem a bench line's options describe: 0, or -1 with a reason. */
static int
check_problem(struct gemm_problem *p, const char **why)
{
	char w[160];

	if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1) {
		*why = "a GEMM with an empty dimension";
		return -1;
	}
	if (p->lda == 0)
		p->lda = gemm_rows_a(p);
	if (p->ldb == 0)
		p->ldb = gemm_rows_b(p);
	if (p->ldc == 0)
		p->ldc = p->m;
	if (p->batch > 1) {
		/* A stride the line did not give (-1) is the tight one; one it gave
		 * stays, and one that makes batch items overlap (a broadcast operand,
		 * stride 0) is a problem the tuner cannot measure. */
		if (p->stride_a < 0)
			p->stride_a = p->lda * gemm_cols_a(p);
		if (p->stride_b < 0)
			p->stride_b = p->ldb * gemm_cols_b(p);
		if (p->stride_c < 0)
			p->stride_c = p->ldc * p->n;
	} else {
		p->stride_a = p->stride_b = p->stride_c = 0;
	}
	if (gemm_problem_check(p, w, sizeof(w)) < 0) {
		*why = p->batch > 1 ? "a batched GEMM whose items overlap (a broadcast operand) or "
		                      "whose leading dimensions do not fit it"
		                    : "a GEMM whose leading dimensions do not fit it";
		return -1;
	}
	return 0;
}

/* Splits LINE (a copy) into whitespace-separated tokens. */
static int
tokens(char *line, char **tok, int max)
{
	int n = 0;

	for (char *p = line; *p && n < max;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* The value of option NAME among the tokens, or NULL. */
static const char *
opt(char **tok, int n, const char *name)
{
	for (int i = 0; i + 1 < n; i++)
		if (!strcmp(tok[i], name))
			return tok[i + 1];
	return NULL;
}

static int
op_of(const char *v, enum gemm_trans *out)
{
	if (v == NULL || (v[0] != 'N' && v[0] != 'T' && v[0] != 'n' && v[0] != 't') || v[1])
		return -1;
	*out = (v[0] == 'T' || v[0] == 't') ? GEMM_T : GEMM_N;
	return 0;
}

/* The options both bench lines share: sizes, leading dimensions, scalars. */
static int
common_opts(char **tok, int n, struct gemm_problem *p, const char *trans_a, const char *trans_b,
            const char **why)
{
	static const char *const ints[] = {"-m", "-n", "-k", "--lda", "--ldb", "--ldc", "--stride_a",
	                                   "--stride_b", "--stride_c", NULL};
	int64_t *dst[] = {&p->m, &p->n, &p->k, &p->lda, &p->ldb, &p->ldc, &p->stride_a, &p->stride_b,
	                  &p->stride_c};
	const char *v;

	p->stride_a = p->stride_b = p->stride_c = -1;
	if (op_of(opt(tok, n, trans_a), &p->ta) < 0 || op_of(opt(tok, n, trans_b), &p->tb) < 0) {
		*why = "a GEMM with a conjugate or unknown transpose";
		return -1;
	}
	for (int i = 0; ints[i] != NULL; i++)
		if ((v = opt(tok, n, ints[i])) != NULL && int_of(v, dst[i]) < 0) {
			*why = "a GEMM line with a bad size";
			return -1;
		}
	p->alpha = 1.0f;
	p->beta = 0.0f;
	if ((v = opt(tok, n, "--alpha")) != NULL && real_of(v, &p->alpha) < 0) {
		*why = "a GEMM line with a bad alpha";
		return -1;
	}
	if ((v = opt(tok, n, "--beta")) != NULL && real_of(v, &p->beta) < 0) {
		*why = "a GEMM line with a bad beta";
		return -1;
	}
	if (opt(tok, n, "--alphai") != NULL || opt(tok, n, "--betai") != NULL) {
		*why = "a complex GEMM";
		return -1;
	}
	return 0;
}

/* Storage types A = B = C = D and an fp32 compute type, from these options. */
static int
types_opts(char **tok, int n, enum gemm_dtype *dt, const char **why)
{
	static const char *const names[] = {"--a_type", "--b_type", "--c_type", "--d_type", NULL};
	const char *ct = opt(tok, n, "--compute_type");
	enum gemm_dtype t[4];

	for (int i = 0; names[i] != NULL; i++) {
		const char *v = opt(tok, n, names[i]);

		if (v == NULL && i > 0) {
			t[i] = t[i - 1];
			continue;
		}
		if (v == NULL || type_of(v, &t[i]) < 0) {
			*why = "a GEMM of a type not tuned here (complex, double or integer)";
			return -1;
		}
	}
	if (t[0] != t[1] || t[1] != t[2] || t[2] != t[3]) {
		*why = "a GEMM with mixed storage types";
		return -1;
	}
	if (ct == NULL || strcmp(ct, "f32_r") != 0) {
		*why = "a GEMM that does not accumulate in fp32 (compute type)";
		return -1;
	}
	*dt = t[0];
	return 0;
}

static int
rocblas_line(struct vendor_shapes *s, char **tok, int n)
{
	const char *f = opt(tok, n, "-f"), *why = NULL, *v;
	struct gemm_problem p;
	int64_t batch = 1;

	memset(&p, 0, sizeof(p));
	if (f == NULL || strncmp(f, "gemm", 4) != 0)
		return 0;
	s->lines++;
	if (strcmp(f, "gemm") && strcmp(f, "gemm_ex") && strcmp(f, "gemm_strided_batched") &&
	    strcmp(f, "gemm_strided_batched_ex"))
		return skip(s, "a pointer-array batched or other GEMM variant");
	if (common_opts(tok, n, &p, "--transposeA", "--transposeB", &why) < 0)
		return skip(s, why);
	if (!strcmp(f, "gemm") || !strcmp(f, "gemm_strided_batched")) {
		/* rocblas_sgemm computes in fp32; hgemm in fp16, which is another problem. */
		v = opt(tok, n, "-r");
		if (v == NULL || type_of(v, &p.dtype) < 0 || p.dtype != GEMM_FP32)
			return skip(s, "an hgemm or a GEMM of a type not tuned here");
	} else if (types_opts(tok, n, &p.dtype, &why) < 0) {
		return skip(s, why);
	}
	if (strstr(f, "batched") != NULL) {
		v = opt(tok, n, "--batch_count");
		if (v == NULL)
			v = opt(tok, n, "--batch");
		if (v == NULL || int_of(v, &batch) < 0)
			return skip(s, "a batched GEMM without its batch count");
	}
	p.batch = batch;
	if (check_problem(&p, &why) < 0)
		return skip(s, why);
	return add(s, "rocblas", "rocblas-bench", &p, 0, 1);
}

/* librocmd-gemm's own log (gemm-api.c, ROCMD_GEMM_LOG_PATH): gemm_ex options
 * as rocBLAS writes them and --calls, the calls the line stands for. */
static int
rocmd_line(struct vendor_shapes *s, char **tok, int n)
{
	const char *why = NULL, *v = opt(tok, n, "--calls");
	struct gemm_problem p;
	int64_t calls = 1;

	memset(&p, 0, sizeof(p));
	s->lines++;
	if (common_opts(tok, n, &p, "--transposeA", "--transposeB", &why) < 0 ||
	    types_opts(tok, n, &p.dtype, &why) < 0)
		return skip(s, why);
	if (v != NULL && (int_of(v, &calls) < 0 || calls < 1))
		return skip(s, "a librocmd-gemm line with a bad call count");
	p.batch = 1;
	if (check_problem(&p, &why) < 0)
		return skip(s, why);
	return add(s, "rocmd-gemm", "rocmd-gemm", &p, 0, calls);
}

static int
hipblaslt_line(struct vendor_shapes *s, char **tok, int n)
{
	const char *why = NULL, *v;
	struct gemm_problem p;
	int64_t batch = 1;

	memset(&p, 0, sizeof(p));
	s->lines++;
	if (opt(tok, n, "--grouped_gemm") != NULL && strcmp(opt(tok, n, "--grouped_gemm"), "0"))
		return skip(s, "a grouped GEMM");
	if (common_opts(tok, n, &p, "--transA", "--transB", &why) < 0 ||
	    types_opts(tok, n, &p.dtype, &why) < 0)
		return skip(s, why);
	if ((v = opt(tok, n, "--batch_count")) != NULL && int_of(v, &batch) < 0)
		return skip(s, "a bad batch count");
	p.batch = batch;
	if (check_problem(&p, &why) < 0)
		return skip(s, why);
	return add(s, "hipblaslt", "hipblaslt-bench", &p, 0, 1);
}

/* "GemmTunableOp_Half_TN" and friends: the storage type, or -1. */
static int
tunable_type(const char *op, enum gemm_dtype *dt)
{
	const char *t = strchr(op, '_');

	if (t == NULL)
		return -1;
	t++;
	if (!strncmp(t, "float_", 6))
		*dt = GEMM_FP32;
	else if (!strncmp(t, "Half_", 5))
		*dt = GEMM_FP16;
	else if (!strncmp(t, "BFloat16_", 9))
		*dt = GEMM_BF16;
	else
		return -1;
	return 0;
}

/* Splits FIELD at '_' into its parts. */
static int
parts(char *field, char **out, int max)
{
	int n = 0;

	for (char *p = field; n < max;) {
		out[n++] = p;
		p = strchr(p, '_');
		if (p == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

static int
tunable_line(struct vendor_shapes *s, char *line)
{
	char *f[6], *sig[12], *p0 = line, *c;
	const char *library = "", *why = NULL;
	struct gemm_problem p;
	float ms = 0;
	int nf = 0, ns, strided;

	while (nf < 6) {
		f[nf++] = p0;
		if ((c = strchr(p0, ',')) == NULL)
			break;
		*c = '\0';
		p0 = c + 1;
	}
	if (nf < 2 || !strcmp(f[0], "Validator"))
		return 0;
	strided = !strncmp(f[0], "GemmStridedBatchedTunableOp_", 28);
	if (!strncmp(f[0], "GemmAndBiasTunableOp_", 21) || !strncmp(f[0], "ScaledGemmTunableOp", 19)) {
		s->lines++;
		return skip(s, "a GEMM with a bias epilogue or scaling");
	}
	if (strncmp(f[0], "GemmTunableOp_", 14) != 0 && !strided)
		return 0;
	s->lines++;
	memset(&p, 0, sizeof(p));
	p.stride_a = p.stride_b = p.stride_c = -1;
	if (tunable_type(f[0], &p.dtype) < 0)
		return skip(s, "a TunableOp GEMM of a type not tuned here");
	if (nf != 4)
		return skip(s, "a TunableOp line without its algorithm and time");
	ns = parts(f[1], sig, 12);
	if (ns < 4 || strlen(sig[0]) != 2) {
		return skip(s, "a TunableOp signature not understood");
	}
	{
		char a[2] = {sig[0][0], 0}, b[2] = {sig[0][1], 0};
		int i = 4;

		if (op_of(a, &p.ta) < 0 || op_of(b, &p.tb) < 0 || int_of(sig[1], &p.m) < 0 ||
		    int_of(sig[2], &p.n) < 0 || int_of(sig[3], &p.k) < 0)
			return skip(s, "a TunableOp signature not understood");
		p.batch = 1;
		if (strided) {
			if (i + 1 >= ns || strcmp(sig[i], "B") || int_of(sig[i + 1], &p.batch) < 0)
				return skip(s, "a TunableOp batched signature without its batch");
			i += 2;
		}
		if (i < ns) {
			if (i + 4 != ns || strcmp(sig[i], "ld") || int_of(sig[i + 1], &p.lda) < 0 ||
			    int_of(sig[i + 2], &p.ldb) < 0 || int_of(sig[i + 3], &p.ldc) < 0)
				return skip(s, "a TunableOp signature not understood");
		}
	}
	p.alpha = 1.0f;
	if (strstr(f[2], "Hipblaslt") != NULL)
		library = "hipblaslt";
	else if (strstr(f[2], "Rocblas") != NULL)
		library = "rocblas";
	f[3][strcspn(f[3], "\r\n")] = '\0';
	if (real_of(f[3], &ms) < 0 || ms < 0)
		ms = 0;
	if (check_problem(&p, &why) < 0)
		return skip(s, why);
	return add(s, library, "tunableop", &p, ms, 1);
}

int
vendor_log_line(struct vendor_shapes *s, const char *line, size_t len)
{
	char buf[VENDOR_LOG_MAX_LINE], *tok[MAX_TOKENS];
	int n;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL)
		return 0;
	if (!strncmp(buf, "Gemm", 4) || !strncmp(buf, "Validator,", 10))
		return tunable_line(s, buf);
	if (!strncmp(buf, "rocmd-gemm ", 11)) {
		n = tokens(buf, tok, MAX_TOKENS);
		return rocmd_line(s, tok, n);
	}
	if (strstr(buf, "rocblas-bench") == NULL && strstr(buf, "hipblaslt-bench") == NULL)
		return 0;
	n = tokens(buf, tok, MAX_TOKENS);
	for (int i = 0; i < n; i++) {
		const char *name = strrchr(tok[i], '/');

		name = name != NULL ? name + 1 : tok[i];
		if (!strcmp(name, "rocblas-bench"))
			return rocblas_line(s, tok + i, n - i);
		if (!strcmp(name, "hipblaslt-bench"))
			return hipblaslt_line(s, tok + i, n - i);
	}
	return 0;
}

int
vendor_log_parse(struct vendor_shapes *s, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl != NULL ? (size_t)(nl - text) : len;
		int rc = vendor_log_line(s, text + i, end - i);

		if (rc < 0)
			return rc;
		i = end + 1;
	}
	return 0;
}

void
vendor_shapes_free(struct vendor_shapes *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
