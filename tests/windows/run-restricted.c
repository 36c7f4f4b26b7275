/*
 * run-restricted.exe: runs a program as a user who is not an Administrator,
 * for the deploy test's "a non-admin is refused" check (test-wlib-win.sh).
 * It makes this process's token into a restricted one in which
 * BUILTIN\Administrators is deny-only (what UAC gives a non-elevated admin),
 * says whether this process and that token count as admins
 * (CheckTokenMembership, the call rocmd's auth-win.c makes), then runs the
 * command line given with it (CreateProcessAsUserW) and exits with its exit
 * code. Run by itself, the inner one's first line says whether the token
 * reached the child.
 *
 * Usage: run-restricted.exe PROGRAM [ARGS...]
 * Exit: the program's exit code; 125 when the token cannot be made or the
 * program cannot be started.
 */
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>

/* The command line after our own program name, as CreateProcess wants it. */
static wchar_t *
rest_of_command_line(void)
{
	wchar_t *p = GetCommandLineW();
	int quoted = 0;

	for (; *p != L'\0'; p++) {
		if (*p == L'"')
			quoted = !quoted;
		else if (!quoted && (*p == L' ' || *p == L'\t'))
			break;
	}
	while (*p == L' ' || *p == L'\t')
		p++;
	return p;
}

int
main(void)
{
	SID_IDENTIFIER_AUTHORITY nt = {SECURITY_NT_AUTHORITY};
	SID_AND_ATTRIBUTES deny;
	HANDLE self = NULL, restricted = NULL, probe = NULL;
	PSID admins = NULL;
	BOOL member = TRUE;
	STARTUPINFOW si;
	PROCESS_INFORMATION pi;
	wchar_t *cmd = rest_of_command_line();
	DWORD code = 125;

	if (*cmd == L'\0') {
		fprintf(stderr, "usage: run-restricted.exe PROGRAM [ARGS...]\n");
		return 125;
	}
	if (!OpenProcessToken(GetCurrentProcess(),
	                      TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY |
	                          TOKEN_ADJUST_DEFAULT | TOKEN_ADJUST_SESSIONID,
	                      &self) ||
	    !AllocateAndInitializeSid(&nt, 2, SECURITY_BUILTIN_DOMAIN_RID, DOMAIN_ALIAS_RID_ADMINS,
	                              0, 0, 0, 0, 0, 0, &admins)) {
		fprintf(stderr, "run-restricted: cannot open the token: error %lu\n",
		        (unsigned long)GetLastError());
		return 125;
	}
	deny.Sid = admins;
	deny.Attributes = 0;
	if (!CreateRestrictedToken(self, 0, 1, &deny, 0, NULL, 0, NULL, &restricted)) {
		fprintf(stderr, "run-restricted: CreateRestrictedToken failed: error %lu\n",
		        (unsigned long)GetLastError());
		return 125;
	}
	if (CheckTokenMembership(NULL, admins, &member))
		printf("this process: Administrators %s\n", member ? "enabled" : "deny-only");
	member = TRUE;
	if (DuplicateToken(restricted, SecurityIdentification, &probe) &&
	    CheckTokenMembership(probe, admins, &member))
		printf("restricted token: Administrators %s\n",
		       member ? "still enabled" : "deny-only");
	else
		printf("restricted token: membership unknown (error %lu)\n",
		       (unsigned long)GetLastError());
	fflush(stdout);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	memset(&pi, 0, sizeof(pi));
	if (!CreateProcessAsUserW(restricted, NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si,
	                          &pi)) {
		fprintf(stderr, "run-restricted: CreateProcessAsUserW failed: error %lu\n",
		        (unsigned long)GetLastError());
		return 125;
	}
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return (int)code;
}
