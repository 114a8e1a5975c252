// Pieces shared by the max-tree variants: the typed dispatch (element type x index type), the
// neighbourhoods, Berger's union-find on a rectangle (seq on the whole image, omp per tile), the
// merge of two trees along a border (omp), and the canonicalisation of any valid parent image to
// the normal form (seq-flood, omp).
#pragma once
#include <memory>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "maxtree/maxtree.hpp"

namespace repix::maxtree::detail {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
inline int thread_count(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// Runs `f(ImageView<T>, std::vector<I>& parent)` with the image's element type and the index type
// of its size (int32 below 2^31 pixels; int64 from there on or when opt.wide_index), after
// checking the input; the parent vector comes sized to the image.
template <class F>
Result run_typed(const HostImage& image, const Options& opt, F&& f) {
  check_input(image, opt);
  Result r;
  r.parent.shape = image.shape();
  r.parent.wide = opt.wide_index || image.size() >= (std::int64_t(1) << 31);
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= 2) {  // float32 was refused by check_input
      auto go = [&](auto& parent) {
        parent.resize(static_cast<std::size_t>(image.size()));
        f(image.view<T>(), parent, r.stats);
      };
      if (r.parent.wide) go(r.parent.wide_);
      else go(r.parent.narrow);
    }
  });
  return r;
}

// A rectangle [x0, x1) x [y0, y1) of the image.
struct Rect {
  std::int64_t x0, y0, x1, y1;
};

// Calls fn(nx, ny) for each neighbour of (x, y) inside `r` (4- or 8-connectivity).
template <class Fn>
inline void for_each_neighbour(std::int64_t x, std::int64_t y, const Rect& r, int connectivity, Fn&& fn) {
  const bool up = y > r.y0, down = y + 1 < r.y1, left = x > r.x0, right = x + 1 < r.x1;
  if (up) fn(x, y - 1);
  if (left) fn(x - 1, y);
  if (right) fn(x + 1, y);
  if (down) fn(x, y + 1);
  if (connectivity == 8) {
    if (up && left) fn(x - 1, y - 1);
    if (up && right) fn(x + 1, y - 1);
    if (down && left) fn(x - 1, y + 1);
    if (down && right) fn(x + 1, y + 1);
  }
}

// The number of distinct values of T: the buckets of the counting sorts.
template <class T>
constexpr std::size_t levels_of() {
  return std::size_t(1) << (8 * sizeof(T));
}

// Working memory of berger_rect, reused from tile to tile by one thread.
template <class I>
struct BergerScratch {
  std::vector<I> order, zpar, repr;
  std::vector<std::uint8_t> rank;
  std::vector<I> hist;
};

// Berger et al. 2007 on the rectangle `r` of the W-wide image f: the pixels sorted by level
// (counting sort, stable: ascending index within a level), then union-find from the last one down
// (union by rank, path halving), each pixel becoming the parent of the components it joins; then
// the canonicalisation in sorted order. Writes parent[] (global indices) for the rectangle's
// pixels only, pointing only inside it. Because the sort is stable and the pixels are processed
// from the highest index down within a level, the last pixel of a node to be processed, the one
// every other ends up pointing to, is the smallest index among its proper pixels: the result is
// the normal form of maxtree.hpp for the rectangle taken alone.
template <class T, class I>
void berger_rect(const T* f, std::int64_t W, const Rect& r, int connectivity, I* parent, BergerScratch<I>& s) {
  const I w = static_cast<I>(r.x1 - r.x0), h = static_cast<I>(r.y1 - r.y0), n = w * h;
  auto global = [&](I l) { return static_cast<I>((r.y0 + l / w) * W + r.x0 + l % w); };
  s.order.resize(static_cast<std::size_t>(n));
  if (static_cast<std::size_t>(n) * 4 < levels_of<T>()) {
    // Far fewer pixels than levels (small tiles of 16-bit images): clearing the histogram would
    // cost more than sorting by (level, index), which gives the same order.
    for (I l = 0; l < n; ++l) s.order[static_cast<std::size_t>(l)] = l;
    auto level = [&](I l) { return f[(r.y0 + l / w) * W + r.x0 + l % w]; };
    std::sort(s.order.begin(), s.order.end(), [&](I a, I b) { return level(a) < level(b) || (level(a) == level(b) && a < b); });
  } else {
    s.hist.assign(levels_of<T>() + 1, 0);
    for (std::int64_t y = r.y0; y < r.y1; ++y)
      for (std::int64_t x = r.x0; x < r.x1; ++x) ++s.hist[static_cast<std::size_t>(f[y * W + x]) + 1];
    for (std::size_t v = 1; v < s.hist.size(); ++v) s.hist[v] += s.hist[v - 1];
    I l = 0;
    for (std::int64_t y = r.y0; y < r.y1; ++y)
      for (std::int64_t x = r.x0; x < r.x1; ++x, ++l) s.order[static_cast<std::size_t>(s.hist[f[y * W + x]]++)] = l;
  }
  s.zpar.assign(static_cast<std::size_t>(n), I(-1));  // -1: not processed yet
  s.repr.resize(static_cast<std::size_t>(n));
  s.rank.assign(static_cast<std::size_t>(n), 0);
  I* zpar = s.zpar.data();
  auto find = [zpar](I x) {
    while (zpar[x] != x) {
      zpar[x] = zpar[zpar[x]];
      x = zpar[x];
    }
    return x;
  };
  for (I k = n - 1; k >= 0; --k) {
    const I l = s.order[static_cast<std::size_t>(k)];
    const std::int64_t x = r.x0 + l % w, y = r.y0 + l / w;
    const I g = static_cast<I>(y * W + x);
    parent[g] = g;
    zpar[l] = l;
    s.repr[static_cast<std::size_t>(l)] = l;
    I zp = l;
    for_each_neighbour(x, y, r, connectivity, [&](std::int64_t nx, std::int64_t ny) {
      const I ln = static_cast<I>((ny - r.y0) * w + (nx - r.x0));
      if (zpar[ln] < 0) return;
      I zn = find(ln);
      if (zn == zp) return;
      parent[global(s.repr[static_cast<std::size_t>(zn)])] = g;
      if (s.rank[zp] < s.rank[zn]) std::swap(zp, zn);
      zpar[zn] = zp;
      s.repr[static_cast<std::size_t>(zp)] = l;
      if (s.rank[zp] == s.rank[zn]) ++s.rank[zp];
    });
  }
  // Root to leaves: a pixel's parent q is canonicalised before it (q is lower, or of the same
  // level and smaller index), so one step reaches the node's canonical pixel.
  for (I k = 0; k < n; ++k) {
    const I g = global(s.order[static_cast<std::size_t>(k)]);
    const I q = parent[g];
    if (f[parent[q]] == f[q]) parent[g] = parent[q];
  }
}

// An array of n elements left uninitialised: a std::vector would zero it on one thread (and take
// every page fault there), 25-30 ms per 96 MB array at 6000x4000 int32 on the GPU host,
// before the parallel loops that write every element anyway (and now touch the pages in parallel).
template <class I>
std::unique_ptr<I[]> uninitialized(std::int64_t n) {
  return std::unique_ptr<I[]>(new I[static_cast<std::size_t>(n)]);
}

template <class I>
inline I load(const I* a) {
  return __atomic_load_n(a, __ATOMIC_RELAXED);
}
template <class I>
inline void store(I* a, I v) {
  __atomic_store_n(a, v, __ATOMIC_RELAXED);
}
template <class I>
inline void atomic_min(I* a, I v) {
  I cur = load(a);
  while (v < cur && !__atomic_compare_exchange_n(a, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

// Canonicalises a valid parent image to the normal form, with `threads` OpenMP threads. Valid:
// following parents, levels never rise; pixels linked to a pixel of their own level belong to its
// node, and every node's pixels reach one of them (its level root) whose parent is of a lower level
// (or itself: the root). seq-flood's and omp's trees are valid but their level roots are not the
// smallest index, and omp's same-level chains can be long.
template <class T, class I>
void canonicalize(const T* f, UninitializedVector<I>& parent_v, int threads) {
  const I n = static_cast<I>(parent_v.size());
  I* parent = parent_v.data();
  // 1. Every pixel to its level root (concurrent path compression: every write stores the level
  //    root of the chain it is on, so any reader sees a valid same-level chain; roots unchanged).
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p) {
    const I q = load(parent + p);
    if (q == p || f[q] != f[p]) continue;
    I r = q;
    for (;;) {
      const I s = load(parent + r);
      if (s == r || f[s] != f[r]) break;
      r = s;
    }
    for (I c = p; c != r;) {
      const I next = load(parent + c);
      store(parent + c, r);
      c = next;
    }
  }
  auto level_root = [&](I p) {
    const I q = parent[p];
    return (q == p || f[q] != f[p]) ? p : q;
  };
  // 2. The smallest index of each node, at its level root: the root's own index first, then an
  //    atomic minimum with each other pixel below it (most pixels are level roots or above theirs,
  //    and take no atomic at all: nearly every pixel of 16-bit noise is a node of its own).
  const std::unique_ptr<I[]> canon_v = uninitialized<I>(n);
  I* canon = canon_v.get();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p) canon[p] = p;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p) {
    const I r = level_root(p);
    if (p < r) atomic_min(canon + r, p);
  }
  // 3. The normal form (into a scratch array: it reads other pixels' parents), then copied back.
  const std::unique_ptr<I[]> out_v = uninitialized<I>(n);
  I* out = out_v.get();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p) {
    const I r = level_root(p), c = canon[r];
    if (p != c) {
      out[p] = c;
    } else {
      const I q = parent[r];
      out[p] = q == r ? c : canon[level_root(q)];
    }
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p) parent[p] = out[p];
}

// Calls fn(f, parent) on a parent image in normal form, with the image's element type and the parent image's index type.
template <class Fn>
void visit(const HostImage& image, const ParentImage& parent, Fn&& fn) {
  if (image.shape() != parent.shape) throw Error("internal: parent image shape differs from the image's");
  dispatch_dtype(image.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (sizeof(T) <= 2) {
      if (parent.wide) fn(image.data<T>(), parent.wide_.data());
      else fn(image.data<T>(), parent.narrow.data());
    } else {
      throw Error("maxtree needs a uint8 or uint16 image; got " + dtype_name(image.dtype()));
    }
  });
}

}  // namespace repix::maxtree::detail
