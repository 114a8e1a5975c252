// Shared-memory atomics (optionally predicated) and plain loads on 32-bit shared-window addresses,
// in PTX; and the distributed shared memory of thread block clusters (remote REDs, the cluster's
// barrier).
//
// Why not atomicCAS(&table[i], ...) on a generic pointer: on sm_90, nvcc 13.0 rebuilds the shared
// window's base from SR_CgaCtaId (S2R, MOV, LEA) at every such atomic of a static __shared__ table
// (the SASS of gpu-opt's ECC kernels then: three extra instructions and a long-latency S2R per
// voxel), and even rematerialises __cvta_generic_to_shared at each use. shared_address() hides the
// address from the optimiser, so it is computed once and held in a register; the atomics then take
// it plus a constant offset. The predicate (`@p atom` inside the asm) did not remove the branch:
// ptxas turned each predicated atomic into a branch around it (BSSY, BRA, BSYNC in gpu-opt's
// SASS), so gpu-opt passes pred = true and aims unneeded atomics at BlockHash's spare slots. The
// parameter stays because dropping it changes the PTX and the measured kernels' schedule (their
// SASS differs; the measured ECC kernel numbers are of this form).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace repix::gpu {

// The shared-window address of p (p must point into shared memory), held in a register.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("" : "+r"(a));
  return a;
}

// atomicCAS(*at, expected, desired) when `pred`; returns the old value, or `desired` when not pred.
__device__ __forceinline__ std::uint32_t cas_shared_if(std::uint32_t at, std::uint32_t expected,
                                                       std::uint32_t desired, bool pred) {
  std::uint32_t prev = desired;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p atom.shared.cas.b32 %0, [%1], %3, %4;\n\t}"
      : "+r"(prev)
      : "r"(at), "r"(static_cast<std::uint32_t>(pred)), "r"(expected), "r"(desired)
      : "memory");
  return prev;
}

// *at += v when `pred` (no return value: RED).
__device__ __forceinline__ void red_add_shared_if(std::uint32_t at, int v, bool pred) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p red.shared.add.s32 [%0], %1;\n\t}"
               :: "r"(at), "r"(v), "r"(static_cast<std::uint32_t>(pred)) : "memory");
}

// atomicAdd(*at, v): returns the old value (ATOMS.ADD with a result).
__device__ __forceinline__ std::uint32_t atom_add_shared(std::uint32_t at, std::uint32_t v) {
  std::uint32_t old;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(at), "r"(v) : "memory");
  return old;
}

// *at |= v when `pred`.
__device__ __forceinline__ void red_or_shared_if(std::uint32_t at, std::uint32_t v, bool pred) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p red.shared.or.b32 [%0], %1;\n\t}"
               :: "r"(at), "r"(v), "r"(static_cast<std::uint32_t>(pred)) : "memory");
}

// The 32-bit word at shared address `at`.
__device__ __forceinline__ std::uint32_t ld_shared(std::uint32_t at) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(at));
  return v;
}

// The 16 bytes at 16-byte-aligned shared address `at` (one LDS.128).
__device__ __forceinline__ uint4 ld_shared_v4(std::uint32_t at) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(at));
  return v;
}

// ---- distributed shared memory (thread block clusters, sm_90) ------------------------------------
// A block of a cluster reads and updates the shared memory of the others through shared::cluster
// addresses (mapa). Compiled for older architectures these trap: callers launch them only on
// devices with cluster launch (cudaDevAttrClusterLaunch).

// The shared::cluster address of the word at this block's shared address `at` in block `rank` of
// the cluster (the same variable, the other block's copy).
__device__ __forceinline__ std::uint32_t cluster_address(std::uint32_t at, std::uint32_t rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  std::uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(at), "r"(rank));
  return r;
#else
  (void)at;
  (void)rank;
  __trap();
  return 0;
#endif
}

// *at += v at a shared::cluster address (RED: no return value).
__device__ __forceinline__ void red_add_cluster(std::uint32_t at, int v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.relaxed.cluster.shared::cluster.add.s32 [%0], %1;" :: "r"(at), "r"(v) : "memory");
#else
  (void)at;
  (void)v;
  __trap();
#endif
}

// *at |= v at a shared::cluster address.
__device__ __forceinline__ void red_or_cluster(std::uint32_t at, std::uint32_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.relaxed.cluster.shared::cluster.or.b32 [%0], %1;" :: "r"(at), "r"(v) : "memory");
#else
  (void)at;
  (void)v;
  __trap();
#endif
}

// This block's rank in its cluster.
__device__ __forceinline__ std::uint32_t cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  __trap();
  return 0;
#endif
}

// Every thread of every block of the cluster waits here for all the others; the memory operations
// before it (remote REDs included) are visible to all of them after it (release / acquire at
// cluster scope). A block barrier too. Called by all threads of each block, converged.
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  __trap();
#endif
}

}  // namespace repix::gpu
