/*
 * The Windows build's stand-in for deploy in the daemon (methods-lib.c,
 * deploy-sync.c) until the deploy engine and the package store are ported:
 * the lib.* methods answer "not supported on this platform" with the reason.
 * gpu-users-win.c (the Restart Manager's list of processes using a file)
 * builds already. daemon/CMakeLists.txt picks this file on WIN32.
 */
#include <stdio.h>

#include "common/error.h"
#include "common/log.h"
#include "deploy-sync.h"
#include "methods-lib.h"
#include "methods.h"

static int
m_pending(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	snprintf(why, whylen, "deploy is not ported to Windows yet");
	return ROCMD_EUNSUPPORTED;
}

const struct rocmd_method rocmd_methods_lib[] = {
    {"lib.status", 0, m_pending},
    {"lib.deploy", ROCMD_METHOD_MUTATING, m_pending},
    {"lib.verify", ROCMD_METHOD_MUTATING, m_pending},
    {"lib.history", 0, m_pending},
    {"lib.rollback", ROCMD_METHOD_MUTATING, m_pending},
    {NULL, 0, NULL},
};

int
rocmd_lib_start(struct rocmd_server *srv, const struct rocmd_lib_start_opts *o, char *why,
                size_t whylen)
{
	log_notice("deploy: not ported to Windows yet");
	return 0;
}

void
rocmd_lib_stop(void)
{
}

void
rocmd_deploy_sync_start(struct rocmd_server *srv)
{
}
