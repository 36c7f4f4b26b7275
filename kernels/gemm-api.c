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
 *
 * A library entry that is a vendor library's solution (tunedlib.h: cuBLASLt's
 * algorithm that beat rocmd's kernels on that problem) runs through that
 * vendor's backend, opened on the same device the first time such an entry is
 * chosen: its candidates for the problem are listed once, the entry's SOL is
 * found among them and kept with the problem's choice. It is used only when
 * the vendor library loaded is the one the entry was tuned with (its SHA-256)
 * and the operands are 256-byte aligned (what cuBLASLt's heuristic assumes);
 * else the problem runs rocmd's own kernels, the reason in the choice.
 *
 * Per call, after a shape's first: one lookup in the handle's choice cache
 * (keyed by dtype, transposes, M, N, K, leading dimensions and alignment),
 * which holds the chosen configuration, its space and its module, then the
 * backend's launch. Nothing is selected, hashed, compiled or allocated there;
 * rocmd_gemm_reload() drops the cache when the library's generation changes.
 *
 * The calls are the workload the daemon tunes: with ROCMD_GEMM_LOG_PATH set
 * when a handle opens (`rocmctl tune capture` sets it for the program it
 * runs), the handle appends a line to that file at a shape's first call and,
 * when its cache slot is reused or the handle closes, one with the calls
 * since (kernels/vendor-log.h reads them). Per call that is one counter.
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

/* Choices by problem (shape, leading dimensions and alignment: the space and
 * the predicate depend on them, e.g. cp.async needs lda and ldb multiples of
 * 8; alpha and beta do not enter the choice), CHOICE_WAYS-way set-associative:
 * finding the default when it is ruled out searches the space, and a module
 * lookup hashes the whole kernel source, neither of which may happen per call. */
#define CHOICE_SETS 64
#define CHOICE_WAYS 4

struct choice_key {
	enum gemm_dtype dt;
	enum gemm_trans ta, tb;
	int unaligned;
	int vendor_ok; /* the operands are 256-byte aligned */
	int64_t m, n, k, lda, ldb, ldc;
};

struct choice_slot {
	int used;
	uint64_t epoch; /* the handle's epoch when filled: older ones are stale */
	struct choice_key key;
	int err;
	struct tunedlib_choice ch;
	struct space_def *space;    /* a copy of the space CH is a point of (owned) */
	struct tune_config cfg;     /* CH's values in *space */
	struct backend_module *mod; /* NULL until the first GEMM; owned by the cache or loaded[] */
	int vendor;                 /* 1: MOD is the vendor backend's, owned by the slot */
	int64_t calls, logged;      /* calls of KEY, and how many of them the log has */
	float alpha, beta;          /* the first call's, for the log */
};

struct loaded_entry {
	struct backend_module *mod; /* from the entry's code object, or NULL */
	int tried;
};

struct rocmd_gemm {
	const struct backend_ops *ops;
	struct backend_ctx *ctx;
	struct backend_device_info dev;
	int device;
	/* The vendor-solution backend, opened at the first vendor entry chosen. */
	const struct backend_ops *vops;
	struct backend_ctx *vctx;
	struct backend_device_info vdev;
	int vtried;
	int has_vendor; /* the library has vendor entries: alignment enters the choice */
	char vwhy[200]; /* why it could not be opened */
	struct tunedlib *lib; /* NULL: defaults only */
	struct loaded_entry *loaded;
	struct backend_cache *cache;
	struct choice_slot *choices; /* CHOICE_SETS x CHOICE_WAYS */
	unsigned victim[CHOICE_SETS]; /* the way a miss replaces next, per set */
	uint64_t epoch;
	struct rocmd_gemm_stats stats;
	char *libdir;
	const char *src;
	size_t srclen;
	char err[512];
	char desc[320];
	FILE *log; /* ROCMD_GEMM_LOG_PATH's, or NULL */
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

/* Whether LIB holds a vendor library's solution. */
static int
has_vendor_entries(const struct tunedlib *lib)
{
	for (int i = 0; i < tunedlib_count(lib); i++)
		if (tunedlib_entry_at(lib, i)->vendor[0])
			return 1;
	return 0;
}

/* Unloads the modules of the library's entries (the code objects loaded). */
/* The log's line for SL's calls not yet in it, as kernels/vendor-log.c reads
 * it back. */
static void
log_calls(rocmd_gemm_t *h, struct choice_slot *sl)
{
	static const char *const type[] = {"f32_r", "f16_r", "bf16_r"};
	const struct choice_key *k = &sl->key;

	if (h->log == NULL || !sl->used || sl->calls <= sl->logged)
		return;
	fprintf(h->log,
	        "rocmd-gemm -f gemm_ex --transposeA %c --transposeB %c -m %lld -n %lld -k %lld "
	        "--alpha %.9g --lda %lld --ldb %lld --beta %.9g --ldc %lld --a_type %s "
	        "--compute_type f32_r --calls %lld\n",
	        k->ta == GEMM_T ? 'T' : 'N', k->tb == GEMM_T ? 'T' : 'N', (long long)k->m,
	        (long long)k->n, (long long)k->k, sl->alpha, (long long)k->lda, (long long)k->ldb,
	        sl->beta, (long long)k->ldc, type[k->dt], (long long)(sl->calls - sl->logged));
	fflush(h->log);
	sl->logged = sl->calls;
}

static void
unload_entries(rocmd_gemm_t *h)
{
	int i;

	if (h->loaded == NULL)
		return;
	for (i = 0; i < tunedlib_count(h->lib); i++)
		if (h->loaded[i].mod != NULL)
			h->ops->module_unload(h->ctx, h->loaded[i].mod);
	memset(h->loaded, 0, (size_t)tunedlib_count(h->lib) * sizeof(*h->loaded));
}

void
rocmd_gemm_close(rocmd_gemm_t *h)
{
	int i;

	if (h == NULL)
		return;
	unload_entries(h);
	if (h->choices != NULL)
		for (i = 0; i < CHOICE_SETS * CHOICE_WAYS; i++) {
			log_calls(h, &h->choices[i]);
			if (h->choices[i].vendor && h->choices[i].mod != NULL)
				h->vops->module_unload(h->vctx, h->choices[i].mod);
			free(h->choices[i].space);
		}
	if (h->vctx != NULL)
		h->vops->close(h->vctx);
	if (h->cache != NULL)
		backend_cache_free(h->cache);
	if (h->ctx != NULL)
		h->ops->close(h->ctx);
	tunedlib_free(h->lib);
	free(h->loaded);
	free(h->choices);
	free(h->libdir);
	if (h->log != NULL)
		fclose(h->log);
	free(h);
}

int
rocmd_gemm_open(const char *libdir, const char *backend, int device, rocmd_gemm_t **out,
                char *errbuf, size_t errlen)
{
	rocmd_gemm_t *h;
	const char *logpath;
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
	h->device = device;
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
		h->has_vendor = has_vendor_entries(h->lib);
		h->loaded = calloc((size_t)tunedlib_count(h->lib) + 1, sizeof(*h->loaded));
		if (h->loaded == NULL) {
			err = ROCMD_ENOMEM;
			goto fail;
		}
	}
	h->choices = calloc(CHOICE_SETS * CHOICE_WAYS, sizeof(*h->choices));
	h->libdir = libdir != NULL ? strdup(libdir) : NULL;
	if (h->choices == NULL || (libdir != NULL && h->libdir == NULL)) {
		err = ROCMD_ENOMEM;
		goto fail;
	}
	if ((err = backend_cache_new(h->ops, h->ctx, &h->dev, &h->cache)) < 0) {
		snprintf(why, sizeof(why), "cannot create the compile cache");
		goto fail;
	}
	h->src = h->ops->kernel_source(h->ctx, &h->srclen);
	logpath = getenv("ROCMD_GEMM_LOG_PATH");
	if (logpath != NULL && logpath[0] != '\0')
		h->log = fopen(logpath, "a"); /* no log is no error */
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

/* The vendor backend that runs entry E, opened once; NULL (the reason in
 * WHY) when it cannot run E here. */
static const struct backend_ops *
vendor_for(rocmd_gemm_t *h, const struct tunedlib_entry *e, char *why, size_t whylen)
{
	if (!h->vtried) {
		h->vtried = 1;
		h->vops = backend_find(e->vendor);
		if (h->vops == NULL || !h->vops->vendor)
			snprintf(h->vwhy, sizeof(h->vwhy), "backend %s is not in this build",
			         e->vendor);
		else if (h->vops->open(h->device, &h->vctx, &h->vdev, h->vwhy, sizeof(h->vwhy)) < 0)
			h->vctx = NULL;
	}
	if (h->vctx == NULL) {
		snprintf(why, whylen, "%.190s", h->vwhy);
		return NULL;
	}
	if (strcmp(h->vops->name, e->vendor) != 0) {
		snprintf(why, whylen, "the handle runs %s's solutions, not %s's", h->vops->name,
		         e->vendor);
		return NULL;
	}
	if (strcmp(h->vdev.library_digest, e->vendor_sha256) != 0) {
		snprintf(why, whylen, "%.100s is not the build the solution was tuned with",
		         h->vdev.library);
		return NULL;
	}
	return h->vops;
}

/* Fills SL with vendor entry VE's solution for P; 0, or a negative code with
 * the reason in WHY (rocmd's own kernels run instead). */
static int
vendor_choose(rocmd_gemm_t *h, const struct gemm_problem *p, int vendor_ok, int ve,
              struct choice_slot *sl, char *why, size_t whylen)
{
	const struct tunedlib_entry *e = tunedlib_entry_at(h->lib, ve);
	char store[SPACE_MAX_PARAMS][40], log[512];
	const char *defs[SPACE_MAX_PARAMS], *src;
	const struct backend_ops *vops;
	struct backend_module *mod = NULL;
	struct space_point pt;
	size_t srclen = 0;
	int nd;

	if (!vendor_ok) {
		snprintf(why, whylen, "the operands are not 256-byte aligned");
		return ROCMD_EINVAL;
	}
	if ((vops = vendor_for(h, e, why, whylen)) == NULL)
		return ROCMD_EUNSUPPORTED;
	*sl->space = *vops->space(h->vctx, p);
	if (space_key_parse(sl->space, e->config, &pt) < 0) {
		snprintf(why, whylen, "%s no longer lists %.60s for it", vops->name, e->config);
		return ROCMD_ENOTFOUND;
	}
	nd = space_defines(sl->space, &pt, store, defs);
	src = vops->kernel_source(h->vctx, &srclen);
	h->stats.modules++;
	if (vops->compile(h->vctx, src, srclen, defs, nd, &mod, log, sizeof(log)) < 0) {
		snprintf(why, whylen, "%.190s", log);
		return ROCMD_EINVAL;
	}
	sl->mod = mod;
	sl->vendor = 1;
	sl->err = 0;
	memset(&sl->ch, 0, sizeof(sl->ch));
	sl->ch.how = TUNEDLIB_EXACT;
	sl->ch.entry = ve;
	sl->ch.pt = pt;
	snprintf(sl->ch.config, sizeof(sl->ch.config), "%.15s:%.200s", vops->name, e->config);
	snprintf(sl->ch.why, sizeof(sl->ch.why),
	         "%s was tuned: %s's solution won, %.4f ms (rocmd's default %.4f ms)", e->problem,
	         vops->name, e->winner_ms, e->default_ms);
	space_config(sl->space, &pt, &sl->cfg);
	return 0;
}

/*
 * The cache slot of P, filled on a miss: the backend's space for P (copied,
 * so that the slot's configuration keeps pointing at it) and
 * tunedlib_select()'s choice in it, or a vendor entry's solution (VENDOR_OK:
 * the operands allow it). NULL only when out of memory.
 */
static struct choice_slot *
choose(rocmd_gemm_t *h, const struct gemm_problem *p, int vendor_ok)
{
	struct choice_key key;
	struct choice_slot *set, *sl;
	char vwhy[200] = "";
	unsigned w, set_i;
	int ve;

	memset(&key, 0, sizeof(key));
	key.dt = p->dtype;
	key.ta = p->ta;
	key.tb = p->tb;
	key.unaligned = p->unaligned;
	key.vendor_ok = h->has_vendor ? vendor_ok : 0;
	key.m = p->m;
	key.n = p->n;
	key.k = p->k;
	key.lda = p->lda;
	key.ldb = p->ldb;
	key.ldc = p->ldc;
	set_i = (unsigned)(backend_hash(&key, sizeof(key), BACKEND_HASH_INIT) % CHOICE_SETS);
	set = &h->choices[set_i * CHOICE_WAYS];
	for (w = 0; w < CHOICE_WAYS; w++)
		if (set[w].used && set[w].epoch == h->epoch && !memcmp(&set[w].key, &key, sizeof(key)))
			return &set[w];
	/* A miss: an unused or stale way, else the next in turn. */
	for (w = 0; w < CHOICE_WAYS && set[w].used && set[w].epoch == h->epoch; w++)
		;
	if (w == CHOICE_WAYS)
		w = h->victim[set_i]++ % CHOICE_WAYS;
	sl = &set[w];
	if (sl->space == NULL && (sl->space = malloc(sizeof(*sl->space))) == NULL)
		return NULL;
	if (sl->vendor && sl->mod != NULL)
		h->vops->module_unload(h->vctx, sl->mod);
	log_calls(h, sl);
	h->stats.selections++;
	sl->used = 1;
	sl->epoch = h->epoch;
	sl->key = key;
	sl->mod = NULL;
	sl->vendor = 0;
	sl->calls = sl->logged = 0;
	ve = tunedlib_vendor_entry(h->lib, p);
	if (ve >= 0 && vendor_choose(h, p, vendor_ok, ve, sl, vwhy, sizeof(vwhy)) == 0)
		return sl;
	*sl->space = *h->ops->space(h->ctx, p);
	sl->err = tunedlib_select(h->lib, sl->space, p, &h->dev, &sl->ch);
	space_config(sl->space, &sl->ch.pt, &sl->cfg);
	if (ve >= 0) {
		size_t n = strlen(sl->ch.why);

		snprintf(sl->ch.why + n, sizeof(sl->ch.why) - n,
		         "; the tuned %s solution cannot run: %s",
		         tunedlib_entry_at(h->lib, ve)->vendor, vwhy);
	}
	return sl;
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
	struct choice_slot *sl;
	int err;

	memset(out, 0, sizeof(*out));
	if (h == NULL)
		return ROCMD_EINVAL;
	if ((err = make_problem(h, dtype, opa, opb, m, n, k, lda, ldb, ldc, &p)) < 0)
		return err;
	if ((sl = choose(h, &p, 1)) == NULL)
		return fail(h, ROCMD_ENOMEM, "out of memory");
	fill_choice(h, &sl->ch, out);
	return sl->err < 0 ? fail(h, sl->err, "%s", sl->ch.why) : 0;
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
	h->stats.modules++; /* a load of the entry's code object or a compile */
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
	struct choice_slot *sl;
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
	/* The matrix-core paths copy A and B in 16-byte chunks. */
	p.unaligned = (((uintptr_t)a | (uintptr_t)b) & 15) != 0;
	h->stats.calls++;
	if ((sl = choose(h, &p, (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) & 255) == 0)) == NULL)
		return fail(h, ROCMD_ENOMEM, "out of memory");
	if (sl->calls++ == 0) { /* in the log at once, should the program die */
		sl->alpha = alpha;
		sl->beta = beta;
		log_calls(h, sl);
	}
	if (sl->err < 0)
		return fail(h, sl->err, "%s", sl->ch.why);
	if (sl->mod == NULL && (err = module_for(h, sl->space, &sl->ch, &sl->mod)) < 0)
		return err;
	bufs.a = (uint64_t)(uintptr_t)a;
	bufs.b = (uint64_t)(uintptr_t)b;
	bufs.c = (uint64_t)(uintptr_t)c;
	if (sl->vendor)
		err = h->vops->gemm(h->vctx, sl->mod, &sl->cfg, &p, &bufs);
	else
		err = h->ops->gemm(h->ctx, sl->mod, &sl->cfg, &p, &bufs);
	if (err < 0)
		return fail(h, err, "the GEMM failed to launch (%s)", sl->ch.config);
	return 0;
}

int
rocmd_gemm_stats(const rocmd_gemm_t *h, struct rocmd_gemm_stats *out)
{
	if (h == NULL || out == NULL)
		return ROCMD_EINVAL;
	*out = h->stats;
	out->generation = h->lib != NULL ? tunedlib_generation(h->lib) : 0;
	return 0;
}

int
rocmd_gemm_reload(rocmd_gemm_t *h, int *changed)
{
	struct tunedlib *lib = NULL;
	struct loaded_entry *loaded;
	char why[512];
	int err;

	if (changed != NULL)
		*changed = 0;
	if (h == NULL)
		return ROCMD_EINVAL;
	if (h->libdir == NULL)
		return 0;
	if ((err = tunedlib_open(h->libdir, &lib, why, sizeof(why))) < 0)
		return fail(h, err, "%s", why);
	if (tunedlib_generation(lib) == tunedlib_generation(h->lib)) {
		tunedlib_free(lib);
		return 0;
	}
	if (strcmp(tunedlib_id(lib)->backend, h->dev.backend) != 0 ||
	    strcmp(tunedlib_id(lib)->arch, h->dev.arch) != 0) {
		tunedlib_free(lib);
		return fail(h, ROCMD_EINVAL, "%s now holds a library for another device", h->libdir);
	}
	loaded = calloc((size_t)tunedlib_count(lib) + 1, sizeof(*loaded));
	if (loaded == NULL) {
		tunedlib_free(lib);
		return fail(h, ROCMD_ENOMEM, "out of memory");
	}
	/* Every cached choice may point at the old library's entries and modules. */
	unload_entries(h);
	free(h->loaded);
	tunedlib_free(h->lib);
	h->loaded = loaded;
	h->lib = lib;
	h->has_vendor = has_vendor_entries(lib);
	h->epoch++;
	snprintf(h->desc, sizeof(h->desc), "%s %s %s, library v%llu (%d shapes)", h->dev.backend,
	         h->dev.arch, h->dev.name, (unsigned long long)tunedlib_generation(h->lib),
	         tunedlib_count(h->lib));
	if (changed != NULL)
		*changed = 1;
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
