/*
 * The system root discovery looks under. `rocmd --root DIR` makes every system
 * path (/opt, /usr, /sys, /etc, and Windows drive paths such as
 * C:\Program Files\AMD\ROCm\6.2\) resolve under DIR, so discovery, watching
 * and GPU detection run unchanged against a sandbox folder. Paths shown to
 * users and stored in the database are the system paths ("/opt/rocm-5.7.1",
 * "C:\Program Files\AMD\ROCm\6.2\"); only file access goes through here.
 *
 * Symlinks are resolved inside the root: an absolute target ("/opt/rocm ->
 * /etc/alternatives/rocm") is taken relative to DIR, and ".." never climbs
 * above it, as a chroot would.
 */
#ifndef ROCMD_SYSROOT_H
#define ROCMD_SYSROOT_H

#include <stddef.h>

/*
 * Maps system path SYS to a host path under ROOT (NULL or "" = "/": SYS
 * unchanged). A Windows path "C:\a\b\" becomes ROOT/c/a/b: the drive letter
 * in lower case, backslashes as '/', no trailing separator. Returns 0 or
 * ROCMD_EINVAL (a relative path, or too long for OUT).
 */
int rocmd_sysroot_map(const char *root, const char *sys, char *out, size_t outlen);

/*
 * Resolves every symlink in system path SYS inside ROOT and writes the
 * canonical system path to OUT. Returns 0, -ELOOP for a symlink loop,
 * -ENOENT / -EACCES / -ENOTDIR as lstat reports them, or ROCMD_EINVAL.
 */
int rocmd_sysroot_resolve(const char *root, const char *sys, char *out, size_t outlen);

/* True when the system path SYS is a Windows drive path ("C:\..." or "C:/..."). */
int rocmd_sysroot_is_windows_path(const char *sys);

#endif
