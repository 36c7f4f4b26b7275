/*
 * A DLL a local user plants in a folder of PATH under a library's name
 * (cublasLt64_13.dll, rocblas.dll, nvrtc64_130_0.dll): loaded, it creates the
 * file named by ROCMD_PLANTED_MARK. tests/windows/test-tune-win.sh checks
 * that rocmd's backends never load it (common/dl-win.c: a bare name is looked
 * for in rocmd's folder and System32 only).
 */
#include <windows.h>

BOOL WINAPI DllMain(HINSTANCE inst, DWORD why, LPVOID reserved);

BOOL WINAPI
DllMain(HINSTANCE inst, DWORD why, LPVOID reserved)
{
	char mark[MAX_PATH];
	HANDLE f;

	(void)inst;
	(void)reserved;
	if (why == DLL_PROCESS_ATTACH &&
	    GetEnvironmentVariableA("ROCMD_PLANTED_MARK", mark, sizeof(mark)) > 0) {
		f = CreateFileA(mark, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL,
		                NULL);
		if (f != INVALID_HANDLE_VALUE)
			CloseHandle(f);
	}
	return TRUE;
}
