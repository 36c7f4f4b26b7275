/*
 * The deploy engine's Windows primitives. NTFS has no atomic exchange of two
 * folders, so deploy_os_exchange answers "unsupported" and the engine does
 * its two renames (journaled; recovery finishes or undoes them). A DLL that
 * a process has loaded cannot be replaced or deleted but can be renamed:
 * the engine renames it aside and renames the new one in (MoveFileEx with
 * MOVEFILE_WRITE_THROUGH); the file left aside is deleted when possible, else
 * at the next reboot (MOVEFILE_DELAY_UNTIL_REBOOT, which needs admin rights,
 * as deploying into an SDK does).
 */
#include "deploy-internal.h"

#include <windows.h>

#include "common/error.h"
#include "common/failpoint.h"

int
deploy_os_exchange(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return ROCMD_EUNSUPPORTED;
}

int
deploy_os_clone(int src, int dst)
{
	(void)src;
	(void)dst;
	return ROCMD_EUNSUPPORTED;
}

int
deploy_os_remove_aside(const char *path)
{
	if (DeleteFileA(path))
		return 0;
	if (GetLastError() == ERROR_FILE_NOT_FOUND)
		return 0;
	/* Still loaded by a process: gone at the next reboot. */
	if (MoveFileExA(path, NULL, MOVEFILE_DELAY_UNTIL_REBOOT))
		return 0;
	return ROCMD_EBUSY;
}
