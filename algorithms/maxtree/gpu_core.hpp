// The per-thread logic of the GPU max-tree variants (gpu-naive, gpu-tile), as __host__ __device__
// cores so that tests/maxtree/ runs exactly this code on the CPU (sequentially, in random
// interleavings of its steps, and from several threads at once).
//
// The tree being built: a parent array `par` over the pixels in which every pixel's parent comes
// strictly before it in the total order `before` (level, then linear index), or is itself (a root).
// A pixel whose parent has its level is in its parent's node ("same-level link", always to a
// smaller index); the others are their node's level root and point to a pixel of a lower node. So
// a node's level root is its smallest index (the canonical pixel of maxtree.hpp) and the flatten
// cores below turn any such array into the normal form. The array itself depends on the order of
// the merges; its normal form does not (the tests check every schedule against seq).
//
// The merge (Blin et al.'s "zip"; Wilkinson's merge of two ancestor chains): to join the trees of
// two neighbours a and b, walk both chains of nodes upwards in key order and splice the one into
// the other with compare-and-swap. Within a node the walk just goes to the level root (with path
// halving: plateaus stay cheap, as in union-find); only level roots are spliced. A parent pointer
// only ever moves strictly down in key order (to a pixel between the pixel and its old parent, or
// a same-level ancestor further down): never back, so no ABA, a CAS that succeeds saw the current
// parent, and one that fails only means another thread moved it: retry.
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace repix::maxtree::gpu_core {

// The total order of the tree: x before y when f(x) < f(y), or the levels are equal and x < y.
template <class T, class I>
REPIX_HD bool before(const T* f, I x, I y) {
  return f[x] < f[y] || (f[x] == f[y] && x < y);
}

// One step of the merge of the trees of a and b: one load of a's parent and at most one CAS of that
// same parent, validated by what the load saw (the halving CAS reads one more parent, but any
// value it reads is a same-level ancestor, stale or not), so stepping merges in any interleaving
// on one thread explores every outcome real concurrency can give. Returns true when the two
// chains are one. `mem` provides load(const I*) and cas(I*, expected, desired) -> bool.
// Each step reads f[a] and f[b] again (the atomics order memory, so the compiler cannot keep them):
// carrying the two levels from step to step instead (tried, reverted) made gpu-packed's merges
// slower on the H100, 1.45 -> 1.9 ms at 6000x4000 with 22 % more instructions executed (ncu), and
// its tile build 1.25 -> 1.34 ms: the reloads hit L1 or shared memory; the extra state cost more.
template <class T, class I, class Mem>
REPIX_HD bool merge_step(const T* f, I* par, I& a, I& b, const Mem& mem) {
  if (a == b) return true;
  if (before(f, a, b)) {  // keep a the later one: b goes somewhere below a on a's chain
    const I t = a;
    a = b;
    b = t;
  }
  const I pa = mem.load(par + a);
  if (pa == b) return true;  // b already a's parent: the chains meet here
  if (pa != a && f[pa] == f[a]) {
    // a is not its node's level root: go down to it, halving the same-level path on the way (a
    // same-level grandparent is a smaller pixel of the same node; a failed CAS changes nothing).
    const I gpa = mem.load(par + pa);
    if (gpa != pa && f[gpa] == f[a]) mem.cas(par + a, pa, gpa);
    a = pa;
    return false;
  }
  if (pa != a && before(f, b, pa)) {  // a level root whose parent is still after b: climb a's chain
    a = pa;
    return false;
  }
  // a is a level root, and a root or b falls between a and its parent: hang a on b (b's node if b
  // has a's level, else b's node becomes a's parent node), then merge what was below a (pa) with
  // b's chain. A failed CAS means a's parent moved meanwhile: redo this step.
  if (mem.cas(par + a, pa, b)) {
    if (pa == a) return true;
    a = b;
    b = pa;
  }
  return false;
}

template <class T, class I, class Mem>
REPIX_HD void merge(const T* f, I* par, I a, I b, const Mem& mem) {
  while (!merge_step(f, par, a, b, mem)) {
  }
}

// gpu-opt's border zip: the merge of the trees of a and b as packed_core::monotone_zip
// walks it, on the global parent image: tight climbs that load only parents (the levels from f,
// which nothing writes), and b hung on a with one CAS of b's parent, validated by the value the
// climb saw (Blin et al.'s uf_zip_global does the same, read in their code, not copied). After the
// climbs a is its node's level root and b the last pixel of b's chain at a level >= f(a), both with
// parents below f(a) (or roots), a before b in the order; b's parent := a keeps every parent before
// its child and joins the two nodes, and b's old parent, below f(a), goes on to be zipped with a's
// chain. A CAS that fails (b got a nearer parent meanwhile) climbs again from where it stands.
// kPairedLoads (gpu-paired-loads, gpu-opt): each climb step loads the next pixel's level and that
// pixel's parent together, before the level's test decides whether the climb goes on; without it
// the parent's load waited for that test, two L2 round trips a step. The parent loaded is the one the
// next step would load; f is never written, so a parent loaded a moment early is one a relaxed load
// could have returned at the later moment too, and the climb is the same walk.
template <bool kPairedLoads = false, class T, class I, class Mem>
REPIX_HD void climbing_merge(const T* f, I* par, I a, I b, const Mem& mem) {
  T fa = f[a], fb = f[b];
  for (;;) {
    if (fb < fa) {  // a the lower: a's node goes somewhere on b's chain
      hd_swap(a, b);
      hd_swap(fa, fb);
    }
    I pa = mem.load(par + a);  // a's level root, pa its parent (below fa, or a itself at the root)
    I pb = 0;                  // the last of b's chain at a level >= fa, pb its parent
    if constexpr (kPairedLoads) {
      // Both loads before the test of either (at a root they read the root's own level and parent,
      // and go unused): a test first lets the compiler hold the level's load back behind it.
      for (;;) {
        const T level = f[pa];
        const I next = mem.load(par + pa);
        if (pa == a || level != fa) break;
        a = pa;
        pa = next;
      }
      pb = mem.load(par + b);
      for (;;) {
        const T level = f[pb];
        const I next = mem.load(par + pb);
        if (pb == b || level < fa) break;
        b = pb;
        fb = level;
        pb = next;
      }
    } else {
      while (pa != a && f[pa] == fa) {
        a = pa;
        pa = mem.load(par + a);
      }
      pb = mem.load(par + b);
      while (pb != b && f[pb] >= fa) {
        b = pb;
        fb = f[pb];
        pb = mem.load(par + b);
      }
    }
    if (a == b) return;
    if (fb == fa && b < a) {  // one level: the larger index hangs on the smaller
      hd_swap(a, b);
      hd_swap(pa, pb);
    }
    if (!mem.cas(par + b, pb, a)) continue;  // b's parent moved nearer: climb again
    if (pb == b) return;  // b was a root: nothing below it to zip
    b = pb;
    fb = f[pb];
  }
}

// fn(nx, ny) for each neighbour of (x, y) that comes earlier in raster order inside a w-wide
// region (left, up, and with 8-connectivity up-left and up-right): every edge of the grid once.
template <class Fn>
REPIX_HD void for_each_earlier_neighbour(std::int64_t x, std::int64_t y, std::int64_t w, int connectivity, Fn&& fn) {
  if (x > 0) fn(x - 1, y);
  if (y > 0) {
    fn(x, y - 1);
    if (connectivity == 8) {
      if (x > 0) fn(x - 1, y - 1);
      if (x + 1 < w) fn(x + 1, y - 1);
    }
  }
}

// ---- gpu-tile's partition of the edges --------------------------------------------------------------
// Tiles of kTileW x kTileH pixels (Blin et al.'s 64 x 16; the last ones of a row or column cut by
// the image). Every edge of the grid is merged exactly once: inside its tile (both ends in one
// tile: for_each_earlier_neighbour in the tile's own coordinates), else by the horizontal merge
// (the ends in different tile columns), else by the vertical merge (same tile column, different
// tile rows).
constexpr int kTileW = 64, kTileH = 16;

// From pixel (x, y) with x % kTileW == 0 and x > 0: the edges to column x - 1 (3 with 8-connectivity).
template <class Fn>
REPIX_HD void for_each_horizontal_merge_edge(std::int64_t x, std::int64_t y, std::int64_t h, int connectivity, Fn&& fn) {
  fn(x - 1, y);
  if (connectivity == 8) {
    if (y > 0) fn(x - 1, y - 1);
    if (y + 1 < h) fn(x - 1, y + 1);
  }
}

// From pixel (x, y) with y % kTileH == 0 and y > 0: the edges to row y - 1 that stay in x's tile
// column (a diagonal into the next tile column was the horizontal merge's).
template <class Fn>
REPIX_HD void for_each_vertical_merge_edge(std::int64_t x, std::int64_t y, std::int64_t w, int connectivity, Fn&& fn) {
  fn(x, y - 1);
  if (connectivity == 8) {
    if (x % kTileW != 0) fn(x - 1, y - 1);
    if (x + 1 < w && (x + 1) % kTileW != 0) fn(x + 1, y - 1);
  }
}

// A tile's local index (row stride kTileW, so local order is the global raster order within the
// tile: the key order is the same in both) to the global index of the image, tile origin (x0, y0).
template <class I>
REPIX_HD I tile_to_global(int local, std::int64_t x0, std::int64_t y0, std::int64_t width) {
  return static_cast<I>((y0 + local / kTileW) * width + x0 + local % kTileW);
}

// gpu-grid's grid-connection pruning, for an in-tile edge (l, ln) in local indices (row stride
// kTileW): true when it joins l to its left neighbour, below the tile's first row, and the pair
// above is at least as high as the lower of the two: l - (l - kTileW) - (ln - kTileW) - ln is then
// a path with every level >= min(f(l), f(ln)), made of two vertical edges (never pruned) and the
// edge above (merged, or itself pruned and by induction on the rows implied at a level >= the
// lower of its ends, >= min(f(l), f(ln))). So no component of any upper level set changes.
template <class T>
REPIX_HD bool grid_prunes(const T* f, int l, int ln) {
  if (ln != l - 1 || l < kTileW) return false;
  const T below = f[l] < f[ln] ? f[l] : f[ln];
  return f[l - kTileW] >= below && f[ln - kTileW] >= below;
}

// gpu-packed's pruning of the tile-border merges (Blin et al.'s grid-connection optimisation on the
// borders too), in global coordinates on an image of width w; with gpu_core::grid_prunes inside the
// tiles it never prunes a straight vertical edge of a tile's inside, and:
//  - a horizontal border edge (x - 1, y) - (x, y) (x on a tile column border) as grid_prunes would
//    inside a tile: when y is not a tile's first row and the pair above is at least as high as the
//    lower of the two. Its path goes through the two vertical edges above it, inside a tile (y is
//    not a tile's first row): never pruned; and the edge above, pruned only by this same rule (the
//    induction runs up the border to the tile's first row, never pruned).
//  - the straight vertical border edge (x, y - 1) - (x, y) (y on a tile row border) when x > 0 and the
//    pair to its left is at least as high as the lower of the two: the path goes left along the
//    horizontal edges of rows y - 1 and y and down the vertical border edge one column left. Row y
//    is a tile's first row, whose horizontal edges are never pruned (in the tile or on a border);
//    row y - 1's may be, but only by paths through vertical edges inside its tile and the rows above,
//    never through a vertical border edge; the vertical border edge to the left is pruned only by
//    this same rule (the induction runs left along the row border to x = 0, never pruned).
// So no justification leans on itself, every path it leans on stays at a level >= the lower end
// of the pruned edge, and no component of any upper level set changes (the tests check the result
// against seq on every image they build).
template <class T>
REPIX_HD bool horizontal_border_prunes(const T* f, std::int64_t w, std::int64_t x, std::int64_t y) {
  if (y % kTileH == 0) return false;
  const std::int64_t p = y * w + x;
  const T below = f[p] < f[p - 1] ? f[p] : f[p - 1];
  return f[p - w] >= below && f[p - w - 1] >= below;
}
template <class T>
REPIX_HD bool vertical_border_prunes(const T* f, std::int64_t w, std::int64_t x, std::int64_t y) {
  if (x == 0) return false;
  const std::int64_t p = y * w + x;
  const T below = f[p] < f[p - w] ? f[p] : f[p - w];
  return f[p - 1] >= below && f[p - w - 1] >= below;
}

// The zips gpu-packed and gpu-opt make for border pixel (x, y), fn(p, q) in global indices, on an
// image of width w. Across a tile column border (x = k * kTileW, k >= 1):
//  - 4-connectivity: the straight edge unless horizontal_border_prunes finds it implied;
//  - 8-connectivity, y a tile's first row: the straight edge (x - 1, y) - (x, y) only;
//  - 8-connectivity, below: one zip for the 2x2 block of rows y - 1, y and columns x - 1, x, between
//    the higher pixel of each column pair, left out when both are in row y - 1 (packed_core::
//    for_each_tile_zip has why a block's clique is implied by that zip; here its column pairs'
//    vertical edges are inside a tile, in the column trees). It covers the straight edge and the
//    diagonals (x - 1, y - 1) - (x, y) and (x - 1, y) - (x, y - 1).
// Across a tile row border (y = k * kTileH, k >= 1):
//  - 4-connectivity: the straight edge unless vertical_border_prunes finds it implied;
//  - 8-connectivity, x = 0: the straight edge (0, y - 1) - (0, y) only;
//  - 8-connectivity, x > 0: the same block rule with the roles turned: the block of rows y - 1, y and
//    columns x - 1, x, its row pairs joined by their horizontal edges, one zip between the higher
//    pixel of each row pair, left out when both are in column x - 1 (the block at x - 1 has it).
//    It covers the straight edge and both diagonals of the block, whether x is on a column border
//    or not, so the 8-connected diagonals across both borders at once are this rule's.
// What the blocks lean on: the horizontal-border blocks on vertical edges inside a tile (column
// trees: zipped, never pruned); the row-border blocks on horizontal edges of rows y - 1 and y,
// which are zipped or implied inside a tile (for_each_tile_zip) or on a column border (this
// function's first rules), never through a row-border edge. So no argument leans on itself.
template <class T, class Fn>
REPIX_HD void for_each_column_border_zip(const T* f, std::int64_t w, int connectivity, std::int64_t x, std::int64_t y, Fn&& fn) {
  const std::int64_t p = y * w + x;
  if (connectivity == 4) {
    if (!horizontal_border_prunes(f, w, x, y)) fn(p, p - 1);
    return;
  }
  if (y % kTileH == 0) {
    fn(p, p - 1);
    return;
  }
  const std::int64_t m = f[p] > f[p - w] ? p : p - w;  // the higher of column x's pair
  const std::int64_t M = f[p - 1] > f[p - 1 - w] ? p - 1 : p - 1 - w;  // and of column x - 1's
  if (m == p || M == p - 1) fn(m, M);
}
template <class T, class Fn>
REPIX_HD void for_each_row_border_zip(const T* f, std::int64_t w, int connectivity, std::int64_t x, std::int64_t y, Fn&& fn) {
  const std::int64_t p = y * w + x;
  if (connectivity == 4) {
    if (!vertical_border_prunes(f, w, x, y)) fn(p, p - w);
    return;
  }
  if (x == 0) {
    fn(p, p - w);
    return;
  }
  const std::int64_t m = f[p] > f[p - 1] ? p : p - 1;  // the higher of row y's pair
  const std::int64_t M = f[p - w] > f[p - w - 1] ? p - w : p - w - 1;  // and of row y - 1's
  if (m == p || M == p - w) fn(m, M);
}

// ---- gpu-tile-1d's column trees (Blin et al.'s step 2, after Menotti et al.'s 1-D component tree) -----
// The max-tree of tile column lx (rows 0..h-1, local indices l = ly * kTileW + lx) built by one
// thread in one pass down the column, with no stack of its own: the chain of level roots from the
// last pixel's node down to the column's root (parent links, strictly falling levels) is the stack.
// Each new pixel p of level v pops the nodes above v; the last one popped hangs on p when p's
// level lies strictly between it and what remains below (it already points there otherwise), then
// p joins the node of level v on top, or becomes a level root on it. Every link goes to a lower
// level, or to a smaller index of the same level: gpu_core's order, so the merges of the other
// edges take it as they take any partly merged tree. Plain loads and stores: the thread owns its
// column until the next barrier. The column's vertical edges are then merged (column_edge).
template <class T, class I>
REPIX_HD void build_column_tree(const T* s_f, I* s_par, int lx, int h) {
  I top = -1;  // the level root at the top of the stack (-1: empty)
  for (int ly = 0; ly < h; ++ly) {
    const I p = static_cast<I>(ly * kTileW + lx);
    const T v = s_f[p];
    I popped = -1;
    while (top >= 0 && s_f[top] > v) {
      popped = top;
      top = s_par[top] == top ? I(-1) : s_par[top];
    }
    if (top >= 0 && s_f[top] == v) {
      s_par[p] = top;  // p joins that node; a popped node already points to it
    } else {
      s_par[p] = top >= 0 ? top : p;  // a new level root (the column's root if nothing is below)
      if (popped >= 0) s_par[popped] = p;
      top = p;
    }
  }
}

// True for the in-tile edge (l, ln) (local indices) that a column tree has already merged: the
// vertical edge to the pixel above.
REPIX_HD bool column_edge(int l, int ln) { return ln == l - kTileW; }

// ---- gpu-compressed's in-tile compression -------------------------------------------------------------
// The end of p's same-level chain (its node's level root: the canonical pixel of the node as far as
// `par` knows it), following at most max_hops links; `done` says whether it got there (else the
// pixel returned is a same-level ancestor of p part way). Reads `par` only.
template <class T, class I>
REPIX_HD I same_level_end(const T* f, const I* par, I p, int max_hops, bool& done) {
  const T v = f[p];
  for (int hop = 0;; ++hop) {
    const I q = par[p];
    if (q == p || f[q] != v) {
      done = true;
      return p;
    }
    if (hop == max_hops) {
      done = false;
      return p;
    }
    p = q;
  }
}

// The level root of p's node: the end of its same-level chain, however long.
template <class T, class I>
REPIX_HD I level_root(const T* f, const I* par, I p) {
  bool done = false;
  return same_level_end(f, par, p, 1 << 30, done);
}

// p's entry in the normal form read from a finished `par` (a pixel that is not its node's level root
// -> the level root, the canonical pixel; a level root -> its parent's node's level root; the root
// -> itself), each same-level chain walked at most max_hops links; `done` false when one was longer.
// Reads `par` only.
template <class T, class I>
REPIX_HD I walked_normal_form(const T* f, const I* par, I p, int max_hops, bool& done) {
  const I r = same_level_end(f, par, p, max_hops, done);
  if (!done || r != p) return r;
  const I q = par[p];
  return q == p ? p : same_level_end(f, par, q, max_hops, done);
}

// p's entry in the normal form from a finished `par` that nothing writes meanwhile, as
// gpu_core::settle finds it (the level root of par[p]'s node; the root itself), but read-only: the
// flatten of gpu-settle-copy and the steps after it, into a second buffer (settle_copy_kernel),
// whose loads of `par` may then be plain cached ones.
// kPairedLoads (gpu-paired-loads, gpu-opt): each step of the walk loads the next pixel's level and
// its parent together (nothing writes either), one memory round trip a step instead of two; the
// parents through `loads` (load(const I*)), which on the GPU pins each load where the code puts it
// (a plain load there was sunk behind the loop's test: two round trips a step again).
struct PlainLoads {
  template <class I>
  REPIX_HD I load(const I* p) const { return *p; }
};
template <bool kPairedLoads = false, class T, class I, class Loads = PlainLoads>
REPIX_HD I settled_entry(const T* f, const I* par, I p, const Loads& loads = {}) {
  const I q = par[p];
  if (q == p) return p;
  if constexpr (!kPairedLoads) {
    return level_root(f, par, q);
  } else {
    const T v = f[q];
    I at = q, next = loads.load(par + q);
    for (;;) {  // both loads before the test, as in climbing_merge's paired climbs
      const T level = f[next];
      const I after = loads.load(par + next);
      if (next == at || level != v) return at;
      at = next;
      next = after;
    }
  }
}

// For pixel l of a finished tile tree (local indices; nothing writes s_par any more): its parent in
// the compressed tree gpu-compressed writes out, the same tree with every chain shortened: a pixel that is
// not its node's level root points straight to it; a level root points to its parent's node's level
// root (or to itself at the tile's root). Both are valid parents (gpu_core's order: same level and a
// smaller index, or a lower level), so the merges and the flatten take the compressed tree as they
// take any other; the border merges then climb one link per node instead of the node's chain, and
// the flatten's chain walks end within a tile for every node that does not cross a tile border.
// It is walked_normal_form on the tile with the chains walked to their end.
template <class T, class I>
REPIX_HD I compressed_parent(const T* s_f, const I* s_par, I l) {
  bool done = false;
  return walked_normal_form(s_f, s_par, l, 1 << 30, done);
}

// ---- gpu-monotone's flatten: the finished `par` to the normal form in place, one pass -----------------
// Every pixel p at once: q = par[p]; par[p] = the level root of q's node (the end of q's same-level
// chain). For a pixel that is not its node's level root q is in its node, so that is its canonical
// pixel; for a level root, q is in its parent's node, so that is the parent node's canonical pixel;
// the root keeps itself: the normal form, in one pass and with no second buffer (Blin et al.'s
// flatten kernel does the same in place and calls its race benign; here is why it is, and the
// accesses are relaxed atomics, so the race is none in the PTX memory model). Call the tree before
// the pass par0 and LR(x) the level root of x's node. Only p's own thread writes par[p], once,
// with LR(par0[p]); so at every moment par[x] is par0[x] or LR(par0[x]) for every x. For x that is
// not a level root both are pixels of x's node (LR(par0[x]) = LR(x)) and smaller than x; for a level
// root both lie in a lower node (the root: both are itself). A walk down q's same-level chain thus
// meets only pixels of q's node, each step to a smaller one, and stops exactly at LR(q), whichever
// of the two values each load sees. It is written as steps (one load each, or the final store) so
// that the tests interleave the walks of all pixels at random as concurrent threads could.
template <class T, class I>
struct SettleWalk {
  I p;        // the pixel whose entry the walk settles
  I q = -1;   // par[p] as loaded (-1: not loaded yet)
  I at = -1;  // the walk's place on q's same-level chain
  T v = 0;    // q's level
};

// One step of p's walk: true when par[p] holds its normal form. `mem` provides load(const I*) and
// store(I*, I).
template <class T, class I, class Mem>
REPIX_HD bool settle_step(const T* f, I* par, SettleWalk<T, I>& w, const Mem& mem) {
  if (w.q < 0) {
    w.q = w.at = mem.load(par + w.p);
    w.v = f[w.q];
    return w.q == w.p;  // the root
  }
  const I next = mem.load(par + w.at);
  if (next != w.at && f[next] == w.v) {
    w.at = next;
    return false;
  }
  if (w.at != w.q) mem.store(par + w.p, w.at);
  return true;
}

template <class T, class I, class Mem>
REPIX_HD void settle(const T* f, I* par, I p, const Mem& mem) {
  SettleWalk<T, I> w{p};
  while (!settle_step(f, par, w, mem)) {
  }
}

// ---- the flatten: the finished `par` to the normal form, in three race-free passes (each reads
// arrays no thread of the pass writes, and writes only its own pixel) ------------------------------

// Pass 1: p's parent if it is in p's node (same level), else p itself (p is its node's lowest
// pixel: its canonical pixel).
template <class T, class I>
REPIX_HD I same_level_parent(const T* f, const I* par, I p) {
  const I q = par[p];
  return (q != p && f[q] == f[p]) ? q : p;
}

// Pass 2, repeated until nothing changes (pointer jumping, from one buffer into another): after k
// rounds lr[p] is 2^k steps down p's same-level chain or its end, the node's canonical pixel.
template <class I>
REPIX_HD I jump(const I* lr, I p) {
  return lr[lr[p]];
}

// Pass 3: with lr[p] = the canonical pixel of p's node, p's entry in the normal form: that pixel,
// or for the canonical pixel itself the canonical pixel of its parent's node (itself at the root).
template <class I>
REPIX_HD I normal_form(const I* par, const I* lr, I p) {
  const I c = lr[p];
  if (c != p) return c;
  const I q = par[p];
  return q == p ? p : lr[q];
}

}  // namespace repix::maxtree::gpu_core
