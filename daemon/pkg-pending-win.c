/*
 * The Windows build's stand-in for the package store (methods-pkg.c,
 * pkg-*.c) until it is ported: its POSIX file code (openat, fsync of
 * folders, renames over open files) has no Windows counterpart yet. The
 * daemon, its pipe, the service glue and rocmctl work; the pkg.* methods
 * answer "not supported on this platform" with the reason, so a user sees
 * why rather than "method not found". daemon/CMakeLists.txt picks this file
 * only while ROCMD_WIN_PENDING is ON.
 */
#include <stdio.h>

#include "methods-pkg.h"
#include "methods.h"
#include "common/error.h"
#include "common/log.h"

static int
m_pending(struct rocmd_conn *conn, const cJSON *params, cJSON **result, char *why, size_t whylen)
{
	snprintf(why, whylen, "the package store is not ported to Windows yet");
	return ROCMD_EUNSUPPORTED;
}

const struct rocmd_method rocmd_methods_pkg[] = {
	{"pkg.import", ROCMD_METHOD_MUTATING, m_pending}, {"pkg.list", 0, m_pending},
	{"pkg.show", 0, m_pending}, {"pkg.rm", ROCMD_METHOD_MUTATING, m_pending},
	{"pkg.verify", 0, m_pending}, {"pkg.match", 0, m_pending}, {NULL, 0, NULL},
};

int
rocmd_pkg_start(struct rocmd_server *srv, char *why, size_t whylen)
{
	log_notice("package store: not ported to Windows yet");
	return 0;
}

void
rocmd_pkg_stop(void)
{
}
