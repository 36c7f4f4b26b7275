/*
 * The CPU backend's view of the machine on Windows (see cpu-info.h): the
 * processor count of this process's affinity mask, the cache sizes from
 * GetLogicalProcessorInformation, the processor's name from the registry
 * (HARDWARE\DESCRIPTION\System\CentralProcessor\0) and the Windows version
 * from RtlGetVersion (GetVersionEx lies to programs without a manifest).
 */
#include "kernels/cpu-info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

static void
cpu_model_name(char *buf, size_t len)
{
	wchar_t name[128];
	DWORD size = sizeof(name);
	HKEY key;

	snprintf(buf, len, "cpu");
	if (RegOpenKeyExW(HKEY_LOCAL_MACHINE, L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0",
	                  0, KEY_READ, &key) != ERROR_SUCCESS)
		return;
	if (RegQueryValueExW(key, L"ProcessorNameString", NULL, NULL, (BYTE *)name, &size) ==
	        ERROR_SUCCESS &&
	    size >= sizeof(wchar_t)) {
		char *s;

		name[sizeof(name) / sizeof(name[0]) - 1] = L'\0';
		name[size / sizeof(wchar_t) < 128 ? size / sizeof(wchar_t) : 127] = L'\0';
		if (WideCharToMultiByte(CP_UTF8, 0, name, -1, buf, (int)len, NULL, NULL) <= 0)
			snprintf(buf, len, "cpu");
		for (s = buf; *s == ' '; s++)
			;
		memmove(buf, s, strlen(s) + 1);
	}
	RegCloseKey(key);
}

static void
caches(struct backend_device_info *info)
{
	SYSTEM_LOGICAL_PROCESSOR_INFORMATION *v = NULL;
	DWORD len = 0, i;

	GetLogicalProcessorInformation(NULL, &len);
	if (len == 0 || (v = malloc(len)) == NULL)
		return;
	if (GetLogicalProcessorInformation(v, &len)) {
		for (i = 0; i < len / sizeof(*v); i++) {
			const CACHE_DESCRIPTOR *c = &v[i].Cache;

			if (v[i].Relationship != RelationCache)
				continue;
			if (c->Level == 1 && (c->Type == CacheData || c->Type == CacheUnified))
				info->shared_mem_per_cu = c->Size;
			else if (c->Level == 2)
				info->shared_mem_per_block = c->Size;
			else if (c->Level == 3 && (int64_t)c->Size > info->llc_bytes)
				info->llc_bytes = c->Size;
		}
	}
	free(v);
}

static void
windows_version(char *buf, size_t len)
{
	typedef LONG(WINAPI * rtl_get_version_fn)(OSVERSIONINFOW *);
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	rtl_get_version_fn get = NULL;
	OSVERSIONINFOW v;

	snprintf(buf, len, "windows");
	if (ntdll != NULL)
		get = (rtl_get_version_fn)(void (*)(void))GetProcAddress(ntdll, "RtlGetVersion");
	memset(&v, 0, sizeof(v));
	v.dwOSVersionInfoSize = sizeof(v);
	if (get != NULL && get(&v) == 0)
		snprintf(buf, len, "windows %lu.%lu.%lu", (unsigned long)v.dwMajorVersion,
		         (unsigned long)v.dwMinorVersion, (unsigned long)v.dwBuildNumber);
}

void
cpu_info_fill(struct backend_device_info *info)
{
	SYSTEM_INFO si;
	MEMORYSTATUSEX ms;
	DWORD_PTR proc_mask = 0, sys_mask = 0;
	int ncpu = 0;

	cpu_model_name(info->name, sizeof(info->name));
	GetNativeSystemInfo(&si);
	if (GetProcessAffinityMask(GetCurrentProcess(), &proc_mask, &sys_mask))
		for (; proc_mask != 0; proc_mask &= proc_mask - 1)
			ncpu++;
	if (ncpu < 1)
		ncpu = (int)si.dwNumberOfProcessors;
	info->compute_units = ncpu < 1 ? 1 : ncpu;
	snprintf(info->arch, sizeof(info->arch), "%s",
	         si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_AMD64   ? "x86_64"
	         : si.wProcessorArchitecture == PROCESSOR_ARCHITECTURE_ARM64 ? "aarch64"
	                                                                     : "unknown");
	windows_version(info->driver_version, sizeof(info->driver_version));
	info->shared_mem_per_block = 512 * 1024;
	info->shared_mem_per_cu = 32 * 1024;
	caches(info);
	memset(&ms, 0, sizeof(ms));
	ms.dwLength = sizeof(ms);
	if (GlobalMemoryStatusEx(&ms))
		info->global_mem = (int64_t)ms.ullTotalPhys;
}
