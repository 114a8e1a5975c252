// The area attribute and the area filter on a parent image in normal form, on the CPU (sequential
// or OpenMP): the area opening of every CPU tree variant (common.cpp) and of each part of a
// distributed run (parts.cpp). Leaf to root by levels, then root to leaf.
#pragma once
#include <omp.h>

#include <cstdint>
#include <vector>

#include "core/uninitialized_vector.hpp"
#include "maxtree/detail.hpp"

namespace repix::maxtree::detail {

template <class I>
struct Segment {
  I begin, end;   // a range of the level-sorted nodes
  bool parallel;  // one large level: its nodes in parallel; otherwise a run of small levels, in order
};

// Runs fn(node) over the level-sorted nodes `order` (level v: [start[v], start[v + 1])), level by
// level, descending or ascending: each level sees the effects of all levels before it. A level of
// many nodes is shared among the threads; a run of small levels is walked by one of them (a
// barrier per level would cost more than the work at 16 bits).
template <class I, class Fn>
void for_levels(const std::vector<I>& start, const std::vector<I>& order, bool descending, int threads, Fn&& fn) {
  constexpr I kBig = 4096;
  const std::size_t L = start.size() - 1;
  std::vector<Segment<I>> segs;
  for (std::size_t k = 0; k < L; ++k) {
    const std::size_t v = descending ? L - 1 - k : k;
    const I b = start[v], e = start[v + 1];
    if (b == e) continue;
    const bool big = threads > 1 && e - b >= kBig;
    if (!big && !segs.empty() && !segs.back().parallel) {
      if (descending) segs.back().begin = b;
      else segs.back().end = e;
    } else {
      segs.push_back({b, e, big});
    }
  }
  auto walk = [&](const Segment<I>& s) {
    if (descending)
      for (I i = s.end; i-- > s.begin;) fn(order[i]);
    else
      for (I i = s.begin; i < s.end; ++i) fn(order[i]);
  };
  if (threads <= 1) {
    for (const auto& s : segs) walk(s);
    return;
  }
#pragma omp parallel num_threads(threads)
  for (const auto& s : segs) {
    if (s.parallel) {
#pragma omp for schedule(static)
      for (I i = s.begin; i < s.end; ++i) fn(order[i]);
    } else {
#pragma omp single
      walk(s);
    }
  }
}

// Each node's area (the pixels of its subtree, at its canonical pixel; 0 elsewhere) and the nodes
// sorted by level (level v: order[start[v] .. start[v + 1])).
template <class I>
struct NodeAreas {
  UninitializedVector<std::int64_t> area;
  std::vector<I> start, order;
};

// The area attribute of a parent image in normal form (n pixels, `threads` OpenMP threads), into
// `r`, whose storage a caller may keep from one image to the next of the same size: fresh pages
// cost more than the pass (a page fault per 4 KiB: 0.2 s for the areas of 96M pixels).
template <class T, class I>
void node_areas(const T* f, const I* parent, I n, int threads, NodeAreas<I>& r) {
  constexpr std::size_t L = levels_of<T>();
  auto canonical = [&](I p) {
    const I q = parent[p];
    return q == p || f[q] != f[p];
  };
  // 1. Proper pixels per node, at its canonical pixel (runs of one node along a row added at once).
  UninitializedVector<std::int64_t>& area = r.area;
  area.resize(static_cast<std::size_t>(n));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (I p = 0; p < n; ++p) area[static_cast<std::size_t>(p)] = 0;
    I last = -1;
    std::int64_t count = 0;
#pragma omp for schedule(static)
    for (I p = 0; p < n; ++p) {
      const I c = canonical(p) ? p : parent[p];
      if (c != last) {
        if (last >= 0) __atomic_fetch_add(&area[last], count, __ATOMIC_RELAXED);
        last = c;
        count = 0;
      }
      ++count;
    }
    if (last >= 0) __atomic_fetch_add(&area[last], count, __ATOMIC_RELAXED);
  }
  // 2. The nodes sorted by level (a counting sort, per thread then merged).
  std::vector<I> hist(static_cast<std::size_t>(threads) * L, 0);
  std::vector<I>& start = r.start;
  std::vector<I>& order = r.order;
  start.assign(L + 1, 0);
#pragma omp parallel num_threads(threads)
  {
    I* h = hist.data() + static_cast<std::size_t>(omp_get_thread_num()) * L;
#pragma omp for schedule(static)
    for (I p = 0; p < n; ++p)
      if (canonical(p)) ++h[f[p]];
#pragma omp single
    {
      I running = 0;
      for (std::size_t v = 0; v < L; ++v) {
        start[v] = running;
        for (int t = 0; t < threads; ++t) {
          const I c = hist[t * L + v];
          hist[t * L + v] = running;
          running += c;
        }
      }
      start[L] = running;
      order.resize(static_cast<std::size_t>(running));
    }
#pragma omp for schedule(static)  // the same split as the count above
    for (I p = 0; p < n; ++p)
      if (canonical(p)) order[static_cast<std::size_t>(h[f[p]]++)] = p;
  }
  // 3. Leaf to root: each node's area into its parent's (children are of higher levels).
  std::int64_t* a = area.data();
  for_levels(start, order, /*descending=*/true, threads, [&](I c) {
    const I q = parent[c];
    if (q != c) __atomic_fetch_add(a + q, a[c], __ATOMIC_RELAXED);
  });
}

// The area opening's output `out` from node_areas' `nodes`. `preset(c, level)` may give node c's
// output level itself (returns true; the distributed runs' nodes that cross a cut, whose area and
// ancestors lie partly in other parts): every other node is kept or not by its area here.
template <class T, class I, class Preset>
void area_filter(const T* f, const I* parent, I n, const NodeAreas<I>& nodes, std::int64_t A, int threads, T* out,
                 Preset&& preset) {
  auto canonical = [&](I p) {
    const I q = parent[p];
    return q == p || f[q] != f[p];
  };
  const std::int64_t* a = nodes.area.data();
  // 4. Root to leaf: a node's output level is its own if kept (area >= A, or the root), else its
  //    parent's (of a lower level, so already set).
  for_levels(nodes.start, nodes.order, /*descending=*/false, threads, [&](I c) {
    if (preset(c, out[c])) return;
    const I q = parent[c];
    out[c] = (q == c || a[c] >= A) ? f[c] : out[q];
  });
  // 5. Every other pixel: its node's level.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (I p = 0; p < n; ++p)
    if (!canonical(p)) out[p] = out[parent[p]];
}

}  // namespace repix::maxtree::detail
