// The GPU max-tree variants' per-thread cores (algorithms/maxtree/gpu_core.hpp) run on the CPU:
// the merges of every edge in random orders, in random interleavings of their single steps (each
// step is one load and at most one CAS validating it, so this explores what concurrent threads
// can do), and from several real threads at once; then the flatten cores, pass by pass as the GPU
// runs them (pointer jumping between two buffers). Every outcome must equal seq's normal form.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "maxtree/border_core.hpp"
#include "maxtree/gpu_core.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/packed_core.hpp"
#include "maxtree/test_images.hpp"

namespace repix::maxtree {
namespace {

using I = std::int32_t;

// The CPU's atomics, for the cores' Mem parameter.
struct HostAtomics {
  I load(const I* p) const { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
  void store(I* p, I v) const { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
  bool cas(I* p, I expected, I desired) const {
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  }
};

// The same for gpu-packed's 32-bit tile words.
struct HostWordAtomics {
  using Word = packed_core::Word;
  Word load(const Word* p) const { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
  bool cas(Word* p, Word expected, Word desired) const {
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  }
  Word fetch_max(Word* p, Word v) const {  // GCC has no __atomic_fetch_max
    Word old = load(p);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
  }
};

// HostWordAtomics that give up the core before one access in eight (a per-thread seeded draw), so
// that threads zipping one tile interleave at many more points than the scheduler's time slices.
struct YieldingWordAtomics : HostWordAtomics {
  static void maybe_yield() {
    thread_local std::minstd_rand draw(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    if (draw() % 8 == 0) std::this_thread::yield();
  }
  Word load(const Word* p) const {
    maybe_yield();
    return HostWordAtomics::load(p);
  }
  bool cas(Word* p, Word expected, Word desired) const {
    maybe_yield();
    return HostWordAtomics::cas(p, expected, desired);
  }
  Word fetch_max(Word* p, Word v) const {
    maybe_yield();
    return HostWordAtomics::fetch_max(p, v);
  }
};

// HostAtomics that give up the core the same way (gpu-opt's border zips on threads).
struct YieldingAtomics : HostAtomics {
  I load(const I* p) const {
    YieldingWordAtomics::maybe_yield();
    return HostAtomics::load(p);
  }
  bool cas(I* p, I expected, I desired) const {
    YieldingWordAtomics::maybe_yield();
    return HostAtomics::cas(p, expected, desired);
  }
};

// Every edge (p, q) of the grid, q an earlier neighbour of p (gpu_core::for_each_earlier_neighbour).
std::vector<std::pair<I, I>> edges_of(const Shape& s, int connectivity) {
  std::vector<std::pair<I, I>> e;
  for (std::int64_t y = 0; y < s.ny; ++y)
    for (std::int64_t x = 0; x < s.nx; ++x)
      gpu_core::for_each_earlier_neighbour(x, y, s.nx, connectivity, [&](std::int64_t nx, std::int64_t ny) {
        e.emplace_back(static_cast<I>(y * s.nx + x), static_cast<I>(ny * s.nx + nx));
      });
  return e;
}

std::vector<I> identity(std::int64_t n) {
  std::vector<I> par(static_cast<std::size_t>(n));
  for (I p = 0; p < static_cast<I>(n); ++p) par[static_cast<std::size_t>(p)] = p;
  return par;
}

// The engine's flatten (gpu_engine.cuh), with the same cores and the same buffers per pass: with
// walk_hops 0 the seminar's (same-level parents, then pointer jumping until a round changes
// nothing), else gpu-compressed's (chains walked up to walk_hops links; jump rounds only if one was longer).
template <class T>
UninitializedVector<I> flatten(const T* f, const std::vector<I>& par, int walk_hops = 0) {
  const I n = static_cast<I>(par.size());
  std::vector<I> cur(par.size()), next(par.size());
  UninitializedVector<I> out(par.size());
  bool unfinished = walk_hops == 0;
  for (I p = 0; p < n; ++p) {
    if (walk_hops == 0) {
      cur[p] = gpu_core::same_level_parent(f, par.data(), p);
    } else {
      bool done = false;
      cur[p] = gpu_core::same_level_end(f, par.data(), p, walk_hops, done);
      unfinished |= !done;
    }
  }
  for (bool changed = unfinished; changed;) {
    changed = false;
    for (I p = 0; p < n; ++p) {
      next[p] = gpu_core::jump(cur.data(), p);
      changed |= next[p] != cur[p];
    }
    cur.swap(next);
  }
  for (I p = 0; p < n; ++p) out[p] = gpu_core::normal_form(par.data(), cur.data(), p);
  return out;
}

// gpu-opt's flatten (gpu_core::settle) on a copy of par, in place: the walks of all pixels in
// raster order when seed is 0, else interleaved step by step at random (up to 256 walks under way,
// each step one load or the final store), as concurrent threads could run them.
template <class T>
UninitializedVector<I> settle_in_place(const T* f, const std::vector<I>& par, std::uint64_t seed) {
  const I n = static_cast<I>(par.size());
  std::vector<I> work = par;
  if (seed == 0) {
    for (I p = 0; p < n; ++p) gpu_core::settle(f, work.data(), p, HostAtomics{});
  } else {
    std::mt19937_64 rng(seed);
    std::vector<I> order(par.size());
    for (I p = 0; p < n; ++p) order[p] = p;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<gpu_core::SettleWalk<T, I>> walks;
    std::size_t next = 0;
    while (next < order.size() || !walks.empty()) {
      while (walks.size() < 256 && next < order.size()) walks.push_back({order[next++]});
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, walks.size() - 1)(rng);
      if (gpu_core::settle_step(f, work.data(), walks[k], HostAtomics{})) {
        walks[k] = walks.back();
        walks.pop_back();
      }
    }
  }
  UninitializedVector<I> out(par.size());
  std::copy(work.begin(), work.end(), out.begin());
  return out;
}

// Every pixel's parent strictly earlier in the order, or itself: the invariant the merges keep.
template <class T>
void expect_ordered(const T* f, const std::vector<I>& par, const std::string& what) {
  for (I p = 0; p < static_cast<I>(par.size()); ++p) {
    const I q = par[p];
    ASSERT_TRUE(q == p || gpu_core::before(f, q, p)) << what << ": pixel " << p << " has parent " << q;
  }
}

// gpu-tile's partition of the edges (gpu_core.hpp): tile-internal (in each tile's local indices,
// mapped back with tile_to_global), horizontal merge, vertical merge. The three lists, each in the
// order the GPU would enumerate them.
struct TiledEdges {
  std::vector<std::vector<std::pair<int, int>>> tiles;  // local (p, q) per tile
  std::vector<std::pair<std::int64_t, std::int64_t>> origins;
  std::vector<std::pair<I, I>> horizontal, vertical;
};

TiledEdges tiled_edges_of(const Shape& s, int connectivity) {
  using gpu_core::kTileH;
  using gpu_core::kTileW;
  TiledEdges t;
  const std::int64_t tiles_x = (s.nx + kTileW - 1) / kTileW, tiles_y = (s.ny + kTileH - 1) / kTileH;
  for (std::int64_t ty = 0; ty < tiles_y; ++ty)
    for (std::int64_t tx = 0; tx < tiles_x; ++tx) {
      const std::int64_t x0 = tx * kTileW, y0 = ty * kTileH;
      const int w = static_cast<int>(std::min<std::int64_t>(kTileW, s.nx - x0));
      const int h = static_cast<int>(std::min<std::int64_t>(kTileH, s.ny - y0));
      std::vector<std::pair<int, int>> local;
      for (int ly = 0; ly < h; ++ly)
        for (int lx = 0; lx < w; ++lx)
          gpu_core::for_each_earlier_neighbour(lx, ly, w, connectivity, [&](std::int64_t nx, std::int64_t ny) {
            local.emplace_back(ly * kTileW + lx, static_cast<int>(ny * kTileW + nx));
          });
      t.tiles.push_back(std::move(local));
      t.origins.emplace_back(x0, y0);
    }
  for (std::int64_t y = 0; y < s.ny; ++y)
    for (std::int64_t k = 1; k < tiles_x; ++k)
      gpu_core::for_each_horizontal_merge_edge(k * kTileW, y, s.ny, connectivity, [&](std::int64_t nx, std::int64_t ny) {
        t.horizontal.emplace_back(static_cast<I>(y * s.nx + k * kTileW), static_cast<I>(ny * s.nx + nx));
      });
  for (std::int64_t k = 1; k < tiles_y; ++k)
    for (std::int64_t x = 0; x < s.nx; ++x)
      gpu_core::for_each_vertical_merge_edge(x, k * kTileH, s.nx, connectivity, [&](std::int64_t nx, std::int64_t ny) {
        t.vertical.emplace_back(static_cast<I>(k * kTileH * s.nx + x), static_cast<I>(ny * s.nx + nx));
      });
  return t;
}

TEST(MaxtreeGpuCore, TilePartitionTakesEveryEdgeExactlyOnce) {
  const std::int64_t sizes[][2] = {{1, 1}, {1, 40}, {150, 1}, {63, 15}, {64, 16}, {65, 17}, {127, 33}, {128, 32}, {200, 50}};
  for (const auto& sz : sizes)
    for (const int c : {4, 8}) {
      const Shape s = Shape::d2(sz[0], sz[1]);
      auto sorted = [](std::vector<std::pair<I, I>> e) {
        for (auto& [a, b] : e) {
          EXPECT_NE(a, b);
          if (a < b) std::swap(a, b);
        }
        std::sort(e.begin(), e.end());
        return e;
      };
      const TiledEdges t = tiled_edges_of(s, c);
      std::vector<std::pair<I, I>> got = t.horizontal;
      got.insert(got.end(), t.vertical.begin(), t.vertical.end());
      for (std::size_t k = 0; k < t.tiles.size(); ++k)
        for (const auto& [p, q] : t.tiles[k]) {
          const auto [x0, y0] = t.origins[k];
          got.emplace_back(gpu_core::tile_to_global<I>(p, x0, y0, s.nx), gpu_core::tile_to_global<I>(q, x0, y0, s.nx));
        }
      EXPECT_EQ(sorted(got), sorted(edges_of(s, c))) << s.str() << ", connectivity " << c;
    }
}

// On a constant tile the pruning skips every left edge below the first row, and nothing else.
TEST(MaxtreeGpuCore, GridPruningSkipsExactlyTheImpliedLeftEdges) {
  using gpu_core::kTileH;
  using gpu_core::kTileW;
  for (const int c : {4, 8}) {
    std::vector<std::uint8_t> flat(kTileW * kTileH, 5);
    const TiledEdges t = tiled_edges_of(Shape::d2(kTileW, kTileH), c);
    ASSERT_EQ(t.tiles.size(), 1u);
    int pruned = 0;
    for (const auto& [a, b] : t.tiles[0]) pruned += gpu_core::grid_prunes(flat.data(), a, b);
    EXPECT_EQ(pruned, (kTileW - 1) * (kTileH - 1)) << "connectivity " << c;
    // A pair above lower than both ends implies nothing: a pit row above.
    std::vector<std::uint8_t> pit(kTileW * kTileH, 5);
    for (int x = 0; x < kTileW; ++x) pit[x] = 1;
    EXPECT_FALSE(gpu_core::grid_prunes(pit.data(), kTileW + 1, kTileW));
    EXPECT_TRUE(gpu_core::grid_prunes(pit.data(), 2 * kTileW + 1, 2 * kTileW));
  }
}

// A column tree (gpu_core::build_column_tree) is the 1-D max-tree of its column: in gpu_core's order
// (every link to a lower level or a smaller pixel of the same level, inside the column), and its
// normal form is seq's on the column alone (checked column by column).
template <class T>
void expect_column_trees(const T* s_f, const std::vector<I>& s_par, int w, int h) {
  using gpu_core::kTileW;
  for (int lx = 0; lx < w; ++lx) {
    HostImage column(std::is_same_v<T, std::uint8_t> ? DType::u8 : DType::u16, Shape::d2(1, h));
    std::vector<I> local(static_cast<std::size_t>(h));
    for (int ly = 0; ly < h; ++ly) {
      const int l = ly * kTileW + lx, q = s_par[static_cast<std::size_t>(l)];
      column.data<T>()[ly] = s_f[l];
      ASSERT_EQ(q % kTileW, lx) << "a column tree's link leaves its column";
      ASSERT_TRUE(q == l || gpu_core::before(s_f, q, l)) << "column " << lx << ", row " << ly;
      local[static_cast<std::size_t>(ly)] = q / kTileW;
    }
    Options o;
    o.connectivity = 4;
    const Result want = find_variant("seq").run(column, o);
    EXPECT_EQ(flatten(column.data<T>(), local), want.parent.narrow) << "column " << lx << " of " << h << " rows";
  }
}

// gpu-border's horizontal merge (gpu_border.cu, border_core.hpp) on the CPU, strip by strip: the
// closure claimed from the border pixels in a random order, the compact parents, the strip's border
// edges zipped in a random order on the compact tree, the commit; then in global memory the edges
// between strips and every edge of a strip whose closure passed `capacity`. Returns the number of
// strips that passed it.
template <class T>
int border_merges(const T* f, std::vector<I>& par, const Shape& s, int connectivity, std::int32_t capacity,
                  std::mt19937_64& rng) {
  using gpu_core::kTileH;
  using gpu_core::kTileW;
  const std::int64_t tiles_x = (s.nx + kTileW - 1) / kTileW, tiles_y = (s.ny + kTileH - 1) / kTileH;
  if (tiles_x < 2) return 0;
  struct ClaimMem {  // one thread at a time: plain read-modify-writes
    I cas_lut(I* p, I expected, I desired) const {
      const I old = *p;
      if (old == expected) *p = desired;
      return old;
    }
    std::int32_t take(std::int32_t* count) const { return (*count)++; }
    void set_full(std::int32_t* full) const { *full = 1; }
  };
  const HostAtomics zip_mem;
  std::vector<I> lut(par.size(), -1);
  std::vector<char> overflow(static_cast<std::size_t>(tiles_y), 0);
  for (std::int64_t strip = 0; strip < tiles_y; ++strip) {
    const std::int64_t y0 = strip * kTileH;
    const int h = static_cast<int>(std::min<std::int64_t>(kTileH, s.ny - y0));
    // No closure is larger than the image: a capacity above it allocates the image's size.
    const std::int32_t cap = static_cast<std::int32_t>(std::min<std::int64_t>(capacity, s.size()));
    std::vector<std::uint64_t> key(static_cast<std::size_t>(cap));
    std::vector<std::int32_t> cpar(static_cast<std::size_t>(cap));
    std::vector<I> node(static_cast<std::size_t>(cap));
    std::int32_t count = 0, full = 0;
    const border_core::Compact<I> c{key.data(), cpar.data(), node.data(), &count, cap, &full};
    std::vector<std::int64_t> order(static_cast<std::size_t>(border_core::border_pixels(tiles_x, h)));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::int64_t i : order) {
      std::int64_t x, y;
      border_core::border_pixel(i, h, y0, x, y);
      border_core::claim_closure(f, par.data(), lut.data(), static_cast<I>(y * s.nx + x), c, ClaimMem{});
    }
    if (full) {
      overflow[static_cast<std::size_t>(strip)] = 1;
      continue;
    }
    for (std::int32_t k = 0; k < count; ++k) cpar[k] = border_core::compact_parent(f, par.data(), lut.data(), c, k);
    for (const std::int64_t i : order) {
      std::int64_t x, y;
      border_core::border_pixel(i, h, y0, x, y);
      border_core::share_slot(f, par.data(), lut.data(), static_cast<I>(y * s.nx + x));
    }
    std::vector<std::pair<std::int32_t, std::int32_t>> zips;
    for (std::int64_t i = 0; i < (tiles_x - 1) * h; ++i) {
      const std::int64_t x = (1 + i / h) * kTileW, y = y0 + i % h;
      const std::int32_t a = lut[static_cast<std::size_t>(y * s.nx + x)];
      border_core::for_each_strip_edge(x, y, y0, h, s.ny, connectivity, true, [&](std::int64_t nx, std::int64_t ny) {
        zips.emplace_back(a, lut[static_cast<std::size_t>(ny * s.nx + nx)]);
      });
    }
    for (const auto& [a, b] : zips)
      if (a < 0 || a >= count || b < 0 || b >= count) {  // a border pixel without its slot: fail, not hang
        ADD_FAILURE() << "strip " << strip << ": border edge on slots " << a << ", " << b << " of " << count;
        return -1;
      }
    std::shuffle(zips.begin(), zips.end(), rng);
    for (const auto& [a, b] : zips) gpu_core::merge(key.data(), cpar.data(), a, b, zip_mem);
    for (std::int32_t k = 0; k < count; ++k) par[static_cast<std::size_t>(node[k])] = border_core::committed_parent(c, k);
  }
  std::vector<std::pair<I, I>> rest;
  for (std::int64_t y = 0; y < s.ny; ++y)
    for (std::int64_t k = 1; k < tiles_x; ++k) {
      const std::int64_t x = k * kTileW, y0 = y / kTileH * kTileH;
      const int h = static_cast<int>(std::min<std::int64_t>(kTileH, s.ny - y0));
      const bool whole_strip = overflow[static_cast<std::size_t>(y / kTileH)] != 0;
      gpu_core::for_each_horizontal_merge_edge(x, y, s.ny, connectivity, [&](std::int64_t nx, std::int64_t ny) {
        if (whole_strip || ny < y0 || ny >= y0 + h) rest.emplace_back(static_cast<I>(y * s.nx + x), static_cast<I>(ny * s.nx + nx));
      });
    }
  std::shuffle(rest.begin(), rest.end(), rng);
  for (const auto& [a, b] : rest) gpu_core::merge(f, par.data(), a, b, zip_mem);
  return static_cast<int>(std::count(overflow.begin(), overflow.end(), 1));
}

enum class Schedule {
  shuffled,
  interleaved,
  threads,
  tiled,
  tiled_grid_pruned,
  tiled_compressed,
  tiled_column_trees,
  tiled_border,        // gpu-border: gpu-grid's tiles, the horizontal merges on border trees
  tiled_border_small,  // the same with compact trees of 40 nodes: most strips fall back
  tiled_packed,        // gpu-packed: column trees, grid pruning, zips on packed words interleaved
  tiled_monotone,      // gpu-opt: the same with packed_core::monotone_zip, its columns' zips on threads
};

template <class T>
std::vector<I> build(const HostImage& img, int connectivity, Schedule how, std::uint64_t seed) {
  const T* f = img.data<T>();
  std::vector<I> par = identity(img.size());
  std::vector<std::pair<I, I>> edges = edges_of(img.shape(), connectivity);
  std::mt19937_64 rng(seed);
  std::shuffle(edges.begin(), edges.end(), rng);
  const HostAtomics mem;
  if (how == Schedule::shuffled) {
    for (const auto& [a, b] : edges) gpu_core::merge(f, par.data(), a, b, mem);
  } else if (how == Schedule::interleaved) {
    // A pool of pending merges, each one step at a time, the next one drawn at random; new merges
    // join the pool as others finish, so early and late steps of different merges mix.
    std::vector<std::pair<I, I>> pending;
    std::size_t next_edge = 0;
    constexpr std::size_t kPool = 16;
    while (next_edge < edges.size() || !pending.empty()) {
      while (pending.size() < kPool && next_edge < edges.size()) pending.push_back(edges[next_edge++]);
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, pending.size() - 1)(rng);
      auto& [a, b] = pending[k];
      if (gpu_core::merge_step(f, par.data(), a, b, mem)) {
        pending[k] = pending.back();
        pending.pop_back();
      }
    }
  } else if (how == Schedule::tiled || how == Schedule::tiled_grid_pruned || how == Schedule::tiled_compressed ||
             how == Schedule::tiled_column_trees || how == Schedule::tiled_border || how == Schedule::tiled_border_small ||
             how == Schedule::tiled_packed || how == Schedule::tiled_monotone) {
    // As gpu-tile runs: each tile in its own local arrays (levels, parents in local indices), its
    // edges merged in a random order, the tree written back in global indices; then the
    // horizontal merge's edges, then the vertical merge's, each in a random order. gpu-grid: the
    // in-tile edges gpu_core::grid_prunes skips are left out; gpu-compressed: those too, and each tile's
    // tree written compressed (gpu_core::compressed_parent); gpu-tile-1d: each column's 1-D tree
    // built first (gpu_core::build_column_tree), its vertical edges then left out; gpu-packed: the
    // column trees in packed words (packed_core), the pruned edges left out too, and the tile's zips
    // interleaved step by step as its 64 threads run them, the tree written compressed.
    using gpu_core::kTileH;
    using gpu_core::kTileW;
    TiledEdges t = tiled_edges_of(img.shape(), connectivity);
    const std::int64_t W = img.shape().nx;
    for (std::size_t k = 0; k < t.tiles.size(); ++k) {
      const auto [x0, y0] = t.origins[k];
      std::vector<T> s_f(kTileW * kTileH, T(0));
      std::vector<I> s_par(kTileW * kTileH);
      for (int l = 0; l < kTileW * kTileH; ++l) s_par[l] = l;
      for (int l = 0; l < kTileW * kTileH; ++l) {
        const std::int64_t x = x0 + l % kTileW, y = y0 + l / kTileW;
        if (x < W && y < img.shape().ny) s_f[l] = f[y * W + x];
      }
      if (how == Schedule::tiled_packed || how == Schedule::tiled_monotone) {
        // The kernel's own phases (packed_core::load_column, zip_column, write_column), its threads'
        // columns in a shuffled order; the zips either a column at a time (as zip_column runs them) or,
        // on odd seeds, step by step interleaved across the tile (what concurrent threads can do).
        const int w = static_cast<int>(std::min<std::int64_t>(kTileW, W - x0));
        const int h = static_cast<int>(std::min<std::int64_t>(kTileH, img.shape().ny - y0));
        std::vector<T> p_f(kTileW * kTileH, T(0));
        std::vector<packed_core::Word> words(kTileW * kTileH, 0xFFFFFFFFu);  // unwritten: never read
        std::vector<int> columns(static_cast<std::size_t>(w));
        for (int lx = 0; lx < w; ++lx) columns[static_cast<std::size_t>(lx)] = lx;
        std::shuffle(columns.begin(), columns.end(), rng);
        for (const int lx : columns) packed_core::load_column(f, W, x0, y0, h, lx, p_f.data(), words.data());
        std::vector<I> column_par(kTileW * kTileH);
        for (int l = 0; l < kTileW * kTileH; ++l) {
          if (l % kTileW >= w || l / kTileW >= h) {
            column_par[l] = l;
            continue;
          }
          EXPECT_EQ(p_f[l], s_f[l]) << "level " << l << " of tile " << k;
          column_par[l] = packed_core::index_of(words[l]);
          EXPECT_EQ(packed_core::level_of(words[l]), p_f[column_par[l]]) << "word " << l << " of tile " << k;
        }
        expect_column_trees(p_f.data(), column_par, w, h);
        const HostWordAtomics wmem;
        if (how == Schedule::tiled_monotone) {
          // gpu-opt's zips: a column at a time on even seeds; on odd ones, the columns on 4 threads
          // (column lx on thread lx % 4) zipping concurrently, each access a chance to yield. Seeds
          // 2 and 3 mod 4 plan each column's zips first (gpu-planned-zips), the others zip row by row.
          std::shuffle(columns.begin(), columns.end(), rng);
          const auto zip = [&](int lx, const auto& mem) {
            if (seed % 4 >= 2)
              packed_core::zip_planned(p_f.data(), words.data(), lx, packed_core::plan_column_zips(p_f.data(), h, connectivity, lx), mem);
            else
              packed_core::zip_column<true>(p_f.data(), words.data(), h, connectivity, lx, mem);
          };
          if (seed % 2 == 0) {
            for (const int lx : columns) zip(lx, wmem);
          } else {
            std::vector<std::thread> zippers;
            for (int t = 0; t < 4; ++t)
              zippers.emplace_back([&, t] {
                for (const int lx : columns)
                  if (lx % 4 == t) zip(lx, YieldingWordAtomics{});
              });
            for (std::thread& z : zippers) z.join();
          }
        } else if (seed % 2 == 0) {
          std::shuffle(columns.begin(), columns.end(), rng);
          for (const int lx : columns) packed_core::zip_column(p_f.data(), words.data(), h, connectivity, lx, wmem);
        } else {
          std::vector<std::pair<int, int>> pending, zips;
          for (const int lx : columns)
            for (int ly = 0; ly < h; ++ly)
              packed_core::for_each_tile_zip(p_f.data(), lx, ly, connectivity, [&](int a, int b) { zips.emplace_back(a, b); });
          std::shuffle(zips.begin(), zips.end(), rng);
          std::size_t next = 0;
          while (next < zips.size() || !pending.empty()) {
            while (pending.size() < 64 && next < zips.size()) pending.push_back(zips[next++]);
            const std::size_t z = std::uniform_int_distribution<std::size_t>(0, pending.size() - 1)(rng);
            if (packed_core::merge_step(p_f.data(), words.data(), pending[z].first, pending[z].second, wmem)) {
              pending[z] = pending.back();
              pending.pop_back();
            }
          }
        }
        for (const int lx : columns) packed_core::write_column(p_f.data(), words.data(), W, x0, y0, h, lx, par.data());
        continue;  // the tile is written; next tile
      }
      if (how == Schedule::tiled_column_trees) {
        const int w = static_cast<int>(std::min<std::int64_t>(kTileW, W - x0));
        const int h = static_cast<int>(std::min<std::int64_t>(kTileH, img.shape().ny - y0));
        for (int lx = 0; lx < w; ++lx) gpu_core::build_column_tree(s_f.data(), s_par.data(), lx, h);
        expect_column_trees(s_f.data(), s_par, w, h);
        auto& e = t.tiles[k];
        e.erase(std::remove_if(e.begin(), e.end(), [](const auto& ab) { return gpu_core::column_edge(ab.first, ab.second); }),
                e.end());
      } else if (how != Schedule::tiled) {
        auto& e = t.tiles[k];
        e.erase(std::remove_if(e.begin(), e.end(), [&](const auto& ab) { return gpu_core::grid_prunes(s_f.data(), ab.first, ab.second); }),
                e.end());
      }
      std::shuffle(t.tiles[k].begin(), t.tiles[k].end(), rng);
      for (const auto& [a, b] : t.tiles[k]) gpu_core::merge(s_f.data(), s_par.data(), a, b, mem);
      for (int l = 0; l < kTileW * kTileH; ++l) {
        const std::int64_t x = x0 + l % kTileW, y = y0 + l / kTileW;
        const I local = how == Schedule::tiled_compressed ? gpu_core::compressed_parent(s_f.data(), s_par.data(), I(l)) : s_par[l];
        if (x < W && y < img.shape().ny) par[y * W + x] = gpu_core::tile_to_global<I>(local, x0, y0, W);
      }
    }
    if (how == Schedule::tiled_packed || how == Schedule::tiled_monotone) {  // gpu-packed's and gpu-opt's border zips
      const std::int64_t H = img.shape().ny;
      const std::int64_t tiles_x = (W + kTileW - 1) / kTileW, tiles_y = (H + kTileH - 1) / kTileH;
      auto keep = [](std::vector<std::pair<I, I>>& list) {
        return [&list](std::int64_t p, std::int64_t q) { list.emplace_back(static_cast<I>(p), static_cast<I>(q)); };
      };
      t.horizontal.clear();
      t.vertical.clear();
      for (std::int64_t y = 0; y < H; ++y)
        for (std::int64_t k = 1; k < tiles_x; ++k)
          gpu_core::for_each_column_border_zip(f, W, connectivity, k * kTileW, y, keep(t.horizontal));
      for (std::int64_t k = 1; k < tiles_y; ++k)
        for (std::int64_t x = 0; x < W; ++x) gpu_core::for_each_row_border_zip(f, W, connectivity, x, k * kTileH, keep(t.vertical));
    }
    if (how == Schedule::tiled_packed || how == Schedule::tiled_monotone) {
      // gpu-opt merges both borders' edges in one grid (border_merge_kernel): one shuffled list,
      // merged edge by edge on even seeds, step by step interleaved on odd ones.
      std::vector<std::pair<I, I>> borders = t.horizontal;
      borders.insert(borders.end(), t.vertical.begin(), t.vertical.end());
      t.vertical.clear();
      std::shuffle(borders.begin(), borders.end(), rng);
      if (how == Schedule::tiled_monotone && seed % 4 >= 2) {
        // gpu-opt's border zips (gpu_core::climbing_merge): one after another on even
        // seeds, on 4 threads at once on odd ones (edge k on thread k % 4), each access a chance to yield;
        // their climbs' loads paired (gpu-paired-loads and after) unless the seed is a multiple of 3.
        const auto zip = [&](I a, I b, const auto& atomics) {
          if (seed % 3 != 0) gpu_core::climbing_merge<true>(f, par.data(), a, b, atomics);
          else gpu_core::climbing_merge<false>(f, par.data(), a, b, atomics);
        };
        if (seed % 2 == 0) {
          for (const auto& [a, b] : borders) zip(a, b, mem);
        } else {
          std::vector<std::thread> zippers;
          for (std::size_t t = 0; t < 4; ++t)
            zippers.emplace_back([&, t] {
              for (std::size_t k = t; k < borders.size(); k += 4) zip(borders[k].first, borders[k].second, YieldingAtomics{});
            });
          for (std::thread& z : zippers) z.join();
        }
      } else if (seed % 2 == 0) {
        for (const auto& [a, b] : borders) gpu_core::merge(f, par.data(), a, b, mem);
      } else {
        std::vector<std::pair<I, I>> pending;
        std::size_t next = 0;
        while (next < borders.size() || !pending.empty()) {
          while (pending.size() < 64 && next < borders.size()) pending.push_back(borders[next++]);
          const std::size_t k = std::uniform_int_distribution<std::size_t>(0, pending.size() - 1)(rng);
          if (gpu_core::merge_step(f, par.data(), pending[k].first, pending[k].second, mem)) {
            pending[k] = pending.back();
            pending.pop_back();
          }
        }
      }
    } else if (how == Schedule::tiled_border || how == Schedule::tiled_border_small) {
      border_merges(f, par, img.shape(), connectivity, how == Schedule::tiled_border ? std::int32_t(1) << 20 : 40, rng);
    } else {
      std::shuffle(t.horizontal.begin(), t.horizontal.end(), rng);
      for (const auto& [a, b] : t.horizontal) gpu_core::merge(f, par.data(), a, b, mem);
    }
    std::shuffle(t.vertical.begin(), t.vertical.end(), rng);
    for (const auto& [a, b] : t.vertical) gpu_core::merge(f, par.data(), a, b, mem);
  } else {
    constexpr int kThreads = 4;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t e = static_cast<std::size_t>(t); e < edges.size(); e += kThreads)
          gpu_core::merge(f, par.data(), edges[e].first, edges[e].second, mem);
      });
    for (std::thread& th : pool) th.join();
  }
  return par;
}

template <class T>
void check_all_schedules(const test::Input& in, int connectivity, std::uint64_t seed) {
  Options o;
  o.connectivity = connectivity;
  const Result want = find_variant("seq").run(in.image, o);
  ASSERT_FALSE(want.parent.wide);
  for (const Schedule how :
       {Schedule::shuffled, Schedule::interleaved, Schedule::threads, Schedule::tiled, Schedule::tiled_grid_pruned,
        Schedule::tiled_compressed, Schedule::tiled_column_trees, Schedule::tiled_border, Schedule::tiled_border_small,
        Schedule::tiled_packed, Schedule::tiled_monotone}) {
    const std::string what = in.name + ", connectivity " + std::to_string(connectivity) + ", schedule " +
                             std::to_string(static_cast<int>(how)) + ", seed " + std::to_string(seed);
    const std::vector<I> par = build<T>(in.image, connectivity, how, seed);
    expect_ordered(in.image.data<T>(), par, what);
    EXPECT_EQ(flatten(in.image.data<T>(), par), want.parent.narrow) << what;
    // gpu-compressed's flatten: one link per walk (every longer chain left to the jumps), and 16.
    EXPECT_EQ(flatten(in.image.data<T>(), par, 1), want.parent.narrow) << what << ", walks of 1 link";
    EXPECT_EQ(flatten(in.image.data<T>(), par, 16), want.parent.narrow) << what << ", walks of 16 links";
    // gpu-opt's flatten in place: the walks one after another, and interleaved at random.
    EXPECT_EQ(settle_in_place(in.image.data<T>(), par, 0), want.parent.narrow) << what << ", in place";
    EXPECT_EQ(settle_in_place(in.image.data<T>(), par, seed + 100), want.parent.narrow) << what << ", in place, interleaved";
    // gpu-settle-copy's: the same walks, reading the tree only; gpu-paired-loads': each step's two
    // loads before its test.
    UninitializedVector<I> copied(par.size()), paired(par.size());
    for (std::size_t p = 0; p < par.size(); ++p) {
      copied[p] = gpu_core::settled_entry(in.image.data<T>(), par.data(), static_cast<I>(p));
      paired[p] = gpu_core::settled_entry<true>(in.image.data<T>(), par.data(), static_cast<I>(p));
    }
    EXPECT_EQ(copied, want.parent.narrow) << what << ", into a second buffer";
    EXPECT_EQ(paired, want.parent.narrow) << what << ", into a second buffer, paired loads";
  }
}

void check_input_all(const test::Input& in, std::uint64_t seed) {
  for (const int c : {4, 8}) {
    if (in.image.dtype() == DType::u8) check_all_schedules<std::uint8_t>(in, c, seed);
    else check_all_schedules<std::uint16_t>(in, c, seed);
  }
}

// gpu-border's two paths on one image: with room for every strip's closure none falls back; with
// 40 nodes the two full strips of a 200x33 image do (3 borders x 2 columns x 16 rows of border
// pixels each, on a tree of single pixels), the one-row strip fits; both end on seq's normal form
// once the in-tile and vertical edges are merged too.
TEST(MaxtreeGpuCore, BorderTreesFallBackToGlobalMergesWhereTheClosureDoesNotFit) {
  const HostImage img = test::random_image(DType::u8, 200, 33, 4, 41);
  const std::uint8_t* f = img.data<std::uint8_t>();
  Options o;
  o.connectivity = 8;
  const Result want = find_variant("seq").run(img, o);
  for (const auto& [capacity, falls_back] : {std::pair<std::int32_t, int>{1 << 16, 0}, {40, 2}}) {
    std::mt19937_64 rng(5);
    std::vector<I> par = identity(img.size());
    EXPECT_EQ(border_merges(f, par, img.shape(), 8, capacity, rng), falls_back) << "capacity " << capacity;
    const TiledEdges t = tiled_edges_of(img.shape(), 8);
    for (std::size_t k = 0; k < t.tiles.size(); ++k)
      for (const auto& [a, b] : t.tiles[k]) {
        const auto [x0, y0] = t.origins[k];
        gpu_core::merge(f, par.data(), gpu_core::tile_to_global<I>(a, x0, y0, 200), gpu_core::tile_to_global<I>(b, x0, y0, 200),
                        HostAtomics{});
      }
    for (const auto& [a, b] : t.vertical) gpu_core::merge(f, par.data(), a, b, HostAtomics{});
    expect_ordered(f, par, "border merges, capacity " + std::to_string(capacity));
    EXPECT_EQ(flatten(f, par), want.parent.narrow) << "capacity " << capacity;
  }
}

TEST(MaxtreeGpuCore, MergesInAnyOrderAndInterleavingGiveSeqsNormalForm) {
  for (const std::uint64_t seed : {1u, 2u, 3u})
    for (const test::Input& in : test::small_inputs(seed)) check_input_all(in, seed);
}

// Sizes off gpu-tile's 64x16 tiles and plateau-heavy images, kept small enough that a plateau's
// chains (climbed one pixel at a time) stay cheap on the CPU.
TEST(MaxtreeGpuCore, LargerImagesAndSizesOffTheTileSizes) {
  std::vector<test::Input> inputs;
  inputs.push_back({"u8-2levels-130x70", test::random_image(DType::u8, 130, 70, 2, 5)});
  inputs.push_back({"u16-full-129x63", test::random_image(DType::u16, 129, 63, 65536, 6)});
  inputs.push_back({"u16-6levels-200x33", test::random_image(DType::u16, 200, 33, 6, 7, 9000)});
  inputs.push_back({"u8-4levels-65x17", test::random_image(DType::u8, 65, 17, 4, 8)});
  inputs.push_back({"u16-full-127x33", test::random_image(DType::u16, 127, 33, 65536, 9)});
  inputs.push_back({"u8-1x300", test::random_image(DType::u8, 1, 300, 7, 10)});
  inputs.push_back({"u8-300x1", test::random_image(DType::u8, 300, 1, 7, 11)});
  inputs.push_back({"checker-1-u16-64x16", test::checker_image(DType::u16, 64, 16, 1, 0, 65535)});
  inputs.push_back({"checker-5-u8-101x40", test::checker_image(DType::u8, 101, 40, 5, 7, 9)});
  inputs.push_back({"const-u8-100x40", test::const_image(DType::u8, 100, 40, 0)});
  for (const test::Input& in : inputs)
    for (const std::uint64_t seed : {9u, 10u, 11u}) check_input_all(in, seed);  // gpu-packed: odd interleaves, even not
}

// Plateaus cost like union-find, not like their length: on a constant image and on a two-level
// one, every edge merged in a random order takes a few steps on average (the walk within a node
// halves its path). Without the halving a constant 400x300 image takes hundreds per edge.
TEST(MaxtreeGpuCore, PlateauMergesTakeFewStepsPerEdge) {
  std::vector<HostImage> images;
  images.push_back(test::const_image(DType::u8, 400, 300, 7));
  images.push_back(test::random_image(DType::u8, 400, 300, 2, 3));
  for (const HostImage& image : images) {
    const HostImage* img = &image;
    for (const int c : {4, 8}) {
      const std::uint8_t* f = img->data<std::uint8_t>();
      std::vector<I> par = identity(img->size());
      std::vector<std::pair<I, I>> edges = edges_of(img->shape(), c);
      std::mt19937_64 rng(17);
      std::shuffle(edges.begin(), edges.end(), rng);
      std::int64_t steps = 0;
      for (auto [a, b] : edges)
        do ++steps;
        while (!gpu_core::merge_step(f, par.data(), a, b, HostAtomics{}));
      EXPECT_LT(static_cast<double>(steps) / static_cast<double>(edges.size()), 8.0) << "connectivity " << c;
      Options o;
      o.connectivity = c;
      EXPECT_EQ(flatten(f, par), find_variant("seq").run(*img, o).parent.narrow);
    }
  }
}

// A hand-made case: the merge of two chains that interleave in the order splices them into one.
TEST(MaxtreeGpuCore, MergeZipsTwoChains) {
  // Pixels 0..5 with levels chosen so that chain 5 -> 3 -> 1 and chain 4 -> 2 -> 0 zip into
  // 5 -> 4 -> 3 -> 2 -> 1 -> 0 (levels increase with the index).
  const std::uint8_t f[6] = {0, 1, 2, 3, 4, 5};
  std::vector<I> par = {0, 1, 0, 1, 2, 3};  // two trees: 4->2->0 and 5->3->1
  gpu_core::merge(f, par.data(), I(5), I(4), HostAtomics{});
  EXPECT_EQ(par, (std::vector<I>{0, 0, 1, 2, 3, 4}));
}

// gpu-opt's monotone zip (packed_core::monotone_zip) on hand-made words: word[p] = pack(level of
// p's parent, p's parent), a root's word itself.
std::vector<packed_core::Word> words_of(const std::uint8_t* f, const std::vector<int>& par) {
  std::vector<packed_core::Word> w(par.size());
  for (std::size_t p = 0; p < par.size(); ++p) w[p] = packed_core::pack(f[par[p]], par[p]);
  return w;
}

TEST(MaxtreeGpuCore, MonotoneZipZipsTwoChainsAndTiesOnTheSmallerIndex) {
  const std::uint8_t f[6] = {0, 1, 2, 3, 4, 5};
  std::vector<packed_core::Word> w = words_of(f, {0, 1, 0, 1, 2, 3});  // 4->2->0 and 5->3->1
  packed_core::monotone_zip(f, w.data(), 5, 4, HostWordAtomics{});
  EXPECT_EQ(w, words_of(f, {0, 0, 1, 2, 3, 4}));
  // One level: the larger index hangs on the smaller, whichever order the zip is given.
  const std::uint8_t g[4] = {7, 7, 7, 7};
  std::vector<packed_core::Word> v = words_of(g, {0, 1, 2, 3});
  packed_core::monotone_zip(g, v.data(), 1, 3, HostWordAtomics{});
  packed_core::monotone_zip(g, v.data(), 2, 0, HostWordAtomics{});
  packed_core::monotone_zip(g, v.data(), 0, 3, HostWordAtomics{});
  EXPECT_EQ(v, words_of(g, {0, 0, 0, 1}));
}

// The word at `target` changed by another zip just before this zip's own atomic on it (the
// competitor's hang, applied once), to take the branches only concurrency reaches.
struct InterruptedWordAtomics : HostWordAtomics {
  packed_core::Word* target = nullptr;
  packed_core::Word competitor = 0;
  mutable bool fired = false;
  void interrupt(packed_core::Word* p) const {
    if (fired || p != target) return;
    fired = true;
    HostWordAtomics::fetch_max(p, competitor);
  }
  bool cas(packed_core::Word* p, packed_core::Word expected, packed_core::Word desired) const {
    interrupt(p);
    return HostWordAtomics::cas(p, expected, desired);
  }
  packed_core::Word fetch_max(packed_core::Word* p, packed_core::Word v) const {
    interrupt(p);
    return HostWordAtomics::fetch_max(p, v);
  }
};

TEST(MaxtreeGpuCore, MonotoneZipGoesOnFromWhatAConcurrentHangLeft) {
  const std::uint8_t f[4] = {0, 1, 2, 3};
  // The zip of a and b on the tree `before`, the competitor's hang written into target's word
  // just before the zip's own atomic on it, then the tree `after`.
  const auto zip_interrupted = [&](const std::vector<int>& before, int target, packed_core::Word competitor, int a, int b,
                                   const std::vector<int>& after) {
    std::vector<packed_core::Word> w = words_of(f, before);
    InterruptedWordAtomics mem;
    mem.target = &w[static_cast<std::size_t>(target)];
    mem.competitor = competitor;
    packed_core::monotone_zip(f, w.data(), a, b, mem);
    EXPECT_TRUE(mem.fired);
    EXPECT_EQ(w, words_of(f, after));
  };
  // 3 is hung on 2 (nearer than 1) just before the zip of 3 and 1 hangs 3 on 1: its max keeps 2,
  // and 1 goes on down 2's chain: 3 -> 2 -> 1 -> 0.
  zip_interrupted({0, 0, 0, 0}, 3, packed_core::pack(2, 2), 3, 1, {0, 0, 1, 2});
  // Root 1 is hung on 0 by another zip between this zip's climb and its CAS: the CAS fails, the
  // zip climbs again and finds the chains one.
  zip_interrupted({0, 1, 1, 0}, 1, packed_core::pack(0, 0), 1, 0, {0, 0, 1, 0});
}

}  // namespace
}  // namespace repix::maxtree
