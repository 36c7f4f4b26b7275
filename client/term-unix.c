/*
 * The terminal's width on Unix (output.h): the window size of the terminal
 * on a file descriptor; and a pause between polls.
 */
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "output.h"

int
out_term_columns(int fd)
{
	struct winsize ws;

	if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
		return 0;
	return ws.ws_col;
}

void
out_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}
