// omp-tiled: the tile-based CPU parallelisation of Teodoro et al. (sections 4 and 5.1).
//
// Tile propagation (TP): the image is cut into square tiles; every tile is reconstructed on its
// own by FH (raster + anti-raster scans, then a tile-local FIFO), its border acting as a wall.
// Tiles go to threads dynamically (their costs differ a lot), and a tile's J and mask stay in the
// core's cache while it is worked on, which is what makes this scale where omp-nontiled does not.
//
// Border propagation (BP) rounds: the one-pixel rows and columns on both sides of every tile
// boundary are kept in a snapshot (refreshed each round for the tiles whose edges changed); then
// every tile next to a tile whose edge changed pulls the
// values across its edges from the snapshot (J(p) <- min(max J(q outside), I(p)) when larger),
// queues the pixels it raised and propagates them inside the tile. Reading the snapshot instead
// of the neighbour tiles keeps the rounds free of data races; values only grow, so a stale value
// is merely late, and the next round delivers what changed. When a round changes no tile edge,
// every neighbour pair inside and across tiles satisfies J(q) >= min(J(p), I(q)): J is the
// reconstruction.
//
// Tile size: Options::tile, or automatic: J + mask of a tile within ~512 KiB (512 for uint8, 362
// for uint16, 256 for float32), halved down to 64 until there are at least 4 tiles per thread.
// Border rounds: the pulled seeds feed the tile's FIFO; when a wave sweeps the tile (more than a
// sixteenth of its pixels queued) FH takes over, scans first.
// Stats: initially_queued / total_queued summed over tiles and rounds; passes = BP rounds.
// The algorithm runs on any window of the image (detail::tiled_reconstruct): multi-device's CPU
// groups run it on one of their large tiles, the paper's multi-level tiling (Figure 7, bottom).
#include <omp.h>

#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {

std::int64_t auto_tile(std::int64_t nx, std::int64_t ny, int threads, std::size_t elem) {
  // J + mask of one tile within ~512 KiB (a core's share of L2 on current server CPUs).
  std::int64_t ts = elem == 1 ? 512 : elem == 2 ? 362 : 256;
  auto tiles = [&](std::int64_t t) { return ((nx + t - 1) / t) * ((ny + t - 1) / t); };
  while (ts > 64 && tiles(ts) < 4 * static_cast<std::int64_t>(threads)) ts /= 2;
  return ts;
}

}  // namespace

namespace detail {

template <class T, int Conn>
void tiled_reconstruct(const Window<T>& outer, std::int64_t tile, int raster_scans, int threads, Stats& st) {
  // Coordinates are the image's; the snapshot lines are indexed from the window's corner.
  const std::int64_t X0 = outer.x0, Y0 = outer.y0, W = outer.x1 - outer.x0, H = outer.y1 - outer.y0;
  const std::int64_t s = outer.stride;
  T* j = outer.J;
  const T* m = outer.I;
  const std::int64_t ts = tile > 0 ? tile : auto_tile(W, H, threads, sizeof(T));
  const std::int64_t ntx = (W + ts - 1) / ts, nty = (H + ts - 1) / ts, ntiles = ntx * nty;
  threads = static_cast<int>(std::min<std::int64_t>(std::max(1, threads), ntiles));  // no idle team members
  auto window = [&](std::int64_t t) {
    const std::int64_t tx = t % ntx, ty = t / ntx;
    return Window<T>{j, m, s, X0 + tx * ts, Y0 + ty * ts, X0 + std::min(W, (tx + 1) * ts), Y0 + std::min(H, (ty + 1) * ts)};
  };

  // Snapshot of both sides of every internal boundary: for horizontal boundary k (y = Y0 + k*ts)
  // rows y-1 ("above") and y ("below"); for vertical boundary k (x = X0 + k*ts) columns x-1
  // ("left") and x ("right").
  std::vector<T> hsnap(static_cast<std::size_t>(2 * nty * W)), vsnap(static_cast<std::size_t>(2 * ntx * H));
  auto above = [&](std::int64_t k) { return hsnap.data() + (2 * k) * W; };
  auto below = [&](std::int64_t k) { return hsnap.data() + (2 * k + 1) * W; };
  auto left = [&](std::int64_t k) { return vsnap.data() + (2 * k) * H; };
  auto right = [&](std::int64_t k) { return vsnap.data() + (2 * k + 1) * H; };

  std::vector<PixelQueue> queues(static_cast<std::size_t>(threads));
  std::vector<std::uint8_t> dirty(static_cast<std::size_t>(ntiles), 1);
  std::vector<std::int64_t> active, changed_tiles;
  std::int64_t initially = 0, total = 0;

  // TP: every tile on its own.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : initially, total)
  for (std::int64_t t = 0; t < ntiles; ++t) {
    Stats local;
    fast_hybrid<T, Conn>(window(t), raster_scans, queues[omp_get_thread_num()], local);
    initially += local.initially_queued;
    total += local.total_queued;
  }

  // BP rounds until no tile edge changes.
  for (;;) {
    active.clear();
    for (std::int64_t t = 0; t < ntiles; ++t) {
      const std::int64_t tx = t % ntx, ty = t / ntx;
      bool near_dirty = false;
      for (std::int64_t dy = -1; dy <= 1 && !near_dirty; ++dy)
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          if ((dx == 0 && dy == 0) || (Conn == 4 && dx != 0 && dy != 0)) continue;
          const std::int64_t ux = tx + dx, uy = ty + dy;
          if (ux >= 0 && ux < ntx && uy >= 0 && uy < nty && dirty[uy * ntx + ux]) {
            near_dirty = true;
            break;
          }
        }
      if (near_dirty) active.push_back(t);
    }
    if (active.empty()) break;
    ++st.passes;
    // Refresh the snapshot where it is stale: the edges of the tiles that changed them (the
    // others still equal their snapshot, as the dirty test found). Each tile writes only its
    // own edge segments.
    changed_tiles.clear();
    for (std::int64_t t = 0; t < ntiles; ++t)
      if (dirty[t]) changed_tiles.push_back(t);
    const auto nchanged = static_cast<std::int64_t>(changed_tiles.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
    for (std::int64_t c = 0; c < nchanged; ++c) {
      const std::int64_t t = changed_tiles[c], tx = t % ntx, ty = t / ntx;
      const Window<T> w = window(t);
      const auto row_bytes = static_cast<std::size_t>(w.x1 - w.x0) * sizeof(T);
      if (ty > 0) std::memcpy(below(ty) + (w.x0 - X0), j + w.y0 * s + w.x0, row_bytes);
      if (ty + 1 < nty) std::memcpy(above(ty + 1) + (w.x0 - X0), j + (w.y1 - 1) * s + w.x0, row_bytes);
      for (std::int64_t y = w.y0; y < w.y1; ++y) {
        if (tx > 0) right(tx)[y - Y0] = j[y * s + w.x0];
        if (tx + 1 < ntx) left(tx + 1)[y - Y0] = j[y * s + w.x1 - 1];
      }
    }
    std::fill(dirty.begin(), dirty.end(), 0);
    const auto nactive = static_cast<std::int64_t>(active.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : total)
    for (std::int64_t a = 0; a < nactive; ++a) {
      const std::int64_t t = active[a], tx = t % ntx, ty = t / ntx;
      const Window<T> w = window(t);
      PixelQueue& q = queues[omp_get_thread_num()];
      q.clear();
      // Raise p to the best of its outside neighbours (snapshot values), capped by the mask.
      auto pull = [&](std::int64_t x, std::int64_t y, T best) {
        T& jp = j[y * s + x];
        if (jp < best) {
          const T ip = m[y * s + x];
          if (ip != jp) {
            jp = vmin(best, ip);
            q.push(x, y);
          }
        }
      };
      // Best value among positions c-1, c, c+1 (8-connectivity) or c (4) of a snapshot line
      // of length n.
      auto best3 = [&](const T* line, std::int64_t c, std::int64_t n) {
        T v = line[c];
        if (Conn == 8) {
          if (c > 0) v = vmax(v, line[c - 1]);
          if (c + 1 < n) v = vmax(v, line[c + 1]);
        }
        return v;
      };
      if (ty > 0)
        for (std::int64_t x = w.x0; x < w.x1; ++x) pull(x, w.y0, best3(above(ty), x - X0, W));
      if (ty + 1 < nty)
        for (std::int64_t x = w.x0; x < w.x1; ++x) pull(x, w.y1 - 1, best3(below(ty + 1), x - X0, W));
      if (tx > 0)
        for (std::int64_t y = w.y0; y < w.y1; ++y) pull(w.x0, y, best3(left(tx), y - Y0, H));
      if (tx + 1 < ntx)
        for (std::int64_t y = w.y0; y < w.y1; ++y) pull(w.x1 - 1, y, best3(right(tx + 1), y - Y0, H));
      if (q.empty()) continue;
      total += static_cast<std::int64_t>(q.size());
      // FIFO from the seeds, with a budget of 1/16 of the tile's pixels: past that, a wave
      // is sweeping the tile (a frame marker's flood), and FH's two scans do it far cheaper
      // than a pixel-by-pixel FIFO (~1-4 ns vs ~35 ns a pixel). FH may take over at any point:
      // J is still between the marker and the result, and FH from any such J gives the tile's
      // reconstruction.
      const std::int64_t budget = (w.x1 - w.x0) * (w.y1 - w.y0) / 16;
      total += propagate<T, Conn>(w, q, budget);
      if (!q.empty()) {
        Stats local;
        fast_hybrid<T, Conn>(w, 1, q, local);
        total += local.total_queued;
      }
      // Did an edge that a neighbour reads change? Compare with the snapshot of it.
      const auto row_bytes = static_cast<std::size_t>(w.x1 - w.x0) * sizeof(T);
      bool changed = false;
      if (ty > 0) changed |= std::memcmp(below(ty) + (w.x0 - X0), j + w.y0 * s + w.x0, row_bytes) != 0;
      if (ty + 1 < nty) changed |= std::memcmp(above(ty + 1) + (w.x0 - X0), j + (w.y1 - 1) * s + w.x0, row_bytes) != 0;
      for (std::int64_t y = w.y0; y < w.y1 && !changed; ++y)
        changed = (tx > 0 && !(right(tx)[y - Y0] == j[y * s + w.x0])) ||
                  (tx + 1 < ntx && !(left(tx + 1)[y - Y0] == j[y * s + w.x1 - 1]));
      dirty[t] = changed;
    }
  }
  st.initially_queued += initially;
  st.total_queued += total;
}

#define REPIX_TILED_RECONSTRUCT(T)                                                                             \
  template void tiled_reconstruct<T, 4>(const Window<T>&, std::int64_t, int, int, Stats&);                     \
  template void tiled_reconstruct<T, 8>(const Window<T>&, std::int64_t, int, int, Stats&);
REPIX_TILED_RECONSTRUCT(std::uint8_t)
REPIX_TILED_RECONSTRUCT(std::uint16_t)
REPIX_TILED_RECONSTRUCT(float)
#undef REPIX_TILED_RECONSTRUCT

}  // namespace detail

namespace {

// The whole image as the one outer window.
struct Tiled {
  HostImage& J;
  const HostImage& mask;
  const Options& opt;
  Stats& st;
  int threads;

  template <class T, int Conn>
  void run() const {
    const Shape& sh = mask.shape();
    detail::tiled_reconstruct<T, Conn>(detail::Window<T>{J.data<T>(), mask.data<T>(), sh.nx, 0, 0, sh.nx, sh.ny},
                                       opt.tile, opt.raster_scans, threads, st);
  }
};

}  // namespace

Result run_omp_tiled(const HostImage& marker, const HostImage& mask, const Options& opt) {
  const int threads = detail::thread_count(opt);
  if (opt.tile < 0) throw Error("tile size must be positive, got " + std::to_string(opt.tile));
  return detail::run_variant("reconstruct/omp-tiled", marker, mask, opt, threads,
                             [&](HostImage& J, Stats& st) { return Tiled{J, mask, opt, st, threads}; });
}

}  // namespace repix::reconstruct
