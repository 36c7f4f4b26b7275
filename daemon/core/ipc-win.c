/*
 * The named-pipe endpoint of the daemon on Windows.
 *
 * libuv's own pipe server (uv_pipe_bind) creates its instances with the
 * default security descriptor, accepts remote clients and does not insist on
 * owning the name, so rocmd creates the instances itself:
 *
 *  - an explicit DACL: SYSTEM, Administrators and rocmd's own account get
 *    full control; interactive users may read and write, but not create
 *    instances (FILE_CREATE_PIPE_INSTANCE), so no user can put a server of
 *    their own behind our name;
 *  - PIPE_REJECT_REMOTE_CLIENTS: the pipe is not reachable over SMB;
 *  - FILE_FLAG_FIRST_PIPE_INSTANCE on the first instance: if any process
 *    already created \\.\pipe\rocmd (a squatter waiting for our clients'
 *    requests), creation fails with ERROR_ACCESS_DENIED and rocmd refuses to
 *    start, naming that process when it can (a WaitNamedPipe probe first
 *    catches the same where the flag is not honoured, as under wine);
 *  - FILE_FLAG_OVERLAPPED, so libuv can drive the connection with its I/O
 *    completion port.
 *
 * libuv's uv_pipe_open takes a connected pipe end, not a server, so an
 * accept thread keeps a few instances waiting in ConnectNamedPipe
 * (overlapped, one event each, plus a stop event), identifies each client
 * from its token as soon as it connects (auth-win.c), and queues the handle
 * for the loop thread, woken with uv_async_send. The loop thread wraps the
 * handle in a C runtime descriptor, hands it to uv_pipe_open and adopts the
 * connection like any other stream. The thread is the only code that waits;
 * the loop never blocks on the pipe.
 */
#include "ipc.h"

#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>
#include <sddl.h>

#include "common/error.h"
#include "common/log.h"
#include "common/win-util.h"
#include "server.h"

#define PIPE_PREFIX "\\\\.\\pipe\\"
#define WAITING_INSTANCES 4 /* instances waiting for a client at once */
#define PIPE_BUFFER 65536
/* FILE_GENERIC_READ | FILE_GENERIC_WRITE without FILE_APPEND_DATA, which on a
 * pipe is FILE_CREATE_PIPE_INSTANCE. */
#define CLIENT_RIGHTS L"0x0012019b"

struct accepted {
	HANDLE pipe;
	struct rocmd_peer peer;
	struct accepted *next;
};

struct slot {
	HANDLE pipe; /* INVALID_HANDLE_VALUE while it could not be made */
	OVERLAPPED ov;
	int pending; /* ConnectNamedPipe in flight */
};

static struct {
	struct rocmd_server *srv;
	wchar_t *name;
	PSECURITY_DESCRIPTOR sd;
	SECURITY_ATTRIBUTES sa;
	HANDLE first; /* the FIRST_PIPE_INSTANCE handle, until the thread takes it */
	HANDLE stop;  /* manual-reset: the accept thread ends */
	HANDLE thread;
	struct slot slots[WAITING_INSTANCES];
	CRITICAL_SECTION lock; /* guards the queue */
	struct accepted *head, *tail;
	uv_async_t async;
} ipc;

/* The DACL in SDDL; our own account's SID is filled in at run time. */
static int
make_security(char *why, size_t whylen)
{
	TOKEN_USER *user = NULL;
	wchar_t *self = NULL, sddl[512];
	HANDLE token = NULL;
	DWORD len = 0;
	char msg[256];
	int rc = ROCMD_EINTERNAL;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
		goto fail;
	GetTokenInformation(token, TokenUser, NULL, 0, &len);
	user = malloc(len);
	if (user == NULL || !GetTokenInformation(token, TokenUser, user, len, &len) ||
	    !ConvertSidToStringSidW(user->User.Sid, &self))
		goto fail;
	swprintf(sddl, sizeof(sddl) / sizeof(sddl[0]),
		 L"D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GA;;;%ls)(A;;" CLIENT_RIGHTS L";;;IU)", self);
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &ipc.sd,
								  NULL))
		goto fail;
	ipc.sa.nLength = sizeof(ipc.sa);
	ipc.sa.lpSecurityDescriptor = ipc.sd;
	ipc.sa.bInheritHandle = FALSE;
	rc = 0;
fail:
	if (rc < 0)
		snprintf(why, whylen, "cannot build the pipe's security descriptor: %s",
			 rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
	if (self != NULL)
		LocalFree(self);
	free(user);
	if (token != NULL)
		CloseHandle(token);
	return rc;
}

static HANDLE
create_instance(DWORD extra_flags)
{
	return CreateNamedPipeW(ipc.name,
				PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | extra_flags,
				PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
					PIPE_REJECT_REMOTE_CLIENTS,
				PIPE_UNLIMITED_INSTANCES, PIPE_BUFFER, PIPE_BUFFER, 0, &ipc.sa);
}

/* Starts waiting for a client on slot S; a client already there signals at once. */
static void
slot_listen(struct slot *s)
{
	ResetEvent(s->ov.hEvent);
	s->pending = 0;
	if (s->pipe == INVALID_HANDLE_VALUE)
		return;
	if (ConnectNamedPipe(s->pipe, &s->ov)) {
		SetEvent(s->ov.hEvent);
		return;
	}
	switch (GetLastError()) {
	case ERROR_IO_PENDING:
		s->pending = 1;
		break;
	case ERROR_PIPE_CONNECTED:
		SetEvent(s->ov.hEvent);
		break;
	default:
		/* The client came and went (ERROR_NO_DATA) or the instance broke:
		 * replace the instance on the next turn. */
		CloseHandle(s->pipe);
		s->pipe = INVALID_HANDLE_VALUE;
		break;
	}
}

static void
queue_connection(HANDLE pipe)
{
	struct accepted *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		CloseHandle(pipe);
		return;
	}
	a->pipe = pipe;
	rocmd_auth_pipe_client(pipe, &a->peer);
	EnterCriticalSection(&ipc.lock);
	if (ipc.tail != NULL)
		ipc.tail->next = a;
	else
		ipc.head = a;
	ipc.tail = a;
	LeaveCriticalSection(&ipc.lock);
	uv_async_send(&ipc.async);
}

static DWORD WINAPI
accept_thread(void *arg)
{
	HANDLE waits[WAITING_INSTANCES + 1];
	char msg[256];

	for (int i = 0; i < WAITING_INSTANCES; i++) {
		struct slot *s = &ipc.slots[i];
		s->pipe = i == 0 ? ipc.first : create_instance(0);
		waits[i] = s->ov.hEvent;
		slot_listen(s);
	}
	ipc.first = INVALID_HANDLE_VALUE;
	waits[WAITING_INSTANCES] = ipc.stop;
	for (;;) {
		int broken = 0;
		DWORD r, n;

		for (int i = 0; i < WAITING_INSTANCES; i++)
			broken |= ipc.slots[i].pipe == INVALID_HANDLE_VALUE;
		/* A broken slot is retried every half second; otherwise sleep until a
		 * client or the stop event arrives. */
		r = WaitForMultipleObjects(WAITING_INSTANCES + 1, waits, FALSE,
					   broken ? 500 : INFINITE);
		if (r == WAIT_OBJECT_0 + WAITING_INSTANCES)
			break;
		if (r == WAIT_TIMEOUT) {
			for (int i = 0; i < WAITING_INSTANCES; i++) {
				struct slot *s = &ipc.slots[i];
				if (s->pipe != INVALID_HANDLE_VALUE)
					continue;
				s->pipe = create_instance(0);
				if (s->pipe == INVALID_HANDLE_VALUE)
					log_warn("cannot create a pipe instance: %s",
						 rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
				slot_listen(s);
			}
			continue;
		}
		if (r >= WAIT_OBJECT_0 + WAITING_INSTANCES) {
			log_err("accept thread: wait failed: %s",
				rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
			Sleep(100);
			continue;
		}
		struct slot *s = &ipc.slots[r - WAIT_OBJECT_0];
		if (s->pipe == INVALID_HANDLE_VALUE) {
			ResetEvent(s->ov.hEvent);
			continue;
		}
		if (!s->pending || GetOverlappedResult(s->pipe, &s->ov, &n, FALSE) ||
		    GetLastError() == ERROR_PIPE_CONNECTED)
			queue_connection(s->pipe);
		else
			CloseHandle(s->pipe); /* the client left before we saw it */
		s->pipe = create_instance(0);
		slot_listen(s);
	}
	for (int i = 0; i < WAITING_INSTANCES; i++) {
		struct slot *s = &ipc.slots[i];
		DWORD n;
		if (s->pipe == INVALID_HANDLE_VALUE)
			continue;
		/* The OVERLAPPED must outlive the operation: cancel, then wait for it. */
		if (s->pending && CancelIoEx(s->pipe, &s->ov))
			GetOverlappedResult(s->pipe, &s->ov, &n, TRUE);
		CloseHandle(s->pipe);
		s->pipe = INVALID_HANDLE_VALUE;
	}
	return 0;
}

/* The loop thread: each queued client becomes a libuv stream. */
static void
on_accepted(uv_async_t *async)
{
	struct rocmd_server *srv = ipc.srv;
	struct accepted *list;

	EnterCriticalSection(&ipc.lock);
	list = ipc.head;
	ipc.head = ipc.tail = NULL;
	LeaveCriticalSection(&ipc.lock);
	while (list != NULL) {
		struct accepted *a = list;
		struct rocmd_conn *conn = rocmd_conn_new(srv);
		int fd = -1, rc = UV_ENOMEM;

		list = a->next;
		if (conn != NULL) {
			fd = _open_osfhandle((intptr_t)a->pipe, 0);
			rc = fd < 0 ? UV_EMFILE : uv_pipe_open(&conn->pipe, fd);
		}
		if (rc < 0) {
			log_warn("accept: %s", uv_strerror(rc));
			if (fd >= 0)
				_close(fd);
			else
				CloseHandle(a->pipe);
			if (conn != NULL)
				rocmd_conn_discard(conn);
		} else {
			conn->peer = a->peer;
			rocmd_server_adopt(srv, conn);
		}
		free(a);
	}
}

/* Who holds NAME: the server process id seen from a client connection, or 0. */
static unsigned long
pipe_owner(void)
{
	HANDLE h = CreateFileW(ipc.name, GENERIC_READ, 0, NULL, OPEN_EXISTING,
			       SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, NULL);
	ULONG pid = 0;

	if (h == INVALID_HANDLE_VALUE)
		return 0;
	if (!GetNamedPipeServerProcessId(h, &pid))
		pid = 0;
	CloseHandle(h);
	return pid;
}

static void
release_all(void)
{
	for (int i = 0; i < WAITING_INSTANCES; i++)
		if (ipc.slots[i].ov.hEvent != NULL) {
			CloseHandle(ipc.slots[i].ov.hEvent);
			ipc.slots[i].ov.hEvent = NULL;
		}
	if (ipc.stop != NULL)
		CloseHandle(ipc.stop);
	ipc.stop = NULL;
	if (ipc.sd != NULL)
		LocalFree(ipc.sd);
	ipc.sd = NULL;
	free(ipc.name);
	ipc.name = NULL;
}

int
rocmd_ipc_listen(struct rocmd_server *srv, const char *path, char *why, size_t whylen)
{
	char msg[256];
	DWORD err;
	int rc;

	if (_strnicmp(path, PIPE_PREFIX, strlen(PIPE_PREFIX)) != 0 ||
	    strlen(path) == strlen(PIPE_PREFIX)) {
		snprintf(why, whylen, "%s is not a pipe name: on Windows rocmd listens on a named "
			 "pipe such as \\\\.\\pipe\\rocmd", path);
		return ROCMD_EINVAL;
	}
	memset(&ipc, 0, sizeof(ipc));
	ipc.srv = srv;
	ipc.first = INVALID_HANDLE_VALUE;
	ipc.name = rocmd_win_wide(path);
	if (ipc.name == NULL) {
		snprintf(why, whylen, "invalid pipe name %s", path);
		return ROCMD_EINVAL;
	}
	rc = make_security(why, whylen);
	if (rc < 0)
		goto fail;
	/*
	 * FILE_FLAG_FIRST_PIPE_INSTANCE is the race-free check on Windows; the
	 * probe before it also catches a squatter where the flag is ignored
	 * (wine 8 does), without connecting to it.
	 */
	if (WaitNamedPipeW(ipc.name, 1) || GetLastError() == ERROR_SEM_TIMEOUT ||
	    GetLastError() == ERROR_PIPE_BUSY) {
		ipc.first = INVALID_HANDLE_VALUE;
		SetLastError(ERROR_ACCESS_DENIED);
	} else {
		ipc.first = create_instance(FILE_FLAG_FIRST_PIPE_INSTANCE);
	}
	if (ipc.first == INVALID_HANDLE_VALUE) {
		err = GetLastError();
		if (err == ERROR_ACCESS_DENIED || err == ERROR_PIPE_BUSY) {
			unsigned long owner = pipe_owner();
			char pid[48] = "";
			if (owner != 0)
				snprintf(pid, sizeof(pid), " (pid %lu)", owner);
			snprintf(why, whylen,
				 "the pipe %s already exists: another process%s created it first. "
				 "rocmd never shares its pipe name (a process holding it could read "
				 "its clients' requests); stop that process and start rocmd again",
				 path, pid);
			rc = ROCMD_EBUSY;
		} else {
			snprintf(why, whylen, "cannot create the pipe %s: %s", path,
				 rocmd_win_strerror(err, msg, sizeof(msg)));
			rc = rocmd_win_error(err);
		}
		goto fail;
	}
	ipc.stop = CreateEventW(NULL, TRUE, FALSE, NULL);
	for (int i = 0; i < WAITING_INSTANCES; i++) {
		ipc.slots[i].pipe = INVALID_HANDLE_VALUE;
		ipc.slots[i].ov.hEvent = CreateEventW(NULL, TRUE, FALSE, NULL);
		if (ipc.slots[i].ov.hEvent == NULL)
			ipc.stop = NULL;
	}
	if (ipc.stop == NULL) {
		snprintf(why, whylen, "cannot create events: %s",
			 rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
		rc = ROCMD_ENOMEM;
		goto fail;
	}
	InitializeCriticalSection(&ipc.lock);
	rc = uv_async_init(srv->loop, &ipc.async, on_accepted);
	if (rc < 0) {
		snprintf(why, whylen, "cannot set up the accept queue: %s", uv_strerror(rc));
		DeleteCriticalSection(&ipc.lock);
		goto fail;
	}
	ipc.thread = CreateThread(NULL, 0, accept_thread, NULL, 0, NULL);
	if (ipc.thread == NULL) {
		snprintf(why, whylen, "cannot start the accept thread: %s",
			 rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
		uv_close((uv_handle_t *)&ipc.async, NULL);
		rc = ROCMD_ENOMEM;
		goto fail;
	}
	srv->listening = 1;
	free(srv->socket_path);
	srv->socket_path = strdup(path);
	log_notice("listening on %s", path);
	return 0;
fail:
	if (ipc.first != INVALID_HANDLE_VALUE)
		CloseHandle(ipc.first);
	ipc.first = INVALID_HANDLE_VALUE;
	release_all();
	return rc;
}

static void
on_async_closed(uv_handle_t *h)
{
	struct rocmd_server *srv = ipc.srv;

	DeleteCriticalSection(&ipc.lock);
	release_all();
	srv->listening = 0;
	rocmd_server_check_done(srv);
}

void
rocmd_ipc_close(struct rocmd_server *srv)
{
	struct accepted *list;

	if (!srv->listening || ipc.thread == NULL)
		return;
	SetEvent(ipc.stop);
	WaitForSingleObject(ipc.thread, INFINITE);
	CloseHandle(ipc.thread);
	ipc.thread = NULL;
	/* Clients that connected but were never adopted are simply hung up on. */
	EnterCriticalSection(&ipc.lock);
	list = ipc.head;
	ipc.head = ipc.tail = NULL;
	LeaveCriticalSection(&ipc.lock);
	while (list != NULL) {
		struct accepted *a = list;
		list = a->next;
		CloseHandle(a->pipe);
		free(a);
	}
	uv_close((uv_handle_t *)&ipc.async, on_async_closed);
}
