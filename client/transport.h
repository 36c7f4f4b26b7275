/*
 * The byte stream under the client: a Unix socket here (client-unix.c), a
 * named pipe opened with identification-level impersonation on Windows.
 */
#ifndef ROCMD_TRANSPORT_H
#define ROCMD_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

struct rocmd_transport;

int rocmd_transport_connect(const char *path, struct rocmd_transport **out, char *why,
			    size_t whylen);
/* Writes all of BUF. Returns 0 or a negative code. */
int rocmd_transport_write(struct rocmd_transport *t, const char *buf, size_t len);
/* Reads what is available (blocking for at least one byte, at most TIMEOUT_MS
 * when that is not negative: then ROCMD_ETIMEDOUT); 0 means end of stream. */
ssize_t rocmd_transport_read(struct rocmd_transport *t, char *buf, size_t len, int timeout_ms);
void rocmd_transport_close(struct rocmd_transport *t);

#endif
