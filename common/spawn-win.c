/*
 * Helper programs with a time limit on Windows: see spawn.h. The child is
 * created suspended, put in a job object that kills everything in it when
 * the job's handle closes, then resumed, so neither a timeout nor a helper
 * that starts processes of its own leaves anything behind. Only the three
 * standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST): other
 * threads of the daemon may be creating inheritable handles meanwhile.
 * Anonymous pipes have no overlapped reads, so stdout is read as it fills
 * (PeekNamedPipe) while waiting on the process in short steps.
 */
#include "spawn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "error.h"
#include "text.h"
#include "win-util.h"

/* Appends " " (unless first) and S to *CMD; on failure *CMD becomes NULL. */
static void
cat(char **cmd, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *grown = realloc(*cmd, *len + n + 2);

	if (grown == NULL) {
		free(*cmd);
		*cmd = NULL;
		return;
	}
	if (*len > 0)
		grown[(*len)++] = ' ';
	memcpy(grown + *len, s, n + 1);
	*len += n;
	*cmd = grown;
}

/* Appends ARG to the command line in CommandLineToArgvW's quoting. */
static void
quote_arg(char **cmd, size_t *len, const char *arg)
{
	char *q, *w;

	if (arg[0] != '\0' && strpbrk(arg, " \t\n\v\"") == NULL) {
		cat(cmd, len, arg);
		return;
	}
	q = malloc(strlen(arg) * 2 + 3);
	if (q == NULL) {
		free(*cmd);
		*cmd = NULL;
		return;
	}
	w = q;
	*w++ = '"';
	for (const char *p = arg;; p++) {
		size_t bs = 0;
		while (*p == '\\') {
			bs++;
			p++;
		}
		if (*p == '\0') {
			/* Backslashes before the closing quote are doubled. */
			for (size_t i = 0; i < bs * 2; i++)
				*w++ = '\\';
			break;
		}
		if (*p == '"') {
			for (size_t i = 0; i < bs * 2 + 1; i++)
				*w++ = '\\';
		} else {
			for (size_t i = 0; i < bs; i++)
				*w++ = '\\';
		}
		*w++ = *p;
	}
	*w++ = '"';
	*w = '\0';
	cat(cmd, len, q);
	free(q);
}

/* The environment block: ENVP plus SystemRoot and windir, which Windows
 * processes need to load system DLLs. UTF-16, double-NUL-terminated. */
static wchar_t *
env_block(char *const envp[])
{
	static const char *const keep[] = {"SystemRoot", "windir", NULL};
	char *text = NULL;
	wchar_t *block = NULL, *w;
	size_t len, n = 0;

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		rocmd_text_addf(&text, "%s", envp[i]);
	for (size_t i = 0; keep[i] != NULL; i++) {
		const char *v = getenv(keep[i]);
		if (v != NULL)
			rocmd_text_addf(&text, "%s=%s", keep[i], v);
	}
	if (text == NULL)
		text = strdup("");
	if (text == NULL)
		return NULL;
	/* rocmd_text_addf put '\n' between the strings; each becomes a NUL. */
	w = rocmd_win_wide(text);
	free(text);
	if (w == NULL)
		return NULL;
	len = wcslen(w);
	block = malloc((len + 2) * sizeof(*block));
	if (block != NULL) {
		for (size_t i = 0; i < len; i++)
			block[n++] = w[i] == L'\n' ? L'\0' : w[i];
		block[n++] = L'\0';
		block[n++] = L'\0';
	}
	free(w);
	return block;
}

int
rocmd_child_crashed(int status, char *what, size_t whatlen)
{
	/* NTSTATUS error codes (0xC...): an unhandled exception ended the process. */
	if (((unsigned)status & 0xC0000000u) != 0xC0000000u)
		return 0;
	snprintf(what, whatlen, "exception 0x%08X", (unsigned)status);
	return 1;
}

int
rocmd_child_exit_code(int status)
{
	char what[32];

	return rocmd_child_crashed(status, what, sizeof(what)) ? -1 : status;
}

int
rocmd_child_run(char *const argv[], char *const envp[], int timeout_ms, char *out, size_t outlen,
                int *status)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE rd = NULL, wr = NULL, nul = INVALID_HANDLE_VALUE, job = NULL, proc = NULL;
	HANDLE inherit[2], stdio[3];
	wchar_t *exe = NULL, *cmdw = NULL, *envw = NULL;
	char *cmd = NULL;
	size_t cmdlen = 0;
	ULONGLONG deadline = GetTickCount64() + (ULONGLONG)(timeout_ms > 0 ? timeout_ms : 0);
	size_t used = 0;
	DWORD code = 0;
	int rc = 0;

	if (outlen > 0)
		out[0] = '\0';
	if (status != NULL)
		*status = 0;
	for (size_t i = 0; argv[i] != NULL; i++)
		quote_arg(&cmd, &cmdlen, argv[i]);
	exe = rocmd_win_wide(argv[0]);
	cmdw = cmd != NULL ? rocmd_win_wide(cmd) : NULL;
	envw = env_block(envp);
	if (exe == NULL || cmdw == NULL || envw == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	if (!CreatePipe(&rd, &wr, &sa, 0)) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
	nul = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
	                  &sa, OPEN_EXISTING, 0, NULL);
	if (nul == INVALID_HANDLE_VALUE) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	stdio[0] = nul;
	stdio[1] = wr;
	stdio[2] = nul;
	inherit[0] = wr;
	inherit[1] = nul;
	job = rocmd_win_kill_job();
	if (job == NULL) {
		rc = rocmd_win_error(GetLastError());
		goto out;
	}
	rc = rocmd_win_spawn(exe, cmdw, envw, stdio, inherit, 2, job, &proc);
	if (rc < 0)
		goto out;
	/* Our copy of the write end must go, or the pipe never reports its end. */
	CloseHandle(wr);
	wr = NULL;
	for (;;) {
		char buf[4096];
		DWORD avail = 0, n = 0;

		if (!PeekNamedPipe(rd, NULL, 0, NULL, &avail, NULL))
			break; /* ERROR_BROKEN_PIPE: every writer is gone */
		if (avail > 0) {
			if (!ReadFile(rd, buf, avail < sizeof(buf) ? avail : sizeof(buf), &n,
			              NULL) ||
			    n == 0)
				break;
			if (outlen > 0 && used < outlen - 1) {
				size_t take = n < outlen - 1 - used ? n : outlen - 1 - used;
				memcpy(out + used, buf, take);
				used += take;
				out[used] = '\0';
			}
			continue;
		}
		if (GetTickCount64() >= deadline) {
			rc = ROCMD_ETIMEDOUT;
			break;
		}
		/* Nothing to read: wait a little, or less if the child ends. */
		WaitForSingleObject(proc, 5);
	}
	if (rc == 0) {
		ULONGLONG now = GetTickCount64();
		DWORD left = now < deadline ? (DWORD)(deadline - now) : 0;
		if (WaitForSingleObject(proc, left) != WAIT_OBJECT_0)
			rc = ROCMD_ETIMEDOUT;
	}
	if (rc == ROCMD_ETIMEDOUT) {
		TerminateJobObject(job, 1);
		WaitForSingleObject(proc, 5000);
	}
	if (GetExitCodeProcess(proc, &code) && status != NULL)
		*status = (int)code;
out:
	if (proc != NULL)
		CloseHandle(proc);
	if (job != NULL)
		CloseHandle(job); /* kills whatever is left in it */
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	if (wr != NULL)
		CloseHandle(wr);
	if (rd != NULL)
		CloseHandle(rd);
	free(cmd);
	free(exe);
	free(cmdw);
	free(envw);
	return rc;
}
