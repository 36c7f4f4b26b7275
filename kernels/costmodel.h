/*
 * A cost model of the GPU GEMM kernel (kernels/gpu/gemm.cu) for choosing
 * among tuned shapes (tunedlib_select): the time of a configuration on a
 * problem, up to a factor that depends on the configuration and the device
 * only, from the wave count (tiles x split-K slices, or stream-K's share of
 * k-iterations, over the SMs that hold them), each block's padded tile work
 * at the path's peak rate or its tile loads at the L2's bandwidth, whichever
 * is slower, the operands' bytes at the memory bandwidth, and the launches. A time measured for a configuration on one shape, scaled by
 * the model's ratio between two shapes, predicts its time on the other.
 */
#ifndef ROCMD_KERNELS_COSTMODEL_H
#define ROCMD_KERNELS_COSTMODEL_H

#include "kernels/backend.h"
#include "kernels/gemm.h"
#include "kernels/space.h"

/* 1 when the model knows SPACE's parameters (the CUDA and HIP spaces). */
int costmodel_applies(const struct space_def *space);
/* The modelled ms of point PT of SPACE on P on DEV (DEV NULL: an H200's 132
 * SMs); > 0. Only ratios for the same point mean anything. */
double costmodel_ms(const struct space_def *space, const struct space_point *pt,
                    const struct gemm_problem *p, const struct backend_device_info *dev);

#endif
