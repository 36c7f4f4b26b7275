/*
 * The HIP backend: runs kernels/gpu/gemm.cu on an AMD GPU through the HIP
 * runtime of the SDK rocmd manages. The runtime and hiprtc are loaded at run
 * time (common/dl.h), never linked, so a machine without ROCm gets "not
 * available: <reason>". Where they are looked for (backend_hip_dirs): on
 * Linux libamdhip64.so* and libhiprtc.so* in $ROCMD_HIP_PATH/lib,
 * /opt/rocm/lib, then the loader's path; on Windows amdhip64_7.dll /
 * amdhip64_6.dll and an SDK's hiprtc07xx/06xx.dll (common/hip-runtime.h) in
 * %ROCMD_HIP_PATH%\bin, %HIP_PATH%\bin (AMD's HIP SDK sets it), then
 * System32, where AMD's display driver puts its runtime.
 *
 * Compilation runs in a child process (backend-hip-rtc.c). The device's gfx
 * arch comes from the KFD topology (Linux), else from the runtime's device
 * properties (Windows has no KFD). The code object's metadata note
 * (amdgpu/codeobj.c) gives the kernel's VGPRs, SGPRs and LDS.
 *
 * Status: the probe, the child-process compile and the launch path are
 * written against the HIP 5.x/6.x C API but have not run on an AMD GPU yet
 * (none is available to the team); the tests cover the probe, the library
 * search (Windows: under wine, with stand-in DLLs) and the compile child's
 * failure handling.
 */
#include "kernels/backend-hip.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hip-runtime.h"
#include "kernels/amdgpu/codeobj.h"
#include "kernels/backend-cuda.h"

typedef int hipError_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef void *hipDeviceptr_t;

struct hip_api {
	void *lib, *rtc;
	hipError_t (*hipInit)(unsigned);
	hipError_t (*hipGetDeviceCount)(int *);
	hipError_t (*hipSetDevice)(int);
	hipError_t (*hipDeviceGetName)(char *, int, int);
	hipError_t (*hipRuntimeGetVersion)(int *);
	hipError_t (*hipDriverGetVersion)(int *);
	hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
	hipError_t (*hipModuleUnload)(hipModule_t);
	hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
	hipError_t (*hipModuleGetGlobal)(hipDeviceptr_t *, size_t *, hipModule_t, const char *);
	hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
	                                    unsigned, unsigned, unsigned, void *, void **, void **);
	hipError_t (*hipMalloc)(void **, size_t);
	hipError_t (*hipFree)(void *);
	hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t, const void *, size_t);
	hipError_t (*hipMemcpyDtoH)(void *, hipDeviceptr_t, size_t);
	hipError_t (*hipEventCreate)(hipEvent_t *);
	hipError_t (*hipEventDestroy)(hipEvent_t);
	hipError_t (*hipEventRecord)(hipEvent_t, void *);
	hipError_t (*hipEventSynchronize)(hipEvent_t);
	hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
	hipError_t (*hipDeviceSynchronize)(void);
	/* optional: stream-K's grid falls back to one block per CU without it */
	hipError_t (*hipModuleOccupancyMaxActiveBlocksPerMultiprocessor)(int *, hipFunction_t, int,
	                                                                 size_t);
};

struct backend_ctx {
	struct hip_api api;
	struct backend_device_info info;
	char rtc_path[512]; /* hiprtc for the child: a file name or the HIP library itself */
	char *source;
	size_t source_len;
	uint64_t skws; /* split-K and stream-K workspace: counters kept at zero, then slots */
	size_t skws_bytes;
	struct space_def spaces[GEMM_DTYPE_COUNT * 4];
	int nspaces;
};

struct backend_module {
	hipModule_t mod;
	hipFunction_t gemm;
	unsigned threads, smem, mt0, mt1;
	int gsu;
	unsigned sk, du; /* stream-K; depth per k-tile */
	int resident;    /* blocks the device holds at once (stream-K's grid) */
	struct codeobj_kernel ki;
	int have_ki;
};

struct backend_event {
	hipEvent_t ev;
};

#ifdef _WIN32
#define SEP "\\"
#else
#define SEP "/"
#endif

int
backend_hip_dirs(char dirs[][BACKEND_HIP_DIR_LEN], int max)
{
#ifdef _WIN32
	const char *env[] = {"ROCMD_HIP_PATH", "HIP_PATH"}, *sub = "bin";
#else
	const char *env[] = {"ROCMD_HIP_PATH"}, *sub = "lib";
#endif
	int n = 0;

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]) && n < max; i++) {
		const char *v = getenv(env[i]);
		size_t len = v != NULL ? strlen(v) : 0;

		if (len == 0 || len + 5 >= BACKEND_HIP_DIR_LEN)
			continue;
		/* HIP_PATH ends in a backslash. */
		snprintf(dirs[n++], BACKEND_HIP_DIR_LEN, "%s%s%s", v,
		         strchr("/\\", v[len - 1]) != NULL ? "" : SEP, sub);
	}
#ifdef _WIN32
	if (n < max && rocmd_dl_system_dir(dirs[n], BACKEND_HIP_DIR_LEN) == 0)
		n++;
#else
	if (n < max)
		snprintf(dirs[n++], BACKEND_HIP_DIR_LEN, "/opt/rocm/lib");
#endif
	return n;
}

void
backend_hip_sdk_dir(char *out, size_t len)
{
	char dirs[1][BACKEND_HIP_DIR_LEN];

	snprintf(out, len, "%s", backend_hip_dirs(dirs, 1) == 1 ? dirs[0] : "");
}

/* Opens the first of NAMES that loads from the folders of backend_hip_dirs
 * (a folder before the next), then, on Linux, as named; PATH gets the file.
 * NULL when none loads, FIRST the loader's first reason. */
static void *
open_lib(const char *const *names, char *path, size_t pathlen, char *first, size_t firstlen)
{
	char dirs[4][BACKEND_HIP_DIR_LEN], buf[BACKEND_HIP_DIR_LEN + 64], why[1024];
	int ndirs = backend_hip_dirs(dirs, 4);
	void *h;

	for (int d = 0; d <= ndirs; d++) {
#ifdef _WIN32
		if (d == ndirs)
			break; /* no search by bare name: the file loaded is one named here */
#endif
		for (int i = 0; names[i] != NULL; i++) {
			if (d < ndirs)
				rocmd_fs_fmt(buf, sizeof(buf), "%s" SEP "%s", dirs[d], names[i]);
			else
				snprintf(buf, sizeof(buf), "%s", names[i]);
			if ((h = rocmd_dl_open(buf, why, sizeof(why))) != NULL) {
				rocmd_dl_path(h, path, pathlen);
				if (path[0] == '\0')
					rocmd_fs_fmt(path, pathlen, "%s", buf);
				return h;
			}
			if (first != NULL && first[0] == '\0')
				rocmd_fs_fmt(first, firstlen, "%s", why);
		}
	}
	return NULL;
}

#ifdef _WIN32
#define HIP_NAMES rocmd_hip_win_runtimes
#define RTC_NAMES rocmd_hip_win_rtcs
#define HIP_WHERE "%ROCMD_HIP_PATH%\\bin, %HIP_PATH%\\bin or System32"
#define HIP_FILES "amdhip64_7.dll, amdhip64_6.dll"
#else
static const char *const hip_names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", NULL};
static const char *const rtc_names[] = {"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6",
                                        "libhiprtc.so.5", NULL};
#define HIP_NAMES hip_names
#define RTC_NAMES rtc_names
#define HIP_WHERE "$ROCMD_HIP_PATH/lib, /opt/rocm/lib or the loader path"
#define HIP_FILES "libamdhip64"
#endif

#define LOAD(field, name) (*(void **)&a->field = rocmd_dl_sym(a->lib, name), missing |= !a->field)

static int
api_load(struct hip_api *a, char *rtc_path, size_t rtclen, char *why, size_t whylen)
{
	char libpath[512] = "", first[512] = "";
	int missing = 0;
	void *rtc;

	memset(a, 0, sizeof(*a));
	a->lib = open_lib(HIP_NAMES, libpath, sizeof(libpath), first, sizeof(first));
	if (a->lib == NULL) {
		snprintf(why, whylen,
		         "not available: no HIP runtime (" HIP_FILES " not found in " HIP_WHERE
		         "%s%.300s)",
		         first[0] ? "; " : "", first);
		return ROCMD_EUNSUPPORTED;
	}
	LOAD(hipInit, "hipInit");
	LOAD(hipGetDeviceCount, "hipGetDeviceCount");
	LOAD(hipSetDevice, "hipSetDevice");
	LOAD(hipDeviceGetName, "hipDeviceGetName");
	LOAD(hipRuntimeGetVersion, "hipRuntimeGetVersion");
	LOAD(hipDriverGetVersion, "hipDriverGetVersion");
	LOAD(hipModuleLoadData, "hipModuleLoadData");
	LOAD(hipModuleUnload, "hipModuleUnload");
	LOAD(hipModuleGetFunction, "hipModuleGetFunction");
	LOAD(hipModuleGetGlobal, "hipModuleGetGlobal");
	LOAD(hipModuleLaunchKernel, "hipModuleLaunchKernel");
	LOAD(hipMalloc, "hipMalloc");
	LOAD(hipFree, "hipFree");
	LOAD(hipMemcpyHtoD, "hipMemcpyHtoD");
	LOAD(hipMemcpyDtoH, "hipMemcpyDtoH");
	LOAD(hipEventCreate, "hipEventCreate");
	LOAD(hipEventDestroy, "hipEventDestroy");
	LOAD(hipEventRecord, "hipEventRecord");
	LOAD(hipEventSynchronize, "hipEventSynchronize");
	LOAD(hipEventElapsedTime, "hipEventElapsedTime");
	LOAD(hipDeviceSynchronize, "hipDeviceSynchronize");
	*(void **)&a->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor =
	    rocmd_dl_sym(a->lib, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor");
	if (missing) {
		snprintf(why, whylen, "not available: %s lacks a needed entry point", libpath);
		return ROCMD_EUNSUPPORTED;
	}
	/* hiprtc: its own library since HIP 5.3; inside libamdhip64 before. Only the
	 * child compiles, so here we only find where it is. */
	rtc = open_lib(RTC_NAMES, rtc_path, rtclen, NULL, 0);
	if (rtc != NULL) {
		rocmd_dl_close(rtc);
	} else if (rocmd_dl_sym(a->lib, "hiprtcCompileProgram") != NULL) {
		snprintf(rtc_path, rtclen, "%s", libpath);
	} else {
#ifdef _WIN32
		snprintf(why, whylen,
		         "not available: no hiprtc (hiprtc0701.dll ... hiprtc0602.dll, an SDK's) in "
		         HIP_WHERE " for %.200s",
		         libpath);
#else
		snprintf(why, whylen, "not available: hiprtc not found next to %s", libpath);
#endif
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

static void
api_unload(struct hip_api *a)
{
	rocmd_dl_close(a->lib);
	memset(a, 0, sizeof(*a));
}

/* The KFD node of GPU INDEX (backend-hip.h). */
int
backend_hip_kfd_arch(const char *sysroot, int index, char *arch, size_t len, int *cus)
{
	char nodes[512];
	DIR *d;

	snprintf(nodes, sizeof(nodes), "%s/sys/class/kfd/kfd/topology/nodes",
	         sysroot != NULL && strcmp(sysroot, "/") != 0 ? sysroot : "");
	d = opendir(nodes);
	struct dirent *e;
	int seen = 0, found = -1;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && found < 0) {
		char path[512], line[256];
		long gtv = 0, simd = 0, per_cu = 1;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%.400s/%.80s/properties", nodes, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			sscanf(line, "gfx_target_version %ld", &gtv);
			sscanf(line, "simd_count %ld", &simd);
			sscanf(line, "simd_per_cu %ld", &per_cu);
		}
		fclose(f);
		if (gtv == 0)
			continue; /* a CPU node */
		if (seen++ != index)
			continue;
		snprintf(arch, len, "gfx%ld%lx%lx", gtv / 10000, (gtv / 100) % 100, gtv % 100);
		*cus = per_cu > 0 ? (int)(simd / per_cu) : 0;
		found = 0;
	}
	closedir(d);
	return found;
}

int
backend_hip_device_arch(void *lib, const char *sysroot, int index, char *arch, size_t len,
                        int *cus, char *why, size_t whylen)
{
	hipError_t (*props)(void *, int);
	hipError_t (*attr)(int *, int, int);
	unsigned char *buf;
	const char *name;

	if (backend_hip_kfd_arch(sysroot, index, arch, len, cus) == 0)
		return 0;
	*(void **)&props = rocmd_dl_sym(lib, "hipGetDevicePropertiesR0600");
	if (props == NULL)
		*(void **)&props = rocmd_dl_sym(lib, "hipGetDeviceProperties");
	*(void **)&attr = rocmd_dl_sym(lib, "hipDeviceGetAttribute");
	if (props == NULL || (buf = calloc(1, ROCMD_HIP_PROPS_BUF)) == NULL) {
		snprintf(why, whylen,
		         "not available: no KFD topology for device %d and no "
		         "hipGetDeviceProperties",
		         index);
		return -1;
	}
	if (props(buf, index) != 0 ||
	    strcmp(name = rocmd_hip_props_arch(buf, ROCMD_HIP_PROPS_BUF), "unknown") == 0) {
		snprintf(why, whylen, "not available: the HIP runtime names no gfx arch for device %d",
		         index);
		free(buf);
		return -1;
	}
	/* "gfx90a:sramecc+:xnack-": the arch is what comes before the features. */
	snprintf(arch, len, "%.*s", (int)strcspn(name, ":"), name);
	free(buf);
	if (attr == NULL || attr(cus, ROCMD_HIP_ATTR_MULTIPROCESSOR_COUNT, index) != 0)
		*cus = 0;
	return 0;
}

int
backend_hip_probe(char *why, size_t whylen)
{
	struct hip_api a;
	char rtc[512];
	int r, n = 0;

	r = api_load(&a, rtc, sizeof(rtc), why, whylen);
	if (r < 0)
		goto out;
	if ((r = a.hipInit(0)) != 0 || a.hipGetDeviceCount(&n) != 0 || n == 0) {
		snprintf(why, whylen, "not available: no AMD GPU (hipInit %d, %d devices)", r, n);
		r = ROCMD_EUNSUPPORTED;
		goto out;
	}
	r = n;
out:
	api_unload(&a);
	return r;
}

static int
hip_open(int index, struct backend_ctx **out, struct backend_device_info *info, char *why,
         size_t whylen)
{
	struct backend_ctx *ctx;
	struct hip_api *a;
	int r, n = 0, v = 0, cus = 0;

	*out = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return ROCMD_ENOMEM;
	a = &ctx->api;
	r = api_load(a, ctx->rtc_path, sizeof(ctx->rtc_path), why, whylen);
	if (r < 0)
		goto fail;
	if ((r = a->hipInit(0)) != 0 || a->hipGetDeviceCount(&n) != 0 || index < 0 || index >= n) {
		snprintf(why, whylen, "not available: no AMD GPU %d (hipInit %d, %d devices)",
		         index, r, n);
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	a->hipSetDevice(index);
	snprintf(ctx->info.backend, sizeof(ctx->info.backend), "hip");
	a->hipDeviceGetName(ctx->info.name, sizeof(ctx->info.name), index);
	if (backend_hip_device_arch(a->lib, NULL, index, ctx->info.arch, sizeof(ctx->info.arch),
	                            &cus, why, whylen) < 0) {
		r = ROCMD_EUNSUPPORTED;
		goto fail;
	}
	ctx->info.compute_units = cus;
	/* wave32 on gfx10+ (the kernel's default there), wave64 before. */
	ctx->info.wave_size =
	    strncmp(ctx->info.arch, "gfx1", 4) == 0 && strlen(ctx->info.arch) >= 7 ? 32 : 64;
	ctx->info.max_threads_per_block = 1024;
	ctx->info.shared_mem_per_block = 64 * 1024;
	ctx->info.shared_mem_per_cu = 64 * 1024;
	ctx->info.matrix_cores = !strncmp(ctx->info.arch, "gfx11", 5);
	a->hipDriverGetVersion(&v);
	snprintf(ctx->info.driver_version, sizeof(ctx->info.driver_version), "HIP driver %d", v);
	a->hipRuntimeGetVersion(&v);
	snprintf(ctx->info.runtime_version, sizeof(ctx->info.runtime_version), "HIP %d.%d.%d",
	         v / 10000000, (v / 100000) % 100, v % 100000);
	snprintf(ctx->info.compiler_version, sizeof(ctx->info.compiler_version), "hiprtc (%.50s)",
	         ctx->info.runtime_version);
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
	api_unload(a);
	free(ctx);
	return r;
}

static void
hip_close(struct backend_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->skws != 0)
		ctx->api.hipFree((void *)(uintptr_t)ctx->skws);
	api_unload(&ctx->api);
	free(ctx->source);
	free(ctx);
}

static const struct space_def *
hip_space(struct backend_ctx *ctx, const struct gemm_problem *p)
{
	struct space_def *s = &ctx->spaces[ctx->nspaces % (GEMM_DTYPE_COUNT * 4)];

	/* The kernel's parameters are the same under HIP; MC selects WMMA on gfx11. */
	ctx->nspaces++;
	backend_cuda_space_dev(s, p, ctx->info.matrix_cores, ctx->info.compute_units, 0);
	snprintf(s->name, sizeof(s->name), "hip");
	return s;
}

static const char *
hip_kernel_source(struct backend_ctx *ctx, size_t *len)
{
	*len = ctx->source_len;
	return ctx->source;
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

static int
hip_compile(struct backend_ctx *ctx, const char *src, size_t len, const char *const *defines,
            int ndefines, struct backend_module **out, char *log, size_t loglen)
{
	struct hip_api *a = &ctx->api;
	struct backend_module *m;
	struct codeobj_info ci;
	hipDeviceptr_t info = NULL;
	size_t isz = 0, codelen = 0;
	char *code = NULL, *text, why[128];
	unsigned iv[8] = {0};
	int r, k, per_sm = 0;

	*out = NULL;
	text = malloc(len + 1);
	if (text == NULL)
		return ROCMD_ENOMEM;
	memcpy(text, src, len);
	text[len] = '\0';
	r = backend_hip_compile_child(ctx->rtc_path, ctx->info.arch, text, defines, ndefines, 120,
	                              &code, &codelen, log, loglen);
	free(text);
	if (r < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		free(code);
		return ROCMD_ENOMEM;
	}
	if (codeobj_parse(code, codelen, &ci, why, sizeof(why)) == 0)
		for (k = 0; k < ci.nkernels; k++)
			if (!strcmp(ci.k[k].name, "rk_gemm")) {
				m->ki = ci.k[k];
				m->have_ki = 1;
			}
	r = a->hipModuleLoadData(&m->mod, code);
	free(code);
	if (r != 0) {
		snprintf(log, loglen, "hipModuleLoadData failed: %d", r);
		free(m);
		return ROCMD_EIO;
	}
	if (a->hipModuleGetFunction(&m->gemm, m->mod, "rk_gemm") != 0 ||
	    a->hipModuleGetGlobal(&info, &isz, m->mod, "rk_gemm_info") != 0 ||
	    a->hipMemcpyDtoH(iv, info, isz < sizeof(iv) ? isz : sizeof(iv)) != 0) {
		snprintf(log, loglen, "kernel lookup failed in the code object");
		a->hipModuleUnload(m->mod);
		free(m);
		return ROCMD_EIO;
	}
	/* Of an older launch protocol (a second launch summed split-K's slices):
	 * its results would be wrong here. */
	if (isz < sizeof(iv) || iv[7] != BACKEND_PROTOCOL) {
		snprintf(log, loglen, "the code object is of an older launch protocol than %d",
		         BACKEND_PROTOCOL);
		a->hipModuleUnload(m->mod);
		free(m);
		return ROCMD_EINVAL;
	}
	m->threads = iv[0];
	m->smem = iv[1];
	m->mt0 = iv[2];
	m->mt1 = iv[3];
	m->sk = iv[4];
	m->du = iv[5];
	m->gsu = defines_gsu(defines, ndefines);
	if (a->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor == NULL ||
	    a->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, m->gemm, (int)m->threads,
	                                                          m->smem) != 0 ||
	    per_sm < 1)
		per_sm = 1;
	m->resident = per_sm * (ctx->info.compute_units > 0 ? ctx->info.compute_units : 1);
	*out = m;
	return 0;
}

static void
hip_module_unload(struct backend_ctx *ctx, struct backend_module *mod)
{
	if (mod == NULL)
		return;
	ctx->api.hipModuleUnload(mod->mod);
	free(mod);
}

static int
hip_kernel_info(struct backend_ctx *ctx, struct backend_module *mod,
                struct backend_kernel_info *out)
{
	out->regs_per_thread = mod->have_ki ? mod->ki.vgpr_count : -1;
	out->sgprs = mod->have_ki ? mod->ki.sgpr_count : -1;
	out->shared_mem = mod->have_ki ? mod->ki.group_segment_fixed_size : -1;
	out->spill_bytes = mod->have_ki ? mod->ki.private_segment_fixed_size : -1;
	out->max_threads_per_block = mod->have_ki ? mod->ki.max_flat_workgroup_size : -1;
	return 0;
}

static int
hip_alloc(struct backend_ctx *ctx, size_t bytes, uint64_t *dptr)
{
	void *p = NULL;

	*dptr = 0;
	if (ctx->api.hipMalloc(&p, bytes ? bytes : 1) != 0)
		return ROCMD_ENOMEM;
	*dptr = (uint64_t)(uintptr_t)p;
	return 0;
}

static void
hip_free(struct backend_ctx *ctx, uint64_t dptr)
{
	if (dptr != 0)
		ctx->api.hipFree((void *)(uintptr_t)dptr);
}

static int
hip_copy_h2d(struct backend_ctx *ctx, uint64_t dst, const void *src, size_t bytes)
{
	return ctx->api.hipMemcpyHtoD((hipDeviceptr_t)(uintptr_t)dst, src, bytes) ? ROCMD_EIO : 0;
}

static int
hip_copy_d2h(struct backend_ctx *ctx, void *dst, uint64_t src, size_t bytes)
{
	return ctx->api.hipMemcpyDtoH(dst, (hipDeviceptr_t)(uintptr_t)src, bytes) ? ROCMD_EIO : 0;
}

static int
hip_launch(struct backend_ctx *ctx, struct backend_module *mod, const char *kernel,
           const struct backend_launch *l)
{
	hipFunction_t f = mod->gemm;

	return ctx->api.hipModuleLaunchKernel(f, l->grid[0], l->grid[1], l->grid[2], l->block[0],
	                                      l->block[1], l->block[2], l->shared_mem, NULL,
	                                      l->args, NULL)
	           ? ROCMD_EIO
	           : 0;
}

static int
hip_gemm(struct backend_ctx *ctx, struct backend_module *mod, const struct tune_config *cfg,
         const struct gemm_problem *p, const struct gemm_bufs *bufs)
{
	int M = (int)p->m, N = (int)p->n, K = (int)p->k;
	float alpha = p->alpha, beta = p->beta;
	long long lda = p->lda, ldb = p->ldb, ldc = p->ldc;
	long long sa = p->stride_a, sb = p->stride_b, sc = p->stride_c;
	void *A = (void *)(uintptr_t)bufs->a, *B = (void *)(uintptr_t)bufs->b;
	void *C = (void *)(uintptr_t)bufs->c, *W = NULL;
	uint64_t tiles =
	    (uint64_t)((M + mod->mt0 - 1) / mod->mt0) * ((N + mod->mt1 - 1) / mod->mt1);
	void *args[15] = {&M,   &N,  &K,    &alpha, &A,   &lda, &sa, &B,
	                  &ldb, &sb, &beta, &C,     &ldc, &sc,  &W};
	struct backend_launch l;
	int r;

	(void)cfg;
	if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX || tiles > INT32_MAX ||
	    p->batch * mod->gsu > 65535)
		return ROCMD_EINVAL;
	if (M == 0 || N == 0)
		return 0;
	if (mod->gsu > 1) {
		if ((r = backend_gsu_prepare(&backend_hip_ops, ctx, &ctx->skws, &ctx->skws_bytes, p,
		                             tiles, mod->gsu, mod->mt0, mod->mt1)) < 0)
			return r;
		W = (void *)(uintptr_t)ctx->skws;
	}
	memset(&l, 0, sizeof(l));
	l.grid[0] = (unsigned)tiles;
	l.grid[1] = 1;
	l.grid[2] = (unsigned)(p->batch * mod->gsu);
	l.block[0] = mod->threads;
	l.block[1] = l.block[2] = 1;
	l.shared_mem = mod->smem;
	l.args = args;
	l.nargs = 15;
	if (mod->sk) {
		if ((r = backend_sk_prepare(&backend_hip_ops, ctx, &ctx->skws, &ctx->skws_bytes, p,
		                            tiles, mod->mt0, mod->mt1, (int)mod->du, mod->resident,
		                            &l.grid[0])) < 0)
			return r;
		W = (void *)(uintptr_t)ctx->skws;
	}
	return hip_launch(ctx, mod, "rk_gemm", &l);
}

static int
hip_event_create(struct backend_ctx *ctx, struct backend_event **out)
{
	struct backend_event *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (e == NULL)
		return ROCMD_ENOMEM;
	if (ctx->api.hipEventCreate(&e->ev) != 0) {
		free(e);
		return ROCMD_EIO;
	}
	*out = e;
	return 0;
}

static void
hip_event_destroy(struct backend_ctx *ctx, struct backend_event *ev)
{
	if (ev == NULL)
		return;
	ctx->api.hipEventDestroy(ev->ev);
	free(ev);
}

static int
hip_event_record(struct backend_ctx *ctx, struct backend_event *ev)
{
	return ctx->api.hipEventRecord(ev->ev, NULL) ? ROCMD_EIO : 0;
}

static int
hip_event_elapsed(struct backend_ctx *ctx, struct backend_event *start, struct backend_event *end,
                  double *ms)
{
	float f = 0;

	*ms = 0;
	if (ctx->api.hipEventSynchronize(end->ev) != 0 ||
	    ctx->api.hipEventElapsedTime(&f, start->ev, end->ev) != 0)
		return ROCMD_EIO;
	*ms = f;
	return 0;
}

static int
hip_synchronize(struct backend_ctx *ctx)
{
	return ctx->api.hipDeviceSynchronize() ? ROCMD_EIO : 0;
}

const struct backend_ops backend_hip_ops = {
    .name = "hip",
    .open = hip_open,
    .close = hip_close,
    .space = hip_space,
    .kernel_source = hip_kernel_source,
    .compile = hip_compile,
    .module_unload = hip_module_unload,
    .kernel_info = hip_kernel_info,
    .alloc = hip_alloc,
    .free = hip_free,
    .copy_h2d = hip_copy_h2d,
    .copy_d2h = hip_copy_d2h,
    .launch = hip_launch,
    .gemm = hip_gemm,
    .gemm_reference = NULL,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_elapsed = hip_event_elapsed,
    .synchronize = hip_synchronize,
};
