/*
 * The machine's environment for the programs started from now on, where the
 * vendor overrides are named (tune-override.c): ROCBLAS_TENSILE_GEMM_OVERRIDE_PATH
 * and HIPBLASLT_TUNING_OVERRIDE_FILE. The platform files say where:
 *
 *   Linux     ROOT/etc/environment.d/60-rocmd-tune.conf (systemd's user
 *             sessions and the desktop they start), ROOT/etc/profile.d/
 *             rocmd-tune.sh (login shells), and the systemd manager's own
 *             environment (`systemctl set-environment` / `unset-environment`,
 *             for the services it starts) when rocmd runs under systemd and
 *             ROOT is /. Each file is replaced atomically and durably; with
 *             no variable set, the files are removed.
 *   Windows   the machine environment (HKLM\SYSTEM\CurrentControlSet\Control\
 *             Session Manager\Environment), then WM_SETTINGCHANGE broadcast
 *             so that Explorer and what it starts read it again.
 */
#ifndef ROCMD_TUNE_ENV_H
#define ROCMD_TUNE_ENV_H

#include <stddef.h>

struct tune_env_var {
	const char *name;
	const char *value; /* NULL: not set */
};

/* Makes VARS (all of rocmd's variables, each set or not) the machine's. 0, or
 * a negative error with a sentence in WHY (what was applied stays). */
int tune_env_apply(const char *root, const struct tune_env_var *vars, int n, char *why,
                   size_t whylen);

/* The value the machine's environment gives NAME, as rocmd wrote it (Linux:
 * ROOT's environment.d file; Windows: the machine environment): 1 with it in
 * VALUE and where it was read in WHERE, 0 when it names none. */
int rocmd_tune_env_read(const char *root, const char *name, char *value, size_t len, char *where,
                        size_t wlen);

#endif
