/*
 * The Unix-socket endpoint of the daemon.
 *
 * Listening is set up so that no client ever sees a half-made socket: a lock
 * file beside the socket says whether another daemon owns the name; the new
 * socket is bound under a temporary name with a restrictive umask, given its
 * final mode (0666: every local user may connect, authorization is per
 * method), and only then renamed over the final name. A leftover socket from
 * a crashed daemon is replaced, also one that still answers when the process
 * that listened on it is gone; a live one is never touched. libuv takes the
 * ready listening descriptor through uv_pipe_open.
 *
 * Under socket activation (rocmd.socket) systemd made and owns the socket:
 * rocmd adopts the passed descriptor as it is and never removes the name.
 */
#include "ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "common/paths.h"
#include "lockfile.h"
#include "server.h"
#include "service/service.h"

#define LISTEN_BACKLOG 511

static int
fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* 1 if something accepts connections on PATH, 2 if something listens there
 * but its queue is full, 0 if nothing listens, -errno if unknown. *LISTENER:
 * the pid of the process that called listen() on it (0: unknown). Never
 * waits: a blocking connect() to a full queue would hang the daemon's start. */
static int
socket_answers(const char *path, pid_t *listener)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, rc;

	*listener = 0;
	if (fill_addr(&sa, path) < 0)
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	rc = rc == 0 ? 1 : errno == EAGAIN ? 2 : (errno == ECONNREFUSED || errno == ENOENT) ? 0 : -errno;
	if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		*listener = cred.pid;
	close(fd);
	return rc;
}

static void
on_connection(uv_stream_t *listener, int status)
{
	struct rocmd_server *srv = listener->data;
	struct rocmd_conn *conn;
	uv_os_fd_t fd;
	int rc;

	if (status < 0) {
		log_warn("accept: %s", uv_strerror(status));
		return;
	}
	conn = rocmd_conn_new(srv);
	if (conn == NULL) {
		log_err("accept: out of memory");
		return;
	}
	rc = uv_accept(listener, (uv_stream_t *)&conn->pipe);
	if (rc == 0)
		rc = uv_fileno((uv_handle_t *)&conn->pipe, &fd);
	if (rc == 0)
		rc = rocmd_auth_peer(fd, srv->admin_gid, srv->admin_gid_known, &conn->peer);
	if (rc < 0) {
		log_warn("accept: cannot identify the peer: %s", rocmd_strerror(rc));
		rocmd_conn_discard(conn);
		return;
	}
	rocmd_server_adopt(srv, conn);
}

static int
check_existing(const char *path, char *why, size_t whylen)
{
	struct stat st;
	pid_t listener;
	int answers;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, whylen, "%s exists and is not a socket; refusing to replace it", path);
		return ROCMD_EEXISTS;
	}
	answers = socket_answers(path, &listener);
	/* The process that listened is gone, yet the socket answers: a child of a
	 * daemon that died (kill -9) while starting it, still between clone and
	 * exec with a copy of the listening descriptor. Nobody will ever accept
	 * there, and we hold the socket's lock: it is stale. */
	if (answers == 1 && listener > 0 && kill(listener, 0) != 0 && errno == ESRCH) {
		log_notice("replacing socket %s: it still answers, but pid %ld, which listened "
			   "on it, is gone", path, (long)listener);
		return 0;
	}
	if (answers == 1) {
		snprintf(why, whylen, "another process (pid %ld) is already answering on %s",
			 (long)listener, path);
		return ROCMD_EBUSY;
	}
	if (answers == 2) {
		snprintf(why, whylen, "another process is already answering on %s, but accepts "
				      "nothing (its queue is full)", path);
		return ROCMD_EBUSY;
	}
	if (answers < 0) {
		snprintf(why, whylen, "cannot probe the existing socket %s: %s", path,
			 strerror(-answers));
		return answers;
	}
	log_notice("replacing stale socket %s", path);
	return 0;
}

/* Serves on the socket systemd passed; PATH is only what we would have bound. */
static int
listen_activated(struct rocmd_server *srv, int fd, const char *path, char *why, size_t whylen)
{
	char name[4096];
	size_t len = sizeof(name);
	int rc;

	uv_pipe_init(srv->loop, &srv->listener, 0);
	srv->listener.data = srv;
	rc = uv_pipe_open(&srv->listener, fd);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&srv->listener, LISTEN_BACKLOG, on_connection);
	if (rc < 0) {
		snprintf(why, whylen, "cannot listen on the socket systemd passed: %s",
			 uv_strerror(rc));
		uv_close((uv_handle_t *)&srv->listener, NULL);
		return rc;
	}
	if (uv_pipe_getsockname(&srv->listener, name, &len) != 0 || len == 0)
		snprintf(name, sizeof(name), "%s", path);
	else
		name[len < sizeof(name) ? len : sizeof(name) - 1] = '\0';
	srv->listening = 1;
	free(srv->socket_path);
	srv->socket_path = strdup(name);
	log_notice("listening on %s (socket activation)", name);
	return 0;
}

int
rocmd_ipc_listen(struct rocmd_server *srv, const char *path, char *why, size_t whylen)
{
	char dir[4096], tmp[4096], lock[4096];
	struct sockaddr_un sa;
	mode_t old_mask;
	pid_t holder;
	int fd = rocmd_service_listen_fd(), lock_fd = -1, rc;

	if (fd >= 0)
		return listen_activated(srv, fd, path, why, whylen);
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp) ||
	    snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock) ||
	    fill_addr(&sa, tmp) < 0) {
		snprintf(why, whylen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	rc = rocmd_paths_mkdir_p(dirname(dir), 0755);
	if (rc < 0) {
		snprintf(why, whylen, "cannot create the socket's folder for %s: %s", path,
			 strerror(-rc));
		return rc;
	}
	lock_fd = rocmd_lockfile_acquire(lock, &holder);
	if (lock_fd == ROCMD_ELOCKED) {
		snprintf(why, whylen, "another rocmd (pid %ld) owns the socket %s", (long)holder,
			 path);
		return ROCMD_EBUSY;
	}
	if (lock_fd < 0) {
		snprintf(why, whylen, "cannot lock %s: %s", lock, strerror(-lock_fd));
		return lock_fd;
	}
	rc = check_existing(path, why, whylen);
	if (rc < 0)
		goto fail;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "socket: %s", strerror(errno));
		goto fail;
	}
	unlink(tmp);
	old_mask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (rc != 0 || chmod(tmp, 0666) != 0 || listen(fd, LISTEN_BACKLOG) != 0 ||
	    rename(tmp, path) != 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot listen on %s: %s", path, strerror(errno));
		unlink(tmp);
		goto fail;
	}
	uv_pipe_init(srv->loop, &srv->listener, 0);
	srv->listener.data = srv;
	rc = uv_pipe_open(&srv->listener, fd);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&srv->listener, LISTEN_BACKLOG, on_connection);
	if (rc < 0) {
		snprintf(why, whylen, "cannot listen on %s: %s", path, uv_strerror(rc));
		uv_close((uv_handle_t *)&srv->listener, NULL);
		unlink(path);
		fd = -1; /* owned by the handle now */
		goto fail;
	}
	srv->listening = 1;
	srv->lock_fd = lock_fd;
	free(srv->socket_path);
	srv->socket_path = strdup(path);
	srv->lock_path = strdup(lock);
	log_notice("listening on %s", path);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	rocmd_lockfile_release(lock_fd);
	return rc;
}

static void
on_listener_closed(uv_handle_t *h)
{
	struct rocmd_server *srv = h->data;

	srv->listening = 0;
	rocmd_lockfile_release(srv->lock_fd);
	srv->lock_fd = -1;
	rocmd_server_check_done(srv);
}

void
rocmd_ipc_close(struct rocmd_server *srv)
{
	if (!srv->listening || uv_is_closing((uv_handle_t *)&srv->listener))
		return;
	/* Remove the name while we still hold the lock, so a new daemon never
	 * loses its fresh socket to our cleanup. Without the lock the socket is
	 * systemd's (socket activation) and stays. */
	if (srv->socket_path != NULL && srv->lock_fd >= 0)
		unlink(srv->socket_path);
	uv_close((uv_handle_t *)&srv->listener, on_listener_closed);
}
