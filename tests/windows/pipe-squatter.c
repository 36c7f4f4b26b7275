/*
 * pipe-squatter.exe: creates \\.\pipe\rocmd (or the name given) before rocmd
 * does, with the default security and no FILE_FLAG_FIRST_PIPE_INSTANCE, and
 * waits; the Windows test checks that rocmd then refuses to start and says
 * why. It stops when the file named by its second argument appears (at most
 * 30 minutes later). The test also runs one on another name as the
 * "logged-in user" that keeps wine's services.exe alive.
 *
 * Usage: pipe-squatter.exe [PIPE-NAME [STOP-FILE]]
 */
#include <stdio.h>

#include <windows.h>

int
main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "\\\\.\\pipe\\rocmd";
	const char *stop = argc > 2 ? argv[2] : NULL;
	HANDLE h = CreateNamedPipeA(name, PIPE_ACCESS_DUPLEX, PIPE_TYPE_BYTE | PIPE_WAIT,
				    PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0, NULL);

	if (h == INVALID_HANDLE_VALUE) {
		fprintf(stderr, "pipe-squatter: CreateNamedPipe(%s) failed: %lu\n", name,
			(unsigned long)GetLastError());
		return 1;
	}
	printf("squatting on %s\n", name);
	fflush(stdout);
	for (int i = 0; i < 18000; i++) {
		if (stop != NULL && GetFileAttributesA(stop) != INVALID_FILE_ATTRIBUTES)
			break;
		Sleep(100);
	}
	CloseHandle(h);
	return 0;
}
