/*
 * The client's transport on Windows: the daemon's named pipe, opened with
 * SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION. rocmd may then read our
 * token to decide what we may do, but can never act as us (no
 * impersonation or delegation level), so a process squatting on the pipe
 * name gains nothing from our connection. Plain blocking reads and writes.
 */
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include <shellapi.h>

#include "client.h"
#include "common/error.h"
#include "common/win-util.h"

#define BUSY_WAIT_MS 5000

struct rocmd_transport {
	HANDLE pipe;
};

int
rocmd_transport_connect(const char *path, struct rocmd_transport **out, char *why,
			size_t whylen)
{
	struct rocmd_transport *t;
	wchar_t *name = rocmd_win_wide(path);
	char msg[256];
	HANDLE h = INVALID_HANDLE_VALUE;
	DWORD err = 0;

	*out = NULL;
	if (name == NULL) {
		snprintf(why, whylen, "invalid pipe name: %s", path);
		return ROCMD_EINVAL;
	}
	/* Every instance busy: wait for one, a few times. */
	for (int tries = 0; tries < 4; tries++) {
		h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
				SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, NULL);
		if (h != INVALID_HANDLE_VALUE)
			break;
		err = GetLastError();
		if (err != ERROR_PIPE_BUSY || !WaitNamedPipeW(name, BUSY_WAIT_MS))
			break;
	}
	free(name);
	if (h == INVALID_HANDLE_VALUE) {
		if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND)
			snprintf(why, whylen, "rocmd is not running (no pipe %s)", path);
		else
			snprintf(why, whylen, "cannot connect to %s: %s", path,
				 rocmd_win_strerror(err, msg, sizeof(msg)));
		return err == ERROR_ACCESS_DENIED ? ROCMD_EPERM : ROCMD_ECONNECT;
	}
	t = malloc(sizeof(*t));
	if (t == NULL) {
		CloseHandle(h);
		return ROCMD_ENOMEM;
	}
	t->pipe = h;
	*out = t;
	return 0;
}

int
rocmd_transport_write(struct rocmd_transport *t, const char *buf, size_t len)
{
	while (len > 0) {
		DWORD chunk = len > 0x100000 ? 0x100000 : (DWORD)len, n = 0;
		if (!WriteFile(t->pipe, buf, chunk, &n, NULL))
			return rocmd_win_error(GetLastError());
		buf += n;
		len -= n;
	}
	return 0;
}

ssize_t
rocmd_transport_read(struct rocmd_transport *t, char *buf, size_t len, int timeout_ms)
{
	DWORD n = 0, chunk = len > 0x100000 ? 0x100000 : (DWORD)len;
	ULONGLONG until = GetTickCount64() + (ULONGLONG)(timeout_ms > 0 ? timeout_ms : 0);

	/* A synchronous pipe has no read timeout: wait for data by peeking. */
	while (timeout_ms >= 0) {
		DWORD avail = 0;
		if (!PeekNamedPipe(t->pipe, NULL, 0, NULL, &avail, NULL)) {
			DWORD err = GetLastError();
			if (err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED)
				return 0;
			return rocmd_win_error(err);
		}
		if (avail > 0)
			break;
		if (GetTickCount64() >= until)
			return ROCMD_ETIMEDOUT;
		Sleep(10);
	}

	if (!ReadFile(t->pipe, buf, chunk, &n, NULL)) {
		DWORD err = GetLastError();
		if (err == ERROR_BROKEN_PIPE || err == ERROR_PIPE_NOT_CONNECTED)
			return 0;
		if (err != ERROR_MORE_DATA)
			return rocmd_win_error(err);
	}
	return (ssize_t)n;
}

void
rocmd_transport_close(struct rocmd_transport *t)
{
	if (t == NULL)
		return;
	CloseHandle(t->pipe);
	free(t);
}

void
rocmd_client_args_utf8(int *argc, char ***argv)
{
	int n = 0;
	wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
	char **u;

	/* Kept for the process's life, as the C runtime's argv is. */
	if (w == NULL || n != *argc || (u = calloc((size_t)n + 1, sizeof(*u))) == NULL) {
		LocalFree(w);
		return;
	}
	for (int i = 0; i < n; i++)
		if ((u[i] = rocmd_win_utf8(w[i])) == NULL) {
			for (int j = 0; j < i; j++)
				free(u[j]);
			free(u);
			LocalFree(w);
			return;
		}
	LocalFree(w);
	*argv = u;
}
