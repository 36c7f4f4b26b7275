/*
 * Growing text buffers: see text.h.
 */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void
rocmd_text_addf(char **buf, const char *fmt, ...)
{
	size_t old = *buf != NULL ? strlen(*buf) : 0;
	char *line = NULL, *grown;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	grown = realloc(*buf, old + (old > 0) + (size_t)n + 1);
	if (grown != NULL) {
		if (old > 0)
			grown[old++] = '\n';
		memcpy(grown + old, line, (size_t)n + 1);
		*buf = grown;
	}
	free(line);
}

int
rocmd_pathf(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= outlen ? ROCMD_EINVAL : 0;
}
