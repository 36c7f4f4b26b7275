/*
 * The tunable GEMM kernel of rocmd, in the CUDA/HIP common dialect (port.h).
 *
 *   C = alpha * op(A) * op(B) + beta * C, column-major, batched by strides,
 *   op(A) is M x K, op(B) is K x N; fp32, fp16 or bf16 storage; fp32 math.
 *
 * Every tuning parameter is a compile-time define (Tensile's names where they
 * fit), so one compilation is one point of the search space:
 *
 *   RK_DT         0 fp32, 1 fp16, 2 bf16 (A, B and C share the type)
 *   RK_TA, RK_TB  1 when A (B) is transposed
 *   RK_MT0/1      macro tile along M and N; RK_DU depth per loop iteration
 *   RK_MC         matrix cores: 0 FMA (every arch); 1 NVIDIA mma.sync
 *                 m16n8k16 (sm_80+) under CUDA, RDNA3 WMMA 16x16x16 wave32
 *                 (gfx11) under HIP; 2 Hopper wgmma (sm_90a, CUDA only): WN
 *                 warpgroups of 64 rows of n, MT0 = wgmma N (64/128/256), DU 64,
 *                 STAGES >= 3, the 128-byte swizzle (WM 1, SWZ 1)
 *   FMA:          RK_TT0/1 thread tile, RK_VW global vector width,
 *                 RK_PGR 1: register prefetch of the next tile, two LDS buffers;
 *                 RK_PGR 2 (fp32, NVIDIA sm_80+): cp.async straight into
 *                 RK_STAGES shared stages, no staging registers,
 *                 RK_WL 1: each warp covers an 8 x 4 block of threads (fewer
 *                 distinct LDS addresses per read), RK_PLR 1: LDS fragments of
 *                 depth kk+1 read during the FMAs of kk; RK_PLR 2 (with PGR 1):
 *                 also across k-tiles, the barrier before the last step's FMAs
 *   RK_LDSPAD     LDS row padding in elements
 *   mma / WMMA:   RK_WM x RK_WN warps (waves), RK_STAGES cp.async stages,
 *                 RK_SWZ 1 = XOR-swizzled shared memory (else RK_LDSPAD padding),
 *                 RK_PLR 1 = fragments of step k16+1 loaded during the mma of k16
 *   RK_GV         1: the GEMV path for small M (MC 0): a group of 32 lanes owns
 *                 TT1 columns of C and all MT0 rows, its lanes split K and read
 *                 VW consecutive k of each column (DU k per lane per step), B
 *                 straight from global memory; a shuffle butterfly sums the lanes
 *   RK_MINB       minimum blocks per multiprocessor (launch bounds; CUDA only)
 *   RK_GSU        split-K: K is cut into GSU slices, one block each; the slices of
 *                 a tile meet through an fp32 workspace and the last to finish
 *                 sums them and writes C (rk_gsu_meet: one launch)
 *   RK_GROUP      M-tiles per band of the block raster, for L2 reuse
 *   RK_SK         1: stream-K (FMA path, GSU 1): a grid of the blocks the device
 *                 holds at once; whole waves of tiles one per block, the other
 *                 tiles' k-tiles split evenly among the blocks (see rk_sk below)
 *
 * The backends pass each tuning parameter NAME=V as -DRK_NAME=V.
 *
 * Launch: rk_gemm on a 1-D grid of tiles(M) * tiles(N) blocks, z = batch * GSU,
 * with rk_gemm_info[0] threads and rk_gemm_info[1] bytes of dynamic shared
 * memory (CUDA; HIP uses static LDS). With GSU > 1 or SK 1, W is the counted
 * workspace (RK_SK_COUNTERS counters the launcher zeroes once, then slots);
 * with SK 1, rk_gemm runs on G x 1 x batch blocks (G from the launcher, rk_sk).
 * rk_gemm_info: threads, dynamic shared memory bytes, MT0, MT1, SK, DU, CHUNKS,
 * and the launch protocol (RK_PROTOCOL: a loader refuses an older one).
 * CUDA: rk_pack copies a 16-bit operand whose leading dimension, stride or
 * address does not allow 16-byte chunks into an aligned workspace first.
 */
#include "port.h"

#ifndef RK_DT
#define RK_DT 0
#endif
#ifndef RK_TA
#define RK_TA 0
#endif
#ifndef RK_TB
#define RK_TB 0
#endif
#ifndef RK_MC
#define RK_MC 0
#endif
#ifndef RK_GV
#define RK_GV 0
#endif
/* Matrix cores: mma.sync on NVIDIA, WMMA on AMD gfx11; GV 1: the GEMV path. */
#if RK_GV && RK_MC
#error "GV 1 (the GEMV path) uses no matrix cores: MC 0"
#elif RK_HOST && RK_MC
#error "the host layer (RK_HOST) runs the FMA and GEMV paths only"
#elif RK_GV
#define RK_PATH 4
#elif !RK_MC
#define RK_PATH 0
#elif RK_MC == 2 && RK_CUDA
#define RK_PATH 3
#elif RK_MC == 2
#error "MC=2 (wgmma) is for NVIDIA sm_90a"
#elif RK_CUDA
#define RK_PATH 1
#else
#define RK_PATH 2
#endif
#ifndef RK_MT0
#define RK_MT0 64
#endif
#ifndef RK_MT1
#define RK_MT1 64
#endif
#ifndef RK_DU
#define RK_DU (RK_PATH == 0 ? 8 : 32)
#endif
#ifndef RK_TT0
#define RK_TT0 4
#endif
#ifndef RK_TT1
#define RK_TT1 4
#endif
#ifndef RK_VW
#define RK_VW 1
#endif
#ifndef RK_PGR
#define RK_PGR 1
#endif
#ifndef RK_LDSPAD
#define RK_LDSPAD 0
#endif
#ifndef RK_WM
#define RK_WM 2
#endif
#ifndef RK_WN
#define RK_WN 2
#endif
#ifndef RK_STAGES
#define RK_STAGES 3
#endif
#ifndef RK_SWZ
#define RK_SWZ 1
#endif
#ifndef RK_GSU
#define RK_GSU 1
#endif
#ifndef RK_GROUP
#define RK_GROUP 1
#endif
#ifndef RK_PLR
#define RK_PLR 0
#endif
#ifndef RK_WL
#define RK_WL 0
#endif
#ifndef RK_SK
#define RK_SK 0
#endif
#ifndef RK_MINB
#define RK_MINB 1
#endif

#if RK_SK && (RK_PATH != 0 || RK_GSU != 1)
#error "SK 1 (stream-K) is the FMA path's (MC 0, GV 0), without split-K (GSU 1)"
#endif

#if RK_DT == 0
typedef float rk_t;
#define RK_LD(x) (x)
#define RK_ST(f) (f)
#elif RK_DT == 1
typedef unsigned short rk_t;
#define RK_LD(x) rk_h2f(x)
#define RK_ST(f) rk_f2h(f)
#else
typedef unsigned short rk_t;
#define RK_LD(x) rk_bf2f(x)
#define RK_ST(f) rk_f2bf(f)
#endif

#if RK_PATH == 0
#define RK_NT ((RK_MT0 / RK_TT0) * (RK_MT1 / RK_TT1))
#elif RK_PATH == 3
#define RK_NT (128 * RK_WN) /* WN warpgroups */
#elif RK_PATH == 4
#define RK_NT (32 * (RK_MT1 / RK_TT1)) /* a 32-lane group per TT1 columns */
#else
#define RK_NT (32 * RK_WM * RK_WN)
#endif

#define RK_CDIV(a, b) (((a) + (b)-1) / (b))
#define RK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RK_MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * What the launcher reads from a compiled kernel: threads per block, bytes of
 * dynamic shared memory, the macro tile, stream-K, the depth per k-tile, and
 * whether A and B are copied in 16-byte chunks (mma.sync and wgmma on CUDA:
 * then the launcher repacks operands that do not allow it, with rk_pack).
 */
#define RK_CHUNKS (RK_PATH == 1 || RK_PATH == 3)
#define RK_INFO(nt, smem)                                                                          \
	RK_EXTERN_C __device__ unsigned int rk_gemm_info[8] = {                                    \
	    nt, smem, RK_MT0, RK_MT1, RK_SK, RK_DU, RK_CHUNKS, RK_PROTOCOL}
/* 2: split-K in one launch (rk_gsu_meet; BACKEND_PROTOCOL, backend.h). A test
 * defines another to see it refused. */
#ifndef RK_PROTOCOL
#define RK_PROTOCOL 2
#endif
/* The counters at the head of the split-K and stream-K workspace (BACKEND_SK_COUNTERS). */
#define RK_SK_COUNTERS 131072

template <typename T, int N> struct alignas(sizeof(T) * N) rk_vec {
	T v[N];
};

/* Where tile BID of C lies (in tiles), with M-tiles grouped in bands of RK_GROUP. */
RK_INLINE void
rk_tile_coords(int M, int N, int bid, int *tm, int *tn)
{
	int tiles_m = RK_CDIV(M, RK_MT0);
#if RK_GROUP > 1
	int tiles_n = RK_CDIV(N, RK_MT1);
	int band = RK_GROUP * tiles_n;
	int first = (bid / band) * RK_GROUP;
	int rows = RK_MIN(tiles_m - first, RK_GROUP);
	int in = bid % band;

	*tm = first + in % rows;
	*tn = in / rows;
#else
	*tm = bid % tiles_m;
	*tn = bid / tiles_m;
	(void)N;
#endif
}

/* The K range of this split-K slice, cut at multiples of RK_DU. */
RK_INLINE void
rk_k_range(int K, int ks, int *kb, int *ke)
{
#if RK_GSU > 1
	int per = RK_CDIV(RK_CDIV(K, RK_GSU), RK_DU) * RK_DU;

	*kb = ks * per;
	*ke = RK_MIN(K, *kb + per);
#else
	(void)ks;
	*kb = 0;
	*ke = K;
#endif
}

/* Writes one output element to C with alpha and beta. */
RK_INLINE void
rk_put(float acc, int m, int n, float alpha, float beta, rk_t *RK_RESTRICT C, rk_i64 ldc)
{
	rk_t *p = C + m + n * ldc;
	float v = alpha * acc;

	if (beta != 0.0f)
		v += beta * RK_LD(*p);
	*p = RK_ST(v);
}

#if RK_DT != 0
/*
 * Writes C(m, n) and C(m + 1, n) of a 16-bit C (m in range): one 32-bit store
 * when PAIR_OK says C's columns are 4-byte aligned and both are in range, else
 * one element at a time.
 */
RK_INLINE void
rk_put_pair(float v0, float v1, int m, int n, int M, bool pair_ok, float alpha, float beta,
	    rk_t *RK_RESTRICT C, rk_i64 ldc)
{
	if (pair_ok && m + 1 < M) {
		unsigned int *p = (unsigned int *)(C + m + n * ldc);
		v0 *= alpha;
		v1 *= alpha;
		if (beta != 0.0f) {
			unsigned int o = *p;
			v0 += beta * RK_LD((rk_t)(o & 0xffff));
			v1 += beta * RK_LD((rk_t)(o >> 16));
		}
		*p = (unsigned int)RK_ST(v0) | ((unsigned int)RK_ST(v1) << 16);
	} else {
		rk_put(v0, m, n, alpha, beta, C, ldc);
		if (m + 1 < M)
			rk_put(v1, m + 1, n, alpha, beta, C, ldc);
	}
}
#endif

#if RK_GSU > 1
/*
 * Split-K in one launch: the GSU slices of a tile (blocks z = batch * GSU + ks
 * of one x) meet here after their main loops. Each writes its NA partial sums
 * to its slot of the workspace W (thread-major: value e of thread t at e * NT +
 * t; with GV, the GEMV path's, value e only from lane e % 32 of each group, at
 * e * NT / 32 + group), fences and counts itself on the tile's counter; the
 * block that arrives last sums the GSU slots in slice order (the same sum
 * whichever block is last; its own from registers), puts the counter back to
 * zero for the next launch, and returns true with the sum in ACC for the
 * epilogue. No block waits for another. W: RK_SK_COUNTERS counters (batch x
 * tiles used), then per tile GSU slots of NA x NT (NA x NT / 32 with GV) floats.
 */
template <int NA, bool GV>
RK_INLINE bool
rk_gsu_meet(float *acc, float *RK_RESTRICT W)
{
	__shared__ int rk_gsu_last;
	const int tid = RK_TID(), z = RK_BID_Z(), ks = z % RK_GSU;
	const int step = GV ? RK_NT / 32 : RK_NT, at = GV ? tid >> 5 : tid;
	const rk_i64 tile = (rk_i64)(z / RK_GSU) * RK_GRID_X() + RK_BID_X();
	const rk_i64 slot = (rk_i64)NA * step;
	static_assert(NA * (GV ? RK_NT / 32 : RK_NT) == RK_MT0 * RK_MT1, "a slot holds one tile");
	unsigned int *cnt = (unsigned int *)W + tile;
	float *base = W + RK_SK_COUNTERS + tile * RK_GSU * slot + at;

	RK_UNROLL
	for (int e = 0; e < NA; e++)
		if (!GV || (tid & 31) == e % 32)
			base[ks * slot + e * step] = acc[e];
	RK_FENCE_DEVICE();
	RK_SYNC();
	if (tid == 0)
		rk_gsu_last = rk_atomic_add_u32(cnt, 1u) == (unsigned int)(RK_GSU - 1);
	RK_SYNC();
	if (!rk_gsu_last)
		return false;
	RK_FENCE_DEVICE();
	RK_UNROLL
	for (int e = 0; e < NA; e++) {
		float v[RK_GSU], s = -0.0f; /* -0 + x is x: the slots' sum in slice order */

		if (GV && (tid & 31) != e % 32)
			continue;
		RK_UNROLL
		for (int g = 0; g < RK_GSU; g++)
			v[g] = g == ks ? acc[e] : rk_ld_l2(base + g * slot + e * step);
		RK_UNROLL
		for (int g = 0; g < RK_GSU; g++)
			s += v[g];
		acc[e] = s;
	}
	if (tid == 0)
		*cnt = 0;
	return true;
}
#endif

#if RK_PATH == 0
/* ---------------------------------------------------------------- FMA path */

#define RK_WG0 (RK_MT0 / RK_TT0)
#define RK_WG1 (RK_MT1 / RK_TT1)
#define RK_LV0 (RK_TT0 >= 4 ? 4 : RK_TT0)
#define RK_LV1 (RK_TT1 >= 4 ? 4 : RK_TT1)
#define RK_LDS_A (RK_MT0 + RK_LDSPAD)
#define RK_LDS_B (RK_MT1 + RK_LDSPAD)
#define RK_NBUF (RK_PGR == 2 ? RK_STAGES : RK_PGR ? 2 : 1)
/* Vectors of RK_VW elements per row of the global tile, and loads per thread. */
#define RK_A_VPR (RK_TA ? RK_DU / RK_VW : RK_MT0 / RK_VW)
#define RK_B_VPR (RK_TB ? RK_MT1 / RK_VW : RK_DU / RK_VW)
#define RK_A_VECS (RK_MT0 * RK_DU / RK_VW)
#define RK_B_VECS (RK_MT1 * RK_DU / RK_VW)
#define RK_A_LOADS RK_CDIV(RK_A_VECS, RK_NT)
#define RK_B_LOADS RK_CDIV(RK_B_VECS, RK_NT)
#define RK_SMEM_BYTES (RK_NBUF * RK_DU * (RK_LDS_A + RK_LDS_B) * 4)

static_assert(RK_MT0 % RK_TT0 == 0 && RK_MT1 % RK_TT1 == 0, "thread tile must divide macro tile");
static_assert(RK_TT0 % RK_LV0 == 0 && RK_TT1 % RK_LV1 == 0, "thread tile must be 1, 2 or 4k");
static_assert((RK_TA ? RK_DU : RK_MT0) % RK_VW == 0, "vector width must divide A's tile");
static_assert((RK_TB ? RK_MT1 : RK_DU) % RK_VW == 0, "vector width must divide B's tile");
static_assert(RK_LDSPAD % RK_LV0 == 0 && RK_LDSPAD % RK_LV1 == 0, "padding must keep LDS vectors aligned");
static_assert(RK_NT <= 1024, "too many threads");

/*
 * Loads one global vector of RK_VW elements as floats; out-of-range elements
 * read as zero. `full` says the whole vector is in range and aligned.
 */
RK_INLINE void
rk_ldg(float *dst, const rk_t *RK_RESTRICT p, bool full, bool row_ok, int contig_left)
{
	if (full) {
		rk_vec<rk_t, RK_VW> v = *(const rk_vec<rk_t, RK_VW> *)p;

		RK_UNROLL
		for (int e = 0; e < RK_VW; e++)
			dst[e] = RK_LD(v.v[e]);
	} else {
		RK_UNROLL
		for (int e = 0; e < RK_VW; e++)
			dst[e] = (row_ok && e < contig_left) ? RK_LD(p[e]) : 0.0f;
	}
}

#if RK_PGR == 2
#if RK_HIP
#error "PGR 2 (cp.async) is for NVIDIA GPUs of sm_80 and later"
#endif
static_assert(RK_DT == 0, "PGR 2 copies fp32 as it is (no conversion on the way)");
static_assert(RK_STAGES >= 2, "PGR 2 needs two stages or more");
#endif
#if RK_SK
/*
 * Stream-K (SK 1): a persistent grid of G blocks per batch, as many as the
 * device holds at once, shares the tiles so that none idles in a last, partial
 * wave. The tiles of the whole waves but the last go one per block, in turn
 * (tiles q, q + G, ...); the rest, the remainder plus one wave (all tiles when
 * there are fewer than G), are cut along K: their k-tiles, tile after tile, are split into
 * G equal ranges, block q taking [b_q, b_{q+1}) with b_q = floor(q * total / G).
 * A range thus covers at most two tiles partly. A block that computes part of a
 * tile writes its partial sums to its own workspace slot (2q for the first
 * segment of its range, 2q + 1 for the last), then counts itself on the tile's
 * counter; the block that arrives last adds up every slot of the tile in block
 * order (so the sum does not depend on timing), writes C and resets the counter
 * for the next launch. No block waits for another, so the grid needs no
 * co-residency. The launcher sizes G (at most the k-tiles to share, and G times
 * the batch at most RK_SK_COUNTERS / 2), gives the workspace and zeroes its
 * counters once, when it allocates them; every launch leaves them at zero.
 *
 * Workspace: RK_SK_COUNTERS counters (2G per batch, one per shared tile, fewer
 * than 2G used), then 2G slots of MT0 x MT1 floats per batch.
 */
struct rk_sk {
	int G, q, dp; /* blocks, this block, whole tiles before the shared ones */
	int ipt;      /* k-tiles per tile */
	rk_i64 total; /* k-tiles shared */
};

RK_INLINE void
rk_sk_init(rk_sk *s, int tiles, int K)
{
	int G = RK_GRID_X(), sk = tiles % G == 0 ? 0 : tiles < G ? tiles : tiles % G + G;

	s->G = G;
	s->q = RK_BID_X();
	s->dp = tiles - sk;
	s->ipt = RK_MAX(1, RK_CDIV(K, RK_DU));
	s->total = (rk_i64)sk * s->ipt;
}

/* The first shared k-tile of block Q's range. */
RK_INLINE rk_i64
rk_sk_begin(const rk_sk *s, int q)
{
	return (rk_i64)q * s->total / s->G;
}

/* The block whose range holds shared k-tile G_ (the last one when ranges are empty). */
RK_INLINE int
rk_sk_block(const rk_sk *s, rk_i64 g)
{
	return (int)(((g + 1) * s->G - 1) / s->total);
}

/*
 * Partial sums ACC of shared tile TILE (its first k-tile TS) meet here: true
 * for the block that arrives last, with the tile's whole sum in ACC.
 */
RK_INLINE bool
rk_sk_meet(float (&acc)[RK_TT0][RK_TT1], const rk_sk *s, int tile, rk_i64 ts,
	   float *RK_RESTRICT W, int tid)
{
	__shared__ int rk_sk_last;
	const rk_i64 slot = (rk_i64)RK_MT0 * RK_MT1;
	unsigned int *cnt = (unsigned int *)W + 2 * s->G * RK_BID_Z() + tile;
	int lo = rk_sk_block(s, ts), hi = rk_sk_block(s, ts + s->ipt - 1);
	W += RK_SK_COUNTERS + 2 * s->G * RK_BID_Z() * slot;
	float *mine = W + (2 * s->q + (rk_sk_begin(s, s->q) < ts)) * slot + tid;

	RK_UNROLL
	for (int i = 0; i < RK_TT0; i++)
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++)
			mine[(i * RK_TT1 + j) * RK_NT] = acc[i][j];
	RK_FENCE_DEVICE();
	RK_SYNC();
	if (tid == 0)
		rk_sk_last = rk_atomic_add_u32(cnt, 1u) == (unsigned int)(hi - lo);
	RK_SYNC();
	if (!rk_sk_last)
		return false;
	RK_FENCE_DEVICE();
	/* -0 + x is x for every x: the sum is exactly the slots' sum in block order. */
	RK_UNROLL
	for (int i = 0; i < RK_TT0; i++)
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++)
			acc[i][j] = -0.0f;
	for (int p = lo; p <= hi; p++) {
		const float *part = W + (2 * p + (rk_sk_begin(s, p) < ts)) * slot + tid;

		RK_UNROLL
		for (int i = 0; i < RK_TT0; i++)
			RK_UNROLL
			for (int j = 0; j < RK_TT1; j++)
				acc[i][j] += rk_ld_l2(part + (i * RK_TT1 + j) * RK_NT);
	}
	if (tid == 0)
		*cnt = 0;
	return true;
}
#endif

/* Dynamic shared memory only for PGR 2's stages (which may pass 48 KiB). */
RK_INFO(RK_NT, RK_PGR == 2 ? RK_SMEM_BYTES : 0);

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT Ag, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT Bg, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT Cg,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
#if RK_PGR == 2
#if RK_HOST
	static float rk_fs[RK_NBUF * RK_DU * (RK_LDS_A + RK_LDS_B)];
#else
	extern __shared__ RK_ALIGN(16) float rk_fs[];
#endif
	float(*As)[RK_DU][RK_LDS_A] = (float(*)[RK_DU][RK_LDS_A])rk_fs;
	float(*Bs)[RK_DU][RK_LDS_B] = (float(*)[RK_DU][RK_LDS_B])(rk_fs + RK_NBUF * RK_DU * RK_LDS_A);
#else
	__shared__ RK_ALIGN(16) float As[RK_NBUF][RK_DU][RK_LDS_A];
	__shared__ RK_ALIGN(16) float Bs[RK_NBUF][RK_DU][RK_LDS_B];
#endif
	float acc[RK_TT0][RK_TT1];
#if RK_PGR != 2
	float ra[RK_A_LOADS][RK_VW], rb[RK_B_LOADS][RK_VW];
#endif
	int tid = RK_TID();
#if RK_WL
	static_assert(RK_WG0 % 8 == 0 && RK_WG1 % 4 == 0, "WL needs 8 x 4 thread blocks");
	int t0 = (tid & 7) + 8 * ((tid >> 5) % (RK_WG0 / 8));
	int t1 = ((tid & 31) >> 3) + 4 * ((tid >> 5) / (RK_WG0 / 8));
#else
	int t0 = tid % RK_WG0, t1 = tid / RK_WG0;
#endif
	const int z = RK_BID_Z(), batch = z / RK_GSU;
#if RK_SK
	/* This block's work: its whole tiles, then its range of shared k-tiles. */
	rk_sk sk;
	rk_sk_init(&sk, RK_CDIV(M, RK_MT0) * RK_CDIV(N, RK_MT1), K);
	const rk_i64 g_end = rk_sk_begin(&sk, sk.q + 1);
	rk_i64 g = rk_sk_begin(&sk, sk.q);
	for (int w = 0;; w++) {
		int u = sk.q + w * sk.G, kb = 0, ke = K;
		rk_i64 ts = 0;
		bool part = false;
		if (u >= sk.dp) {
			if (g >= g_end)
				break;
			int i0, i1;
			u = sk.dp + (int)(g / sk.ipt);
			ts = (rk_i64)(u - sk.dp) * sk.ipt;
			i0 = (int)(g - ts);
			i1 = (int)RK_MIN((rk_i64)sk.ipt, g_end - ts);
			kb = i0 * RK_DU;
			ke = RK_MIN(K, i1 * RK_DU);
			part = i0 > 0 || i1 < sk.ipt;
			g = ts + i1;
		}
		if (w > 0)
			RK_SYNC(); /* every thread is done with the last work's shared memory */
#else
	{
		int u = RK_BID_X(), kb, ke;
		rk_k_range(K, z % RK_GSU, &kb, &ke);
#endif
		int tm, tn;
		rk_tile_coords(M, N, u, &tm, &tn);
		const int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
		const rk_t *RK_RESTRICT A = Ag + batch * sa;
		const rk_t *RK_RESTRICT B = Bg + batch * sb;
		rk_t *RK_RESTRICT C = Cg + batch * sc;
#if RK_PGR != 2
		bool a_al = (lda % RK_VW) == 0 && ((rk_u64)A % (sizeof(rk_t) * RK_VW)) == 0;
		bool b_al = (ldb % RK_VW) == 0 && ((rk_u64)B % (sizeof(rk_t) * RK_VW)) == 0;
#endif

		RK_UNROLL
		for (int i = 0; i < RK_TT0; i++)
			RK_UNROLL
			for (int j = 0; j < RK_TT1; j++)
				acc[i][j] = 0.0f;

	/* Global tile at depth k0 into the registers ra/rb. */
#define RK_FETCH(k0)                                                                               \
		do {                                                                               \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_A_LOADS; i++) {                                     \
				int idx = tid + i * RK_NT;                                         \
				int c = (idx % RK_A_VPR) * RK_VW, r = idx / RK_A_VPR;              \
				int row = RK_TA ? m0 + r : (k0) + r;                               \
				int col = RK_TA ? (k0) + c : m0 + c;                               \
				int rlim = RK_TA ? M : ke, clim = RK_TA ? ke : M;                  \
				bool ok = idx < RK_A_VECS && row < rlim;                           \
				const rk_t *p = A + (rk_i64)row * lda + col;                       \
				rk_ldg(ra[i], ok ? p : A, ok && a_al && col + RK_VW <= clim, ok,   \
				       clim - col);                                                \
			}                                                                          \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_B_LOADS; i++) {                                     \
				int idx = tid + i * RK_NT;                                         \
				int c = (idx % RK_B_VPR) * RK_VW, r = idx / RK_B_VPR;              \
				int row = RK_TB ? (k0) + r : n0 + r;                               \
				int col = RK_TB ? n0 + c : (k0) + c;                               \
				int rlim = RK_TB ? ke : N, clim = RK_TB ? N : ke;                  \
				bool ok = idx < RK_B_VECS && row < rlim;                           \
				const rk_t *p = B + (rk_i64)row * ldb + col;                       \
				rk_ldg(rb[i], ok ? p : B, ok && b_al && col + RK_VW <= clim, ok,   \
				       clim - col);                                                \
			}                                                                          \
		} while (0)

	/* Registers ra/rb into LDS buffer `buf`, as As[k][m] and Bs[k][n]. */
#define RK_STASH(buf)                                                                              \
		do {                                                                               \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_A_LOADS; i++) {                                     \
				int idx = tid + i * RK_NT;                                         \
				int c = (idx % RK_A_VPR) * RK_VW, r = idx / RK_A_VPR;              \
				if (idx < RK_A_VECS)                                               \
					RK_UNROLL                                                  \
					for (int e = 0; e < RK_VW; e++) {                          \
						if (RK_TA)                                         \
							As[buf][c + e][r] = ra[i][e];              \
						else                                               \
							As[buf][r][c + e] = ra[i][e];              \
					}                                                          \
			}                                                                          \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_B_LOADS; i++) {                                     \
				int idx = tid + i * RK_NT;                                         \
				int c = (idx % RK_B_VPR) * RK_VW, r = idx / RK_B_VPR;              \
				if (idx < RK_B_VECS)                                               \
					RK_UNROLL                                                  \
					for (int e = 0; e < RK_VW; e++) {                          \
						if (RK_TB)                                         \
							Bs[buf][r][c + e] = rb[i][e];              \
						else                                               \
							Bs[buf][c + e][r] = rb[i][e];              \
					}                                                          \
			}                                                                          \
		} while (0)

	/* Fragments of depth KK from LDS buffer BUF into registers a[AB], b[AB]. */
#define RK_FRAG(buf, kk, ab)                                                                       \
		do {                                                                               \
			RK_UNROLL                                                                  \
			for (int s = 0; s < RK_TT0 / RK_LV0; s++) {                                \
				rk_vec<float, RK_LV0> v = *(const rk_vec<float, RK_LV0> *)&As      \
					[buf][kk][s * RK_WG0 * RK_LV0 + t0 * RK_LV0];              \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_LV0; e++)                                   \
					a[ab][s * RK_LV0 + e] = v.v[e];                            \
			}                                                                          \
			RK_UNROLL                                                                  \
			for (int s = 0; s < RK_TT1 / RK_LV1; s++) {                                \
				rk_vec<float, RK_LV1> v = *(const rk_vec<float, RK_LV1> *)&Bs      \
					[buf][kk][s * RK_WG1 * RK_LV1 + t1 * RK_LV1];              \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_LV1; e++)                                   \
					b[ab][s * RK_LV1 + e] = v.v[e];                            \
			}                                                                          \
		} while (0)

	/*
	 * One LDS buffer's worth of outer products. With RK_PLR the fragments of depth
	 * kk+1 are read while the FMAs of kk run (two register sets).
	 */
#define RK_MATH(buf)                                                                               \
		do {                                                                               \
			float a[RK_PLR ? 2 : 1][RK_TT0], b[RK_PLR ? 2 : 1][RK_TT1];                \
			if (RK_PLR)                                                                \
				RK_FRAG(buf, 0, 0);                                                \
			RK_UNROLL                                                                  \
			for (int kk = 0; kk < RK_DU; kk++) {                                       \
				const int cb = RK_PLR ? (kk & 1) : 0;                              \
				if (!RK_PLR)                                                       \
					RK_FRAG(buf, kk, 0);                                       \
				else if (kk + 1 < RK_DU)                                           \
					RK_FRAG(buf, kk + 1, (kk + 1) & 1);                        \
				RK_UNROLL                                                          \
				for (int i = 0; i < RK_TT0; i++)                                   \
					RK_UNROLL                                                  \
					for (int j = 0; j < RK_TT1; j++)                           \
						acc[i][j] = RK_FMA(a[cb][i], b[cb][j], acc[i][j]); \
			}                                                                          \
		} while (0)

		/*
		 * Load plan for whole tiles, computed once (as in the wgmma path): when the
		 * block's thread count is a multiple of a tile row's vectors, thread tid
		 * always loads column c0 of the rows r0 + i * (NT / VPR): vector i of the
		 * k-tile at k0 is at a 32-bit per-thread offset plus k0 and i times constants
		 * (lda and ldb stay kernel parameters, so no register holds a pointer or a
		 * 64-bit step), and its LDS offset is a per-thread base plus a constant.
		 * Tiles at an edge of M, N or K, operands that are unaligned or too large
		 * for 32-bit offsets take RK_FETCH's checked path; both leave the same
		 * vectors in the same registers.
		 */
#define RK_A_PLAN (RK_NT % RK_A_VPR == 0 && (RK_A_VECS % RK_NT == 0 || RK_A_VECS < RK_NT))
#define RK_B_PLAN (RK_NT % RK_B_VPR == 0 && (RK_B_VECS % RK_NT == 0 || RK_B_VECS < RK_NT))
#define RK_PLAN (RK_A_PLAN && RK_B_PLAN)
#define RK_A_SI (RK_TA ? RK_NT / RK_A_VPR : (RK_NT / RK_A_VPR) * RK_LDS_A) /* LDS per i */
#define RK_A_SE (RK_TA ? RK_LDS_A : 1)                                    /* per element */
#define RK_B_SI (RK_TB ? (RK_NT / RK_B_VPR) * RK_LDS_B : RK_NT / RK_B_VPR)
#define RK_B_SE (RK_TB ? 1 : RK_LDS_B)
	/* Contiguous LDS rows of at most 16 bytes take one vector store. */
#define RK_A_STV (!RK_TA && RK_VW > 1 && RK_VW <= 4 && RK_LDS_A % RK_VW == 0)
#define RK_B_STV (RK_TB && RK_VW > 1 && RK_VW <= 4 && RK_LDS_B % RK_VW == 0)
#if RK_PGR != 2 /* (PGR 2 has its own copy plan below) */
		const int a_c0 = (tid % RK_A_VPR) * RK_VW, a_r0 = tid / RK_A_VPR;
		const int b_c0 = (tid % RK_B_VPR) * RK_VW, b_r0 = tid / RK_B_VPR;
		const bool a_has = RK_A_VECS >= RK_NT || tid < RK_A_VECS;
		const bool b_has = RK_B_VECS >= RK_NT || tid < RK_B_VECS;
		const int lda32 = (int)lda, ldb32 = (int)ldb;
		const int a_base = RK_TA ? (m0 + a_r0) * lda32 + a_c0 : a_r0 * lda32 + m0 + a_c0;
		const int b_base = RK_TB ? b_r0 * ldb32 + n0 + b_c0 : (n0 + b_r0) * ldb32 + b_c0;
	/* Vector i of the k-tile at k0. */
#define RK_A_AT(k0, i)                                                                             \
		(A + (RK_TA ? a_base + (k0) + (i) * (RK_NT / RK_A_VPR) * lda32                     \
			    : a_base + ((k0) + (i) * (RK_NT / RK_A_VPR)) * lda32))
#define RK_B_AT(k0, i)                                                                             \
		(B + (RK_TB ? b_base + ((k0) + (i) * (RK_NT / RK_B_VPR)) * ldb32                   \
			    : b_base + (k0) + (i) * (RK_NT / RK_B_VPR) * ldb32))
		const int a_so = RK_TA ? a_c0 * RK_LDS_A + a_r0 : a_r0 * RK_LDS_A + a_c0;
		const int b_so = RK_TB ? b_r0 * RK_LDS_B + b_c0 : b_c0 * RK_LDS_B + b_r0;
		/* Every element of A and B within 32-bit offsets (lda >= A's rows, ldb >= B's). */
		const bool fits = lda * (RK_TA ? M : K) < 0x7fffffffLL && ldb * (RK_TB ? K : N) < 0x7fffffffLL;
		const bool mn_full = m0 + RK_MT0 <= M && n0 + RK_MT1 <= N && a_al && b_al && fits;
#endif

	/* Whole tile at depth k0 into ra/rb: no bounds tests, no per-vector index arithmetic. */
	/* Operand X's vectors (registers r##x) at depth k0 of a whole tile. */
#define RK_FETCH_OP(X, x, k0)                                                                      \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_##X##_LOADS; i++)                                           \
			if (x##_has) {                                                             \
				rk_vec<rk_t, RK_VW> v_ = *(const rk_vec<rk_t, RK_VW> *)RK_##X##_AT(k0, i); \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_VW; e++)                                    \
					r##x[i][e] = RK_LD(v_.v[e]);                               \
			} else {                                                                   \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_VW; e++)                                    \
					r##x[i][e] = 0.0f; /* never stored */                      \
			}
#define RK_FETCH_FAST(k0)                                                                          \
		do {                                                                               \
			RK_FETCH_OP(A, a, k0)                                                      \
			RK_FETCH_OP(B, b, k0)                                                      \
		} while (0)

	/* The k-tile at depth k0 into ra/rb. */
#define RK_LOAD(k0)                                                                                \
		do {                                                                               \
			if (RK_PLAN && mn_full && (k0) + RK_DU <= ke)                              \
				RK_FETCH_FAST(k0);                                                 \
			else                                                                       \
				RK_FETCH(k0);                                                      \
		} while (0)

	/* ra/rb into LDS buffer BUF at the planned offsets (RK_STASH's layout). */
	/* Operand X's registers r##x into shared memory at S_ (a float pointer). */
#define RK_STASH_OP(X, x, S_)                                                                      \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_##X##_LOADS; i++)                                           \
			if (x##_has) {                                                             \
				if (RK_##X##_STV) {                                                \
					rk_vec<float, RK_##X##_STV ? RK_VW : 1> v_;                \
					RK_UNROLL                                                  \
					for (int e = 0; e < (RK_##X##_STV ? RK_VW : 1); e++)       \
						v_.v[e] = r##x[i][e];                              \
					*(rk_vec<float, RK_##X##_STV ? RK_VW : 1> *)(S_ + i * RK_##X##_SI) = v_; \
				} else {                                                           \
					RK_UNROLL                                                  \
					for (int e = 0; e < RK_VW; e++)                            \
						S_[i * RK_##X##_SI + e * RK_##X##_SE] = r##x[i][e]; \
				}                                                                  \
			}
#define RK_STASH_FAST(buf)                                                                         \
		do {                                                                               \
			float *as_ = &As[buf][0][0] + a_so, *bs_ = &Bs[buf][0][0] + b_so;          \
			RK_STASH_OP(A, a, as_)                                                     \
			RK_STASH_OP(B, b, bs_)                                                     \
		} while (0)
#if RK_PLAN
#define RK_PUT(buf) RK_STASH_FAST(buf)
#else
#define RK_PUT(buf) RK_STASH(buf)
#endif

#if RK_PGR == 2
		/*
		 * PGR 2 (fp32, NVIDIA sm_80 and up): cp.async copies each k-tile from global
		 * memory straight into one of RK_STAGES shared stages, RK_STAGES - 1 k-tiles
		 * ahead of the math: no staging registers, no shared stores, one barrier per
		 * k-tile. An operand whose global rows are its shared rows (A with TA 0, B
		 * with TB 1) goes in 16-byte chunks, or four 4-byte copies each where its
		 * leading dimension or address is not 16-byte aligned; the other operand is
		 * transposed on the way, one 4-byte copy per element, consecutive threads on
		 * consecutive k (coalesced reads). Copy i of a thread lands on row r0 + i * RS
		 * of the global tile, column c0, as in the register plan above; elements out
		 * of range are zero-filled, and whole tiles skip the bounds arithmetic.
		 */
#define RK_A_SAME (!RK_TA)
#define RK_B_SAME (RK_TB)
#define RK_A_L (RK_A_SAME ? RK_MT0 / 4 : RK_DU) /* copies per row of the global tile */
#define RK_B_L (RK_B_SAME ? RK_MT1 / 4 : RK_DU)
#define RK_A_ROWS (RK_A_SAME ? RK_DU : RK_MT0)
#define RK_B_ROWS (RK_B_SAME ? RK_DU : RK_MT1)
#define RK_A_N RK_CDIV(RK_A_ROWS * RK_A_L, RK_NT) /* copies per thread */
#define RK_B_N RK_CDIV(RK_B_ROWS * RK_B_L, RK_NT)
#define RK_A_RS (RK_NT / RK_A_L) /* global tile rows per copy index */
#define RK_B_RS (RK_NT / RK_B_L)
		static_assert(RK_NT % RK_A_L == 0 && RK_NT % RK_B_L == 0, "PGR 2: a row's copies must divide the threads");
		static_assert((RK_A_ROWS * RK_A_L) % RK_NT == 0 || RK_A_ROWS * RK_A_L < RK_NT, "PGR 2: A's copies per thread");
		static_assert((RK_B_ROWS * RK_B_L) % RK_NT == 0 || RK_B_ROWS * RK_B_L < RK_NT, "PGR 2: B's copies per thread");
		const int ca_r0 = tid / RK_A_L, ca_c0 = (tid % RK_A_L) * (RK_A_SAME ? 4 : 1);
		const int cb_r0 = tid / RK_B_L, cb_c0 = (tid % RK_B_L) * (RK_B_SAME ? 4 : 1);
		const bool ca_has = RK_A_ROWS * RK_A_L >= RK_NT || tid < RK_A_ROWS * RK_A_L;
		const bool cb_has = RK_B_ROWS * RK_B_L >= RK_NT || tid < RK_B_ROWS * RK_B_L;
		/* 16-byte chunks need 16-byte aligned rows (all columns are multiples of 4). */
		const bool ca_v16 = RK_A_SAME && (lda % 4) == 0 && ((rk_u64)A % 16) == 0;
		const bool cb_v16 = RK_B_SAME && (ldb % 4) == 0 && ((rk_u64)B % 16) == 0;
		/* Copy 0's source at the first k-tile, the step per copy and per k-tile. */
		const rk_t *ca_p = A + (RK_A_SAME ? (rk_i64)(kb + ca_r0) * lda + m0 + ca_c0
					       : (rk_i64)(m0 + ca_r0) * lda + kb + ca_c0);
		const rk_t *cb_p = B + (RK_B_SAME ? (rk_i64)(kb + cb_r0) * ldb + n0 + cb_c0
					       : (rk_i64)(n0 + cb_r0) * ldb + kb + cb_c0);
		const rk_i64 ca_si = (rk_i64)RK_A_RS * lda, cb_si = (rk_i64)RK_B_RS * ldb;
		const rk_i64 ca_sk = RK_A_SAME ? (rk_i64)RK_DU * lda : RK_DU;
		const rk_i64 cb_sk = RK_B_SAME ? (rk_i64)RK_DU * ldb : RK_DU;
		/* Shared offsets (floats) of copy 0 in a stage, and per copy index. */
		const int ca_so = RK_A_SAME ? ca_r0 * RK_LDS_A + ca_c0 : ca_c0 * RK_LDS_A + ca_r0;
		const int cb_so = RK_B_SAME ? cb_r0 * RK_LDS_B + cb_c0 : cb_c0 * RK_LDS_B + cb_r0;
#define RK_A_SOI (RK_A_SAME ? RK_A_RS * RK_LDS_A : RK_A_RS)
#define RK_B_SOI (RK_B_SAME ? RK_B_RS * RK_LDS_B : RK_B_RS)
		const rk_sref c_base = rk_smem_addr(rk_fs);
		const bool c_mn_full = m0 + RK_MT0 <= M && n0 + RK_MT1 <= N;

	/*
	 * Copies of one operand (X = A or B; MN0 its tile's first row or column, MNL
	 * its limit) for the k-tile at K0 into shared address S_; WHOLE (a constant)
	 * drops the bounds arithmetic.
	 */
#define RK_CP_OP(X, x, MN0, MNL, K0, S_, WHOLE)                                                    \
		do {                                                                               \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_##X##_N; i++) {                                     \
				const rk_t *p_ = c##x##_p + i * c##x##_si;                         \
				rk_sref d_ = RK_SREF_ADD(S_, i * RK_##X##_SOI);                    \
				int row_ = c##x##_r0 + i * RK_##X##_RS;                            \
				if (!c##x##_has)                                                   \
					break;                                                     \
				if (RK_##X##_SAME) {                                               \
					int cnt_ = 4;                                              \
					if (!(WHOLE))                                              \
						cnt_ = (K0) + row_ < ke                            \
							   ? RK_MIN(RK_MAX((MNL) - ((MN0) + c##x##_c0), 0), 4) \
							   : 0;                                    \
					if (c##x##_v16) {                                          \
						rk_cp_async16(d_, cnt_ ? p_ : X, cnt_ * 4);        \
					} else {                                                   \
						RK_UNROLL                                          \
						for (int e = 0; e < 4; e++)                        \
							rk_cp_async4(RK_SREF_ADD(d_, e), e < cnt_ ? p_ + e : X, \
								     e < cnt_ ? 4 : 0);            \
					}                                                          \
				} else {                                                           \
					bool ok_ = (WHOLE) || ((MN0) + row_ < (MNL) && (K0) + c##x##_c0 < ke); \
					rk_cp_async4(d_, ok_ ? p_ : X, ok_ ? 4 : 0);               \
				}                                                                  \
			}                                                                          \
		} while (0)
	/* The k-tile at K0 into stage S, the sources then advanced by a k-tile. */
#define RK_CP_TILE(K0, S)                                                                          \
		do {                                                                               \
			rk_sref sa_ = RK_SREF_ADD(c_base, (S) * (RK_DU * RK_LDS_A) + ca_so);       \
			rk_sref sb_ = RK_SREF_ADD(c_base, RK_NBUF * RK_DU * RK_LDS_A +             \
							  (S) * (RK_DU * RK_LDS_B) + cb_so);       \
			if (c_mn_full && (K0) + RK_DU <= ke) {                                     \
				RK_CP_OP(A, a, m0, M, K0, sa_, 1);                                 \
				RK_CP_OP(B, b, n0, N, K0, sb_, 1);                                 \
			} else {                                                                   \
				RK_CP_OP(A, a, m0, M, K0, sa_, 0);                                 \
				RK_CP_OP(B, b, n0, N, K0, sb_, 0);                                 \
			}                                                                          \
			ca_p += ca_sk;                                                             \
			cb_p += cb_sk;                                                             \
		} while (0)

		const int nkt = ke > kb ? RK_CDIV(ke - kb, RK_DU) : 0;
		RK_UNROLL
		for (int s = 0; s < RK_STAGES - 1; s++) {
			if (s < nkt)
				RK_CP_TILE(kb + s * RK_DU, s);
			RK_CP_COMMIT();
		}
		int rs = 0, ws = RK_STAGES - 1;
		for (int t = 0; t < nkt; t++) {
			/* k-tile t has landed (for every thread after the barrier), and every
			 * thread is done with k-tile t - 1, whose stage ws is refilled now. */
			RK_CP_WAIT(RK_STAGES - 2);
			RK_SYNC();
			if (t + RK_STAGES - 1 < nkt)
				RK_CP_TILE(kb + (t + RK_STAGES - 1) * RK_DU, ws);
			RK_CP_COMMIT();
			RK_MATH(rs);
			rs = rs + 1 == RK_STAGES ? 0 : rs + 1;
			ws = ws + 1 == RK_STAGES ? 0 : ws + 1;
		}
		RK_CP_WAIT(0);
#undef RK_CP_OP
#undef RK_CP_TILE
#elif RK_PGR && RK_PLR == 2
		/*
		 * PLR 2: shared and fragment buffers both doubled, one barrier per k-tile, placed
		 * so that no warp waits on shared memory right after it: the next k-tile's
		 * global loads go out after the first step's fragment reads, its stores and
		 * the barrier come before the last step's FMAs, and those FMAs run while the
		 * next k-tile's first fragments arrive. Every read of a buffer comes before
		 * the barrier that precedes the next write of it.
		 */
		static_assert(RK_DU % 2 == 0, "PLR 2 alternates fragment registers: DU must be even");
		int cur = 0;
		float a[2][RK_TT0], b[2][RK_TT1];
		if (kb < ke) {
			RK_LOAD(kb);
			RK_PUT(0);
		}
		RK_SYNC();
		if (kb < ke)
			RK_FRAG(0, 0, 0);
		for (int k0 = kb; k0 < ke; k0 += RK_DU) {
			bool more = k0 + RK_DU < ke;

			RK_UNROLL
			for (int kk = 0; kk < RK_DU; kk++) {
				if (kk == RK_DU - 1) {
					if (more)
						RK_PUT(cur ^ 1);
					RK_SYNC();
					cur ^= 1;
					if (more)
						RK_FRAG(cur, 0, 0);
				} else {
					RK_FRAG(cur, kk + 1, (kk + 1) & 1);
				}
				if (kk == 0 && more)
					RK_LOAD(k0 + RK_DU);
				RK_UNROLL
				for (int i = 0; i < RK_TT0; i++)
					RK_UNROLL
					for (int j = 0; j < RK_TT1; j++)
						acc[i][j] = RK_FMA(a[kk & 1][i], b[kk & 1][j], acc[i][j]);
			}
		}
#elif RK_PGR
		int cur = 0;
		if (kb < ke) {
			RK_LOAD(kb);
			RK_PUT(0);
		}
		RK_SYNC();
		for (int k0 = kb; k0 < ke; k0 += RK_DU) {
			bool more = k0 + RK_DU < ke;
			if (more)
				RK_LOAD(k0 + RK_DU);
			RK_MATH(cur);
			if (more)
				RK_PUT(cur ^ 1);
			RK_SYNC();
			cur ^= 1;
		}
#else
		for (int k0 = kb; k0 < ke; k0 += RK_DU) {
			RK_LOAD(k0);
			RK_PUT(0);
			RK_SYNC();
			RK_MATH(0);
			RK_SYNC();
		}
#endif

#if RK_SK
		if (part && !rk_sk_meet(acc, &sk, u - sk.dp, ts, W, tid))
			continue;
#elif RK_GSU > 1
		if (!rk_gsu_meet<RK_TT0 * RK_TT1, false>(&acc[0][0], W))
			return;
#endif
		/* Epilogue: each thread's rows come in runs of RK_LV0 consecutive m. */
		bool c_al = (ldc % RK_LV0) == 0 && ((rk_u64)C % (sizeof(rk_t) * RK_LV0)) == 0;
		RK_UNROLL
		for (int s = 0; s < RK_TT0 / RK_LV0; s++) {
			int m = m0 + s * RK_WG0 * RK_LV0 + t0 * RK_LV0;
			RK_UNROLL
			for (int j = 0; j < RK_TT1; j++) {
				int n = n0 + (j / RK_LV1) * RK_WG1 * RK_LV1 + t1 * RK_LV1 + j % RK_LV1;
				if (n >= N || m >= M)
					continue;
				if (RK_LV0 > 1 && c_al && m + RK_LV0 <= M) {
					rk_vec<rk_t, RK_LV0> *p = (rk_vec<rk_t, RK_LV0> *)(C + m + n * ldc);
					rk_vec<rk_t, RK_LV0> o;
					if (beta != 0.0f)
						o = *p;
					RK_UNROLL
					for (int e = 0; e < RK_LV0; e++) {
						float v = alpha * acc[s * RK_LV0 + e][j];
						if (beta != 0.0f)
							v += beta * RK_LD(o.v[e]);
						o.v[e] = RK_ST(v);
					}
					*p = o;
				} else {
					RK_UNROLL
					for (int e = 0; e < RK_LV0; e++)
						if (m + e < M)
							rk_put(acc[s * RK_LV0 + e][j], m + e, n, alpha,
							       beta, C, ldc);
				}
			}
		}
	}
}
#undef RK_FETCH
#undef RK_FETCH_FAST
#undef RK_FETCH_OP
#undef RK_STASH_OP
#undef RK_A_AT
#undef RK_B_AT
#undef RK_LOAD
#undef RK_STASH
#undef RK_STASH_FAST
#undef RK_PUT
#undef RK_FRAG
#undef RK_MATH
#undef RK_A_SAME
#undef RK_B_SAME
#undef RK_A_L
#undef RK_B_L
#undef RK_A_ROWS
#undef RK_B_ROWS
#undef RK_A_N
#undef RK_B_N
#undef RK_A_RS
#undef RK_B_RS
#undef RK_A_SOI
#undef RK_B_SOI

#elif RK_PATH == 1
/* ------------------------------------------------ NVIDIA mma.sync path */
/*
 * The mma's 16-row operand P is B's tile (rows n), its 8-column operand Q is
 * A's tile (columns m), so the two accumulators a lane holds side by side are
 * neighbours along m: one 32-bit store each in column-major C.
 */
#if RK_DT == 0
#error "the mma.sync path takes fp16 or bf16"
#endif
#define RK_WTM (RK_MT0 / RK_WM)
#define RK_WTN (RK_MT1 / RK_WN)
#define RK_PT (RK_WTN / 16) /* 16-row P tiles per warp */
#define RK_QT (RK_WTM / 8)  /* 8-column Q tiles per warp */
/* Shared tiles keep the global layout: K-contiguous or MN-contiguous rows. */
#define RK_A_ROWS (RK_TA ? RK_MT0 : RK_DU)
#define RK_A_W (RK_TA ? RK_DU : RK_MT0)
#define RK_B_ROWS (RK_TB ? RK_DU : RK_MT1)
#define RK_B_W (RK_TB ? RK_MT1 : RK_DU)
#define RK_SLDSPAD (RK_SWZ ? 0 : RK_LDSPAD)
#define RK_A_SZ (RK_A_ROWS * (RK_A_W + RK_SLDSPAD))
#define RK_B_SZ (RK_B_ROWS * (RK_B_W + RK_SLDSPAD))
#define RK_STAGE_SZ (RK_A_SZ + RK_B_SZ)
#define RK_SMEM_BYTES (RK_STAGES * RK_STAGE_SZ * 2)
#define RK_A_CHUNKS (RK_A_ROWS * RK_A_W / 8)
#define RK_B_CHUNKS (RK_B_ROWS * RK_B_W / 8)

static_assert(RK_WTM % 16 == 0 && RK_WTN % 16 == 0, "warp tile must be a multiple of 16");
static_assert(RK_DU % 16 == 0, "depth must be a multiple of 16");
static_assert(RK_MT0 % 8 == 0 && RK_MT1 % 8 == 0, "tiles must be multiples of 8");
static_assert(RK_SLDSPAD % 8 == 0, "padding must keep 16-byte rows");
static_assert(RK_STAGES >= 2, "at least two stages");

RK_INFO(RK_NT, RK_SMEM_BYTES);

/* Offset in elements of (row, col) in a tile of rows W elements wide. */
RK_INLINE int
rk_soff(int row, int col, int w)
{
#if RK_SWZ
	if (w >= 64)
		return row * w + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
	int chunk = row * (w >> 3) + (col >> 3);
	int line = chunk >> 3;
	return (((line << 3) | ((chunk & 7) ^ (line & 7))) << 3) + (col & 7);
#else
	return row * (w + RK_SLDSPAD) + col;
#endif
}

RK_INLINE void
rk_ldsm4(unsigned int *r, unsigned int addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

RK_INLINE void
rk_ldsm4t(unsigned int *r, unsigned int addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

RK_INLINE void
rk_mma(float *d, const unsigned int *a, const unsigned int *b)
{
#if RK_DT == 1
	asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
	asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT A, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT B, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT C,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
	extern __shared__ RK_ALIGN(128) unsigned short rk_smem[];
	float acc[RK_PT][RK_QT][4];
	int tid = RK_TID();
	int lane = tid & 31, warp = tid >> 5;
	int wq0 = (warp % RK_WM) * RK_WTM, wp0 = (warp / RK_WM) * RK_WTN;
	int tm, tn, kb, ke;
	int z = RK_BID_Z();
	int batch = z / RK_GSU;

	rk_tile_coords(M, N, RK_BID_X(), &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	unsigned int sbase = rk_smem_addr(rk_smem);

	RK_UNROLL
	for (int i = 0; i < RK_PT; i++)
		RK_UNROLL
		for (int j = 0; j < RK_QT; j++)
			RK_UNROLL
			for (int e = 0; e < 4; e++)
				acc[i][j][e] = 0.0f;

	/*
	 * cp.async state, computed once: each thread copies the 16-byte chunks
	 * (r0 + i * RPI, c0) of a tile, so one running pointer per operand, a
	 * chunk step and a shared-memory offset serve every chunk and stage.
	 * A row limit and a byte count for the contiguous edge (zero-fill) are
	 * the only per-stage work.
	 */
#define RK_A_CPR (RK_A_W / 8)
#define RK_B_CPR (RK_B_W / 8)
#define RK_A_RPI (RK_NT / RK_A_CPR)
#define RK_B_RPI (RK_NT / RK_B_CPR)
/* Whether the swizzle is the same for rows r and r + RPI (then offsets just add). */
#define RK_LIN(rpi, w) (!RK_SWZ || ((w) >= 64 ? (rpi) % 8 == 0 : ((rpi) * (w)) % 512 == 0))
	static_assert(RK_NT >= RK_A_CPR && RK_NT >= RK_B_CPR, "a tile row has more chunks than threads");
	int a_r0 = tid / RK_A_CPR, a_c0 = (tid % RK_A_CPR) * 8;
	int b_r0 = tid / RK_B_CPR, b_c0 = (tid % RK_B_CPR) * 8;
	const rk_t *pa = RK_TA ? A + (rk_i64)(m0 + a_r0) * lda + kb + a_c0
			       : A + (rk_i64)(kb + a_r0) * lda + m0 + a_c0;
	const rk_t *pb = RK_TB ? B + (rk_i64)(kb + b_r0) * ldb + n0 + b_c0
			       : B + (rk_i64)(n0 + b_r0) * ldb + kb + b_c0;
	rk_i64 a_step = (rk_i64)RK_A_RPI * lda, b_step = (rk_i64)RK_B_RPI * ldb;
	unsigned int a_so = 2 * rk_soff(a_r0, a_c0, RK_A_W);
	unsigned int b_so = 2 * rk_soff(b_r0, b_c0, RK_B_W);
	/* Bytes of a chunk at the M (N) edge, when that side is the contiguous one. */
	int a_mb = RK_MIN(RK_MAX(M - m0 - a_c0, 0), 8) * 2;
	int b_nb = RK_MIN(RK_MAX(N - n0 - b_c0, 0), 8) * 2;

#define RK_LOAD_STAGE(st, k0)                                                                      \
	do {                                                                                       \
		unsigned int s_ = sbase + (st) * (RK_STAGE_SZ * 2);                                \
		int rlim = RK_TA ? M - m0 : ke - (k0);                                             \
		int cb = RK_TA ? RK_MIN(RK_MAX(ke - (k0) - a_c0, 0), 8) * 2 : a_mb;                \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_CDIV(RK_A_CHUNKS, RK_NT); i++) {                            \
			int row = a_r0 + i * RK_A_RPI;                                             \
			int bytes = row < rlim ? cb : 0;                                           \
			unsigned int so = RK_LIN(RK_A_RPI, RK_A_W)                                 \
				? a_so + 2u * i * RK_A_RPI * (RK_A_W + RK_SLDSPAD)                 \
				: 2u * rk_soff(row, a_c0, RK_A_W);                                 \
			if (RK_A_CHUNKS % RK_NT == 0 || tid + i * RK_NT < RK_A_CHUNKS)             \
				rk_cp_async16(s_ + so, bytes ? pa + i * a_step : A, bytes);        \
		}                                                                                  \
		pa += RK_TA ? (rk_i64)RK_DU : RK_DU * lda;                                        \
		s_ += RK_A_SZ * 2;                                                                 \
		rlim = RK_TB ? ke - (k0) : N - n0;                                                 \
		cb = RK_TB ? b_nb : RK_MIN(RK_MAX(ke - (k0) - b_c0, 0), 8) * 2;                    \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_CDIV(RK_B_CHUNKS, RK_NT); i++) {                            \
			int row = b_r0 + i * RK_B_RPI;                                             \
			int bytes = row < rlim ? cb : 0;                                           \
			unsigned int so = RK_LIN(RK_B_RPI, RK_B_W)                                 \
				? b_so + 2u * i * RK_B_RPI * (RK_B_W + RK_SLDSPAD)                 \
				: 2u * rk_soff(row, b_c0, RK_B_W);                                 \
			if (RK_B_CHUNKS % RK_NT == 0 || tid + i * RK_NT < RK_B_CHUNKS)             \
				rk_cp_async16(s_ + so, bytes ? pb + i * b_step : B, bytes);        \
		}                                                                                  \
		pb += RK_TB ? RK_DU * ldb : (rk_i64)RK_DU;                                        \
	} while (0)

	int ntiles = RK_CDIV(ke - kb, RK_DU);
	RK_UNROLL
	for (int s = 0; s < RK_STAGES - 1; s++) {
		if (s < ntiles)
			RK_LOAD_STAGE(s, kb + s * RK_DU);
		RK_CP_COMMIT();
	}

	/*
	 * Byte offsets of this lane's ldmatrix rows at step kk = 0 of a stage. A later
	 * kk only XORs (K-contiguous rows: the chunk index moves by kk/8, an even
	 * number, in bits the swizzle's row term never carries into) or adds
	 * (MN-contiguous: kk rows down, a multiple of 8, so the swizzle is unchanged):
	 * no index arithmetic is left in the inner loop.
	 */
	int j8 = lane >> 3, r8 = lane & 7;
	unsigned int poff[RK_PT], qoff[RK_QT / 2];
	RK_UNROLL
	for (int i = 0; i < RK_PT; i++) {
		int p0 = wp0 + i * 16;
		poff[i] = 2 * (RK_TB ? rk_soff((j8 >> 1) * 8 + r8, p0 + (j8 & 1) * 8, RK_B_W)
				     : rk_soff(p0 + (j8 & 1) * 8 + r8, (j8 >> 1) * 8, RK_B_W));
	}
	RK_UNROLL
	for (int j = 0; j < RK_QT / 2; j++) {
		int q0 = wq0 + j * 16;
		qoff[j] = 2 * (RK_TA ? rk_soff(q0 + (j8 >> 1) * 8 + r8, (j8 & 1) * 8, RK_A_W)
				     : rk_soff((j8 & 1) * 8 + r8, q0 + (j8 >> 1) * 8, RK_A_W));
	}
/* Byte offset at step KK from the kk = 0 offset O of a tile W wide; MN: rows are k. */
#define RK_KK_OFF(o, kk, w, mn)                                                                    \
	((mn) ? (o) + 2u * (unsigned)(kk) * (unsigned)((w) + RK_SLDSPAD)                           \
	      : (RK_SWZ ? (o) ^ (2u * (unsigned)(kk)) : (o) + 2u * (unsigned)(kk)))
	int st = 0, ld_st = (RK_STAGES - 1) % RK_STAGES;
	for (int kt = 0; kt < ntiles; kt++) {
		RK_CP_WAIT(RK_STAGES - 2);
		RK_SYNC();
		{
			int nk = kt + RK_STAGES - 1;
			if (nk < ntiles)
				RK_LOAD_STAGE(ld_st, kb + nk * RK_DU);
			RK_CP_COMMIT();
			ld_st = ld_st + 1 == RK_STAGES ? 0 : ld_st + 1;
		}
		unsigned int sa_ = sbase + st * (RK_STAGE_SZ * 2);
		unsigned int sb_ = sa_ + RK_A_SZ * 2;
		st = st + 1 == RK_STAGES ? 0 : st + 1;
/* Fragments of step KK into buffer B: P from B's tile, Q from A's. */
#define RK_LDFRAG(b, kk)                                                                           \
	do {                                                                                       \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_PT; i++) {                                                  \
			if (RK_TB && RK_B_W < 32)                                                  \
				rk_ldsm4t(pf[b][i], sb_ + rk_soff((kk) + (j8 >> 1) * 8 + r8,         \
								  wp0 + i * 16 + (j8 & 1) * 8,       \
								  RK_B_W) * 2);                      \
			else if (RK_TB)                                                            \
				rk_ldsm4t(pf[b][i], sb_ + RK_KK_OFF(poff[i], kk, RK_B_W, 1));        \
			else                                                                       \
				rk_ldsm4(pf[b][i], sb_ + RK_KK_OFF(poff[i], kk, RK_B_W, 0));         \
		}                                                                                  \
		RK_UNROLL                                                                          \
		for (int j = 0; j < RK_QT; j += 2) {                                               \
			unsigned int t[4];                                                         \
			if (!RK_TA && RK_A_W < 32)                                                 \
				rk_ldsm4t(t, sa_ + rk_soff((kk) + (j8 & 1) * 8 + r8,                \
							   wq0 + j * 8 + (j8 >> 1) * 8, RK_A_W) * 2); \
			else if (RK_TA)                                                            \
				rk_ldsm4(t, sa_ + RK_KK_OFF(qoff[j / 2], kk, RK_A_W, 0));            \
			else                                                                       \
				rk_ldsm4t(t, sa_ + RK_KK_OFF(qoff[j / 2], kk, RK_A_W, 1));           \
			qf[b][j][0] = t[0];                                                        \
			qf[b][j][1] = t[1];                                                        \
			qf[b][j + 1][0] = t[2];                                                    \
			qf[b][j + 1][1] = t[3];                                                    \
		}                                                                                  \
	} while (0)
#define RK_MMAS(b)                                                                                 \
	do {                                                                                       \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_PT; i++)                                                    \
			RK_UNROLL                                                                  \
			for (int j = 0; j < RK_QT; j++)                                            \
				rk_mma(acc[i][j], pf[b][i], qf[b][j]);                             \
	} while (0)

#if RK_PLR
		unsigned int pf[2][RK_PT][4], qf[2][RK_QT][2];
		RK_LDFRAG(0, 0);
		RK_UNROLL
		for (int kk = 0; kk < RK_DU; kk += 16) {
			if (kk + 16 < RK_DU)
				RK_LDFRAG(((kk >> 4) + 1) & 1, kk + 16);
			RK_MMAS((kk >> 4) & 1);
		}
#else
		unsigned int pf[1][RK_PT][4], qf[1][RK_QT][2];
		RK_UNROLL
		for (int kk = 0; kk < RK_DU; kk += 16) {
			RK_LDFRAG(0, kk);
			RK_MMAS(0);
		}
#endif
	}
#undef RK_LDFRAG
#undef RK_MMAS
#undef RK_KK_OFF
	RK_CP_WAIT(0);
#undef RK_LOAD_STAGE

#if RK_GSU > 1
	if (!rk_gsu_meet<RK_PT * RK_QT * 4, false>(&acc[0][0][0], W))
		return;
#endif
	/* Epilogue: acc[i][j] = {(n, m), (n, m+1), (n+8, m), (n+8, m+1)}. */
	int g = lane >> 2, q = (lane & 3) * 2;
	bool pair_ok = (ldc % 2) == 0 && ((rk_u64)C % 4) == 0;
	RK_UNROLL
	for (int i = 0; i < RK_PT; i++)
		RK_UNROLL
		for (int j = 0; j < RK_QT; j++)
			RK_UNROLL
			for (int h = 0; h < 2; h++) {
				int n = n0 + wp0 + i * 16 + g + h * 8;
				int m = m0 + wq0 + j * 8 + q;
				if (n >= N || m >= M)
					continue;
				rk_put_pair(acc[i][j][h * 2], acc[i][j][h * 2 + 1], m, n, M, pair_ok,
					    alpha, beta, C, ldc);
			}
}

#elif RK_PATH == 3
/* ----------------------------------------------- NVIDIA Hopper wgmma path */
/*
 * sm_90a warpgroup MMA (the backends compile MC=2 for sm_90a). wgmma's M side
 * is B's tile (rows n, 64 per warpgroup, RK_WN warpgroups stacked along n), its
 * N side is A's whole tile (RK_MT0 columns of m, one m64nMT0k16 per k16 step),
 * so, as on the mma.sync path, the two accumulators a thread holds side by
 * side are neighbours along m. Both operands are read by the tensor cores
 * straight from shared memory through matrix descriptors, in the 128-byte
 * swizzled layouts: K-contiguous operands as rows of DU = 64 elements (128
 * bytes) with 16-byte chunk c of row r at c ^ (r % 8); MN-contiguous ones as
 * blocks of 64 MN-elements, each 64 rows of k of 128 bytes, swizzled the same
 * way. cp.async fills STAGES stages; a stage is refilled two k-tiles after its
 * wgmmas were issued, once wgmma.wait_group 1 and a barrier say they are done.
 */
#if RK_DT == 0
#error "the wgmma path takes fp16 or bf16"
#endif
#if RK_DT == 1
#define RK_WG_T "f16"
#else
#define RK_WG_T "bf16"
#endif
#define RK_A_TILE (RK_MT0 * RK_DU * 2) /* bytes */
#define RK_B_TILE (RK_MT1 * RK_DU * 2)
#define RK_STAGE_B (RK_A_TILE + RK_B_TILE)
#define RK_SMEM_BYTES (RK_STAGES * RK_STAGE_B + 1024) /* + alignment to 1024 */
#define RK_NACC (RK_MT0 / 2)

static_assert(RK_DU == 64, "the wgmma path takes DU = 64 (one 128-byte swizzle row)");
static_assert(RK_WM == 1 && RK_MT1 == 64 * RK_WN, "wgmma: WN warpgroups of 64 rows of n");
static_assert(RK_MT0 == 64 || RK_MT0 == 128 || RK_MT0 == 256, "wgmma N is 64, 128 or 256");
static_assert(RK_STAGES >= 3, "the wgmma pipeline needs three stages or more");
static_assert(RK_SWZ == 1, "the wgmma path uses the 128-byte swizzle");

RK_INFO(RK_NT, RK_SMEM_BYTES);

RK_INLINE void
rk_cp_async16f(unsigned int dst, const void *src)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src));
}

/* Matrix descriptor: start, leading and stride byte offsets, 128-byte swizzle. */
RK_INLINE rk_u64
rk_wg_desc(unsigned int addr, unsigned int lbo, unsigned int sbo)
{
	return (rk_u64)((addr & 0x3ffff) >> 4) | ((rk_u64)(lbo >> 4) << 16) |
	       ((rk_u64)(sbo >> 4) << 32) | (1ull << 62);
}

RK_INLINE void
rk_wgmma(float *d, rk_u64 da, rk_u64 db)
{
#if RK_MT0 == 64
	asm volatile("{ .reg .pred p; setp.ne.b32 p, %34, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16.f32." RK_WG_T "." RK_WG_T " {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29,"
		     "%30, %31"
		     "}, %32, %33, p, 1, 1, %35, %36; }"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
		       "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		       "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
		       "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
		       "+f"(d[30]), "+f"(d[31])
		     : "l"(da), "l"(db), "r"(1), "n"(RK_TB), "n"(1 - RK_TA));
#elif RK_MT0 == 128
	asm volatile("{ .reg .pred p; setp.ne.b32 p, %66, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n128k16.f32." RK_WG_T "." RK_WG_T " {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29,"
		     "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43,"
		     "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57,"
		     "%58, %59, %60, %61, %62, %63"
		     "}, %64, %65, p, 1, 1, %67, %68; }"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
		       "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		       "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
		       "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
		       "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
		       "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
		       "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
		       "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
		       "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		     : "l"(da), "l"(db), "r"(1), "n"(RK_TB), "n"(1 - RK_TA));
#elif RK_MT0 == 256
	asm volatile("{ .reg .pred p; setp.ne.b32 p, %130, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n256k16.f32." RK_WG_T "." RK_WG_T " {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29,"
		     "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43,"
		     "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57,"
		     "%58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71,"
		     "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85,"
		     "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99,"
		     "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
		     "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123,"
		     "%124, %125, %126, %127"
		     "}, %128, %129, p, 1, 1, %131, %132; }"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
		       "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
		       "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
		       "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
		       "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
		       "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
		       "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
		       "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
		       "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
		       "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		       "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
		       "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
		       "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
		       "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		       "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
		       "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]),
		       "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		       "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
		       "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
		       "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
		       "+f"(d[127])
		     : "l"(da), "l"(db), "r"(1), "n"(RK_TB), "n"(1 - RK_TA));
#endif
}

/*
 * Copies one operand's k-tile into shared memory. K-contiguous (kmaj): ROWS
 * rows of 64 elements, row r at r * 128 bytes. MN-contiguous: 64 rows of k,
 * W elements of m (n) each, in blocks of 64 columns, 8 KiB apart. Chunks out
 * of range are zero-filled (cp.async with a short source size).
 */
RK_INLINE void
rk_wg_fill(unsigned int s, const rk_t *RK_RESTRICT g, rk_i64 ld, int kmaj, int w, int mn0,
	   int mnlim, int k0, int ke, int tid)
{
	int chunks = w * (RK_DU / 8);

	for (int idx = tid; idx < chunks; idx += RK_NT) {
		int r, c, bytes;
		unsigned int so;
		const rk_t *p;

		if (kmaj) {
			r = idx >> 3; /* row along mn */
			c = idx & 7;
			so = r * 128 + ((c ^ (r & 7)) << 4);
			p = g + (rk_i64)(mn0 + r) * ld + k0 + c * 8;
			bytes = mn0 + r < mnlim ? RK_MIN(RK_MAX(ke - k0 - c * 8, 0), 8) * 2 : 0;
		} else {
			int cm = idx % (w / 8);
			r = idx / (w / 8); /* row along k */
			c = cm & 7;
			so = (cm >> 3) * 8192 + r * 128 + ((c ^ (r & 7)) << 4);
			p = g + (rk_i64)(k0 + r) * ld + mn0 + cm * 8;
			bytes = k0 + r < ke ? RK_MIN(RK_MAX(mnlim - mn0 - cm * 8, 0), 8) * 2 : 0;
		}
		rk_cp_async16(s + so, bytes ? (const void *)p : (const void *)g, bytes);
	}
}

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT A, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT B, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT C,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
	extern __shared__ RK_ALIGN(128) unsigned short rk_smem[];
	float acc[RK_NACC];
	int tid = RK_TID();
	int lane = tid & 31, wg = tid >> 7, wq = (tid >> 5) & 3;
	int tm, tn, kb, ke;
	int z = RK_BID_Z();
	int batch = z / RK_GSU;

	rk_tile_coords(M, N, RK_BID_X(), &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	unsigned int sbase = (rk_smem_addr(rk_smem) + 1023u) & ~1023u;

	RK_UNROLL
	for (int i = 0; i < RK_NACC; i++)
		acc[i] = 0.0f;

	/*
	 * cp.async plan for whole tiles, computed once: thread tid copies chunks
	 * tid + i * NT of each operand's k-tile. K-contiguous rows hold 8 chunks, so
	 * chunk column c is fixed and the row moves by NT / 8 (a multiple of 8: the
	 * swizzle term stays); MN-contiguous k-rows hold W / 8 chunks and the k-row
	 * moves by NT / (W / 8). Global chunk i is at base + k-tile offset + i * step.
	 * Tiles at an edge of M, N or K take rk_wg_fill's checked path instead.
	 */
#define RK_A_CPR (RK_TA ? 8 : RK_MT0 / 8) /* chunks per shared row */
#define RK_B_CPR (RK_TB ? RK_MT1 / 8 : 8)
#define RK_A_RPI (RK_NT / RK_A_CPR)       /* rows per i */
#define RK_B_RPI (RK_NT / RK_B_CPR)
	static_assert((RK_MT0 * 8) % RK_NT == 0 && (RK_MT1 * 8) % RK_NT == 0, "chunks per thread");
	int a_r0 = tid / RK_A_CPR, a_c0 = tid % RK_A_CPR;
	int b_r0 = tid / RK_B_CPR, b_c0 = tid % RK_B_CPR;
	/* Shared offsets of chunk (r, c): K-major r * 128; MN-major in 64-column blocks. */
#define RK_SO(r, c) ((((c) >> 3) * 8192) + (r) * 128 + ((((c) & 7) ^ ((r) & 7)) << 4))
	const rk_t *a_base = RK_TA ? A + (rk_i64)(m0 + a_r0) * lda + a_c0 * 8
				   : A + (rk_i64)a_r0 * lda + m0 + a_c0 * 8;
	const rk_t *b_base = RK_TB ? B + (rk_i64)b_r0 * ldb + n0 + b_c0 * 8
				   : B + (rk_i64)(n0 + b_r0) * ldb + b_c0 * 8;
	rk_i64 a_step = (rk_i64)RK_A_RPI * lda, b_step = (rk_i64)RK_B_RPI * ldb;
	bool mn_full = m0 + RK_MT0 <= M && n0 + RK_MT1 <= N;

#define RK_WG_LOAD(st, k0)                                                                         \
	do {                                                                                       \
		unsigned int s_ = sbase + (st) * RK_STAGE_B;                                       \
		if (mn_full && (k0) + RK_DU <= ke) {                                               \
			const rk_t *pa_ = a_base + (RK_TA ? (rk_i64)(k0) : (rk_i64)(k0)*lda);      \
			const rk_t *pb_ = b_base + (RK_TB ? (rk_i64)(k0)*ldb : (rk_i64)(k0));      \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_MT0 * 8 / RK_NT; i++)                               \
				rk_cp_async16f(s_ + RK_SO(a_r0 + i * RK_A_RPI, a_c0),              \
					       pa_ + i * a_step);                                  \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_MT1 * 8 / RK_NT; i++)                               \
				rk_cp_async16f(s_ + RK_A_TILE + RK_SO(b_r0 + i * RK_B_RPI, b_c0),  \
					       pb_ + i * b_step);                                  \
		} else {                                                                           \
			rk_wg_fill(s_, A, lda, RK_TA, RK_MT0, m0, M, (k0), ke, tid);               \
			rk_wg_fill(s_ + RK_A_TILE, B, ldb, !RK_TB, RK_MT1, n0, N, (k0), ke, tid);  \
		}                                                                                  \
	} while (0)

	int ntiles = RK_CDIV(ke - kb, RK_DU);
	RK_UNROLL
	for (int s = 0; s < RK_STAGES - 2; s++) {
		if (s < ntiles)
			RK_WG_LOAD(s, kb + s * RK_DU);
		RK_CP_COMMIT();
	}

	/*
	 * Descriptors of stage 0, step 0 (this warpgroup's 64 rows of B's tile); a
	 * stage and a k16 step only add to the start-address field (addresses stay
	 * under 256 KiB, so the 14-bit field never carries).
	 */
	const rk_u64 da0 = rk_wg_desc(sbase + RK_A_TILE + (RK_TB ? wg * 8192 : wg * 64 * 128), 8192, 1024);
	const rk_u64 db0 = rk_wg_desc(sbase, RK_TA ? 16 : 8192, 1024);
	const unsigned int a_kstep = RK_TA ? 32 : 2048, b_kstep = RK_TB ? 2048 : 32;
	int st = 0;
	for (int kt = 0; kt < ntiles; kt++) {
		RK_CP_WAIT(RK_STAGES - 3);
		/* cp.async wrote through the generic proxy; wgmma reads through the async one. */
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
		RK_SYNC();
		{
			/* The stage of tile kt - 2, whose wgmmas every warpgroup has waited for. */
			int nk = kt + RK_STAGES - 2;
			int ls = st + RK_STAGES - 2;
			if (ls >= RK_STAGES)
				ls -= RK_STAGES;
			if (nk < ntiles)
				RK_WG_LOAD(ls, kb + nk * RK_DU);
			RK_CP_COMMIT();
		}
		unsigned int so_ = st * (RK_STAGE_B >> 4);
		st = st + 1 == RK_STAGES ? 0 : st + 1;
		asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
		RK_UNROLL
		for (int kk = 0; kk < RK_DU / 16; kk++)
			rk_wgmma(acc, da0 + so_ + kk * (b_kstep >> 4), db0 + so_ + kk * (a_kstep >> 4));
		asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
	RK_UNROLL
	for (int i = 0; i < RK_NACC; i++)
		asm volatile("" : "+f"(acc[i])::"memory");
	RK_CP_WAIT(0);
#undef RK_WG_LOAD
#undef RK_SO

#if RK_GSU > 1
	if (!rk_gsu_meet<RK_NACC, false>(acc, W))
		return;
#endif
	/*
	 * Epilogue: acc[i] is row n = 16 * warp + lane / 4 + 8 * ((i / 2) % 2) of the
	 * warpgroup's 64, column m = 8 * (i / 4) + 2 * (lane % 4) + i % 2.
	 */
	bool pair_ok = (ldc % 2) == 0 && ((rk_u64)C % 4) == 0;
	RK_UNROLL
	for (int i = 0; i < RK_NACC; i += 2) {
		int n = n0 + wg * 64 + wq * 16 + (lane >> 2) + 8 * ((i >> 1) & 1);
		int m = m0 + 8 * (i >> 2) + 2 * (lane & 3);
		if (n >= N || m >= M)
			continue;
		rk_put_pair(acc[i], acc[i + 1], m, n, M, pair_ok, alpha, beta, C, ldc);
	}
}

#elif RK_PATH == 4
/* ------------------------------------------------------------- GEMV path */
/*
 * For M of a few rows (LLM decoding), where a GEMM is a stream over B: lane
 * group g (32 consecutive threads) of the block owns the TT1 columns n0 + g *
 * TT1 + j and the MT0 rows m0 + i. Its lanes split K: per step lane l reads the
 * k = k0 + u * 32 * VW + l * VW + e (u < DU / VW, e < VW) of every owned column
 * of op(B) and row of op(A), so one load instruction of the group covers 32 * VW
 * contiguous elements of a K-contiguous column. Rows and columns past M and N
 * are clamped to the last one (read, never written), so the loop has no bounds
 * tests; the K tail runs element by element. No shared memory.
 */
#define RK_GU (RK_DU / RK_VW)
static_assert(RK_DU % RK_VW == 0, "VW must divide DU");
static_assert(RK_MT1 % RK_TT1 == 0, "TT1 must divide MT1");
static_assert(RK_NT >= 32 && RK_NT <= 1024, "1 to 32 lane groups");

RK_INFO(RK_NT, 0);

/* VW elements of op(A) or op(B) along k from P (K-stride KS); a vector load when VEC. */
template <bool VEC>
RK_INLINE void
rk_gv_ld(float *dst, const rk_t *RK_RESTRICT p, rk_i64 ks)
{
	if (VEC) {
		rk_vec<rk_t, RK_VW> v = *(const rk_vec<rk_t, RK_VW> *)p;

		RK_UNROLL
		for (int e = 0; e < RK_VW; e++)
			dst[e] = RK_LD(v.v[e]);
	} else {
		RK_UNROLL
		for (int e = 0; e < RK_VW; e++)
			dst[e] = RK_LD(p[e * ks]);
	}
}

/* The whole steps of the K range [k0, ke): returns where the tail starts. */
template <bool VA, bool VB>
RK_INLINE int
rk_gv_steps(float (&acc)[RK_MT0][RK_TT1], const rk_t *const (&pa)[RK_MT0],
	    const rk_t *const (&pb)[RK_TT1], rk_i64 ak, rk_i64 bk, int k0, int ke, int lane)
{
	for (; k0 + 32 * RK_DU <= ke; k0 += 32 * RK_DU) {
		float a[RK_GU][RK_MT0][RK_VW], b[RK_GU][RK_TT1][RK_VW];

		RK_UNROLL
		for (int u = 0; u < RK_GU; u++) {
			rk_i64 k = k0 + u * 32 * RK_VW + lane * RK_VW;

			RK_UNROLL
			for (int j = 0; j < RK_TT1; j++)
				rk_gv_ld<VB>(b[u][j], pb[j] + k * bk, bk);
			RK_UNROLL
			for (int i = 0; i < RK_MT0; i++)
				rk_gv_ld<VA>(a[u][i], pa[i] + k * ak, ak);
		}
		RK_UNROLL
		for (int u = 0; u < RK_GU; u++)
			RK_UNROLL
			for (int e = 0; e < RK_VW; e++)
				RK_UNROLL
				for (int i = 0; i < RK_MT0; i++)
					RK_UNROLL
					for (int j = 0; j < RK_TT1; j++)
						acc[i][j] = RK_FMA(a[u][i][e], b[u][j][e], acc[i][j]);
	}
	return k0;
}

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT A, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT B, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT C,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
	float acc[RK_MT0][RK_TT1];
	const rk_t *pa[RK_MT0], *pb[RK_TT1];
	int tid = RK_TID(), lane = tid & 31;
	int tm, tn, kb, ke;
	int z = RK_BID_Z();
	int batch = z / RK_GSU;

	rk_tile_coords(M, N, RK_BID_X(), &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1 + (tid >> 5) * RK_TT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	/* K strides of op(A)'s rows and op(B)'s columns. */
	const rk_i64 ak = RK_TA ? 1 : lda, bk = RK_TB ? ldb : 1;

	RK_UNROLL
	for (int i = 0; i < RK_MT0; i++) {
		pa[i] = A + (rk_i64)RK_MIN(m0 + i, M - 1) * (RK_TA ? lda : 1);
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++)
			acc[i][j] = 0.0f;
	}
	RK_UNROLL
	for (int j = 0; j < RK_TT1; j++)
		pb[j] = B + (rk_i64)RK_MIN(n0 + j, N - 1) * (RK_TB ? 1 : ldb);

	/* Vector loads where K is contiguous and every row starts aligned. */
	const rk_u64 vb = sizeof(rk_t) * RK_VW;
	bool va = RK_TA && lda % RK_VW == 0 && (rk_u64)A % vb == 0;
	bool vbk = !RK_TB && ldb % RK_VW == 0 && (rk_u64)B % vb == 0;
	int k0;
	if (va && vbk)
		k0 = rk_gv_steps<RK_TA != 0, RK_TB == 0>(acc, pa, pb, ak, bk, kb, ke, lane);
	else if (vbk)
		k0 = rk_gv_steps<false, RK_TB == 0>(acc, pa, pb, ak, bk, kb, ke, lane);
	else
		k0 = rk_gv_steps<false, false>(acc, pa, pb, ak, bk, kb, ke, lane);
	for (int k = k0 + lane; k < ke; k += 32) {
		float a[RK_MT0];

		RK_UNROLL
		for (int i = 0; i < RK_MT0; i++)
			a[i] = RK_LD(pa[i][k * ak]);
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++) {
			float b = RK_LD(pb[j][k * bk]);

			RK_UNROLL
			for (int i = 0; i < RK_MT0; i++)
				acc[i][j] = RK_FMA(a[i], b, acc[i][j]);
		}
	}

	/* Sum over the 32 lanes; lane (i * TT1 + j) % 32 writes element (i, j). */
	RK_UNROLL
	for (int o = 16; o > 0; o >>= 1)
		RK_UNROLL
		for (int i = 0; i < RK_MT0; i++)
			RK_UNROLL
			for (int j = 0; j < RK_TT1; j++)
				acc[i][j] += rk_shfl_xor(acc[i][j], o);
#if RK_GSU > 1
	if (!rk_gsu_meet<RK_MT0 * RK_TT1, true>(&acc[0][0], W))
		return;
#endif
	RK_UNROLL
	for (int i = 0; i < RK_MT0; i++)
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++)
			if (lane == ((i * RK_TT1 + j) & 31) && m0 + i < M && n0 + j < N)
				rk_put(acc[i][j], m0 + i, n0 + j, alpha, beta, C, ldc);
}

#elif RK_PATH == 2
/* --------------------------------------------------- RDNA3 WMMA path */
/*
 * Wave32 WMMA 16x16x16: lane l holds row (A) or column (B) l % 16 as sixteen
 * 16-bit values, lanes 16..31 repeating lanes 0..15; the fp32 result element
 * v of lane l is row 2v + l / 16, column l % 16. Tiles are staged in LDS with
 * K contiguous for both operands.
 */
#if !RK_HIP
#error "the WMMA path is for AMD gfx11"
#endif
#if RK_DT == 0
#error "the WMMA path takes fp16 or bf16"
#endif
#define RK_WTM (RK_MT0 / RK_WM)
#define RK_WTN (RK_MT1 / RK_WN)
#define RK_LDK (RK_DU + 8)
#define RK_SMEM_BYTES ((RK_MT0 + RK_MT1) * RK_LDK * 2)

static_assert(RK_WTM % 16 == 0 && RK_WTN % 16 == 0, "wave tile must be a multiple of 16");
static_assert(RK_DU % 16 == 0, "depth must be a multiple of 16");

typedef float rk_f8 __attribute__((ext_vector_type(8)));
typedef _Float16 rk_h8 __attribute__((ext_vector_type(8)));
typedef _Float16 rk_h16 __attribute__((ext_vector_type(16)));
typedef short rk_s8 __attribute__((ext_vector_type(8)));
typedef short rk_s16 __attribute__((ext_vector_type(16)));

RK_INFO(RK_NT, 0);

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT A, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT B, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT C,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
	__shared__ RK_ALIGN(16) rk_t As[RK_MT0][RK_LDK];
	__shared__ RK_ALIGN(16) rk_t Bs[RK_MT1][RK_LDK];
	rk_f8 acc[RK_WTM / 16][RK_WTN / 16];
	int tid = RK_TID();
	int lane = tid & 31, wave = tid >> 5;
	int wm0 = (wave % RK_WM) * RK_WTM, wn0 = (wave / RK_WM) * RK_WTN;
	int tm, tn, kb, ke;
	int z = RK_BID_Z();
	int batch = z / RK_GSU;

	rk_tile_coords(M, N, RK_BID_X(), &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;

	RK_UNROLL
	for (int i = 0; i < RK_WTM / 16; i++)
		RK_UNROLL
		for (int j = 0; j < RK_WTN / 16; j++)
			acc[i][j] = (rk_f8){0, 0, 0, 0, 0, 0, 0, 0};

	for (int k0 = kb; k0 < ke; k0 += RK_DU) {
		/* Coalesced along whichever dimension is contiguous in memory. */
		for (int idx = tid; idx < RK_MT0 * RK_DU; idx += RK_NT) {
			int m = RK_TA ? idx / RK_DU : idx % RK_MT0;
			int k = RK_TA ? idx % RK_DU : idx / RK_MT0;
			bool ok = m0 + m < M && k0 + k < ke;
			As[m][k] = ok ? A[RK_TA ? (m0 + m) * lda + k0 + k : (k0 + k) * lda + m0 + m] : 0;
		}
		for (int idx = tid; idx < RK_MT1 * RK_DU; idx += RK_NT) {
			int n = RK_TB ? idx % RK_MT1 : idx / RK_DU;
			int k = RK_TB ? idx / RK_MT1 : idx % RK_DU;
			bool ok = n0 + n < N && k0 + k < ke;
			Bs[n][k] = ok ? B[RK_TB ? (k0 + k) * ldb + n0 + n : (n0 + n) * ldb + k0 + k] : 0;
		}
		RK_SYNC();
		RK_UNROLL
		for (int kk = 0; kk < RK_DU; kk += 16) {
			RK_UNROLL
			for (int i = 0; i < RK_WTM / 16; i++) {
				const rk_t *pa = &As[wm0 + i * 16 + (lane & 15)][kk];
				rk_s8 alo = *(const rk_s8 *)pa, ahi = *(const rk_s8 *)(pa + 8);
				rk_s16 a = __builtin_shufflevector(alo, ahi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
								   10, 11, 12, 13, 14, 15);
				RK_UNROLL
				for (int j = 0; j < RK_WTN / 16; j++) {
					const rk_t *pb = &Bs[wn0 + j * 16 + (lane & 15)][kk];
					rk_s8 blo = *(const rk_s8 *)pb, bhi = *(const rk_s8 *)(pb + 8);
					rk_s16 b = __builtin_shufflevector(blo, bhi, 0, 1, 2, 3, 4, 5, 6, 7,
									   8, 9, 10, 11, 12, 13, 14, 15);
#if RK_DT == 1
					acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(
						__builtin_bit_cast(rk_h16, a), __builtin_bit_cast(rk_h16, b),
						acc[i][j]);
#else
					acc[i][j] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, acc[i][j]);
#endif
				}
			}
		}
		RK_SYNC();
	}

#if RK_GSU > 1
	{
		float fl[RK_WTM / 16 * (RK_WTN / 16) * 8];

		RK_UNROLL
		for (int e = 0; e < RK_WTM / 16 * (RK_WTN / 16) * 8; e++)
			fl[e] = acc[e / 8 / (RK_WTN / 16)][e / 8 % (RK_WTN / 16)][e % 8];
		if (!rk_gsu_meet<RK_WTM / 16 * (RK_WTN / 16) * 8, false>(fl, W))
			return;
		RK_UNROLL
		for (int e = 0; e < RK_WTM / 16 * (RK_WTN / 16) * 8; e++)
			acc[e / 8 / (RK_WTN / 16)][e / 8 % (RK_WTN / 16)][e % 8] = fl[e];
	}
#endif
	RK_UNROLL
	for (int i = 0; i < RK_WTM / 16; i++)
		RK_UNROLL
		for (int j = 0; j < RK_WTN / 16; j++)
			RK_UNROLL
			for (int v = 0; v < 8; v++) {
				int m = m0 + wm0 + i * 16 + v * 2 + (lane >> 4);
				int n = n0 + wn0 + j * 16 + (lane & 15);
				if (m < M && n < N)
					rk_put(acc[i][j][v], m, n, alpha, beta, C, ldc);
			}
}
#endif /* RK_PATH */

#if RK_CUDA
/*
 * Repack for the chunked paths: a ROWS x COLS column-major matrix of 16-bit
 * elements at S (leading dimension LDS, batch stride SS) copied to D
 * (leading dimension LDD >= ROWS, a multiple of 8; stride SD), rows past ROWS
 * written as zero so that a chunk never reads what was not written.
 * Grid: X x 1 x batch blocks of 256 threads, striding over LDD x COLS.
 */
RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(256, 1)
rk_pack(int rows, int cols, const unsigned short *RK_RESTRICT S, rk_i64 lds, rk_i64 ss,
	unsigned short *RK_RESTRICT D, rk_i64 ldd, rk_i64 sd)
{
	rk_i64 total = ldd * cols, step = (rk_i64)RK_GRID_X() * 256;

	S += (rk_i64)RK_BID_Z() * ss;
	D += (rk_i64)RK_BID_Z() * sd;
	for (rk_i64 i = (rk_i64)RK_BID_X() * 256 + RK_TID(); i < total; i += step) {
		rk_i64 r = i % ldd, c = i / ldd;

		D[i] = r < rows ? S[c * lds + r] : (unsigned short)0;
	}
}
#endif
