// Algorithm 3's two phases on a rectangular window of the image, shared by `seq` (one window:
// the whole image), `omp-tiled` (one window per tile) and multi-device's CPU groups and border
// rounds. Propagation never leaves the window; border rounds carry waves across tile borders.
#pragma once
#include <cstdint>
#include <limits>

#include "edt/detail.hpp"
#include "core/tiling/tiles.hpp"

namespace repix::edt {

using Window = tiling::Rect;  // [x0, x1) x [y0, y1)

// Lines 2-5: sites of the window's pixels (themselves on background, none on foreground), and
// the background pixels with a foreground 8-neighbour inside the window queued. Returns the count.
inline std::int64_t init_window(const std::uint8_t* bg, std::int64_t nx, std::int64_t, const Window& w,
                                std::int64_t* vr, Fifo& q) {
  std::int64_t queued = 0;
  for (std::int64_t y = w.y0; y < w.y1; ++y)
    for (std::int64_t x = w.x0; x < w.x1; ++x) vr[y * nx + x] = bg[y * nx + x] ? pack_xy(x, y) : kNoSite;
  for (std::int64_t y = w.y0; y < w.y1; ++y)
    for (std::int64_t x = w.x0; x < w.x1; ++x) {
      if (!bg[y * nx + x]) continue;
      bool fg_neighbour = false;
      for (int dy = -1; dy <= 1 && !fg_neighbour; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (w.contains(x + dx, y + dy) && !bg[(y + dy) * nx + x + dx]) {
            fg_neighbour = true;
            break;
          }
      if (fg_neighbour) {
        q.push(pack_xy(x, y));
        ++queued;
      }
    }
  return queued;
}

// Lines 7-12: until the queue is empty, offer the dequeued pixel's site to its 8 neighbours in
// the window; a neighbour takes it when strictly closer and is queued. Returns the enqueues.
// With a `budget`, stops once that many were queued: the pixels left in the queue are then the
// only ones whose site may still improve a neighbour (a caller finishes from them elsewhere).
inline std::int64_t propagate_window(std::int64_t nx, const Window& w, std::int64_t* vr, Fifo& q,
                                     std::int64_t budget = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t queued = 0;
  while (!q.empty() && queued < budget) {
    const std::int64_t p = q.pop();
    const std::int64_t px = packed_x(p), py = packed_y(p);
    const std::int64_t s = vr[py * nx + px];
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const std::int64_t x = px + dx, y = py + dy;
        if ((dx == 0 && dy == 0) || !w.contains(x, y)) continue;
        std::int64_t& t = vr[y * nx + x];
        if (sq_to_site(x, y, s) < sq_to_site(x, y, t)) {
          t = s;
          q.push(pack_xy(x, y));
          ++queued;
        }
      }
  }
  return queued;
}

// A border round's pull (omp-tiled's micro-tiles, multi-device's tiles): each edge pixel of w is
// offered the sites site_at(qx, qy) of its 8-neighbours outside w but inside `area` (taken from
// a snapshot, so neighbours being written meanwhile are never read) and takes a strictly closer
// one; seed(x, y) is called for each pixel that took one. Returns how many did.
template <class SiteAt, class Seed>
std::int64_t offer_across_edges(const Window& w, const Window& area, std::int64_t nx, std::int64_t* vr,
                                SiteAt&& site_at, Seed&& seed) {
  std::int64_t took = 0;
  tiling::for_each_edge_pixel(w, [&](std::int64_t x, std::int64_t y) {
    std::int64_t& t = vr[y * nx + x];
    std::int64_t best = sq_to_site(x, y, t);
    bool closer = false;
    tiling::for_each_outside_neighbour(w, area, x, y, true, [&](std::int64_t qx, std::int64_t qy) {
      const std::int64_t s = site_at(qx, qy), d = sq_to_site(x, y, s);
      if (d < best) {
        best = d;
        t = s;
        closer = true;
      }
    });
    if (closer) {
      seed(x, y);
      ++took;
    }
  });
  return took;
}

// omp-tiled's algorithm on window `outer` (omp_tiled.cpp): tiles of `tile` pixels inside it,
// each initialised from `bg` and propagated on its own by `threads` OpenMP threads, then border
// rounds on a snapshot until no tile takes a closer site; `outer`'s border is a wall. Writes the
// sites of `outer`'s pixels in vr (nx a row); adds to st (passes += 1 + border rounds).
void tiled_propagate(const std::uint8_t* bg, std::int64_t nx, const Window& outer, std::int64_t tile, int threads,
                     std::int64_t* vr, Stats& st);

}  // namespace repix::edt
