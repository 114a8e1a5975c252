// The edt queue variants' per-pixel logic (edt/gpu_queue_core.hpp) run on the CPU, without a GPU:
//   - the install rule under a simulated race (another thread's install between the load and the
//     compare-and-swap): retried only while still strictly closer, reported once;
//   - the re-seed predicate: on the initial state it is exactly the contour seeding, and it
//     selects nothing once the propagation has finished;
//   - the whole GPU algorithm simulated one thread at a time (the same functions the kernels
//     call, the episode loop of queue.cuh with a bounded queue that drops and re-seeds): passes
//     check_propagation vs seq-exact at any capacity, reruns when the capacity is tiny;
//   - the same on windows of a larger image, and windows combined by border rounds (the tile
//     API's contract, as a multi-device engine uses it).
#include <gtest/gtest.h>

#include <cstdint>
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

using edt::kNoSite;
using edt::pack_xy;
using edt::queue_core::SiteStore;
using edt::queue_core::TileGeom;

// ---- the install rule ---------------------------------------------------------------------------

// A store where "another thread" installs `interloper` between the step's load and its first
// compare-and-swap (so that compare-and-swap fails once and the rule must look again).
struct RacingStore {
  std::vector<std::int64_t>* sites;
  std::int64_t interloper;
  mutable int cas_calls = 0;
  std::int64_t load(std::uint32_t i) const { return (*sites)[i]; }
  std::int64_t compare_and_swap(std::uint32_t i, std::int64_t expected, std::int64_t desired) const {
    if (cas_calls++ == 0) (*sites)[i] = interloper;
    const std::int64_t found = (*sites)[i];
    if (found == expected) (*sites)[i] = desired;
    return found;
  }
};

TEST(EdtGpuQueueCore, InstallRuleRetriesWhileStrictlyCloser) {
  // Pixel q = 0 at (10, 10); the offered site s at (13, 10) (squared distance 9).
  const std::int64_t s = pack_xy(13, 10);
  struct Case {
    const char* what;
    std::int64_t before, interloper;
    bool installed;
    std::int64_t after;
    int cas_calls;
  };
  const Case cases[] = {
      {"interloper farther than s: retried, s installed", pack_xy(10, 0), pack_xy(10, 5), true, s, 2},
      {"interloper as close as s: not installed (strictly closer only)", pack_xy(10, 0), pack_xy(7, 10), false,
       pack_xy(7, 10), 1},
      {"interloper closer than s: not installed", kNoSite, pack_xy(11, 11), false, pack_xy(11, 11), 1},
      {"no site yet, interloper none either: installed", kNoSite, kNoSite, true, s, 1},
  };
  for (const Case& c : cases) {
    std::vector<std::int64_t> sites{c.before};
    RacingStore st{&sites, c.interloper};
    EXPECT_EQ(edt::queue_core::install_if_closer(st, 0, 10, 10, s), c.installed) << c.what;
    EXPECT_EQ(sites[0], c.after) << c.what;
    EXPECT_EQ(st.cas_calls, c.cas_calls) << c.what;
  }
  // Not closer to begin with: no compare-and-swap at all (equal distance included).
  for (std::int64_t before : {pack_xy(10, 7), pack_xy(10, 11)}) {
    std::vector<std::int64_t> sites{before};
    RacingStore st{&sites, pack_xy(0, 0)};
    EXPECT_FALSE(edt::queue_core::install_if_closer(st, 0, 10, 10, s));
    EXPECT_EQ(sites[0], before);
    EXPECT_EQ(st.cas_calls, 0);
  }
}

// ---- the simulated GPU algorithm ------------------------------------------------------------------

struct SimStats {
  std::int64_t initially_queued = 0, total_queued = 0, episodes = 0, reruns = 0;
};

// queue.cuh's episode loop, one simulated thread at a time: the seeds and each round's output
// hold at most `capacity` elements (0 = unbounded); what does not fit is dropped and the next
// episode is seeded by can_improve_a_neighbour over the window, as the GPU does.
void simulate_episodes(const TileGeom& g, std::vector<std::int64_t>& sites, const std::vector<std::uint32_t>& first_seeds,
                       std::int64_t capacity, SimStats& st) {
  const SiteStore store{sites.data()};
  const std::size_t cap = capacity > 0 ? static_cast<std::size_t>(capacity) : SIZE_MAX;
  for (bool first = true;; first = false) {
    bool dropped = false;
    std::vector<std::uint32_t> in;
    auto push = [&](std::vector<std::uint32_t>& q, std::uint32_t p) {
      if (q.size() < cap) {
        q.push_back(p);
      } else {
        dropped = true;
      }
    };
    if (first) {
      for (std::uint32_t p : first_seeds) push(in, p);
      st.initially_queued += static_cast<std::int64_t>(in.size());
    } else {
      for (std::int64_t ly = 0; ly < g.h; ++ly)
        for (std::int64_t lx = 0; lx < g.w; ++lx)
          if (edt::queue_core::can_improve_a_neighbour(store, g, lx, ly)) push(in, static_cast<std::uint32_t>(ly * g.w + lx));
    }
    st.total_queued += static_cast<std::int64_t>(in.size());
    if (in.empty()) return;
    ++st.episodes;
    while (!in.empty()) {
      std::vector<std::uint32_t> out;
      for (std::uint32_t p : in) edt::queue_core::propagate_pixel(store, g, p, [&](std::uint32_t q) { push(out, q); });
      st.total_queued += static_cast<std::int64_t>(out.size());
      in.swap(out);
    }
    if (!dropped) return;
    ++st.reruns;
  }
}

// Algorithm 6 lines 2-5 on window w (its input given window-local), then the episodes.
template <class T>
std::vector<std::int64_t> simulate_init(const T* in, const edt::Window& w, std::int64_t capacity, SimStats& st) {
  const TileGeom g{w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0};
  std::vector<std::int64_t> sites(static_cast<std::size_t>(g.size()));
  std::vector<std::uint32_t> seeds;
  for (std::int64_t ly = 0; ly < g.h; ++ly)
    for (std::int64_t lx = 0; lx < g.w; ++lx) {
      const std::int64_t i = ly * g.w + lx;
      const bool bg = in[i] == T(0);
      sites[i] = edt::queue_core::initial_site(bg, g.x0 + lx, g.y0 + ly);
      if (bg && edt::queue_core::has_foreground_neighbour(in, g, lx, ly)) seeds.push_back(static_cast<std::uint32_t>(i));
    }
  simulate_episodes(g, sites, seeds, capacity, st);
  return sites;
}

std::vector<std::int64_t> simulate_window(const HostImage& window_img, const edt::Window& w, std::int64_t capacity,
                                          SimStats& st) {
  return visit_image(window_img, [&](auto v) { return simulate_init(v.data, w, capacity, st); });
}

edt::Result simulate_whole(const HostImage& img, std::int64_t capacity, SimStats& st) {
  const edt::Window all{0, 0, img.shape().nx, img.shape().ny};
  return edt::result_from_packed(img.shape(), simulate_window(img, all, capacity, st), true, 1);
}

std::vector<HostImage> simulation_inputs() {
  std::vector<HostImage> v;
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 57}, {57, 1}, {255, 3}, {257, 2}, {33, 31}, {64, 64}};
  for (auto [nx, ny] : shapes) {
    v.push_back(test::sparse_image(nx, ny, 0.05, nx * 100 + ny));
    v.push_back(test::const_image(nx, ny, 0));
    v.push_back(test::const_image(nx, ny, 255));
    HostImage one = test::const_image(nx, ny, 255);
    one.data<std::uint8_t>()[one.size() / 3] = 0;
    v.push_back(std::move(one));
  }
  v.push_back(datasets::generate("blobs:120x90:radius=9:fill=0.45:seed=4"));
  v.push_back(test::tissue_mask(96, 80, 60, 2));
  v.push_back(test::sparse_image(150, 130, 0.002, 6));
  // Figure 3's case (three sites where 8-neighbour propagation errs): the simulation must err
  // within the checker's bounds, like seq.
  HostImage fig3 = test::const_image(28, 28, 255);
  for (auto [x, y] : {std::pair<int, int>{7, 7}, {9, 8}, {13, 11}}) fig3.data<std::uint8_t>()[y * 28 + x] = 0;
  v.push_back(std::move(fig3));
  return v;
}

TEST(EdtGpuQueueCore, SimulatedPropagationPassesPropertyChecks) {
  for (const HostImage& img : simulation_inputs()) {
    const edt::Result exact = edt::run_seq_exact(img, {});
    const edt::Result seq = edt::run_seq(img, {});
    for (std::int64_t cap : {0, 1, 4, 37}) {
      SimStats st;
      const edt::Result got = simulate_whole(img, cap, st);
      const edt::Check c = edt::check_propagation(img, exact, got);
      EXPECT_TRUE(c.ok) << test::describe(img) << " capacity " << cap << ": " << c.first_violation;
      if (cap == 0) {
        // Unbounded: one episode whose seeds are seq's initial queue.
        EXPECT_EQ(st.initially_queued, seq.stats.initially_queued) << test::describe(img);
        EXPECT_EQ(st.reruns, 0) << test::describe(img);
      } else if (seq.stats.initially_queued > cap) {
        EXPECT_GT(st.reruns, 0) << test::describe(img) << " capacity " << cap;
      }
    }
  }
}

// On the initial state the re-seed predicate selects exactly the contour pixels (so re-seeding
// can stand in for the first seeding), and on a finished propagation it selects nothing.
TEST(EdtGpuQueueCore, ReseedPredicateIsContourInitiallyAndEmptyAtTheEnd) {
  for (const HostImage& img : simulation_inputs()) {
    const edt::Window all{0, 0, img.shape().nx, img.shape().ny};
    const TileGeom g{0, 0, all.x1, all.y1};
    const std::vector<std::uint8_t> bg = edt::background_mask(img, 1);
    std::vector<std::int64_t> sites(bg.size());
    for (std::int64_t i = 0; i < g.size(); ++i) sites[i] = edt::queue_core::initial_site(bg[i], i % g.w, i / g.w);
    const std::vector<std::uint8_t> fg_byte = [&] {
      std::vector<std::uint8_t> f(bg.size());
      for (std::size_t i = 0; i < bg.size(); ++i) f[i] = bg[i] ? 0 : 1;
      return f;
    }();
    std::int64_t mismatches = 0;
    for (std::int64_t ly = 0; ly < g.h; ++ly)
      for (std::int64_t lx = 0; lx < g.w; ++lx) {
        const bool contour = bg[ly * g.w + lx] && edt::queue_core::has_foreground_neighbour(fg_byte.data(), g, lx, ly);
        mismatches += contour != edt::queue_core::can_improve_a_neighbour(SiteStore{sites.data()}, g, lx, ly);
      }
    EXPECT_EQ(mismatches, 0) << test::describe(img);
    SimStats st;
    std::vector<std::int64_t> done = simulate_window(img, all, 0, st);
    std::int64_t frontier = 0;
    for (std::int64_t ly = 0; ly < g.h; ++ly)
      for (std::int64_t lx = 0; lx < g.w; ++lx)
        frontier += edt::queue_core::can_improve_a_neighbour(SiteStore{done.data()}, g, lx, ly);
    EXPECT_EQ(frontier, 0) << test::describe(img);
  }
}

// A window of a larger image: sites in global coordinates, a fixed point inside the window, and
// seeded like the CPU's init_window on the same window (the contour inside the window only).
TEST(EdtGpuQueueCore, SimulatedWindowOfALargerImage) {
  const HostImage img = datasets::generate("blobs:160x110:radius=7:fill=0.5:seed=8");
  const std::vector<std::uint8_t> bg = edt::background_mask(img, 1);
  for (const edt::Window& w : {edt::Window{37, 21, 131, 90}, edt::Window{0, 0, 1, 110}, edt::Window{159, 109, 160, 110},
                               edt::Window{5, 100, 160, 101}}) {
    for (std::int64_t cap : {0, 3}) {
      SimStats st;
      const std::vector<std::int64_t> sites = simulate_window(test::window_input(img, w), w, cap, st);
      EXPECT_EQ(test::window_fixed_point_violation(img, w, sites), "") << test::window_name(w) << " capacity " << cap;
      if (cap == 0) {
        std::vector<std::int64_t> vr(bg.size());
        edt::Fifo q;
        EXPECT_EQ(st.initially_queued, edt::init_window(bg.data(), img.shape().nx, img.shape().ny, w, vr.data(), q))
            << test::window_name(w);
      }
    }
  }
}

// Windows combined by border rounds through the simulated tile propagation end where the whole
// image's propagation ends: check_propagation vs seq-exact holds on the union.
TEST(EdtGpuQueueCore, SimulatedWindowsWithBorderRoundsPassPropertyChecks) {
  std::vector<test::Split> splits;
  splits.push_back({datasets::generate("blobs:150x100:radius=9:fill=0.45:seed=3"), {0, 64, 150}, {0, 37, 100}});
  splits.push_back({datasets::generate("sparse:130x90:density=0.0015:seed=5"), {0, 1, 40, 41, 129, 130}, {0, 45, 90}});
  splits.push_back({test::tissue_mask(120, 120, 70, 9), {0, 7, 14, 120}, {0, 119, 120}});
  for (const test::Split& s : splits) {
    const HostImage& img = s.img;
    const edt::Result exact = edt::run_seq_exact(img, {});
    for (std::int64_t cap : {0, 2}) {
      SimStats st;
      test::WindowPropagator sim;
      sim.init = [&](const edt::Window& w, const HostImage& in) { return simulate_window(in, w, cap, st); };
      sim.propagate_from = [&](const edt::Window& w, std::vector<std::int64_t>& sites,
                               const std::vector<std::uint32_t>& seeds) {
        simulate_episodes({w.x0, w.y0, w.x1 - w.x0, w.y1 - w.y0}, sites, seeds, cap, st);
      };
      const test::TiledRun run = test::run_tiled(img, s.xcuts, s.ycuts, sim);
      const edt::Check c = edt::check_propagation(img, exact, edt::result_from_packed(img.shape(), run.sites, true, 1));
      EXPECT_TRUE(c.ok) << test::describe(img) << " capacity " << cap << ": " << c.first_violation;
      EXPECT_GT(run.border_rounds, 0) << test::describe(img);
    }
  }
}

}  // namespace
}  // namespace repix
