// gpu-packed's and gpu-opt's tile tree (Blin et al.'s in-tile layout, as their published code keeps it): one
// 32-bit word a pixel of the tile holding its parent's local index (low 16 bits: a tile has 1024
// pixels) and its parent's level (high 16 bits: 8- and 16-bit images alike), so a step of the zip
// reads a pixel's parent and the level that decides where to go next in one shared-memory load,
// where gpu_core::merge_step loads the parent and then, dependent on it, the parent's level. The
// pixels' own levels are beside the words (immutable: plain loads). A word always carries the
// level of the index it holds (every word written is pack(f[q], q)), so the zip below is
// gpu_core::merge_step step for step, on the same order, with the same single validated CAS; the
// CPU tests run it in random interleavings against seq like the other cores.
#pragma once
#include <cstdint>

#include "core/hd.hpp"
#include "maxtree/gpu_core.hpp"

namespace repix::maxtree::packed_core {

using Word = std::uint32_t;

REPIX_HD constexpr Word pack(std::uint32_t level, int index) { return level << 16 | static_cast<Word>(index); }
REPIX_HD constexpr int index_of(Word w) { return static_cast<int>(w & 0xFFFFu); }
REPIX_HD constexpr std::uint32_t level_of(Word w) { return w >> 16; }

// gpu_core::merge_step on the packed words (local indices a, b of one tile; s_f the tile's levels).
// `mem` provides load(const Word*) and cas(Word*, expected, desired) -> bool.
template <class T, class Mem>
REPIX_HD bool merge_step(const T* s_f, Word* w, int& a, int& b, const Mem& mem) {
  if (a == b) return true;
  if (gpu_core::before(s_f, a, b)) {  // keep a the later one
    const int t = a;
    a = b;
    b = t;
  }
  const Word wa = mem.load(w + a);
  const int pa = index_of(wa);
  if (pa == b) return true;
  const std::uint32_t fa = s_f[a], fpa = level_of(wa);
  if (pa != a && fpa == fa) {  // not a level root: down the same-level chain, halving it
    const Word wpa = mem.load(w + pa);
    if (index_of(wpa) != pa && level_of(wpa) == fa) mem.cas(w + a, wa, wpa);
    a = pa;
    return false;
  }
  const std::uint32_t fb = s_f[b];
  if (pa != a && (fb < fpa || (fb == fpa && b < pa))) {  // b before a's parent: climb a's chain
    a = pa;
    return false;
  }
  if (mem.cas(w + a, wa, pack(fb, b))) {
    if (pa == a) return true;
    a = b;
    b = pa;
  }
  return false;
}

template <class T, class Mem>
REPIX_HD void merge(const T* s_f, Word* w, int a, int b, const Mem& mem) {
  while (!merge_step(s_f, w, a, b, mem)) {
  }
}

// ---- gpu-monotone's and gpu-opt's zip: the seminar's monotone one (Blin et al.'s uf_zip, read in their code, not copied) ----
// The same words and order, a different walk: instead of one step a shared access with both
// levels read again from s_f (the atomics' "memory" clobber forces the reloads), the zip climbs in
// tight loops that read only the words, carrying the two levels from what the words hold, and
// hangs a level root with one atomicMax: a pixel's parent only ever moves nearer to it, i.e. up in
// the key (parent level, parent index) that pack() puts in the word's bits from high to low, so
// the largest key is the nearest parent and the maximum never loses a concurrent hang (what the
// validated CAS of merge_step retries). A root's word holds itself, a key above every parent's, so
// a root is hung with a CAS (its one word read by the climb: a root only stops being one). No
// halving: the hang only raises keys, the halving lowers them.
// Measured on the H100 beside merge in the same process:
// 13-16 % faster kernels at 1920x1080 (0.721 against 0.825 ms, 4-connectivity),
// where one wave of tiles runs and the longest zips set the time; 2-3 % slower at 6000x4000 with
// 4-connectivity (2.65 against 2.57 ms), where the issue rate binds and these loops' lanes diverge
// more (3.7 threads an instruction against 5.9; fewer thread instructions, 3.4 G against 4.7 G).

// From x (level fx >= v), up x's chain while the parent's level is >= v: the last pixel of the
// chain at a level >= v (x's node's level root when v is x's level). wx: its word; fx: its level.
template <class Mem>
REPIX_HD int climb_while_at_least(const Word* w, int x, std::uint32_t& fx, std::uint32_t v, Word& wx, const Mem& mem) {
  for (;;) {
    wx = mem.load(w + x);
    const int p = index_of(wx);
    if (p == x || level_of(wx) < v) return x;
    fx = level_of(wx);
    x = p;
  }
}

// The merge of the trees of a and b (local indices of one tile). `mem` provides load(const Word*),
// cas(Word*, expected, desired) -> bool and fetch_max(Word*, Word) -> Word (the old word).
template <class T, class Mem>
REPIX_HD void monotone_zip(const T* s_f, Word* w, int a, int b, const Mem& mem) {
  std::uint32_t fa = s_f[a], fb = s_f[b];
  Word wa, wb;
  for (;;) {
    if (fb < fa) {  // a the lower: a's node goes somewhere on b's chain
      const int t = a;
      a = b;
      b = t;
      const std::uint32_t ft = fa;
      fa = fb;
      fb = ft;
    }
    a = climb_while_at_least(w, a, fa, fa, wa, mem);  // a's level root
    b = climb_while_at_least(w, b, fb, fa, wb, mem);  // the last of b's chain at a level >= fa
    if (a == b) return;
    if (fb == fa && b < a) {  // one level: the larger index hangs on the smaller
      const int t = a;
      a = b;
      b = t;
      wb = wa;
    }
    // b's parent is below fa (or b a root): a goes between them.
    const Word hang = pack(fa, a);
    if (index_of(wb) == b) {
      if (mem.cas(w + b, wb, hang)) return;
      continue;  // b got a parent meanwhile: climb again
    }
    const Word old = mem.fetch_max(w + b, hang);
    if (old == hang) return;  // another zip hung b on a already
    // Hung (old < hang): b's old parent, below a, goes on with a's chain. Not hung (old > hang):
    // b's parent moved nearer than a meanwhile, and a goes on with that parent's chain.
    b = index_of(old);
    fb = level_of(old);
  }
}

// Column lx's 1-D tree (gpu_core::build_column_tree, which writes local indices into the words),
// then each of the column's words packed with its parent's level, in place: the thread owns its
// column until the next barrier.
template <class T>
REPIX_HD void build_packed_column(const T* s_f, Word* w, int lx, int h) {
  auto* idx = reinterpret_cast<std::int32_t*>(w);  // same size, signed twin of Word: may alias
  gpu_core::build_column_tree(s_f, idx, lx, h);
  for (int ly = 0; ly < h; ++ly) {
    const int l = ly * gpu_core::kTileW + lx;
    const int q = idx[l];
    w[l] = pack(s_f[q], q);
  }
}

// The level root of l's node: down the same-level chain, the levels read from the words.
REPIX_HD int level_root(const Word* w, int l, std::uint32_t level) {
  for (;;) {
    const Word wl = w[l];
    const int q = index_of(wl);
    if (q == l || level_of(wl) != level) return l;
    l = q;
  }
}

// gpu_core::compressed_parent on the packed words of a finished tile (nothing writes them any more).
template <class T>
REPIX_HD int compressed_parent(const T* s_f, const Word* w, int l) {
  const std::uint32_t v = s_f[l];
  const int r = level_root(w, l, v);
  if (r != l) return r;
  const Word wl = w[l];
  const int q = index_of(wl);
  return q == l ? l : level_root(w, q, level_of(wl));
}

// The three phases of the packed tile build for the thread of tile column lx, between the
// kernel's two barriers (packed_engine.cuh), so the tests run the kernel's own code on the CPU: tile
// origin (x0, y0) of an image of width nx, w x h pixels of the tile in the image, lx < w.
// Phase 1: the column's levels from the image (a row of the tile: 64 consecutive pixels over the
// block's threads), its 1-D tree, packed.
// (The image is walked by a pointer stepping a row at a time: no 64-bit multiply per pixel.)
template <class T>
REPIX_HD void load_column(const T* f, std::int64_t nx, std::int64_t x0, std::int64_t y0, int h, int lx, T* s_f, Word* s_w) {
  const T* src = f + y0 * nx + x0 + lx;
  for (int ly = 0; ly < h; ++ly, src += nx) s_f[ly * gpu_core::kTileW + lx] = *src;
  build_packed_column(s_f, s_w, lx, h);
}

// The zips of tile column lx at row ly (local indices), with the column trees holding every
// vertical edge of the tile; none for column 0 (each thread zips its column with the one on its left):
//  - 4-connectivity: the edge to the left neighbour unless gpu_core::grid_prunes finds it implied;
//  - 8-connectivity, row 0: the edge to the left neighbour;
//  - 8-connectivity, below row 0, one zip for the 2x2 block of columns lx - 1, lx and rows ly - 1,
//    ly (as Blin et al.'s published border-merge kernels do): between the higher pixel of
//    each column pair (m of {l, l - kTileW}, M of {l - 1, l - 1 - kTileW}), left out when both are
//    in row ly - 1. Why it is enough: in 8-connectivity the block is a clique; at any level v, the
//    pixels >= v of one column pair are joined through their vertical edge (both >= v) or are one
//    pixel, the higher one; so the pairs' pixels >= v need a link across exactly when
//    min(f(m), f(M)) >= v, and the edge (m, M) gives exactly that link (its pixels joined to the
//    rest of their pair >= v through the vertical edges). The block's three new edges (left,
//    up-left, up-right of the pixel to the left) are thus implied by (m, M); when m and M are both
//    in row ly - 1, (m, M) is that row's left edge, implied by the zips of row ly - 1 (by induction
//    from row 0). So each row of the tile costs at most one zip a column, where the three edges did.
template <class T, class Fn>
REPIX_HD void for_each_tile_zip(const T* s_f, int lx, int ly, int connectivity, Fn&& fn) {
  constexpr int kW = gpu_core::kTileW;
  if (lx == 0) return;
  const int l = ly * kW + lx;
  if (connectivity == 4) {
    if (!gpu_core::grid_prunes(s_f, l, l - 1)) fn(l, l - 1);
    return;
  }
  if (ly == 0) {
    fn(l, l - 1);
    return;
  }
  const int m = s_f[l] > s_f[l - kW] ? l : l - kW;
  const int M = s_f[l - 1] > s_f[l - 1 - kW] ? l - 1 : l - 1 - kW;
  if (m == l || M == l - 1) fn(m, M);
}

// Phase 2: the column's zips with the column on its left, row by row (for_each_tile_zip), with
// merge (gpu-packed) or, kMonotone, monotone_zip (gpu-monotone, gpu-settle-copy).
template <bool kMonotone = false, class T, class Mem>
REPIX_HD void zip_column(const T* s_f, Word* s_w, int h, int connectivity, int lx, const Mem& mem) {
  for (int ly = 0; ly < h; ++ly)
    for_each_tile_zip(s_f, lx, ly, connectivity, [&](int a, int b) {
      if constexpr (kMonotone) monotone_zip(s_f, s_w, a, b, mem);
      else merge(s_f, s_w, a, b, mem);
    });
}

// gpu-planned-zips' and gpu-opt's phase 2 in two loops: first the column's zips as bit masks over
// its rows (which rows zip, and in which of them each end is the pixel above: for_each_tile_zip's
// choice), a loop without inner loops, so the warp's threads run it together; then the monotone
// zips of the rows set.
// Why: the zips' climbs split the warp's threads, which then do not come together again before the
// barrier, so every row's pruning test ran once per thread group. Nsight Compute's source counters
// of gpu-monotone's build on the H200 (6000x4000 8-bit, 4-connectivity): the row loop run 11.7 M
// times by 2 threads on average (0.75 M times by 32 if the warp stayed together), its test ~30 %
// of the kernel's 1.09 G warp instructions, each zip entered by one thread. Planned: 0.80 G, the
// kernel 2.557 -> 2.242 ms. A __syncwarp after each row instead: 1.04 G, but 2.55 -> 3.23 ms (the
// warp waits for the longest zip of every row, where its threads otherwise overlap them).
static_assert(gpu_core::kTileH <= 32, "ColumnZips holds a bit a tile row");
struct ColumnZips {
  std::uint32_t rows = 0;  // bit ly: row ly has a zip
  std::uint32_t a_up = 0;  // bit ly: its end in this column is the pixel above (8-connectivity)
  std::uint32_t b_up = 0;  // bit ly: its end in the column to the left is the pixel above
};
template <class T>
REPIX_HD ColumnZips plan_column_zips(const T* s_f, int h, int connectivity, int lx) {
  ColumnZips z;
  for (int ly = 0; ly < h; ++ly)
    for_each_tile_zip(s_f, lx, ly, connectivity, [&](int a, int b) {
      const int l = ly * gpu_core::kTileW + lx;
      z.rows |= 1u << ly;
      if (a != l) z.a_up |= 1u << ly;
      if (b != l - 1) z.b_up |= 1u << ly;
    });
  return z;
}
template <class T, class Mem>
REPIX_HD void zip_planned(const T* s_f, Word* s_w, int lx, ColumnZips z, const Mem& mem) {
  constexpr int kW = gpu_core::kTileW;
  for (std::uint32_t rows = z.rows; rows != 0; rows &= rows - 1) {
    const int ly = ffs32(rows) - 1;
    const int l = ly * kW + lx;
    const int a = (z.a_up >> ly & 1u) ? l - kW : l;
    const int b = (z.b_up >> ly & 1u) ? l - 1 - kW : l - 1;
    monotone_zip(s_f, s_w, a, b, mem);
  }
}

// Phase 3: the column's compressed parents, in global indices, into the image's parent array.
// (A local index lp maps to origin + (lp / kTileW) * nx + lp % kTileW.)
template <class T, class I>
REPIX_HD void write_column(const T* s_f, const Word* s_w, std::int64_t nx, std::int64_t x0, std::int64_t y0, int h, int lx,
                           I* par) {
  const I origin = static_cast<I>(y0 * nx + x0);
  I* dst = par + y0 * nx + x0 + lx;
  for (int ly = 0; ly < h; ++ly, dst += nx) {
    const int lp = compressed_parent(s_f, s_w, ly * gpu_core::kTileW + lx);
    *dst = origin + static_cast<I>(lp / gpu_core::kTileW) * static_cast<I>(nx) + static_cast<I>(lp % gpu_core::kTileW);
  }
}

}  // namespace repix::maxtree::packed_core
