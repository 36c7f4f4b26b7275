/*
 * The evaluation process on Windows (see measure-os.h). Windows has no
 * fork(): the child is this same program started again (CreateProcessW of
 * GetModuleFileNameW) with the hidden first argument --rocmd-tune-eval and
 * the values of its two inherited pipe handles; main() hands such a command
 * line to tune_evaluator_child() before anything else. The child reads the
 * measurement specification as its first message and then serves requests
 * exactly as on POSIX systems (measure_child_serve).
 *
 * Only the two pipe ends are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST:
 * nothing of the daemon, its pipe instances, lock or database, reaches the
 * child). The child is created suspended and put in the evaluator's job
 * object (kill on close, die on an unhandled exception) before it runs, so a
 * daemon that dies takes its evaluation process with it, and an abort from
 * another thread (tune_evaluator_abort) ends it with TerminateJobObject on a
 * handle that lives as long as the evaluator. A timeout or a cancel ends it
 * with TerminateProcess. Anonymous pipes have no overlapped reads, so a read
 * with a deadline or a cancel flag peeks (PeekNamedPipe) and waits on the
 * process in slices of at most 10 ms.
 */
#include "kernels/measure-os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>

#include "common/error.h"
#include "common/win-util.h"

#define EVAL_ARG "--rocmd-tune-eval"
#define KILLED_CODE 0x52544B4Cu /* "RTKL": our TerminateProcess/TerminateJobObject */

struct measure_proc {
	HANDLE job;     /* for the evaluator's life */
	HANDLE process; /* the current child, or NULL */
	HANDLE wr, rd;  /* our ends of the pipes */
};

double
measure_mono_ms(void)
{
	LARGE_INTEGER f, c;

	QueryPerformanceFrequency(&f);
	QueryPerformanceCounter(&c);
	return (double)c.QuadPart * 1e3 / (double)f.QuadPart;
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

/* Blocking read of all LEN bytes: the child's side. */
static int
read_blocking(HANDLE h, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		DWORD n = 0;

		if (!ReadFile(h, p, len > 1u << 20 ? 1u << 20 : (DWORD)len, &n, NULL) || n == 0)
			return ROCMD_ECLOSED;
		p += n;
		len -= n;
	}
	return 0;
}

int
measure_proc_new(struct measure_proc **out)
{
	struct measure_proc *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return ROCMD_ENOMEM;
	c->job = rocmd_win_kill_job();
	if (c->job == NULL) {
		free(c);
		return ROCMD_EIO;
	}
	*out = c;
	return 0;
}

int
measure_proc_alive(const struct measure_proc *c)
{
	return c != NULL && c->process != NULL;
}

static void
close_pipes(struct measure_proc *c)
{
	if (c->wr != NULL)
		CloseHandle(c->wr);
	if (c->rd != NULL)
		CloseHandle(c->rd);
	c->wr = c->rd = NULL;
}

int
measure_proc_start(struct measure_proc *c, const struct measure_spec *spec, char *why,
		   size_t whylen)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE child_rd = NULL, child_wr = NULL, nul = INVALID_HANDLE_VALUE, inherit[3], stdio[3];
	wchar_t exe[MAX_PATH * 2], cmd[MAX_PATH * 2 + 96];
	DWORD n;
	int err = 0;

	n = GetModuleFileNameW(NULL, exe, sizeof(exe) / sizeof(exe[0]));
	if (n == 0 || n >= sizeof(exe) / sizeof(exe[0])) {
		snprintf(why, whylen, "cannot start the evaluation process: no path for this "
				      "program (Windows error %lu)", (unsigned long)GetLastError());
		return ROCMD_EIO;
	}
	/* Ours are not inherited; the child's ends are, through the list only. */
	if (!CreatePipe(&child_rd, &c->wr, &sa, 0) || !CreatePipe(&c->rd, &child_wr, &sa, 0)) {
		err = ROCMD_EIO;
		goto out;
	}
	SetHandleInformation(c->wr, HANDLE_FLAG_INHERIT, 0);
	SetHandleInformation(c->rd, HANDLE_FLAG_INHERIT, 0);
	nul = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
	                  &sa, OPEN_EXISTING, 0, NULL);
	if (nul == INVALID_HANDLE_VALUE) {
		err = ROCMD_EIO;
		goto out;
	}
	stdio[0] = stdio[1] = stdio[2] = nul;
	inherit[0] = child_rd;
	inherit[1] = child_wr;
	inherit[2] = nul;
	/* Handle values are the same in the child: pass them as numbers. */
	_snwprintf(cmd, sizeof(cmd) / sizeof(cmd[0]), L"\"%ls\" " EVAL_ARG L" %llu %llu", exe,
	           (unsigned long long)(uintptr_t)child_rd,
	           (unsigned long long)(uintptr_t)child_wr);
	cmd[sizeof(cmd) / sizeof(cmd[0]) - 1] = L'\0';
	err = rocmd_win_spawn(exe, cmd, NULL, stdio, inherit, 3, c->job, &c->process);
	if (err < 0)
		goto out;
	/* The specification is the first message. */
	err = write_all(c->wr, spec, sizeof(*spec));
	if (err < 0) {
		TerminateProcess(c->process, KILLED_CODE);
		WaitForSingleObject(c->process, 5000);
		CloseHandle(c->process);
		c->process = NULL;
	}
out:
	/* The child's ends are the child's now: our copies must go, or the
	 * pipes never report that it is gone. */
	if (child_rd != NULL)
		CloseHandle(child_rd);
	if (child_wr != NULL)
		CloseHandle(child_wr);
	if (nul != INVALID_HANDLE_VALUE)
		CloseHandle(nul);
	if (err < 0) {
		close_pipes(c);
		snprintf(why, whylen, "cannot start the evaluation process %ls (Windows error %lu)",
			 exe, (unsigned long)GetLastError());
	}
	return err;
}

int
measure_proc_write(struct measure_proc *c, const void *buf, size_t len)
{
	return write_all(c->wr, buf, len);
}

int
measure_proc_read(struct measure_proc *c, void *buf, size_t len, double deadline,
                  volatile int *cancel)
{
	char *p = buf;

	if (deadline <= 0 && cancel == NULL)
		return read_blocking(c->rd, buf, len);
	while (len > 0) {
		DWORD avail = 0, n = 0;
		double left;

		if (cancel != NULL && *cancel)
			return ROCMD_ECANCELED;
		if (!PeekNamedPipe(c->rd, NULL, 0, NULL, &avail, NULL))
			return cancel != NULL && *cancel ? ROCMD_ECANCELED : ROCMD_ECLOSED;
		if (avail > 0) {
			if (!ReadFile(c->rd, p, avail < len ? avail : (DWORD)len, &n, NULL) ||
			    n == 0)
				return ROCMD_ECLOSED;
			p += n;
			len -= n;
			continue;
		}
		left = deadline > 0 ? deadline - measure_mono_ms() : 1e9;
		if (left <= 0)
			return ROCMD_ETIMEDOUT;
		/* Nothing yet: wait a slice, or less when the child ends (then
		 * the next peek sees the broken pipe). */
		WaitForSingleObject(c->process, left < 10 ? (DWORD)left + 1 : 10);
	}
	return 0;
}

static void
describe(DWORD code, char *what, size_t whatlen)
{
	if (code == KILLED_CODE)
		snprintf(what, whatlen, "killed");
	else if ((code & 0xC0000000u) == 0xC0000000u)
		snprintf(what, whatlen, "ended by exception 0x%08lX", (unsigned long)code);
	else
		snprintf(what, whatlen, "exited with %lu", (unsigned long)code);
}

void
measure_proc_stop(struct measure_proc *c, int kill_it, char *what, size_t whatlen)
{
	DWORD code = 0;

	if (c == NULL || c->process == NULL)
		return;
	close_pipes(c);
	if (kill_it)
		TerminateProcess(c->process, KILLED_CODE);
	WaitForSingleObject(c->process, INFINITE);
	if (what != NULL) {
		if (GetExitCodeProcess(c->process, &code))
			describe(code, what, whatlen);
		else
			snprintf(what, whatlen, "ended");
	}
	CloseHandle(c->process);
	c->process = NULL;
}

void
measure_proc_cancel(struct measure_proc *c)
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
measure_proc_kill(struct measure_proc *c)
{
	if (c != NULL && c->job != NULL)
		TerminateJobObject(c->job, KILLED_CODE);
}

void
measure_proc_free(struct measure_proc *c)
{
	if (c == NULL)
		return;
	measure_proc_stop(c, 0, NULL, 0);
	CloseHandle(c->job); /* kills anything still in it */
	free(c);
}

/* ---- the child ---- */

static int
io_read(void *ctx, void *buf, size_t len)
{
	return read_blocking(((HANDLE *)ctx)[0], buf, len);
}

static int
io_write(void *ctx, const void *buf, size_t len)
{
	return write_all(((HANDLE *)ctx)[1], buf, len);
}

int
tune_evaluator_child(int argc, char **argv)
{
	struct measure_io io;
	HANDLE h[2];
	unsigned long long rd, wr;
	char tail;

	if (argc < 2 || strcmp(argv[1], EVAL_ARG) != 0)
		return -1;
	if (argc != 4 || sscanf(argv[2], "%llu%c", &rd, &tail) != 1 ||
	    sscanf(argv[3], "%llu%c", &wr, &tail) != 1)
		return 2;
	/* A crashing candidate ends this process: no dialog, no debugger. */
	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
	h[0] = (HANDLE)(uintptr_t)rd;
	h[1] = (HANDLE)(uintptr_t)wr;
	io.read = io_read;
	io.write = io_write;
	io.ctx = h;
	return measure_child_serve(&io);
}
