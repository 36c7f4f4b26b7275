/*
 * rocmd as a Windows service: the SCM glue (see service.h).
 *
 * rocmd_service_run first offers the process to the service control
 * dispatcher. When the SCM started us, ServiceMain runs the daemon on its own
 * thread (the loop thread) while the dispatcher thread delivers controls to
 * control_handler, which only records the request and wakes the loop with
 * uv_async_send: STOP, SHUTDOWN and PRESHUTDOWN begin a graceful shutdown;
 * POWEREVENT and SESSIONCHANGE are logged and kept for the idle monitor.
 * When the dispatcher says we were not started by the SCM
 * (ERROR_FAILED_SERVICE_CONTROLLER_CONNECT), rocmd runs in the console.
 *
 * A failed start ends in SERVICE_STOPPED with ERROR_SERVICE_SPECIFIC_ERROR
 * and rocmd's exit code as the service-specific code, which is also what
 * makes the recovery actions (restart; enabled for non-crash failures too)
 * apply. Lifecycle messages go to the Application event log under the source
 * "rocmd", whose one message (%1) is compiled into rocmd.exe from
 * rocmd-messages.mc.
 *
 * "rocmd install" registers the service to run as NT AUTHORITY\LocalService
 * with an unrestricted service SID (NT SERVICE\rocmd), only the
 * SeChangeNotifyPrivilege, recovery actions and a pre-shutdown timeout, and
 * grants NT SERVICE\rocmd modify rights on %ProgramData%\rocmd;
 * "uninstall", "start" and "stop" do what they say; "purge" removes the
 * state folder (the MSI's uninstall with PURGE=1 runs it).
 */
#include "service.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <aclapi.h>

#include <uv.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/win-util.h"
#include "daemon/tune/idle.h"
#include "daemon/core/lockfile.h"
#include "daemon/core/server.h"

#define SERVICE_NAME L"rocmd"
#define EVENT_MSG_TEXT 1 /* the one message in rocmd-messages.mc: "%1" */
#define STOP_WAIT_HINT_MS 15000

enum {
	REQ_STOP = 1,
	REQ_POWER = 2,
	REQ_SESSION = 4,
};

static struct {
	int in_service; /* ServiceMain is running */
	rocmd_service_main_fn main_fn;
	int argc;
	char **argv;
	int exit_code;
	SERVICE_STATUS_HANDLE status_handle;
	SERVICE_STATUS status;
	CRITICAL_SECTION lock; /* guards status, the async handle's life and requests */
	int async_live;
	uv_async_t async;
	struct rocmd_server *srv;
	LONG requests;             /* REQ_* bits not yet seen by the loop */
	DWORD last_power, last_session;
	const char *stop_why;
} svc;

static void
event_log(WORD type, const char *text)
{
	HANDLE src = RegisterEventSourceW(NULL, SERVICE_NAME);
	wchar_t *w = rocmd_win_wide(text);
	const wchar_t *strings[1];

	if (src != NULL && w != NULL) {
		strings[0] = w;
		ReportEventW(src, type, 0, EVENT_MSG_TEXT, NULL, 1, 0, strings, NULL);
	}
	if (src != NULL)
		DeregisterEventSource(src);
	free(w);
}

static void
set_state(DWORD state, DWORD wait_hint)
{
	EnterCriticalSection(&svc.lock);
	svc.status.dwCurrentState = state;
	svc.status.dwWaitHint = wait_hint;
	svc.status.dwCheckPoint = state == SERVICE_RUNNING || state == SERVICE_STOPPED
					  ? 0
					  : svc.status.dwCheckPoint + 1;
	/* Controls are accepted only while running; STOP also while stopping. */
	svc.status.dwControlsAccepted =
		state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_PRESHUTDOWN |
						   SERVICE_ACCEPT_POWEREVENT |
						   SERVICE_ACCEPT_SESSIONCHANGE
					 : 0;
	if (svc.status_handle != NULL)
		SetServiceStatus(svc.status_handle, &svc.status);
	LeaveCriticalSection(&svc.lock);
}

/* The dispatcher thread: record, wake the loop, return at once. */
static DWORD WINAPI
control_handler(DWORD control, DWORD type, void *data, void *ctx)
{
	LONG bit;

	switch (control) {
	case SERVICE_CONTROL_INTERROGATE:
		return NO_ERROR;
	case SERVICE_CONTROL_STOP:
	case SERVICE_CONTROL_SHUTDOWN:
	case SERVICE_CONTROL_PRESHUTDOWN:
		svc.stop_why = control == SERVICE_CONTROL_STOP ? "service stop requested"
							       : "system shutdown";
		bit = REQ_STOP;
		set_state(SERVICE_STOP_PENDING, STOP_WAIT_HINT_MS);
		break;
	case SERVICE_CONTROL_POWEREVENT:
		svc.last_power = type;
		bit = REQ_POWER;
		/* The idle monitor's signals; DATA lives only during this call. */
		if (type == PBT_POWERSETTINGCHANGE && data != NULL) {
			const POWERBROADCAST_SETTING *ps = data;

			rocmd_idle_win_power_setting(&ps->PowerSetting, ps->Data, ps->DataLength);
		}
		break;
	case SERVICE_CONTROL_SESSIONCHANGE:
		svc.last_session = type;
		bit = REQ_SESSION;
		break;
	default:
		return ERROR_CALL_NOT_IMPLEMENTED;
	}
	EnterCriticalSection(&svc.lock);
	InterlockedOr(&svc.requests, bit);
	if (svc.async_live)
		uv_async_send(&svc.async);
	LeaveCriticalSection(&svc.lock);
	return NO_ERROR;
}

/* The loop thread: act on what the control handler recorded. */
static void
on_control(uv_async_t *a)
{
	LONG req = InterlockedExchange(&svc.requests, 0);

	if (req & REQ_POWER)
		log_info("power event 0x%lx", (unsigned long)svc.last_power);
	if (req & REQ_SESSION)
		log_info("session change 0x%lx", (unsigned long)svc.last_session);
	if ((req & REQ_STOP) && svc.srv != NULL)
		rocmd_server_shutdown(svc.srv, svc.stop_why != NULL ? svc.stop_why : "service stop");
}

static void WINAPI
service_main(DWORD argc, wchar_t **argv)
{
	char msg[128];

	svc.status_handle = RegisterServiceCtrlHandlerExW(SERVICE_NAME, control_handler, NULL);
	if (svc.status_handle == NULL) {
		svc.exit_code = 1;
		return;
	}
	svc.in_service = 1;
	if (rocmd_idle_win_register(svc.status_handle) < 0)
		log_warn("cannot register the power setting notifications: %lu",
			 (unsigned long)GetLastError());
	svc.status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
	set_state(SERVICE_START_PENDING, 30000);
	/* The arguments are the ImagePath's (the process's own), not the start's. */
	svc.exit_code = svc.main_fn(svc.argc, svc.argv);
	if (svc.exit_code != 0) {
		svc.status.dwWin32ExitCode = ERROR_SERVICE_SPECIFIC_ERROR;
		svc.status.dwServiceSpecificExitCode = (DWORD)svc.exit_code;
		snprintf(msg, sizeof(msg), "rocmd stopped with exit code %d", svc.exit_code);
		event_log(EVENTLOG_ERROR_TYPE, msg);
	} else {
		svc.status.dwWin32ExitCode = NO_ERROR;
		event_log(EVENTLOG_INFORMATION_TYPE, "rocmd stopped");
	}
	set_state(SERVICE_STOPPED, 0);
}

/* ---- install, uninstall, start, stop ---- */

static int
fail(const char *what)
{
	char msg[256];

	fprintf(stderr, "rocmd: %s: %s\n", what, rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
	return 1;
}

static void
warn(const char *what)
{
	char msg[256];

	fprintf(stderr, "rocmd: warning: %s: %s\n", what,
		rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
}

/* %ProgramData%\rocmd, with modify rights for NT SERVICE\rocmd added. */
static void
grant_state_dir(void)
{
	EXPLICIT_ACCESSW ea = {0};
	PACL old = NULL, acl = NULL;
	PSECURITY_DESCRIPTOR sd = NULL;
	char *dir = rocmd_paths_default_state_dir();
	wchar_t *w = dir != NULL ? rocmd_win_wide(dir) : NULL;
	DWORD rc;

	if (w == NULL || rocmd_paths_mkdir_p(dir, 0755) < 0) {
		fprintf(stderr, "rocmd: warning: cannot create %s\n", dir != NULL ? dir : "");
		goto out;
	}
	ea.grfAccessPermissions = FILE_GENERIC_READ | FILE_GENERIC_WRITE | FILE_GENERIC_EXECUTE | DELETE;
	ea.grfAccessMode = GRANT_ACCESS;
	ea.grfInheritance = SUB_CONTAINERS_AND_OBJECTS_INHERIT;
	ea.Trustee.TrusteeForm = TRUSTEE_IS_NAME;
	ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
	ea.Trustee.ptstrName = L"NT SERVICE\\rocmd";
	rc = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &old,
				   NULL, &sd);
	if (rc == ERROR_SUCCESS)
		rc = SetEntriesInAclW(1, &ea, old, &acl);
	if (rc == ERROR_SUCCESS)
		rc = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					   acl, NULL);
	if (rc != ERROR_SUCCESS) {
		SetLastError(rc);
		warn("cannot grant NT SERVICE\\rocmd rights on the state folder");
	} else {
		printf("granted NT SERVICE\\rocmd modify rights on %s\n", dir);
	}
	if (acl != NULL)
		LocalFree(acl);
	if (sd != NULL)
		LocalFree(sd);
out:
	free(w);
	free(dir);
}

static void
register_event_source(const wchar_t *exe)
{
	HKEY key;
	DWORD types = EVENTLOG_ERROR_TYPE | EVENTLOG_WARNING_TYPE | EVENTLOG_INFORMATION_TYPE;

	if (RegCreateKeyExW(HKEY_LOCAL_MACHINE,
			    L"SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application\\rocmd", 0,
			    NULL, 0, KEY_SET_VALUE, NULL, &key, NULL) != ERROR_SUCCESS) {
		warn("cannot register the event log source");
		return;
	}
	RegSetValueExW(key, L"EventMessageFile", 0, REG_EXPAND_SZ, (const BYTE *)exe,
		       (DWORD)((wcslen(exe) + 1) * sizeof(wchar_t)));
	RegSetValueExW(key, L"TypesSupported", 0, REG_DWORD, (const BYTE *)&types, sizeof(types));
	RegCloseKey(key);
}

static int
cmd_install(SC_HANDLE scm)
{
	wchar_t exe[MAX_PATH], cmd[MAX_PATH + 32];
	SERVICE_DESCRIPTIONW desc = {
		L"Keeps tuned rocBLAS libraries in sync with the HIP SDKs on this machine."};
	SC_ACTION actions[3] = {
		{SC_ACTION_RESTART, 5000}, {SC_ACTION_RESTART, 30000}, {SC_ACTION_RESTART, 120000}};
	SERVICE_FAILURE_ACTIONSW fa = {86400, NULL, NULL, 3, actions};
	SERVICE_FAILURE_ACTIONS_FLAG faf = {TRUE};
	SERVICE_SID_INFO sid = {SERVICE_SID_TYPE_UNRESTRICTED};
	SERVICE_PRESHUTDOWN_INFO pre = {STOP_WAIT_HINT_MS};
	/* REG_MULTI_SZ: the one privilege kept; everything else is dropped. */
	SERVICE_REQUIRED_PRIVILEGES_INFOW privs = {L"SeChangeNotifyPrivilege\0"};
	SC_HANDLE s;

	if (GetModuleFileNameW(NULL, exe, MAX_PATH) == 0)
		return fail("cannot find rocmd.exe's own path");
	swprintf(cmd, sizeof(cmd) / sizeof(cmd[0]), L"\"%ls\" --foreground", exe);
	s = CreateServiceW(scm, SERVICE_NAME, L"rocmd (tuned rocBLAS keeper)", SERVICE_ALL_ACCESS,
			   SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, cmd,
			   NULL, NULL, NULL, L"NT AUTHORITY\\LocalService", NULL);
	if (s == NULL)
		return fail("cannot create the service");
	/* The hardening and recovery settings: each is reported if refused. */
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_DESCRIPTION, &desc))
		warn("cannot set the description");
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_FAILURE_ACTIONS, &fa))
		warn("cannot set the recovery actions");
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &faf))
		warn("cannot enable recovery for non-crash failures");
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_SERVICE_SID_INFO, &sid))
		warn("cannot give the service its own SID");
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_REQUIRED_PRIVILEGES_INFO, &privs))
		warn("cannot restrict the service's privileges");
	if (!ChangeServiceConfig2W(s, SERVICE_CONFIG_PRESHUTDOWN_INFO, &pre))
		warn("cannot set the pre-shutdown timeout");
	CloseServiceHandle(s);
	register_event_source(exe);
	grant_state_dir();
	printf("installed service rocmd (%ls) as NT AUTHORITY\\LocalService\n", cmd);
	return 0;
}

/* Waits up to 60 s for the service to leave a pending state. */
static int
wait_state(SC_HANDLE s, DWORD want, SERVICE_STATUS_PROCESS *st)
{
	DWORD n;

	for (int i = 0; i < 600; i++) {
		if (!QueryServiceStatusEx(s, SC_STATUS_PROCESS_INFO, (BYTE *)st, sizeof(*st), &n))
			return 0;
		if (st->dwCurrentState == want ||
		    (st->dwCurrentState != SERVICE_START_PENDING &&
		     st->dwCurrentState != SERVICE_STOP_PENDING))
			return st->dwCurrentState == want;
		Sleep(100);
	}
	return 0;
}

static int
cmd_start(SC_HANDLE scm)
{
	SERVICE_STATUS_PROCESS st = {0};
	SC_HANDLE s = OpenServiceW(scm, SERVICE_NAME, SERVICE_START | SERVICE_QUERY_STATUS);

	if (s == NULL)
		return fail("cannot open the service");
	if (!StartServiceW(s, 0, NULL) && GetLastError() != ERROR_SERVICE_ALREADY_RUNNING) {
		CloseServiceHandle(s);
		return fail("cannot start the service");
	}
	if (!wait_state(s, SERVICE_RUNNING, &st)) {
		fprintf(stderr, "rocmd: the service did not start (exit code %lu, service code %lu); "
			"see the Application event log\n",
			(unsigned long)st.dwWin32ExitCode, (unsigned long)st.dwServiceSpecificExitCode);
		CloseServiceHandle(s);
		return 1;
	}
	printf("rocmd is running (pid %lu)\n", (unsigned long)st.dwProcessId);
	CloseServiceHandle(s);
	return 0;
}

static int
cmd_stop(SC_HANDLE scm, int quiet)
{
	SERVICE_STATUS_PROCESS st = {0};
	SERVICE_STATUS ss;
	SC_HANDLE s = OpenServiceW(scm, SERVICE_NAME, SERVICE_STOP | SERVICE_QUERY_STATUS);

	if (s == NULL)
		return quiet ? 0 : fail("cannot open the service");
	if (!ControlService(s, SERVICE_CONTROL_STOP, &ss) &&
	    GetLastError() != ERROR_SERVICE_NOT_ACTIVE) {
		CloseServiceHandle(s);
		return quiet ? 0 : fail("cannot stop the service");
	}
	if (!wait_state(s, SERVICE_STOPPED, &st)) {
		fprintf(stderr, "rocmd: the service did not stop\n");
		CloseServiceHandle(s);
		return 1;
	}
	if (!quiet)
		printf("rocmd stopped\n");
	CloseServiceHandle(s);
	return 0;
}

static int
cmd_uninstall(SC_HANDLE scm)
{
	SC_HANDLE s;

	cmd_stop(scm, 1);
	s = OpenServiceW(scm, SERVICE_NAME, DELETE);
	if (s == NULL)
		return fail("cannot open the service");
	if (!DeleteService(s)) {
		CloseServiceHandle(s);
		return fail("cannot delete the service");
	}
	CloseServiceHandle(s);
	RegDeleteKeyW(HKEY_LOCAL_MACHINE,
		      L"SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application\\rocmd");
	printf("uninstalled service rocmd (the state in %%ProgramData%%\\rocmd is kept)\n");
	return 0;
}

/* purge: the state folder removed (the database, the package store, the
 * backups of the originals, overlays, tuned libraries) once the service has
 * stopped; refused while a rocmd holds the folder's lock. The MSI runs it at
 * uninstall when asked (msiexec /x ... PURGE=1). Links and junctions inside
 * are removed, never followed (rocmd_fs_remove_tree_in). */
static int
cmd_purge(SC_HANDLE scm)
{
	char *dir = rocmd_paths_default_state_dir(), lock[MAX_PATH + 32];
	struct rocmd_fs_fail ff;
	pid_t holder = 0;
	int fd, rc;

	if (dir == NULL) {
		fprintf(stderr, "rocmd: out of memory\n");
		return 1;
	}
	cmd_stop(scm, 1);
	if (rocmd_fs_kind_in(NULL, dir, NULL, NULL) <= 0) {
		printf("nothing to purge: %s does not exist\n", dir);
		free(dir);
		return 0;
	}
	snprintf(lock, sizeof(lock), "%s\\rocmd.lock", dir);
	if ((fd = rocmd_lockfile_acquire(lock, &holder)) < 0) {
		fprintf(stderr, "rocmd: a rocmd (process %ld) still uses %s: nothing removed\n",
		        (long)holder, dir);
		free(dir);
		return 1;
	}
	rocmd_lockfile_release(fd);
	memset(&ff, 0, sizeof(ff));
	if ((rc = rocmd_fs_remove_tree_in(NULL, dir, &ff)) < 0) {
		fprintf(stderr, "rocmd: cannot remove %s: %s%s%s\n", dir, rocmd_strerror(rc),
		        ff.err ? "; first at " : "", ff.err ? ff.path : "");
		free(dir);
		return 1;
	}
	printf("purged %s (the database, the package store and the backups of the originals)\n",
	       dir);
	free(dir);
	return 0;
}

static int
manage(const char *cmd)
{
	SC_HANDLE scm = OpenSCManagerW(NULL, NULL, SC_MANAGER_ALL_ACCESS);
	int rc;

	if (scm == NULL)
		return fail("cannot open the service control manager (run as Administrator)");
	if (strcmp(cmd, "install") == 0)
		rc = cmd_install(scm);
	else if (strcmp(cmd, "uninstall") == 0)
		rc = cmd_uninstall(scm);
	else if (strcmp(cmd, "start") == 0)
		rc = cmd_start(scm);
	else if (strcmp(cmd, "purge") == 0)
		rc = cmd_purge(scm);
	else
		rc = cmd_stop(scm, 0);
	CloseServiceHandle(scm);
	return rc;
}

int
rocmd_service_run(int argc, char **argv, rocmd_service_main_fn main_fn)
{
	SERVICE_TABLE_ENTRYW table[] = {{SERVICE_NAME, service_main}, {NULL, NULL}};

	InitializeCriticalSection(&svc.lock);
	if (argc == 2 && (strcmp(argv[1], "install") == 0 || strcmp(argv[1], "uninstall") == 0 ||
			  strcmp(argv[1], "start") == 0 || strcmp(argv[1], "stop") == 0 ||
			  strcmp(argv[1], "purge") == 0))
		return manage(argv[1]);
	svc.main_fn = main_fn;
	svc.argc = argc;
	svc.argv = argv;
	if (StartServiceCtrlDispatcherW(table))
		return svc.exit_code;
	if (GetLastError() != ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
		return fail("cannot connect to the service control manager");
	/* Not started by the SCM: a console process like any other. */
	return main_fn(argc, argv);
}

int
rocmd_service_managed(void)
{
	return svc.in_service;
}

int
rocmd_service_attach(struct rocmd_server *srv)
{
	int rc;

	if (!svc.in_service)
		return 0;
	rc = uv_async_init(srv->loop, &svc.async, on_control);
	if (rc < 0)
		return rc;
	uv_unref((uv_handle_t *)&svc.async);
	EnterCriticalSection(&svc.lock);
	svc.srv = srv;
	svc.async_live = 1;
	/* A control that came before the loop existed is acted on now. */
	if (svc.requests != 0)
		uv_async_send(&svc.async);
	LeaveCriticalSection(&svc.lock);
	return 0;
}

void
rocmd_service_detach(void)
{
	EnterCriticalSection(&svc.lock);
	if (svc.async_live) {
		svc.async_live = 0;
		svc.srv = NULL;
		uv_close((uv_handle_t *)&svc.async, NULL);
	}
	LeaveCriticalSection(&svc.lock);
}

void
rocmd_service_ready(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!svc.in_service)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	set_state(SERVICE_RUNNING, 0);
	event_log(EVENTLOG_INFORMATION_TYPE, msg);
}

void
rocmd_service_status(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!svc.in_service)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	event_log(strncmp(msg, "Failed", 6) == 0 ? EVENTLOG_ERROR_TYPE : EVENTLOG_INFORMATION_TYPE,
		  msg);
}

void
rocmd_service_stopping(const char *why)
{
	if (svc.in_service)
		set_state(SERVICE_STOP_PENDING, STOP_WAIT_HINT_MS);
}

int
rocmd_service_listen_fd(void)
{
	return -1;
}
