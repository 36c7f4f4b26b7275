/*
 * Who is calling, on Linux: SO_PEERCRED gives the peer's pid, uid and gid as
 * the kernel recorded them at connect time, and SO_PEERGROUPS its
 * supplementary groups, so the decision needs no NSS lookup on the loop
 * thread. Root and members of the admin group may change things; everyone
 * else may read.
 */
#include "ipc.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/log.h"
#include "server.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

void
rocmd_auth_resolve_group(const char *group, gid_t *gid, int *known)
{
	struct group *gr = group != NULL && group[0] != '\0' ? getgrnam(group) : NULL;

	*known = gr != NULL;
	*gid = gr != NULL ? gr->gr_gid : (gid_t)-1;
	if (gr == NULL)
		log_notice("admin group '%s' does not exist: only root may change things",
			   group != NULL ? group : "");
}

static int
peer_in_group(int fd, gid_t want)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	int found = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
		if (errno != ERANGE)
			return 0;
		groups = malloc(len);
		if (groups == NULL || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0)
			goto out;
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == want)
			found = 1;
out:
	if (groups != small)
		free(groups);
	return found;
}

int
rocmd_auth_peer(int fd, gid_t admin_gid, int admin_gid_known, struct rocmd_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	peer->pid = 0;
	peer->uid = (uid_t)-1;
	peer->gid = (gid_t)-1;
	peer->admin = 0;
	peer->session = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -errno;
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	if (cred.uid == 0)
		peer->admin = 1;
	else if (admin_gid_known)
		peer->admin = cred.gid == admin_gid || peer_in_group(fd, admin_gid);
	return 0;
}
