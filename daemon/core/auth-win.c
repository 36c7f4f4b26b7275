/*
 * Who is calling, on Windows: the identity comes from the pipe connection
 * itself. The accept thread impersonates the client (whose rocmctl allowed
 * identification-level impersonation only: enough to read its token, not to
 * act as it), reads the thread token, reverts at once, and asks whether the
 * token is in BUILTIN\Administrators. Under UAC a non-elevated admin carries
 * Administrators as deny-only, so only an elevated client counts as admin,
 * which is the Windows equivalent of root. rocmd_peer.uid carries a hash of
 * the client's user SID (so per-user connection limits count users, not
 * processes; the pid when the token cannot be read) and .gid whether it is
 * an admin (compat-win.h).
 */
#include "ipc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/log.h"
#include "common/win-util.h"
#include "server.h"

void
rocmd_auth_resolve_group(const char *group, gid_t *gid, int *known)
{
	/* Windows has one admin group and needs no lookup. */
	*gid = 0;
	*known = 0;
	if (group != NULL && group[0] != '\0' && strcmp(group, "rocm") != 0)
		log_notice("ipc.admin_group '%s' is ignored on Windows: elevated Administrators "
			   "may change things",
			   group);
}

/* True when TOKEN (an impersonation token) is in BUILTIN\Administrators. */
static int
token_is_admin(HANDLE token)
{
	SID_IDENTIFIER_AUTHORITY nt = {SECURITY_NT_AUTHORITY};
	PSID admins = NULL;
	BOOL member = FALSE;

	if (!AllocateAndInitializeSid(&nt, 2, SECURITY_BUILTIN_DOMAIN_RID,
				      DOMAIN_ALIAS_RID_ADMINS, 0, 0, 0, 0, 0, 0, &admins))
		return 0;
	if (!CheckTokenMembership(token, admins, &member))
		member = FALSE;
	FreeSid(admins);
	return member != FALSE;
}

/* FNV-1a over the token user's SID: a stable number per user. 0 when unknown. */
static uid_t
token_user_id(HANDLE token)
{
	union {
		TOKEN_USER tu;
		char buf[256];
	} u;
	DWORD len = 0;
	uint32_t h = 2166136261u;
	const unsigned char *p;
	DWORD n;

	if (!GetTokenInformation(token, TokenUser, &u, sizeof(u), &len) ||
	    !IsValidSid(u.tu.User.Sid))
		return 0;
	p = u.tu.User.Sid;
	n = GetLengthSid(u.tu.User.Sid);
	for (DWORD i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return (uid_t)(h | 1); /* never 0 */
}

int
rocmd_auth_pipe_client(void *pipe, struct rocmd_peer *peer)
{
	HANDLE h = pipe, token = NULL;
	ULONG pid = 0;
	char msg[256];

	peer->pid = 0;
	peer->uid = 0;
	peer->gid = 0;
	peer->admin = 0;
	peer->session = -1;
	if (GetNamedPipeClientProcessId(h, &pid)) {
		peer->pid = (pid_t)pid;
		peer->uid = (uid_t)pid;
	}
	if (!ImpersonateNamedPipeClient(h)) {
		log_info("pipe client pid %lu: cannot read its token (%s); treating it as a reader",
			 (unsigned long)pid, rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
		return 0;
	}
	if (!OpenThreadToken(GetCurrentThread(), TOKEN_QUERY, TRUE, &token))
		token = NULL;
	/* Never keep running as the client: without the revert nothing is safe. */
	if (!RevertToSelf())
		abort();
	if (token == NULL) {
		log_info("pipe client pid %lu: no token (%s); treating it as a reader",
			 (unsigned long)pid, rocmd_win_strerror(GetLastError(), msg, sizeof(msg)));
		return 0;
	}
	peer->admin = token_is_admin(token);
	peer->gid = (gid_t)peer->admin;
	{
		DWORD session = 0, len = 0;

		if (GetTokenInformation(token, TokenSessionId, &session, sizeof(session), &len))
			peer->session = (long)session;
	}
	if (token_user_id(token) != 0)
		peer->uid = token_user_id(token);
	CloseHandle(token);
	return 0;
}
