/*
 * Small helpers every Windows platform file needs: UTF-8 <-> UTF-16
 * conversion (rocmd keeps UTF-8 everywhere and calls the W functions), the
 * text of a Win32 error, and a Win32 error mapped onto rocmd's error codes.
 * Windows builds only (win-util.c).
 */
#ifndef ROCMD_WIN_UTIL_H
#define ROCMD_WIN_UTIL_H

#include <stddef.h>
#include <wchar.h>

/* Newly allocated UTF-16 copy of UTF8, or NULL (out of memory, invalid UTF-8). */
wchar_t *rocmd_win_wide(const char *utf8);
/* Newly allocated UTF-8 copy of WIDE, or NULL. */
char *rocmd_win_utf8(const wchar_t *wide);
/* The system's message for a Win32 error code, in BUF (one line, UTF-8). */
const char *rocmd_win_strerror(unsigned long err, char *buf, size_t len);
/* A Win32 error code as a rocmd error code (ROCMD_E* or -errno). */
int rocmd_win_error(unsigned long err);

#endif
