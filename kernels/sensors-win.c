/*
 * The sensors (sensors.h) on Windows, from what Windows itself offers (no
 * vendor SDK): the device is the INDEX-th hardware adapter of the backend's
 * vendor that DXGI lists (AMD 0x1002 for hip, rocblas, hipblaslt; NVIDIA
 * 0x10de for cuda, cublaslt), its driver the user-mode driver version DXGI
 * reports, and the memory in use on it PDH's "\GPU Adapter Memory(luid_..._
 * phys_0)\Dedicated Usage" counter of that adapter's LUID (the counters Task
 * Manager shows, Windows 10 1709 on). dxgi.dll and pdh.dll are loaded at run
 * time from System32; without them, the adapter or the counter, every figure
 * is "not reported" and SOURCE says why. Power, energy and clocks are never
 * reported here: only a vendor SDK (ADLX, NVML) reads them, and none is read.
 */
#include "kernels/sensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define COBJMACROS
#include <windows.h>
#include <dxgi.h>
#include <pdh.h>

#include "common/error.h"

typedef PDH_STATUS(WINAPI *pdh_open_fn)(LPCWSTR, DWORD_PTR, PDH_HQUERY *);
typedef PDH_STATUS(WINAPI *pdh_add_fn)(PDH_HQUERY, LPCWSTR, DWORD_PTR, PDH_HCOUNTER *);
typedef PDH_STATUS(WINAPI *pdh_collect_fn)(PDH_HQUERY);
typedef PDH_STATUS(WINAPI *pdh_value_fn)(PDH_HCOUNTER, DWORD, LPDWORD, PPDH_FMT_COUNTERVALUE);
typedef PDH_STATUS(WINAPI *pdh_close_fn)(PDH_HQUERY);
typedef HRESULT(WINAPI *dxgi_factory_fn)(REFIID, void **);

/* IIDs of dxgi.h, here so that nothing is linked for them. */
static const GUID iid_factory1 = {
    0x770aae78, 0xf26f, 0x4dba, {0xa8, 0x29, 0x25, 0x3c, 0x83, 0xd1, 0xb3, 0x87}};
static const GUID iid_device = {
    0x54ec77fa, 0x1377, 0x44e6, {0x8c, 0x32, 0x88, 0xfd, 0x5f, 0x44, 0xc8, 0x4c}};

struct sensors {
	HMODULE pdh;
	PDH_HQUERY query;
	PDH_HCOUNTER mem; /* NULL: not reported */
	pdh_collect_fn collect;
	pdh_value_fn value;
	pdh_close_fn close;
	char driver[64]; /* "": not reported */
};

static HMODULE
system_dll(const wchar_t *name)
{
	return LoadLibraryExW(name, NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
}

/* The INDEX-th hardware adapter of VENDOR: 0 with its LUID, name and driver
 * version, or an error with WHY. */
static int
find_adapter(unsigned vendor, int index, LUID *luid, char *name, size_t namelen, char *driver,
             size_t drvlen, char *why, size_t whylen)
{
	HMODULE dxgi = system_dll(L"dxgi.dll");
	dxgi_factory_fn create;
	IDXGIFactory1 *f = NULL;
	IDXGIAdapter1 *a;
	int seen = 0, rc = ROCMD_ENOTFOUND;

	create = dxgi ? (dxgi_factory_fn)(void (*)(void))GetProcAddress(dxgi, "CreateDXGIFactory1")
	              : NULL;
	if (create == NULL || FAILED(create(&iid_factory1, (void **)&f))) {
		snprintf(why, whylen, "DXGI lists no adapters here (dxgi.dll%s)",
		         dxgi ? ": CreateDXGIFactory1 failed" : " not loaded");
		if (dxgi)
			FreeLibrary(dxgi);
		return ROCMD_EUNSUPPORTED;
	}
	for (UINT i = 0; rc < 0 && IDXGIFactory1_EnumAdapters1(f, i, &a) == S_OK; i++) {
		DXGI_ADAPTER_DESC1 d;
		LARGE_INTEGER umd;

		if (SUCCEEDED(IDXGIAdapter1_GetDesc1(a, &d)) && d.VendorId == vendor &&
		    !(d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) && seen++ == index) {
			*luid = d.AdapterLuid;
			WideCharToMultiByte(CP_UTF8, 0, d.Description, -1, name, (int)namelen, NULL,
			                    NULL);
			if (SUCCEEDED(IDXGIAdapter1_CheckInterfaceSupport(a, &iid_device, &umd)))
				snprintf(
				    driver, drvlen, "%s %u.%u.%u.%u",
				    vendor == 0x1002 ? "AMD" : "NVIDIA",
				    (unsigned)HIWORD(umd.HighPart), (unsigned)LOWORD(umd.HighPart),
				    (unsigned)HIWORD(umd.LowPart), (unsigned)LOWORD(umd.LowPart));
			rc = 0;
		}
		IDXGIAdapter1_Release(a);
	}
	IDXGIFactory1_Release(f);
	FreeLibrary(dxgi);
	if (rc < 0)
		snprintf(why, whylen, "DXGI lists %d %s adapter%s, not device %d", seen,
		         vendor == 0x1002 ? "AMD" : "NVIDIA", seen == 1 ? "" : "s", index);
	return rc;
}

/* PDH's dedicated-memory counter of the adapter LUID: 0, or an error with WHY. */
static int
open_counter(struct sensors *s, LUID luid, char *why, size_t whylen)
{
	pdh_open_fn open;
	pdh_add_fn add;
	PDH_FMT_COUNTERVALUE v;
	wchar_t path[160];
	PDH_STATUS st;

	if ((s->pdh = system_dll(L"pdh.dll")) == NULL) {
		snprintf(why, whylen, "pdh.dll not loaded");
		return ROCMD_EUNSUPPORTED;
	}
	open = (pdh_open_fn)(void (*)(void))GetProcAddress(s->pdh, "PdhOpenQueryW");
	add = (pdh_add_fn)(void (*)(void))GetProcAddress(s->pdh, "PdhAddEnglishCounterW");
	s->collect = (pdh_collect_fn)(void (*)(void))GetProcAddress(s->pdh, "PdhCollectQueryData");
	s->value =
	    (pdh_value_fn)(void (*)(void))GetProcAddress(s->pdh, "PdhGetFormattedCounterValue");
	s->close = (pdh_close_fn)(void (*)(void))GetProcAddress(s->pdh, "PdhCloseQuery");
	if (!open || !add || !s->collect || !s->value || !s->close) {
		snprintf(why, whylen, "pdh.dll lacks PdhAddEnglishCounterW");
		return ROCMD_EUNSUPPORTED;
	}
	swprintf(path, 160, L"\\GPU Adapter Memory(luid_0x%08lX_0x%08lX_phys_0)\\Dedicated Usage",
	         (unsigned long)luid.HighPart, (unsigned long)luid.LowPart);
	if ((st = open(NULL, 0, &s->query)) != ERROR_SUCCESS) {
		snprintf(why, whylen, "PdhOpenQuery failed (0x%08lx)", (unsigned long)st);
		return ROCMD_EUNSUPPORTED;
	}
	if ((st = add(s->query, path, 0, &s->mem)) != ERROR_SUCCESS ||
	    (st = s->collect(s->query)) != ERROR_SUCCESS ||
	    (st = s->value(s->mem, PDH_FMT_LARGE, NULL, &v)) != ERROR_SUCCESS) {
		snprintf(why, whylen,
		         "no PDH counter \\GPU Adapter Memory(luid_0x%08lX_0x%08lX_phys_0)\\"
		         "Dedicated Usage (0x%08lx)",
		         (unsigned long)luid.HighPart, (unsigned long)luid.LowPart,
		         (unsigned long)st);
		s->mem = NULL;
		return ROCMD_EUNSUPPORTED;
	}
	return 0;
}

int
sensors_open(const char *backend, int index, const char *sysroot, struct sensors **out,
             char *source, size_t sourcelen)
{
	struct sensors *s = calloc(1, sizeof(*s));
	unsigned vendor = 0;
	char name[128] = "", why[256] = "";
	LUID luid;

	(void)sysroot;
	*out = s;
	if (s == NULL)
		return ROCMD_ENOMEM;
	if (backend != NULL && (!strcmp(backend, "hip") || !strcmp(backend, "rocblas") ||
	                        !strcmp(backend, "hipblaslt")))
		vendor = 0x1002;
	else if (backend != NULL && (!strcmp(backend, "cuda") || !strcmp(backend, "cublaslt")))
		vendor = 0x10de;
	if (vendor == 0) {
		snprintf(source, sourcelen, "none: backend %s has no GPU sensors",
		         backend != NULL ? backend : "(none)");
		return 0;
	}
	if (find_adapter(vendor, index, &luid, name, sizeof(name), s->driver, sizeof(s->driver),
	                 why, sizeof(why)) < 0) {
		snprintf(source, sourcelen,
		         "none: %s; power and energy are not read (no ADLX or NVML on Windows)",
		         why);
		return 0;
	}
	if (open_counter(s, luid, why, sizeof(why)) < 0)
		snprintf(
		    source, sourcelen,
		    "DXGI adapter %s: memory in use not reported (%s); power and energy are not "
		    "read (no ADLX or NVML on Windows)",
		    name, why);
	else
		snprintf(
		    source, sourcelen,
		    "PDH GPU Adapter Memory of %s; power and energy are not read (no ADLX or NVML "
		    "on Windows)",
		    name);
	return 0;
}

int
sensors_power_w(struct sensors *s, double *w)
{
	(void)s, (void)w;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_energy_j(struct sensors *s, double *j)
{
	(void)s, (void)j;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_mem_used(struct sensors *s, int64_t *bytes)
{
	PDH_FMT_COUNTERVALUE v;

	if (s == NULL || s->mem == NULL || s->collect(s->query) != ERROR_SUCCESS ||
	    s->value(s->mem, PDH_FMT_LARGE, NULL, &v) != ERROR_SUCCESS || v.largeValue < 0)
		return ROCMD_EUNSUPPORTED;
	*bytes = (int64_t)v.largeValue;
	return 0;
}

int
sensors_clocks(struct sensors *s, char *out, size_t len)
{
	(void)s, (void)out, (void)len;
	return ROCMD_EUNSUPPORTED;
}

int
sensors_driver(struct sensors *s, char *out, size_t len)
{
	if (s == NULL || s->driver[0] == '\0')
		return ROCMD_EUNSUPPORTED;
	snprintf(out, len, "%s", s->driver);
	return 0;
}

void
sensors_close(struct sensors *s)
{
	if (s == NULL)
		return;
	if (s->query != NULL)
		s->close(s->query);
	if (s->pdh != NULL)
		FreeLibrary(s->pdh);
	free(s);
}
