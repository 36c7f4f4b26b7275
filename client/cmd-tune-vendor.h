/*
 * The vendor part of rocmctl tune results (cmd-tune-vendor.c, whose capture,
 * import-log, off and on handlers cmd.h declares); the capture's program run
 * is the platform's (capture-unix.c, capture-win.c).
 */
#ifndef ROCMD_CMD_TUNE_VENDOR_H
#define ROCMD_CMD_TUNE_VENDOR_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Prints tune.results' vendor jobs (of TARGET, NULL all) per target with
 * the overrides; returns how many rows. */
int tune_results_vendor(const cJSON *r, const char *target);
/* All of file PATH ("-": stdin), NUL-terminated. 0 or a negative error. */
int tune_read_file(const char *path, char **out, size_t *len);

/*
 * Runs ARGV (a program on PATH or a path) with stdio inherited and the
 * vendors' GEMM logging on: rocBLAS's bench log (ROCBLAS_LAYER=2,
 * ROCBLAS_LOG_BENCH_PATH) and hipBLASLt's (HIPBLASLT_LOG_MASK=32,
 * HIPBLASLT_LOG_FILE, one file per process), each into a private folder made
 * for the run and removed after it. *LOGS gets every log file's text, *STATUS
 * the program's exit code, WHY how it ended ("exited with 0"). Under sudo
 * (root with SUDO_UID set) the program runs as the user who called sudo.
 */
int tune_capture_run(char **argv, char **logs, size_t *len, int *status, char *why,
                     size_t whylen);
int64_t tune_capture_pid(void);

#endif
