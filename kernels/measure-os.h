/*
 * The evaluation process of the tuner's evaluator (measure.c): this same
 * program started again with a hidden first argument (tune_evaluator_child)
 * through the child-process layer (common/spawn.h: posix_spawn, or
 * CreateProcessW inside a kill-on-close job object), in measure-proc.c.
 * The parent and the child talk over two anonymous pipes with the same
 * fixed-size messages on every platform, and the parent's side (watchdog,
 * cancel polling, crash -> "crashed", the next request starting a fresh
 * child) is measure.c's alone.
 *
 * Private to kernels/: measure.c is the only user.
 */
#ifndef ROCMD_KERNELS_MEASURE_OS_H
#define ROCMD_KERNELS_MEASURE_OS_H

#include <stddef.h>

#include "kernels/tune.h"

/* What the evaluation process needs to open the backend: the first message
 * the child reads. */
struct measure_spec {
	char backend[16];
	int index;
	struct gemm_problem p;
	struct tune_measure_opts o; /* .cancel is the parent's, never used by the child */
};

/* The platform's side of one evaluator: its current child process, if any. */
struct measure_proc;

int measure_proc_new(struct measure_proc **out);
/* Stops the child (waiting for it) and frees. NULL is fine. */
void measure_proc_free(struct measure_proc *c);
/* Starts a child serving SPEC (measure_child_serve): 0, or a negative error
 * with the reason in WHY. */
int measure_proc_start(struct measure_proc *c, const struct measure_spec *spec, char *why,
		       size_t whylen);
/* Whether a child is running (started and not stopped). */
int measure_proc_alive(const struct measure_proc *c);
/* Writes all of BUF to the child: 0, or ROCMD_EIO when it is gone. */
int measure_proc_write(struct measure_proc *c, const void *buf, size_t len);
/* Reads LEN bytes from the child before DEADLINE (ms on measure_mono_ms()'s
 * clock; 0 none): 0, ROCMD_ETIMEDOUT, ROCMD_ECLOSED when it went away, or
 * ROCMD_ECANCELED once *CANCEL (may be NULL) is set, looked at every 10 ms. */
int measure_proc_read(struct measure_proc *c, void *buf, size_t len, double deadline,
                      volatile int *cancel);
/* Ends the child: killed first when KILL_IT, then waited for. WHAT (may be
 * NULL) gets how it ended (rocmd_child_describe): "killed by signal 11",
 * "exited with 1", "ended by exception 0xC0000005". */
void measure_proc_stop(struct measure_proc *c, int kill_it, char *what, size_t whatlen);
/* Kills the child and forgets it without waiting for its exit (a GPU
 * context's teardown is not the caller's to wait for). */
void measure_proc_cancel(struct measure_proc *c);
/* Kills the child now, from any thread, while C exists; frees nothing. */
void measure_proc_kill(struct measure_proc *c);

/* ---- the child's side (measure.c) ---- */

/* Reads exactly LEN bytes (0, or an error at the end of input) / writes all
 * of LEN bytes (0 or an error), on the child's end of the pipes. */
struct measure_io {
	int (*read)(void *ctx, void *buf, size_t len);
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
};

/* In the child: reads the specification, opens its backend, sends the hello,
 * then answers requests until the parent closes its end. Returns the exit
 * code. */
int measure_child_serve(const struct measure_io *io);

/* Monotonic milliseconds (rocmd_child_now_ms, the clock of the deadlines). */
double measure_mono_ms(void);

#endif
