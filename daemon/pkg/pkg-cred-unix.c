/*
 * Reading a package with its importer's rights, on Linux (see
 * rocmd_pkg_cred in pkg.h). The kernel checks file access against a
 * thread's file-system uid and gid and its supplementary groups, and all
 * three are per thread at the system-call level: setfsuid(2) and
 * setfsgid(2) change only the calling thread, and so does the raw
 * setgroups system call (glibc's setgroups() would change every thread of
 * the daemon, so it is not used). When the fsuid leaves 0 the kernel drops
 * the thread's file capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, ...)
 * and gives them back when it returns to 0, so while a read runs as the
 * importer, this thread can open nothing the importer could not, and the
 * rest of the daemon is untouched. The caller's supplementary groups come
 * from SO_PEERGROUPS, as the kernel recorded them at connect time.
 */
#include "pkg-service.h"

#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/error.h"
#include "daemon/core/server.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

int
rocmd_pkg_cred_of(struct rocmd_conn *conn, struct rocmd_pkg_cred **out)
{
	struct rocmd_pkg_cred *c;
	socklen_t len = 64 * sizeof(gid_t);
	uid_t uid = conn->peer.uid;
	gid_t gid = conn->peer.gid;
	uv_os_fd_t fd = -1;

	*out = NULL;
	if (uid == 0 || uid == geteuid())
		return 0;
	if (uv_fileno((const uv_handle_t *)&conn->pipe, &fd) != 0)
		fd = -1;
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->groups = malloc(len)) == NULL)
		goto oom;
	c->uid = uid;
	c->gid = gid;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) != 0) {
		gid_t *more;
		if (errno != ERANGE || (more = realloc(c->groups, len)) == NULL) {
			/* No list (an old kernel): the primary group only, which can
			 * only refuse more than the caller's own rights would. */
			len = 0;
		} else {
			c->groups = more;
			if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) != 0)
				len = 0;
		}
	}
	c->ngroups = len / sizeof(gid_t);
	*out = c;
	return 0;
oom:
	rocmd_pkg_cred_free(c);
	return ROCMD_ENOMEM;
}

void
rocmd_pkg_cred_free(struct rocmd_pkg_cred *c)
{
	if (c == NULL)
		return;
	free(c->groups);
	free(c);
}

/* The daemon's own supplementary groups, read once (every thread has them
 * while it is not reading as an importer). */
static pthread_once_t own_once = PTHREAD_ONCE_INIT;
static gid_t *own_groups;
static int own_ngroups = -1;

static void
load_own_groups(void)
{
	int n = getgroups(0, NULL);

	if (n < 0 || (own_groups = malloc(((size_t)n + 1) * sizeof(gid_t))) == NULL)
		return;
	own_ngroups = getgroups(n, own_groups);
}

int
rocmd_pkg_cred_enter(const struct rocmd_pkg_cred *c)
{
	if (c == NULL)
		return 0;
	pthread_once(&own_once, load_own_groups);
	if (own_ngroups < 0)
		return ROCMD_ENOMEM;
	if (syscall(SYS_setgroups, c->ngroups, c->groups) != 0)
		return -errno;
	/* setfsuid and setfsgid report the old value, never an error: read the
	 * new one back (-1 is no id, so it changes nothing). */
	setfsgid(c->gid);
	setfsuid(c->uid);
	if ((gid_t)setfsgid((gid_t)-1) != c->gid || (uid_t)setfsuid((uid_t)-1) != c->uid) {
		rocmd_pkg_cred_leave(c);
		return -EPERM;
	}
	return 0;
}

void
rocmd_pkg_cred_leave(const struct rocmd_pkg_cred *c)
{
	if (c == NULL)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	if (own_ngroups >= 0)
		syscall(SYS_setgroups, (size_t)own_ngroups, own_groups);
}
