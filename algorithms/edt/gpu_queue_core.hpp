// The per-pixel logic of the edt queue variants (Algorithm 6) as __host__ __device__ functions:
// the GPU kernels (gpu_queue_common.cuh, gpu_tile.cu) run them on device memory, and the
// CPU tests run the same functions one simulated thread at a time (with a store that can fake a
// competing thread's write between the load and the compare-and-swap).
//
// Everything works on a window of a larger image (TileGeom): pixels are addressed by their
// window-local row-major index (uint32: a window has at most 2^32-1 pixels), sites are packed
// GLOBAL coordinates (detail.hpp), and propagation never leaves the window.
#pragma once
#include <cstdint>

#include "core/hd.hpp"
#include "edt/detail.hpp"

namespace repix::edt::queue_core {

// Windows are indexed with 32 bits (queue items are uint32 pixel indices).
inline constexpr std::int64_t kMaxWindowPixels = 0xffffffffll;

// The window [x0, x0 + w) x [y0, y0 + h) of the global image.
struct TileGeom {
  std::int64_t x0 = 0, y0 = 0, w = 1, h = 1;
  REPIX_HD std::int64_t size() const { return w * h; }
};

// f(q, qx, qy) for each 8-neighbour of window-local (lx, ly) inside the window: q its
// window-local index, (qx, qy) its global coordinates.
template <class F>
REPIX_HD void for_each_neighbour(const TileGeom& g, std::int64_t lx, std::int64_t ly, F&& f) {
  for (int dy = -1; dy <= 1; ++dy) {  // constant trip counts: the compiler unrolls both loops
    const std::int64_t qly = ly + dy;
    if (qly < 0 || qly >= g.h) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const std::int64_t qlx = lx + dx;
      if ((dx == 0 && dy == 0) || qlx < 0 || qlx >= g.w) continue;
      f(static_cast<std::uint32_t>(qly * g.w + qlx), g.x0 + qlx, g.y0 + qly);
    }
  }
}

// The window's site map. On the device: L2-coherent loads (__ldcg), because other blocks install
// sites while the persistent propagation kernel runs and a plain load could hit a stale L1 line;
// installs by 64-bit atomicCAS. On the host (CPU tests, one simulated thread at a time): plain
// memory. Any type with these two members can stand in for it (the tests fake races with one).
struct SiteStore {
  std::int64_t* sites;
  REPIX_HD std::int64_t load(std::uint32_t i) const {
#ifdef __CUDA_ARCH__
    return static_cast<std::int64_t>(__ldcg(reinterpret_cast<const long long*>(sites + i)));
#else
    return sites[i];
#endif
  }
  // Writes `desired` if the site is still `expected`; returns the site found.
  REPIX_HD std::int64_t compare_and_swap(std::uint32_t i, std::int64_t expected, std::int64_t desired) const {
#ifdef __CUDA_ARCH__
    return static_cast<std::int64_t>(atomicCAS(reinterpret_cast<unsigned long long*>(sites + i),
                                               static_cast<unsigned long long>(expected),
                                               static_cast<unsigned long long>(desired)));
#else
    const std::int64_t found = sites[i];
    if (found == expected) sites[i] = desired;
    return found;
#endif
  }
};

// Algorithm 6 lines 2-3: a background pixel is its own site; a foreground one has none yet.
REPIX_HD std::int64_t initial_site(bool background, std::int64_t x, std::int64_t y) {
  return background ? pack_xy(x, y) : kNoSite;
}

// Algorithm 6 line 4: whether window-local (lx, ly) has a foreground 8-neighbour inside the
// window (`in` is the window's input, zero = background). Neighbours across the window's border
// are the border rounds' business (TilePropagator::propagate_from).
template <class T>
REPIX_HD bool has_foreground_neighbour(const T* in, const TileGeom& g, std::int64_t lx, std::int64_t ly) {
  bool any = false;
  for_each_neighbour(g, lx, ly, [&](std::uint32_t q, std::int64_t, std::int64_t) { any |= !(in[q] == T(0)); });
  return any;
}

// Algorithm 6 lines 10-19, the install rule: site s goes to pixel q (global (qx, qy)) only while
// it is strictly closer than q's current site. When the compare-and-swap finds that another
// thread changed q since the load, the test is repeated against what it found (which may now be
// as close or closer: then s is not installed). True when this call installed s, i.e. exactly
// once per successful install, so q is queued once for it.
template <class Store>
REPIX_HD bool install_if_closer(const Store& st, std::uint32_t q, std::int64_t qx, std::int64_t qy, std::int64_t s) {
  const std::int64_t d = sq_to_site(qx, qy, s);
  std::int64_t cur = st.load(q);
  while (d < sq_to_site(qx, qy, cur)) {
    const std::int64_t found = st.compare_and_swap(q, cur, s);
    if (found == cur) return true;
    cur = found;
  }
  return false;
}

// Algorithm 6 lines 9-19 for the dequeued pixel p (window-local index): its CURRENT site (which
// may be newer than the one it was queued with) is offered to its 8 neighbours in the window;
// emit(q) for each neighbour that took it. A pixel without a site offers nothing.
template <class Store, class Emit>
REPIX_HD void propagate_pixel(const Store& st, const TileGeom& g, std::uint32_t p, Emit&& emit) {
  const std::int64_t s = st.load(p);
  if (s == kNoSite) return;
  // 32-bit division: p < 2^32 and the width fits in 32 bits.
  const std::uint32_t w = static_cast<std::uint32_t>(g.w);
  const std::uint32_t ly = p / w, lx = p - ly * w;
  for_each_neighbour(g, lx, ly, [&](std::uint32_t q, std::int64_t qx, std::int64_t qy) {
    if (install_if_closer(st, q, qx, qy, s)) emit(q);
  });
}

// The re-seed predicate (after a queue overflow, and for TilePropagator::propagate_frontier):
// p's site is strictly closer to some 8-neighbour in the window than that neighbour's own site,
// i.e. processing p would change something. Sound because sites only ever move closer (the
// state after any episode is a partial solution), and complete because a state where no pixel
// satisfies it is the fixed point that Algorithm 6 ends in. On the initial state it selects
// exactly the contour pixels (has_foreground_neighbour).
template <class Store>
REPIX_HD bool can_improve_a_neighbour(const Store& st, const TileGeom& g, std::int64_t lx, std::int64_t ly) {
  const std::int64_t s = st.load(static_cast<std::uint32_t>(ly * g.w + lx));
  if (s == kNoSite) return false;
  bool any = false;
  for_each_neighbour(g, lx, ly, [&](std::uint32_t q, std::int64_t qx, std::int64_t qy) {
    any |= sq_to_site(qx, qy, s) < sq_to_site(qx, qy, st.load(q));
  });
  return any;
}

}  // namespace repix::edt::queue_core
