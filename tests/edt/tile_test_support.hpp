// Host-side pieces of the edt tile tests, shared by the CPU simulation of the queue propagation
// (test_edt_gpu_queue_core.cpp) and the GPU TilePropagator tests (test_edt_gpu_queue.cpp):
// window inputs, the per-window fixed-point check, and a multi-window driver with border rounds
// (what a multi-device engine does with the tile API), parameterised by the window propagator.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "edt/detail.hpp"
#include "edt/propagate.hpp"

namespace repix::test {

inline std::string window_name(const edt::Window& w) {
  return "[" + std::to_string(w.x0) + "," + std::to_string(w.x1) + ")x[" + std::to_string(w.y0) + "," +
         std::to_string(w.y1) + ")";
}

// Window w of img as its own image (same dtype, window-local row-major).
inline HostImage window_input(const HostImage& img, const edt::Window& w) {
  HostImage out(img.dtype(), Shape::d2(w.x1 - w.x0, w.y1 - w.y0));
  const std::size_t es = dtype_size(img.dtype());
  const auto* src = static_cast<const unsigned char*>(img.raw());
  auto* dst = static_cast<unsigned char*>(out.raw());
  const std::size_t row = static_cast<std::size_t>(w.x1 - w.x0) * es;
  for (std::int64_t y = w.y0; y < w.y1; ++y)
    std::memcpy(dst + static_cast<std::size_t>(y - w.y0) * row,
                src + static_cast<std::size_t>(y * img.shape().nx + w.x0) * es, row);
  return out;
}

// "" when the window-local packed `sites` of window w of img are what a finished propagation
// confined to w must leave: every site a background pixel of img inside w (global coordinates);
// a site everywhere when w has any background, none anywhere otherwise; no 8-neighbour inside w
// with a strictly closer site. Otherwise the first violation.
inline std::string window_fixed_point_violation(const HostImage& img, const edt::Window& w,
                                                const std::vector<std::int64_t>& sites) {
  const std::vector<std::uint8_t> bg = edt::background_mask(img, 1);
  const std::int64_t nx = img.shape().nx, ww = w.x1 - w.x0;
  bool any_bg = false;
  for (std::int64_t y = w.y0; y < w.y1; ++y)
    for (std::int64_t x = w.x0; x < w.x1; ++x) any_bg = any_bg || bg[y * nx + x];
  auto at = [&](std::int64_t x, std::int64_t y) { return sites[(y - w.y0) * ww + x - w.x0]; };
  for (std::int64_t y = w.y0; y < w.y1; ++y)
    for (std::int64_t x = w.x0; x < w.x1; ++x) {
      const std::string where = "pixel (" + std::to_string(x) + "," + std::to_string(y) + ") of window " + window_name(w);
      const std::int64_t s = at(x, y);
      if (s == edt::kNoSite) {
        if (any_bg) return where + " has no site";
        continue;
      }
      const std::int64_t sx = edt::packed_x(s), sy = edt::packed_y(s);
      if (s < 0 || !w.contains(sx, sy) || !bg[sy * nx + sx]) return where + " has site " + std::to_string(s) + ", not a background pixel of the window";
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (w.contains(x + dx, y + dy) && edt::sq_to_site(x, y, at(x + dx, y + dy)) < edt::sq_to_site(x, y, s))
            return where + ": its neighbour's site is strictly closer";
    }
  return "";
}

// A window propagator as the driver sees it (host vectors; the GPU one copies to the device).
struct WindowPropagator {
  // Initial pass on window w, given its input: the window-local packed sites.
  std::function<std::vector<std::int64_t>(const edt::Window& w, const HostImage& input)> init;
  // Border round: `sites` has improved pixels `seeds` (window-local); propagate from them.
  std::function<void(const edt::Window& w, std::vector<std::int64_t>& sites, const std::vector<std::uint32_t>& seeds)>
      propagate_from;
};

// An image and where to cut it into windows (each list starts at 0 and ends at the side).
struct Split {
  HostImage img;
  std::vector<std::int64_t> xcuts, ycuts;
};

struct TiledRun {
  std::vector<std::int64_t> sites;  // the whole image's packed sites
  std::int64_t border_rounds = 0;
  std::int64_t border_seeds = 0;
};

// The windows between consecutive cuts (each list starts at 0 and ends at the image's side);
// init on each; then border rounds until none changes anything: each pixel on a window's edge
// takes the strictly closest site among its 8-neighbours in other windows (read from a snapshot
// taken at the start of the round) and the window propagates from the pixels that took one.
inline TiledRun run_tiled(const HostImage& img, const std::vector<std::int64_t>& xcuts,
                          const std::vector<std::int64_t>& ycuts, const WindowPropagator& p) {
  const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
  std::vector<edt::Window> wins;
  for (std::size_t j = 0; j + 1 < ycuts.size(); ++j)
    for (std::size_t i = 0; i + 1 < xcuts.size(); ++i) wins.push_back({xcuts[i], ycuts[j], xcuts[i + 1], ycuts[j + 1]});
  std::vector<std::vector<std::int64_t>> local(wins.size());
  for (std::size_t k = 0; k < wins.size(); ++k) local[k] = p.init(wins[k], window_input(img, wins[k]));
  TiledRun run;
  run.sites.assign(static_cast<std::size_t>(nx * ny), edt::kNoSite);
  auto assemble = [&] {
    for (std::size_t k = 0; k < wins.size(); ++k) {
      const edt::Window& w = wins[k];
      for (std::int64_t y = w.y0; y < w.y1; ++y)
        for (std::int64_t x = w.x0; x < w.x1; ++x) run.sites[y * nx + x] = local[k][(y - w.y0) * (w.x1 - w.x0) + x - w.x0];
    }
  };
  assemble();
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<std::int64_t> snapshot = run.sites;
    for (std::size_t k = 0; k < wins.size(); ++k) {
      const edt::Window& w = wins[k];
      std::vector<std::uint32_t> seeds;
      for (std::int64_t y = w.y0; y < w.y1; ++y)
        for (std::int64_t x = w.x0; x < w.x1; ++x) {
          if (y != w.y0 && y != w.y1 - 1 && x != w.x0 && x != w.x1 - 1) continue;
          const std::int64_t i = (y - w.y0) * (w.x1 - w.x0) + x - w.x0;
          std::int64_t best = local[k][i];
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const std::int64_t qx = x + dx, qy = y + dy;
              if (qx < 0 || qy < 0 || qx >= nx || qy >= ny || w.contains(qx, qy)) continue;
              const std::int64_t s = snapshot[qy * nx + qx];
              if (edt::sq_to_site(x, y, s) < edt::sq_to_site(x, y, best)) best = s;
            }
          if (best != local[k][i]) {
            local[k][i] = best;
            seeds.push_back(static_cast<std::uint32_t>(i));
          }
        }
      if (seeds.empty()) continue;
      changed = true;
      run.border_seeds += static_cast<std::int64_t>(seeds.size());
      p.propagate_from(w, local[k], seeds);
    }
    assemble();
    run.border_rounds += changed;
  }
  return run;
}

}  // namespace repix::test
