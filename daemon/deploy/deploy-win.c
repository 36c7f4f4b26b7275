/*
 * The deploy engine's Windows primitives. NTFS has no atomic exchange of two
 * folders, so deploy_os_exchange answers "unsupported" and the engine does
 * its two renames (journaled; recovery finishes or undoes them). A DLL that
 * a process has loaded cannot be replaced or deleted but can be renamed:
 * the engine renames it aside and renames the new one in (MoveFileExW with
 * MOVEFILE_WRITE_THROUGH, in fs-win.c). The file left aside is deleted
 * when possible; while it is still loaded it is renamed once more, to a
 * name of its own (<aside>.<pid>-<ticks>.del), so the aside name is free for
 * the next deploy, and that file is deleted at the next reboot
 * (MOVEFILE_DELAY_UNTIL_REBOOT, which needs admin rights, as deploying into
 * an SDK does; without them it stays, harmless, under its .del name).
 */
#include "deploy-internal.h"

#include <stdio.h>
#include <stdlib.h>

#include <windows.h>

#include "common/error.h"
#include "common/failpoint.h"
#include "common/win-util.h"

int
deploy_os_exchange(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return ROCMD_EUNSUPPORTED;
}

int
deploy_os_remove_aside(const char *path)
{
	char later[DEPLOY_PATH_MAX + 64];
	wchar_t *w;
	int rc = rocmd_fs_unlink(path);

	/* Deleting a loaded DLL is refused with access denied. */
	if (rc != ROCMD_EPERM && rc != ROCMD_EBUSY)
		return rc;
	rocmd_fs_fmt(later, sizeof(later), "%s.%lu-%lu.del", path,
	             (unsigned long)GetCurrentProcessId(), (unsigned long)GetTickCount());
	if ((rc = rocmd_fs_rename(path, later)) < 0)
		return rc;
	for (char *c = later; *c != '\0'; c++)
		if (*c == '/')
			*c = '\\';
	if ((w = rocmd_win_wide(later)) != NULL)
		MoveFileExW(w, NULL, MOVEFILE_DELAY_UNTIL_REBOOT);
	free(w);
	return 0;
}
