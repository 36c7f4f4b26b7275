/*
 * The platform's local IPC endpoint and peer identity. ipc-unix.c listens on a
 * Unix socket and reads peers with SO_PEERCRED; ipc-win.c serves a named pipe
 * with an explicit DACL and reads peers from the client's token.
 */
#ifndef ROCMD_IPC_H
#define ROCMD_IPC_H

#include <stddef.h>
#include <sys/types.h>

struct rocmd_server;
struct rocmd_peer;

/*
 * Starts listening on PATH. The socket appears at PATH already with its final
 * mode (bound under a temporary name, then renamed into place), and an
 * existing socket is replaced only when no daemon holds its lock and nothing
 * answers on it. Errors carry a sentence in WHY.
 */
int rocmd_ipc_listen(struct rocmd_server *srv, const char *path, char *why, size_t whylen);
/* Stops listening and removes the socket if it is still ours. */
void rocmd_ipc_close(struct rocmd_server *srv);

/* Looks up the admin group's id once (an unknown group means root only). */
void rocmd_auth_resolve_group(const char *group, gid_t *gid, int *known);
/* Fills PEER from the connected socket FD and decides whether it is an admin. */
int rocmd_auth_peer(int fd, gid_t admin_gid, int admin_gid_known, struct rocmd_peer *peer);
/* Windows (auth-win.c): fills PEER from a connected pipe HANDLE's client
 * token (impersonation), admin meaning elevated Administrators. */
int rocmd_auth_pipe_client(void *pipe, struct rocmd_peer *peer);

#endif
