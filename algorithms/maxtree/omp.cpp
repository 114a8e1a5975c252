// omp: the tiled map-reduce (the CPU algorithm Blin et al. compare their GPU one with; Wilkinson et
// al.'s shared-memory scheme on a grid). Map: a max-tree per tile (Berger, detail::berger_rect),
// all tiles in parallel. Reduce: neighbouring regions merged along their shared border, pairwise,
// in rounds that double the regions' width (every merge of a round in parallel: each touches only
// the pixels of its own two regions), inside strips one tile thick, then the same over the strips
// (row or column strips, whichever gives the shorter last rounds). Then the parallel
// canonicalisation to the normal form.
#include <vector>

#include "core/nvtx.hpp"
#include "maxtree/detail.hpp"
#include "maxtree/variants.hpp"

namespace repix::maxtree {

namespace {

constexpr int kDefaultTile = 256;

int threads_for(const Options& opt) { return detail::thread_count(opt.threads); }

// The merge of two max-trees joined by the edge (a, b) (Wilkinson et al. 2008): the two ancestor
// chains, each ordered by decreasing level, are zipped into one. Called by the one thread that
// owns both regions; path halving keeps the same-level chains short.
//
// Climbing a chain one node at a time costs the number of nodes between the two pixels' levels:
// thousands per border pixel in 16-bit noise, where almost every pixel is a node. So each level
// root keeps a skip pointer, some ancestor of it (itself at first), set to the end of every climb
// through it (path compression, as in union-find). Zipping only inserts nodes between a node and
// its parent, or merges a node into another of its level, so an ancestor stays an ancestor (its
// level root found through level_root) and a skip stays valid; a climb takes a skip only when it
// does not go below the level it climbs to, so it passes exactly the nodes single steps would.
template <class T, class I>
struct Merger {
  const T* f;
  I* parent;
  I* skip;

  I level_root(I x) const {
    for (;;) {
      const I q = parent[x];
      if (q == x || f[q] != f[x]) return x;
      const I qq = parent[q];
      if (qq != q && f[qq] == f[q]) parent[x] = qq;  // halving, within the node
      x = q;
    }
  }
  // The next node above level root x on the way to level `floor` (a skip where it stays at or
  // above it, else the parent node), or -1 when that would go below `floor` or x is the root.
  I step(I x, T floor) const {
    const I s = level_root(skip[x]);
    if (s != x && f[s] >= floor) return s;
    const I px = parent[x];
    if (px == x) return -1;
    const I z = level_root(px);
    return f[z] >= floor ? z : I(-1);
  }
  // The lowest node at or above level `floor` on level root x's chain (x itself if its parent is
  // below `floor`); every node passed then skips straight there.
  I climb(I x, T floor) const {
    I end = x;
    for (I next = step(end, floor); next >= 0; next = step(end, floor)) end = next;
    for (I v = x; v != end;) {
      const I next = step(v, f[end]);
      skip[v] = end;
      v = next;
    }
    return end;
  }
  void connect(I a, I b) const {
    I x = level_root(a), y = level_root(b);
    if (f[x] < f[y]) std::swap(x, y);
    while (x != y) {  // x, y level roots, f[x] >= f[y]
      x = climb(x, f[y]);  // x's parent node is below y now (or x is the root, or y itself)
      if (x == y) return;
      const I px = parent[x];
      const I z = px == x ? I(-1) : level_root(px);
      parent[x] = y;  // y is x's new parent node (or, at x's level, x's node joins y's)
      if (z < 0) return;  // x was a root: its whole tree now hangs below y
      x = y;
      y = z;
    }
  }
};

// Merges the two regions on either side of a border of n pixel pairs (a(i), b(i)): a(i) and a(i+1)
// are neighbours in one region, b(i) and b(i+1) in the other. An edge whose merge an earlier one
// of the same border already implies is skipped (the grid-connection pruning of Blin et al.):
// the edge (p, q) at level l = min(f p, f q) only merges the two ancestor chains at levels <= l, so
// it is implied when a path of merged edges and in-region neighbours joins p and q through pixels
// all >= l, e.g. a(i) - a(i-1) - b(i-1) - b(i) after the edge (a(i-1), b(i-1)).
template <class T, class I, class A, class B>
void merge_border(const Merger<T, I>& m, std::int64_t n, bool diagonal, A&& a, B&& b) {
  const T* f = m.f;
  auto link = [&](I p, I q, int implied) {  // implied: a level the path through merged pixels keeps
    if (static_cast<int>(std::min(f[p], f[q])) > implied) m.connect(p, q);
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const I ai = a(i), bi = b(i);
    // Straight: through the previous straight edge, a(i) - a(i-1) - b(i-1) - b(i).
    link(ai, bi, i > 0 ? static_cast<int>(std::min(f[a(i - 1)], f[b(i - 1)])) : -1);
    if (!diagonal) continue;
    // Diagonals, after the straight edge (a(i), b(i)): a(i) - b(i) - b(i -/+ 1), or for the
    // backward one also a(i) - a(i-1) - b(i-1).
    if (i > 0) link(ai, b(i - 1), std::max<int>(f[bi], f[a(i - 1)]));
    if (i + 1 < n) link(ai, b(i + 1), f[bi]);
  }
}

template <class T, class I>
void omp_tree(const T* f, std::int64_t W, std::int64_t H, const Options& opt, I* parent, Stats& stats) {
  const std::int64_t t = opt.tile > 0 ? opt.tile : kDefaultTile;
  const std::int64_t tx = (W + t - 1) / t, ty = (H + t - 1) / t;
  stats.tiles = tx * ty;
  // No more threads than tiles: an image of one tile is one Berger run, without parallel regions.
  const int threads = static_cast<int>(std::min<std::int64_t>(threads_for(opt), stats.tiles));
  auto t0 = std::chrono::steady_clock::now();
  // The merges' skip pointers, set per tile below (every pixel: the tiles cover the image).
  const std::unique_ptr<I[]> skip = detail::uninitialized<I>(W * H);
  {
    nvtx::Range build("build");
#pragma omp parallel num_threads(threads)
    {
      detail::BergerScratch<I> scratch;
#pragma omp for schedule(dynamic)
      for (std::int64_t k = 0; k < tx * ty; ++k) {
        const std::int64_t x0 = (k % tx) * t, y0 = (k / tx) * t;
        const std::int64_t x1 = std::min(W, x0 + t), y1 = std::min(H, y0 + t);
        detail::berger_rect(f, W, {x0, y0, x1, y1}, opt.connectivity, parent, scratch);
        for (std::int64_t y = y0; y < y1; ++y)
          for (std::int64_t x = x0; x < x1; ++x) skip[y * W + x] = static_cast<I>(y * W + x);
      }
    }
  }
  stats.build_ms = detail::ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  nvtx::Range merge("merge");  // to the end: the canonicalisation opens its own range after
  const Merger<T, I> m{f, parent, skip.get()};
  const bool diagonal = opt.connectivity == 8;
  auto at = [W](std::int64_t x, std::int64_t y) { return static_cast<I>(y * W + x); };
  // Two phases: first inside strips one tile thick (regions of s tiles merged with their
  // neighbour across a border one tile long, every merge of a round in parallel), then the strips
  // across full-length borders, rounds of fewer and fewer merges: the last round is one thread
  // merging a border as long as the image. The strips run along the image's longer side when that
  // shortens this critical path, rounds x border length (6000x4000 at 256-pixel tiles: 5 rounds of
  // 4000-pixel column borders instead of 4 rounds of 6000-pixel row borders; 16-bit noise spent
  // 602 of its 906 ms in the merges on the GPU host, most of it in the last rounds).
  // Diagonal edges: phase 1 takes only those inside its strip; phase 2 every one that crosses its
  // border (the corner ones included).
  auto rounds = [](std::int64_t n) {
    int r = 0;
    for (std::int64_t s = 1; s < n; s *= 2) ++r;
    return r;
  };
  const bool column_strips = rounds(tx) * H < rounds(ty) * W;
  // Phase 1. Row strips (a band of tile rows): regions merge across the column x = bx. Column
  // strips: across the row y = by.
  const std::int64_t along = column_strips ? ty : tx, across = column_strips ? tx : ty;
  for (std::int64_t s = 1; s < along; s *= 2) {
    const std::int64_t pairs = (along - s + 2 * s - 1) / (2 * s);  // k with (2k + 1) s < along
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t j = 0; j < across * pairs; ++j) {
      const std::int64_t strip = j / pairs, k = j % pairs;
      const std::int64_t cut = (2 * k + 1) * s * t, lo = strip * t;
      if (column_strips) {
        const std::int64_t hi = std::min(W, lo + t);
        merge_border(m, hi - lo, diagonal, [&](std::int64_t i) { return at(lo + i, cut - 1); },
                     [&](std::int64_t i) { return at(lo + i, cut); });
      } else {
        const std::int64_t hi = std::min(H, lo + t);
        merge_border(m, hi - lo, diagonal, [&](std::int64_t i) { return at(cut - 1, lo + i); },
                     [&](std::int64_t i) { return at(cut, lo + i); });
      }
    }
  }
  // Phase 2: the strips, across full-length borders.
  for (std::int64_t s = 1; s < across; s *= 2) {
    const std::int64_t pairs = (across - s + 2 * s - 1) / (2 * s);
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t k = 0; k < pairs; ++k) {
      const std::int64_t cut = (2 * k + 1) * s * t;
      if (column_strips)
        merge_border(m, H, diagonal, [&](std::int64_t i) { return at(cut - 1, i); }, [&](std::int64_t i) { return at(cut, i); });
      else
        merge_border(m, W, diagonal, [&](std::int64_t i) { return at(i, cut - 1); }, [&](std::int64_t i) { return at(i, cut); });
    }
  }
  stats.merge_ms = detail::ms_since(t0);
}

}  // namespace

Result run_omp(const HostImage& image, const Options& opt) {
  nvtx::Range range("maxtree/omp");
  return detail::run_typed(image, opt, [&](auto f, auto& parent, Stats& stats) {
    omp_tree(f.data, f.shape.nx, f.shape.ny, opt, parent.data(), stats);
    const auto t0 = std::chrono::steady_clock::now();
    nvtx::Range r("canonical");
    detail::canonicalize(f.data, parent, static_cast<int>(std::min<std::int64_t>(threads_for(opt), stats.tiles)));
    stats.canonical_ms = detail::ms_since(t0);
  });
}

}  // namespace repix::maxtree
