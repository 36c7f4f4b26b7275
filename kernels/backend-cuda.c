/*
 * The CUDA backend: runs the GEMM kernel of kernels/gpu/gemm.cu on an NVIDIA
 * GPU. libcuda (the driver API) and NVRTC are dlopen'd in open(), never linked,
 * so the same binary runs, or says "not available: <reason>", on a machine
 * with no driver, no toolkit or no device. Each candidate is compiled by NVRTC
 * for the device's own sm_XY into a cubin, loaded with cuModuleLoadData and
 * launched with cuLaunchKernel on the legacy default stream; events time it.
 *
 * The kernel reads its tuning parameters as -DRK_<NAME>=<value>. This backend
 * hands the tuner its own space (cuda_space below): the problem's dtype and
 * transposes are single-valued parameters of it, so every module is compiled
 * for one problem class and the key of a result says which.
 *
 * Compilation is split in two so that callers can run many NVRTC
 * compilations on threads: backend_cuda_nvrtc() needs no context and is
 * thread-safe; backend_cuda_load() loads the cubin in the calling thread.
 */
#include "kernels/backend-cuda.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"

/* The few driver API types and constants used, as in cuda.h (stable ABI). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum {
	CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
	CU_ATTR_WARP_SIZE = 10,
	CU_ATTR_MAX_REGS_PER_BLOCK = 12,
	CU_ATTR_SM_COUNT = 16,
	CU_ATTR_L2_SIZE = 38,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_SMEM_PER_SM = 81,
	CU_ATTR_REGS_PER_SM = 82,
	CU_ATTR_SMEM_OPTIN = 97,
	CU_FUNC_MAX_THREADS = 0,
	CU_FUNC_SHARED_SIZE = 1,
	CU_FUNC_LOCAL_SIZE = 3,
	CU_FUNC_NUM_REGS = 4,
	CU_FUNC_MAX_DYN_SHARED = 8,
	CUDA_ERROR_NOT_INITIALIZED = 3,
};

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

struct cuda_api {
	void *libcuda, *libnvrtc;
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
	CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
	CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
	CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, unsigned, CUstream, void **, void **);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuEventCreate)(CUevent *, unsigned);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);

	nvrtcResult (*nvrtcVersion)(int *, int *);
	const char *(*nvrtcGetErrorString)(nvrtcResult);
	nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
	                                  const char *const *, const char *const *);
	nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
	nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
	nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
	nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char *);
};

/* A space the backend handed out, with what it was built from (the shape
 * and layout choose the path and the defaults). */
struct space_cache {
	int used;
	enum gemm_dtype dt;
	enum gemm_trans ta, tb;
	int64_t m, n, k, batch;
	int chunks; /* backend_cuda_chunks_ok() */
	struct space_def def;
};

struct backend_ctx {
	struct cuda_api api;
	struct backend_device_info info;
	CUdevice dev;
	CUcontext cu;
	int cc; /* 90 for sm_90 */
	int smem_optin;
	char arch_opt[48];
	char *source; /* port.h + gemm.cu, the text compiled and hashed */
	size_t source_len;
	uint64_t skws; /* split-K and stream-K workspace: counters kept at zero, then slots */
	size_t skws_bytes;
	CUdeviceptr pk; /* repacked A and B for the chunked paths (rk_pack) */
	size_t pk_bytes;
	struct space_cache spaces[GEMM_DTYPE_COUNT * 8];
	unsigned next_space; /* the slot a new space replaces, round robin */
};

struct backend_module {
	CUmodule mod;
	CUfunction gemm, pack;
	unsigned threads, smem, mt0, mt1;
	unsigned chunks; /* A and B copied in 16-byte chunks: repack what does not allow it */
	int gsu;
	unsigned sk, du; /* stream-K; depth per k-tile */
	int resident;    /* blocks the device holds at once (stream-K's grid) */
};

struct backend_event {
	CUevent ev;
};

extern const char rk_gemm_src[];
extern const size_t rk_gemm_src_len;
extern const char rk_port_src[];
extern const size_t rk_port_src_len;

static int
cu_fail(struct backend_ctx *ctx, CUresult r, const char *what, char *why, size_t whylen)
{
	const char *name = NULL;

	if (ctx != NULL && ctx->api.cuGetErrorName != NULL)
		ctx->api.cuGetErrorName(r, &name);
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s failed: %s (%d)", what, name != NULL ? name : "?", r);
	return ROCMD_EIO;
}

static void *
sym(void *lib, const char *a, const char *b, int *missing)
{
	void *p = rocmd_dl_sym(lib, a);

	if (p == NULL && b != NULL)
		p = rocmd_dl_sym(lib, b);
	if (p == NULL)
		*missing = 1;
	return p;
}

#define LOAD(lib, field, name, alt) (*(void **)&api->field = sym(api->lib, name, alt, &missing))

static void *
open_first(const char *const *names, char *tried, size_t len)
{
	char why[1024];
	void *h;
	int i;

	for (i = 0; names[i] != NULL; i++) {
		h = rocmd_dl_open(names[i], why, sizeof(why));
		if (h != NULL)
			return h;
		if (i == 0)
			snprintf(tried, len, "%.250s", why);
	}
	return NULL;
}

int
backend_cuda_toolkit_dir(int i, char *out, size_t len)
{
#ifdef _WIN32
	/* The toolkit's installer sets CUDA_PATH in the machine's environment;
	 * CUDA 13 keeps its DLLs in bin\x64, earlier ones in bin. A bare name
	 * is not searched along PATH (common/dl.h). */
	const char *cp = getenv("CUDA_PATH");

	if (cp == NULL || cp[0] == '\0' || i > 1)
		return -1;
	snprintf(out, len, "%s\\bin%s", cp, i == 0 ? "\\x64" : "");
	return 0;
#else
	(void)i, (void)out, (void)len;
	return -1;
#endif
}

/* NAMES from the CUDA toolkit's folders first, then by name. */
static void *
open_toolkit(const char *const *names, char *tried, size_t len)
{
	char dir[1024], path[1200], why[1024];
	void *h;

	for (int d = 0; backend_cuda_toolkit_dir(d, dir, sizeof(dir)) == 0; d++)
		for (int i = 0; names[i] != NULL; i++) {
			snprintf(path, sizeof(path), "%s\\%s", dir, names[i]);
			if ((h = rocmd_dl_open(path, why, sizeof(why))) != NULL)
				return h;
		}
	return open_first(names, tried, len);
}

/* Loads libcuda (when DRIVER) and NVRTC. 0, or ROCMD_EUNSUPPORTED with the reason in WHY. */
static int
api_load(struct cuda_api *api, int driver, char *why, size_t whylen)
{
#ifdef _WIN32
	/* The driver's nvcuda.dll is in System32; NVRTC in the toolkit's folder. */
	static const char *const cuda_names[] = {"nvcuda.dll", NULL};
	static const char *const nvrtc_names[] = {"nvrtc64_130_0.dll", "nvrtc64_120_0.dll",
	                                          "nvrtc64_112_0.dll", NULL};
#else
	static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
	static const char *const nvrtc_names[] = {"libnvrtc.so",
	                                          "libnvrtc.so.13",
	                                          "libnvrtc.so.12",
	                                          "libnvrtc.so.11.2",
	                                          "/usr/local/cuda/lib64/libnvrtc.so",
	                                          "/usr/local/cuda/lib64/libnvrtc.so.13",
	                                          "/usr/local/cuda/lib64/libnvrtc.so.12",
	                                          NULL};
#endif
	const char *env = getenv("ROCMD_NVRTC");
	char err[256] = "";
	int missing = 0;

	memset(api, 0, sizeof(*api));
	if (driver)
		api->libcuda = open_first(cuda_names, err, sizeof(err));
	if (driver && api->libcuda == NULL) {
		snprintf(why, whylen, "not available: no CUDA driver (%s)", err);
		return ROCMD_EUNSUPPORTED;
	}
	if (env != NULL && *env != '\0')
		api->libnvrtc = rocmd_dl_open(env, err, sizeof(err));
	if (api->libnvrtc == NULL)
		api->libnvrtc = open_toolkit(nvrtc_names, err, sizeof(err));
	if (api->libnvrtc == NULL) {
		snprintf(why, whylen, "not available: NVRTC not found (%s)", err);
		return ROCMD_EUNSUPPORTED;
	}
	if (!driver)
		goto nvrtc;
	LOAD(libcuda, cuInit, "cuInit", NULL);
	LOAD(libcuda, cuDriverGetVersion, "cuDriverGetVersion", NULL);
	LOAD(libcuda, cuDeviceGetCount, "cuDeviceGetCount", NULL);
	LOAD(libcuda, cuDeviceGet, "cuDeviceGet", NULL);
	LOAD(libcuda, cuDeviceGetName, "cuDeviceGetName", NULL);
	LOAD(libcuda, cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL);
	LOAD(libcuda, cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL);
	LOAD(libcuda, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
	LOAD(libcuda, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
	     "cuDevicePrimaryCtxRelease");
	LOAD(libcuda, cuCtxSetCurrent, "cuCtxSetCurrent", NULL);
	LOAD(libcuda, cuCtxSynchronize, "cuCtxSynchronize", NULL);
	LOAD(libcuda, cuGetErrorName, "cuGetErrorName", NULL);
	LOAD(libcuda, cuModuleLoadData, "cuModuleLoadData", NULL);
	LOAD(libcuda, cuModuleUnload, "cuModuleUnload", NULL);
	LOAD(libcuda, cuModuleGetFunction, "cuModuleGetFunction", NULL);
	LOAD(libcuda, cuModuleGetGlobal, "cuModuleGetGlobal_v2", NULL);
	LOAD(libcuda, cuFuncGetAttribute, "cuFuncGetAttribute", NULL);
	LOAD(libcuda, cuFuncSetAttribute, "cuFuncSetAttribute", NULL);
	LOAD(libcuda, cuOccupancyMaxActiveBlocksPerMultiprocessor,
	     "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL);
	LOAD(libcuda, cuLaunchKernel, "cuLaunchKernel", NULL);
	LOAD(libcuda, cuMemAlloc, "cuMemAlloc_v2", NULL);
	LOAD(libcuda, cuMemFree, "cuMemFree_v2", NULL);
	LOAD(libcuda, cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL);
	LOAD(libcuda, cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL);
	LOAD(libcuda, cuEventCreate, "cuEventCreate", NULL);
	LOAD(libcuda, cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
	LOAD(libcuda, cuEventRecord, "cuEventRecord", NULL);
	LOAD(libcuda, cuEventSynchronize, "cuEventSynchronize", NULL);
	LOAD(libcuda, cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
	if (missing) {
		snprintf(why, whylen, "not available: libcuda lacks a needed entry point");
		return ROCMD_EUNSUPPORTED;
	}
nvrtc:
	LOAD(libnvrtc, nvrtcVersion, "nvrtcVersion", NULL);
	LOAD(libnvrtc, nvrtcGetErrorString, "nvrtcGetErrorString", NULL);
	LOAD(libnvrtc, nvrtcCreateProgram, "nvrtcCreateProgram", NULL);
	LOAD(libnvrtc, nvrtcDestroyProgram, "nvrtcDestroyProgram", NULL);
	LOAD(libnvrtc, nvrtcCompileProgram, "nvrtcCompileProgram", NULL);
	LOAD(libnvrtc, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", NULL);
	LOAD(libnvrtc, nvrtcGetProgramLog, "nvrtcGetProgramLog", NULL);
	LOAD(libnvrtc, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", NULL);
	LOAD(libnvrtc, nvrtcGetCUBIN, "nvrtcGetCUBIN", NULL);
	if (missing) {
		snprintf(why, whylen,
		         "not available: NVRTC lacks a needed entry point (older than 11.1?)");
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

/*
 * Forgets the entry points but leaves the libraries loaded for the life of the
 * process. NVRTC carries its own C++ runtime, whose exception pool is freed
 * only at exit: unloading it leaks that pool on every open (LeakSanitizer
 * reports it), and the driver is not meant to be unloaded either. A later
 * open gets the same handles back from dlopen.
 */
static void
api_unload(struct cuda_api *api)
{
	memset(api, 0, sizeof(*api));
}

char *
backend_cuda_source(size_t *len)
{
	size_t n = rk_port_src_len + 1 + rk_gemm_src_len;
	char *s = malloc(n + 1);

	if (s == NULL)
		return NULL;
	memcpy(s, rk_port_src, rk_port_src_len);
	s[rk_port_src_len] = '\n';
	memcpy(s + rk_port_src_len + 1, rk_gemm_src, rk_gemm_src_len);
	s[n] = '\0';
	if (len != NULL)
		*len = n;
	return s;
}

int
backend_cuda_probe(char *why, size_t whylen)
{
	struct cuda_api api;
	int r, n = 0;

	r = api_load(&api, 1, why, whylen);
	if (r < 0)
		goto out;
	r = api.cuInit(0);
	if (r != 0) {
		const char *name = NULL;

		api.cuGetErrorName(r, &name);
		snprintf(why, whylen, "not available: cuInit failed: %s", name ? name : "?");
		r = ROCMD_EUNSUPPORTED;
		goto out;
	}
	if (api.cuDeviceGetCount(&n) != 0 || n == 0) {
		snprintf(why, whylen, "not available: no CUDA device");
		r = ROCMD_EUNSUPPORTED;
		goto out;
	}
	r = n;
out:
	api_unload(&api);
	return r;
}

int
backend_cuda_parse_nvrm(const char *text, char *out, size_t outlen)
{
	const char *p = strstr(text, "Kernel Module");
	size_t n;

	if (p == NULL)
		return ROCMD_ENOTFOUND;
	p += strlen("Kernel Module");
	/* The first word of digits and dots on the line ("Open Kernel Module for
	 * x86_64  575.57.08": "x86_64" is not one). */
	while (*p != '\0' && *p != '\n') {
		size_t w;

		p += strspn(p, " \t");
		w = strcspn(p, " \t\n");
		n = strspn(p, "0123456789.");
		if (w > 0 && n == w && memchr(p, '.', n) != NULL) {
			if (n >= outlen)
				return ROCMD_ENOTFOUND;
			memcpy(out, p, n);
			out[n] = '\0';
			return 0;
		}
		p += w;
	}
	return ROCMD_ENOTFOUND;
}

/* The running NVIDIA kernel module's version (Linux), or ROCMD_ENOTFOUND. */
static int
nvrm_version(char *out, size_t outlen)
{
	char buf[512];
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	size_t n;

	if (f == NULL)
		return ROCMD_ENOTFOUND;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return backend_cuda_parse_nvrm(buf, out, outlen);
}

static int
cuda_open(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
          size_t whylen)
{
	struct backend_ctx *ctx;
	struct cuda_api *a;
	int r, n = 0, v = 0, mj = 0, mn = 0, maj = 0, min = 0;
	size_t mem = 0;
	char kmod[20];

	*out = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	a = &ctx->api;
	r = api_load(a, 1, why, whylen);
	if (r < 0)
		goto fail;
	r = a->cuInit(0);
	if (r != 0) {
		const char *name = NULL;

		a->cuGetErrorName(r, &name);
		snprintf(why, whylen, "not available: cuInit failed: %s", name ? name : "?");
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	if (a->cuDeviceGetCount(&n) != 0 || index < 0 || index >= n) {
		snprintf(why, whylen, "not available: no CUDA device %d (%d found)", index, n);
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	if ((r = a->cuDeviceGet(&ctx->dev, index)) != 0 ||
	    (r = a->cuDevicePrimaryCtxRetain(&ctx->cu, ctx->dev)) != 0) {
		cu_fail(ctx, r, "context creation", why, whylen);
		ctx->cu = NULL;
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	a->cuCtxSetCurrent(ctx->cu);

	struct backend_device_info *d = &ctx->info;
	snprintf(d->backend, sizeof(d->backend), "cuda");
	a->cuDeviceGetName(d->name, sizeof(d->name), ctx->dev);
	a->cuDeviceGetAttribute(&mj, CU_ATTR_CC_MAJOR, ctx->dev);
	a->cuDeviceGetAttribute(&mn, CU_ATTR_CC_MINOR, ctx->dev);
	ctx->cc = mj * 10 + mn;
	snprintf(d->arch, sizeof(d->arch), "sm_%d", ctx->cc);
	/* NVRTC older than the device: compile for the newest it knows via PTX? Keep it simple:
	 * ask for the device's own cubin and let a compile error say so. */
	snprintf(ctx->arch_opt, sizeof(ctx->arch_opt), "--gpu-architecture=sm_%d", ctx->cc);
	a->cuDeviceGetAttribute(&d->compute_units, CU_ATTR_SM_COUNT, ctx->dev);
	a->cuDeviceGetAttribute(&d->wave_size, CU_ATTR_WARP_SIZE, ctx->dev);
	a->cuDeviceGetAttribute(&d->max_threads_per_block, CU_ATTR_MAX_THREADS_PER_BLOCK, ctx->dev);
	a->cuDeviceGetAttribute(&ctx->smem_optin, CU_ATTR_SMEM_OPTIN, ctx->dev);
	d->shared_mem_per_block = ctx->smem_optin;
	a->cuDeviceGetAttribute(&v, CU_ATTR_SMEM_PER_SM, ctx->dev);
	d->shared_mem_per_cu = v;
	a->cuDeviceGetAttribute(&d->regs_per_block, CU_ATTR_MAX_REGS_PER_BLOCK, ctx->dev);
	a->cuDeviceGetAttribute(&d->regs_per_cu, CU_ATTR_REGS_PER_SM, ctx->dev);
	a->cuDeviceTotalMem(&mem, ctx->dev);
	d->global_mem = (int64_t)mem;
	a->cuDeviceGetAttribute(&v, CU_ATTR_L2_SIZE, ctx->dev);
	d->llc_bytes = v;
	d->matrix_cores = ctx->cc >= 80;
	a->cuDriverGetVersion(&v);
	if (nvrm_version(kmod, sizeof(kmod)) == 0)
		snprintf(d->driver_version, sizeof(d->driver_version),
		         "CUDA driver %d.%d, kernel module %.19s", v / 1000, (v % 1000) / 10, kmod);
	else
		snprintf(d->driver_version, sizeof(d->driver_version), "CUDA driver %d.%d", v / 1000,
		         (v % 1000) / 10);
	a->nvrtcVersion(&maj, &min);
	snprintf(d->runtime_version, sizeof(d->runtime_version), "NVRTC %d.%d", maj, min);
	snprintf(d->compiler_version, sizeof(d->compiler_version), "NVRTC %d.%d", maj, min);

	ctx->source = backend_cuda_source(&ctx->source_len);
	if (ctx->source == NULL) {
		r = ROCMD_ENOMEM;
		goto fail;
	}
	if (info != NULL)
		*info = ctx->info;
	*out = ctx;
	return 0;
fail:
	if (ctx->cu != NULL)
		a->cuDevicePrimaryCtxRelease(ctx->dev);
	api_unload(a);
	free(ctx);
	return r;
}

int
backend_cuda_open_nvrtc(const char *arch, struct backend_ctx **out, char *why, size_t whylen)
{
	struct backend_ctx *ctx;
	int r, maj = 0, min = 0;

	*out = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	r = api_load(&ctx->api, 0, why, whylen);
	if (r < 0) {
		api_unload(&ctx->api);
		free(ctx);
		return r;
	}
	snprintf(ctx->arch_opt, sizeof(ctx->arch_opt), "--gpu-architecture=%s", arch);
	snprintf(ctx->info.arch, sizeof(ctx->info.arch), "%s", arch);
	ctx->api.nvrtcVersion(&maj, &min);
	snprintf(ctx->info.compiler_version, sizeof(ctx->info.compiler_version), "NVRTC %d.%d", maj,
	         min);
	*out = ctx;
	return 0;
}

void
backend_cuda_close_nvrtc(struct backend_ctx *ctx)
{
	if (ctx == NULL)
		return;
	api_unload(&ctx->api);
	free(ctx);
}

static void
cuda_close(struct backend_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->skws != 0)
		ctx->api.cuMemFree((CUdeviceptr)ctx->skws);
	if (ctx->pk != 0)
		ctx->api.cuMemFree(ctx->pk);
	if (ctx->cu != NULL)
		ctx->api.cuDevicePrimaryCtxRelease(ctx->dev);
	api_unload(&ctx->api);
	free(ctx->source);
	free(ctx);
}

/* ------------------------------------------------------------------ space */

enum {
	P_DT,
	P_TA,
	P_TB,
	P_MC,
	P_MT0,
	P_MT1,
	P_DU,
	P_TT0,
	P_TT1,
	P_VW,
	P_PGR,
	P_LDSPAD,
	P_WM,
	P_WN,
	P_STAGES,
	P_SWZ,
	P_GSU,
	P_GROUP,
	P_PLR,
	P_WL,
	P_MINB,
	P_GV,
	P_SK,
	P_COUNT
};

#define PV(nm, d, ...)                                                                             \
	{                                                                                          \
		.name = nm, .nvalues = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),         \
		.values = {__VA_ARGS__}, .dflt = d                                                 \
	}

static int cuda_check(const struct space_def *s, const int64_t *v, const struct gemm_problem *p,
                      const struct backend_device_info *dev, char *why, size_t whylen);

static const struct space_def cuda_space_template = {
    .name = "cuda",
    .nparams = P_COUNT,
    .params =
        {
            PV("DT", 0, 0, 1, 2),
            PV("TA", 0, 0, 1),
            PV("TB", 0, 0, 1),
            PV("MC", 0, 0, 1, 2),
            PV("MT0", 6, 1, 2, 4, 8, 16, 32, 64, 128, 256),
            PV("MT1", 2, 16, 32, 64, 128, 256),
            PV("DU", 0, 8, 16, 32, 64),
            PV("TT0", 2, 1, 2, 4, 8, 16),
            PV("TT1", 2, 1, 2, 4, 8, 16),
            PV("VW", 0, 1, 2, 4, 8),
            PV("PGR", 1, 0, 1, 2),
            PV("LDSPAD", 0, 0, 4, 8),
            PV("WM", 1, 1, 2, 4),
            PV("WN", 1, 1, 2, 4, 8),
            PV("STAGES", 1, 2, 3, 4, 5),
            PV("SWZ", 1, 0, 1),
            PV("GSU", 0, 1, 2, 4, 8, 16, 32),
            PV("GROUP", 0, 1, 4, 8, 16),
            PV("PLR", 0, 0, 1, 2),
            PV("WL", 0, 0, 1),
            PV("MINB", 0, 1, 2),
            PV("GV", 0, 0, 1),
            /* added after keys were first stored: a key without it means SK 0 */
            {.name = "SK", .nvalues = 2, .values = {0, 1}, .dflt = 0, .absent_ok = 1},
        },
    .check = cuda_check,
};

static int
is_dflt(const struct space_def *s, const int64_t *v, int i)
{
	return v[i] == s->params[i].values[s->params[i].dflt];
}

#define RULE(cond, ...)                                                                            \
	do {                                                                                       \
		if (cond) {                                                                        \
			snprintf(why, whylen, __VA_ARGS__);                                        \
			return 0;                                                                  \
		}                                                                                  \
	} while (0)

int64_t
backend_cuda_smem_bytes(const int64_t *v)
{
	if (v[P_GV]) /* GEMV: none */
		return 0;
	if (v[P_MC] == 2) /* wgmma: STAGES x (A + B tiles), + 1 KiB to align to 1 KiB */
		return v[P_STAGES] * (v[P_MT0] + v[P_MT1]) * v[P_DU] * 2 + 1024;
	if (v[P_MC]) {
		int64_t pad = v[P_SWZ] ? 0 : v[P_LDSPAD];
		int64_t a = v[P_TA] ? v[P_MT0] * (v[P_DU] + pad) : v[P_DU] * (v[P_MT0] + pad);
		int64_t b = v[P_TB] ? v[P_DU] * (v[P_MT1] + pad) : v[P_MT1] * (v[P_DU] + pad);

		return v[P_STAGES] * (a + b) * 2;
	}
	/* FMA: PGR 0 one buffer, PGR 1 two, PGR 2 (cp.async) STAGES; stream-K's flag
	 * (static, 16 bytes as ptxas places it) */
	return (v[P_PGR] == 2 ? v[P_STAGES] : v[P_PGR] ? 2 : 1) * v[P_DU] *
	           (v[P_MT0] + v[P_MT1] + 2 * v[P_LDSPAD]) * 4 +
	       16 * v[P_SK];
}

int
backend_cuda_chunks_ok(const struct gemm_problem *p)
{
	return !p->unaligned && p->lda % 8 == 0 && p->ldb % 8 == 0 && p->stride_a % 8 == 0 &&
	       p->stride_b % 8 == 0;
}

/* The bytes rk_pack writes for an operand of ROWS x COLS x BATCH, aligned
 * already when OK. */
static double
pack_bytes(int ok, int64_t rows, int64_t cols, int64_t batch)
{
	return ok ? 0 : (double)((rows + 7) / 8 * 8) * cols * batch * 2;
}

int
backend_cuda_repack_pays(const struct gemm_problem *p)
{
	int ok_a = !p->unaligned && p->lda % 8 == 0 && (p->batch == 1 || p->stride_a % 8 == 0);
	int ok_b = !p->unaligned && p->ldb % 8 == 0 && (p->batch == 1 || p->stride_b % 8 == 0);
	double bytes = pack_bytes(ok_a, gemm_rows_a(p), gemm_cols_a(p), p->batch) +
	               pack_bytes(ok_b, gemm_rows_b(p), gemm_cols_b(p), p->batch);

	/* Read and written once, at a few TB/s, against the matrix cores' hundreds
	 * of TFLOP/s: 512 flops a byte keeps the copy under a tenth of the GEMM. */
	return p->m >= 64 && p->n >= 64 && p->k >= 64 &&
	       2.0 * p->m * p->n * p->k * p->batch >= 512 * bytes;
}

static int
cuda_check(const struct space_def *s, const int64_t *v, const struct gemm_problem *p,
           const struct backend_device_info *dev, char *why, size_t whylen)
{
	int64_t esz = v[P_DT] == 0 ? 4 : 2, threads, regs, smem = backend_cuda_smem_bytes(v);

	RULE(v[P_MT0] < 4 && !v[P_GV], "MT0 1 and 2 are for the GEMV path (GV 1)");
	RULE(v[P_SK] && (v[P_MC] || v[P_GV]), "stream-K (SK 1) is the FMA path's");
	RULE(v[P_SK] && v[P_GSU] > 1, "stream-K (SK 1) already splits K: GSU 1");
	if (v[P_GV]) {
		int64_t ab = v[P_MT0] + v[P_TT1];

		RULE(v[P_MC], "the GEMV path (GV 1) uses no matrix cores");
		RULE(!is_dflt(s, v, P_WM) || !is_dflt(s, v, P_WN) || !is_dflt(s, v, P_STAGES) ||
		         !is_dflt(s, v, P_SWZ),
		     "WM/WN/STAGES/SWZ are matrix-core parameters");
		RULE(!is_dflt(s, v, P_TT0) || !is_dflt(s, v, P_PGR) || v[P_LDSPAD] ||
		         !is_dflt(s, v, P_WL) || v[P_PLR] || v[P_GROUP] > 1,
		     "TT0/PGR/LDSPAD/WL/PLR/GROUP are not GEMV parameters");
		RULE(v[P_MT0] > 8, "GEMV: MT0 (rows per block) at most 8");
		RULE(v[P_MT1] % v[P_TT1], "GEMV: TT1 must divide MT1");
		threads = 32 * (v[P_MT1] / v[P_TT1]);
		RULE(threads > 1024, "%" PRId64 " threads", threads);
		RULE(v[P_DU] % v[P_VW], "GEMV: VW must divide DU");
		RULE(v[P_VW] * esz > 16, "vector wider than 16 bytes");
		RULE(v[P_DU] > 32, "GEMV: DU (k per lane per step) at most 32");
		/* accumulators, the step's B values (A's are L1 hits, used as they come), a
		 * vector of A per row, row and column pointers */
		regs = v[P_MT0] * v[P_TT1] + v[P_DU] * v[P_TT1] + 4 * v[P_MT0] + 2 * ab + 24;
	} else if (v[P_MC] == 2) {
		RULE(v[P_DT] == 0, "wgmma takes fp16 or bf16 (no TF32)");
		RULE(!is_dflt(s, v, P_TT0) || !is_dflt(s, v, P_TT1) || !is_dflt(s, v, P_VW) ||
		         !is_dflt(s, v, P_PGR) || !is_dflt(s, v, P_WL),
		     "TT0/TT1/VW/PGR/WL are FMA parameters");
		RULE(v[P_MT0] != 64 && v[P_MT0] != 128 && v[P_MT0] != 256,
		     "wgmma N (MT0) is 64, 128 or 256");
		RULE(v[P_WM] != 1 || v[P_MT1] != 64 * v[P_WN],
		     "wgmma: WM 1, MT1 = 64 x WN warpgroups");
		RULE(v[P_DU] != 64, "wgmma: DU 64 (one 128-byte swizzle row)");
		RULE(v[P_STAGES] < 3, "wgmma: three stages or more");
		RULE(!v[P_SWZ] || v[P_LDSPAD] || v[P_PLR], "wgmma: swizzled, no padding, no PLR");
		threads = 128 * v[P_WN];
		regs = v[P_MT0] / 2 + 40;
	} else if (v[P_MC]) {
		int64_t wtm = v[P_MT0] / v[P_WM], wtn = v[P_MT1] / v[P_WN];

		RULE(v[P_DT] == 0, "mma.sync takes fp16 or bf16 (no TF32)");
		RULE(!is_dflt(s, v, P_TT0) || !is_dflt(s, v, P_TT1) || !is_dflt(s, v, P_VW) ||
		         !is_dflt(s, v, P_PGR) || !is_dflt(s, v, P_WL),
		     "TT0/TT1/VW/PGR/WL are FMA parameters");
		RULE(v[P_SWZ] && v[P_LDSPAD] != 0, "swizzled shared memory takes no padding");
		RULE(!v[P_SWZ] && v[P_LDSPAD] != 8, "mma rows are padded by 8 elements");
		RULE(v[P_MT0] % v[P_WM] || v[P_MT1] % v[P_WN] || wtm % 16 || wtn % 16,
		     "warp tile must be a multiple of 16");
		RULE(v[P_DU] < 16, "depth must be a multiple of 16");
		RULE(v[P_PLR] > 1, "PLR 2 is the FMA path's");
		threads = 32 * v[P_WM] * v[P_WN];
		regs = (wtn / 16) * (wtm / 8) * 4 +
		       ((wtn / 16) * 4 + (wtm / 8) * 2) * (1 + v[P_PLR]) + 40;
		RULE(threads > 512, "more than 16 warps");
	} else {
		int64_t tt0 = v[P_TT0], tt1 = v[P_TT1], lv0 = tt0 < 4 ? tt0 : 4,
		        lv1 = tt1 < 4 ? tt1 : 4;
		int64_t ca = v[P_TA] ? v[P_DU] : v[P_MT0], cb = v[P_TB] ? v[P_MT1] : v[P_DU];

		RULE(!is_dflt(s, v, P_WM) || !is_dflt(s, v, P_WN) || !is_dflt(s, v, P_SWZ),
		     "WM/WN/SWZ are matrix-core parameters");
		RULE(!is_dflt(s, v, P_STAGES) && v[P_PGR] != 2,
		     "STAGES is for matrix cores and the FMA path's cp.async (PGR 2)");
		RULE(v[P_MT0] % tt0 || v[P_MT1] % tt1,
		     "thread tile does not divide the macro tile");
		threads = (v[P_MT0] / tt0) * (v[P_MT1] / tt1);
		RULE(threads < 32 || threads > 1024 || threads % 32, "%" PRId64 " threads",
		     threads);
		RULE(ca % v[P_VW] || cb % v[P_VW], "VW does not divide the contiguous tile side");
		RULE(v[P_VW] * esz > 16, "vector wider than 16 bytes");
		RULE(v[P_WL] && ((v[P_MT0] / tt0) % 8 || (v[P_MT1] / tt1) % 4),
		     "WL needs a workgroup of 8 x 4 thread blocks");
		RULE(v[P_LDSPAD] % lv0 || v[P_LDSPAD] % lv1, "padding breaks LDS vector alignment");
		RULE(v[P_PGR] < 2 && smem > 48 * 1024, "static shared memory over 48 KiB");
		RULE(v[P_PLR] == 2 && v[P_PGR] != 1, "PLR 2 needs the register prefetch (PGR 1)");
		if (v[P_PGR] == 2) {
			/* cp.async: per operand, a row of the global tile in copies (16-byte
			 * chunks along a shared row, else elements along k) divides the
			 * threads, and the tile's copies are a multiple of them or fewer. */
			int64_t la = v[P_TA] ? v[P_DU] : v[P_MT0] / 4, ra = v[P_TA] ? v[P_MT0] : v[P_DU];
			int64_t lb = v[P_TB] ? v[P_MT1] / 4 : v[P_DU], rb = v[P_TB] ? v[P_DU] : v[P_MT1];

			RULE(v[P_DT] != 0, "PGR 2 (cp.async) copies fp32 only");
			RULE(v[P_VW] != 4, "PGR 2 copies 16 bytes: VW 4");
			RULE(threads % la || threads % lb || (ra * la > threads && (ra * la) % threads) ||
			         (rb * lb > threads && (rb * lb) % threads),
			     "PGR 2: the copies do not tile the threads");
		}
		regs = tt0 * tt1 + (tt0 + tt1) * (1 + (v[P_PLR] != 0)) +
		       (v[P_PGR] == 1 ? (v[P_MT0] + v[P_MT1]) * v[P_DU] / threads : 0) + 24 +
		       8 * v[P_SK];
	}
	RULE(regs > 255, "about %" PRId64 " registers per thread", regs);
	RULE(v[P_MINB] > 1 && regs * threads * v[P_MINB] > 65536,
	     "MINB blocks per multiprocessor do not fit the registers");
	RULE(v[P_MINB] > 1 && smem * v[P_MINB] > 228 * 1024,
	     "MINB blocks per multiprocessor do not fit the shared memory");
	if (p != NULL) {
		RULE(v[P_GSU] > 1 && p->k / v[P_GSU] < v[P_DU],
		     "split-K leaves less than DU per slice");
		RULE(v[P_GSU] > 1 && p->batch * v[P_GSU] > 65535,
		     "batch x GSU over the grid limit");
		RULE(v[P_GSU] > 1 && p->batch * ((p->m + v[P_MT0] - 1) / v[P_MT0]) *
		                             ((p->n + v[P_MT1] - 1) / v[P_MT1]) >
		                         BACKEND_SK_COUNTERS,
		     "split-K: tiles x batch over the workspace's %d counters",
		     BACKEND_SK_COUNTERS);
		RULE(v[P_MT0] > 16 && v[P_MT0] >= 2 * p->m, "MT0 exceeds M");
		RULE(v[P_MT1] > 16 && v[P_MT1] >= 2 * p->n, "MT1 exceeds N");
		RULE(v[P_GROUP] > 1 && (p->m + v[P_MT0] - 1) / v[P_MT0] < v[P_GROUP],
		     "GROUP exceeds the M tiles");
	}
	if (dev != NULL) {
		RULE(v[P_MC] && !dev->matrix_cores, "device has no matrix cores");
		RULE(v[P_MC] == 2 && strcmp(dev->arch, "sm_90") != 0, "wgmma needs sm_90");
		RULE(v[P_PGR] == 2 && (strncmp(dev->arch, "sm_", 3) != 0 || atoi(dev->arch + 3) < 80),
		     "PGR 2 (cp.async) needs an NVIDIA GPU of sm_80 or later");
		RULE(threads > dev->max_threads_per_block, "too many threads for the device");
		RULE(dev->shared_mem_per_block > 0 && smem > dev->shared_mem_per_block,
		     "%" PRId64 " bytes of shared memory", smem);
		RULE(dev->regs_per_block > 0 && regs * threads > dev->regs_per_block,
		     "registers exceed the block's");
	}
	return 1;
}

static void
fix_value(struct space_param *sp, int64_t v)
{
	sp->nvalues = 1;
	sp->values[0] = v;
	sp->dflt = 0;
}

/* Keeps the values of SP that are in KEEP (in SP's order); DFLT becomes the default. */
static void
keep_values(struct space_param *sp, const int64_t *keep, int nkeep, int64_t dflt)
{
	int i, k, n = 0;

	for (i = 0; i < sp->nvalues; i++)
		for (k = 0; k < nkeep; k++)
			if (sp->values[i] == keep[k]) {
				sp->values[n++] = sp->values[i];
				break;
			}
	sp->nvalues = n;
	sp->dflt = 0;
	for (i = 0; i < n; i++)
		if (sp->values[i] == dflt)
			sp->dflt = i;
}

/* Makes V (one of SP's values) the default. */
static void
set_dflt(struct space_param *sp, int64_t v)
{
	int i;

	for (i = 0; i < sp->nvalues; i++)
		if (sp->values[i] == v)
			sp->dflt = i;
}

/* ------------------------------------------------ defaults by shape class */

/*
 * The default of the tuner's space is chosen by the problem's shape class on
 * the device (its SMs or CUs), from the winners the H200's sweeps recorded
 * (bench/gpu-gemm/best-h200.txt, docs/KERNELS.md): GEMV for a few rows,
 * small tiles with split-K for skinny problems, the tensor-core paths sized
 * to fill the device for the rest. Each sets the space's dflt_why. Values a
 * class names that the space does not hold are left at the space's default.
 */

/* Split-K slices: doubles while the blocks stay within 4 per SM (TARGET
 * blocks) and each slice keeps MIN_K of K. */
static int64_t
split_for(uint64_t tiles, int64_t k, uint64_t target, int64_t min_k)
{
	int64_t g = 1;

	while (g < 8 && tiles * (uint64_t)g * 2 <= target && k / (g * 2) >= min_k)
		g *= 2;
	return g;
}

static uint64_t
tiles_of(const struct gemm_problem *p, int64_t mt0, int64_t mt1)
{
	return (uint64_t)((p->m + mt0 - 1) / mt0) * (uint64_t)((p->n + mt1 - 1) / mt1);
}

/* The smallest of 16, 32, 64 that covers X (tile sides of skinny problems). */
static int64_t
side_for(int64_t x)
{
	return x <= 16 ? 16 : x <= 32 ? 32 : 64;
}

static void
defaults_gemv(struct space_def *s, const struct gemm_problem *p, int units)
{
	struct space_param *sp = s->params;
	int64_t tt1 = p->m <= 2 ? 2 : 4, gsu;

	set_dflt(&sp[P_MT1], 16);
	set_dflt(&sp[P_TT1], tt1);
	set_dflt(&sp[P_DU], 16);
	set_dflt(&sp[P_VW], p->dtype == GEMM_FP32 ? 4 : 8);
	gsu = split_for(tiles_of(p, 8, 16), p->k, 2 * (uint64_t)units, 32 * 16);
	set_dflt(&sp[P_GSU], gsu);
	snprintf(s->dflt_why, sizeof(s->dflt_why),
	         "GEMV class (M <= 8, B K-contiguous): %lld rows x 16 columns a block, split-K %lld",
	         (long long)sp[P_MT0].values[sp[P_MT0].dflt], (long long)gsu);
}

/* mma.sync (or WMMA): a 16-row tile for a few rows, else 128 x 128; the
 * columns sized to N where it is narrow; split-K to fill the device. */
static void
defaults_mma(struct space_def *s, const struct gemm_problem *p, int matrix_cores, int units)
{
	struct space_param *sp = s->params;
	int small = p->m <= 64;
	int64_t mt0 = small ? side_for(p->m) : 128, mt1 = p->n <= 64 ? side_for(p->n) : small ? 64 : 128;
	int64_t wn = mt1 >= 64 ? (small ? 4 : 2) : mt1 / 16, wm = small ? 1 : 2, du = small ? 64 : 32;
	int64_t gsu = split_for(tiles_of(p, mt0, mt1), p->k, 4 * (uint64_t)units, 4 * du);

	set_dflt(&sp[P_MT0], mt0);
	set_dflt(&sp[P_MT1], mt1);
	set_dflt(&sp[P_WM], wm);
	set_dflt(&sp[P_WN], wn);
	set_dflt(&sp[P_DU], du);
	set_dflt(&sp[P_GSU], gsu);
	if (small && matrix_cores == 2) {
		/* The H200's decode winners (16 x 64, 4 stages, fragments double-buffered). */
		set_dflt(&sp[P_STAGES], 4);
		set_dflt(&sp[P_PLR], 1);
		set_dflt(&sp[P_MINB], 2);
	}
	snprintf(s->dflt_why, sizeof(s->dflt_why),
	         "%s class on the matrix cores: %lld x %lld tiles, split-K %lld",
	         small ? "skinny (M <= 64)" : "general", (long long)mt0, (long long)mt1,
	         (long long)gsu);
}

/* wgmma: the largest tile whose count fills 60 % of the SMs, else 64 x 64
 * with split-K. */
static void
defaults_wgmma(struct space_def *s, const struct gemm_problem *p, int units)
{
	static const int64_t cand[][3] = {{256, 128, 4}, {128, 128, 5}, {128, 64, 5}, {64, 64, 5}};
	struct space_param *sp = s->params;
	int i, last = (int)(sizeof(cand) / sizeof(cand[0])) - 1;
	int64_t gsu = 1;

	for (i = 0; i < last; i++)
		if (cand[i][0] < 2 * p->m && cand[i][1] < 2 * p->n &&
		    (double)tiles_of(p, cand[i][0], cand[i][1]) >= 0.6 * units)
			break;
	if (i == last)
		gsu = split_for(tiles_of(p, 64, 64), p->k, 2 * (uint64_t)units, 1024);
	set_dflt(&sp[P_MT0], cand[i][0]);
	set_dflt(&sp[P_MT1], cand[i][1]);
	set_dflt(&sp[P_WN], cand[i][1] / 64);
	set_dflt(&sp[P_STAGES], cand[i][2]);
	set_dflt(&sp[P_GSU], gsu);
	snprintf(s->dflt_why, sizeof(s->dflt_why),
	         "large class on wgmma: %lld x %lld tiles (%llu of them on %d SMs), split-K %lld",
	         (long long)cand[i][0], (long long)cand[i][1],
	         (unsigned long long)tiles_of(p, cand[i][0], cand[i][1]), units, (long long)gsu);
}

/* FMA without stream-K: small tiles and split-K for skinny problems, 128 x
 * 128 for large ones, 64 x 64 between. */
static void
defaults_fma(struct space_def *s, const struct gemm_problem *p, int units)
{
	struct space_param *sp = s->params;
	int64_t mt0 = 64, mt1 = 64, tt0 = 4, tt1 = 4, gsu = 1;
	const char *cls = "medium";

	if (p->m <= 64 || p->n <= 64) {
		mt0 = p->m <= 64 ? side_for(p->m) : 64;
		mt1 = p->n <= 64 ? side_for(p->n) : 64;
		if ((mt0 / tt0) * (mt1 / tt1) < 32)
			tt0 = 2;
		if ((mt0 / tt0) * (mt1 / tt1) < 32)
			tt1 = 2;
		gsu = split_for(tiles_of(p, mt0, mt1), p->k, 4 * (uint64_t)units, 64);
		cls = "skinny (M or N <= 64)";
	} else if (p->m >= 512 && p->n >= 512) {
		mt0 = mt1 = 128;
		tt0 = tt1 = 8;
		set_dflt(&sp[P_LDSPAD], 4);
		cls = "large";
	}
	set_dflt(&sp[P_MT0], mt0);
	set_dflt(&sp[P_MT1], mt1);
	set_dflt(&sp[P_TT0], tt0);
	set_dflt(&sp[P_TT1], tt1);
	set_dflt(&sp[P_VW], 4);
	set_dflt(&sp[P_GSU], gsu);
	snprintf(s->dflt_why, sizeof(s->dflt_why),
	         "%s class on the FMA path: %lld x %lld tiles, %lld x %lld a thread, split-K %lld", cls,
	         (long long)mt0, (long long)mt1, (long long)tt0, (long long)tt1, (long long)gsu);
}

/* FMA with stream-K (sm_90, M >= 128, N >= 512): the H200's fp32 winners. */
static void
defaults_fma_sk(struct space_def *s, const struct gemm_problem *p)
{
	struct space_param *sp = s->params;
	int big = p->m >= 256;

	/* 256 x 128, 16 x 8 a thread, cp.async (docs/KERNELS.md, FMA); at M = 128,
	 * 128 x 128, 8 x 8, register staging (best-h200.txt's prefill winners). */
	set_dflt(&sp[P_MT0], big ? 256 : 128);
	set_dflt(&sp[P_MT1], 128);
	set_dflt(&sp[P_DU], 16);
	set_dflt(&sp[P_TT0], big ? 16 : 8);
	set_dflt(&sp[P_TT1], 8);
	set_dflt(&sp[P_VW], 4);
	set_dflt(&sp[P_PGR], big ? 2 : 1);
	set_dflt(&sp[P_LDSPAD], 4);
	set_dflt(&sp[P_PLR], 0);
	set_dflt(&sp[P_WL], big ? 1 : 0);
	set_dflt(&sp[P_SK], 1);
	/* Bands of 8 M-tiles where there are 8 of them. */
	set_dflt(&sp[P_GROUP], (p->m + (big ? 255 : 127)) / (big ? 256 : 128) >= 8 ? 8 : 1);
	if (p->dtype != GEMM_FP32) {
		/* fp16/bf16 here (layouts the matrix cores cannot copy): cp.async is
		 * fp32's; register staging at DU 8 fits 48 KiB. */
		set_dflt(&sp[P_PGR], 1);
		set_dflt(&sp[P_DU], 8);
	}
	snprintf(s->dflt_why, sizeof(s->dflt_why),
	         "large class on the FMA path: %d x 128 tiles, stream-K", big ? 256 : 128);
}

/* The tuner's space for the FMA path (GEMV or not): which values it offers. */
static void
restrict_fma(struct space_def *store, const struct gemm_problem *p, int matrix_cores, int gv,
             int sk)
{
	static const int64_t fma_pad[] = {0, 4}, gv_mt0[] = {1, 2, 4, 8};
	static const int64_t fma_mt0[] = {4, 8, 16, 32, 64, 128, 256};
	static const int64_t fma_pgr[] = {0, 1}, fma_pgr90[] = {1, 2}, fma_st90[] = {2, 3};
	struct space_param *sp = store->params;

	if (gv) {
		int64_t rows = p->m <= 1 ? 1 : p->m <= 2 ? 2 : p->m <= 4 ? 4 : 8;

		fix_value(&sp[P_TT0], 4);
		fix_value(&sp[P_PGR], 1);
		fix_value(&sp[P_LDSPAD], 0);
		fix_value(&sp[P_WL], 0);
		fix_value(&sp[P_PLR], 0);
		fix_value(&sp[P_GROUP], 1);
		fix_value(&sp[P_WM], 2);
		fix_value(&sp[P_WN], 2);
		fix_value(&sp[P_STAGES], 3);
		fix_value(&sp[P_SWZ], 1);
		keep_values(&sp[P_MT0], gv_mt0, 4, rows);
		return;
	}
	fix_value(&sp[P_WM], 2);
	fix_value(&sp[P_WN], 2);
	/* STAGES only shapes PGR 2 (cp.async), offered on sm_90: 2 won there (run 18). */
	fix_value(&sp[P_STAGES], matrix_cores == 2 ? 2 : 3);
	fix_value(&sp[P_SWZ], 1);
	keep_values(&sp[P_LDSPAD], fma_pad, 2, 0);
	keep_values(&sp[P_MT0], fma_mt0, 7, 64);
	/* Two prefetch choices, so the space stays enumerable: on sm_90 (where
	 * the FMA path was measured) register staging or cp.async (PGR 2), no
	 * PGR 0, which never came near the best there; elsewhere 0 and 1. */
	if (matrix_cores == 2)
		keep_values(&sp[P_PGR], fma_pgr90, 2, 1);
	else
		keep_values(&sp[P_PGR], fma_pgr, 2, 1);
	if (sk) {
		/* sm_90, problems of many tiles: stream-K balances the last wave
		 * (and splits K where the tiles are fewer than the SMs), so it
		 * replaces split-K here and the space stays enumerable. */
		sp[P_SK] = cuda_space_template.params[P_SK];
		fix_value(&sp[P_GSU], 1);
		/* cp.async in 2 or 3 stages: each won somewhere (runs 22-24). */
		sp[P_STAGES] = cuda_space_template.params[P_STAGES];
		keep_values(&sp[P_STAGES], fma_st90, 2, 2);
	}
}

const struct space_def *
backend_cuda_space_for(struct space_def *store, const struct gemm_problem *p, int matrix_cores,
                       int full)
{
	return backend_cuda_space_dev(store, p, matrix_cores, 0, full);
}

const struct space_def *
backend_cuda_space_dev(struct space_def *store, const struct gemm_problem *p, int matrix_cores,
                       int units, int full)
{
	static const int64_t group[] = {1, 8}, mma_pad[] = {0, 8};
	static const int64_t mma_mt0[] = {16, 32, 64, 128, 256};
	static const int64_t wg_tile[] = {64, 128, 256}, wg_wn[] = {1, 2, 4}, wg_st[] = {3, 4, 5};
	struct space_param *sp = store->params;
	int mc, wg, gv, sk;

	*store = cuda_space_template;
	if (p == NULL)
		return store;
	if (units <= 0)
		units = 132; /* unknown: the H200's, where the classes were measured */
	fix_value(&sp[P_DT], p->dtype);
	fix_value(&sp[P_TA], p->ta);
	fix_value(&sp[P_TB], p->tb);
	/* The full space's default point: 64x64x8 FMA, 4x4 per thread; 128x128x32
	 * mma.sync, 2x2 warps, 3 stages, for fp16/bf16 on devices that have it, where
	 * the operands can be copied in 16-byte chunks or repacked at a small share
	 * of the work (cuda_gemm); the FMA path (edge-checked, any layout and
	 * alignment) for everything else. */
	mc = p->dtype != GEMM_FP32 && matrix_cores &&
	     (backend_cuda_chunks_ok(p) || backend_cuda_repack_pays(p));
	sp[P_MC].dflt = mc;
	if (mc) {
		sp[P_MT0].dflt = 7; /* 128 */
		sp[P_MT1].dflt = 3; /* 128 */
		sp[P_DU].dflt = 2;  /* 32 */
	}
	if (full)
		return store;
	/*
	 * What the tuner gets: one path, the other path's parameters fixed, so the
	 * space is ~10^6 points of which a useful share is valid (the full union is
	 * ~3 x 10^9, too many to enumerate and too sparse to sample).
	 */
	/* wgmma (sm_90) for problems with at least one 128 x 64 tile; mma.sync below that. */
	wg = mc && matrix_cores == 2 && p->m >= 128 && p->n >= 64;
	/* GEMV for a few rows without matrix cores (fp32 everywhere) when B is K-contiguous. */
	gv = !mc && p->m <= 8 && p->tb == GEMM_N;
	/* Stream-K: a choice of the FMA space where it was measured (sm_90). */
	sk = !mc && !gv && matrix_cores == 2 && p->m >= 128 && p->n >= 512;
	fix_value(&sp[P_MC], wg ? 2 : mc);
	fix_value(&sp[P_GV], gv);
	fix_value(&sp[P_SK], 0);
	keep_values(&sp[P_GROUP], group, 2, 1);
	if (wg || mc) {
		fix_value(&sp[P_TT0], 4);
		fix_value(&sp[P_TT1], 4);
		fix_value(&sp[P_VW], 1);
		fix_value(&sp[P_PGR], 1);
		fix_value(&sp[P_WL], 0);
	}
	if (wg) {
		fix_value(&sp[P_DU], 64);
		fix_value(&sp[P_WM], 1);
		fix_value(&sp[P_SWZ], 1);
		fix_value(&sp[P_LDSPAD], 0);
		fix_value(&sp[P_PLR], 0);
		keep_values(&sp[P_MT0], wg_tile, 3, 256);
		keep_values(&sp[P_MT1], wg_tile, 3, 128);
		keep_values(&sp[P_WN], wg_wn, 3, 2);
		keep_values(&sp[P_STAGES], wg_st, 3, 4);
		defaults_wgmma(store, p, units);
	} else if (mc) {
		keep_values(&sp[P_MT0], mma_mt0, 5, 128);
		keep_values(&sp[P_LDSPAD], mma_pad, 2, 0);
		defaults_mma(store, p, matrix_cores, units);
	} else {
		restrict_fma(store, p, matrix_cores, gv, sk);
		if (gv)
			defaults_gemv(store, p, units);
		else if (sk)
			defaults_fma_sk(store, p);
		else
			defaults_fma(store, p, units);
	}
	if (mc && !backend_cuda_chunks_ok(p)) {
		size_t n = strlen(store->dflt_why);

		snprintf(store->dflt_why + n, sizeof(store->dflt_why) - n, "; unaligned operands repacked");
	}
	return store;
}

/* The tuner's space for P, from the slots of spaces already built (a caller
 * may hold a space while it asks for others: a slot is only replaced after
 * all the others). */
static const struct space_def *
cuda_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	const size_t nslots = sizeof(ctx->spaces) / sizeof(ctx->spaces[0]);
	/* sm_90 gets the wgmma path (matrix_cores 2), whose space depends on the shape. */
	int mc = ctx->info.matrix_cores && !strcmp(ctx->info.arch, "sm_90") ? 2 : ctx->info.matrix_cores;
	int chunks = backend_cuda_chunks_ok(p);
	struct space_cache *sc;
	size_t i;

	for (i = 0; i < nslots; i++) {
		sc = &ctx->spaces[i];
		if (sc->used && sc->dt == p->dtype && sc->ta == p->ta && sc->tb == p->tb &&
		    sc->m == p->m && sc->n == p->n && sc->k == p->k && sc->batch == p->batch &&
		    sc->chunks == chunks)
			return &sc->def;
	}
	sc = &ctx->spaces[ctx->next_space++ % nslots];
	sc->used = 1;
	sc->dt = p->dtype;
	sc->ta = p->ta;
	sc->tb = p->tb;
	sc->m = p->m;
	sc->n = p->n;
	sc->k = p->k;
	sc->batch = p->batch;
	sc->chunks = chunks;
	return backend_cuda_space_dev(&sc->def, p, mc, ctx->info.compute_units, 0);
}

static const char *
cuda_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = ctx->source_len;
	return ctx->source;
}

/* ---------------------------------------------------------------- compile */

static int
defines_mc(const char *const *defines, int ndefines)
{
	int i;

	for (i = 0; i < ndefines; i++)
		if (!strncmp(defines[i], "MC=", 3))
			return atoi(defines[i] + 3);
	return 0;
}

int
backend_cuda_nvrtc(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
                   int ndefines, char **cubin, size_t *cubin_len, char *log, size_t loglen)
{
	struct cuda_api *a = &ctx->api;
	const char *hdr_src[1] = {rk_port_src}, *hdr_name[1] = {"port.h"};
	const char *opts[SPACE_MAX_PARAMS + 8];
	char dstore[SPACE_MAX_PARAMS][64], arch90a[56];
	char *text = NULL;
	nvrtcProgram prog = NULL;
	size_t n = 0;
	int i, nopt = 0, r;

	*cubin = NULL;
	*cubin_len = 0;
	if (log != NULL && loglen > 0)
		log[0] = '\0';
	if (ndefines > SPACE_MAX_PARAMS)
		return ROCMD_EINVAL;
	/* NVRTC wants a NUL-terminated source. */
	text = malloc(len + 1);
	if (text == NULL)
		return ROCMD_ENOMEM;
	memcpy(text, src, len);
	text[len] = '\0';
	/* The wgmma path (MC=2) needs the architecture-specific sm_90a target. */
	snprintf(arch90a, sizeof(arch90a), "%s%s", ctx->arch_opt,
	         defines_mc(defines, ndefines) == 2 && !strcmp(ctx->arch_opt + strlen(ctx->arch_opt) - 5, "sm_90")
	             ? "a"
	             : "");
	opts[nopt++] = arch90a;
	opts[nopt++] = "-std=c++17";
	opts[nopt++] = "-default-device";
	for (i = 0; i < ndefines; i++) {
		snprintf(dstore[i], sizeof(dstore[i]), "-DRK_%s", defines[i]);
		opts[nopt++] = dstore[i];
	}
	r = a->nvrtcCreateProgram(&prog, text, "gemm.cu", 1, hdr_src, hdr_name);
	if (r != 0) {
		snprintf(log, loglen, "nvrtcCreateProgram: %s", a->nvrtcGetErrorString(r));
		r = ROCMD_EINVAL;
		goto out;
	}
	r = a->nvrtcCompileProgram(prog, nopt, opts);
	if (a->nvrtcGetProgramLogSize(prog, &n) == 0 && n > 1 && log != NULL && loglen > 0) {
		char *l = malloc(n);

		if (l != NULL && a->nvrtcGetProgramLog(prog, l) == 0)
			snprintf(log, loglen, "%s", l);
		free(l);
	}
	if (r != 0) {
		r = ROCMD_EINVAL;
		goto out;
	}
	if (a->nvrtcGetCUBINSize(prog, &n) != 0 || n == 0) {
		snprintf(log, loglen, "NVRTC produced no cubin for %s", ctx->arch_opt);
		r = ROCMD_EINVAL;
		goto out;
	}
	*cubin = malloc(n);
	if (*cubin == NULL) {
		r = ROCMD_ENOMEM;
		goto out;
	}
	a->nvrtcGetCUBIN(prog, *cubin);
	*cubin_len = n;
	r = 0;
out:
	if (prog != NULL)
		a->nvrtcDestroyProgram(&prog);
	free(text);
	return r;
}

static int
defines_gsu(const char *const *defines, int ndefines)
{
	int i;

	for (i = 0; i < ndefines; i++)
		if (!strncmp(defines[i], "GSU=", 4))
			return atoi(defines[i] + 4);
	return 1;
}

int
backend_cuda_load(struct backend_ctx *ctx, const char *cubin, int gsu, struct backend_module **out,
                  char *log, size_t loglen)
{
	struct cuda_api *a = &ctx->api;
	struct backend_module *m;
	CUdeviceptr info = 0;
	size_t isz = 0;
	unsigned iv[8] = {0};
	int r, per_sm = 0, sstatic = 0;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return ROCMD_ENOMEM;
	a->cuCtxSetCurrent(ctx->cu);
	if ((r = a->cuModuleLoadData(&m->mod, cubin)) != 0) {
		m->mod = NULL;
		r = cu_fail(ctx, r, "cuModuleLoadData", log, loglen);
		goto fail;
	}
	if ((r = a->cuModuleGetFunction(&m->gemm, m->mod, "rk_gemm")) != 0 ||
	    (r = a->cuModuleGetGlobal(&info, &isz, m->mod, "rk_gemm_info")) != 0 ||
	    (r = a->cuMemcpyDtoH(iv, info, isz < sizeof(iv) ? isz : sizeof(iv))) != 0) {
		r = cu_fail(ctx, r, "module lookup", log, loglen);
		goto fail;
	}
	/* A code object of an older launch protocol (a second launch summed
	 * split-K's slices; no rk_pack) would compute wrong results here:
	 * refused, so that the caller compiles the configuration again. */
	if (isz < sizeof(iv) || iv[7] != BACKEND_PROTOCOL ||
	    a->cuModuleGetFunction(&m->pack, m->mod, "rk_pack") != 0) {
		snprintf(log, loglen, "the code object is of an older launch protocol than %d",
		         BACKEND_PROTOCOL);
		r = ROCMD_EINVAL;
		goto fail;
	}
	m->threads = iv[0];
	m->smem = iv[1];
	m->mt0 = iv[2];
	m->mt1 = iv[3];
	m->sk = iv[4];
	m->du = iv[5];
	m->chunks = iv[6];
	m->gsu = gsu > 0 ? gsu : 1;
	/* Static shared memory (stream-K's flag, for one) counts against the same
	 * limits as the dynamic stages: past 48 KiB together, the kernel opts in. */
	if (a->cuFuncGetAttribute(&sstatic, CU_FUNC_SHARED_SIZE, m->gemm) != 0 || sstatic < 0)
		sstatic = 0;
	if (m->smem + (unsigned)sstatic > (unsigned)ctx->smem_optin) {
		snprintf(log, loglen, "needs %u bytes of shared memory, the device has %d",
		         m->smem + (unsigned)sstatic, ctx->smem_optin);
		r = ROCMD_EINVAL;
		goto fail;
	}
	if (m->smem + (unsigned)sstatic > 48 * 1024 &&
	    (r = a->cuFuncSetAttribute(m->gemm, CU_FUNC_MAX_DYN_SHARED, (int)m->smem)) != 0) {
		r = cu_fail(ctx, r, "cuFuncSetAttribute", log, loglen);
		goto fail;
	}
	/* Stream-K's grid: as many blocks as the device holds at once (1 per SM if unknown). */
	if (a->cuOccupancyMaxActiveBlocksPerMultiprocessor == NULL ||
	    a->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, m->gemm, (int)m->threads,
	                                                   m->smem) != 0 ||
	    per_sm < 1)
		per_sm = 1;
	m->resident = per_sm * (ctx->info.compute_units > 0 ? ctx->info.compute_units : 1);
	*out = m;
	return 0;
fail:
	if (m->mod != NULL)
		a->cuModuleUnload(m->mod);
	free(m);
	return r;
}

static int
cuda_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
             int ndefines, struct backend_module **out, char *log, size_t loglen)
{
	char *cubin = NULL;
	size_t n = 0;
	int r;

	*out = NULL;
	r = backend_cuda_nvrtc(ctx, src, len, defines, ndefines, &cubin, &n, log, loglen);
	if (r < 0)
		return r;
	r = backend_cuda_load(ctx, cubin, defines_gsu(defines, ndefines), out, log, loglen);
	free(cubin);
	return r;
}

static void
cuda_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	if (mod == NULL)
		return;
	ctx->api.cuModuleUnload(mod->mod);
	free(mod);
}

static int
cuda_kernel_info(struct backend_ctx *ctx, struct backend_module *mod,
                 struct backend_kernel_info *out)
{
	struct cuda_api *a = &ctx->api;
	int regs = -1, shared = 0, local = -1, maxt = -1;

	a->cuFuncGetAttribute(&regs, CU_FUNC_NUM_REGS, mod->gemm);
	a->cuFuncGetAttribute(&shared, CU_FUNC_SHARED_SIZE, mod->gemm);
	a->cuFuncGetAttribute(&local, CU_FUNC_LOCAL_SIZE, mod->gemm);
	a->cuFuncGetAttribute(&maxt, CU_FUNC_MAX_THREADS, mod->gemm);
	out->regs_per_thread = regs;
	out->sgprs = -1;
	out->shared_mem = (int64_t)shared + mod->smem;
	out->spill_bytes = local;
	out->max_threads_per_block = maxt;
	return 0;
}

/* ----------------------------------------------------------- memory, run */

static int
cuda_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr)
{
	CUdeviceptr p = 0;
	int r;

	*dptr = 0;
	if ((r = ctx->api.cuMemAlloc(&p, bytes ? bytes : 1)) != 0)
		return r == 2 ? ROCMD_ENOMEM : ROCMD_EIO;
	*dptr = p;
	return 0;
}

static void
cuda_free(struct backend_ctx *ctx, uint64_t dptr)
{
	if (dptr != 0)
		ctx->api.cuMemFree(dptr);
}

static int
cuda_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes)
{
	return ctx->api.cuMemcpyHtoD(dst, src, bytes) ? ROCMD_EIO : 0;
}

static int
cuda_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes)
{
	return ctx->api.cuMemcpyDtoH(dst, src, bytes) ? ROCMD_EIO : 0;
}

static int
cuda_launch(struct backend_ctx *ctx, struct backend_module *mod, const char *kernel,
            const struct backend_launch *l)
{
	CUfunction f = !strcmp(kernel, "rk_pack") ? mod->pack : mod->gemm;

	if (ctx->api.cuLaunchKernel(f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
	                            l->block[2], l->shared_mem, NULL, l->args, NULL) != 0)
		return ROCMD_EIO;
	return 0;
}

/* A workspace of the context (*WS, *BYTES) of at least NEED bytes: the one
 * there, else a new one in its place (cuMemFree waits for the work that used
 * the old one). */
static int
grow(struct backend_ctx *ctx, CUdeviceptr *ws, size_t *bytes, size_t need)
{
	if (need <= *bytes)
		return 0;
	if (*ws != 0)
		ctx->api.cuMemFree(*ws);
	*ws = 0;
	*bytes = 0;
	if (ctx->api.cuMemAlloc(ws, need) != 0)
		return ROCMD_ENOMEM;
	*bytes = need;
	return 0;
}

/* Whether a chunked kernel reads an operand at X (leading dimension LD,
 * stride S) as it is: 16-byte aligned, LD and S in multiples of 8. */
static int
operand_ok(CUdeviceptr x, long long ld, long long s, int64_t batch)
{
	return (x & 15) == 0 && ld % 8 == 0 && (batch == 1 || s % 8 == 0);
}

/* rk_pack of the ROWS x COLS x BATCH operand at *X (leading dimension *LD,
 * stride *S) into DST; *X, *LD and *S then name the copy. */
static int
pack_operand(struct backend_ctx *ctx, struct backend_module *mod, CUdeviceptr dst, int64_t rows,
             int64_t cols, int64_t batch, CUdeviceptr *x, long long *ld, long long *s)
{
	int R = (int)rows, C = (int)cols;
	long long ldd = (rows + 7) / 8 * 8, sd = ldd * cols;
	uint64_t blocks = ((uint64_t)ldd * (uint64_t)cols + 255) / 256;
	void *args[8] = {&R, &C, x, ld, s, &dst, &ldd, &sd};
	struct backend_launch l;
	int r;

	memset(&l, 0, sizeof(l));
	l.grid[0] = blocks < 4096 ? (unsigned)blocks : 4096; /* the kernel strides */
	l.grid[1] = 1;
	l.grid[2] = (unsigned)batch;
	l.block[0] = 256;
	l.block[1] = l.block[2] = 1;
	l.args = args;
	l.nargs = 8;
	if ((r = cuda_launch(ctx, mod, "rk_pack", &l)) < 0)
		return r;
	*x = dst;
	*ld = ldd;
	*s = sd;
	return 0;
}

/* The chunked paths' operands that cannot be read as they are, repacked into
 * the context's workspace (grown when too small; reused by the next call,
 * which the stream orders after this one). */
static int
repack(struct backend_ctx *ctx, struct backend_module *mod, const struct gemm_problem *p,
       CUdeviceptr *A, long long *lda, long long *sa, CUdeviceptr *B, long long *ldb,
       long long *sb)
{
	int pa = !operand_ok(*A, *lda, *sa, p->batch), pb = !operand_ok(*B, *ldb, *sb, p->batch);
	size_t bytes_a = pa ? (size_t)((gemm_rows_a(p) + 7) / 8 * 8) * gemm_cols_a(p) * p->batch * 2 : 0;
	size_t off_b = (bytes_a + 255) / 256 * 256;
	size_t need = off_b + (pb ? (size_t)((gemm_rows_b(p) + 7) / 8 * 8) * gemm_cols_b(p) *
	                                p->batch * 2
	                          : 0);
	int r;

	if ((!pa && !pb) || p->k == 0)
		return 0;
	if ((r = grow(ctx, &ctx->pk, &ctx->pk_bytes, need)) < 0)
		return r;
	if (pa && (r = pack_operand(ctx, mod, ctx->pk, gemm_rows_a(p), gemm_cols_a(p), p->batch, A,
	                            lda, sa)) < 0)
		return r;
	if (pb && (r = pack_operand(ctx, mod, ctx->pk + off_b, gemm_rows_b(p), gemm_cols_b(p),
	                            p->batch, B, ldb, sb)) < 0)
		return r;
	return 0;
}

static int
cuda_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
          const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	int M = (int)p->m, N = (int)p->n, K = (int)p->k;
	float alpha = p->alpha, beta = p->beta;
	long long lda = p->lda, ldb = p->ldb, ldc = p->ldc;
	long long sa = p->stride_a, sb = p->stride_b, sc = p->stride_c;
	CUdeviceptr A = bufs->a, B = bufs->b, C = bufs->c, W = 0;
	uint64_t tiles =
	    (uint64_t)((M + mod->mt0 - 1) / mod->mt0) * ((N + mod->mt1 - 1) / mod->mt1);
	struct backend_launch l;
	void *args[15] = {&M,   &N,  &K,    &alpha, &A,   &lda, &sa, &B,
	                  &ldb, &sb, &beta, &C,     &ldc, &sc,  &W};
	int r;

	(void)cfg;
	if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX || tiles > INT32_MAX ||
	    p->batch * mod->gsu > 65535)
		return ROCMD_EINVAL;
	if (M == 0 || N == 0)
		return 0;
	if (mod->chunks && (r = repack(ctx, mod, p, &A, &lda, &sa, &B, &ldb, &sb)) < 0)
		return r;
	memset(&l, 0, sizeof(l));
	if (mod->gsu > 1) {
		if ((r = backend_gsu_prepare(&backend_cuda_ops, ctx, &ctx->skws, &ctx->skws_bytes,
		                             p, tiles, mod->gsu, mod->mt0, mod->mt1)) < 0)
			return r;
		W = (CUdeviceptr)ctx->skws;
	}
	l.grid[0] = (unsigned)tiles;
	l.grid[1] = 1;
	l.grid[2] = (unsigned)(p->batch * mod->gsu);
	l.block[0] = mod->threads;
	l.block[1] = l.block[2] = 1;
	l.shared_mem = mod->smem;
	l.args = args;
	l.nargs = 15;
	if (mod->sk) {
		if ((r = backend_sk_prepare(&backend_cuda_ops, ctx, &ctx->skws, &ctx->skws_bytes, p,
		                            tiles, mod->mt0, mod->mt1, (int)mod->du, mod->resident,
		                            &l.grid[0])) < 0)
			return r;
		W = (CUdeviceptr)ctx->skws;
	}
	return cuda_launch(ctx, mod, "rk_gemm", &l);
}

static int
cuda_event_create(struct backend_ctx *ctx, struct backend_event **out)
{
	struct backend_event *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (e == NULL)
		return ROCMD_ENOMEM;
	if (ctx->api.cuEventCreate(&e->ev, 0) != 0) {
		free(e);
		return ROCMD_EIO;
	}
	*out = e;
	return 0;
}

static void
cuda_event_destroy(struct backend_ctx *ctx, struct backend_event *ev)
{
	if (ev == NULL)
		return;
	ctx->api.cuEventDestroy(ev->ev);
	free(ev);
}

static int
cuda_event_record(struct backend_ctx *ctx, struct backend_event *ev)
{
	return ctx->api.cuEventRecord(ev->ev, NULL) ? ROCMD_EIO : 0;
}

static int
cuda_event_elapsed(struct backend_ctx *ctx, struct backend_event *start, struct backend_event *end,
                   double *ms)
{
	float f = 0;

	*ms = 0;
	if (ctx->api.cuEventSynchronize(end->ev) != 0 ||
	    ctx->api.cuEventElapsedTime(&f, start->ev, end->ev) != 0)
		return ROCMD_EIO;
	*ms = f;
	return 0;
}

static int
cuda_synchronize(struct backend_ctx *ctx)
{
	return ctx->api.cuCtxSynchronize() ? ROCMD_EIO : 0;
}

const struct backend_ops backend_cuda_ops = {
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .space = cuda_space,
    .kernel_source = cuda_kernel_source,
    .compile = cuda_compile,
    .module_unload = cuda_module_unload,
    .kernel_info = cuda_kernel_info,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_h2d = cuda_copy_h2d,
    .copy_d2h = cuda_copy_d2h,
    .launch = cuda_launch,
    .gemm = cuda_gemm,
    .gemm_reference = NULL,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed = cuda_event_elapsed,
    .synchronize = cuda_synchronize,
};
