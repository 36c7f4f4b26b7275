/*
 * Default paths on Windows: see paths.h. The daemon listens on the named pipe
 * \\.\pipe\rocmd; state and configuration live under %ProgramData%\rocmd,
 * which "rocmd install" creates with rights for the service's own SID.
 */
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <shlobj.h>

#include "error.h"
#include "win-util.h"

#define DEFAULT_PIPE "\\\\.\\pipe\\rocmd"

static int
copy_out(char *out, size_t outlen, const char *s)
{
	if (strlen(s) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, s);
	return 0;
}

/*
 * %ProgramData% (C:\ProgramData on every supported Windows), from the shell's
 * known folder rather than the environment: a service's environment is the
 * SCM's, and the installer (service/windows/rocmd.wxs) creates the state
 * folder under the same known folder, so both name one place.
 */
static char program_data_dir[MAX_PATH * 3];
static INIT_ONCE program_data_once = INIT_ONCE_STATIC_INIT;

static BOOL CALLBACK
find_program_data(PINIT_ONCE once, void *param, void **ctx)
{
	wchar_t w[MAX_PATH];
	const char *v = getenv("ProgramData");

	(void)once;
	(void)param;
	(void)ctx;
	if (SHGetFolderPathW(NULL, CSIDL_COMMON_APPDATA, NULL, SHGFP_TYPE_CURRENT, w) == S_OK &&
	    WideCharToMultiByte(CP_UTF8, 0, w, -1, program_data_dir, sizeof(program_data_dir), NULL,
				NULL) > 0)
		return TRUE;
	snprintf(program_data_dir, sizeof(program_data_dir), "%s",
		 v != NULL && v[0] != '\0' ? v : "C:\\ProgramData");
	return TRUE;
}

static const char *
program_data(void)
{
	InitOnceExecuteOnce(&program_data_once, find_program_data, NULL, NULL);
	return program_data_dir;
}

int
rocmd_paths_daemon_socket(char *out, size_t outlen)
{
	return copy_out(out, outlen, DEFAULT_PIPE);
}

int
rocmd_paths_client_socket(char *out, size_t outlen)
{
	const char *env = getenv("ROCMD_SOCKET");

	return copy_out(out, outlen, env != NULL && env[0] != '\0' ? env : DEFAULT_PIPE);
}

const char *
rocmd_paths_default_config(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s\\rocmd\\rocmd.json", program_data());

	return n < 0 || (size_t)n >= len ? NULL : buf;
}

char *
rocmd_paths_default_state_dir(void)
{
	char *out = NULL;

	return asprintf(&out, "%s\\rocmd", program_data()) < 0 ? NULL : out;
}

/* Creates one folder; an existing one is fine. */
static int
make_dir(const char *dir)
{
	wchar_t *w = rocmd_win_wide(dir);
	DWORD err = 0, attr;

	if (w == NULL)
		return ROCMD_EINVAL;
	if (!CreateDirectoryW(w, NULL)) {
		err = GetLastError();
		attr = GetFileAttributesW(w);
		if (err == ERROR_ALREADY_EXISTS || err == ERROR_ACCESS_DENIED)
			err = attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY)
				      ? 0
				      : err;
	}
	free(w);
	return err == 0 ? 0 : rocmd_win_error(err);
}

int
rocmd_paths_mkdir_p(const char *dir, unsigned mode)
{
	char buf[4096];
	size_t len = strlen(dir), start = 0;

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	/* Skip what cannot be created: "C:\", "\\server\share\", "\\?\C:\". */
	if (len >= 3 && buf[1] == ':' && (buf[2] == '\\' || buf[2] == '/'))
		start = 3;
	else if (strncmp(buf, "\\\\?\\", 4) == 0)
		start = len >= 7 && buf[5] == ':' ? 7 : 4;
	else if (strncmp(buf, "\\\\", 2) == 0) {
		char *p = strpbrk(buf + 2, "\\/");
		p = p != NULL ? strpbrk(p + 1, "\\/") : NULL;
		start = p != NULL ? (size_t)(p - buf) + 1 : len;
	}
	for (size_t i = start; i < len; i++) {
		int rc;
		if (buf[i] != '\\' && buf[i] != '/')
			continue;
		buf[i] = '\0';
		rc = make_dir(buf);
		buf[i] = '\\';
		if (rc < 0)
			return rc;
	}
	return make_dir(buf);
}
