/*
 * Who would be hurt by replacing a target's rocBLAS now: processes holding
 * the GPU and processes with the target's files open or mapped. Deploy asks
 * before swapping anything; the policy in config (deploy.gpu_busy: refuse or
 * defer) decides what happens, and the error names every pid and process
 * name found.
 *
 * Linux (gpu-users-unix.c): every pid listed under
 * /sys/class/kfd/kfd/proc/<pid> (looked up under the --root sysroot, so
 * tests can plant an entry) that is alive, and every process whose
 * /proc/<pid>/maps or /proc/<pid>/fd names a file under one of the given
 * host paths. Windows (gpu-users-win.c): the Restart Manager's list of
 * processes using the given files (rocblas.dll above all).
 *
 * Blocking: /proc walks take milliseconds to a second. Call it off the loop
 * thread.
 */
#ifndef ROCMD_GPU_USERS_H
#define ROCMD_GPU_USERS_H

#include <stddef.h>

struct rocmd_gpu_user {
	long pid;
	char name[64]; /* process name, or "?" */
	char what[96]; /* "holds the GPU", "maps librocblas.so.0", "has TensileLibrary.dat open" */
};

struct rocmd_gpu_users {
	struct rocmd_gpu_user *v;
	size_t n;
};

/*
 * Fills OUT with the processes holding the GPU (KFD, under sysroot ROOT; NULL
 * or "" for /) and those with files under any of the NPATHS host PATHS open
 * or mapped (paths may be files or folders). The calling process is never
 * listed. Each pid appears once. Returns 0 or ROCMD_ENOMEM.
 */
int rocmd_gpu_users_find(const char *root, const char *const *paths, size_t npaths,
                         struct rocmd_gpu_users *out);
void rocmd_gpu_users_free(struct rocmd_gpu_users *u);
/* "1234 (ollama: holds the GPU), 5678 (python3: maps librocblas.so.0)" into OUT. */
void rocmd_gpu_users_describe(const struct rocmd_gpu_users *u, char *out, size_t outlen);

/* For the platform files (gpu-users.c): appends PID with the reason WHAT and
 * the name "?" unless it is listed already. 0 with *ADDED the new entry (for
 * the caller to name) or NULL when the pid was there; ROCMD_ENOMEM. */
int rocmd_gpu_users_add(struct rocmd_gpu_users *u, long pid, const char *what,
                        struct rocmd_gpu_user **added);

#endif
