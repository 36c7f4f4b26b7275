/*
 * The FMA and GEMV paths of kernels/gpu/gemm.cu run on the CPU, with no GPU:
 * the kernel source compiled as C++ through port.h's host layer (RK_HOST: one
 * fiber per GPU thread of a block on one CPU thread, blocks one after another,
 * the barriers for RK_SYNC and the lane shuffles here). One configuration per
 * executable (its
 * RK_* defines come from CMake); the four transposes are four copies of the
 * kernel in four namespaces. Each runs odd shapes, padded leading dimensions,
 * operands one element off a vector boundary, a batch, alpha and beta, on
 * random data, against a double reference, with
 * every element of C checked. CI has no GPU: this is where the index
 * arithmetic of the whole-tile load plan, the edge path, split-K and the GEMV
 * lanes is exercised for real.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ucontext.h>

#ifndef RK_HOST_CONFIG
#define RK_HOST_CONFIG "the kernel's defaults"
#endif
#define RK_HOST 1
#define RK_EXTERN_C
#include "kernels/gpu/port.h"

#define RK_TA 0
#define RK_TB 0
namespace nn {
#include "kernels/gpu/gemm.cu"
}
#undef RK_TB
#define RK_TB 1
namespace nt {
#include "kernels/gpu/gemm.cu"
}
#undef RK_TA
#undef RK_TB
#define RK_TA 1
#define RK_TB 0
namespace tn {
#include "kernels/gpu/gemm.cu"
}
#undef RK_TB
#define RK_TB 1
namespace tt {
#include "kernels/gpu/gemm.cu"
}

typedef nn::rk_t elem;

struct kernel {
	const char *name;
	int ta, tb;
	void (*gemm)(int, int, int, float, const elem *, rk_i64, rk_i64, const elem *, rk_i64, rk_i64,
		     float, elem *, rk_i64, rk_i64, float *);
	const unsigned int *info;
};

static const kernel kernels[] = {
	{"NN", 0, 0, nn::rk_gemm, nn::rk_gemm_info},
	{"NT", 0, 1, nt::rk_gemm, nt::rk_gemm_info},
	{"TN", 1, 0, tn::rk_gemm, tn::rk_gemm_info},
	{"TT", 1, 1, tt::rk_gemm, tt::rk_gemm_info},
};

static float
to_f(elem v)
{
	return RK_LD(v);
}

static elem
from_f(float f)
{
	return (elem)RK_ST(f);
}

/*
 * The GPU threads of a block are fibers (ucontext) run in turn by one CPU
 * thread: a fiber runs until it waits at a barrier, then the next one runs.
 * A barrier's last arrival opens it and goes on; the others go on when the
 * scheduler finds it open. Against one OS thread per GPU thread this is tens
 * of times faster (a barrier round was a futex wake-up of every thread, with
 * hundreds of threads on two CPUs) and it finds a barrier that not every
 * thread reaches: a whole round with no arrival and no thread ending is a
 * deadlock, reported, where threads would hang.
 */
namespace host {
struct barrier {
	int n, arrived;
	unsigned phase;
};

struct fiber {
	ucontext_t ctx;
	std::vector<char> stack;
	bool done;
};

/* Enough for a kernel's registers-as-locals, also with ASan's red zones. */
const size_t stack_size = 256 * 1024;
ucontext_t sched;
std::vector<fiber> fibers;
barrier block, lanes[32];
unsigned long long moves; /* arrivals and fibers ended: progress */
int gx, gz;
void (*body)(void *);
void *body_arg;

void
wait(barrier &b)
{
	moves++;
	if (++b.arrived == b.n) {
		b.arrived = 0;
		b.phase++;
		return;
	}
	for (unsigned p = b.phase; b.phase == p;)
		swapcontext(&fibers[rk_host_tid].ctx, &sched);
}

void
fiber_main()
{
	for (int z = 0; z < gz; z++)
		for (int x = 0; x < gx; x++) {
			rk_host_bid_x = x;
			rk_host_bid_z = z;
			body(body_arg);
			wait(block);
		}
	fibers[rk_host_tid].done = true; /* uc_link returns to the scheduler */
}

/* Runs FN(ARG) for every thread of grid (gx, 1, gz), NT threads a block. The
 * loop's state is static: swapcontext returns twice, as setjmp does, so locals
 * kept across it could be clobbered. */
int live, turn;
unsigned long long before;

void
run(int grid_x, int grid_z, int nt, void (*fn)(void *), void *arg)
{
	gx = grid_x;
	gz = grid_z;
	rk_host_grid_x = grid_x;
	body = fn;
	body_arg = arg;
	block = {nt, 0, 0};
	for (int g = 0; g < 32; g++)
		lanes[g] = {nt - 32 * g < 32 ? nt - 32 * g : 32, 0, 0};
	memset(rk_host_round, 0, sizeof(rk_host_round));
	fibers.resize((size_t)nt);
	for (fiber &f : fibers) {
		f.stack.resize(stack_size);
		f.done = false;
		getcontext(&f.ctx);
		f.ctx.uc_stack.ss_sp = f.stack.data();
		f.ctx.uc_stack.ss_size = f.stack.size();
		f.ctx.uc_link = &sched;
		makecontext(&f.ctx, fiber_main, 0);
	}
	for (live = nt; live > 0;) {
		before = moves;
		for (turn = 0; turn < nt; turn++) {
			if (fibers[(size_t)turn].done)
				continue;
			rk_host_tid = turn;
			swapcontext(&sched, &fibers[(size_t)turn].ctx);
			if (fibers[(size_t)turn].done) {
				live--;
				moves++;
			}
		}
		if (moves == before) {
			fprintf(stderr, "deadlock: %d threads wait at a barrier the others never reach\n",
				live);
			abort();
		}
	}
}
} // namespace host

void
rk_host_sync()
{
	host::wait(host::block);
}

void
rk_host_lane_sync(int group)
{
	host::wait(host::lanes[group]);
}

template <typename F>
static void
launch(int gx, int gz, int nt, F body)
{
	host::run(gx, gz, nt, [](void *f) { (*(F *)f)(); }, &body);
}

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

/* Random in +-[0.1, 1], never zero. */
static float
rnd()
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	float u = (float)((rng >> 40) & 0xffffff) / 16777216.0f;
	return (rng & 1 ? 1.0f : -1.0f) * (0.1f + 0.9f * u);
}

/*
 * One problem: 0 when every element of C matches the reference. SK_GRID is the
 * stream-K grid (blocks per batch; SK 1 only): the launcher's choice, at most
 * the shared k-tiles.
 */
static int
run(const kernel &k, int M, int N, int K, int pad, int batch, float alpha, float beta, int sk_grid,
    int off)
{
	const int gsu = RK_GSU;
	rk_i64 lda = (k.ta ? K : M) + pad, ldb = (k.tb ? N : K) + 2 * pad, ldc = M + pad;
	rk_i64 sa = lda * (k.ta ? M : K) + pad, sb = ldb * (k.tb ? K : N) + pad, sc = ldc * N + pad;
	/* OFF elements before each operand: a base address that is not vector-aligned. */
	std::vector<elem> Ab(sa * batch + off), Bb(sb * batch + off), Cb(sc * batch + off), C0;
	elem *A = Ab.data() + off, *B = Bb.data() + off, *C = Cb.data() + off;
	/* The counters, then split-K: GSU tile slots per tile; stream-K: 2 per block */
	size_t slot = (size_t)k.info[2] * k.info[3];
	int tiles = ((M + k.info[2] - 1) / k.info[2]) * ((N + k.info[3] - 1) / k.info[3]);
	std::vector<float> W(RK_SK_COUNTERS + (k.info[4] ? 2 * slot * sk_grid * batch
	                                                : slot * tiles * gsu * batch));
	int bad = 0;

	for (auto &v : Ab)
		v = from_f(rnd());
	for (auto &v : Bb)
		v = from_f(rnd());
	for (auto &v : Cb)
		v = from_f(rnd());
	C0.assign(C, C + sc * batch);
	launch(k.info[4] ? sk_grid : tiles, batch * gsu, (int)k.info[0], [&] {
		k.gemm(M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, W.data());
	});
	for (int b = 0; b < batch; b++)
		for (int n = 0; n < N; n++)
			for (int m = 0; m < M; m++) {
				double s = 0, mag = 0;

				for (int kk = 0; kk < K; kk++) {
					double a = to_f(A[b * sa + (k.ta ? kk + m * lda : m + kk * lda)]);
					double v = to_f(B[b * sb + (k.tb ? n + kk * ldb : kk + n * ldb)]);

					s += a * v;
					mag += std::fabs(a * v);
				}
				double c0 = to_f(C0[b * sc + m + n * ldc]);
				double ref = alpha * s + beta * c0;
				double got = to_f(C[b * sc + m + n * ldc]);
				double rel = RK_DT == 0 ? 3e-5 : RK_DT == 1 ? 2e-3 : 1e-2;
				double tol = rel * (std::fabs(alpha) * mag + std::fabs(beta * c0)) + 1e-6;

				if (!(std::fabs(got - ref) <= tol) && bad++ < 3)
					printf("    C[%d](%d, %d) = %g, reference %g\n", b, m, n, got, ref);
			}
	/* Split-K and stream-K: the last block of each shared tile reset its counter. */
	for (int i = 0; i < RK_SK_COUNTERS; i++)
		if (((unsigned int *)W.data())[i] != 0 && bad++ < 3)
			printf("    counter %d left at %u\n", i, ((unsigned int *)W.data())[i]);
	/* Padding between columns and batches must be untouched. */
	for (rk_i64 i = 0; i < sc * batch; i++) {
		rk_i64 in = i % sc;
		if ((in >= ldc * N || in % ldc >= M) && memcmp(&C[i], &C0[i], sizeof(elem)) != 0 &&
		    bad++ < 3)
			printf("    padding at %lld written\n", (long long)i);
	}
	return bad;
}

int
main()
{
	/*
	 * M, N, K, padding of the leading dimensions, batch. The GEMV path gets few
	 * rows (its use; a lane shuffle costs two barrier rounds of every CPU thread).
	 */
#if RK_GV
	static const int shapes[][6] = {{1, 70, 1000, 0, 1, 0}, {3, 40, 517, 1, 2, 0},
					{8, 24, 136, 3, 1, 0},  {2, 37, 70, 0, 1, 0},
					{1, 45, 333, 0, 1, 1}};
#else
	static const int shapes[][6] = {{77, 93, 61, 0, 1, 0},  {128, 256, 64, 4, 2, 0},
					{1, 300, 1000, 0, 1, 0}, {8, 200, 136, 3, 1, 0},
					{136, 200, 88, 0, 1, 0}, {3, 64, 517, 1, 2, 0},
					{133, 67, 45, 0, 1, 1}};
#endif
	int failed = 0, total = 0;

	/*
	 * Stream-K grids: one block (every tile shared, no meeting), a few blocks
	 * (whole waves and a shared remainder; tiles split between two and more
	 * blocks) and more blocks than tiles (ranges shorter than a tile).
	 */
	static const int sk_grids[] = {1, 2, 5, 40};
	int ngrids = RK_SK ? 4 : 1;

	printf("config: %s, DT=%d, %u threads, tile %u x %u\n", RK_HOST_CONFIG, RK_DT, kernels[0].info[0],
	       kernels[0].info[2], kernels[0].info[3]);
	for (const kernel &k : kernels)
		for (const auto &s : shapes)
			for (int gi = 0; gi < ngrids; gi++) {
				float beta = s[0] == 8 ? 0.0f : -0.5f;
				int tiles = ((s[0] + k.info[2] - 1) / k.info[2]) * ((s[1] + k.info[3] - 1) / k.info[3]);
				int ipt = s[2] > 0 ? (s[2] + k.info[5] - 1) / k.info[5] : 1;
				int grid = sk_grids[gi] < tiles * ipt ? sk_grids[gi] : tiles * ipt;
				int bad = run(k, s[0], s[1], s[2], s[3], s[4], 0.75f, beta, grid, s[5]);

				total++;
				failed += bad != 0;
				printf("%s %s %dx%dx%d pad %d batch %d%s", bad ? "FAIL" : "ok  ", k.name, s[0],
				       s[1], s[2], s[3], s[4], s[5] ? " misaligned" : "");
				if (RK_SK)
					printf(" stream-K grid %d (%d tiles of %d k-tiles)", grid, tiles, ipt);
				printf(": %s\n", bad ? "wrong" : "matches the reference");
			}
	printf("%d of %d problems failed\n", failed, total);
	return failed ? 1 : 0;
}
