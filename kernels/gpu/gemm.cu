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
 *                 (gfx11) under HIP
 *   FMA:          RK_TT0/1 thread tile, RK_VW global vector width,
 *                 RK_PGR >= 1: register prefetch of the next tile, two LDS buffers,
 *                 RK_WL 1: each warp covers an 8 x 4 block of threads (fewer
 *                 distinct LDS addresses per read), RK_PLR 1: LDS fragments of
 *                 depth kk+1 read during the FMAs of kk
 *   RK_LDSPAD     LDS row padding in elements
 *   mma / WMMA:   RK_WM x RK_WN warps (waves), RK_STAGES cp.async stages,
 *                 RK_SWZ 1 = XOR-swizzled shared memory (else RK_LDSPAD padding),
 *                 RK_PLR 1 = fragments of step k16+1 loaded during the mma of k16
 *   RK_MINB       minimum blocks per multiprocessor (launch bounds; CUDA only)
 *   RK_GSU        split-K: K is cut into GSU slices; partial sums go to an fp32
 *                 workspace and rk_gemm_reduce applies alpha and beta
 *   RK_GROUP      M-tiles per band of the block raster, for L2 reuse
 *
 * The backends pass each tuning parameter NAME=V as -DRK_NAME=V.
 *
 * Launch: rk_gemm on a 1-D grid of tiles(M) * tiles(N) blocks, z = batch * GSU,
 * with rk_gemm_info[0] threads and rk_gemm_info[1] bytes of dynamic shared
 * memory (CUDA; HIP uses static LDS). With GSU > 1, then rk_gemm_reduce on
 * ceil(M * N / 256) x batch blocks of 256 threads.
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
/* Matrix cores: mma.sync on NVIDIA, WMMA on AMD gfx11. */
#if !RK_MC
#define RK_PATH 0
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
#ifndef RK_MINB
#define RK_MINB 1
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
#else
#define RK_NT (32 * RK_WM * RK_WN)
#endif

#define RK_CDIV(a, b) (((a) + (b)-1) / (b))
#define RK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RK_MAX(a, b) ((a) > (b) ? (a) : (b))

template <typename T, int N> struct alignas(sizeof(T) * N) rk_vec {
	T v[N];
};

/* Which tile of C this block computes, with M-tiles grouped in bands of RK_GROUP. */
RK_INLINE void
rk_tile_coords(int M, int N, int *tm, int *tn)
{
	int tiles_m = RK_CDIV(M, RK_MT0);
	int bid = RK_BID_X();
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

/* Writes one output element: to C with alpha and beta, or raw to the split-K workspace. */
RK_INLINE void
rk_put(float acc, int m, int n, int M, float alpha, float beta, rk_t *RK_RESTRICT C, rk_i64 ldc,
       float *RK_RESTRICT W)
{
#if RK_GSU > 1
	(void)alpha;
	(void)beta;
	(void)C;
	(void)ldc;
	W[m + (rk_i64)n * M] = acc;
#else
	(void)W;
	(void)M;
	rk_t *p = C + m + n * ldc;
	float v = alpha * acc;

	if (beta != 0.0f)
		v += beta * RK_LD(*p);
	*p = RK_ST(v);
#endif
}

#if RK_PATH == 0
/* ---------------------------------------------------------------- FMA path */

#define RK_WG0 (RK_MT0 / RK_TT0)
#define RK_WG1 (RK_MT1 / RK_TT1)
#define RK_LV0 (RK_TT0 >= 4 ? 4 : RK_TT0)
#define RK_LV1 (RK_TT1 >= 4 ? 4 : RK_TT1)
#define RK_LDS_A (RK_MT0 + RK_LDSPAD)
#define RK_LDS_B (RK_MT1 + RK_LDSPAD)
#define RK_NBUF (RK_PGR ? 2 : 1)
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

RK_EXTERN_C __device__ unsigned int rk_gemm_info[4] = {RK_NT, 0, RK_MT0, RK_MT1};

RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(RK_NT, RK_MINB)
rk_gemm(int M, int N, int K, float alpha, const rk_t *RK_RESTRICT A, rk_i64 lda, rk_i64 sa,
	const rk_t *RK_RESTRICT B, rk_i64 ldb, rk_i64 sb, float beta, rk_t *RK_RESTRICT C,
	rk_i64 ldc, rk_i64 sc, float *RK_RESTRICT W)
{
	__shared__ RK_ALIGN(16) float As[RK_NBUF][RK_DU][RK_LDS_A];
	__shared__ RK_ALIGN(16) float Bs[RK_NBUF][RK_DU][RK_LDS_B];
	float acc[RK_TT0][RK_TT1];
	float ra[RK_A_LOADS][RK_VW], rb[RK_B_LOADS][RK_VW];
	int tid = RK_TID();
#if RK_WL
	static_assert(RK_WG0 % 8 == 0 && RK_WG1 % 4 == 0, "WL needs 8 x 4 thread blocks");
	int t0 = (tid & 7) + 8 * ((tid >> 5) % (RK_WG0 / 8));
	int t1 = ((tid & 31) >> 3) + 4 * ((tid >> 5) / (RK_WG0 / 8));
#else
	int t0 = tid % RK_WG0, t1 = tid / RK_WG0;
#endif
	int tm, tn, kb, ke;
	int z = RK_BID_Z();
	int batch = z / RK_GSU;

	rk_tile_coords(M, N, &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	if (RK_GSU > 1)
		W += (rk_i64)z * M * N;
	bool a_al = (lda % RK_VW) == 0 && ((rk_u64)A % (sizeof(rk_t) * RK_VW)) == 0;
	bool b_al = (ldb % RK_VW) == 0 && ((rk_u64)B % (sizeof(rk_t) * RK_VW)) == 0;

	RK_UNROLL
	for (int i = 0; i < RK_TT0; i++)
		RK_UNROLL
		for (int j = 0; j < RK_TT1; j++)
			acc[i][j] = 0.0f;

/* Global tile at depth k0 into the registers ra/rb. */
#define RK_FETCH(k0)                                                                               \
	do {                                                                                       \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_A_LOADS; i++) {                                             \
			int idx = tid + i * RK_NT;                                                 \
			int c = (idx % RK_A_VPR) * RK_VW, r = idx / RK_A_VPR;                      \
			int row = RK_TA ? m0 + r : (k0) + r;                                       \
			int col = RK_TA ? (k0) + c : m0 + c;                                       \
			int rlim = RK_TA ? M : ke, clim = RK_TA ? ke : M;                          \
			bool ok = idx < RK_A_VECS && row < rlim;                                   \
			const rk_t *p = A + (rk_i64)row * lda + col;                               \
			rk_ldg(ra[i], ok ? p : A, ok && a_al && col + RK_VW <= clim, ok,           \
			       clim - col);                                                        \
		}                                                                                  \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_B_LOADS; i++) {                                             \
			int idx = tid + i * RK_NT;                                                 \
			int c = (idx % RK_B_VPR) * RK_VW, r = idx / RK_B_VPR;                      \
			int row = RK_TB ? (k0) + r : n0 + r;                                       \
			int col = RK_TB ? n0 + c : (k0) + c;                                       \
			int rlim = RK_TB ? ke : N, clim = RK_TB ? N : ke;                          \
			bool ok = idx < RK_B_VECS && row < rlim;                                   \
			const rk_t *p = B + (rk_i64)row * ldb + col;                               \
			rk_ldg(rb[i], ok ? p : B, ok && b_al && col + RK_VW <= clim, ok,           \
			       clim - col);                                                        \
		}                                                                                  \
	} while (0)

/* Registers ra/rb into LDS buffer `buf`, as As[k][m] and Bs[k][n]. */
#define RK_STASH(buf)                                                                              \
	do {                                                                                       \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_A_LOADS; i++) {                                             \
			int idx = tid + i * RK_NT;                                                 \
			int c = (idx % RK_A_VPR) * RK_VW, r = idx / RK_A_VPR;                      \
			if (idx < RK_A_VECS)                                                       \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_VW; e++) {                                  \
					if (RK_TA)                                                 \
						As[buf][c + e][r] = ra[i][e];                      \
					else                                                       \
						As[buf][r][c + e] = ra[i][e];                      \
				}                                                                  \
		}                                                                                  \
		RK_UNROLL                                                                          \
		for (int i = 0; i < RK_B_LOADS; i++) {                                             \
			int idx = tid + i * RK_NT;                                                 \
			int c = (idx % RK_B_VPR) * RK_VW, r = idx / RK_B_VPR;                      \
			if (idx < RK_B_VECS)                                                       \
				RK_UNROLL                                                          \
				for (int e = 0; e < RK_VW; e++) {                                  \
					if (RK_TB)                                                 \
						Bs[buf][r][c + e] = rb[i][e];                      \
					else                                                       \
						Bs[buf][c + e][r] = rb[i][e];                      \
				}                                                                  \
		}                                                                                  \
	} while (0)

/* Fragments of depth KK from LDS buffer BUF into registers a[AB], b[AB]. */
#define RK_FRAG(buf, kk, ab)                                                                       \
	do {                                                                                       \
		RK_UNROLL                                                                          \
		for (int s = 0; s < RK_TT0 / RK_LV0; s++) {                                        \
			rk_vec<float, RK_LV0> v = *(const rk_vec<float, RK_LV0> *)&As              \
				[buf][kk][s * RK_WG0 * RK_LV0 + t0 * RK_LV0];                      \
			RK_UNROLL                                                                  \
			for (int e = 0; e < RK_LV0; e++)                                           \
				a[ab][s * RK_LV0 + e] = v.v[e];                                    \
		}                                                                                  \
		RK_UNROLL                                                                          \
		for (int s = 0; s < RK_TT1 / RK_LV1; s++) {                                        \
			rk_vec<float, RK_LV1> v = *(const rk_vec<float, RK_LV1> *)&Bs              \
				[buf][kk][s * RK_WG1 * RK_LV1 + t1 * RK_LV1];                      \
			RK_UNROLL                                                                  \
			for (int e = 0; e < RK_LV1; e++)                                           \
				b[ab][s * RK_LV1 + e] = v.v[e];                                    \
		}                                                                                  \
	} while (0)

/*
 * One LDS buffer's worth of outer products. With RK_PLR the fragments of depth
 * kk+1 are read while the FMAs of kk run (two register sets).
 */
#define RK_MATH(buf)                                                                               \
	do {                                                                                       \
		float a[RK_PLR ? 2 : 1][RK_TT0], b[RK_PLR ? 2 : 1][RK_TT1];                        \
		if (RK_PLR)                                                                        \
			RK_FRAG(buf, 0, 0);                                                        \
		RK_UNROLL                                                                          \
		for (int kk = 0; kk < RK_DU; kk++) {                                               \
			const int cb = RK_PLR ? (kk & 1) : 0;                                      \
			if (!RK_PLR)                                                               \
				RK_FRAG(buf, kk, 0);                                               \
			else if (kk + 1 < RK_DU)                                                   \
				RK_FRAG(buf, kk + 1, (kk + 1) & 1);                                \
			RK_UNROLL                                                                  \
			for (int i = 0; i < RK_TT0; i++)                                           \
				RK_UNROLL                                                          \
				for (int j = 0; j < RK_TT1; j++)                                   \
					acc[i][j] = RK_FMA(a[cb][i], b[cb][j], acc[i][j]);         \
		}                                                                                  \
	} while (0)

#if RK_PGR
	int cur = 0;
	if (kb < ke) {
		RK_FETCH(kb);
		RK_STASH(0);
	}
	RK_SYNC();
	for (int k0 = kb; k0 < ke; k0 += RK_DU) {
		bool more = k0 + RK_DU < ke;
		if (more)
			RK_FETCH(k0 + RK_DU);
		RK_MATH(cur);
		if (more)
			RK_STASH(cur ^ 1);
		RK_SYNC();
		cur ^= 1;
	}
#else
	for (int k0 = kb; k0 < ke; k0 += RK_DU) {
		RK_FETCH(k0);
		RK_STASH(0);
		RK_SYNC();
		RK_MATH(0);
		RK_SYNC();
	}
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
			if (RK_GSU == 1 && RK_LV0 > 1 && c_al && m + RK_LV0 <= M) {
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
						rk_put(acc[s * RK_LV0 + e][j], m + e, n, M, alpha, beta, C,
						       ldc, W);
			}
		}
	}
}
#undef RK_FETCH
#undef RK_STASH
#undef RK_FRAG
#undef RK_MATH

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

RK_EXTERN_C __device__ unsigned int rk_gemm_info[4] = {RK_NT, RK_SMEM_BYTES, RK_MT0, RK_MT1};

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

RK_INLINE unsigned int
rk_smem_addr(const void *p)
{
	unsigned int a;

	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

RK_INLINE void
rk_cp_async16(unsigned int dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes));
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

	rk_tile_coords(M, N, &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	if (RK_GSU > 1)
		W += (rk_i64)z * M * N;
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
		asm volatile("cp.async.commit_group;");
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
		asm volatile("cp.async.wait_group %0;" ::"n"(RK_STAGES - 2));
		RK_SYNC();
		{
			int nk = kt + RK_STAGES - 1;
			if (nk < ntiles)
				RK_LOAD_STAGE(ld_st, kb + nk * RK_DU);
			asm volatile("cp.async.commit_group;");
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
	asm volatile("cp.async.wait_group 0;");
#undef RK_LOAD_STAGE

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
				float v0 = acc[i][j][h * 2], v1 = acc[i][j][h * 2 + 1];
				if (n >= N || m >= M)
					continue;
				if (RK_GSU == 1 && pair_ok && m + 1 < M) {
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
					rk_put(v0, m, n, M, alpha, beta, C, ldc, W);
					if (m + 1 < M)
						rk_put(v1, m + 1, n, M, alpha, beta, C, ldc, W);
				}
			}
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

RK_EXTERN_C __device__ unsigned int rk_gemm_info[4] = {RK_NT, 0, RK_MT0, RK_MT1};

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

	rk_tile_coords(M, N, &tm, &tn);
	rk_k_range(K, z % RK_GSU, &kb, &ke);
	int m0 = tm * RK_MT0, n0 = tn * RK_MT1;
	A += batch * sa;
	B += batch * sb;
	C += batch * sc;
	if (RK_GSU > 1)
		W += (rk_i64)z * M * N;

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

	RK_UNROLL
	for (int i = 0; i < RK_WTM / 16; i++)
		RK_UNROLL
		for (int j = 0; j < RK_WTN / 16; j++)
			RK_UNROLL
			for (int v = 0; v < 8; v++) {
				int m = m0 + wm0 + i * 16 + v * 2 + (lane >> 4);
				int n = n0 + wn0 + j * 16 + (lane & 15);
				if (m < M && n < N)
					rk_put(acc[i][j][v], m, n, M, alpha, beta, C, ldc, W);
			}
}
#endif /* RK_PATH */

/*
 * Split-K epilogue: C = alpha * sum of the GSU partial tiles + beta * C.
 * Grid: ceil(M * N / 256) x 1 x batch, 256 threads.
 */
RK_EXTERN_C __global__ void RK_LAUNCH_BOUNDS(256, 1)
rk_gemm_reduce(int M, int N, float alpha, float beta, const float *RK_RESTRICT W,
	       rk_t *RK_RESTRICT C, rk_i64 ldc, rk_i64 sc)
{
	rk_i64 mn = (rk_i64)M * N;
	rk_i64 i = (rk_i64)RK_BID_X() * 256 + RK_TID();
	int batch = RK_BID_Z();

	if (i >= mn)
		return;
	W += (rk_i64)batch * RK_GSU * mn + i;
	float s = 0.0f;
	RK_UNROLL
	for (int g = 0; g < RK_GSU; g++)
		s += W[g * mn];
	int m = (int)(i % M), n = (int)(i / M);
	rk_t *p = C + batch * sc + m + n * ldc;
	float v = alpha * s;
	if (beta != 0.0f)
		v += beta * RK_LD(*p);
	*p = RK_ST(v);
}
