// Does the order in which the edt wave variants propagate matter for check_propagation's bounds?
//
// The GPU queue variants and the tile API (border rounds) reach their fixed point in orders that
// have nothing to do with `seq`'s FIFO: parallel rounds whose items all load their site before any
// installs, blocks whose waves run far ahead of others, better sites arriving late from across a
// window border. This file runs the per-pixel logic the kernels run (edt/gpu_queue_core.hpp:
// propagate_pixel / install_if_closer) in adversarial and randomised orders, on whole images and
// on windows combined by border rounds (the same driver as the GPU tile test), and requires
// check_propagation (including the 0.29 px bound) for every order.
//
// Finding (branch edtfix): no order breaks the bound; over thousands of runs on tissue, blobs and
// sparse inputs the largest error above the exact EDT stayed below 0.04 px. The GPU tile test's
// failures on tissue 256x256 seed 43 came from the test driver instead: it uploaded with
// cudaMemcpy (legacy default stream; from pageable memory it may return before the DMA has
// landed) while the tile API ran on a non-blocking stream, so the init kernel could read a stale
// tail of the window's input. The last test here reproduces both reported messages bit for bit
// from such a stale tail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_queue_core.hpp"
#include "edt/propagate.hpp"
#include "edt/test_images.hpp"
#include "edt/tile_test_support.hpp"
#include "edt/verify.hpp"

namespace repix {
namespace {

using edt::queue_core::SiteStore;
using edt::queue_core::TileGeom;

// How the work list of one propagation is consumed.
enum class Order {
  fifo,              // Algorithm 3's queue
  lifo,              // depth first: waves run as far as they can before their neighbours move
  random_pick,       // any pending pixel next
  synchronous,       // rounds; every item of a round offers the site it had when the round began
                     // (a GPU batch: all threads load, then all install)
  shuffled_rounds,   // rounds in random order, each item offering its current site
  blocks,            // the initial list cut into 64 chunks, each chunk's wave run to completion
                     // before the next chunk starts, chunks in random order (persistent blocks at
                     // wildly different speeds)
  nearest_first,     // smallest current distance first (fewest intermediate sites)
  farthest_first,    // largest current distance first (far sites sweep before near ones)
  site_priority,     // a random priority per site: whole waves of some sites before others
};
constexpr Order kOrders[] = {Order::fifo,          Order::lifo,   Order::random_pick,
                             Order::synchronous,   Order::shuffled_rounds, Order::blocks,
                             Order::nearest_first, Order::farthest_first,  Order::site_priority};

const char* order_name(Order o) {
  switch (o) {
    case Order::fifo: return "fifo";
    case Order::lifo: return "lifo";
    case Order::random_pick: return "random_pick";
    case Order::synchronous: return "synchronous";
    case Order::shuffled_rounds: return "shuffled_rounds";
    case Order::blocks: return "blocks";
    case Order::nearest_first: return "nearest_first";
    case Order::farthest_first: return "farthest_first";
    case Order::site_priority: return "site_priority";
  }
  return "?";
}

// Propagates window g's window-local `sites` from `work` in order `o` until nothing changes, with
// the kernels' per-pixel functions.
void propagate_in_order(const TileGeom& g, std::vector<std::int64_t>& sites, std::vector<std::uint32_t> work, Order o,
                        std::mt19937_64& rng) {
  const SiteStore st{sites.data()};
  auto step = [&](std::uint32_t p, std::vector<std::uint32_t>& out) {
    edt::queue_core::propagate_pixel(st, g, p, [&](std::uint32_t q) { out.push_back(q); });
  };
  auto run_rounds = [&](std::vector<std::uint32_t> in, bool shuffle) {
    while (!in.empty()) {
      if (shuffle) std::shuffle(in.begin(), in.end(), rng);
      std::vector<std::uint32_t> out;
      for (std::uint32_t p : in) step(p, out);
      in.swap(out);
    }
  };
  switch (o) {
    case Order::fifo:
      for (std::size_t head = 0; head < work.size(); ++head) step(work[head], work);
      return;
    case Order::lifo:
    case Order::random_pick:
      while (!work.empty()) {
        if (o == Order::random_pick) std::swap(work[rng() % work.size()], work.back());
        const std::uint32_t p = work.back();
        work.pop_back();
        step(p, work);
      }
      return;
    case Order::synchronous:
      while (!work.empty()) {
        std::vector<std::int64_t> loaded(work.size());
        for (std::size_t i = 0; i < work.size(); ++i) loaded[i] = sites[work[i]];
        std::vector<std::uint32_t> out;
        for (std::size_t i = 0; i < work.size(); ++i) {
          if (loaded[i] == edt::kNoSite) continue;
          const std::int64_t ly = work[i] / g.w, lx = work[i] % g.w;
          edt::queue_core::for_each_neighbour(g, lx, ly, [&](std::uint32_t q, std::int64_t qx, std::int64_t qy) {
            if (edt::queue_core::install_if_closer(st, q, qx, qy, loaded[i])) out.push_back(q);
          });
        }
        work.swap(out);
      }
      return;
    case Order::shuffled_rounds: run_rounds(std::move(work), true); return;
    case Order::blocks: {
      constexpr std::size_t kChunks = 64;
      std::vector<std::size_t> chunks(kChunks);
      for (std::size_t c = 0; c < kChunks; ++c) chunks[c] = c;
      std::shuffle(chunks.begin(), chunks.end(), rng);
      const std::size_t n = work.size();
      for (std::size_t c : chunks)
        run_rounds({work.begin() + static_cast<std::ptrdiff_t>(n * c / kChunks),
                    work.begin() + static_cast<std::ptrdiff_t>(n * (c + 1) / kChunks)},
                   false);
      return;
    }
    case Order::nearest_first:
    case Order::farthest_first:
    case Order::site_priority: {
      const std::uint64_t salt = rng();
      auto priority = [&](std::uint32_t p) -> std::uint64_t {  // largest first
        const std::int64_t s = sites[p];
        const std::uint64_t d = static_cast<std::uint64_t>(edt::sq_to_site(g.x0 + p % g.w, g.y0 + p / g.w, s));
        if (o == Order::nearest_first) return ~d;
        if (o == Order::farthest_first) return d;
        std::uint64_t h = (static_cast<std::uint64_t>(s) ^ salt) * 0x9e3779b97f4a7c15ull;
        return h ^ (h >> 31);
      };
      std::vector<std::pair<std::uint64_t, std::uint32_t>> heap;
      auto push = [&](std::uint32_t p) {
        heap.emplace_back(priority(p), p);
        std::push_heap(heap.begin(), heap.end());
      };
      for (std::uint32_t p : work) push(p);
      std::vector<std::uint32_t> out;
      while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end());
        const std::uint32_t p = heap.back().second;
        heap.pop_back();
        out.clear();
        step(p, out);
        for (std::uint32_t q : out) push(q);
      }
      return;
    }
  }
}

// A window propagator for test::run_tiled in order `o`: init = Algorithm 6 lines 2-5 on the
// window, then propagation; border rounds propagate from the driver's seeds.
test::WindowPropagator ordered_propagator(Order o, std::mt19937_64& rng) {
  test::WindowPropagator p;
  p.init = [o, &rng](const edt::Window& w, const HostImage& in) {
    const TileGeom g{w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0};
    std::vector<std::int64_t> sites(static_cast<std::size_t>(g.size()));
    std::vector<std::uint32_t> seeds;
    visit_image(in, [&](auto v) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(v.data)>>;
      for (std::int64_t ly = 0; ly < g.h; ++ly)
        for (std::int64_t lx = 0; lx < g.w; ++lx) {
          const std::int64_t i = ly * g.w + lx;
          const bool bg = v.data[i] == T(0);
          sites[i] = edt::queue_core::initial_site(bg, g.x0 + lx, g.y0 + ly);
          if (bg && edt::queue_core::has_foreground_neighbour(v.data, g, lx, ly)) seeds.push_back(static_cast<std::uint32_t>(i));
        }
    });
    propagate_in_order(g, sites, seeds, o, rng);
    return sites;
  };
  p.propagate_from = [o, &rng](const edt::Window& w, std::vector<std::int64_t>& sites,
                               const std::vector<std::uint32_t>& seeds) {
    propagate_in_order({w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0}, sites, seeds, o, rng);
  };
  return p;
}

edt::Check check_tiled(const HostImage& img, const std::vector<std::int64_t>& xcuts,
                       const std::vector<std::int64_t>& ycuts, const edt::Result& exact,
                       const test::WindowPropagator& p) {
  const test::TiledRun run = test::run_tiled(img, xcuts, ycuts, p);
  return edt::check_propagation(img, exact, edt::result_from_packed(img.shape(), run.sites, true, 1));
}
edt::Check check_tiled(const test::Split& s, const edt::Result& exact, const test::WindowPropagator& p) {
  return check_tiled(s.img, s.xcuts, s.ycuts, exact, p);
}

// Cuts at random positions (at least one pixel apart), or none.
std::vector<std::int64_t> random_cuts(std::int64_t side, std::mt19937_64& rng) {
  std::vector<std::int64_t> c{0};
  for (std::int64_t x = 1 + static_cast<std::int64_t>(rng() % 40); x < side; x += 1 + static_cast<std::int64_t>(rng() % 60))
    c.push_back(x);
  c.push_back(side);
  return c;
}

std::vector<HostImage> order_inputs() {
  std::vector<HostImage> v;
  for (std::uint64_t s = 1; s <= 4; ++s) {
    v.push_back(test::tissue_mask(90 + 23 * s, 70 + 31 * s, 50 + 10 * static_cast<int>(s), s));
    v.push_back(datasets::generate("blobs:" + std::to_string(80 + 17 * s) + "x" + std::to_string(120 - 9 * s) +
                                   ":radius=" + std::to_string(3 + 4 * s) + ":fill=0.45:seed=" + std::to_string(s)));
    v.push_back(test::sparse_image(100 + 11 * s, 90, 0.002 * s, s));
  }
  // Figure 3's three sites, where 8-neighbour propagation errs even in FIFO order.
  HostImage fig3 = test::const_image(28, 28, 255);
  for (auto [x, y] : {std::pair<int, int>{7, 7}, {9, 8}, {13, 11}}) fig3.data<std::uint8_t>()[y * 28 + x] = 0;
  v.push_back(std::move(fig3));
  return v;
}

// Whole images (one window) and random splits with border rounds: every order passes, with the
// largest error far below the bound (a margin that would shrink first if some order mattered).
TEST(EdtPropagationOrder, EveryOrderPassesPropertyChecks) {
  std::mt19937_64 rng(2024);
  double worst = 0;
  for (const HostImage& img : order_inputs()) {
    const edt::Result exact = edt::run_seq_exact(img, {});
    for (Order o : kOrders)
      for (int split = 0; split < 3; ++split) {
        const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
        std::vector<std::int64_t> xcuts{0, nx}, ycuts{0, ny};
        if (split > 0) xcuts = random_cuts(nx, rng), ycuts = random_cuts(ny, rng);
        const edt::Check c = check_tiled(img, xcuts, ycuts, exact, ordered_propagator(o, rng));
        EXPECT_TRUE(c.ok) << test::describe(img) << " " << order_name(o) << " split " << split << ": "
                          << c.first_violation;
        worst = std::max(worst, c.max_abs);
      }
  }
  EXPECT_LT(worst, 0.1) << "some order moved the error towards the 0.29 px bound";
}

// The GPU tile test's split of tissue 256x256 seed 43 (one column and 17 rows cut off) in every
// order, several random draws each.
TEST(EdtPropagationOrder, ReportedTileSplitPassesInEveryOrder) {
  const test::Split s{test::tissue_mask(256, 256, 70, 43), {0, 255, 256}, {0, 17, 256}};
  const edt::Result exact = edt::run_seq_exact(s.img, {});
  for (Order o : kOrders)
    for (std::uint64_t draw = 0; draw < 2; ++draw) {
      std::mt19937_64 rng(draw);
      const edt::Check c = check_tiled(s, exact, ordered_propagator(o, rng));
      EXPECT_TRUE(c.ok) << order_name(o) << " draw " << draw << ": " << c.first_violation;
      EXPECT_LT(c.max_abs, 0.1) << order_name(o) << " draw " << draw;
    }
}

// What the GPU tile test did report there is reproduced exactly when the init of window
// [0,255)x[17,256) reads the last bytes of its input as foreground (not yet uploaded: the
// driver's cudaMemcpy raced the non-blocking stream): 78 stale bytes give the atomic and
// thread_queue policies' message, 1127 the scan policy's. Pins the diagnosis, and that
// check_propagation reports such a corrupted run.
TEST(EdtPropagationOrder, StaleWindowInputTailReproducesTheReportedGpuFailure) {
  const test::Split s{test::tissue_mask(256, 256, 70, 43), {0, 255, 256}, {0, 17, 256}};
  const edt::Result exact = edt::run_seq_exact(s.img, {});
  const edt::Window stale_window{0, 17, 255, 256};
  struct Case {
    std::int64_t stale_bytes;
    std::string message;
  };
  const Case cases[] = {
      {0, ""},
      {78, "pixel x=170, y=243: distance 14.2126703 is more than 0.29 px above the exact 13.892444"},
      {1127, "pixel x=159, y=211: distance 41.5932693 is more than 0.29 px above the exact 40.607881"},
  };
  for (const Case& k : cases) {
    std::mt19937_64 rng(0);
    test::WindowPropagator p = ordered_propagator(Order::fifo, rng);
    const auto init = p.init;
    p.init = [&](const edt::Window& w, const HostImage& in) {
      if (w.x0 != stale_window.x0 || w.y0 != stale_window.y0 || w.x1 != stale_window.x1 || w.y1 != stale_window.y1)
        return init(w, in);
      HostImage stale = test::window_input(in, {0, 0, in.shape().nx, in.shape().ny});  // a copy
      std::fill(stale.data<std::uint8_t>() + stale.size() - k.stale_bytes, stale.data<std::uint8_t>() + stale.size(), 255);
      return init(w, stale);
    };
    const edt::Check c = check_tiled(s, exact, p);
    EXPECT_EQ(c.first_violation, k.message) << k.stale_bytes << " stale bytes";
  }
}

}  // namespace
}  // namespace repix
