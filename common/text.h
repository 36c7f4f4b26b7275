/*
 * Growing text buffers for messages built a line at a time (the problems a
 * scan found, one sentence per line).
 */
#ifndef ROCMD_TEXT_H
#define ROCMD_TEXT_H

#include <stddef.h>

/* Appends a line (a '\n' goes between lines) to *BUF, which may be NULL.
 * Out of memory leaves *BUF as it was. */
void rocmd_text_addf(char **buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* snprintf for paths: returns 0, or ROCMD_EINVAL when OUT was too small (OUT
 * then holds the cut text, which callers must not use). */
int rocmd_pathf(char *out, size_t outlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
