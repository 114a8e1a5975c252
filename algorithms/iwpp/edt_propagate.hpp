// Algorithm 3's two phases on a rectangular window of the image, shared by `seq` (one window:
// the whole image) and `omp-tiled` (one window per tile). Propagation never leaves the window;
// omp-tiled's border rounds carry waves across tile borders.
#pragma once
#include <cstdint>

#include "iwpp/edt_detail.hpp"

namespace repix::edt {

struct Window {
  std::int64_t x0, y0, x1, y1;  // [x0, x1) x [y0, y1)
  bool contains(std::int64_t x, std::int64_t y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

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
inline std::int64_t propagate_window(std::int64_t nx, const Window& w, std::int64_t* vr, Fifo& q) {
  std::int64_t queued = 0;
  while (!q.empty()) {
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

}  // namespace repix::edt
