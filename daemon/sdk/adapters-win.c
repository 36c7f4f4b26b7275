/*
 * The display adapters as DXGI lists them, for rocmd-hip-probe --adapters
 * (hip-probe.c) on a Windows machine with no HIP runtime at all: one line per
 * adapter, "adapter VENDOR DEVICE DEDICATED SHARED\tNAME" (PCI ids in hex,
 * memory in bytes), or "error ..." when DXGI answers nothing. dxgi.dll is
 * loaded at run time: the probe links nothing it may not find.
 */
#define COBJMACROS
#include "adapters.h"

#include <stdio.h>

#include <windows.h>
#include <dxgi.h>

typedef HRESULT(WINAPI *factory_fn)(REFIID, void **);

int
rocmd_probe_adapters(void)
{
	HMODULE dxgi = LoadLibraryExW(L"dxgi.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
	factory_fn create;
	IDXGIFactory1 *f = NULL;
	IDXGIAdapter1 *a;
	HRESULT hr;
	int n = 0;

	if (dxgi == NULL) {
		printf("error dxgi.dll cannot be loaded (%lu)\n", (unsigned long)GetLastError());
		return 1;
	}
	create = (factory_fn)(void (*)(void))GetProcAddress(dxgi, "CreateDXGIFactory1");
	if (create == NULL || FAILED(hr = create(&IID_IDXGIFactory1, (void **)&f))) {
		printf("error DXGI lists no adapters here (CreateDXGIFactory1: 0x%08lx)\n",
		       create == NULL ? 0ul : (unsigned long)hr);
		return 1;
	}
	for (UINT i = 0; IDXGIFactory1_EnumAdapters1(f, i, &a) != DXGI_ERROR_NOT_FOUND; i++) {
		DXGI_ADAPTER_DESC1 d;
		char name[256];

		if (SUCCEEDED(IDXGIAdapter1_GetDesc1(a, &d)) && !(d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) &&
		    WideCharToMultiByte(CP_UTF8, 0, d.Description, -1, name, sizeof(name), NULL,
		                        NULL) > 0) {
			printf("adapter %04x %04x %llu %llu\t%s\n", d.VendorId, d.DeviceId,
			       (unsigned long long)d.DedicatedVideoMemory,
			       (unsigned long long)d.SharedSystemMemory, name);
			n++;
		}
		IDXGIAdapter1_Release(a);
	}
	IDXGIFactory1_Release(f);
	printf("adapters %d\n", n);
	fflush(stdout);
	return 0;
}
