// gpu-border's per-thread logic (gpu_border.cu), as __host__ __device__ cores that
// tests/maxtree/ runs on the CPU. Blin et al.'s border max-trees (LRDE seminar 2021, after Kazemier
// et al.): the horizontal tile-border merges do not climb the global parent image; each strip of
// tiles (one tile row, 16 pixels high) first copies the part of its tiles' trees that those merges
// can touch into a compact tree in shared memory, zips there, and commits the changed parents back.
//
// Which part: every merge across a tile column border zips the chains of two border pixels (the
// columns on either side of the border), and a zip only ever touches the ancestors of the two
// pixels it starts from (gpu_core.hpp); so the closure of the border pixels' nodes under "parent"
// within the strip's tiles (each node once, by its level root) holds every node the strip's merges
// read or change. Before any merge the tiles' trees are separate, so each closure chain ends at its
// tile's root.
//
// The compact tree orders its nodes by a unique 64-bit key (level, then the level root's global
// index): the order `before` of gpu_core.hpp restricted to these nodes, so the zip leaves a tree that
// is valid in that order (every link to an earlier key), and committed back (compact parent -> its
// global level root) a valid global tree: a link between two nodes of one level after a zip joins
// them as one node, to the smaller index, as gpu_core.hpp asks.
//
// Steps in one block per strip: (1) claim the closure (a global look-up table `lut`, pixel -> compact
// slot, -1 where unclaimed; the thread that claims a node writes its slot and walks on, one that
// finds it claimed stops: each chain walked once); (2) each slot's compact parent, and each border
// pixel's slot; (3) the strip's border edges zipped on the compact tree; (4) commit. Edges whose ends lie in two strips (the
// 8-connected diagonals at a strip's first and last row) and strips whose closure does not fit the
// shared memory are merged afterwards in global memory as gpu-grid merges them.
#pragma once
#include <cstdint>

#include "core/hd.hpp"
#include "maxtree/gpu_core.hpp"

namespace repix::maxtree::border_core {

using gpu_core::kTileH;
using gpu_core::kTileW;
using gpu_core::level_root;

// A node's key: its level in the high bits, its level root's global index in the low 40.
template <class T>
REPIX_HD std::uint64_t key(T level, std::int64_t root) {
  return (static_cast<std::uint64_t>(level) << 40) | static_cast<std::uint64_t>(root);
}

// The strip's border pixels: for each tile column border x = k * kTileW (1 <= k < tiles_x), the
// columns x - 1 and x over the strip's h rows; i in [0, border_pixels(tiles_x, h)).
REPIX_HD std::int64_t border_pixels(std::int64_t tiles_x, int h) { return 2 * (tiles_x - 1) * h; }
REPIX_HD void border_pixel(std::int64_t i, int h, std::int64_t y0, std::int64_t& x, std::int64_t& y) {
  const std::int64_t column = i / h;  // 0, 1: border 1's two columns; 2, 3: border 2's; ...
  x = (column / 2 + 1) * kTileW - 1 + column % 2;
  y = y0 + i % h;
}

// The compact tree of one strip: keys, compact parents, each slot's global level root; `count` the
// slots taken (it may pass `capacity`: then the strip is `full` and goes to the global merges).
template <class I>
struct Compact {
  std::uint64_t* key;
  std::int32_t* parent;
  I* node;
  std::int32_t* count;
  std::int32_t capacity;
  std::int32_t* full;
};

// Step 1 from border pixel p: claim p's node and its ancestors up to the first node another thread
// claimed (or the tile's root). `mem.cas_lut(lut + v, expected, desired) -> old` on the global
// table, `mem.take(count) -> old` (an atomic increment), `mem.set_full(full)`. A claimed node's
// slot is written to lut before the barrier that ends the step (-2 marks it claimed meanwhile).
template <class T, class I, class Mem>
REPIX_HD void claim_closure(const T* f, const I* par, I* lut, I p, const Compact<I>& c, const Mem& mem) {
  I v = level_root(f, par, p);
  for (;;) {
    if (mem.cas_lut(lut + v, I(-1), I(-2)) != I(-1)) return;  // someone else walks on from here
    const std::int32_t s = mem.take(c.count);
    if (s >= c.capacity) {
      mem.set_full(c.full);
      return;
    }
    c.key[s] = key(f[v], static_cast<std::int64_t>(v));
    c.node[s] = v;
    lut[v] = static_cast<I>(s);
    const I q = par[v];
    if (q == v) return;  // the tile's root
    v = level_root(f, par, q);
  }
}

// Step 2 for slot s (after every claim): its parent's slot (itself at a tile's root).
template <class T, class I>
REPIX_HD std::int32_t compact_parent(const T* f, const I* par, const I* lut, const Compact<I>& c, std::int32_t s) {
  const I v = c.node[s];
  const I q = par[v];
  return q == v ? s : static_cast<std::int32_t>(lut[level_root(f, par, q)]);
}

// Step 2 also, for border pixel p: its slot in lut[p] where step 3 reads it (a level root has its
// own; another pixel takes its level root's), so the zips do not walk same-level chains again. It
// writes the entries of pixels that are no level roots, which step 2 never reads.
template <class T, class I>
REPIX_HD void share_slot(const T* f, const I* par, I* lut, I p) {
  const I r = level_root(f, par, p);
  if (r != p) lut[p] = lut[r];
}

// The horizontal merge edges (gpu_core::for_each_horizontal_merge_edge) of border pixel (x, y),
// x % kTileW == 0, split by where the other end is: inside the strip [y0, y0 + h) (zipped on the
// compact tree) or in another strip (merged in global memory afterwards).
template <class Fn>
REPIX_HD void for_each_strip_edge(std::int64_t x, std::int64_t y, std::int64_t y0, int h, std::int64_t ny,
                                  int connectivity, bool inside, Fn&& fn) {
  gpu_core::for_each_horizontal_merge_edge(x, y, ny, connectivity, [&](std::int64_t nx, std::int64_t yy) {
    if ((yy >= y0 && yy < y0 + h) == inside) fn(nx, yy);
  });
}

// Step 4 for slot s: the committed parent of its node (the global level root of its compact parent).
template <class I>
REPIX_HD I committed_parent(const Compact<I>& c, std::int32_t s) {
  return c.node[c.parent[s]];
}

}  // namespace repix::maxtree::border_core
