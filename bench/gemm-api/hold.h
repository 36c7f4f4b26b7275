/*
 * Holding the GPU's legacy default stream from the host (bench only): a
 * cuStreamWaitValue32 on a word of mapped host memory, so that the calls
 * enqueued behind it wait and the host's time to enqueue them is the host's
 * alone, not the GPU's time showing through a full queue. A watchdog thread
 * releases the hold after HOLD_MAX_S seconds in any case, so that a queue
 * that fills (the host blocking in a launch) cannot deadlock the run.
 */
#ifndef ROCMD_BENCH_HOLD_H
#define ROCMD_BENCH_HOLD_H

#include <stddef.h>

#define HOLD_MAX_S 3

struct hold;

/* Opens libcuda on the calling thread's current context: NULL (the reason in
 * WHY) where stream memory operations are not available. */
struct hold *hold_open(char *why, size_t whylen);
/* Enqueues the wait; 0, or -1. */
int hold_begin(struct hold *h);
/* Releases the wait; 1 when the watchdog had released it first (the
 * figure is then not the host's alone), else 0. */
int hold_release(struct hold *h);
void hold_close(struct hold *h);

#endif
