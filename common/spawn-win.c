/*
 * The child-process layer's Windows calls (see spawn.h). Every child is created
 * suspended, put in a job object that kills everything in it when the job's
 * last handle closes (and lets no unhandled exception open a dialog), then
 * resumed, so neither a timeout nor a helper that starts processes of its
 * own leaves anything behind. Only the handles a child is given are
 * inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST): other threads of the daemon
 * may be creating inheritable handles meanwhile.
 *
 * Anonymous pipes have no overlapped reads, so a read with a deadline or a
 * cancel flag peeks (PeekNamedPipe) and waits on the process in slices of a
 * few milliseconds; the next peek after the child's end sees the broken
 * pipe. A struct rocmd_child owns one job for its life (rocmd_child_run
 * makes one per run), so rocmd_child_kill from another thread ends whatever
 * child is in it, and all it started, with TerminateJobObject on a handle
 * that cannot be closed under it. A child started with rocmd_child_start gets the values of its
 * two pipe handles on its command line (handle values are the same in the
 * child).
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

#define KILLED_CODE 0x52544B4Cu /* "RTKL": our TerminateProcess/TerminateJobObject */
#define SLICE_MS 5

struct rocmd_child {
	HANDLE job;     /* for the slot's life */
	HANDLE process; /* the current child, or NULL */
	HANDLE wr, rd;  /* our ends of the pipes */
};

double
rocmd_child_now_ms(void)
{
	LARGE_INTEGER f, c;

	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&c);
	return (double)c.QuadPart * 1e3 / (double)f.QuadPart;
}

/* ---- command lines, environments, starting ---- */

/* Appends " " (unless first) and S to *CMD; on failure *CMD becomes NULL. */
static void
cat(char **cmd, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *grown = *cmd != NULL || *len == 0 ? realloc(*cmd, *len + n + 2) : NULL;

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

/* A job object whose processes die when its last handle closes and when
 * they raise an unhandled exception (no error dialog). NULL on failure. */
static HANDLE
kill_job(void)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim;
	HANDLE job = CreateJobObjectW(NULL, NULL);

	if (job == NULL)
		return NULL;
	memset(&lim, 0, sizeof(lim));
	lim.BasicLimitInformation.LimitFlags =
	    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	SetInformationJobObject(job, JobObjectExtendedLimitInformation, &lim, sizeof(lim));
	return job;
}

/* The null device, inheritable, for a child's standard handles. */
static HANDLE
null_device(void)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};

	return CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
	                   &sa, OPEN_EXISTING, 0, NULL);
}

/*
 * Starts EXE with command line CMD (ENV a UTF-16 block or NULL for ours)
 * with no window, STDIO[3] as its standard handles, inheriting the NINHERIT
 * handles in INHERIT and nothing else, and puts it in JOB before it runs. 0
 * with *PROCESS (the caller closes it), or a rocmd error.
 */
static int
spawn(const wchar_t *exe, wchar_t *cmd, wchar_t *env, HANDLE stdio[3], HANDLE *inherit,
      size_t ninherit, HANDLE job, HANDLE *process)
{
	STARTUPINFOEXW si;
	PROCESS_INFORMATION pi;
	LPPROC_THREAD_ATTRIBUTE_LIST attrs;
	SIZE_T attrlen = 0;
	int rc = 0;

	*process = NULL;
	memset(&si, 0, sizeof(si));
	memset(&pi, 0, sizeof(pi));
	InitializeProcThreadAttributeList(NULL, 1, 0, &attrlen);
	attrs = malloc(attrlen);
	if (attrs == NULL)
		return ROCMD_ENOMEM;
	if (!InitializeProcThreadAttributeList(attrs, 1, 0, &attrlen)) {
		free(attrs);
		return rocmd_win_error(GetLastError());
	}
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = stdio[0];
	si.StartupInfo.hStdOutput = stdio[1];
	si.StartupInfo.hStdError = stdio[2];
	si.lpAttributeList = attrs;
	/* Suspended until it is in the job: it never runs outside it. */
	if (!UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit,
	                               ninherit * sizeof(HANDLE), NULL, NULL) ||
	    !CreateProcessW(exe, cmd, NULL, NULL, TRUE,
	                    CREATE_SUSPENDED | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT |
	                        (env != NULL ? CREATE_UNICODE_ENVIRONMENT : 0),
	                    env, NULL, &si.StartupInfo, &pi)) {
		rc = rocmd_win_error(GetLastError());
	} else if (!AssignProcessToJobObject(job, pi.hProcess)) {
		rc = rocmd_win_error(GetLastError());
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hProcess);
	} else {
		ResumeThread(pi.hThread);
		*process = pi.hProcess;
	}
	if (pi.hThread != NULL)
		CloseHandle(pi.hThread);
	DeleteProcThreadAttributeList(attrs);
	free(attrs);
	return rc;
}

/* ---- reading and writing pipes ---- */

int
rocmd_child_os_read(intptr_t fd, const struct rocmd_child *c, void *buf, size_t len,
                    double deadline, volatile int *cancel, size_t *got)
{
	HANDLE rd = (HANDLE)fd;
	DWORD want = len > 1u << 20 ? 1u << 20 : (DWORD)len;

	*got = 0;
	for (;;) {
		DWORD avail = 0, n = 0;
		double left;

		if (deadline > 0 || cancel != NULL) {
			if (cancel != NULL && *cancel)
				return ROCMD_ECANCELED;
			if (!PeekNamedPipe(rd, NULL, 0, NULL, &avail, NULL))
				return 0; /* ERROR_BROKEN_PIPE: every writer is gone */
			if (avail == 0) {
				left = deadline > 0 ? deadline - rocmd_child_now_ms() : 1e9;
				if (left <= 0)
					return ROCMD_ETIMEDOUT;
				/* Nothing yet: wait a slice, or less when the child ends. */
				if (c != NULL)
					WaitForSingleObject(c->process, left < SLICE_MS
					                                    ? (DWORD)left + 1
					                                    : SLICE_MS);
				else
					Sleep(SLICE_MS);
				continue;
			}
			if (avail < want)
				want = avail;
		}
		if (ReadFile(rd, buf, want, &n, NULL))
			*got = n;
		return 0;
	}
}

intptr_t
rocmd_child_os_fd(const struct rocmd_child *c)
{
	return (intptr_t)c->rd;
}

static int
write_all(HANDLE h, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		DWORD n = 0;

		if (!WriteFile(h, p, len > 1u << 20 ? 1u << 20 : (DWORD)len, &n, NULL) || n == 0)
			return ROCMD_EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* ---- how a child ended ---- */

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

void
rocmd_child_describe(int status, char *what, size_t whatlen)
{
	if ((unsigned)status == KILLED_CODE)
		snprintf(what, whatlen, "killed");
	else if (((unsigned)status & 0xC0000000u) == 0xC0000000u)
		snprintf(what, whatlen, "ended by exception 0x%08X", (unsigned)status);
	else
		snprintf(what, whatlen, "exited with %u", (unsigned)status);
}

/* ---- this program ---- */

/* This program's path, found once (rocmd_self_init). Windows does not let a
 * running program's file be replaced, only renamed aside, so the path names
 * the file that runs for as long as it runs from there. */
static INIT_ONCE self_once = INIT_ONCE_STATIC_INIT;
static char *self_path;

static BOOL CALLBACK
self_resolve(INIT_ONCE *once, void *param, void **ctx)
{
	static wchar_t exe[32768];
	DWORD n = GetModuleFileNameW(NULL, exe, sizeof(exe) / sizeof(exe[0]));

	(void)once;
	(void)param;
	(void)ctx;
	if (n > 0 && n < sizeof(exe) / sizeof(exe[0]))
		self_path = rocmd_win_utf8(exe);
	return TRUE;
}

void
rocmd_self_init(void)
{
	InitOnceExecuteOnce(&self_once, self_resolve, NULL, NULL);
}

const char *
rocmd_self_exe(void)
{
	rocmd_self_init();
	return self_path != NULL ? self_path : "";
}

int
rocmd_self_beside(const char *name, char *out, size_t outlen)
{
	const char *exe = rocmd_self_exe(), *slash = strrchr(exe, '\\');
	int len = slash != NULL ? (int)(slash - exe) : 0;
	wchar_t *w;
	DWORD attr;

	if (slash == NULL || (size_t)snprintf(out, outlen, "%.*s\\%s", len, exe, name) >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return ROCMD_ENOTFOUND;
	}
	if ((w = rocmd_win_wide(out)) == NULL)
		return ROCMD_ENOTFOUND;
	attr = GetFileAttributesW(w);
	free(w);
	return attr != INVALID_FILE_ATTRIBUTES && !(attr & FILE_ATTRIBUTE_DIRECTORY) ? 0
	                                                                             : ROCMD_ENOTFOUND;
}

/* ---- a child serving requests over a pipe each way ---- */

int
rocmd_child_new(struct rocmd_child **out)
{
	struct rocmd_child *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return ROCMD_ENOMEM;
	c->job = kill_job();
	if (c->job == NULL) {
		free(c);
		return ROCMD_EIO;
	}
	*out = c;
	return 0;
}

int
rocmd_child_alive(const struct rocmd_child *c)
{
	return c != NULL && c->process != NULL;
}

static void
close_pipes(struct rocmd_child *c)
{
	if (c->wr != NULL)
		CloseHandle(c->wr);
	if (c->rd != NULL)
		CloseHandle(c->rd);
	c->wr = c->rd = NULL;
}

int
rocmd_child_os_start(struct rocmd_child *c, const char *exe, char *const argv[],
                     char *const envp[], int capture, char *why, size_t whylen)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE child_rd = NULL, child_wr = NULL, nul = INVALID_HANDLE_VALUE, inherit[3], stdio[3];
	wchar_t *exew = NULL, *cmdw = NULL, *envw = NULL;
	char *cmd = NULL, *path = NULL, handles[48];
	size_t cmdlen = 0, ninherit;
	DWORD err = 0;
	int rc = 0;

	if (exe == NULL && *(exe = rocmd_self_exe()) == '\0') {
		snprintf(why, whylen, "no path for this program (GetModuleFileNameW failed)");
		return ROCMD_EIO;
	}
	path = strdup(exe);
	if (path == NULL || (envp != NULL && (envw = env_block(envp)) == NULL)) {
		snprintf(why, whylen, "out of memory");
		free(path);
		return ROCMD_ENOMEM;
	}
	/* Ours are not inherited; the child's ends are, through the list only. */
	if ((!capture && !CreatePipe(&child_rd, &c->wr, &sa, 0)) ||
	    !CreatePipe(&c->rd, &child_wr, &sa, 0) || (nul = null_device()) == INVALID_HANDLE_VALUE) {
		err = GetLastError();
		rc = ROCMD_EIO;
		goto out;
	}
	if (c->wr != NULL)
		SetHandleInformation(c->wr, HANDLE_FLAG_INHERIT, 0);
	SetHandleInformation(c->rd, HANDLE_FLAG_INHERIT, 0);
	if (capture) {
		/* ARGV as it is, stdout the pipe. */
		stdio[0] = stdio[2] = nul;
		stdio[1] = child_wr;
		inherit[0] = child_wr;
		inherit[1] = nul;
		ninherit = 2;
		for (size_t i = 0; argv[i] != NULL; i++)
			quote_arg(&cmd, &cmdlen, argv[i]);
	} else {
		/* The program's path, ARGV[1..], then where the child's pipes are. */
		stdio[0] = stdio[1] = stdio[2] = nul;
		inherit[0] = child_rd;
		inherit[1] = child_wr;
		inherit[2] = nul;
		ninherit = 3;
		snprintf(handles, sizeof(handles), "%llu %llu",
		         (unsigned long long)(uintptr_t)child_rd,
		         (unsigned long long)(uintptr_t)child_wr);
		quote_arg(&cmd, &cmdlen, path);
		for (size_t i = 1; argv[0] != NULL && argv[i] != NULL; i++)
			quote_arg(&cmd, &cmdlen, argv[i]);
		cat(&cmd, &cmdlen, handles);
	}
	exew = rocmd_win_wide(path);
	cmdw = cmd != NULL ? rocmd_win_wide(cmd) : NULL;
	if (exew == NULL || cmdw == NULL) {
		rc = ROCMD_ENOMEM;
		goto out;
	}
	if ((rc = spawn(exew, cmdw, envw, stdio, inherit, ninherit, c->job, &c->process)) < 0)
		err = GetLastError();
out:
	/* The child's ends are the child's now: our copies must go, or the
	 * pipes never report that it is gone. */
	if (child_rd != NULL)
		CloseHandle(child_rd);
	if (child_wr != NULL)
		CloseHandle(child_wr);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	if (rc < 0) {
		close_pipes(c);
		snprintf(why, whylen, "%s (Windows error %lu)", path, (unsigned long)err);
	}
	free(path);
	free(cmd);
	free(exew);
	free(cmdw);
	free(envw);
	return rc;
}

int
rocmd_child_write(struct rocmd_child *c, const void *buf, size_t len)
{
	return write_all(c->wr, buf, len);
}

int
rocmd_child_os_wait(struct rocmd_child *c, double deadline)
{
	double left = deadline - rocmd_child_now_ms();

	return WaitForSingleObject(c->process, left > 0 ? (DWORD)left : 0) == WAIT_OBJECT_0
	           ? 0
	           : ROCMD_ETIMEDOUT;
}

int
rocmd_child_stop(struct rocmd_child *c, int kill_it)
{
	DWORD code = 0;

	if (c == NULL || c->process == NULL)
		return 0;
	close_pipes(c);
	if (kill_it)
		TerminateProcess(c->process, KILLED_CODE);
	WaitForSingleObject(c->process, INFINITE);
	GetExitCodeProcess(c->process, &code);
	CloseHandle(c->process);
	c->process = NULL;
	return (int)code;
}

void
rocmd_child_abandon(struct rocmd_child *c)
{
	if (c == NULL || c->process == NULL)
		return;
	/* Nothing to reap on Windows: the handle closes, the process ends. */
	TerminateProcess(c->process, KILLED_CODE);
	close_pipes(c);
	CloseHandle(c->process);
	c->process = NULL;
}

void
rocmd_child_kill(struct rocmd_child *c)
{
	if (c != NULL && c->job != NULL)
		TerminateJobObject(c->job, KILLED_CODE);
}

void
rocmd_child_free(struct rocmd_child *c)
{
	if (c == NULL)
		return;
	rocmd_child_stop(c, 0);
	CloseHandle(c->job); /* kills anything still in it */
	free(c);
}

/* ---- the child's side ---- */

int
rocmd_child_attach(int argc, char **argv, struct rocmd_child_chan *ch)
{
	unsigned long long rd, wr;
	char tail;

	if (argc != 2 || sscanf(argv[0], "%llu%c", &rd, &tail) != 1 ||
	    sscanf(argv[1], "%llu%c", &wr, &tail) != 1)
		return ROCMD_EINVAL;
	/* A crash ends this process: no dialog, no debugger. The job object
	 * (kill on close) ends it with its parent. */
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
	ch->rd = (intptr_t)rd;
	ch->wr = (intptr_t)wr;
	return 0;
}

int
rocmd_child_chan_write(const struct rocmd_child_chan *ch, const void *buf, size_t len)
{
	return write_all((HANDLE)ch->wr, buf, len);
}
