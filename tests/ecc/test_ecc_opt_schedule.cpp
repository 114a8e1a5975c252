// CPU tests of gpu-opt's work distribution (gpu_opt_schedule.hpp): the geometry split_items()
// gives a launch (every slab of every column exactly once, the dynamic schedule's caps covering
// every item within the int32 sums' 2^26 voxels a block, or fewer for blocks whose sums a cluster
// shares), and the ticket protocol the kernels run (wants_ticket, item_after), replayed with the
// takers' starts and ends in random orders.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ecc/gpu_opt_schedule.hpp"

namespace repix {
namespace {

using namespace ecc::opt::detail;

struct Case {
  SplitParams p;
  std::int64_t s0 = 0, s1 = 0;
  bool dynamic = false;
};

std::string describe(const Case& c) {
  const SplitParams& p = c.p;
  return std::to_string(p.dims) + "D " + std::to_string(p.nx) + "x" + std::to_string(p.ny) + "x" +
         std::to_string(p.nz) + " slabs [" + std::to_string(c.s0) + "," + std::to_string(c.s1) + ") slots " +
         std::to_string(p.slots_b) + " floor " + std::to_string(p.floor) + " head " + std::to_string(p.head_pct) +
         " items " + std::to_string(p.items_per_slot) + " cap " + std::to_string(p.cap_for_tests) +
         " block voxels 2^" + std::to_string(p.block_voxels_log2) +
         (c.dynamic ? " dynamic" : " static");
}

// Random launches: shapes from one column to thousands of slabs, resident blocks from 1 to an
// H100's 3 x 132, floors 1..24, heads 0..100 %, tails of 1..16 items a slot, tests' caps.
Case random_case(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<std::int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
  };
  Case c;
  SplitParams& p = c.p;
  p.dims = std::uniform_int_distribution<int>(0, 1)(rng) ? 3 : 2;
  p.nx = pick({1, 3, 127, 128, 129, 515, 1030, 4100});
  p.ny = p.dims == 3 ? pick({1, 7, 8, 9, 40, 64}) : pick({1, 2, 97, 1500, 3001});
  p.nz = p.dims == 3 ? pick({1, 2, 13, 120, 700}) : 1;
  p.slots_b = pick({1, 2, 3, 44, 132, 264, 396});
  p.floor = pick({1, 3, 6, 12, 16, 24});
  p.head_pct = static_cast<int>(pick({0, 40, 75, 100}));
  p.items_per_slot = static_cast<int>(pick({1, 2, 8, 16}));
  p.cap_for_tests = pick({0, 0, 1, 2});
  p.block_voxels_log2 = static_cast<int>(pick({26, 26, 23, 12}));  // 23: gpu-opt-cluster's; 12: many capped blocks
  const std::int64_t slabs = p.dims == 3 ? p.nz : p.ny;
  c.s0 = std::uniform_int_distribution<std::int64_t>(0, slabs - 1)(rng);
  c.s1 = std::uniform_int_distribution<std::int64_t>(c.s0 + 1, slabs)(rng);
  c.dynamic = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  return c;
}

TEST(EccOptSchedule, ItemsCoverEverySlabOnceWithinTheCaps) {
  std::mt19937 rng(4242);
  std::uint32_t counters[2] = {0, 0};  // never dereferenced on the host
  int with_head = 0, capped = 0;
  for (int n = 0; n < 20000; ++n) {
    const Case c = random_case(rng);
    const SplitParams& p = c.p;
    std::int64_t grid = 0;
    const Geom g = split_items(p, 0, c.s0, c.s1, c.dynamic ? counters : nullptr, grid);
    const std::string what = describe(c);
    const std::int64_t per_band = g.items_x * g.items_y, per_block = p.dims == 2 ? kWarps : 1;
    const std::int64_t nitems = per_band * (g.head_bands + g.items_s);
    ASSERT_GE(grid, 1) << what;
    ASSERT_EQ(g.items_x, (p.nx + kSegX - 1) / kSegX) << what;
    // Items of one in-band index, in order, tile [s0, s1) with no gap and no overlap; every band
    // holds each in-band index once (item = band * per_band + in_band).
    std::int64_t at = c.s0;
    for (std::int64_t item = 0; item < nitems; ++item) {
      const ItemSpan s = item_span(g, item, per_band);
      ASSERT_EQ(s.in_band, item % per_band) << what << " item " << item;
      ASSERT_LT(s.first, s.last) << what << " item " << item;
      if (s.in_band == 0) {
        ASSERT_EQ(s.first, at) << what << " item " << item;
        at = s.last;
      }
    }
    ASSERT_EQ(at, c.s1) << what;
    if (g.head_bands > 0) {
      ++with_head;
      ASSERT_TRUE(c.dynamic) << what;
      ASSERT_LE(g.head_bands * per_band, p.slots_b * per_block) << what << ": more head items than takers";
      ASSERT_GE(g.head_chunk, std::max<std::int64_t>(p.floor, 3)) << what;
    }
    if (g.queue != nullptr) {
      ASSERT_TRUE(c.dynamic) << what;
      ASSERT_GE(g.cap, 1) << what;
      if (p.cap_for_tests > 0) ASSERT_LE(g.cap, p.cap_for_tests) << what;
      if (g.cap < nitems) ++capped;
      // The caps cover every item; a block's items stay within 2^block_voxels_log2 voxels (a
      // single item may exceed it only when one item a taker is all there is: cap 1).
      ASSERT_GE(grid * per_block * g.cap, nitems) << what;
      const std::int64_t block_item_voxels = kSegX * kWarps * std::max(g.chunk, g.head_chunk);
      if (g.cap > 1) ASSERT_LE(g.cap * block_item_voxels, std::int64_t{1} << p.block_voxels_log2) << what;
      ASSERT_LT(nitems + grid * per_block, std::int64_t{1} << 32) << what;
      ASSERT_GT(nitems, grid * per_block) << what << ": counters for a launch with no ticket to hand out";
    } else if (c.dynamic && nitems > grid * per_block) {
      // Dynamic launches go without the counters only where the tickets could not be used.
      ASSERT_GE(nitems + grid * per_block, std::int64_t{1} << 32) << what;
    }
  }
  EXPECT_GT(with_head, 500);  // the draws reach the head and the caps
  EXPECT_GT(capped, 100);
}

// The kernels' loop, replayed: each taker (warp or block) starts its item (taking the next ticket
// when wants_ticket says so), ends it later, and moves to item_after(); starts and ends of all
// takers interleave in a random order, as on the GPU. Every item is processed exactly once, no
// taker exceeds the cap, and the counter stays within 32 bits.
TEST(EccOptSchedule, TicketsHandOutEveryItemOnceInAnyOrder) {
  std::mt19937 rng(777);
  std::uint32_t counters[2] = {0, 0};
  int replayed = 0, by_tickets = 0;
  for (int n = 0; n < 2000; ++n) {
    Case c = random_case(rng);
    c.p.slots_b = std::min<std::int64_t>(c.p.slots_b, 44);  // keep the replay small
    std::int64_t grid = 0;
    const Geom g = split_items(c.p, 0, c.s0, c.s1, c.dynamic ? counters : nullptr, grid);
    const std::string what = describe(c);
    const std::int64_t per_band = g.items_x * g.items_y, per_block = c.p.dims == 2 ? kWarps : 1;
    const std::int64_t nitems = per_band * (g.head_bands + g.items_s), takers = grid * per_block;
    if (nitems > 200000) continue;
    struct Taker {
      std::int64_t item, taken = 1;
      bool busy = false, took = false;
      std::uint32_t ticket = 0;
    };
    std::vector<Taker> t(static_cast<std::size_t>(takers));
    std::vector<int> done(static_cast<std::size_t>(nitems), 0);
    std::vector<std::size_t> active;
    for (std::int64_t k = 0; k < takers; ++k) {
      t[static_cast<std::size_t>(k)].item = k;  // a warp's first item: its launch index
      if (k < nitems) active.push_back(static_cast<std::size_t>(k));
    }
    std::uint64_t next_ticket = 0;
    while (!active.empty()) {
      const std::size_t at = std::uniform_int_distribution<std::size_t>(0, active.size() - 1)(rng);
      Taker& w = t[active[at]];
      if (!w.busy) {  // the item starts: the ticket for the next one is taken now
        w.busy = true;
        w.took = wants_ticket(g, w.taken);
        if (w.took) w.ticket = static_cast<std::uint32_t>(next_ticket++);
        continue;
      }
      ASSERT_EQ(done[static_cast<std::size_t>(w.item)]++, 0) << what << " item " << w.item << " twice";
      w.busy = false;
      w.item = item_after(g, w.item, takers, w.took, w.ticket, nitems);
      if (w.item < nitems) {
        ++w.taken;
        if (g.queue != nullptr) ASSERT_LE(w.taken, g.cap) << what;
      } else {
        active[at] = active.back();
        active.pop_back();
      }
    }
    for (std::int64_t i = 0; i < nitems; ++i) ASSERT_EQ(done[static_cast<std::size_t>(i)], 1) << what << " item " << i;
    ASSERT_LT(next_ticket, std::uint64_t{1} << 32) << what;
    ++replayed;
    if (g.queue != nullptr && nitems > takers) ++by_tickets;  // some items went by tickets
  }
  EXPECT_GT(replayed, 1500);
  EXPECT_GT(by_tickets, 200);
}

}  // namespace
}  // namespace repix
