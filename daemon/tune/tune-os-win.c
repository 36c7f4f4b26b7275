/*
 * The tune scheduler's platform part on Windows (see tune-os.h). An
 * evaluation process that is still opening lives in its evaluator's job
 * object, which the scheduler cannot reach before the open returns; the
 * worker's own wait for it (kernels/measure.c over common/spawn-win.c) polls the cancel flag
 * every 10 ms and ends it through its process handle (TerminateProcess), so
 * nothing more is done here: the yield costs at most one such slice more.
 */
#include "tune-os.h"

#include <windows.h>

long
rocmd_tune_os_thread_id(void)
{
	return (long)GetCurrentThreadId();
}

void
rocmd_tune_os_kill_opening(long tid)
{
	(void)tid;
}
