/*
 * The deploy engine's Linux primitives: the atomic folder swap
 * (renameat2 RENAME_EXCHANGE, which ext4, xfs, btrfs and tmpfs support; on
 * file systems without it the engine falls back to two renames and says
 * so in the result), and the removal of a binary renamed aside (a plain
 * unlink: a mapped library stays valid for the processes that loaded it).
 */
#include "deploy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "common/error.h"
#include "common/failpoint.h"

int
deploy_os_exchange(const char *a, const char *b)
{
	int rc = ROCMD_FAILPOINT("deploy.exchange");

	if (rc == 0 && renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
		rc = -errno;
	/* EINVAL: the file system has no RENAME_EXCHANGE; ENOSYS: the kernel. */
	if (rc == -EINVAL || rc == -ENOSYS)
		return ROCMD_EUNSUPPORTED;
	return rc < 0 ? rocmd_err_errno(-rc) : 0;
}

int
deploy_os_remove_aside(const char *path)
{
	return rocmd_fs_unlink(path);
}
