/*
 * The evaluation process of the tuner's evaluator (measure.c): this same
 * program started again with a hidden first argument (tune_evaluator_child)
 * through the child-process layer (common/spawn.h: posix_spawn, or
 * CreateProcessW inside a kill-on-close job object); measure-proc.c holds
 * the hidden argument and the first message. The parent and the child talk
 * over two anonymous pipes with the same fixed-size messages on every
 * platform, and the parent's side (watchdog, cancel polling, crash ->
 * "crashed", the next request starting a fresh child) is measure.c's alone.
 *
 * Private to kernels/: measure.c is the only user.
 */
#ifndef ROCMD_KERNELS_MEASURE_PROC_H
#define ROCMD_KERNELS_MEASURE_PROC_H

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

struct rocmd_child;

/* Starts the evaluation process in slot C (common/spawn.h, which the parent
 * then reads, writes, stops and kills directly) and sends it SPEC: 0, or a
 * negative error with the reason in WHY. */
int measure_proc_start(struct rocmd_child *c, const struct measure_spec *spec, char *why,
		       size_t whylen);

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
