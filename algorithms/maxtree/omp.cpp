// omp: the tiled map-reduce (the CPU algorithm Blin et al. compare their GPU one with; Wilkinson et
// al.'s shared-memory scheme on a grid). Map: a max-tree per tile (Berger, detail::berger_rect),
// all tiles in parallel. Reduce: neighbouring regions merged along their shared border, pairwise,
// in rounds that double the regions' width (every merge of a round in parallel: each touches only
// the pixels of its own two regions), then the same over the row bands. Then the parallel
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

template <class T, class I>
void omp_tree(const T* f, std::int64_t W, std::int64_t H, const Options& opt, I* parent, Stats& stats) {
  const std::int64_t t = opt.tile > 0 ? opt.tile : kDefaultTile;
  const std::int64_t tx = (W + t - 1) / t, ty = (H + t - 1) / t;
  stats.tiles = tx * ty;
  // No more threads than tiles: an image of one tile is one Berger run, without parallel regions.
  const int threads = static_cast<int>(std::min<std::int64_t>(threads_for(opt), stats.tiles));
  auto t0 = std::chrono::steady_clock::now();
  {
    nvtx::Range build("build");
#pragma omp parallel num_threads(threads)
    {
      detail::BergerScratch<I> scratch;
#pragma omp for schedule(dynamic)
      for (std::int64_t k = 0; k < tx * ty; ++k) {
        const std::int64_t x0 = (k % tx) * t, y0 = (k / tx) * t;
        detail::berger_rect(f, W, {x0, y0, std::min(W, x0 + t), std::min(H, y0 + t)}, opt.connectivity, parent, scratch);
      }
    }
  }
  stats.build_ms = detail::ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  nvtx::Range merge("merge");  // to the end: the canonicalisation opens its own range after
  std::vector<I> skip(static_cast<std::size_t>(W * H));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t p = 0; p < W * H; ++p) skip[p] = static_cast<I>(p);
  const Merger<T, I> m{f, parent, skip.data()};
  const bool diagonal = opt.connectivity == 8;
  auto at = [W](std::int64_t x, std::int64_t y) { return static_cast<I>(y * W + x); };
  // Rows first: in each band of tile rows, regions of s tiles merge with their right neighbour
  // across the column x = bx (diagonal edges only inside the band: the others cross a row border).
  for (std::int64_t s = 1; s < tx; s *= 2) {
    const std::int64_t pairs = (tx - s + 2 * s - 1) / (2 * s);  // k with (2k + 1) s < tx
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t j = 0; j < ty * pairs; ++j) {
      const std::int64_t band = j / pairs, k = j % pairs;
      const std::int64_t bx = (2 * k + 1) * s * t, y0 = band * t, y1 = std::min(H, y0 + t);
      for (std::int64_t y = y0; y < y1; ++y) {
        m.connect(at(bx - 1, y), at(bx, y));
        if (diagonal && y > y0) m.connect(at(bx - 1, y), at(bx, y - 1));
        if (diagonal && y + 1 < y1) m.connect(at(bx - 1, y), at(bx, y + 1));
      }
    }
  }
  // Then the bands, full width, across the row y = by (every diagonal edge that crosses it).
  for (std::int64_t s = 1; s < ty; s *= 2) {
    const std::int64_t pairs = (ty - s + 2 * s - 1) / (2 * s);
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (std::int64_t k = 0; k < pairs; ++k) {
      const std::int64_t by = (2 * k + 1) * s * t;
      for (std::int64_t x = 0; x < W; ++x) {
        m.connect(at(x, by - 1), at(x, by));
        if (diagonal && x > 0) m.connect(at(x, by - 1), at(x - 1, by));
        if (diagonal && x + 1 < W) m.connect(at(x, by - 1), at(x + 1, by));
      }
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
