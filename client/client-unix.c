/*
 * The client's transport on Unix: a connected AF_UNIX stream socket.
 */
#include "transport.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "common/error.h"

struct rocmd_transport {
	int fd;
};

int
rocmd_transport_connect(const char *path, struct rocmd_transport **out, char *why,
			size_t whylen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct rocmd_transport *t;
	int fd;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, whylen, "socket path too long: %s", path);
		return ROCMD_EINVAL;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int err = errno;
		close(fd);
		if (err == ENOENT || err == ECONNREFUSED)
			snprintf(why, whylen, "rocmd is not running (nothing listens on %s)", path);
		else
			snprintf(why, whylen, "cannot connect to %s: %s", path, strerror(err));
		return ROCMD_ECONNECT;
	}
	t = malloc(sizeof(*t));
	if (t == NULL) {
		close(fd);
		return ROCMD_ENOMEM;
	}
	t->fd = fd;
	*out = t;
	return 0;
}

int
rocmd_transport_write(struct rocmd_transport *t, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(t->fd, buf, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EPIPE || errno == ECONNRESET ? ROCMD_ECLOSED : -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t
rocmd_transport_read(struct rocmd_transport *t, char *buf, size_t len, int timeout_ms)
{
	for (;;) {
		struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
		ssize_t n;
		int p = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);

		if (p < 0 && errno == EINTR)
			continue;
		if (p == 0)
			return ROCMD_ETIMEDOUT;
		n = read(t->fd, buf, len);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return errno == ECONNRESET ? 0 : -errno;
	}
}

void
rocmd_transport_close(struct rocmd_transport *t)
{
	if (t == NULL)
		return;
	close(t->fd);
	free(t);
}

void
rocmd_client_args_utf8(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
}
