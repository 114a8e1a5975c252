// Concurrent union-find over an array of parents (parent[i] == i marks a root) that many threads
// update at once, as the same code on the GPU (atomicCAS, atomicMin) and on CPU threads (GCC's
// __atomic builtins), so the CPU tests run it concurrently too. Every link hangs the larger root
// under the smaller, so each set's root is its smallest index whatever the interleaving, and a
// parent only ever decreases: a stale read is an ancestor that was replaced by a smaller one, never
// a node of another set. find() halves the path it walks (each node it passes re-pointed to its
// grandparent, with atomicMin: a concurrent writer's smaller value wins). For the max-tree's
// tile merges and any connected-components step; index types: int32, uint32, int64.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace repix::gpu {

namespace uf_detail {

template <class I>
REPIX_HD I load(const I* p) {
#ifdef __CUDA_ARCH__
  return *static_cast<const volatile I*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// The value before; `desired` stored when it was `expected`.
template <class I>
REPIX_HD I cas(I* p, I expected, I desired) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(I) == 4) {
    return static_cast<I>(atomicCAS(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(expected),
                                    static_cast<unsigned int>(desired)));
  } else {
    static_assert(sizeof(I) == 8, "union-find indices are 32 or 64 bits");
    return static_cast<I>(atomicCAS(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(expected),
                                    static_cast<unsigned long long>(desired)));
  }
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;
#endif
}

template <class I>
REPIX_HD void store_min(I* p, I v) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(I) == 4) {
    if constexpr (std::is_signed<I>::value) atomicMin(reinterpret_cast<int*>(p), static_cast<int>(v));
    else atomicMin(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
  } else if constexpr (std::is_signed<I>::value) {
    atomicMin(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  } else {
    atomicMin(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
#else
  I cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
  }
#endif
}

}  // namespace uf_detail

// The root of x (its set's smallest index), halving the path on the way.
template <class I>
REPIX_HD I uf_find(I* parent, I x) {
  for (;;) {
    const I p = uf_detail::load(parent + x);
    if (p == x) return x;
    const I gp = uf_detail::load(parent + p);
    if (gp != p) uf_detail::store_min(parent + x, gp);
    x = gp;
  }
}

// Joins the sets of a and b: the larger root is hung under the smaller, retried from the new
// roots when another thread linked one of them first.
template <class I>
REPIX_HD void uf_union(I* parent, I a, I b) {
  for (;;) {
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a == b) return;
    if (a < b) {
      const I t = a;
      a = b;
      b = t;
    }
    if (uf_detail::cas(parent + a, a, b) == a) return;  // a was still a root: linked
  }
}

}  // namespace repix::gpu
