// The tiled multi-device engine on its own (core/tiling/multi_device.hpp): tile geometry, the edge
// snapshot, configuration from Options-like values, and the scheduler's protocol with a scripted
// family (every tile once a round, begin/complete pairing, border rounds over the neighbours of
// changed tiles, worker errors). No GPU needed.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/tiling/multi_device.hpp"

namespace repix {
namespace {

using tiling::EdgeSnapshot;
using tiling::EngineConfig;
using tiling::Phase;
using tiling::Rect;
using tiling::TileGrid;

TEST(MultiDeviceGrid, TilesCoverTheImageOnce) {
  const std::pair<std::int64_t, std::int64_t> images[] = {{1, 1}, {1, 37}, {41, 1}, {23, 17}, {64, 64}, {65, 63}};
  const std::pair<std::int64_t, std::int64_t> tiles[] = {{1, 1}, {7, 5}, {16, 16}, {64, 64}, {1000, 3}};
  for (auto [nx, ny] : images)
    for (auto [tw, th] : tiles) {
      const TileGrid g(nx, ny, tw, th);
      std::vector<int> hits(static_cast<std::size_t>(nx * ny), 0);
      for (std::int64_t t = 0; t < g.count(); ++t) {
        const Rect r = g.tile(t);
        ASSERT_GT(r.pixels(), 0);
        ASSERT_LE(r.width(), tw);
        ASSERT_LE(r.height(), th);
        for (std::int64_t y = r.y0; y < r.y1; ++y)
          for (std::int64_t x = r.x0; x < r.x1; ++x) ++hits[y * nx + x];
      }
      for (std::int64_t i = 0; i < nx * ny; ++i)
        ASSERT_EQ(hits[i], 1) << nx << "x" << ny << " tiles " << tw << "x" << th << " pixel " << i;
    }
}

TEST(MultiDeviceGrid, NeighboursWithAndWithoutCorners) {
  const TileGrid g(10, 9, 3, 3);  // 4 x 3 tiles
  auto around = [&](std::int64_t t, bool diagonal) {
    std::set<std::int64_t> s;
    g.for_each_neighbour(t, diagonal, [&](std::int64_t u) { s.insert(u); });
    return s;
  };
  EXPECT_EQ(around(0, true), (std::set<std::int64_t>{1, 4, 5}));
  EXPECT_EQ(around(0, false), (std::set<std::int64_t>{1, 4}));
  EXPECT_EQ(around(5, true), (std::set<std::int64_t>{0, 1, 2, 4, 6, 8, 9, 10}));
  EXPECT_EQ(around(5, false), (std::set<std::int64_t>{1, 4, 6, 9}));
  EXPECT_EQ(around(11, true), (std::set<std::int64_t>{6, 7, 10}));
}

TEST(MultiDeviceGrid, EdgePixelsAndOutsideNeighbours) {
  std::multiset<std::pair<std::int64_t, std::int64_t>> seen;
  const Rect r{2, 3, 6, 6};  // 4 x 3
  tiling::for_each_edge_pixel(r, [&](std::int64_t x, std::int64_t y) { seen.insert({x, y}); });
  EXPECT_EQ(seen.size(), 10u);  // 4 + 4 + 2, each once
  for (const auto& p : seen) EXPECT_EQ(seen.count(p), 1u);
  std::size_t n = 0;
  tiling::for_each_edge_pixel(Rect{0, 0, 1, 5}, [&](std::int64_t, std::int64_t) { ++n; });
  EXPECT_EQ(n, 5u);  // a one-pixel-wide tile is all edge, each pixel once

  // The corner (2, 3) of r in a 10 x 10 image: outside neighbours (1,2) (2,2) (3,2) (1,3) (1,4).
  std::set<std::pair<std::int64_t, std::int64_t>> out;
  tiling::for_each_outside_neighbour(r, Rect{0, 0, 10, 10}, 2, 3, true, [&](std::int64_t x, std::int64_t y) { out.insert({x, y}); });
  EXPECT_EQ(out, (std::set<std::pair<std::int64_t, std::int64_t>>{{1, 2}, {2, 2}, {3, 2}, {1, 3}, {1, 4}}));
  out.clear();
  tiling::for_each_outside_neighbour(r, Rect{0, 0, 10, 10}, 2, 3, false, [&](std::int64_t x, std::int64_t y) { out.insert({x, y}); });
  EXPECT_EQ(out, (std::set<std::pair<std::int64_t, std::int64_t>>{{2, 2}, {1, 3}}));
  out.clear();  // at the image's corner nothing lies outside the image
  tiling::for_each_outside_neighbour(Rect{0, 0, 3, 3}, Rect{0, 0, 3, 3}, 0, 0, true, [&](std::int64_t x, std::int64_t y) { out.insert({x, y}); });
  EXPECT_TRUE(out.empty());
}

TEST(MultiDeviceSnapshot, HoldsBothSidesOfEveryBoundary) {
  for (auto [tw, th] : {std::pair<std::int64_t, std::int64_t>{3, 2}, {1, 1}, {4, 7}, {20, 20}}) {
    const std::int64_t nx = 10, ny = 7;
    const TileGrid g(nx, ny, tw, th);
    std::vector<int> state(static_cast<std::size_t>(nx * ny));
    for (std::size_t i = 0; i < state.size(); ++i) state[i] = static_cast<int>(i) * 3 + 1;
    EdgeSnapshot<int> snap(g, nx);
    for (std::int64_t t = 0; t < g.count(); ++t) snap.refresh(state.data(), g.tile(t));
    // Every pixel with a neighbour in another tile reads back as itself.
    for (std::int64_t t = 0; t < g.count(); ++t) {
      const Rect r = g.tile(t);
      tiling::for_each_edge_pixel(r, [&](std::int64_t x, std::int64_t y) {
        tiling::for_each_outside_neighbour(r, g.area(), x, y, true, [&](std::int64_t qx, std::int64_t qy) {
          ASSERT_EQ(snap.at(qx, qy), state[qy * nx + qx]) << "tiles " << tw << "x" << th << " at " << qx << "," << qy;
        });
      });
      EXPECT_FALSE(snap.differs(state.data(), r));
    }
    if (g.count() == 1) continue;
    // An edge pixel next to a boundary changes: only its tile differs, until it is refreshed.
    const Rect first = g.tile(0);
    const std::int64_t ex = first.x1 - 1, ey = first.y1 - 1;  // bottom-right corner of tile 0
    state[ey * nx + ex] += 1;
    EXPECT_TRUE(snap.differs(state.data(), first));
    for (std::int64_t t = 1; t < g.count(); ++t) EXPECT_FALSE(snap.differs(state.data(), g.tile(t)));
    snap.refresh(state.data(), first);
    EXPECT_FALSE(snap.differs(state.data(), first));
    EXPECT_EQ(snap.at(ex, ey), state[ey * nx + ex]);
  }
  // An interior pixel (no neighbour in another tile) is not part of the snapshot.
  const TileGrid g(9, 9, 5, 5);
  std::vector<int> state(81, 0);
  EdgeSnapshot<int> snap(g, 9);
  snap.refresh(state.data(), g.tile(0));
  state[2 * 9 + 2] = 7;
  EXPECT_FALSE(snap.differs(state.data(), g.tile(0)));
}

// A grid over part of the image (a CPU group's tile cut into micro-tiles): tiles, snapshot and
// outside neighbours stay inside the area.
TEST(MultiDeviceSnapshot, GridOverAnAreaOfTheImage) {
  const std::int64_t nx = 30, ny = 20;
  const Rect area{5, 3, 25, 17};
  const TileGrid g(area, 6, 4);  // 4 x 4 tiles, the last column 2 wide, the last row 2 high
  EXPECT_EQ(g.cols(), 4);
  EXPECT_EQ(g.rows(), 4);
  const Rect first = g.tile(0), last = g.tile(15);
  EXPECT_EQ(first.x0, 5);
  EXPECT_EQ(first.y0, 3);
  EXPECT_EQ(last.x1, 25);
  EXPECT_EQ(last.y1, 17);
  EXPECT_EQ(last.width(), 2);
  std::vector<int> state(static_cast<std::size_t>(nx * ny));
  for (std::size_t i = 0; i < state.size(); ++i) state[i] = static_cast<int>(i);
  EdgeSnapshot<int> snap(g, nx);
  for (std::int64_t t = 0; t < g.count(); ++t) snap.refresh(state.data(), g.tile(t));
  for (std::int64_t t = 0; t < g.count(); ++t) {
    const Rect r = g.tile(t);
    tiling::for_each_edge_pixel(r, [&](std::int64_t x, std::int64_t y) {
      tiling::for_each_outside_neighbour(r, area, x, y, true, [&](std::int64_t qx, std::int64_t qy) {
        ASSERT_TRUE(area.contains(qx, qy));
        ASSERT_EQ(snap.at(qx, qy), state[qy * nx + qx]) << qx << "," << qy;
      });
    });
  }
}

TEST(MultiDeviceConfig, OptionsBecomeWorkersAndTiles) {
  EXPECT_THROW(tiling::configure("reconstruct", -1, 1, 0, 0, 100, 100), Error);
  EXPECT_THROW(tiling::configure("reconstruct", 0, -1, 0, 0, 100, 100), Error);
  EXPECT_THROW(tiling::configure("reconstruct", 0, 1, -2, 0, 100, 100), Error);
  EXPECT_THROW(tiling::configure("reconstruct", 0, 1, 0, -5, 100, 100), Error);
  const EngineConfig c = tiling::configure("reconstruct", 0, 3, 2, 40, 100, 30);
  EXPECT_EQ(c.cpu_groups, 3);
  EXPECT_EQ(c.cpu_group_threads, 2);
  EXPECT_EQ(c.tile_width, 40);
  EXPECT_EQ(c.tile_height, 30);  // capped to the image
  EXPECT_GE(tiling::configure("reconstruct", 0, 2, 0, 0, 100, 100).cpu_group_threads, 1);
  // Automatic tiles: 4096, halved down to 1024 until every worker can have two.
  for (int groups : {1, 3, 8}) {
    const EngineConfig a = tiling::configure("reconstruct", 0, groups, 1, 0, 8192, 8192);
    const std::int64_t workers = static_cast<std::int64_t>(a.devices.size()) + groups;
    const std::int64_t t = a.tile_width, tiles = ((8192 + t - 1) / t) * ((8192 + t - 1) / t);
    EXPECT_EQ(a.tile_width, a.tile_height);
    EXPECT_TRUE(t == 4096 || t == 2048 || t == 1024) << t;
    EXPECT_TRUE(tiles >= 2 * workers || t == 1024) << groups << " groups: tile " << t;
    const std::int64_t twice = 2 * t, fewer = ((8192 + twice - 1) / twice) * ((8192 + twice - 1) / twice);
    EXPECT_TRUE(t == 4096 || fewer < 2 * workers) << "halved further than needed: " << t;
  }
  if (gpu_available()) {
    EXPECT_FALSE(tiling::configure("reconstruct", 0, 0, 0, 0, 10, 10).devices.empty());
    EXPECT_EQ(tiling::configure("reconstruct", 1, 0, 0, 0, 10, 10).devices.size(), 1u);
    return;
  }
  EXPECT_TRUE(tiling::configure("reconstruct", 0, 1, 0, 0, 10, 10).devices.empty());
  try {
    tiling::configure("reconstruct", 0, 0, 0, 0, 10, 10);
    FAIL() << "no GPU and no CPU group must be an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no workers"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--cpu-groups"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// ---- the scheduler with a scripted family -----------------------------------------------------

// Records what the engine asks; tile t's edges "change" in border round r when changes(t, r).
// Rounds are told apart by the snapshot refresh that precedes every border round.
class ScriptedFamily final : public tiling::TileFamily {
 public:
  ScriptedFamily(const TileGrid& g, bool in_flight, std::function<bool(std::int64_t, int)> changes)
      : grid_(g), in_flight_(in_flight), changes_(std::move(changes)) {}

  class Worker final : public tiling::TileWorker {
   public:
    explicit Worker(ScriptedFamily& f) : f_(f) {}
    bool begin(Phase phase, const Rect& r) override {
      if (f_.tile_of(r) == f_.throw_at_) throw Error("scripted failure on tile " + std::to_string(f_.throw_at_));
      f_.record(phase, r);
      if (!f_.in_flight_) return false;
      max_open_ = std::max(max_open_, ++open_);
      return true;
    }
    void complete(const Rect&) override {
      if (!f_.in_flight_ || open_ <= 0) f_.protocol_error_ = true;
      --open_;
      ++f_.completed_;
    }
    ~Worker() override {
      if (open_ != 0 && f_.throw_at_ < 0) f_.protocol_error_ = true;  // begun, never completed
      std::lock_guard<std::mutex> lock(f_.m_);
      f_.max_open_ = std::max(f_.max_open_, max_open_);
    }

   private:
    ScriptedFamily& f_;
    int open_ = 0, max_open_ = 0;
  };

  std::unique_ptr<tiling::TileWorker> make_worker(const tiling::WorkerSpec&) override {
    return std::make_unique<Worker>(*this);
  }
  void snapshot_edges(const Rect& r) override {
    std::lock_guard<std::mutex> lock(m_);
    if (!refreshing_) ++round_;
    refreshing_ = true;
    refreshed_[round_].insert(tile_of(r));
  }
  bool edges_changed(const Rect& r) const override { return changes_(tile_of(r), round_); }

  std::int64_t tile_of(const Rect& r) const {
    return (r.y0 / grid_.tile_height()) * grid_.cols() + r.x0 / grid_.tile_width();
  }
  void record(Phase phase, const Rect& r) {
    std::lock_guard<std::mutex> lock(m_);
    refreshing_ = false;
    if ((phase == Phase::tile) != (round_ == 0)) protocol_error_ = true;
    if (!per_round_[round_].insert(tile_of(r)).second) protocol_error_ = true;  // twice in a round
  }

  const TileGrid& grid_;
  const bool in_flight_;
  std::function<bool(std::int64_t, int)> changes_;
  std::int64_t throw_at_ = -1;
  std::mutex m_;
  int round_ = 0;  // 0: the tile phase
  bool refreshing_ = false;
  std::map<int, std::set<std::int64_t>> per_round_, refreshed_;  // round -> tiles
  int max_open_ = 0;
  std::atomic<int> completed_{0};
  std::atomic<bool> protocol_error_{false};
};

EngineConfig cpu_groups(int n) {
  EngineConfig c;
  c.cpu_groups = n;
  c.cpu_group_threads = 1;
  return c;
}

TEST(MultiDeviceScheduler, TilePhaseDealsEveryTileOnceToSomeWorker) {
  for (bool in_flight : {false, true})
    for (int workers : {1, 2, 5}) {
      const TileGrid g(50, 40, 7, 5);  // 8 x 8 tiles
      ScriptedFamily f(g, in_flight, [](std::int64_t, int) { return false; });
      EngineConfig cfg = cpu_groups(workers);
      const tiling::EngineResult r = tiling::run_tiles(g, f, cfg);
      EXPECT_FALSE(f.protocol_error_) << "in_flight " << in_flight << " workers " << workers;
      EXPECT_EQ(f.per_round_[0].size(), static_cast<std::size_t>(g.count()));
      std::int64_t tiles = 0, border = 0;
      ASSERT_EQ(r.run.workers.size(), static_cast<std::size_t>(workers));
      for (const auto& w : r.run.workers) {
        tiles += w.tiles;
        border += w.border_tiles;
        EXPECT_EQ(w.name.rfind("cpu", 0), 0u) << w.name;
      }
      EXPECT_EQ(tiles, g.count());
      // One border round: every tile was dirty after the tile phase and has a neighbour; then
      // no edge changed.
      EXPECT_EQ(r.border_rounds, 1);
      EXPECT_EQ(border, g.count());
      EXPECT_EQ(r.run.tiles, 64);
      EXPECT_EQ(r.run.tile_width, 7);
      EXPECT_EQ(r.run.tile_height, 5);
      if (in_flight) {
        EXPECT_EQ(f.completed_.load(), 2 * g.count()) << "each begun tile completed once";
        EXPECT_LE(f.max_open_, 2);
      }
    }
}

TEST(MultiDeviceScheduler, BorderRoundsVisitTheNeighboursOfChangedTiles) {
  const TileGrid g(40, 40, 10, 10);  // 4 x 4 tiles
  for (bool diagonal : {true, false}) {
    // Tile 5 (column 1, row 1) changes in border round 1, then nothing changes.
    ScriptedFamily f(g, false, [](std::int64_t t, int round) { return t == 5 && round == 1; });
    EngineConfig cfg = cpu_groups(3);
    cfg.diagonal = diagonal;
    const tiling::EngineResult r = tiling::run_tiles(g, f, cfg);
    EXPECT_FALSE(f.protocol_error_);
    ASSERT_EQ(r.border_rounds, 2);
    EXPECT_EQ(f.per_round_[1].size(), 16u);  // all dirty after the tile phase
    std::set<std::int64_t> want;
    g.for_each_neighbour(5, diagonal, [&](std::int64_t u) { want.insert(u); });
    EXPECT_EQ(f.per_round_[2], want) << "diagonal " << diagonal;
    // Snapshots: all 16 before round 1, only tile 5 before round 2.
    EXPECT_EQ(f.refreshed_[1].size(), 16u);
    EXPECT_EQ(f.refreshed_[2], (std::set<std::int64_t>{5}));
  }
}

TEST(MultiDeviceScheduler, WorkerErrorStopsTheRunWithThatError) {
  const TileGrid g(30, 30, 5, 5);
  for (bool in_flight : {false, true}) {
    ScriptedFamily f(g, in_flight, [](std::int64_t, int) { return false; });
    f.throw_at_ = 17;
    try {
      tiling::run_tiles(g, f, cpu_groups(3));
      FAIL() << "the worker's error must reach the caller";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("scripted failure on tile 17"), std::string::npos) << e.what();
    }
  }
  ScriptedFamily f(g, false, [](std::int64_t, int) { return false; });
  EXPECT_THROW(tiling::run_tiles(g, f, EngineConfig{}), Error) << "no workers";
}

}  // namespace
}  // namespace repix
