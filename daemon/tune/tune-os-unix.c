/*
 * The tune scheduler's platform part on Linux (see tune-os.h). The worker
 * thread's only children are evaluator processes (spawned by that thread),
 * so they are found by their parent thread's id in
 * /proc/self/task/TID/children and killed; the open then fails and, the
 * cancel flag being set, counts as a yield.
 */
#include "tune-os.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

long
rocmd_tune_os_thread_id(void)
{
	return (long)gettid();
}

void
rocmd_tune_os_kill_opening(long tid)
{
	char path[64], buf[256], *p, *end;
	FILE *f;
	long pid;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", tid);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(buf, sizeof(buf), f) != NULL)
		for (p = buf; (pid = strtol(p, &end, 10)) > 0; p = end)
			kill((pid_t)pid, SIGKILL);
	fclose(f);
}
