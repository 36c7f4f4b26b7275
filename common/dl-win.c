/*
 * Loading a DLL with LoadLibraryExW: see dl.h. LOAD_WITH_ALTERED_SEARCH_PATH
 * makes Windows look for the DLL's dependencies in its own folder first (an
 * SDK's bin\ holds amdhip64_6.dll and what it loads), not in rocmd's; it
 * applies only to a path with a folder. A bare name is looked for in rocmd's
 * own folder and System32 only, never along PATH or in the current folder:
 * the service would otherwise load whatever DLL of that name a user put in a
 * folder of PATH they can write to.
 */
#include "dl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <shellapi.h>

#include "win-util.h"

void *
rocmd_dl_open(const char *path, char *why, size_t whylen)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
	wchar_t *w;
	HMODULE h = NULL;
	DWORD err;
	char msg[512] = "";

	if (n <= 0) {
		snprintf(why, whylen, "%s: not a UTF-8 path", path);
		return NULL;
	}
	w = malloc((size_t)n * sizeof(*w));
	if (w == NULL) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	MultiByteToWideChar(CP_UTF8, 0, path, -1, w, n);
	/* The own-folder search wants backslashes. */
	for (wchar_t *c = w; *c != L'\0'; c++)
		if (*c == L'/')
			*c = L'\\';
	/* No "cannot find a DLL" dialog box from the loader, and no error
	 * reporting or debugger when the runtime crashes: the process just ends
	 * with the exception code, for gpu-hip.c to report. */
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX | SEM_NOGPFAULTERRORBOX);
	h = LoadLibraryExW(w, NULL,
	                   strpbrk(path, "\\/") != NULL
	                       ? LOAD_WITH_ALTERED_SEARCH_PATH
	                       : LOAD_LIBRARY_SEARCH_APPLICATION_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32);
	err = GetLastError();
	free(w);
	if (h == NULL) {
		FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
		               err, 0, msg, sizeof(msg), NULL);
		msg[strcspn(msg, "\r\n")] = '\0';
		snprintf(why, whylen, "%s: %s (error %lu)", path, msg[0] ? msg : "cannot load",
		         (unsigned long)err);
	}
	return (void *)h;
}

void *
rocmd_dl_sym(void *h, const char *name)
{
	return (void *)GetProcAddress((HMODULE)h, name);
}

void
rocmd_dl_close(void *h)
{
	if (h != NULL)
		FreeLibrary((HMODULE)h);
}

void
rocmd_dl_path(void *h, char *out, size_t len)
{
	wchar_t w[MAX_PATH + 1];
	DWORD n = h != NULL ? GetModuleFileNameW((HMODULE)h, w, MAX_PATH + 1) : 0;
	char *u8;

	if (len == 0)
		return;
	out[0] = '\0';
	if (n == 0 || n > MAX_PATH || (u8 = rocmd_win_utf8(w)) == NULL)
		return;
	snprintf(out, len, "%s", u8);
	free(u8);
}

int
rocmd_dl_system_dir(char *out, size_t len)
{
	wchar_t w[MAX_PATH];
	UINT n = GetSystemDirectoryW(w, MAX_PATH);
	char *u8;
	int r = -1;

	if (len > 0)
		out[0] = '\0';
	if (n == 0 || n >= MAX_PATH || (u8 = rocmd_win_utf8(w)) == NULL)
		return -1;
	if ((size_t)snprintf(out, len, "%s", u8) < len)
		r = 0;
	else if (len > 0)
		out[0] = '\0';
	free(u8);
	return r;
}

const char *
rocmd_dl_arg(char **argv, int i)
{
	int n = 0, len;
	wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
	char *u8 = NULL;

	if (wargv == NULL || i >= n) {
		if (wargv != NULL)
			LocalFree(wargv);
		return argv[i];
	}
	len = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
	if (len > 0 && (u8 = malloc((size_t)len)) != NULL)
		WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, u8, len, NULL, NULL);
	LocalFree(wargv);
	/* Kept for the probe's short life. */
	return u8 != NULL ? u8 : argv[i];
}
