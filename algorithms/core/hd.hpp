// REPIX_HD: functions callable from host and device code (plain inline in host-only builds).
#pragma once
#ifndef REPIX_HD
#ifdef __CUDACC__
#define REPIX_HD __host__ __device__ __forceinline__
#else
#define REPIX_HD inline
#endif
#endif

// REPIX_UNROLL before a loop with a constant trip count: fully unrolled in device code, so that
// small arrays indexed by the loop counters stay in registers instead of local memory (nothing
// on the host).
#ifndef REPIX_UNROLL
#ifdef __CUDA_ARCH__
#define REPIX_UNROLL _Pragma("unroll")
#else
#define REPIX_UNROLL
#endif
#endif

namespace repix {
// Read-only load: the read-only data cache (LDG.CONSTANT) on the device, a plain load on the host.
template <class T>
REPIX_HD T load_readonly(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

// Bit scans of a 32-bit word: the leading zeros (32 for 0), and 1 + the index of the lowest set bit
// (0 for 0), as CUDA's __clz and __ffs give them.
REPIX_HD int clz32(unsigned m) {
#ifdef __CUDA_ARCH__
  return __clz(m);
#else
  return m ? __builtin_clz(m) : 32;
#endif
}
REPIX_HD int ffs32(unsigned m) {
#ifdef __CUDA_ARCH__
  return __ffs(m);
#else
  return __builtin_ffs(static_cast<int>(m));
#endif
}

// std::swap for host and device code (std::swap is not constexpr in C++17, so not callable on the device).
template <class V>
REPIX_HD void hd_swap(V& x, V& y) {
  const V t = x;
  x = y;
  y = t;
}
}  // namespace repix
