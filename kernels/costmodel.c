/*
 * The GEMM kernel's cost model (costmodel.h). Rates are the H200's, per SM
 * (FMA fp32 ~0.5 TFLOP/s, mma.sync ~4.8, wgmma ~7.5; 4 TB/s of memory and 10
 * TB/s of tile loads from L2 over 132 SMs), scaled by the device's SMs or CUs: only ratios for the same
 * configuration are used, so what matters is where a shape falls between
 * compute-bound and memory-bound and how its tiles fill the waves.
 */
#include "kernels/costmodel.h"

#include <string.h>

#define H200_SMS 132.0
#define BW_PER_SM (4.0e12 / H200_SMS)  /* bytes/s from memory */
#define L2_PER_SM (10.0e12 / H200_SMS) /* bytes/s of tile loads (>= 7.7 TB/s at 4096^3) */
#define LAUNCH_MS 0.004

static int64_t
value_of(const struct space_def *s, const struct space_point *pt, const char *name, int64_t dflt)
{
	int i = space_param_index(s, name);

	return i < 0 ? dflt : s->params[i].values[pt->idx[i]];
}

int
costmodel_applies(const struct space_def *space)
{
	return space_param_index(space, "MT0") >= 0 && space_param_index(space, "MT1") >= 0 &&
	       space_param_index(space, "GSU") >= 0 && space_param_index(space, "MC") >= 0 &&
	       space_param_index(space, "GV") >= 0;
}

static int64_t
cdiv(int64_t a, int64_t b)
{
	return b > 0 ? (a + b - 1) / b : a;
}

double
costmodel_ms(const struct space_def *space, const struct space_point *pt,
             const struct gemm_problem *p, const struct backend_device_info *dev)
{
	int64_t mt0 = value_of(space, pt, "MT0", 64), mt1 = value_of(space, pt, "MT1", 64);
	int64_t du = value_of(space, pt, "DU", 8), gsu = value_of(space, pt, "GSU", 1);
	int64_t mc = value_of(space, pt, "MC", 0), gv = value_of(space, pt, "GV", 0);
	int64_t sk = value_of(space, pt, "SK", 0), minb = value_of(space, pt, "MINB", 1);
	double units = dev != NULL && dev->compute_units > 0 ? dev->compute_units : H200_SMS;
	double rate = mc == 2 ? 7.5e12 : mc ? 4.8e12 : 0.5e12; /* flop/s per SM */
	double esz = (double)gemm_dtype_size(p->dtype), tiles, per_sm, flops, bytes, compute, memory;
	double loads, t;
	double slots = units * (double)(minb > 1 ? minb : 1);

	if (mt0 < 1 || mt1 < 1 || du < 1 || gsu < 1)
		return 1.0;
	tiles = (double)cdiv(p->m, mt0) * (double)cdiv(p->n, mt1) * (double)p->batch;
	if (sk) {
		/* Stream-K: the k-iterations of all tiles shared evenly by the blocks. */
		double iters = tiles * (double)cdiv(p->k, du);

		per_sm = (double)(int64_t)((iters + units - 1) / units) * (double)du;
	} else {
		double blocks = tiles * (double)gsu;

		per_sm = (double)(int64_t)((blocks + slots - 1) / slots) *
		         (double)(cdiv(cdiv(p->k, gsu), du) * du) * (minb > 1 ? minb : 1);
	}
	/* Per SM: its blocks' padded tile work, and the tile loads that feed it
	 * (MT0 + MT1 elements per k: small tiles load more per flop); GEMV
	 * streams and is memory-bound. */
	flops = 2.0 * per_sm * (double)mt0 * (double)mt1;
	loads = per_sm * (double)(mt0 + mt1) * esz;
	compute = gv ? 0 : flops / rate * 1e3;
	t = gv ? 0 : loads / L2_PER_SM * 1e3;
	if (t > compute)
		compute = t;
	/* A and B once, C once (read too when beta is not 0: same for both
	 * shapes' ratio), split-K's fp32 slices written and read back. */
	bytes = esz * ((double)p->m * (double)p->k + (double)p->k * (double)p->n +
	               (double)p->m * (double)p->n) * (double)p->batch;
	if (gsu > 1)
		bytes += 8.0 * (double)gsu * (double)p->m * (double)p->n * (double)p->batch;
	if (gv) /* B streams once per band of MT0 rows */
		bytes += esz * (double)p->k * (double)p->n * (double)p->batch *
		         (double)(cdiv(p->m, mt0) - 1);
	memory = bytes / (BW_PER_SM * units) * 1e3;
	return (compute > memory ? compute : memory) + LAUNCH_MS * (gsu > 1 ? 2 : 1);
}
