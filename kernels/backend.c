/*
 * The backend registry and what all backends share: lookup by name, the
 * source hash that goes into tuning keys, and the per-context compile cache
 * keyed by hash(source, defines, arch).
 */
#include "kernels/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#ifdef ROCMD_BACKEND_CUDA
#include "kernels/backend-cuda.h"
#endif

/* GPU backends are compiled in when their sources exist (kernels/CMakeLists.txt
 * defines ROCMD_BACKEND_CUDA / ROCMD_BACKEND_HIP and adds the files). */
#ifdef ROCMD_BACKEND_CUDA
extern const struct backend_ops backend_cuda_ops;
#endif
#ifdef ROCMD_BACKEND_HIP
extern const struct backend_ops backend_hip_ops;
#endif
/* The vendor-solution backends (kernels/vendor.h). */
#ifdef ROCMD_BACKEND_VENDOR
extern const struct backend_ops backend_rocblas_ops;
extern const struct backend_ops backend_hipblaslt_ops;
extern const struct backend_ops backend_cublaslt_ops;
#include "kernels/vendor.h"
#endif

static const struct backend_ops *const backends[] = {
	&backend_cpu_ops,
#ifdef ROCMD_BACKEND_CUDA
	&backend_cuda_ops,
#endif
#ifdef ROCMD_BACKEND_HIP
	&backend_hip_ops,
#endif
#ifdef ROCMD_BACKEND_VENDOR
	&backend_rocblas_ops,
	&backend_hipblaslt_ops,
	&backend_cublaslt_ops,
#endif
	NULL,
};

const struct backend_ops *const *
backend_list(void)
{
	return backends;
}

const struct backend_ops *
backend_find(const char *name)
{
	int i;

	for (i = 0; backends[i] != NULL; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

int
backend_space_check(const char *name, space_check_fn *out)
{
	const struct space_def *known[] = {space_cpu(), space_gpu(), NULL, NULL};
#ifdef ROCMD_BACKEND_CUDA
	struct space_def cuda; /* (the HIP backend tunes in the same space) */

	known[2] = backend_cuda_space_for(&cuda, NULL, 0, 1);
#endif
#ifdef ROCMD_BACKEND_VENDOR
	/* A vendor library's candidate list has no rule beyond its values. */
	if (!strcmp(name, VENDOR_SPACE_NAME)) {
		*out = NULL;
		return 0;
	}
#endif
#ifdef ROCMD_BACKEND_HIP
	/* The HIP backend tunes in the CUDA space under its own name (hip_space). */
	if (!strcmp(name, "hip"))
		name = "cuda";
#endif
	for (int i = 0; known[i] != NULL; i++) {
		if (!strcmp(known[i]->name, name)) {
			*out = known[i]->check;
			return 0;
		}
	}
	return ROCMD_ENOTFOUND;
}

uint64_t
backend_hash(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void
backend_source_hash(const struct backend_ops *ops, struct backend_ctx *ctx, char out[17])
{
	size_t len = 0;
	const char *src = ops->kernel_source(ctx, &len);

	snprintf(out, 17, "%016llx",
		 (unsigned long long)backend_hash(src, src != NULL ? len : 0, BACKEND_HASH_INIT));
}

struct cache_entry {
	uint64_t hash;
	struct backend_module *mod;
	int err; /* a failed compile is cached too: it fails the same way again */
};

struct backend_cache {
	const struct backend_ops *ops;
	struct backend_ctx *ctx;
	char arch[32];
	struct cache_entry *e;
	size_t n, cap;
};

int
backend_cache_new(const struct backend_ops *ops, struct backend_ctx *ctx,
		  const struct backend_device_info *info, struct backend_cache **out)
{
	struct backend_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return ROCMD_ENOMEM;
	c->ops = ops;
	c->ctx = ctx;
	snprintf(c->arch, sizeof(c->arch), "%s", info->arch);
	*out = c;
	return 0;
}

int
backend_compile_cached(struct backend_cache *c, const char *src, size_t len,
		       const char *const *defines, int ndefines, struct backend_module **out,
		       char *log, size_t loglen)
{
	uint64_t h = BACKEND_HASH_INIT;
	size_t i;
	int d, err;

	*out = NULL;
	h = backend_hash(src, len, h);
	for (d = 0; d < ndefines; d++)
		h = backend_hash(defines[d], strlen(defines[d]) + 1, h);
	h = backend_hash(c->arch, strlen(c->arch), h);
	for (i = 0; i < c->n; i++) {
		if (c->e[i].hash == h) {
			if (c->e[i].err < 0)
				snprintf(log, loglen, "compile failed before (cached)");
			*out = c->e[i].mod;
			return c->e[i].err;
		}
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct cache_entry *ne = realloc(c->e, cap * sizeof(*ne));

		if (ne == NULL)
			return ROCMD_ENOMEM;
		c->e = ne;
		c->cap = cap;
	}
	err = c->ops->compile(c->ctx, src, len, defines, ndefines, out, log, loglen);
	c->e[c->n].hash = h;
	c->e[c->n].mod = err < 0 ? NULL : *out;
	c->e[c->n].err = err < 0 ? err : 0;
	c->n++;
	return err;
}

void
backend_cache_clear(struct backend_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->e[i].mod != NULL)
			c->ops->module_unload(c->ctx, c->e[i].mod);
	c->n = 0;
}

void
backend_cache_free(struct backend_cache *c)
{
	if (c == NULL)
		return;
	backend_cache_clear(c);
	free(c->e);
	free(c);
}
