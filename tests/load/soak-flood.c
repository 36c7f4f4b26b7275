/*
 * soak-flood: the memory flood of issue 16 as a client. Each of C connections
 * says hello, then writes N copies of one request (events.list with limit
 * 1000 unless told otherwise) in as few writes as the socket takes, and never
 * reads a reply: the daemon must stop reading it once its queued output is
 * over the limit, not build every reply (tests/load/soak.sh, step 4). The connections are held for T
 * seconds, then closed. Prints one JSON line: connections, requests written
 * (all of them), bytes, and how long the writes took.
 *
 * usage: soak-flood -s SOCK [-c CONNS] [-n REQUESTS] [-t HOLD_SEC] [-m METHOD]
 *                   [-p PARAMS_JSON]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connected, greeted socket, or -1. */
static int
hello(const char *sock)
{
	static const char msg[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{\"client\":\"soak-flood\","
	    "\"protocol\":1}}";
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct rocmd_frame_decoder dec;
	char *frame, buf[65536];
	size_t flen;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), got = 0;

	if (fd < 0 || strlen(sock) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, sock);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    rocmd_frame_encode(msg, strlen(msg), &frame, &flen) < 0) {
		close(fd);
		return -1;
	}
	if (write(fd, frame, flen) != (ssize_t)flen) {
		free(frame);
		close(fd);
		return -1;
	}
	free(frame);
	rocmd_frame_decoder_init(&dec, 1 << 20);
	while (!got) {
		ssize_t n = read(fd, buf, sizeof(buf));
		size_t off = 0;
		if (n <= 0)
			break;
		while (!got && off < (size_t)n) {
			char *payload = NULL;
			size_t used = 0, plen;
			if (rocmd_frame_feed(&dec, buf + off, (size_t)n - off, &used, &payload, &plen) < 0) {
				got = -1;
				break;
			}
			off += used;
			if (payload != NULL) {
				got = strstr(payload, "\"result\"") != NULL ? 1 : -1;
				free(payload);
			}
		}
	}
	rocmd_frame_decoder_free(&dec);
	if (got != 1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	const char *sock = NULL, *method = "events.list", *params = "{\"limit\":1000}";
	int conns = 1, requests = 873, hold = 5, opt, *fds;
	char *payload, *frame, *all;
	size_t flen, total;
	long long bytes = 0, written = 0;
	double t0, t1;

	signal(SIGPIPE, SIG_IGN);
	while ((opt = getopt(argc, argv, "s:c:n:t:m:p:")) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'c': conns = atoi(optarg); break;
		case 'n': requests = atoi(optarg); break;
		case 't': hold = atoi(optarg); break;
		case 'm': method = optarg; break;
		case 'p': params = optarg; break;
		default:
			fprintf(stderr, "usage: soak-flood -s SOCK [-c CONNS] [-n REQUESTS] [-t HOLD_SEC] "
			                "[-m METHOD] [-p PARAMS]\n");
			return 2;
		}
	}
	if (sock == NULL || conns < 1 || requests < 1) {
		fprintf(stderr, "soak-flood: -s SOCK is needed\n");
		return 2;
	}
	if (asprintf(&payload, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s\",\"params\":%s}", method,
	             params) < 0 ||
	    rocmd_frame_encode(payload, strlen(payload), &frame, &flen) < 0)
		return 1;
	/* All the requests of one connection back to back: one buffer. */
	total = flen * (size_t)requests;
	all = malloc(total);
	fds = calloc((size_t)conns, sizeof(*fds));
	if (all == NULL || fds == NULL)
		return 1;
	for (int i = 0; i < requests; i++)
		memcpy(all + (size_t)i * flen, frame, flen);
	t0 = now_s();
	for (int c = 0; c < conns; c++) {
		size_t off = 0;
		fds[c] = hello(sock);
		if (fds[c] < 0) {
			fprintf(stderr, "soak-flood: connection %d: no hello reply\n", c);
			continue;
		}
		fcntl(fds[c], F_SETFL, fcntl(fds[c], F_GETFL) | O_NONBLOCK);
		/* Whatever the socket takes within 2 s: the daemon reading it is what
		 * is measured; it may stop reading once its output is over the limit. */
		for (double end = now_s() + 2; off < total && now_s() < end;) {
			ssize_t w = send(fds[c], all + off, total - off, MSG_NOSIGNAL);
			if (w > 0) {
				off += (size_t)w;
				continue;
			}
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				break;
			struct pollfd p = {.fd = fds[c], .events = POLLOUT};
			poll(&p, 1, 50);
		}
		bytes += (long long)off;
		written += (long long)(off / flen);
	}
	t1 = now_s();
	sleep((unsigned)hold);
	for (int c = 0; c < conns; c++)
		if (fds[c] >= 0)
			close(fds[c]);
	printf("{\"connections\":%d,\"requests_per_connection\":%d,\"requests_written\":%lld,"
	       "\"bytes_written\":%lld,\"write_s\":%.3f}\n",
	       conns, requests, written, bytes, t1 - t0);
	free(all);
	free(fds);
	free(frame);
	free(payload);
	return 0;
}
