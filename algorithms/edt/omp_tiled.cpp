// `omp-tiled`: Algorithm 3 on tiles in parallel (the paper's tile-based CPU strategy), then
// border rounds until stable.
//
//  1. Every tile runs init + FIFO propagation confined to itself (OpenMP over tiles).
//  2. A round: the rows and columns on both sides of every tile border are copied to a snapshot;
//     then every tile next to a tile that changed in the previous round offers the snapshot's
//     sites of the outside 8-neighbours of its border pixels to those pixels (strictly closer
//     wins) and propagates inside itself again. Rounds repeat until no tile changes.
// Tiles write only their own pixels and read other tiles' pixels only from the snapshot, so the
// parallel phases have no data race. When a round changes nothing, every pixel is a fixed point
// of the propagation rule against all 8 neighbours (inside tiles: the FIFO ran dry; across
// borders: the last round found nothing closer), which is the property check_propagation checks;
// which equidistant site a pixel keeps may differ from `seq`.
// The algorithm runs on any window of the image (tiled_propagate): multi-device's CPU groups run
// it on one of their large tiles (the paper's multi-level tiling), with the window's border as a
// wall; the snapshot and the pull are the tile code shared with multi-device (tiles.hpp,
// offer_across_edges).
#include <omp.h>

#include <algorithm>

#include "core/nvtx.hpp"
#include "edt/detail.hpp"
#include "edt/propagate.hpp"

namespace repix::edt {

void tiled_propagate(const std::uint8_t* bg, std::int64_t nx, const Window& outer, std::int64_t tile, int threads,
                     std::int64_t* vr, Stats& st) {
  const tiling::TileGrid grid(outer, tile, tile);
  const std::int64_t ntiles = grid.count();
  std::vector<char> dirty(static_cast<std::size_t>(ntiles), 1), need(static_cast<std::size_t>(ntiles));
  {
    nvtx::Range r("tiles");
    std::int64_t init = 0, total = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : init, total)
    for (std::int64_t t = 0; t < ntiles; ++t) {
      Fifo q;
      const Window w = grid.tile(t);
      const std::int64_t i = init_window(bg, nx, 0, w, vr, q);
      init += i;
      total += i + propagate_window(nx, w, vr, q);
    }
    st.initially_queued += init;
    st.total_queued += total;
    st.passes += 1;
  }
  if (ntiles == 1) return;
  nvtx::Range r("borders");
  tiling::EdgeSnapshot<std::int64_t> snap(grid, nx);
  for (;;) {
    bool any = false;
    for (std::int64_t t = 0; t < ntiles; ++t) {
      bool n = false;
      grid.for_each_neighbour(t, true, [&](std::int64_t u) { n = n || dirty[u]; });
      need[t] = n;
      any = any || n;
    }
    if (!any) break;
    // Only the tiles that changed have stale edges in the snapshot.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (std::int64_t t = 0; t < ntiles; ++t)
      if (dirty[t]) snap.refresh(vr, grid.tile(t));
    std::int64_t total = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : total)
    for (std::int64_t t = 0; t < ntiles; ++t) {
      dirty[t] = 0;
      if (!need[t]) continue;
      Fifo q;
      const Window w = grid.tile(t);
      const std::int64_t c = offer_across_edges(
          w, outer, nx, vr, [&](std::int64_t x, std::int64_t y) { return snap.at(x, y); },
          [&](std::int64_t x, std::int64_t y) { q.push(pack_xy(x, y)); });
      if (c == 0) continue;
      dirty[t] = 1;
      total += c + propagate_window(nx, w, vr, q);
    }
    st.total_queued += total;
    ++st.passes;
  }
}

Result run_omp_tiled(const HostImage& input, const Options& opt) {
  nvtx::Range range("edt/omp-tiled");
  check_input(input);
  const Shape sh = input.shape();
  const int nt = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  const std::vector<std::uint8_t> bg = background_mask(input, nt);
  std::vector<std::int64_t> vr(static_cast<std::size_t>(sh.size()));
  Stats st;
  tiled_propagate(bg.data(), sh.nx, Window{0, 0, sh.nx, sh.ny}, opt.tile > 0 ? opt.tile : 256, nt, vr.data(), st);
  Result res = result_from_packed(sh, vr, opt.want_sites, nt);
  res.stats = st;
  return res;
}

}  // namespace repix::edt
