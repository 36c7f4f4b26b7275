/*
 * The tune scheduler's platform part (tune-os-unix.c, tune-os-win.c): a yield
 * that lands while the worker thread is still opening its evaluator has no
 * tune_evaluator to abort yet; these end the evaluation process the worker is
 * starting. Either way the worker's wait for that process polls the run's
 * cancel flag every 10 ms and ends the process itself (kernels/measure-*.c);
 * this only shortens the wait where the platform lets us.
 */
#ifndef ROCMD_TUNE_OS_H
#define ROCMD_TUNE_OS_H

/* An id of the calling thread for rocmd_tune_os_kill_opening (> 0). */
long rocmd_tune_os_thread_id(void);
/* Kills the evaluation processes that thread TID is starting. */
void rocmd_tune_os_kill_opening(long tid);

#endif
