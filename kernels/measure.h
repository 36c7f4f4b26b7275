/*
 * The tuner's measurement (measure.c) in the calling process, for programs
 * that time our configurations and another library's GEMM side by side, on
 * the same inputs and the same stream, the same way: bench/gpu-gemm against
 * cuBLAS. The tuner itself goes through tune.h's evaluator, which runs the
 * same code in a child process with a watchdog; here a crash or a hang takes
 * the caller with it.
 *
 * What a measurement does (tune.h, struct tune_measure_opts): input sets of
 * random values in +-[0.1, 1] rotated so that timed runs read more than twice
 * the last-level cache; one checked run against a double-precision host
 * reference (every entry of small problems, 512 sampled entries and the
 * corners otherwise); a warm-up by time; then OPTS.runs runs, each between its
 * own pair of device events: median, p20 and p80.
 *
 *   measure_local_open          the device: context, compile cache, events
 *   measure_local_set_problem   the problem: the backend's space for it, input
 *                               sets, the reference (the context and every
 *                               compiled module stay)
 *   measure_local_eval          one of our configurations (a space_key)
 *   measure_local_eval_in       the same, a key of another space of the backend
 *                               (its whole space: tests/gpu/test-gemm-gpu)
 *   measure_local_eval_call     another library's GEMM, through FN
 *   measure_local_evaluator     a tuning run (tune_run) over the problem,
 *                               in this process
 *
 * Functions return 0 or a negative code from common/error.h; what went wrong
 * with a candidate (compile, launch, wrong result) is an outcome in the
 * tune_result, not an error.
 */
#ifndef ROCMD_KERNELS_MEASURE_H
#define ROCMD_KERNELS_MEASURE_H

#include <stddef.h>

#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/space.h"
#include "kernels/tune.h"

struct measure;

/* Enqueues C = alpha op(A) op(B) + beta C for P on BUFS on the backend's
 * stream (the CUDA backend: the legacy default stream of the device's primary
 * context), without synchronizing. 0, or non-zero when the call failed. */
typedef int (*measure_gemm_fn)(void *arg, const struct gemm_problem *p,
			       const struct gemm_bufs *bufs);

/* Opens device INDEX of OPS in this process. O's zero fields take tune.h's
 * defaults; O->isolate and O->cancel are ignored. *DEV and SOURCE_HASH (the
 * kernel source's, as in tuning keys) describe what was opened. */
int measure_local_open(const struct backend_ops *ops, int index, const struct tune_measure_opts *o,
		       struct measure **out, struct backend_device_info *dev, char source_hash[17],
		       char *why, size_t whylen);
/* Makes P the problem measured; *SPACE is the space the backend tunes P in. */
int measure_local_set_problem(struct measure *m, const struct gemm_problem *p,
			      const struct space_def **space, char *why, size_t whylen);
/* Measures configuration KEY. *REL_ERR gets max |C - ref| / max |ref| over the
 * checked entries, or -1 when nothing was checked (TUNE_EVAL_TIME_ONLY, or
 * the candidate never ran). */
int measure_local_eval(struct measure *m, const char *key, int flags, struct tune_result *r,
		       double *rel_err);
/* The same for KEY of SPACE, a space of the same backend other than the one it
 * tunes the problem in (the CUDA backend's whole space, every kernel path, from
 * backend_cuda_space_for(..., 1)); the predicate still rules out what cannot
 * run. SPACE must outlive the call. */
int measure_local_eval_in(struct measure *m, const struct space_def *space, const char *key,
			  int flags, struct tune_result *r, double *rel_err);
/* Loads P into M (as measure_local_set_problem) and gives a tuning run's
 * evaluator over it: tune_run() then measures in this process, on M's device
 * context; closing the evaluator leaves M open (a benchmark that tunes many
 * problems on one context: bench/vendor-gemm). *SPACE is P's space. */
int measure_local_evaluator(struct measure *m, const struct gemm_problem *p,
			    struct tune_evaluator **out, struct space_def *space, char *why,
			    size_t whylen);
/* The same for FN(ARG, ...), which must compute the GEMM on the sets given. */
int measure_local_eval_call(struct measure *m, measure_gemm_fn fn, void *arg, int flags,
			    struct tune_result *r, double *rel_err);
void measure_local_close(struct measure *m);

#endif
