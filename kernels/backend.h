/*
 * The backend interface: one table of function pointers that every GEMM
 * backend fills in, so the tuner (kernels/measure.c, kernels/tune.c) drives a
 * CPU, a CUDA or a HIP device the same way. The build chooses the files:
 * backend-cpu.c always, backend-cuda.c / backend-hip.c where they exist. GPU
 * runtimes (libcuda + NVRTC, amdhip64 + hiprtc) are loaded inside open()
 * (common/dl.h: dlopen, LoadLibraryExW on Windows), so a missing runtime is a
 * clean "not available: <reason>", never a link error.
 *
 * Life cycle, as the tuner uses it (all calls from one thread):
 *
 *   open(index)        -> ctx + struct backend_device_info, or ROCMD_EUNSUPPORTED
 *                         with "not available: <reason>" in WHY
 *   space(ctx, p)      -> the parameter space for problem P (space.h)
 *   kernel_source(ctx) -> source text; its hash is part of every tuning key
 *   compile(ctx, src, defines) -> module. defines are "NAME=VALUE" strings
 *                         (no -D), one per space parameter. Callers go through
 *                         backend_compile_cached(), which caches modules by a
 *                         hash of source + defines + arch.
 *   kernel_info(module) -> registers, shared memory actually used (for AMD
 *                         from the code object's metadata note), so points
 *                         that cannot fit are ruled out after compile.
 *   alloc / copy_h2d   -> operands (uint64_t device addresses; the CPU backend
 *                         hands out host pointers)
 *   event_record(start); gemm(...) x N; event_record(end); event_elapsed()
 *                      -> device-side timing. gemm() only enqueues: it maps the
 *                         configuration to grid/block/shared memory and calls
 *                         the backend's own launch(); it must not synchronize.
 *   copy_d2h           -> the result, checked on the host against a double
 *                         reference (gemm.h)
 *   module_unload, free, close
 *
 * Rules for implementations:
 * - Return 0 or a negative code from common/error.h. Put a sentence for the
 *   user in WHY/LOG buffers where the signature has one. Never abort or exit.
 * - launch failures (bad grid, too many resources, launch timeout) return
 *   ROCMD_EIO; a compile error returns ROCMD_EINVAL with the compiler log.
 * - A hang or a crash inside the backend is handled by the caller: the tuner
 *   runs evaluations in a child process with a watchdog (measure.c), so a
 *   backend needs no recovery of its own. Because of that, the parent process
 *   never calls open() of a GPU backend: CUDA and HIP contexts do not survive
 *   fork().
 * - Optional entries may be NULL: kernel_info, gemm_reference and launch (the
 *   CPU backend has no launch: its gemm() calls its compiled-in kernel, and
 *   its "compile" turns the defines into that kernel's parameters).
 * - Test hook: ROCMD_TUNE_PLANT="wrong:TT0=8,TT1=4" (or crash:/hang:) makes
 *   the CPU backend misbehave for matching configurations; GPU backends may
 *   honour it too.
 *
 * Vendor-solution backends (kernels/vendor.h: rocblas, hipblaslt, cublaslt)
 * fill the same table for another library's own solutions: their space for a
 * problem is that library's candidate list (one parameter, SOL), "compile"
 * only records which candidate a configuration is, and gemm() calls the
 * library with it. They set .vendor, open through open_opts (which library,
 * from which target), and their gemm_reference is the library's own default
 * choice, against whose output the candidates are checked.
 */
#ifndef ROCMD_KERNELS_BACKEND_H
#define ROCMD_KERNELS_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/error.h"

#include "kernels/gemm.h"
#include "kernels/space.h"

struct backend_ctx;    /* one opened device: context, stream, caches */
struct backend_module; /* one compiled candidate */
struct backend_event;  /* a timing event on the backend's stream */

/* What the tuner knows of a device. Strings are empty when unknown. Part of
 * it (arch, name, compute units, versions) is the tuning key. */
struct backend_device_info {
	char backend[16];	   /* "cpu", "cuda", "hip" */
	char name[128];		   /* "NVIDIA H200", "AMD Radeon 780M", "AMD EPYC (2 threads)" */
	char arch[32];		   /* "sm_90", "gfx1103", "x86_64" */
	int compute_units;	   /* SMs / CUs / usable CPU threads */
	int wave_size;		   /* 32 or 64; 1 for the CPU */
	int max_threads_per_block; /* CPU: 1 */
	int64_t shared_mem_per_block; /* LDS / shared memory bytes; CPU: L2 bytes per core */
	int64_t shared_mem_per_cu;    /* CPU: L1d bytes */
	int regs_per_block;	      /* 32-bit registers; CPU: 0 (unknown) */
	int regs_per_cu;
	int64_t global_mem; /* bytes */
	int64_t llc_bytes;  /* last-level cache, bytes: input sets are rotated beyond it */
	int matrix_cores;   /* 1 when MFMA / WMMA / mma.sync is available */
	char driver_version[64];   /* "CUDA driver 13.0", kernel driver */
	char runtime_version[64];  /* "NVRTC 13.0", "HIP 6.2.41133", "cpu" */
	char compiler_version[64]; /* the compiler that builds modules: NVRTC / hiprtc / cc */
	/* Vendor-solution backends only ("" otherwise): the library file opened
	 * and the SHA-256 of it and its solution library (kernels/vendor.h). */
	char library[512];
	char library_digest[65];
};

/* What a backend opens besides the device (open_opts). NULL fields: the
 * defaults. */
struct backend_open_opts {
	const char *library; /* a vendor-solution backend: the library file to tune */
	const char *tensile_dir; /* rocBLAS/hipBLASLt: its Tensile library folder, when
	                          * not the one next to the library (an overlay target) */
	const char *sysroot;     /* where /sys is read (tests); NULL "/" */
};

/* What a compiled kernel really uses; -1 where the backend cannot tell. */
struct backend_kernel_info {
	int regs_per_thread; /* VGPRs on AMD */
	int sgprs;	     /* AMD only */
	int64_t shared_mem;  /* static shared memory / group segment bytes */
	int64_t spill_bytes; /* local / scratch memory per thread */
	int max_threads_per_block;
};

/* One launch: cuLaunchKernel / hipModuleLaunchKernel shaped. ARGS holds a
 * pointer to each argument's value, in order. */
struct backend_launch {
	unsigned grid[3];
	unsigned block[3];
	unsigned shared_mem; /* dynamic shared memory bytes */
	void **args;
	int nargs;
};

struct backend_ops {
	const char *name; /* "cpu", "cuda", "hip" */

	/* Opens device INDEX. ROCMD_EUNSUPPORTED with "not available: <reason>"
	 * when the runtime or a device is missing. */
	int (*open)(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
		    size_t whylen);
	/* Optional: open with options (a vendor-solution backend: the library of
	 * the target being tuned). The evaluator calls it instead of open. */
	int (*open_opts)(int index, const struct backend_open_opts *oo, struct backend_ctx **out,
			 struct backend_device_info *info, char *why, size_t whylen);
	/* 1: a vendor-solution backend (see the file comment). */
	int vendor;
	void (*close)(struct backend_ctx *ctx);

	/* The parameter space this backend tunes for P (points it cannot run are
	 * ruled out by the space's predicate, which sees the device info). */
	const struct space_def *(*space)(struct backend_ctx *ctx, const struct gemm_problem *p);
	/* The kernel source text compiled for every candidate (the CPU backend
	 * returns a description of its compiled-in kernel). */
	const char *(*kernel_source)(struct backend_ctx *ctx, size_t *len);

	int (*compile)(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
		       int ndefines, struct backend_module **out, char *log, size_t loglen);
	void (*module_unload)(struct backend_ctx *ctx, struct backend_module *mod);
	int (*kernel_info)(struct backend_ctx *ctx, struct backend_module *mod,
			   struct backend_kernel_info *out);

	int (*alloc)(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr);
	void (*free)(struct backend_ctx *ctx, uint64_t dptr);
	int (*copy_h2d)(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes);
	int (*copy_d2h)(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes);

	/* Enqueues kernel NAME of MOD on the backend's stream. */
	int (*launch)(struct backend_ctx *ctx, struct backend_module *mod, const char *kernel,
		      const struct backend_launch *l);
	/* Enqueues one GEMM C = alpha op(A) op(B) + beta C with the candidate MOD,
	 * compiled from configuration CFG. Must handle any M, N, K the space's
	 * predicate let through (edges included), every transpose and the batch. */
	int (*gemm)(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
		    const struct gemm_problem *p, const struct gemm_bufs *bufs);
	/* A simple trusted device GEMM (optional). */
	int (*gemm_reference)(struct backend_ctx *ctx, const struct gemm_problem *p,
			      const struct gemm_bufs *bufs);

	int (*event_create)(struct backend_ctx *ctx, struct backend_event **out);
	void (*event_destroy)(struct backend_ctx *ctx, struct backend_event *ev);
	int (*event_record)(struct backend_ctx *ctx, struct backend_event *ev);
	/* Milliseconds from START to END; waits for END. */
	int (*event_elapsed)(struct backend_ctx *ctx, struct backend_event *start,
			     struct backend_event *end, double *ms);
	int (*synchronize)(struct backend_ctx *ctx);
};

/* The backends this build has, and lookup by name ("cpu", "cuda", "hip"). */
extern const struct backend_ops backend_cpu_ops;
const struct backend_ops *backend_find(const char *name);
/*
 * The constraint predicate of the built-in space named NAME ("cpu", "gpu",
 * "cuda", "hip": the spaces the backends in this build return; "hip" is the
 * CUDA space's under the HIP backend's name). A space that crossed
 * a process boundary carries its predicate's address in the other process's
 * image; the receiver binds it again with this. 0, or ROCMD_ENOTFOUND.
 */
int backend_space_check(const char *name, space_check_fn *out);
/* NULL-terminated list of all compiled-in backends. */
const struct backend_ops *const *backend_list(void);

/* 64-bit FNV-1a, used for source hashes and the compile cache. */
uint64_t backend_hash(const void *data, size_t len, uint64_t h);
#define BACKEND_HASH_INIT 0xcbf29ce484222325ULL

/* The source hash that goes into tuning keys: 16 hex digits. */
void backend_source_hash(const struct backend_ops *ops, struct backend_ctx *ctx, char out[17]);

/*
 * A per-context compile cache keyed by hash(source, defines, arch): the same
 * candidate is compiled once per process. Modules stay owned by the cache and
 * are unloaded by backend_cache_clear().
 */
struct backend_cache;
int backend_cache_new(const struct backend_ops *ops, struct backend_ctx *ctx,
		      const struct backend_device_info *info, struct backend_cache **out);
int backend_compile_cached(struct backend_cache *cache, const char *src, size_t len,
			   const char *const *defines, int ndefines, struct backend_module **out,
			   char *log, size_t loglen);
void backend_cache_clear(struct backend_cache *cache);
void backend_cache_free(struct backend_cache *cache);

/*
 * The counted workspace of split-K (GSU > 1) and stream-K (SK 1) launches,
 * kernels/gpu/gemm.cu: BACKEND_SK_COUNTERS counters, zeroed when it is
 * allocated (every launch leaves them at zero), then the blocks' slots of
 * partial sums. Split-K: one counter per tile of each batch, GSU slots of a
 * tile each; stream-K: 2 tile slots per block of each batch.
 * backend_sk_grid: stream-K's blocks per batch, from RESIDENT (blocks the
 * device holds at once, shared by the batch) and never more than the k-tiles
 * there are, nor than the counters allow. backend_counted_ws: *WS (kept in the
 * backend's context) grown to NEED bytes when smaller, its counters zeroed,
 * through the backend's own alloc/free/copy_h2d. backend_sk_prepare and
 * backend_gsu_prepare: the workspace a launch of TILES tiles per batch needs
 * (stream-K's *GRID gets the blocks per batch; split-K past the counters is
 * refused, ROCMD_EINVAL). BACKEND_PROTOCOL: the kernels' rk_gemm_info[7] a
 * launcher here drives (2: split-K in one launch), older code objects refused.
 */
#define BACKEND_SK_COUNTERS 131072
#define BACKEND_PROTOCOL 2

static inline unsigned
backend_sk_grid(uint64_t tiles, int64_t k, int du, int64_t batch, int64_t resident)
{
	uint64_t ipt = k > 0 && du > 0 ? (uint64_t)((k + du - 1) / du) : 1;
	uint64_t g = batch > 0 && resident > batch ? (uint64_t)(resident / batch) : 1;

	if (g > tiles * ipt)
		g = tiles * ipt;
	if (batch > 0 && g * (uint64_t)batch > BACKEND_SK_COUNTERS / 2)
		g = BACKEND_SK_COUNTERS / 2 / (uint64_t)batch;
	return g > 0 ? (unsigned)g : 1;
}

static inline size_t
backend_sk_ws_bytes(unsigned grid, int64_t batch, unsigned mt0, unsigned mt1)
{
	return (BACKEND_SK_COUNTERS + 2 * (size_t)grid * (size_t)batch * mt0 * mt1) * sizeof(float);
}

static inline int
backend_counted_ws(const struct backend_ops *ops, struct backend_ctx *ctx, uint64_t *ws,
                   size_t *ws_bytes, size_t need)
{
	size_t zb = BACKEND_SK_COUNTERS * sizeof(unsigned);
	void *zero;
	int r;

	if (need <= *ws_bytes)
		return 0;
	if (*ws != 0)
		ops->free(ctx, *ws);
	*ws = 0;
	*ws_bytes = 0;
	if ((zero = calloc(1, zb)) == NULL)
		return ROCMD_ENOMEM;
	if ((r = ops->alloc(ctx, need, ws)) == 0)
		r = ops->copy_h2d(ctx, *ws, zero, zb);
	free(zero);
	if (r < 0)
		return r; /* *ws (if allocated) is freed by the next try or at close */
	*ws_bytes = need;
	return 0;
}

static inline int
backend_sk_prepare(const struct backend_ops *ops, struct backend_ctx *ctx, uint64_t *ws,
                   size_t *ws_bytes, const struct gemm_problem *p, uint64_t tiles, unsigned mt0,
                   unsigned mt1, int du, int64_t resident, unsigned *grid)
{
	unsigned g = backend_sk_grid(tiles, p->k, du, p->batch, resident);
	int r =
	    backend_counted_ws(ops, ctx, ws, ws_bytes, backend_sk_ws_bytes(g, p->batch, mt0, mt1));

	if (r == 0)
		*grid = g;
	return r;
}

static inline int
backend_gsu_prepare(const struct backend_ops *ops, struct backend_ctx *ctx, uint64_t *ws,
                    size_t *ws_bytes, const struct gemm_problem *p, uint64_t tiles, int gsu,
                    unsigned mt0, unsigned mt1)
{
	if (tiles * (uint64_t)p->batch > BACKEND_SK_COUNTERS)
		return ROCMD_EINVAL;
	return backend_counted_ws(
	    ops, ctx, ws, ws_bytes,
	    (BACKEND_SK_COUNTERS + tiles * (size_t)p->batch * (size_t)gsu * mt0 * mt1) *
	        sizeof(float));
}

#endif
