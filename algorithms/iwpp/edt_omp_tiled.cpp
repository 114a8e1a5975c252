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
#include <omp.h>

#include <algorithm>

#include "core/nvtx.hpp"
#include "iwpp/edt_detail.hpp"
#include "iwpp/edt_propagate.hpp"

namespace repix::edt {

namespace {

// The rows and columns next to tile borders, copied between rounds.
class BorderSnapshot {
 public:
  BorderSnapshot(std::int64_t nx, std::int64_t ny, std::int64_t tile)
      : nx_(nx), ny_(ny), row_slot_(static_cast<std::size_t>(ny), -1), col_slot_(static_cast<std::size_t>(nx), -1) {
    for (std::int64_t b = tile; b < ny; b += tile)
      for (std::int64_t y : {b - 1, b}) row_slot_[y] = static_cast<std::int64_t>(rows_.size()), rows_.push_back(y);
    for (std::int64_t b = tile; b < nx; b += tile)
      for (std::int64_t x : {b - 1, b}) col_slot_[x] = static_cast<std::int64_t>(cols_.size()), cols_.push_back(x);
    row_data_.resize(rows_.size() * static_cast<std::size_t>(nx));
    col_data_.resize(cols_.size() * static_cast<std::size_t>(ny));
  }
  void take(const std::int64_t* vr, int nt) {
    const std::int64_t nr = static_cast<std::int64_t>(rows_.size()), nc = static_cast<std::int64_t>(cols_.size());
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 0; i < nr; ++i)
      std::copy(vr + rows_[i] * nx_, vr + (rows_[i] + 1) * nx_, row_data_.begin() + i * nx_);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (std::int64_t i = 0; i < nc; ++i)
      for (std::int64_t y = 0; y < ny_; ++y) col_data_[i * ny_ + y] = vr[y * nx_ + cols_[i]];
  }
  // The snapshot of pixel (x, y), which must lie next to a tile border.
  std::int64_t at(std::int64_t x, std::int64_t y) const {
    const std::int64_t r = row_slot_[y];
    return r >= 0 ? row_data_[r * nx_ + x] : col_data_[col_slot_[x] * ny_ + y];
  }

 private:
  std::int64_t nx_, ny_;
  std::vector<std::int64_t> row_slot_, col_slot_, rows_, cols_, row_data_, col_data_;
};

// Offers the snapshot sites of the outside neighbours to the border pixels of tile w; queues
// the pixels that took one. Returns how many did.
std::int64_t seed_border(const Window& w, const Shape& sh, const BorderSnapshot& snap, std::int64_t* vr, Fifo& q) {
  std::int64_t changed = 0;
  auto offer = [&](std::int64_t x, std::int64_t y) {
    std::int64_t& t = vr[y * sh.nx + x];
    std::int64_t best = sq_to_site(x, y, t);
    bool took = false;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const std::int64_t px = x + dx, py = y + dy;
        if (w.contains(px, py) || px < 0 || py < 0 || px >= sh.nx || py >= sh.ny) continue;
        const std::int64_t s = snap.at(px, py);
        const std::int64_t d = sq_to_site(x, y, s);
        if (d < best) {
          best = d;
          t = s;
          took = true;
        }
      }
    if (took) {
      q.push(pack_xy(x, y));
      ++changed;
    }
  };
  for (std::int64_t y = w.y0; y < w.y1; ++y) {
    if (y == w.y0 || y == w.y1 - 1) {
      for (std::int64_t x = w.x0; x < w.x1; ++x) offer(x, y);
    } else {
      offer(w.x0, y);
      if (w.x1 - 1 != w.x0) offer(w.x1 - 1, y);
    }
  }
  return changed;
}

}  // namespace

Result run_omp_tiled(const HostImage& input, const Options& opt) {
  nvtx::Range range("edt/omp-tiled");
  check_input(input);
  const Shape sh = input.shape();
  const std::int64_t nx = sh.nx, ny = sh.ny;
  const std::int64_t T = opt.tile > 0 ? opt.tile : 256;
  const int nt = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  const std::int64_t tx = (nx + T - 1) / T, ty = (ny + T - 1) / T, ntiles = tx * ty;
  auto window = [&](std::int64_t t) {
    const std::int64_t x0 = (t % tx) * T, y0 = (t / tx) * T;
    return Window{x0, y0, std::min(x0 + T, nx), std::min(y0 + T, ny)};
  };
  const std::vector<std::uint8_t> bg = background_mask(input, nt);
  std::vector<std::int64_t> vr(static_cast<std::size_t>(sh.size()));
  Stats st;
  std::vector<char> dirty(static_cast<std::size_t>(ntiles), 1), need(static_cast<std::size_t>(ntiles));
  {
    nvtx::Range r("tiles");
    std::int64_t init = 0, total = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(+ : init, total)
    for (std::int64_t t = 0; t < ntiles; ++t) {
      Fifo q;
      const Window w = window(t);
      const std::int64_t i = init_window(bg.data(), nx, ny, w, vr.data(), q);
      init += i;
      total += i + propagate_window(nx, w, vr.data(), q);
    }
    st.initially_queued = init;
    st.total_queued = total;
    st.passes = 1;
  }
  if (ntiles > 1) {
    nvtx::Range r("borders");
    BorderSnapshot snap(nx, ny, T);
    for (;;) {
      bool any = false;
      for (std::int64_t t = 0; t < ntiles; ++t) {
        const std::int64_t cx = t % tx, cy = t / tx;
        bool n = false;
        for (std::int64_t j = std::max<std::int64_t>(cy - 1, 0); j <= std::min(cy + 1, ty - 1) && !n; ++j)
          for (std::int64_t i = std::max<std::int64_t>(cx - 1, 0); i <= std::min(cx + 1, tx - 1); ++i)
            if ((i != cx || j != cy) && dirty[j * tx + i]) n = true;
        need[t] = n;
        any = any || n;
      }
      if (!any) break;
      snap.take(vr.data(), nt);
      std::int64_t total = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(+ : total)
      for (std::int64_t t = 0; t < ntiles; ++t) {
        dirty[t] = 0;
        if (!need[t]) continue;
        Fifo q;
        const Window w = window(t);
        const std::int64_t c = seed_border(w, sh, snap, vr.data(), q);
        if (c == 0) continue;
        dirty[t] = 1;
        total += c + propagate_window(nx, w, vr.data(), q);
      }
      st.total_queued += total;
      ++st.passes;
    }
  }
  Result res = result_from_packed(sh, vr, opt.want_sites, nt);
  res.stats = st;
  return res;
}

}  // namespace repix::edt
