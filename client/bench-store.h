/*
 * Where `rocmctl bench` keeps its runs (bench-store.c), and the figures all
 * of bench's commands derive from a run's samples. A run is the caller's
 * own: one JSON file per run under the caller's state folder,
 * $XDG_STATE_HOME/rocmd/bench/<id>.json (else ~/.local/state/rocmd/bench;
 * %LOCALAPPDATA%\rocmd\bench on Windows), never in the daemon, which would
 * have to take writes from users who are not admins.
 */
#ifndef ROCMD_BENCH_STORE_H
#define ROCMD_BENCH_STORE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The folder of the caller's runs (not created). 0, or ROCMD_ENOTFOUND with
 * no home folder to put it in. */
int bench_store_dir(char *out, size_t len);
/* Stores RUN under a new id (its "id" member is set): 0 and *PATH, or an
 * error with the reason in WHY. */
int bench_store_save(cJSON *run, char *path, size_t pathlen, char *why, size_t whylen);
/* Reads run ID (an id of bench_store_list, or a file's path): 0, or an error
 * with a sentence in WHY (absent; not JSON; not a bench run). */
int bench_store_load(const char *id, cJSON **out, char *why, size_t whylen);
/* Every stored run, oldest first, in an array; an unreadable file is listed
 * as {"id", "error"}, or left out when READABLE_ONLY. */
int bench_store_list(int readable_only, cJSON **out);

/* Median, lowest and highest of the N values at V (sorted in place). */
void bench_stats(double *v, int n, double *median, double *lo, double *hi);
/* A variant's figure F of a stored run: "0.395 ms [0.371-0.611]" (the median
 * of the rounds, the lowest and highest round) in BUF, or "failed". */
const char *bench_fig(const cJSON *f, char *buf, size_t len);
/* Whether figures A and B are within the noise of each other: their spreads
 * overlap. */
int bench_within_noise(const cJSON *a, const cJSON *b);

#endif
