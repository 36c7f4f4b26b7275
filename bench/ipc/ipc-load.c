/*
 * ipc-load: a load generator for rocmd's local socket.
 *
 * It opens N connections on one libuv loop, completes the "hello" handshake
 * on each, then keeps every connection busy with "status" requests (one in
 * flight, or -P of them pipelined) for a duration or a total count, and
 * prints the throughput and the latency percentiles. Every latency is
 * recorded, so the percentiles are exact. The hold mode (-H) instead opens
 * many connections (1,000 by default), keeps them all open for a while and
 * checks that each still answers, which is the "many idle clients" case.
 *
 * The open-loop mode (-r RATE) sends at a fixed total rate instead, spread
 * evenly over the connections: send g (0, 1, 2, ...) is due at g / RATE
 * seconds after the start, on connection g mod N. The schedule is computed
 * before the run. A send that finds no free pipeline slot on its connection
 * is counted as late and goes out as soon as a reply frees one. Every latency
 * counts from the scheduled time, not from the actual send, so a stalled
 * server (or generator) shows up in the figures instead of quietly lowering
 * the offered rate (coordinated omission). The due sends are released by a
 * timerfd armed at the absolute due time of the next one and watched by a
 * uv_poll: a uv_timer has 1 ms resolution and libuv's relative timeouts wake
 * 0-1 ms late, which would land in every latency measured from the schedule.
 *
 * Frames and messages go through the project's own codec (common/proto.h), so
 * the figures include the same encoding the real client pays for. Requests
 * are encoded once per pipeline slot and reused: a slot's id is fixed and the
 * reply's id names the slot, which is how a latency finds its start time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "common/error.h"
#include "common/paths.h"
#include "common/proto.h"

#define HELLO_ID 1
#define FIRST_SLOT_ID 2
#define READ_BUF_SIZE (64 * 1024)
#define SETUP_TIMEOUT_MS 30000 /* connect + hello for all connections */
#define DRAIN_TIMEOUT_MS 5000  /* replies still owed after the run ends */
#define MAX_ERROR_LINES 5

enum conn_state {
	CONN_IDLE,       /* not started */
	CONN_CONNECTING, /* uv_pipe_connect issued */
	CONN_HELLO,      /* hello sent, reply owed */
	CONN_READY,      /* handshake done */
	CONN_CLOSED,     /* uv_close called (or never opened) */
};

enum phase {
	PHASE_SETUP, /* connecting and saying hello */
	PHASE_RUN,   /* load: requests flowing */
	PHASE_DRAIN, /* load: no new requests, waiting for replies */
	PHASE_ROUND, /* hold: one status on every connection */
	PHASE_HOLD,  /* hold: all open, waiting */
	PHASE_DONE,
};

struct slot {
	char *frame; /* encoded request, reused for every send from this slot */
	size_t frame_len;
	uint64_t sent_ns;
	int busy;
};

struct conn {
	uv_pipe_t pipe;
	uv_connect_t connect_req;
	struct bench *b;
	struct rocmd_frame_decoder dec;
	enum conn_state state;
	int handle_open; /* uv_pipe_init done, uv_close still owed */
	unsigned inflight;
	struct slot *slots;
	uint64_t hello_sent_ns;
	/* Open loop: send k (0, 1, ...) of this connection is global send
	 * k * nconns + index; k_due of them are due, k_sent went out. */
	unsigned index;
	uint64_t k_due, k_sent;
};

struct write_req {
	uv_write_t req;
	struct conn *c;
};

struct latencies {
	uint32_t *ns; /* every sample, in nanoseconds, capped at UINT32_MAX */
	size_t len, cap;
};

struct bench {
	uv_loop_t *loop;
	char socket_path[4096];
	unsigned nconns;
	unsigned depth;
	double duration_s;
	uint64_t count; /* 0: no limit */
	int hold;
	double hold_s;
	unsigned ramp; /* connections in connect/hello at once */
	int json;
	double rate; /* open loop: total sends per second; 0: closed loop */

	/* Open loop: the send schedule, the timerfd that releases it, counts. */
	uint64_t *sched_ns; /* due time of each global send, from t_run */
	uint64_t sched_len;
	uint64_t sched_next; /* first global send not yet due */
	int tfd;
	uv_poll_t tpoll;
	int tpoll_open;
	uint64_t late;        /* due while the connection had no free slot */
	uint64_t unsent;      /* due but never sent (connection lost, drain timeout) */
	struct latencies lag; /* actual send minus scheduled time */

	struct conn *conns;
	char *hello_frame;
	size_t hello_frame_len;
	uv_timer_t timer;
	enum phase phase;
	int round;   /* hold mode: which status round is in flight (1 or 2) */
	int sending; /* inside a loop over all connections */

	unsigned next_conn;  /* next index to start */
	unsigned setting_up; /* started, hello not yet answered */
	unsigned resolved;   /* hello answered or failed */
	unsigned hello_ok;
	unsigned open_now;    /* ready and not closed */
	unsigned conn_failed; /* connect, hello or stream failures */
	uint64_t inflight;    /* requests owed across connections */
	uint64_t issued, completed, errors, rpc_errors, lost;
	uint64_t round_ok[3];
	unsigned error_lines;

	uint64_t t_start, t_ready, t_run, t_end;
	double cpu_run_start; /* this process's CPU seconds when the run began */
	double cpu_s;         /* ... spent during the run */
	struct latencies lat;
	struct latencies hello_lat;
};

static void conn_fail(struct conn *c, const char *what, int err);
static void conn_fill(struct conn *c);
static void bench_next_phase(struct bench *b);
static void bench_start_conns(struct bench *b);

static char read_buf[READ_BUF_SIZE];

static void
report_error(struct bench *b, const char *fmt, const char *what, const char *msg)
{
	if (b->error_lines >= MAX_ERROR_LINES)
		return;
	b->error_lines++;
	fprintf(stderr, "ipc-load: ");
	fprintf(stderr, fmt, what, msg);
	fputc('\n', stderr);
	if (b->error_lines == MAX_ERROR_LINES)
		fprintf(stderr, "ipc-load: (further errors are counted, not printed)\n");
}

/* User plus system CPU seconds of this process: the load generator shares the
 * machine with the daemon, so its own cost belongs next to the figures. */
static double
cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0.0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int
lat_add(struct latencies *l, uint64_t ns)
{
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		uint32_t *p = realloc(l->ns, cap * sizeof(*p));

		if (!p)
			return ROCMD_ENOMEM;
		l->ns = p;
		l->cap = cap;
	}
	l->ns[l->len++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile in microseconds; the samples must be sorted. */
static double
lat_pct(const struct latencies *l, double p)
{
	size_t rank;

	if (!l->len)
		return 0.0;
	rank = (size_t)(p / 100.0 * (double)l->len + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > l->len)
		rank = l->len;
	return l->ns[rank - 1] / 1000.0;
}

static int
encode_request(int64_t id, const char *method, cJSON *params, char **out, size_t *out_len)
{
	char *json = rocmd_rpc_request(id, method, params);
	int rc;

	*out = NULL;
	*out_len = 0;
	if (!json)
		return ROCMD_ENOMEM;
	rc = rocmd_frame_encode(json, strlen(json), out, out_len);
	free(json);
	return rc;
}

static void
on_close(uv_handle_t *h)
{
	struct conn *c = h->data;

	rocmd_frame_decoder_free(&c->dec);
}

static void
conn_close(struct conn *c)
{
	struct bench *b = c->b;

	if (c->state == CONN_READY)
		b->open_now--;
	c->state = CONN_CLOSED;
	if (c->handle_open) {
		c->handle_open = 0;
		uv_close((uv_handle_t *)&c->pipe, on_close);
	}
}

/* A connection that has not finished its handshake stops counting as pending,
 * and the next one waiting for the ramp may start. */
static void
conn_resolved(struct conn *c)
{
	struct bench *b = c->b;

	b->setting_up--;
	b->resolved++;
	if (b->phase == PHASE_SETUP) {
		bench_start_conns(b);
		if (b->resolved == b->nconns)
			bench_next_phase(b);
	}
}

static void
conn_fail(struct conn *c, const char *what, int err)
{
	struct bench *b = c->b;
	enum conn_state was = c->state;

	if (was == CONN_CLOSED)
		return;
	report_error(b, "%s: %s", what,
	             err < 0 && err > -4000 ? uv_strerror(err) : rocmd_strerror(err));
	b->conn_failed++;
	/* Requests this connection still owed are lost. */
	b->errors += c->inflight;
	b->lost += c->inflight;
	b->inflight -= c->inflight;
	c->inflight = 0;
	conn_close(c);
	if (was == CONN_CONNECTING || was == CONN_HELLO) {
		conn_resolved(c);
		return;
	}
	/* While a round is being sent the sender decides what comes next. */
	if (b->sending)
		return;
	if (b->phase == PHASE_RUN && !b->open_now)
		bench_next_phase(b);
	else if ((b->phase == PHASE_DRAIN || b->phase == PHASE_ROUND) && !b->inflight)
		bench_next_phase(b);
}

static void
on_write(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;

	if (status < 0 && status != UV_ECANCELED)
		conn_fail(w->c, "write", status);
	free(w);
}

/* Sends BUF: directly when the socket takes it all, else queued behind libuv.
 * BUF must outlive the write (slot and hello frames live until the end). */
static int
conn_write(struct conn *c, const char *buf, size_t len)
{
	uv_buf_t ub = uv_buf_init((char *)buf, (unsigned)len);
	struct write_req *w;
	int n;

	n = uv_try_write((uv_stream_t *)&c->pipe, &ub, 1);
	if (n == (int)len)
		return 0;
	if (n < 0 && n != UV_EAGAIN)
		return n;
	if (n > 0) {
		ub.base += n;
		ub.len -= (size_t)n;
	}
	w = malloc(sizeof(*w));
	if (!w)
		return ROCMD_ENOMEM;
	w->c = c;
	n = uv_write(&w->req, (uv_stream_t *)&c->pipe, &ub, 1, on_write);
	if (n < 0)
		free(w);
	return n;
}

static int
bench_may_issue(const struct bench *b)
{
	if (b->phase != PHASE_RUN)
		return 0;
	return !b->count || b->issued < b->count;
}

static int
conn_send_slot(struct conn *c, unsigned i)
{
	struct bench *b = c->b;
	struct slot *s = &c->slots[i];
	int rc;

	s->busy = 1;
	s->sent_ns = uv_hrtime();
	c->inflight++;
	b->inflight++;
	b->issued++;
	rc = conn_write(c, s->frame, s->frame_len);
	if (rc < 0)
		conn_fail(c, "write", rc);
	return rc;
}

/* Open loop: sends this connection's due requests while slots are free. Each
 * request's latency counts from its scheduled time. */
static void
conn_open_fill(struct conn *c)
{
	struct bench *b = c->b;
	uint64_t due;
	unsigned i;

	for (i = 0; i < b->depth && c->k_sent < c->k_due && c->state == CONN_READY; i++) {
		if (c->slots[i].busy)
			continue;
		due = b->t_run + b->sched_ns[c->k_sent * b->nconns + c->index];
		c->k_sent++;
		if (conn_send_slot(c, i) < 0)
			return;
		lat_add(&b->lag, c->slots[i].sent_ns - due);
		c->slots[i].sent_ns = due;
	}
}

/* Keeps DEPTH requests in flight on a ready connection while the run lasts. */
static void
conn_fill(struct conn *c)
{
	unsigned i;

	if (c->b->rate > 0) {
		conn_open_fill(c);
		return;
	}
	for (i = 0; i < c->b->depth && c->state == CONN_READY; i++) {
		if (!bench_may_issue(c->b))
			return;
		if (!c->slots[i].busy && conn_send_slot(c, i) < 0)
			return;
	}
}

static void
handle_hello(struct conn *c, const struct rocmd_rpc *msg, uint64_t now)
{
	struct bench *b = c->b;

	if (msg->kind != ROCMD_RPC_RESULT) {
		conn_fail(c, "hello refused", rocmd_rpc_error_to_err(msg));
		return;
	}
	c->state = CONN_READY;
	b->hello_ok++;
	b->open_now++;
	lat_add(&b->hello_lat, now - c->hello_sent_ns);
	conn_resolved(c);
}

static void
handle_reply(struct conn *c, const struct rocmd_rpc *msg, uint64_t now)
{
	struct bench *b = c->b;
	double idd;
	int64_t id;
	struct slot *s;

	if (msg->kind != ROCMD_RPC_RESULT && msg->kind != ROCMD_RPC_ERROR) {
		conn_fail(c, "reply", ROCMD_EPROTO);
		return;
	}
	if (!msg->id || !cJSON_IsNumber(msg->id)) {
		/* An error without an id refuses the connection itself (too many
		 * connections, shutting down); name the daemon's reason. */
		if (msg->kind == ROCMD_RPC_ERROR) {
			report_error(b, "%s: %s", "daemon refused the connection",
			             msg->error_message ? msg->error_message : "?");
			conn_fail(c, "refused", rocmd_rpc_error_to_err(msg));
			return;
		}
		conn_fail(c, "reply without a usable id", ROCMD_EPROTO);
		return;
	}
	idd = cJSON_GetNumberValue(msg->id);
	id = (int64_t)idd;
	if (c->state == CONN_HELLO) {
		if (id != HELLO_ID) {
			conn_fail(c, "hello reply id", ROCMD_EPROTO);
			return;
		}
		handle_hello(c, msg, now);
		return;
	}
	if (id < FIRST_SLOT_ID || id >= FIRST_SLOT_ID + (int64_t)b->depth ||
	    !c->slots[id - FIRST_SLOT_ID].busy) {
		conn_fail(c, "reply to no outstanding request", ROCMD_EPROTO);
		return;
	}
	s = &c->slots[id - FIRST_SLOT_ID];
	s->busy = 0;
	c->inflight--;
	b->inflight--;
	if (msg->kind == ROCMD_RPC_ERROR) {
		b->errors++;
		b->rpc_errors++;
		report_error(b, "%s: %s", "status",
		             msg->error_message ? msg->error_message : "error reply");
	} else {
		b->completed++;
		if (b->phase == PHASE_ROUND)
			b->round_ok[b->round]++;
		if (lat_add(&b->lat, now - s->sent_ns) < 0) {
			fprintf(stderr, "ipc-load: out of memory for latency samples\n");
			exit(1);
		}
	}
	b->t_end = now;
	if (b->phase == PHASE_RUN) {
		conn_fill(c);
		if (b->phase == PHASE_RUN && b->count && b->issued >= b->count)
			bench_next_phase(b);
	} else if (b->phase == PHASE_DRAIN && b->rate > 0) {
		/* Requests that fell due during the run still go out. */
		conn_open_fill(c);
		if (b->phase == PHASE_DRAIN && !b->inflight)
			bench_next_phase(b);
	} else if ((b->phase == PHASE_DRAIN || b->phase == PHASE_ROUND) && !b->inflight) {
		bench_next_phase(b);
	}
}

static void
handle_frame(struct conn *c, const char *frame, size_t len)
{
	uint64_t now = uv_hrtime();
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	char why[256];
	int rc;

	rc = rocmd_rpc_parse(frame, len, 0, &msg, &bad_id, why, sizeof(why));
	if (rc < 0) {
		cJSON_Delete(bad_id);
		report_error(c->b, "%s: %s", "unparsable reply", why);
		conn_fail(c, "reply", rc);
		return;
	}
	handle_reply(c, &msg, now);
	rocmd_rpc_free(&msg);
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	/* One buffer serves every connection: the decoder copies what it keeps
	 * before the next read can happen. */
	*buf = uv_buf_init(read_buf, sizeof(read_buf));
}

static void
on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
	struct conn *c = stream->data;
	size_t off = 0;

	if (nread == UV_EOF) {
		conn_fail(c, "daemon closed the connection", ROCMD_ECLOSED);
		return;
	}
	if (nread < 0) {
		conn_fail(c, "read", (int)nread);
		return;
	}
	while (off < (size_t)nread && c->state != CONN_CLOSED) {
		char *frame = NULL;
		size_t used = 0, flen = 0;
		int rc;

		rc = rocmd_frame_feed(&c->dec, buf->base + off, (size_t)nread - off, &used, &frame,
		                      &flen);
		if (rc < 0) {
			conn_fail(c, "frame", rc);
			return;
		}
		off += used;
		if (frame) {
			handle_frame(c, frame, flen);
			free(frame);
		}
	}
}

static void
on_connect(uv_connect_t *req, int status)
{
	struct conn *c = req->data;
	int rc;

	if (c->state != CONN_CONNECTING)
		return;
	if (status < 0) {
		conn_fail(c, "connect", status);
		return;
	}
	rc = uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
	if (rc < 0) {
		conn_fail(c, "read start", rc);
		return;
	}
	c->state = CONN_HELLO;
	c->hello_sent_ns = uv_hrtime();
	rc = conn_write(c, c->b->hello_frame, c->b->hello_frame_len);
	if (rc < 0)
		conn_fail(c, "hello write", rc);
}

static int
conn_start(struct conn *c)
{
	struct bench *b = c->b;
	int rc;

	rc = uv_pipe_init(b->loop, &c->pipe, 0);
	if (rc < 0)
		return rc;
	rocmd_frame_decoder_init(&c->dec, ROCMD_PROTO_MAX_FRAME);
	c->handle_open = 1;
	c->pipe.data = c;
	c->connect_req.data = c;
	c->state = CONN_CONNECTING;
	b->setting_up++;
	uv_pipe_connect(&c->connect_req, &c->pipe, b->socket_path, on_connect);
	return 0;
}

/* Starts connections until RAMP of them are between connect and hello reply:
 * a burst of a thousand connects would overflow the daemon's listen backlog,
 * which a non-blocking Unix-socket connect reports as EAGAIN. */
static void
bench_start_conns(struct bench *b)
{
	while (b->next_conn < b->nconns && b->setting_up < b->ramp) {
		struct conn *c = &b->conns[b->next_conn++];
		int rc = conn_start(c);

		if (rc < 0) {
			b->setting_up++;
			c->state = CONN_CONNECTING;
			conn_fail(c, "pipe init", rc);
		}
	}
}

static void
bench_close_all(struct bench *b)
{
	unsigned i;

	b->phase = PHASE_DONE;
	b->cpu_s = cpu_seconds() - b->cpu_run_start;
	uv_timer_stop(&b->timer);
	uv_close((uv_handle_t *)&b->timer, NULL);
	if (b->tpoll_open) {
		b->tpoll_open = 0;
		uv_poll_stop(&b->tpoll);
		uv_close((uv_handle_t *)&b->tpoll, NULL);
	}
	/* Requests that fell due but never went out (connection lost, or the
	 * drain timed out) are counted, not silently dropped. */
	for (i = 0; b->rate > 0 && i < b->nconns; i++)
		b->unsent += b->conns[i].k_due - b->conns[i].k_sent;
	for (i = 0; i < b->nconns; i++)
		conn_close(&b->conns[i]);
}

static void
on_timer(uv_timer_t *t)
{
	struct bench *b = t->data;
	unsigned i;

	switch (b->phase) {
	case PHASE_SETUP:
		fprintf(stderr, "ipc-load: setup timed out; %u connections still pending\n",
		        b->setting_up);
		/* Connections never started count as failed; none start now. */
		while (b->next_conn < b->nconns) {
			b->conn_failed++;
			b->resolved++;
			b->conns[b->next_conn++].state = CONN_CLOSED;
		}
		for (i = 0; i < b->nconns; i++) {
			struct conn *c = &b->conns[i];

			if (c->state == CONN_CONNECTING || c->state == CONN_HELLO)
				conn_fail(c, "setup", ROCMD_ETIMEDOUT);
		}
		if (b->phase == PHASE_SETUP)
			bench_next_phase(b);
		break;
	case PHASE_RUN:
		bench_next_phase(b);
		break;
	case PHASE_DRAIN:
	case PHASE_ROUND:
		fprintf(stderr, "ipc-load: %" PRIu64 " replies never came\n", b->inflight);
		b->sending = 1;
		for (i = 0; i < b->nconns; i++)
			if (b->conns[i].inflight)
				conn_fail(&b->conns[i], "reply", ROCMD_ETIMEDOUT);
		b->sending = 0;
		bench_next_phase(b);
		break;
	case PHASE_HOLD:
		bench_next_phase(b);
		break;
	case PHASE_DONE:
		break;
	}
}

/* Open loop: arms the timerfd for the next due send, at an absolute time on
 * CLOCK_MONOTONIC, the clock uv_hrtime reads. */
static int
sched_arm(struct bench *b)
{
	struct itimerspec its;
	uint64_t at = b->t_run + b->sched_ns[b->sched_next];

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(b->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Open loop: every send whose time has come falls due on its connection and
 * goes out if a pipeline slot is free; otherwise it is late. */
static void
on_sched(uv_poll_t *h, int status, int events)
{
	struct bench *b = h->data;
	uint64_t now, expirations;

	(void)events;
	if (status >= 0 && read(b->tfd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		status = -errno;
	if (status < 0 || b->phase != PHASE_RUN) {
		if (status < 0)
			fprintf(stderr, "ipc-load: send timer: %s\n", uv_strerror(status));
		uv_poll_stop(h);
		if (b->phase == PHASE_RUN)
			bench_next_phase(b);
		return;
	}
	now = uv_hrtime();
	b->sending = 1;
	while (b->sched_next < b->sched_len && b->t_run + b->sched_ns[b->sched_next] <= now) {
		struct conn *c = &b->conns[b->sched_next % b->nconns];

		b->sched_next++;
		c->k_due++;
		if (c->state != CONN_READY)
			continue;
		conn_open_fill(c);
		if (c->k_sent < c->k_due)
			b->late++;
	}
	b->sending = 0;
	if (b->phase != PHASE_RUN)
		return;
	if (b->sched_next == b->sched_len || !b->open_now) {
		/* The schedule is spent (or nobody is left): what is owed drains. */
		uv_poll_stop(h);
		bench_next_phase(b);
		return;
	}
	if (sched_arm(b) < 0) {
		fprintf(stderr, "ipc-load: timerfd_settime: %s\n", strerror(errno));
		uv_poll_stop(h);
		bench_next_phase(b);
	}
}

/* Open loop: starts releasing the schedule, which counts from b->t_run. */
static int
sched_start(struct bench *b)
{
	int rc;

	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (b->tfd < 0)
		return -errno;
	rc = uv_poll_init(b->loop, &b->tpoll, b->tfd);
	if (rc < 0)
		return rc;
	b->tpoll_open = 1;
	b->tpoll.data = b;
	rc = uv_poll_start(&b->tpoll, UV_READABLE, on_sched);
	if (rc < 0)
		return rc;
	return sched_arm(b) < 0 ? -errno : 0;
}

/* Hold mode: sends one status on every open connection. */
static void
bench_round(struct bench *b, int round)
{
	unsigned i;

	b->phase = PHASE_ROUND;
	b->round = round;
	uv_timer_start(&b->timer, on_timer, DRAIN_TIMEOUT_MS + b->nconns * 10, 0);
	b->sending = 1;
	for (i = 0; i < b->nconns; i++) {
		struct conn *c = &b->conns[i];

		if (c->state == CONN_READY)
			conn_send_slot(c, 0);
	}
	b->sending = 0;
	if (!b->inflight)
		bench_next_phase(b);
}

static void
bench_next_phase(struct bench *b)
{
	unsigned i;

	switch (b->phase) {
	case PHASE_SETUP:
		b->t_ready = uv_hrtime();
		b->cpu_run_start = cpu_seconds();
		if (b->hold) {
			bench_round(b, 1);
			return;
		}
		b->phase = PHASE_RUN;
		b->t_run = b->t_end = uv_hrtime();
		if (b->rate > 0) {
			/* The schedule, not the timer, ends an open-loop run. */
			int rc = b->open_now ? sched_start(b) : 0;

			uv_timer_stop(&b->timer);
			if (rc < 0)
				fprintf(stderr, "ipc-load: send timer: %s\n",
				        rc > -4000 ? uv_strerror(rc) : rocmd_strerror(rc));
			if (rc < 0 || !b->open_now)
				bench_next_phase(b);
			return;
		}
		if (b->duration_s > 0)
			uv_timer_start(&b->timer, on_timer, (uint64_t)(b->duration_s * 1000.0), 0);
		else
			uv_timer_stop(&b->timer);
		b->sending = 1;
		for (i = 0; i < b->nconns; i++)
			conn_fill(&b->conns[i]);
		b->sending = 0;
		if (!b->open_now || (b->count && b->issued >= b->count && !b->inflight))
			bench_next_phase(b);
		return;
	case PHASE_RUN:
		b->phase = PHASE_DRAIN;
		if (!b->inflight) {
			bench_close_all(b);
			return;
		}
		uv_timer_start(&b->timer, on_timer, DRAIN_TIMEOUT_MS, 0);
		return;
	case PHASE_ROUND:
		if (b->round == 1) {
			b->phase = PHASE_HOLD;
			uv_timer_start(&b->timer, on_timer, (uint64_t)(b->hold_s * 1000.0), 0);
			return;
		}
		bench_close_all(b);
		return;
	case PHASE_HOLD:
		b->t_end = uv_hrtime();
		bench_round(b, 2);
		return;
	case PHASE_DRAIN:
		bench_close_all(b);
		return;
	case PHASE_DONE:
		return;
	}
}

/* More connections than open files allowed would fail on the client side
 * before the daemon is ever measured. */
static void
raise_nofile(unsigned want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)want + 32)
		fprintf(stderr, "ipc-load: warning: open-file limit %llu is below %u connections\n",
		        (unsigned long long)rl.rlim_cur, want);
}

static int
bench_setup(struct bench *b)
{
	cJSON *params;
	unsigned i, j;
	int rc;

	b->conns = calloc(b->nconns, sizeof(*b->conns));
	if (!b->conns)
		return ROCMD_ENOMEM;
	params = cJSON_CreateObject();
	if (!params || !cJSON_AddStringToObject(params, "client", "ipc-load") ||
	    !cJSON_AddNumberToObject(params, "protocol", ROCMD_PROTO_VERSION)) {
		cJSON_Delete(params);
		return ROCMD_ENOMEM;
	}
	rc = encode_request(HELLO_ID, "hello", params, &b->hello_frame, &b->hello_frame_len);
	if (rc < 0)
		return rc;
	b->tfd = -1;
	if (b->rate > 0) {
		uint64_t g;

		/* -d sets the length, -n caps it; with -n alone, N sends. */
		b->sched_len = b->duration_s > 0 ? (uint64_t)(b->duration_s * b->rate) : b->count;
		if (b->count && b->count < b->sched_len)
			b->sched_len = b->count;
		if (!b->sched_len)
			b->sched_len = 1;
		if (b->sched_len > (1u << 28))
			return ROCMD_EINVAL;
		b->sched_ns = malloc(b->sched_len * sizeof(*b->sched_ns));
		if (!b->sched_ns)
			return ROCMD_ENOMEM;
		for (g = 0; g < b->sched_len; g++)
			b->sched_ns[g] = (uint64_t)((double)g * 1e9 / b->rate);
	}
	for (i = 0; i < b->nconns; i++) {
		struct conn *c = &b->conns[i];

		c->b = b;
		c->index = i;
		c->slots = calloc(b->depth, sizeof(*c->slots));
		if (!c->slots)
			return ROCMD_ENOMEM;
		for (j = 0; j < b->depth; j++) {
			struct slot *s = &c->slots[j];

			/* Slot frames are identical across connections but each
			 * connection owns its copy so frees stay simple. */
			rc = encode_request(FIRST_SLOT_ID + j, "status", cJSON_CreateObject(),
			                    &s->frame, &s->frame_len);
			if (rc < 0)
				return rc;
		}
	}
	rc = uv_timer_init(b->loop, &b->timer);
	if (rc < 0)
		return rc;
	b->timer.data = b;
	return 0;
}

static void
bench_free(struct bench *b)
{
	unsigned i, j;

	for (i = 0; b->conns && i < b->nconns; i++) {
		for (j = 0; b->conns[i].slots && j < b->depth; j++)
			free(b->conns[i].slots[j].frame);
		free(b->conns[i].slots);
	}
	free(b->conns);
	free(b->hello_frame);
	free(b->lat.ns);
	free(b->hello_lat.ns);
	free(b->lag.ns);
	free(b->sched_ns);
	if (b->tfd >= 0)
		close(b->tfd);
}

static void
add_num(cJSON *o, const char *key, double v)
{
	cJSON_AddNumberToObject(o, key, v);
}

static void
bench_report(struct bench *b)
{
	double run_s, rps, cpu_us;
	double p50, p90, p99, p999, pmax, h50, h99, lag50, lag99, lagmax;
	cJSON *o;
	char *s;

	qsort(b->lat.ns, b->lat.len, sizeof(*b->lat.ns), cmp_u32);
	qsort(b->hello_lat.ns, b->hello_lat.len, sizeof(*b->hello_lat.ns), cmp_u32);
	p50 = lat_pct(&b->lat, 50);
	p90 = lat_pct(&b->lat, 90);
	p99 = lat_pct(&b->lat, 99);
	p999 = lat_pct(&b->lat, 99.9);
	qsort(b->lag.ns, b->lag.len, sizeof(*b->lag.ns), cmp_u32);
	lag50 = lat_pct(&b->lag, 50);
	lag99 = lat_pct(&b->lag, 99);
	lagmax = lat_pct(&b->lag, 100);
	pmax = lat_pct(&b->lat, 100);
	h50 = lat_pct(&b->hello_lat, 50);
	h99 = lat_pct(&b->hello_lat, 99);
	run_s = b->t_end > b->t_run ? (double)(b->t_end - b->t_run) / 1e9 : 0.0;
	rps = run_s > 0 ? (double)b->completed / run_s : 0.0;
	cpu_us = b->completed ? b->cpu_s * 1e6 / (double)b->completed : 0.0;

	if (b->json) {
		o = cJSON_CreateObject();
		if (!o)
			return;
		cJSON_AddStringToObject(o, "mode", b->hold ? "hold" : "load");
		add_num(o, "connections", b->nconns);
		add_num(o, "connected", b->hello_ok);
		add_num(o, "conn_failed", b->conn_failed);
		add_num(o, "pipeline", b->depth);
		add_num(o, "requests", (double)b->completed);
		add_num(o, "errors", (double)(b->errors + b->conn_failed));
		add_num(o, "rpc_errors", (double)b->rpc_errors);
		add_num(o, "lost", (double)b->lost);
		add_num(o, "setup_s", (double)(b->t_ready - b->t_start) / 1e9);
		add_num(o, "hello_p50_us", h50);
		add_num(o, "hello_p99_us", h99);
		if (b->hold) {
			add_num(o, "round1_ok", (double)b->round_ok[1]);
			add_num(o, "round2_ok", (double)b->round_ok[2]);
			add_num(o, "held_s", b->hold_s);
		} else {
			add_num(o, "duration_s", run_s);
			add_num(o, "rps", rps);
		}
		if (b->rate > 0) {
			cJSON_AddStringToObject(o, "loop", "open");
			add_num(o, "rate", b->rate);
			add_num(o, "scheduled", (double)b->sched_next);
			add_num(o, "late", (double)b->late);
			add_num(o, "unsent", (double)b->unsent);
			add_num(o, "p999_us", p999);
			add_num(o, "send_lag_p50_us", lag50);
			add_num(o, "send_lag_p99_us", lag99);
			add_num(o, "send_lag_max_us", lagmax);
		}
		add_num(o, "client_cpu_us_per_req", cpu_us);
		add_num(o, "p50_us", p50);
		add_num(o, "p90_us", p90);
		add_num(o, "p99_us", p99);
		add_num(o, "max_us", pmax);
		s = cJSON_PrintUnformatted(o);
		if (s)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(o);
		return;
	}
	printf("socket        %s\n", b->socket_path);
	printf(
	    "connections   %u requested, %u connected, %u failed (setup %.3f s, hello p50 %.1f us, "
	    "p99 %.1f us)\n",
	    b->nconns, b->hello_ok, b->conn_failed, (double)(b->t_ready - b->t_start) / 1e9, h50,
	    h99);
	if (b->hold) {
		printf("held          %.1f s; status ok on %" PRIu64 " before and %" PRIu64
		       " after the hold\n",
		       b->hold_s, b->round_ok[1], b->round_ok[2]);
	} else {
		printf("pipeline      %u\n", b->depth);
		printf("duration      %.3f s\n", run_s);
		if (b->rate > 0) {
			printf("open loop     offered %.0f req/s, achieved %.0f req/s\n", b->rate,
			       rps);
			printf("sends         %" PRIu64 " scheduled, %" PRIu64 " late (no free slot), "
			       "%" PRIu64 " never sent\n",
			       b->sched_next, b->late, b->unsent);
			printf("send lag us   p50 %.1f  p99 %.1f  max %.1f (actual send - schedule)\n",
			       lag50, lag99, lagmax);
		} else {
			printf("throughput    %.0f req/s\n", rps);
		}
	}
	printf("requests      %" PRIu64 " ok, %" PRIu64 " errors (%" PRIu64
	       " error replies, %" PRIu64 " lost)\n",
	       b->completed, b->errors + b->conn_failed, b->rpc_errors, b->lost);
	if (b->rate > 0)
		printf("latency us    p50 %.1f  p90 %.1f  p99 %.1f  p999 %.1f  max %.1f "
		       "(from the scheduled send)\n",
		       p50, p90, p99, p999, pmax);
	else
		printf("latency us    p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", p50, p90, p99,
		       pmax);
	printf("client CPU    %.1f us per request (this load generator)\n", cpu_us);
}

static void
usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: ipc-load [options]\n"
	    "  -s, --socket PATH      daemon socket (default: as rocmctl finds it)\n"
	    "  -c, --connections N    concurrent connections (default 1, hold mode 1000)\n"
	    "  -d, --duration SEC     run for SEC seconds (default 10)\n"
	    "  -n, --requests N       stop after N requests in total\n"
	    "  -P, --pipeline N       requests in flight per connection (default 1)\n"
	    "  -H, --hold             open all connections, hold them, status on each\n"
	    "  -t, --hold-time SEC    how long to hold (default 3)\n"
	    "  -r, --rate RATE        open loop: RATE requests/s in total, evenly spread over\n"
	    "                         the connections; latency counts from the scheduled send\n"
	    "  -R, --ramp N           connections between connect and hello at once (default 64)\n"
	    "  -j, --json             print one JSON line instead of the table\n"
	    "  -h, --help\n");
}

static int
parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int
parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400)
		return -1;
	*out = v;
	return 0;
}

static int
parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"connections", required_argument, NULL, 'c'},
	    {"duration", required_argument, NULL, 'd'},
	    {"requests", required_argument, NULL, 'n'},
	    {"pipeline", required_argument, NULL, 'P'},
	    {"hold", no_argument, NULL, 'H'},
	    {"hold-time", required_argument, NULL, 't'},
	    {"rate", required_argument, NULL, 'r'},
	    {"ramp", required_argument, NULL, 'R'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long long v;
	int have_conns = 0, have_dur = 0;
	int ch;

	b->nconns = 1;
	b->depth = 1;
	b->duration_s = 10;
	b->hold_s = 3;
	b->ramp = 64;
	while ((ch = getopt_long(argc, argv, "s:c:d:n:P:Ht:r:R:jh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (strlen(optarg) >= sizeof(b->socket_path)) {
				fprintf(stderr, "ipc-load: socket path too long\n");
				return 2;
			}
			strcpy(b->socket_path, optarg);
			break;
		case 'c':
			if (parse_uint(optarg, 1000000, &v) < 0 || !v)
				goto bad;
			b->nconns = (unsigned)v;
			have_conns = 1;
			break;
		case 'd':
			if (parse_secs(optarg, &b->duration_s) < 0)
				goto bad;
			have_dur = 1;
			break;
		case 'n':
			if (parse_uint(optarg, UINT64_MAX, &v) < 0 || !v)
				goto bad;
			b->count = v;
			break;
		case 'P':
			if (parse_uint(optarg, 4096, &v) < 0 || !v)
				goto bad;
			b->depth = (unsigned)v;
			break;
		case 'H':
			b->hold = 1;
			break;
		case 't':
			if (parse_secs(optarg, &b->hold_s) < 0)
				goto bad;
			break;
		case 'r':
			if (parse_uint(optarg, 100000000, &v) < 0 || !v)
				goto bad;
			b->rate = (double)v;
			break;
		case 'R':
			if (parse_uint(optarg, 1000000, &v) < 0 || !v)
				goto bad;
			b->ramp = (unsigned)v;
			break;
		case 'j':
			b->json = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		goto bad;
	/* -n alone means "until N requests"; with -d, whichever comes first. */
	if (b->count && !have_dur)
		b->duration_s = 0;
	if (b->hold) {
		if (!have_conns)
			b->nconns = 1000;
		b->depth = 1;
		b->rate = 0;
	}
	/* Open loop: the timerfd wake-ups should not be rounded up by the default
	 * 50 us timer slack. */
	if (b->rate > 0)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (!b->socket_path[0] &&
	    rocmd_paths_client_socket(b->socket_path, sizeof(b->socket_path)) < 0) {
		fprintf(stderr, "ipc-load: no default socket known; pass --socket\n");
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "ipc-load: bad argument%s%s\n", optind <= argc ? " near " : "",
	        optind <= argc ? argv[optind - 1] : "");
	usage(stderr);
	return 2;
}

int
main(int argc, char **argv)
{
	struct bench b;
	int rc;

	/* A daemon that closes a connection must not kill the generator on
	 * its next write; the write error is counted instead. */
	signal(SIGPIPE, SIG_IGN);
	memset(&b, 0, sizeof(b));
	rc = parse_args(&b, argc, argv);
	if (rc)
		return rc;
	raise_nofile(b.nconns);
	b.loop = uv_default_loop();
	rc = bench_setup(&b);
	if (rc < 0) {
		fprintf(stderr, "ipc-load: setup: %s\n", rocmd_strerror(rc));
		bench_free(&b);
		return 1;
	}
	b.phase = PHASE_SETUP;
	b.t_start = uv_hrtime();
	uv_timer_start(&b.timer, on_timer, SETUP_TIMEOUT_MS, 0);
	bench_start_conns(&b);
	uv_run(b.loop, UV_RUN_DEFAULT);
	bench_report(&b);
	/* Non-zero when nothing got through, so scripts can probe with -n 1. */
	rc = b.completed ? 0 : 1;
	uv_loop_close(b.loop);
	bench_free(&b);
	return rc;
}
