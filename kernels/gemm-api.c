/*
 * librocmd-gemm: the public C API (include/rocmd/rocmd-gemm.h) over the
 * backends of backend.h and the tuned library of tunedlib.h. A handle holds
 * one opened device, the tuned library read at open, and the modules it has
 * loaded: a library entry's code object (a cubin) is loaded the first time a
 * problem selects it; a configuration without one (the CPU backend, the
 * default, an entry written without code) goes through the backend's compile
 * cache, so each configuration is compiled once per handle.
 *
 * Unlike the tuner, the API runs the backend in the caller's process: the
 * kernels it runs were checked against a reference when they were tuned.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "rocmd/rocmd-gemm.h"
#include "kernels/backend.h"
#include "kernels/tunedlib.h"
#ifdef ROCMD_BACKEND_CUDA
#include "kernels/backend-cuda.h"
#endif

/* Choices by problem (shape and leading dimensions: a predicate may depend on
 * them, e.g. cp.async needs lda and ldb multiples of 8; alpha and beta do not
 * enter the choice): finding the default when it is ruled out scans the space
 * (~10^5 predicate calls, milliseconds), which must not happen per call. */
#define CHOICE_SLOTS 64

struct choice_slot {
	int used;
	enum gemm_dtype dt;
	enum gemm_trans ta, tb;
	int64_t m, n, k, lda, ldb, ldc;
	int err;
	struct tunedlib_choice ch;
};

struct loaded_entry {
	struct backend_module *mod; /* from the entry's code object, or NULL */
	int tried;
};

struct rocmd_gemm {
	const struct backend_ops *ops;
	struct backend_ctx *ctx;
	struct backend_device_info dev;
	struct tunedlib *lib; /* NULL: defaults only */
	struct loaded_entry *loaded;
	struct backend_cache *cache;
	struct choice_slot *choices; /* CHOICE_SLOTS, direct-mapped */
	const char *src;
	size_t srclen;
	char err[512];
	char desc[320];
};

static int fail(rocmd_gemm_t *h, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(rocmd_gemm_t *h, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	return err;
}

void
rocmd_gemm_close(rocmd_gemm_t *h)
{
	int i;

	if (h == NULL)
		return;
	if (h->loaded != NULL)
		for (i = 0; i < tunedlib_count(h->lib); i++)
			if (h->loaded[i].mod != NULL)
				h->ops->module_unload(h->ctx, h->loaded[i].mod);
	if (h->cache != NULL)
		backend_cache_free(h->cache);
	if (h->ctx != NULL)
		h->ops->close(h->ctx);
	tunedlib_free(h->lib);
	free(h->loaded);
	free(h->choices);
	free(h);
}

int
rocmd_gemm_open(const char *libdir, const char *backend, int device, rocmd_gemm_t **out,
                char *errbuf, size_t errlen)
{
	rocmd_gemm_t *h;
	char why[512];
	int err;

	*out = NULL;
	why[0] = '\0';
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		err = ROCMD_ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	if (libdir != NULL && (err = tunedlib_open(libdir, &h->lib, why, sizeof(why))) < 0)
		goto fail;
	if (backend == NULL)
		backend = h->lib != NULL ? tunedlib_id(h->lib)->backend : "cpu";
	h->ops = backend_find(backend);
	if (h->ops == NULL) {
		snprintf(why, sizeof(why), "backend '%s' is not in this build", backend);
		err = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	if ((err = h->ops->open(device, &h->ctx, &h->dev, why, sizeof(why))) < 0) {
		h->ctx = NULL;
		goto fail;
	}
	if (h->lib != NULL) {
		const struct tune_key *id = tunedlib_id(h->lib);

		/* Configurations and code objects are per backend and arch; another
		 * device of the same arch may run them (the predicate still decides). */
		if (strcmp(id->backend, h->dev.backend) != 0 ||
		    strcmp(id->arch, h->dev.arch) != 0) {
			snprintf(why, sizeof(why),
			         "%s holds a library for %s %s; the device is %s %s", libdir,
			         id->backend, id->arch, h->dev.backend, h->dev.arch);
			err = ROCMD_EINVAL;
			goto fail;
		}
		h->loaded = calloc((size_t)tunedlib_count(h->lib) + 1, sizeof(*h->loaded));
		if (h->loaded == NULL) {
			err = ROCMD_ENOMEM;
			goto fail;
		}
	}
	h->choices = calloc(CHOICE_SLOTS, sizeof(*h->choices));
	if (h->choices == NULL) {
		err = ROCMD_ENOMEM;
		goto fail;
	}
	if ((err = backend_cache_new(h->ops, h->ctx, &h->dev, &h->cache)) < 0) {
		snprintf(why, sizeof(why), "cannot create the compile cache");
		goto fail;
	}
	h->src = h->ops->kernel_source(h->ctx, &h->srclen);
	if (h->lib != NULL)
		snprintf(h->desc, sizeof(h->desc), "%s %s %s, library v%llu (%d shapes)",
		         h->dev.backend, h->dev.arch, h->dev.name,
		         (unsigned long long)tunedlib_generation(h->lib), tunedlib_count(h->lib));
	else
		snprintf(h->desc, sizeof(h->desc), "%s %s %s, no tuned library", h->dev.backend,
		         h->dev.arch, h->dev.name);
	*out = h;
	return 0;
fail:
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s", why[0] ? why : rocmd_strerror(err));
	rocmd_gemm_close(h);
	return err;
}

const char *
rocmd_gemm_error(const rocmd_gemm_t *h)
{
	return h != NULL ? h->err : "no handle";
}

const char *
rocmd_gemm_describe(const rocmd_gemm_t *h)
{
	return h != NULL ? h->desc : "";
}

int
rocmd_gemm_malloc(rocmd_gemm_t *h, size_t bytes, void **ptr)
{
	uint64_t d = 0;
	int err;

	*ptr = NULL;
	if ((err = h->ops->alloc(h->ctx, bytes, &d)) < 0)
		return fail(h, err, "cannot allocate %zu bytes", bytes);
	*ptr = (void *)(uintptr_t)d;
	return 0;
}

void
rocmd_gemm_free(rocmd_gemm_t *h, void *ptr)
{
	if (h != NULL && ptr != NULL)
		h->ops->free(h->ctx, (uint64_t)(uintptr_t)ptr);
}

int
rocmd_gemm_upload(rocmd_gemm_t *h, void *dst, const void *src, size_t bytes)
{
	int err = h->ops->copy_h2d(h->ctx, (uint64_t)(uintptr_t)dst, src, bytes);

	return err < 0 ? fail(h, err, "copy to the device failed") : 0;
}

int
rocmd_gemm_download(rocmd_gemm_t *h, void *dst, const void *src, size_t bytes)
{
	int err = h->ops->copy_d2h(h->ctx, dst, (uint64_t)(uintptr_t)src, bytes);

	return err < 0 ? fail(h, err, "copy from the device failed") : 0;
}

int
rocmd_gemm_synchronize(rocmd_gemm_t *h)
{
	int err = h->ops->synchronize != NULL ? h->ops->synchronize(h->ctx) : 0;

	return err < 0 ? fail(h, err, "synchronize failed") : 0;
}

static int
make_problem(rocmd_gemm_t *h, enum rocmd_gemm_dtype dtype, enum rocmd_gemm_op opa,
             enum rocmd_gemm_op opb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
             int64_t ldc, struct gemm_problem *p)
{
	char why[200];
	int err;

	if ((unsigned)dtype > ROCMD_GEMM_BF16 || (unsigned)opa > ROCMD_GEMM_OP_T ||
	    (unsigned)opb > ROCMD_GEMM_OP_T)
		return fail(h, ROCMD_EINVAL, "unknown dtype or transpose");
	gemm_problem_init(p, (enum gemm_dtype)dtype, (enum gemm_trans)opa, (enum gemm_trans)opb, m,
	                  n, k, 1);
	p->lda = lda;
	p->ldb = ldb;
	p->ldc = ldc;
	p->stride_a = lda * gemm_cols_a(p);
	p->stride_b = ldb * gemm_cols_b(p);
	p->stride_c = ldc * n;
	if ((err = gemm_problem_check(p, why, sizeof(why))) < 0)
		return fail(h, err, "%s", why);
	return 0;
}

/* The choice for P, from the slot cache or tunedlib_select(). */
static int
choose(rocmd_gemm_t *h, const struct gemm_problem *p, const struct space_def *space,
       struct tunedlib_choice *ch)
{
	uint64_t key[6] = {(uint64_t)p->dtype | (uint64_t)p->ta << 8 | (uint64_t)p->tb << 16,
	                   (uint64_t)p->m,
	                   (uint64_t)p->n,
	                   (uint64_t)p->k,
	                   (uint64_t)p->lda,
	                   (uint64_t)p->ldb ^ (uint64_t)p->ldc << 32};
	struct choice_slot *sl =
	    &h->choices[backend_hash(key, sizeof(key), BACKEND_HASH_INIT) % CHOICE_SLOTS];

	if (!sl->used || sl->dt != p->dtype || sl->ta != p->ta || sl->tb != p->tb ||
	    sl->m != p->m || sl->n != p->n || sl->k != p->k || sl->lda != p->lda ||
	    sl->ldb != p->ldb || sl->ldc != p->ldc) {
		sl->used = 1;
		sl->dt = p->dtype;
		sl->ta = p->ta;
		sl->tb = p->tb;
		sl->m = p->m;
		sl->n = p->n;
		sl->k = p->k;
		sl->lda = p->lda;
		sl->ldb = p->ldb;
		sl->ldc = p->ldc;
		sl->err = tunedlib_select(h->lib, space, p, &h->dev, &sl->ch);
	}
	*ch = sl->ch;
	return sl->err;
}

static void
fill_choice(rocmd_gemm_t *h, const struct tunedlib_choice *ch, struct rocmd_gemm_choice *out)
{
	const struct tunedlib_entry *e =
	    ch->entry >= 0 ? tunedlib_entry_at(h->lib, ch->entry) : NULL;

	memset(out, 0, sizeof(*out));
	out->how = (enum rocmd_gemm_how)ch->how;
	snprintf(out->config, sizeof(out->config), "%s", ch->config);
	if (e != NULL) {
		snprintf(out->tuned_shape, sizeof(out->tuned_shape), "%s", e->problem);
		out->tuned_ms = e->winner_ms;
		out->default_ms = e->default_ms;
	}
	out->distance = ch->distance;
	snprintf(out->reason, sizeof(out->reason), "%s", ch->why);
}

int
rocmd_gemm_query(rocmd_gemm_t *h, enum rocmd_gemm_dtype dtype, enum rocmd_gemm_op opa,
                 enum rocmd_gemm_op opb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                 int64_t ldc, struct rocmd_gemm_choice *out)
{
	struct gemm_problem p;
	struct tunedlib_choice ch;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = make_problem(h, dtype, opa, opb, m, n, k, lda, ldb, ldc, &p)) < 0)
		return err;
	err = choose(h, &p, h->ops->space(h->ctx, &p), &ch);
	fill_choice(h, &ch, out);
	return err < 0 ? fail(h, err, "%s", ch.why) : 0;
}

/* The module for choice CH in SPACE: the entry's code object, else a compile. */
static int
module_for(rocmd_gemm_t *h, const struct space_def *space, const struct tunedlib_choice *ch,
           struct backend_module **mod)
{
	char store[SPACE_MAX_PARAMS][40], log[2048];
	const char *defs[SPACE_MAX_PARAMS];
	int nd, err;

	*mod = NULL;
#ifdef ROCMD_BACKEND_CUDA
	if (ch->entry >= 0 && !strcmp(h->dev.backend, "cuda")) {
		const struct tunedlib_entry *e = tunedlib_entry_at(h->lib, ch->entry);
		struct loaded_entry *le = &h->loaded[ch->entry];

		if (!le->tried && e->code != NULL && !strcmp(e->code_kind, "cubin")) {
			struct tune_config cfg;

			le->tried = 1;
			space_config(space, &ch->pt, &cfg);
			err =
			    backend_cuda_load(h->ctx, e->code, (int)tune_config_get(&cfg, "GSU", 1),
			                      &le->mod, log, sizeof(log));
			if (err < 0)
				le->mod = NULL; /* compiled below instead */
		}
		if (le->mod != NULL) {
			*mod = le->mod;
			return 0;
		}
	}
#endif
	nd = space_defines(space, &ch->pt, store, defs);
	err = backend_compile_cached(h->cache, h->src, h->srclen, defs, nd, mod, log, sizeof(log));
	if (err < 0)
		return fail(h, err, "cannot compile %s: %.300s", ch->config, log);
	return 0;
}

int
rocmd_gemm(rocmd_gemm_t *h, enum rocmd_gemm_dtype dtype, enum rocmd_gemm_op opa,
           enum rocmd_gemm_op opb, int64_t m, int64_t n, int64_t k, float alpha, const void *a,
           int64_t lda, const void *b, int64_t ldb, float beta, void *c, int64_t ldc)
{
	const struct space_def *space;
	struct backend_module *mod = NULL;
	struct tunedlib_choice ch;
	struct tune_config cfg;
	struct gemm_problem p;
	struct gemm_bufs bufs;
	int err;

	if (h == NULL)
		return ROCMD_EINVAL;
	h->err[0] = '\0';
	if (m == 0 || n == 0)
		return 0;
	if (a == NULL || b == NULL || c == NULL)
		return fail(h, ROCMD_EINVAL, "a matrix pointer is NULL");
	if ((err = make_problem(h, dtype, opa, opb, m, n, k, lda, ldb, ldc, &p)) < 0)
		return err;
	p.alpha = alpha;
	p.beta = beta;
	space = h->ops->space(h->ctx, &p);
	if ((err = choose(h, &p, space, &ch)) < 0)
		return fail(h, err, "%s", ch.why);
	if ((err = module_for(h, space, &ch, &mod)) < 0)
		return err;
	space_config(space, &ch.pt, &cfg);
	bufs.a = (uint64_t)(uintptr_t)a;
	bufs.b = (uint64_t)(uintptr_t)b;
	bufs.c = (uint64_t)(uintptr_t)c;
	if ((err = h->ops->gemm(h->ctx, mod, &cfg, &p, &bufs)) < 0)
		return fail(h, err, "the GEMM failed to launch (%s)", ch.config);
	return 0;
}

static int
op_of(char t, enum rocmd_gemm_op *op)
{
	t = (char)toupper((unsigned char)t);
	if (t != 'N' && t != 'T')
		return -1;
	*op = t == 'N' ? ROCMD_GEMM_OP_N : ROCMD_GEMM_OP_T;
	return 0;
}

static int
blas_gemm(rocmd_gemm_t *h, enum rocmd_gemm_dtype dt, char transa, char transb, int64_t m, int64_t n,
          int64_t k, float alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
          float beta, void *c, int64_t ldc)
{
	enum rocmd_gemm_op oa, ob;

	if (h == NULL)
		return ROCMD_EINVAL;
	if (op_of(transa, &oa) < 0 || op_of(transb, &ob) < 0)
		return fail(h, ROCMD_EINVAL, "transpose must be 'N' or 'T'");
	return rocmd_gemm(h, dt, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int
rocmd_sgemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
            const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
            int64_t ldc)
{
	return blas_gemm(h, ROCMD_GEMM_F32, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
	                 ldc);
}

int
rocmd_hgemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
            const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb, float beta, uint16_t *c,
            int64_t ldc)
{
	return blas_gemm(h, ROCMD_GEMM_F16, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
	                 ldc);
}

int
rocmd_bf16gemm(rocmd_gemm_t *h, char transa, char transb, int64_t m, int64_t n, int64_t k,
               float alpha, const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
               float beta, uint16_t *c, int64_t ldc)
{
	return blas_gemm(h, ROCMD_GEMM_BF16, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,
	                 c, ldc);
}
