/*
 * The daemon's core state and its client connections.
 *
 * struct rocmd_server owns the libuv loop handles, the database, the
 * configuration and the list of connections. The IPC layer (ipc-unix.c)
 * accepts streams and hands them to rocmd_server_adopt(); from then on this
 * module reads frames, dispatches requests through the method table
 * (methods.c), queues replies with a per-connection output limit and pushes
 * event notifications to subscribers. Everything here runs on the loop thread.
 */
#ifndef ROCMD_SERVER_H
#define ROCMD_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include <uv.h>

#include "common/config.h"
#include "common/proto.h"
#include "db/db.h"

struct rocmd_server;

/* Who is on the other end, from the kernel (SO_PEERCRED / the pipe token). */
struct rocmd_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int admin; /* may call mutating methods */
	long session; /* Windows: the client's logon session (TokenSessionId); -1 elsewhere */
};

struct rocmd_conn {
	uv_pipe_t pipe; /* first: the handle's data points back here too */
	struct rocmd_server *srv;
	struct rocmd_conn *prev, *next;
	uint64_t serial;
	struct rocmd_peer peer;
	struct rocmd_frame_decoder dec;
	size_t queued;  /* bytes written but not yet acknowledged by libuv */
	int hello;      /* handshake done */
	int reading;    /* uv_read_start active */
	int closing;    /* uv_close called */
	int draining;   /* close once the output queue is empty */
	int subscribed; /* receives "event" notifications */
	char *sub_kind; /* kind prefix filter, or NULL */
	int replaying;  /* still sending the history after replay_after */
	int64_t replay_after;
	const cJSON *current_id;        /* id of the request being dispatched */
	struct rocmd_pending *pending;  /* deferred replies still owed */
	/* Bytes read but not yet fed to the decoder: reading stops while there
	 * are any (the client's output is over its limit, or it has had its
	 * turn of frames), so at most one read buffer waits here. */
	char *backlog;
	size_t backlog_len, backlog_off;
	uint64_t opened_ms, last_ms; /* loop time: accepted, last request (timeouts) */
};

/*
 * A reply owed for a request whose work runs off the loop thread (hashing,
 * copying, GPU work). The handler calls rocmd_conn_defer() and returns
 * ROCMD_METHOD_DEFERRED; later, on the loop thread, the module reports
 * progress and finishes. If the client goes away first the pending reply is
 * detached and finishing it only frees it; the work itself decides whether
 * to go on (rocmd_pending_alive).
 */
struct rocmd_pending {
	struct rocmd_conn *conn; /* NULL once the connection is gone */
	cJSON *id;
	struct rocmd_pending *next;
};

/*
 * A part of the daemon with state and work of its own (the package store,
 * deploy, SDK discovery, tuning). main.c starts each and registers it; from
 * then on the server tells every registered engine about each event and
 * stops them all the same way, in the reverse order of registration.
 */
struct rocmd_engine_ops {
	const char *name;
	/* After each event is recorded (kind as rocmd_server_event got it). */
	void (*event)(void *self, const char *kind);
	/* `status` (optional): adds what the user should know now, a sentence
	 * each, to the array NOTES. */
	void (*status)(void *self, cJSON *notes);
	/* The daemon begins to stop: stop watching, cancel work, refuse more. */
	void (*shutdown)(void *self);
	/* The loop has ended: close the engine's handles. */
	void (*close)(void *self);
	/* Last, after the handles' close callbacks ran. */
	void (*free)(void *self);
};

#define ROCMD_ENGINES_MAX 8

struct rocmd_engine {
	const struct rocmd_engine_ops *ops;
	void *self;
};

struct rocmd_server {
	uv_loop_t *loop;
	struct rocmd_config *cfg;
	struct rocmd_db *db;
	char *socket_path;
	uv_pipe_t listener;
	int listening;
	int lock_fd;        /* the lock on the socket's lock file (lockfile.h) */
	char *lock_path;
	uv_signal_t sig_term, sig_int, sig_hup;
	uv_timer_t grace; /* only armed during shutdown */
	uv_timer_t sweep; /* hello and idle timeouts, while there are connections */
	uv_idle_t resume; /* feeds connections' backlogs, while any can go on */
	struct rocmd_conn *conns;
	int nconns;
	uint64_t next_serial;
	int64_t started_ms;
	pid_t pid; /* cached: glibc no longer caches getpid() */
	int previous_run_clean;
	int previous_run_unknown; /* no record of it: the database is new (main.c) */
	int64_t run_id;
	gid_t admin_gid;
	int admin_gid_known;
	int shutting_down;
	int shutdown_requested; /* by a client; acted on once its reply is queued */
	int exit_code;
	/* The engines, each NULL when not started, and their registrations. */
	struct rocmd_pkg_service *pkg; /* the package store (pkg/pkg-service.h) */
	struct rocmd_deploy_service *deploy; /* deploy (deploy/deploy-service.h) */
	struct rocmd_sdk *sdk;         /* SDK discovery (sdk/sdk.c) */
	struct rocmd_tune *tune;       /* idle tuning (tune/tune-sched.c) */
	struct rocmd_engine engines[ROCMD_ENGINES_MAX];
	int nengines;
	struct rocmd_db_counts counts; /* cached; refreshed when stale */
	int counts_stale;
};

/* Sets up signals and state; the caller has opened the database. */
int rocmd_server_init(struct rocmd_server *srv, uv_loop_t *loop, struct rocmd_config *cfg,
		      struct rocmd_db *db);
/* Registers engine SELF (see struct rocmd_engine_ops). 0 or ROCMD_EINTERNAL (too many). */
int rocmd_server_add_engine(struct rocmd_server *srv, const struct rocmd_engine_ops *ops,
                            void *self);
/* After the loop ended: every engine's close, then (once the loop ran the
 * close callbacks) every engine's free. */
void rocmd_server_close_engines(struct rocmd_server *srv);
void rocmd_server_free_engines(struct rocmd_server *srv);
/* Takes a connected stream from the IPC layer. */
void rocmd_server_adopt(struct rocmd_server *srv, struct rocmd_conn *conn);
/* Allocates a connection whose pipe is initialised on SRV's loop. */
struct rocmd_conn *rocmd_conn_new(struct rocmd_server *srv);
/* Frees a connection that was never adopted (its handle must be closed first). */
void rocmd_conn_discard(struct rocmd_conn *conn);
/* Begins a graceful shutdown: stop accepting, finish replies, then stop the loop. */
void rocmd_server_shutdown(struct rocmd_server *srv, const char *why);
/* During shutdown, once nothing is left to serve, closes the last handles so
 * uv_run returns. */
void rocmd_server_check_done(struct rocmd_server *srv);
/* Records an event in the history and notifies subscribers. DETAIL may be NULL
 * and is consumed. Failures are logged, never fatal. */
void rocmd_server_event(struct rocmd_server *srv, const char *kind, cJSON *detail,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Queues one JSON payload (copied) as a frame. When the output limit is
 * exceeded, a connection sending notifications (DROP_IF_SLOW) is closed as a
 * slow consumer; a requester simply stops being read until it catches up. */
int rocmd_conn_send(struct rocmd_conn *conn, const char *payload, size_t len, int drop_if_slow);
/* Marks the cached status counts stale after a write that changes them. */
void rocmd_server_counts_changed(struct rocmd_server *srv);
/* Defers the reply to the request being dispatched on CONN. */
struct rocmd_pending *rocmd_conn_defer(struct rocmd_conn *conn);
/* Sends a "progress" notification {"request": id, ...PARAMS}; PARAMS is consumed. */
void rocmd_pending_progress(struct rocmd_pending *p, cJSON *params);
/* Sends the reply (ERR < 0: an error with WHY; else RESULT, consumed) and frees P. */
void rocmd_pending_finish(struct rocmd_pending *p, int err, const char *why, cJSON *result);
int rocmd_pending_alive(const struct rocmd_pending *p);
/* Milliseconds since the Unix epoch. */
int64_t rocmd_now_ms(void);

#endif
