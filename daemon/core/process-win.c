/*
 * Process set-up on Windows (see process.h). There is no SIGPIPE and no
 * descriptor limit to raise beyond the C runtime's table; running in the
 * background is the service's job (rocmd install / start), so a console rocmd
 * without --foreground simply stays in the console.
 */
#include "process.h"

#include <stdio.h>

#include "common/log.h"

void
rocmd_process_init(void)
{
	/* The C runtime's descriptor table: one per connection and open file. */
	_setmaxstdio(2048);
}

int
rocmd_process_detach(void)
{
	log_notice("running in the console; use 'rocmd install' and 'rocmd start' to run "
		   "as a service in the background");
	return 0;
}

int
rocmd_process_detached(void)
{
	return 0;
}

void
rocmd_process_report(int status, const char *msg)
{
	(void)status;
	(void)msg;
}
