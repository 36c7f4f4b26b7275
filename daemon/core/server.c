/*
 * Connections, framing, dispatch and event fan-out for the daemon.
 *
 * Reads land in one shared buffer, go through the connection's frame decoder,
 * and each complete payload is parsed and dispatched synchronously. Replies
 * and notifications are queued with uv_write; the bytes in flight per
 * connection are bounded: before each frame is dispatched, a requester whose
 * queued output is over its limit stops being read (the rest of what it sent
 * waits in its backlog until its output drains), and a subscriber that does
 * not keep up is disconnected. No client holds the loop: after
 * FRAMES_PER_TURN frames of one read the rest waits in the backlog and the
 * others get their turn (the resume idle handle goes on with it). Connections
 * are admitted within a total, a per-user limit and slots kept for root and
 * the admin group; one that sends no hello, or a non-admin's that stays
 * silent, times out (the sweep timer). A bad frame costs only its own
 * connection. Shutdown stops accepting and reading, lets queued replies
 * drain for a short grace period, then lets the loop end.
 */
#include "server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "ipc.h"
#include "methods.h"
#include "service/service.h"

#define SHUTDOWN_GRACE_MS 5000
#define FRAMES_PER_TURN 16 /* frames of one connection handled before others' */
#define SWEEP_MS 1000      /* how often the timeouts are looked at */

struct write_req {
	uv_write_t req;
	struct rocmd_conn *conn;
	size_t len;
	char data[];
};

/* Every read callback consumes its bytes before returning (what it cannot
 * handle yet is copied to the connection's backlog), so one buffer serves all
 * connections. */
static char read_buf[64 * 1024];

static void conn_close(struct rocmd_conn *conn);

int64_t
rocmd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t
max_queued(const struct rocmd_server *srv)
{
	return (size_t)srv->cfg->max_queued_output;
}

static void
on_close(uv_handle_t *h)
{
	struct rocmd_conn *conn = h->data;
	struct rocmd_server *srv = conn->srv;

	rocmd_frame_decoder_free(&conn->dec);
	free(conn->sub_kind);
	free(conn->backlog);
	/* Deferred replies outlive the connection; they just have nowhere to go. */
	for (struct rocmd_pending *p = conn->pending; p != NULL; p = p->next)
		p->conn = NULL;
	free(conn);
	rocmd_server_check_done(srv);
}

struct rocmd_conn *
rocmd_conn_new(struct rocmd_server *srv)
{
	struct rocmd_conn *conn = calloc(1, sizeof(*conn));

	if (conn == NULL)
		return NULL;
	conn->srv = srv;
	uv_pipe_init(srv->loop, &conn->pipe, 0);
	conn->pipe.data = conn;
	rocmd_frame_decoder_init(&conn->dec, (size_t)srv->cfg->max_frame);
	return conn;
}

void
rocmd_conn_discard(struct rocmd_conn *conn)
{
	conn->closing = 1;
	uv_close((uv_handle_t *)&conn->pipe, on_close);
}

static void
conn_unlink(struct rocmd_conn *conn)
{
	struct rocmd_server *srv = conn->srv;

	if (conn->prev != NULL)
		conn->prev->next = conn->next;
	else if (srv->conns == conn)
		srv->conns = conn->next;
	if (conn->next != NULL)
		conn->next->prev = conn->prev;
	conn->prev = conn->next = NULL;
}

static void
conn_close(struct rocmd_conn *conn)
{
	if (conn->closing)
		return;
	conn->closing = 1;
	conn_unlink(conn);
	conn->srv->nconns--;
	log_debug("connection %llu closed", (unsigned long long)conn->serial);
	uv_close((uv_handle_t *)&conn->pipe, on_close);
}

/* Stops reading and closes once every queued byte has been written. */
static void
conn_drain(struct rocmd_conn *conn)
{
	if (conn->closing)
		return;
	conn->draining = 1;
	if (conn->reading) {
		uv_read_stop((uv_stream_t *)&conn->pipe);
		conn->reading = 0;
	}
	if (conn->queued == 0 && conn->pending == NULL)
		conn_close(conn);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	buf->base = read_buf;
	buf->len = sizeof(read_buf);
}

static void schedule_resume(struct rocmd_server *srv);

static void
conn_resume_reading(struct rocmd_conn *conn)
{
	if (conn->reading || conn->closing || conn->draining || conn->srv->shutting_down)
		return;
	if (conn->backlog != NULL) {
		/* What it sent before comes first. */
		schedule_resume(conn->srv);
		return;
	}
	if (uv_read_start((uv_stream_t *)&conn->pipe, on_alloc, on_read) == 0)
		conn->reading = 1;
}

static void
on_write(uv_write_t *req, int status)
{
	struct write_req *wr = (struct write_req *)req;
	struct rocmd_conn *conn = wr->conn;

	conn->queued -= wr->len;
	free(wr);
	if (conn->closing)
		return;
	if (status < 0) {
		log_debug("connection %llu: write failed: %s", (unsigned long long)conn->serial,
			  uv_strerror(status));
		conn_close(conn);
		return;
	}
	if (conn->draining) {
		if (conn->queued == 0 && conn->pending == NULL)
			conn_close(conn);
		return;
	}
	if (conn->replaying && conn->queued <= max_queued(conn->srv) / 2)
		rocmd_events_replay(conn);
	if (!conn->reading && conn->queued <= max_queued(conn->srv) / 2)
		conn_resume_reading(conn); /* the backlog first, if there is one */
}

int
rocmd_conn_send(struct rocmd_conn *conn, const char *payload, size_t len, int drop_if_slow)
{
	char hdr[ROCMD_PROTO_HEADER_SIZE];
	struct write_req *wr;
	size_t total = ROCMD_PROTO_HEADER_SIZE + len, done = 0;
	uv_buf_t buf;
	int rc;

	if (conn->closing)
		return ROCMD_ECLOSED;
	if (drop_if_slow && conn->queued + len > max_queued(conn->srv)) {
		log_warn("connection %llu (uid %u): subscriber is not reading; disconnecting",
			 (unsigned long long)conn->serial, (unsigned)conn->peer.uid);
		conn_close(conn);
		return ROCMD_EOVERLOAD;
	}
	hdr[0] = (char)((len >> 24) & 0xff);
	hdr[1] = (char)((len >> 16) & 0xff);
	hdr[2] = (char)((len >> 8) & 0xff);
	hdr[3] = (char)(len & 0xff);
	if (conn->queued == 0) {
		/* Most replies fit the socket buffer: write them now, with no copy
		 * and no write request (which would cost an epoll_ctl round trip). */
		uv_buf_t bufs[2] = {uv_buf_init(hdr, sizeof(hdr)),
				    uv_buf_init((char *)payload, (unsigned)len)};
		int n = uv_try_write((uv_stream_t *)&conn->pipe, bufs, 2);
		if (n >= 0 && (size_t)n == total)
			return 0;
		if (n < 0 && n != UV_EAGAIN) {
			conn_close(conn);
			return ROCMD_ECLOSED;
		}
		done = n > 0 ? (size_t)n : 0;
	}
	/* Queue what the kernel did not take. */
	wr = malloc(sizeof(*wr) + total - done);
	if (wr == NULL)
		return ROCMD_ENOMEM;
	wr->conn = conn;
	wr->len = total - done;
	if (done < sizeof(hdr)) {
		memcpy(wr->data, hdr + done, sizeof(hdr) - done);
		memcpy(wr->data + sizeof(hdr) - done, payload, len);
	} else {
		memcpy(wr->data, payload + (done - sizeof(hdr)), total - done);
	}
	buf = uv_buf_init(wr->data, (unsigned)wr->len);
	rc = uv_write(&wr->req, (uv_stream_t *)&conn->pipe, &buf, 1, on_write);
	if (rc < 0) {
		free(wr);
		conn_close(conn);
		return ROCMD_ECLOSED;
	}
	conn->queued += wr->len;
	return 0;
}

/* Sends a builder's output and frees it; NULL means the builder ran out of memory. */
static void
send_owned(struct rocmd_conn *conn, char *payload)
{
	if (payload == NULL) {
		log_err("out of memory building a reply");
		conn_drain(conn);
		return;
	}
	rocmd_conn_send(conn, payload, strlen(payload), 0);
	free(payload);
}

static void
send_error(struct rocmd_conn *conn, const cJSON *id, int err, const char *why, cJSON *data)
{
	send_owned(conn, rocmd_rpc_error(id, err, why != NULL && why[0] ? why : NULL, data));
}

static void
dispatch(struct rocmd_conn *conn, const struct rocmd_rpc *msg)
{
	const struct rocmd_method *m = rocmd_method_find(msg->method);
	cJSON *result = NULL, *data;
	char why[512] = "";
	int rc;

	if (m == NULL) {
		snprintf(why, sizeof(why), "method '%s' not found", msg->method);
		send_error(conn, msg->id, ROCMD_ENOMETHOD, why, NULL);
		return;
	}
	if (!conn->hello && !(m->flags & ROCMD_METHOD_PRE_HELLO)) {
		send_error(conn, msg->id, ROCMD_EHELLO, NULL, NULL);
		return;
	}
	if ((m->flags & ROCMD_METHOD_MUTATING) && !conn->peer.admin) {
		struct rocmd_server *srv = conn->srv;
		snprintf(why, sizeof(why),
			 "permission denied: '%s' changes the daemon's state and needs root or "
			 "membership of group '%s'",
			 m->name, srv->cfg->admin_group);
		data = cJSON_CreateObject();
		cJSON_AddNumberToObject(data, "uid", conn->peer.uid);
		cJSON_AddStringToObject(data, "required_group", srv->cfg->admin_group);
		log_notice("denied %s to uid %u (pid %d)", m->name, (unsigned)conn->peer.uid,
			   (int)conn->peer.pid);
		send_error(conn, msg->id, ROCMD_EPERM, why, data);
		return;
	}
	conn->current_id = msg->id;
	rc = m->fn(conn, msg->params, &result, why, sizeof(why));
	conn->current_id = NULL;
	if (conn->closing || rc == ROCMD_METHOD_DEFERRED)
		goto out;
	if (rc < 0)
		send_error(conn, msg->id, rc, why, NULL);
	else
		send_owned(conn, rocmd_rpc_result(msg->id, result != NULL ? result
									 : cJSON_CreateObject()));
	result = NULL;
out:
	cJSON_Delete(result);
}

static void
handle_payload(struct rocmd_conn *conn, const char *payload, size_t len)
{
	struct rocmd_server *srv = conn->srv;
	struct rocmd_rpc msg;
	cJSON *bad_id = NULL;
	char why[256] = "";
	int rc;

	rc = rocmd_rpc_parse(payload, len, 0, &msg, &bad_id, why, sizeof(why));
	if (rc < 0) {
		log_debug("connection %llu: bad message: %s", (unsigned long long)conn->serial, why);
		send_error(conn, bad_id, rc, why, NULL);
		cJSON_Delete(bad_id);
		return;
	}
	if (msg.kind == ROCMD_RPC_REQUEST)
		dispatch(conn, &msg);
	/* Clients send no notifications or responses we act on; JSON-RPC forbids
	 * replying to them, so they are ignored. */
	rocmd_rpc_free(&msg);
	if (srv->shutdown_requested && !srv->shutting_down)
		rocmd_server_shutdown(srv, "requested by a client");
}

/*
 * Feeds LEN bytes to CONN's decoder and handles each whole frame, until the
 * bytes are used up, CONN's queued output is over its limit (checked before
 * every frame: one read may hold hundreds of requests), or it has had
 * FRAMES_PER_TURN frames. Returns how many bytes were used.
 */
static size_t
feed(struct rocmd_conn *conn, const char *data, size_t len)
{
	size_t off = 0;
	int frames = 0;

	while (off < len && !conn->closing && !conn->draining) {
		char *frame = NULL;
		size_t used = 0, flen = 0;
		int rc;

		if (conn->queued > max_queued(conn->srv) || frames >= FRAMES_PER_TURN)
			break;
		rc = rocmd_frame_feed(&conn->dec, data + off, len - off, &used, &frame, &flen);
		off += used;
		if (rc < 0) {
			char why[128];
			snprintf(why, sizeof(why), "%s (limit %lld bytes); closing the connection",
				 rocmd_strerror(rc), (long long)conn->srv->cfg->max_frame);
			log_info("connection %llu: %s", (unsigned long long)conn->serial, why);
			send_error(conn, NULL, rc, why, NULL);
			conn_drain(conn);
			return len;
		}
		if (frame != NULL) {
			conn->last_ms = uv_now(conn->srv->loop);
			frames++;
			handle_payload(conn, frame, flen);
			free(frame);
		}
	}
	return off;
}

static void
stop_reading(struct rocmd_conn *conn)
{
	if (conn->reading) {
		uv_read_stop((uv_stream_t *)&conn->pipe);
		conn->reading = 0;
	}
}

/* Keeps the LEN bytes at DATA that feed() left for later; reading stops
 * until they are used. */
static void
keep_backlog(struct rocmd_conn *conn, const char *data, size_t len)
{
	char *copy = malloc(len);

	stop_reading(conn);
	if (copy == NULL) {
		log_err("connection %llu: out of memory keeping its input; closing it",
		        (unsigned long long)conn->serial);
		conn_drain(conn);
		return;
	}
	memcpy(copy, data, len);
	conn->backlog = copy;
	conn->backlog_len = len;
	conn->backlog_off = 0;
	if (conn->queued <= max_queued(conn->srv))
		schedule_resume(conn->srv); /* it only had its turn */
}

static void
on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct rocmd_conn *conn = s->data;
	size_t used;

	if (nread < 0) {
		if (nread != UV_EOF)
			log_debug("connection %llu: read: %s", (unsigned long long)conn->serial,
				  uv_strerror((int)nread));
		else if (rocmd_frame_pending(&conn->dec))
			log_info("connection %llu: closed in the middle of a frame",
				 (unsigned long long)conn->serial);
		conn_drain(conn);
		return;
	}
	used = feed(conn, buf->base, (size_t)nread);
	if (conn->closing || conn->draining)
		return;
	if (used < (size_t)nread)
		keep_backlog(conn, buf->base + used, (size_t)nread - used);
	else if (conn->queued > max_queued(conn->srv))
		stop_reading(conn); /* the peer is not reading its replies */
}

/* Feeds each connection's backlog for one turn; runs while any can go on. */
static void
on_resume(uv_idle_t *h)
{
	struct rocmd_server *srv = h->data;
	int more = 0;

	for (struct rocmd_conn *c = srv->conns, *next; c != NULL; c = next) {
		next = c->next;
		if (c->backlog == NULL || c->closing || c->draining ||
		    c->queued > max_queued(srv))
			continue;
		c->backlog_off += feed(c, c->backlog + c->backlog_off,
		                       c->backlog_len - c->backlog_off);
		if (c->closing || c->draining)
			continue;
		if (c->backlog_off == c->backlog_len) {
			free(c->backlog);
			c->backlog = NULL;
			if (c->queued <= max_queued(srv))
				conn_resume_reading(c);
		} else if (c->queued <= max_queued(srv)) {
			more = 1;
		}
	}
	if (!more)
		uv_idle_stop(h);
}

static void
schedule_resume(struct rocmd_server *srv)
{
	if (!srv->shutting_down && !uv_is_active((uv_handle_t *)&srv->resume))
		uv_idle_start(&srv->resume, on_resume);
}

/* Closes connections that sent no hello in time, and non-admins' that were
 * silent too long with nothing owed to them and no subscription. */
static void
on_sweep(uv_timer_t *t)
{
	struct rocmd_server *srv = t->data;
	uint64_t now = uv_now(srv->loop);
	uint64_t hello = (uint64_t)srv->cfg->hello_timeout_ms;
	uint64_t idle = (uint64_t)srv->cfg->idle_timeout_s * 1000;

	for (struct rocmd_conn *c = srv->conns, *next; c != NULL; c = next) {
		next = c->next;
		if (c->closing || c->draining)
			continue;
		if (!c->hello && now - c->opened_ms >= hello) {
			char why[96];
			snprintf(why, sizeof(why), "no hello within %llu ms; closing the connection",
			         (unsigned long long)hello);
			log_info("connection %llu (uid %u): %s", (unsigned long long)c->serial,
			         (unsigned)c->peer.uid, why);
			send_error(c, NULL, ROCMD_EHELLO, why, NULL);
			conn_drain(c);
		} else if (!c->peer.admin && idle > 0 && !c->subscribed && c->pending == NULL &&
		           c->backlog == NULL && now - c->last_ms >= idle) {
			log_info("connection %llu (uid %u): silent for %llu s; closing it",
			         (unsigned long long)c->serial, (unsigned)c->peer.uid,
			         (unsigned long long)(idle / 1000));
			send_error(c, NULL, ROCMD_ETIMEDOUT, "idle for too long; closing the connection",
			           NULL);
			conn_drain(c);
		}
	}
	if (srv->conns == NULL)
		uv_timer_stop(t);
}

/* Whether a new connection of PEER may stay; WHY says why not. Connections
 * on their way out (refused, draining) do not count. */
static int
admit(struct rocmd_server *srv, const struct rocmd_conn *conn, char *why, size_t whylen)
{
	int64_t total = 0, mine = 0, limit = srv->cfg->max_connections;

	for (const struct rocmd_conn *c = srv->conns; c != NULL; c = c->next) {
		if (c == conn || c->closing || c->draining)
			continue;
		total++;
		if (c->peer.uid == conn->peer.uid)
			mine++;
	}
	if (!conn->peer.admin) {
		/* At least one place stays open to everyone. */
		limit -= srv->cfg->admin_reserved < limit ? srv->cfg->admin_reserved : limit - 1;
		if (mine >= srv->cfg->max_per_user) {
			snprintf(why, whylen, "too many connections of uid %u (limit %lld per user)",
			         (unsigned)conn->peer.uid, (long long)srv->cfg->max_per_user);
			return 0;
		}
	}
	if (total >= limit) {
		if (conn->peer.admin || srv->cfg->admin_reserved == 0)
			snprintf(why, whylen, "too many connections (limit %lld)",
			         (long long)srv->cfg->max_connections);
		else
			snprintf(why, whylen,
			         "too many connections (limit %lld, of which %lld are kept for root "
			         "and group '%s')",
			         (long long)srv->cfg->max_connections,
			         (long long)srv->cfg->admin_reserved, srv->cfg->admin_group);
		return 0;
	}
	return 1;
}

void
rocmd_server_adopt(struct rocmd_server *srv, struct rocmd_conn *conn)
{
	conn->serial = ++srv->next_serial;
	conn->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = conn;
	srv->conns = conn;
	srv->nconns++;
	log_debug("connection %llu from uid %u pid %d%s", (unsigned long long)conn->serial,
		  (unsigned)conn->peer.uid, (int)conn->peer.pid, conn->peer.admin ? " (admin)" : "");
	if (srv->shutting_down) {
		send_error(conn, NULL, ROCMD_ESHUTDOWN, NULL, NULL);
		conn_drain(conn);
		return;
	}
	{
		char why[192];
		if (!admit(srv, conn, why, sizeof(why))) {
			log_warn("%s: refusing uid %u", why, (unsigned)conn->peer.uid);
			send_error(conn, NULL, ROCMD_EOVERLOAD, why, NULL);
			conn_drain(conn);
			return;
		}
	}
	conn->opened_ms = conn->last_ms = uv_now(srv->loop);
	if (!uv_is_active((uv_handle_t *)&srv->sweep))
		uv_timer_start(&srv->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
	conn_resume_reading(conn);
}

struct rocmd_pending *
rocmd_conn_defer(struct rocmd_conn *conn)
{
	struct rocmd_pending *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->conn = conn;
	p->id = conn->current_id != NULL ? cJSON_Duplicate(conn->current_id, 1) : NULL;
	p->next = conn->pending;
	conn->pending = p;
	return p;
}

int
rocmd_pending_alive(const struct rocmd_pending *p)
{
	return p != NULL && p->conn != NULL && !p->conn->closing;
}

void
rocmd_pending_progress(struct rocmd_pending *p, cJSON *params)
{
	char *payload;

	if (!rocmd_pending_alive(p) || params == NULL) {
		cJSON_Delete(params);
		return;
	}
	cJSON_AddItemReferenceToObject(params, "request", p->id);
	payload = rocmd_rpc_notification("progress", params);
	if (payload != NULL)
		rocmd_conn_send(p->conn, payload, strlen(payload), 1);
	free(payload);
}

void
rocmd_pending_finish(struct rocmd_pending *p, int err, const char *why, cJSON *result)
{
	struct rocmd_conn *conn = p->conn;

	if (conn != NULL) {
		for (struct rocmd_pending **pp = &conn->pending; *pp != NULL; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		if (!conn->closing) {
			if (err < 0)
				send_error(conn, p->id, err, why, NULL);
			else
				send_owned(conn, rocmd_rpc_result(p->id, result != NULL
										? result
										: cJSON_CreateObject()));
			result = NULL;
			if (conn->draining && conn->queued == 0 && conn->pending == NULL)
				conn_close(conn);
		}
	}
	cJSON_Delete(result);
	cJSON_Delete(p->id);
	free(p);
}

void
rocmd_server_counts_changed(struct rocmd_server *srv)
{
	srv->counts_stale = 1;
}

static int
event_matches(const struct rocmd_conn *conn, const char *kind)
{
	return conn->sub_kind == NULL || strncmp(kind, conn->sub_kind, strlen(conn->sub_kind)) == 0;
}

void
rocmd_server_event(struct rocmd_server *srv, const char *kind, cJSON *detail, const char *fmt,
		   ...)
{
	char message[1024];
	char *detail_text = NULL, *payload = NULL;
	cJSON *params = NULL;
	int64_t id = 0, now = rocmd_now_ms();
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (detail != NULL)
		detail_text = cJSON_PrintUnformatted(detail);
	log_info("event %s: %s", kind, message);
	rc = rocmd_db_event_add(srv->db, kind, message, detail_text, &id);
	if (rc < 0) {
		log_err("cannot record event %s: %s (%s)", kind, rocmd_strerror(rc),
			rocmd_db_errmsg(srv->db));
		goto out;
	}
	srv->counts.events++;
	if (rocmd_db_wal_check(srv->db) > 0) {
		/* Said once, and recorded in the restored log. */
		log_warn("the database's write-ahead log was deleted while rocmd ran; its "
		         "contents are now in the database and a new log is in place");
		rocmd_server_event(srv, "daemon.wal_restored", NULL,
		                   "the database's write-ahead log was deleted and has been restored");
	}

	params = cJSON_CreateObject();
	cJSON_AddNumberToObject(params, "id", (double)id);
	cJSON_AddNumberToObject(params, "time_ms", (double)now);
	cJSON_AddStringToObject(params, "kind", kind);
	cJSON_AddStringToObject(params, "message", message);
	if (detail != NULL) {
		cJSON_AddItemToObject(params, "detail", detail);
		detail = NULL;
	} else {
		cJSON_AddNullToObject(params, "detail");
	}
	payload = rocmd_rpc_notification("event", params);
	params = NULL;
	if (payload == NULL)
		goto out;
	for (struct rocmd_conn *c = srv->conns, *next; c != NULL; c = next) {
		next = c->next;
		/* A subscriber still replaying the history gets this one from it. */
		if (c->subscribed && !c->replaying && !c->draining && event_matches(c, kind))
			rocmd_conn_send(c, payload, strlen(payload), 1);
	}
	/* SDK changes make the tuner's results stale, for one (tune-sched.c). */
	for (int i = 0; i < srv->nengines; i++)
		if (srv->engines[i].ops->event != NULL)
			srv->engines[i].ops->event(srv->engines[i].self, kind);
out:
	free(payload);
	free(detail_text);
	cJSON_Delete(params);
	cJSON_Delete(detail);
}

static void
on_grace(uv_timer_t *t)
{
	struct rocmd_server *srv = t->data;

	log_warn("shutdown: %d connection(s) did not drain in %d ms; closing them", srv->nconns,
		 SHUTDOWN_GRACE_MS);
	while (srv->conns != NULL)
		conn_close(srv->conns);
}

void
rocmd_server_check_done(struct rocmd_server *srv)
{
	if (!srv->shutting_down || srv->conns != NULL || srv->listening)
		return;
	if (!uv_is_closing((uv_handle_t *)&srv->grace)) {
		uv_close((uv_handle_t *)&srv->grace, NULL);
		uv_close((uv_handle_t *)&srv->sweep, NULL);
		uv_close((uv_handle_t *)&srv->resume, NULL);
		uv_close((uv_handle_t *)&srv->sig_term, NULL);
		uv_close((uv_handle_t *)&srv->sig_int, NULL);
		uv_close((uv_handle_t *)&srv->sig_hup, NULL);
	}
}

void
rocmd_server_shutdown(struct rocmd_server *srv, const char *why)
{
	if (srv->shutting_down) {
		/* A second request: stop waiting for slow readers. */
		on_grace(&srv->grace);
		return;
	}
	srv->shutting_down = 1;
	log_notice("shutting down: %s", why);
	for (int i = srv->nengines - 1; i >= 0; i--)
		if (srv->engines[i].ops->shutdown != NULL)
			srv->engines[i].ops->shutdown(srv->engines[i].self);
	rocmd_service_stopping(why);
	rocmd_ipc_close(srv);
	for (struct rocmd_conn *c = srv->conns, *next; c != NULL; c = next) {
		next = c->next;
		conn_drain(c);
	}
	if (srv->conns != NULL)
		uv_timer_start(&srv->grace, on_grace, SHUTDOWN_GRACE_MS, 0);
	rocmd_server_check_done(srv);
}

int
rocmd_server_add_engine(struct rocmd_server *srv, const struct rocmd_engine_ops *ops, void *self)
{
	if (srv->nengines == ROCMD_ENGINES_MAX)
		return ROCMD_EINTERNAL;
	srv->engines[srv->nengines].ops = ops;
	srv->engines[srv->nengines].self = self;
	srv->nengines++;
	return 0;
}

void
rocmd_server_close_engines(struct rocmd_server *srv)
{
	for (int i = srv->nengines - 1; i >= 0; i--)
		if (srv->engines[i].ops->close != NULL)
			srv->engines[i].ops->close(srv->engines[i].self);
}

void
rocmd_server_free_engines(struct rocmd_server *srv)
{
	for (int i = srv->nengines - 1; i >= 0; i--)
		if (srv->engines[i].ops->free != NULL)
			srv->engines[i].ops->free(srv->engines[i].self);
	srv->nengines = 0;
}

static void
on_signal(uv_signal_t *h, int signum)
{
	struct rocmd_server *srv = h->data;

	if (signum == SIGHUP) {
		log_notice("SIGHUP: reopening the log file");
		if (srv->cfg->log_file != NULL)
			rocmd_log_open_file(srv->cfg->log_file);
		return;
	}
	rocmd_server_shutdown(srv, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

int
rocmd_server_init(struct rocmd_server *srv, uv_loop_t *loop, struct rocmd_config *cfg,
		  struct rocmd_db *db)
{
	uv_signal_t *sigs[] = {&srv->sig_term, &srv->sig_int, &srv->sig_hup};
	int signums[] = {SIGTERM, SIGINT, SIGHUP};
	int rc;

	memset(srv, 0, sizeof(*srv));
	srv->loop = loop;
	srv->cfg = cfg;
	srv->db = db;
	srv->lock_fd = -1;
	srv->started_ms = rocmd_now_ms();
	srv->pid = getpid();
	srv->counts_stale = 1;
	uv_timer_init(loop, &srv->grace);
	srv->grace.data = srv;
	uv_timer_init(loop, &srv->sweep);
	srv->sweep.data = srv;
	uv_unref((uv_handle_t *)&srv->sweep);
	uv_idle_init(loop, &srv->resume);
	srv->resume.data = srv;
	for (int i = 0; i < 3; i++) {
		uv_signal_init(loop, sigs[i]);
		sigs[i]->data = srv;
		rc = uv_signal_start(sigs[i], on_signal, signums[i]);
		if (rc < 0)
			return rc;
	}
	rocmd_auth_resolve_group(cfg->admin_group, &srv->admin_gid, &srv->admin_gid_known);
	return 0;
}
