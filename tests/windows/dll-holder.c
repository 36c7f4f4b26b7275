/*
 * dll-holder.exe: loads a DLL (an SDK's bin\rocblas.dll) the way an
 * application using rocBLAS does, says so, and keeps it loaded until the file
 * named by its second argument appears (at most 30 minutes). The deploy test
 * (test-wlib-win.sh) runs it to check that a deploy while a process holds
 * rocblas.dll is refused or deferred, as deploy.gpu_busy says, with the
 * process named. Paths come from the wide command line (not the ANSI one).
 *
 * Usage: dll-holder.exe DLL STOP-FILE
 */
#include <stdio.h>
#include <wchar.h>

#include <windows.h>
#include <shellapi.h>

int
main(void)
{
	int argc = 0;
	wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
	HMODULE h;

	if (argv == NULL || argc != 3) {
		fprintf(stderr, "usage: dll-holder.exe DLL STOP-FILE\n");
		return 2;
	}
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
	h = LoadLibraryExW(argv[1], NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
	if (h == NULL) {
		fprintf(stderr, "dll-holder: cannot load %ls: error %lu\n", argv[1],
		        (unsigned long)GetLastError());
		return 1;
	}
	printf("holding %ls (pid %lu)\n", argv[1], (unsigned long)GetCurrentProcessId());
	fflush(stdout);
	for (int i = 0; i < 18000; i++) {
		if (GetFileAttributesW(argv[2]) != INVALID_FILE_ATTRIBUTES)
			break;
		Sleep(100);
	}
	FreeLibrary(h);
	LocalFree(argv);
	return 0;
}
