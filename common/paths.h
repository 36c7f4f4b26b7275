/*
 * Default locations shared by the daemon and its clients: where the socket and
 * the state folder live when nothing was configured. The daemon and rocmctl
 * must agree on these, so both ask this module.
 */
#ifndef ROCMD_PATHS_H
#define ROCMD_PATHS_H

#include <stddef.h>

#define ROCMD_SYSTEM_SOCKET "/run/rocmd/rocmd.sock"
#define ROCMD_SYSTEM_STATE_DIR "/var/lib/rocmd"

/*
 * The socket the daemon listens on by default: the system socket as root,
 * $XDG_RUNTIME_DIR/rocmd.sock otherwise. Returns 0, or ROCMD_ENOTFOUND when
 * no runtime folder is known (the user must pass --socket).
 */
int rocmd_paths_daemon_socket(char *out, size_t outlen);
/*
 * The socket a client tries by default: $ROCMD_SOCKET, else the user's own
 * daemon if its socket exists, else the system daemon's.
 */
int rocmd_paths_client_socket(char *out, size_t outlen);
/*
 * The configuration file read when none is given: /etc/rocmd/rocmd.json as
 * root, else the user's ($XDG_CONFIG_HOME or ~/.config); on Windows
 * %ProgramData%\rocmd\rocmd.json. Returns BUF (or a constant), or NULL when
 * there is none.
 */
const char *rocmd_paths_default_config(char *buf, size_t len);
/*
 * The state folder when nothing is configured, newly allocated (NULL when out
 * of memory): /var/lib/rocmd as root, else the user's XDG state folder; on
 * Windows %ProgramData%\rocmd.
 */
char *rocmd_paths_default_state_dir(void);
/* Creates DIR and its missing parents with MODE. Returns 0 or -errno. */
int rocmd_paths_mkdir_p(const char *dir, unsigned mode);

#endif
