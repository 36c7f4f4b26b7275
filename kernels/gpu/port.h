/*
 * Portability layer of the GEMM kernels. One kernel source (gemm.cu) compiles
 * as CUDA (NVRTC at run time, or nvcc) and as HIP (hiprtc at run time, or
 * clang -x hip -nogpulib -nogpuinc offline). Nothing here includes a CUDA or
 * HIP header: only compiler builtins and inline assembly, so the same text
 * builds with no SDK headers at all. The kernel uses the RK_* names below and
 * never threadIdx, __syncthreads or the vendors' half types directly.
 *
 * A third layer, RK_HOST (defined by tests/gpu/test-kernel-host.cpp), compiles
 * the FMA and GEMV paths as plain C++ for the CPU: each GPU thread of a block
 * is a fiber on one CPU thread (the test provides the scheduler and the
 * barriers below), the blocks one after another, static storage for
 * __shared__. It exists so that CI, which has no GPU, runs those paths' index
 * arithmetic against a reference.
 *
 * 16-bit floats travel as raw bits (unsigned short) and are converted to float
 * in registers: fp16 through the hardware conversion, bf16 by bit shifts with
 * round-to-nearest-even. All arithmetic accumulates in fp32.
 */
#ifndef RK_PORT_H
#define RK_PORT_H

#if defined(RK_HOST)
#define RK_HIP 0
#define RK_CUDA 0
#elif defined(__HIP__) || defined(__HIPCC_RTC__) || defined(__AMDGCN__)
#define RK_HOST 0
#define RK_HIP 1
#define RK_CUDA 0
#else
#define RK_HOST 0
#define RK_HIP 0
#define RK_CUDA 1
#endif

#ifndef RK_EXTERN_C
#define RK_EXTERN_C extern "C"
#endif

#if RK_HOST
#define __global__
#define __device__
#define __shared__ static
#define RK_INLINE inline
#define RK_LAUNCH_BOUNDS(n, minb)
/* The GPU thread the running fiber plays (set by the scheduler at each switch),
 * its block, each thread's count of lane shuffles, the shuffles' exchange rows;
 * the test defines the block's barrier and the one of each group of 32 lanes. */
inline int rk_host_tid, rk_host_bid_x, rk_host_bid_z, rk_host_grid_x;
inline unsigned rk_host_round[1024];
inline float rk_host_xch[2][1024];
void rk_host_sync();
void rk_host_lane_sync(int group);
#define RK_TID() (rk_host_tid)
#define RK_BID_X() (rk_host_bid_x)
#define RK_BID_Z() (rk_host_bid_z)
#define RK_GRID_X() (rk_host_grid_x)
#define RK_SYNC() rk_host_sync()
#define RK_ALIGN(n) __attribute__((aligned(n)))
#define RK_RESTRICT __restrict__
#define RK_UNROLL
#define RK_FMA(a, b, c) __builtin_fmaf(a, b, c)
typedef unsigned long long rk_u64;
typedef long long rk_i64;

RK_INLINE float
rk_h2f(unsigned short h)
{
	return (float)__builtin_bit_cast(_Float16, h);
}

RK_INLINE unsigned short
rk_f2h(float f)
{
	return __builtin_bit_cast(unsigned short, (_Float16)f);
}
#elif RK_HIP
/* clang in HIP mode knows these attributes; hiprtc already defines the macros. */
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#define RK_INLINE __device__ inline __attribute__((always_inline))
#define RK_LAUNCH_BOUNDS(n, minb) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define RK_TID() ((int)__builtin_amdgcn_workitem_id_x())
#define RK_BID_X() ((int)__builtin_amdgcn_workgroup_id_x())
#define RK_BID_Z() ((int)__builtin_amdgcn_workgroup_id_z())
#define RK_GRID_X() ((int)(__builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x()))
#define RK_SYNC()                                                                                  \
	do {                                                                                       \
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                             \
		__builtin_amdgcn_s_barrier();                                                      \
		__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                             \
	} while (0)
#define RK_ALIGN(n) __attribute__((aligned(n)))
#define RK_RESTRICT __restrict__
#define RK_UNROLL _Pragma("unroll")
#define RK_FMA(a, b, c) __builtin_fmaf(a, b, c)
typedef unsigned long long rk_u64;
typedef long long rk_i64;

RK_INLINE float
rk_h2f(unsigned short h)
{
	return (float)__builtin_bit_cast(_Float16, h);
}

RK_INLINE unsigned short
rk_f2h(float f)
{
	return __builtin_bit_cast(unsigned short, (_Float16)f);
}
#else /* CUDA */
#define RK_INLINE __device__ __forceinline__
#define RK_LAUNCH_BOUNDS(n, minb) __launch_bounds__(n, minb)
#define RK_TID() ((int)threadIdx.x)
#define RK_BID_X() ((int)blockIdx.x)
#define RK_BID_Z() ((int)blockIdx.z)
#define RK_GRID_X() ((int)gridDim.x)
#define RK_SYNC() __syncthreads()
#define RK_ALIGN(n) __align__(n)
#define RK_RESTRICT __restrict__
#define RK_UNROLL _Pragma("unroll")
#define RK_FMA(a, b, c) __fmaf_rn(a, b, c)
typedef unsigned long long rk_u64;
typedef long long rk_i64;

RK_INLINE float
rk_h2f(unsigned short h)
{
	float f;

	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

RK_INLINE unsigned short
rk_f2h(float f)
{
	unsigned short h;

	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}
#endif

#if RK_HIP || RK_HOST
#define RK_AS_FLOAT(u) __builtin_bit_cast(float, (unsigned int)(u))
#define RK_AS_UINT(f) __builtin_bit_cast(unsigned int, (float)(f))
#else
#define RK_AS_FLOAT(u) __uint_as_float(u)
#define RK_AS_UINT(f) __float_as_uint(f)
#endif

/* Lane i gets V of lane i ^ O, within aligned groups of 32 lanes (O < 32). */
#if RK_HOST
/*
 * The 32 threads of a lane group call it at the same points (the GEMV path
 * does) and meet at their group's barrier. Two exchange rows in turn: a thread
 * writes a row again only after the next round's barrier, which every reader
 * of the row's last use has passed.
 */
RK_INLINE float
rk_shfl_xor(float v, int o)
{
	float *x = rk_host_xch[rk_host_round[rk_host_tid]++ & 1];

	x[rk_host_tid] = v;
	rk_host_lane_sync(rk_host_tid >> 5);
	return x[rk_host_tid ^ o];
}
#elif RK_HIP
RK_INLINE float
rk_shfl_xor(float v, int o)
{
	int lane = (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));

	return RK_AS_FLOAT(__builtin_amdgcn_ds_bpermute((lane ^ o) << 2, (int)RK_AS_UINT(v)));
}
#else
RK_INLINE float
rk_shfl_xor(float v, int o)
{
	float r;

	asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(o));
	return r;
}
#endif

RK_INLINE float
rk_bf2f(unsigned short b)
{
	return RK_AS_FLOAT((unsigned int)b << 16);
}

/* Round to nearest even; NaN stays a quiet NaN. */
RK_INLINE unsigned short
rk_f2bf(float f)
{
	unsigned int u = RK_AS_UINT(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}

/*
 * Asynchronous copies from global to shared memory (cp.async, NVIDIA sm_80 and
 * up): a shared address (rk_sref, from rk_smem_addr), BYTES of the source read
 * (0 to the copy's size) and the rest of the destination zero-filled; commit
 * closes a group, wait leaves at most N groups in flight. The host layer copies
 * at once. AMD has no such copy on the archs served: no definitions there.
 */
#if RK_HOST
typedef float *rk_sref;
#define RK_SREF_ADD(r, floats) ((r) + (floats))
RK_INLINE rk_sref
rk_smem_addr(const void *p)
{
	return (float *)p;
}
RK_INLINE void
rk_host_cp(rk_sref dst, const void *src, int size, int bytes)
{
	__builtin_memcpy(dst, src, bytes);
	__builtin_memset((char *)dst + bytes, 0, size - bytes);
}
#define rk_cp_async16(dst, src, bytes) rk_host_cp(dst, src, 16, bytes)
#define rk_cp_async4(dst, src, bytes) rk_host_cp(dst, src, 4, bytes)
#define RK_CP_COMMIT()
#define RK_CP_WAIT(n)
#elif RK_CUDA
typedef unsigned int rk_sref;
#define RK_SREF_ADD(r, floats) ((r) + 4u * (unsigned int)(floats))
RK_INLINE rk_sref
rk_smem_addr(const void *p)
{
	unsigned int a;

	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

RK_INLINE void
rk_cp_async16(rk_sref dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes));
}

RK_INLINE void
rk_cp_async4(rk_sref dst, const void *src, int bytes)
{
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(bytes));
}
/* No memory clobber: the barrier that follows a wait orders the shared reads. */
#define RK_CP_COMMIT() asm volatile("cp.async.commit_group;")
#define RK_CP_WAIT(n) asm volatile("cp.async.wait_group %0;" ::"n"(n))
#endif

/*
 * Blocks that meet through global memory (stream-K): a device-wide fence, a
 * counter's atomic add (returns the old value) and a load that is not served
 * from a stale L1 line (another block wrote the data in this launch). The host
 * layer runs one block at a time: plain operations.
 */
#if RK_HOST
#define RK_FENCE_DEVICE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rk_atomic_add_u32(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define rk_ld_l2(p) (*(p))
#elif RK_HIP
/* The agent-scope fence also invalidates the vector L1 (acquire side). */
#define RK_FENCE_DEVICE() __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent")
#define rk_atomic_add_u32(p, v) __hip_atomic_fetch_add((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
#define rk_ld_l2(p) (*(p))
#else
#define RK_FENCE_DEVICE() asm volatile("membar.gl;" ::: "memory")
RK_INLINE unsigned int
rk_atomic_add_u32(unsigned int *p, unsigned int v)
{
	unsigned int old;

	asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
	return old;
}

RK_INLINE float
rk_ld_l2(const float *p)
{
	float v;

	asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
	return v;
}
#endif

#endif /* RK_PORT_H */
