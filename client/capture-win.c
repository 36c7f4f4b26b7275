/*
 * The program run of `rocmctl tune capture` on Windows (see
 * cmd-tune-vendor.h): a private folder under %TEMP%, the log variables set
 * for the child (inherited), the program run to its end with _spawnvp.
 */
#include "cmd-tune-vendor.h"

#include <direct.h>
#include <errno.h>
#include <io.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/error.h"

int64_t
tune_capture_pid(void)
{
	return (int64_t)GetCurrentProcessId();
}

static int
collect(const char *dir, char **buf, size_t *len)
{
	char pattern[MAX_PATH + 8];
	WIN32_FIND_DATAA fd;
	HANDLE h;
	int rc = 0;

	snprintf(pattern, sizeof(pattern), "%s\\*", dir);
	h = FindFirstFileA(pattern, &fd);
	if (h != INVALID_HANDLE_VALUE) {
		do {
			char path[MAX_PATH * 2], *text = NULL, *grown;
			size_t n = 0;

			if (fd.cFileName[0] == '.' || (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
				continue;
			snprintf(path, sizeof(path), "%s\\%s", dir, fd.cFileName);
			if (rc == 0 && tune_read_file(path, &text, &n) == 0) {
				grown = realloc(*buf, *len + n + 2);
				if (grown == NULL) {
					rc = ROCMD_ENOMEM;
				} else {
					*buf = grown;
					memcpy(*buf + *len, text, n);
					*len += n;
					(*buf)[(*len)++] = '\n';
					(*buf)[*len] = '\0';
				}
			}
			free(text);
			DeleteFileA(path);
		} while (FindNextFileA(h, &fd));
		FindClose(h);
	}
	RemoveDirectoryA(dir);
	return rc;
}

int
tune_capture_run(char **argv, char **logs, size_t *len, int *status, char *why, size_t whylen)
{
	char tmp[MAX_PATH], dir[MAX_PATH + 64], rb[MAX_PATH + 96], hb[MAX_PATH + 96];
	intptr_t rc;

	*logs = NULL;
	*len = 0;
	*status = -1;
	if (GetTempPathA(sizeof(tmp), tmp) == 0)
		snprintf(tmp, sizeof(tmp), ".\\");
	snprintf(dir, sizeof(dir), "%srocmctl-capture-%lu-%lu", tmp,
	         (unsigned long)GetCurrentProcessId(), (unsigned long)GetTickCount());
	if (!CreateDirectoryA(dir, NULL)) {
		snprintf(why, whylen, "cannot make a folder for the logs (error %lu)",
		         (unsigned long)GetLastError());
		return ROCMD_EIO;
	}
	snprintf(rb, sizeof(rb), "%s\\rocblas-bench.log", dir);
	snprintf(hb, sizeof(hb), "%s\\hipblaslt-%%i.log", dir);
	_putenv_s("ROCBLAS_LAYER", "2");
	_putenv_s("ROCBLAS_LOG_BENCH_PATH", rb);
	_putenv_s("HIPBLASLT_LOG_MASK", "32");
	_putenv_s("HIPBLASLT_LOG_FILE", hb);
	snprintf(hb, sizeof(hb), "%s\\rocmd-gemm.log", dir);
	_putenv_s("ROCMD_GEMM_LOG_PATH", hb);
	fflush(NULL);
	rc = _spawnvp(_P_WAIT, argv[0], (const char *const *)argv);
	if (rc < 0) {
		snprintf(why, whylen, "cannot run %s: %s", argv[0], strerror(errno));
		RemoveDirectoryA(dir);
		return ROCMD_ENOTFOUND;
	}
	*status = (int)rc;
	snprintf(why, whylen, "exited with %d", *status);
	return collect(dir, logs, len);
}
