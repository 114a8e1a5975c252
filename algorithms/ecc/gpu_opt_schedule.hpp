// gpu-opt's work items and how warps (2D) and blocks (3D) take them: the launch geometry the
// engine computes (split_items), where an item lies (item_span) and the ticket protocol's steps
// (wants_ticket, item_after). Host and device (REPIX_HD), so that the CPU tests
// (tests/ecc/test_ecc_opt_schedule.cpp) check the code the kernels and the engine run. See
// NOTES-gpu-opt.md, "Dynamic schedule".
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/hd.hpp"

namespace repix::ecc::opt::detail {

constexpr int kRun = 4;                    // voxels per thread along x
constexpr int kSegX = 32 * kRun;           // columns per warp (and per 3D tile)
constexpr int kWarps = 8;                  // warps per block

// A launch's geometry (split_items): the slabs it computes and how they are cut into work items.
struct Geom {
  std::int64_t nx = 1, ny = 1, nz = 1;     // 2D: nz = 1, slabs are rows
  std::int64_t b0 = 0;                     // image slab of the buffer's first slab
  std::int64_t s0 = 0, s1 = 0;             // slabs to compute
  std::int64_t items_x = 1, items_y = 1, items_s = 1;
  std::int64_t chunk = 1;                  // slabs per work item (after the head)
  // The dynamic schedule's head: its first head_bands * (items a band) items have head_chunk slabs
  // each (item_span), one a warp (2D) or block (3D); items_s bands of `chunk` slabs follow.
  std::int64_t head_bands = 0, head_chunk = 0;
  // The dynamic schedule's counters (wants_ticket): [0] the next ticket, [1] the blocks done; zero
  // between launches. nullptr: the static schedule (also a dynamic launch with no more items than
  // takers, split_items).
  std::uint32_t* queue = nullptr;
  std::int64_t cap = 1;                    // dynamic: the most items a warp (2D) or block (3D) takes
  // gpu-opt-sampled16: the launch works only where *gate == gate_open (a sample of the image's values
  // chose one of two kernels on the GPU, Engine::accumulate); nullptr: always. Read by the 2D uint16
  // accumulating kernels only, before anything else, so the other kernel's blocks return at once.
  const std::uint32_t* gate = nullptr;
  std::uint32_t gate_open = 0;
};

// Static: a warp (2D) or block (3D) takes the item of its launch index, then every grid stride
// after it, which balances only when items cost alike. On GRF data they do not: Nsight Compute of
// the 2D kernel at 8192^2 (H100) had the busiest SM sub-partition execute 22 % more
// instructions than the mean (uniform data: 3 %), and warps stalled at the block's last barrier,
// waiting for a slow sibling, 1.04 per issue against 0.23. Dynamic (Geom::queue): the first item
// is the same, each later one a ticket from a per-launch counter, so whoever is done first takes
// the next. The ticket for the next item is taken as an item starts, its atomic's latency hidden
// behind the item (release_queue in gpu_opt_kernels.cuh zeroes the counter after a launch). At most
// Geom::cap items each keep a block's int32 sums to 2^26 voxels (SplitParams::block_voxels_log2);
// split_items() sizes the grid so that the caps cover every item.

// Item `item`'s place: its index within its band (`per_band` items a band) and its slabs
// [first, last): the head's bands of head_chunk slabs, then bands of `chunk` slabs.
struct ItemSpan {
  std::int64_t in_band, first, last;
};
REPIX_HD ItemSpan item_span(const Geom& g, std::int64_t item, std::int64_t per_band) {
  const std::int64_t head_items = g.head_bands * per_band;
  const bool head = item < head_items;
  const std::int64_t j = head ? item : item - head_items, band = j / per_band, chunk = head ? g.head_chunk : g.chunk;
  ItemSpan s;
  s.in_band = j - band * per_band;
  s.first = g.s0 + (head ? 0 : g.head_bands * g.head_chunk) + band * chunk;
  s.last = s.first + chunk < g.s1 ? s.first + chunk : g.s1;
  return s;
}

// Whether a warp (block) takes a ticket after its `taken`-th item (uniform across it).
REPIX_HD bool wants_ticket(const Geom& g, std::int64_t taken) {
  return g.queue != nullptr && taken < g.cap;
}
// The item after `item`: the static stride's, the ticket's (tickets count from `stride`, past every
// first item), or none (nitems) when no ticket was taken.
REPIX_HD std::int64_t item_after(const Geom& g, std::int64_t item, std::int64_t stride, bool took,
                                  std::uint32_t ticket, std::int64_t nitems) {
  if (g.queue == nullptr) return item + stride;
  return took ? stride + static_cast<std::int64_t>(ticket) : nitems;
}

// What a launch's geometry depends on besides its slabs.
struct SplitParams {
  int dims = 2;                     // 2 (also 1D) or 3
  std::int64_t nx = 1, ny = 1, nz = 1;
  std::int64_t slots_b = 1;         // blocks resident at once (blocks an SM x SMs)
  std::int64_t floor = 1;           // least slabs an item (min_chunk_2d / _3d)
  int head_pct = 0;                 // dynamic: the head's share of the slabs in percent
  int items_per_slot = 1;           // dynamic: the tail's items a warp (2D) or block (3D) slot
  std::int64_t cap_for_tests = 0;   // > 0: at most this many items a taker
  // log2 of the most voxels a block takes in a launch: 26 keeps a block's int32 sums far from
  // overflow; blocks that share their sums with a cluster's others take fewer (kClusterVoxelsLog2).
  int block_voxels_log2 = 26;
  int block_warps = kWarps;         // 2D: warps a block (the 16-bit shared bins' blocks have 24)
};

// The geometry of a launch over slabs [s0, s1) of a buffer whose first slab is image slab b0, and
// its grid. `queue`: the lane's dynamic-schedule counters, or nullptr for the static schedule.
inline Geom split_items(const SplitParams& p, std::int64_t b0, std::int64_t s0, std::int64_t s1,
                        std::uint32_t* queue, std::int64_t& grid) {
  Geom g;
  g.nx = p.nx;
  g.ny = p.ny;
  g.nz = p.dims == 3 ? p.nz : 1;
  g.b0 = b0;
  g.s0 = s0;
  g.s1 = s1;
  const std::int64_t slabs = s1 - s0;
  g.items_x = (p.nx + kSegX - 1) / kSegX;
  g.items_y = p.dims == 3 ? (p.ny + kWarps - 1) / kWarps : 1;
  // A band of slabs is cut into `per_band` items (2D: 128-column segments taken by warps; 3D:
  // 128 x 8 tiles taken by blocks); `takers` warps or blocks are resident at once.
  const std::int64_t per_band = g.items_x * g.items_y, per_block = p.dims == 2 ? p.block_warps : 1;
  const std::int64_t takers = p.slots_b * per_block;
  const bool dynamic = queue != nullptr;
  // Slabs an item: ~`per` items a taker over `n` slabs, at least the floor (an item's warm-up
  // costs 2 slabs), in whole 3-slab steps of the kernels' loops, at most `n`.
  auto chunk_for = [&](std::int64_t n, std::int64_t per) {
    std::int64_t c = (per_band * n + per * takers - 1) / (per * takers);
    c = (std::max(c, p.floor) + 2) / 3 * 3;
    return std::max<std::int64_t>(1, std::min(c, n));
  };
  // Dynamic: the head -- one item a taker, head_pct % of the slabs -- then a tail of small items
  // taken by tickets: whoever is done first takes the next. Static (gpu-opt-static): 2 items a
  // warp slot in 2D, 1 a block slot in 3D, as measured before the tickets.
  std::int64_t tail = slabs;
  if (dynamic && p.head_pct > 0 && takers / per_band > 0) {
    const std::int64_t bands = takers / per_band;
    const std::int64_t chunk = slabs * p.head_pct / 100 / bands / 3 * 3;
    if (chunk >= p.floor && chunk >= 3) {
      g.head_bands = bands;
      g.head_chunk = chunk;
      tail = slabs - bands * chunk;
    }
  }
  g.chunk = chunk_for(std::max<std::int64_t>(tail, 1), dynamic ? p.items_per_slot : (p.dims == 2 ? 2 : 1));
  g.items_s = (tail + g.chunk - 1) / g.chunk;
  const std::int64_t items = per_band * (g.head_bands + g.items_s);
  grid = std::min<std::int64_t>((items + per_block - 1) / per_block, p.slots_b);
  // Block-private int32 sums stay far from overflow: at most 2^block_voxels_log2 voxels per block.
  const std::int64_t slab_elems = p.dims == 3 ? p.nx * p.ny : p.nx;
  grid = std::max<std::int64_t>(grid, ((slabs * slab_elems) >> p.block_voxels_log2) + 1);
  grid = std::max<std::int64_t>(1, std::min<std::int64_t>(grid, (items + per_block - 1) / per_block));
  // Dynamic: a warp (2D) or block (3D) takes at most `cap` items, 2^block_voxels_log2 voxels a
  // block, and the grid grows until the caps cover every item. Tickets count past the items by one
  // a taker: beyond 32 bits the static schedule, which never gets there (2^32 items are 2^39+
  // voxels).
  if (dynamic && items + grid * per_block < (std::int64_t{1} << 32)) {
    const std::int64_t block_item_voxels = kSegX * kWarps * std::max(g.chunk, g.head_chunk);  // 2D: 8 warps' items; 3D: one
    // (kWarps even for the 16-bit shared bins' 24-warp blocks: their counters are kept exact by
    // take-backs, not by a cap on a block's voxels.)
    g.cap = std::max<std::int64_t>(1, (std::int64_t{1} << p.block_voxels_log2) / block_item_voxels);
    if (p.cap_for_tests > 0) g.cap = std::min(g.cap, p.cap_for_tests);
    grid = std::max(grid, (items + g.cap * per_block - 1) / (g.cap * per_block));
    // No more items than takers (a small image, a pipeline's chunk): each takes its first item
    // and no ticket could give it another, so the launch goes without the counters: no ticket's
    // atomic on one address from every warp, no release_queue fence and count at the block's end.
    if (items > grid * per_block) g.queue = queue;
  }
  return g;
}

}  // namespace repix::ecc::opt::detail
