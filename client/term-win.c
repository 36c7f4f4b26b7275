/*
 * The terminal's width on Windows (output.h): the console window's columns.
 * The console is switched to process ANSI sequences (the progress bar's and
 * the colours) the first time it is asked. And a pause between polls.
 */
#include <io.h>
#include <windows.h>

#include "output.h"

int
out_term_columns(int fd)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	CONSOLE_SCREEN_BUFFER_INFO info;
	DWORD mode;

	if (h == INVALID_HANDLE_VALUE || !_isatty(fd) || !GetConsoleScreenBufferInfo(h, &info))
		return 0;
	if (GetConsoleMode(h, &mode))
		SetConsoleMode(h, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
	return info.srWindow.Right - info.srWindow.Left + 1;
}

void
out_sleep_ms(int ms)
{
	Sleep((DWORD)ms);
}
