// The per-thread logic of the GPU area opening (gpu_engine.cuh's area_filter), as __host__ __device__ cores that
// tests/maxtree/ runs on the CPU (in order, shuffled, and from several threads at once) against
// maxtree::area_opening. Input: the image f and its parent image `par` in the normal form of
// maxtree.hpp (a node's pixels point to its canonical pixel, a canonical pixel to its parent node's,
// the root's to itself).
//
// The steps, each a pass over the pixels (one thread a pixel):
//  1. own_area: area[c] = the node's own pixels (one add per pixel to its node), and pending[c] =
//     its number of child nodes (one add per non-root node to its parent).
//  2. mark_leaf: pending[c] = leaf_mark() for a node with no child node (before any thread of step 3
//     decrements a count: so a count that falls to 0 is never taken for a leaf's).
//  3. accumulate_from_leaf: from each leaf, add the subtree's area to the parent node, and
//     decrement the parent's pending count; the thread that brings it to 0 has seen every child's
//     area added and carries on with the parent (a node is climbed once, by its last child's
//     thread: O(nodes) work however the tree is shaped, and no level by level launches).
//  4. filter_link, then pointer jumping (gpu_core::jump) until nothing changes: every pixel ends on
//     the deepest node of its path to the root whose area is >= A (the root is always kept);
//     the output is that node's level.
#pragma once
#include <cstdint>

#include "core/hd.hpp"
#include "maxtree/gpu_core.hpp"

namespace repix::maxtree::area_core {

// The canonical pixel of p's node in the normal form: p's parent if it has p's level (p is not
// canonical), else p; the flatten's same-level parent is exactly that.
using gpu_core::same_level_parent;

// Step 1 for pixel p: `mem.add(ptr, value)` atomically adds and returns the old value.
template <class T, class I, class Mem>
REPIX_HD void own_area(const T* f, const I* par, I* area, I* pending, I p, const Mem& mem) {
  const I c = same_level_parent(f, par, p);
  mem.add(area + c, I(1));
  if (c == p && par[p] != p) mem.add(pending + par[p], I(1));
}

// Step 2's mark: a node's count after step 1 of 0 (no child node) becomes leaf_mark(). Counts of
// the other nodes only fall to 0 in step 3, never to the mark.
template <class I>
REPIX_HD I leaf_mark() {
  return I(-1);
}

// Step 2 for pixel p (reads and writes p's own count only).
template <class T, class I>
REPIX_HD void mark_leaf(const T* f, const I* par, I* pending, I p) {
  if (same_level_parent(f, par, p) == p && pending[p] == I(0)) pending[p] = leaf_mark<I>();
}

// Step 3's start: p is a leaf node. Its count is read through `mem` because step 3's other threads
// decrement the counts of other nodes meanwhile.
template <class T, class I, class Mem>
REPIX_HD bool is_leaf(const T* f, const I* par, const I* pending, I p, const Mem& mem) {
  return same_level_parent(f, par, p) == p && mem.load(pending + p) == leaf_mark<I>();
}

// Step 3 from leaf node c. `mem.load(ptr)` reads what other threads' adds wrote; `mem.add` orders
// the area added before the count decremented (a release) and the decrement before the parent's
// area is read by the thread that continues (an acquire): on the GPU a fence on each side.
template <class I, class Mem>
REPIX_HD void accumulate_from_leaf(const I* par, I* area, I* pending, I c, const Mem& mem) {
  for (;;) {
    const I q = par[c];
    if (q == c) return;  // the root: its area is complete (the last child's thread got here)
    mem.add(area + q, mem.load(area + c));
    if (mem.add(pending + q, I(-1)) != I(1)) return;  // other children of q still to come
    c = q;
  }
}

// Step 4's first links: a node's other pixels go to the node; a node kept (area >= A) stays; a
// removed node goes to its parent node. The root links to itself either way (always kept).
template <class T, class I>
REPIX_HD I filter_link(const T* f, const I* par, const I* area, I p, std::int64_t min_area) {
  const I c = same_level_parent(f, par, p);
  if (c != p) return c;
  return static_cast<std::int64_t>(area[c]) >= min_area ? c : par[c];
}

}  // namespace repix::maxtree::area_core
