/*
 * dll-holder.exe: loads a DLL (an SDK's bin\rocblas.dll) the way an
 * application using rocBLAS does, says so, and keeps it loaded until the file
 * named by its second argument appears (at most 30 minutes). The deploy test
 * (test-wlib-win.sh) runs it to check that a deploy while a process holds
 * rocblas.dll is refused or deferred, as deploy.gpu_busy says, with the
 * process named. Paths come from the wide command line (not the ANSI one).
 * With --open it opens a file instead (read, sharing read and write but not
 * delete, as most readers do) until STOP-FILE appears: Windows then refuses to
 * rename the folder holding it, which is how a deploy meets an indexer or a
 * virus scanner.
 *
 * Usage: dll-holder.exe DLL STOP-FILE
 *        dll-holder.exe --open FILE STOP-FILE
 */
#include <stdio.h>
#include <wchar.h>

#include <windows.h>
#include <shellapi.h>

/* Waits until file STOP exists (at most 30 minutes). */
static void
wait_for_stop(const wchar_t *stop)
{
	for (int i = 0; i < 18000; i++) {
		if (GetFileAttributesW(stop) != INVALID_FILE_ATTRIBUTES)
			break;
		Sleep(100);
	}
}

int
main(void)
{
	int argc = 0;
	wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
	HMODULE h;

	if (argv != NULL && argc == 4 && wcscmp(argv[1], L"--open") == 0) {
		HANDLE f = CreateFileW(argv[2], GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
		                       NULL, OPEN_EXISTING, 0, NULL);
		if (f == INVALID_HANDLE_VALUE) {
			fprintf(stderr, "dll-holder: cannot open %ls: error %lu\n", argv[2],
			        (unsigned long)GetLastError());
			return 1;
		}
		printf("holding %ls open (pid %lu)\n", argv[2],
		       (unsigned long)GetCurrentProcessId());
		fflush(stdout);
		wait_for_stop(argv[3]);
		CloseHandle(f);
		LocalFree(argv);
		return 0;
	}
	if (argv == NULL || argc != 3) {
		fprintf(stderr, "usage: dll-holder.exe DLL STOP-FILE | --open FILE STOP-FILE\n");
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
	wait_for_stop(argv[2]);
	FreeLibrary(h);
	LocalFree(argv);
	return 0;
}
