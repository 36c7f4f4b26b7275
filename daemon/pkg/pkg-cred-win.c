/*
 * Reading a package with its importer's rights, on Windows: not done. The
 * pipe client connects with identification-level impersonation only, which
 * lets rocmd read its token's groups (daemon/core/auth-win.c) but not open
 * files as the client, and the token is not kept past the connection's
 * check. Imports on Windows are read with the service's own rights, and only
 * Administrators may ask for one (docs/PROTOCOL.md, pkg.import).
 */
#include "pkg-service.h"

#include "common/error.h"

int
rocmd_pkg_cred_of(struct rocmd_conn *conn, struct rocmd_pkg_cred **out)
{
	(void)conn;
	*out = NULL;
	return 0;
}

void
rocmd_pkg_cred_free(struct rocmd_pkg_cred *c)
{
	(void)c;
}

int
rocmd_pkg_cred_enter(const struct rocmd_pkg_cred *c)
{
	return c == NULL ? 0 : ROCMD_EUNSUPPORTED;
}

void
rocmd_pkg_cred_leave(const struct rocmd_pkg_cred *c)
{
	(void)c;
}
