// Tile geometry shared by the tiled IWPP code: rectangles, a grid of tiles over an area of the
// image, iteration over a tile's edge and over the neighbours across it, and the snapshot of the
// pixels on both sides of every tile boundary that border rounds read instead of the neighbour
// tiles. Used by the multi-device engine (multi_device.hpp; the area is the whole image) and by
// edt's omp-tiled (the area is the image, or one multi-device tile of a CPU group). Host only.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

namespace repix::tiling {

// Pixels [x0, x1) x [y0, y1) of the image.
struct Rect {
  std::int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::int64_t width() const { return x1 - x0; }
  std::int64_t height() const { return y1 - y0; }
  std::int64_t pixels() const { return width() * height(); }
  bool contains(std::int64_t x, std::int64_t y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

// `area` cut into tiles of tw x th pixels from its top-left corner (the last column and row of
// tiles may be smaller). Tile t is column t % cols(), row t / cols().
class TileGrid {
 public:
  TileGrid(const Rect& area, std::int64_t tw, std::int64_t th)
      : area_(area), tw_(clamp(tw, area.width())), th_(clamp(th, area.height())),
        cols_((area.width() + tw_ - 1) / tw_), rows_((area.height() + th_ - 1) / th_) {}
  // The whole nx x ny image.
  TileGrid(std::int64_t nx, std::int64_t ny, std::int64_t tw, std::int64_t th) : TileGrid(Rect{0, 0, nx, ny}, tw, th) {}

  const Rect& area() const { return area_; }
  std::int64_t tile_width() const { return tw_; }
  std::int64_t tile_height() const { return th_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t count() const { return cols_ * rows_; }
  Rect tile(std::int64_t t) const {
    const std::int64_t x0 = area_.x0 + (t % cols_) * tw_, y0 = area_.y0 + (t / cols_) * th_;
    return {x0, y0, std::min(area_.x1, x0 + tw_), std::min(area_.y1, y0 + th_)};
  }
  // f(u) for every tile u that touches tile t: side by side, or (with `diagonal`) corner to corner.
  template <class F>
  void for_each_neighbour(std::int64_t t, bool diagonal, F&& f) const {
    const std::int64_t cx = t % cols_, cy = t / cols_;
    for (std::int64_t dy = -1; dy <= 1; ++dy)
      for (std::int64_t dx = -1; dx <= 1; ++dx) {
        if ((dx == 0 && dy == 0) || (!diagonal && dx != 0 && dy != 0)) continue;
        const std::int64_t ux = cx + dx, uy = cy + dy;
        if (ux >= 0 && uy >= 0 && ux < cols_ && uy < rows_) f(uy * cols_ + ux);
      }
  }

 private:
  static std::int64_t clamp(std::int64_t t, std::int64_t side) { return t < 1 ? 1 : t > side ? side : t; }
  Rect area_;
  std::int64_t tw_, th_, cols_, rows_;
};

// f(x, y) for every pixel on the edge of r, each once (a 1-pixel-wide r is all edge).
template <class F>
void for_each_edge_pixel(const Rect& r, F&& f) {
  for (std::int64_t y = r.y0; y < r.y1; ++y) {
    if (y == r.y0 || y == r.y1 - 1) {
      for (std::int64_t x = r.x0; x < r.x1; ++x) f(x, y);
    } else {
      f(r.x0, y);
      if (r.x1 - 1 != r.x0) f(r.x1 - 1, y);
    }
  }
}

// f(qx, qy) for every neighbour q of (x, y) that lies outside r but inside `area`: the
// 4-neighbours, and the diagonal ones too with `diagonal`.
template <class F>
void for_each_outside_neighbour(const Rect& r, const Rect& area, std::int64_t x, std::int64_t y, bool diagonal,
                                F&& f) {
  for (std::int64_t dy = -1; dy <= 1; ++dy)
    for (std::int64_t dx = -1; dx <= 1; ++dx) {
      if ((dx == 0 && dy == 0) || (!diagonal && dx != 0 && dy != 0)) continue;
      const std::int64_t qx = x + dx, qy = y + dy;
      if (!area.contains(qx, qy) || r.contains(qx, qy)) continue;
      f(qx, qy);
    }
}

// The rows and columns on both sides of every tile boundary of a grid, copied from the state
// image (E per pixel, `stride` elements a row) between rounds. Whole rows and columns of the
// grid's area are kept, so a pixel next to a boundary is found by one table lookup whichever
// tile it belongs to; the snapshot is small (about 4 / tile edge of the area).
template <class E>
class EdgeSnapshot {
 public:
  EdgeSnapshot(const TileGrid& g, std::int64_t stride)
      : area_(g.area()), stride_(stride), row_slot_(static_cast<std::size_t>(area_.height()), -1),
        col_slot_(static_cast<std::size_t>(area_.width()), -1) {
    std::int64_t rows = 0, cols = 0;
    for (std::int64_t k = 1; k < g.rows(); ++k)
      for (std::int64_t y : {k * g.tile_height() - 1, k * g.tile_height()})
        if (row_slot_[y] < 0) row_slot_[y] = rows++;
    for (std::int64_t k = 1; k < g.cols(); ++k)
      for (std::int64_t x : {k * g.tile_width() - 1, k * g.tile_width()})
        if (col_slot_[x] < 0) col_slot_[x] = cols++;
    rows_.resize(static_cast<std::size_t>(rows * area_.width()));
    cols_.resize(static_cast<std::size_t>(cols * area_.height()));
  }

  // Copies the edge rows and columns of tile r that lie next to a boundary from `state`.
  void refresh(const E* state, const Rect& r) {
    visit_edges(*this, r, state, [](E& snap, const E& now) { snap = now; });
  }
  // True when an edge pixel of tile r that lies next to a boundary differs from its snapshot
  // (compared with ==: a float -0 that became +0 is no change).
  bool differs(const E* state, const Rect& r) const {
    bool d = false;
    visit_edges(*this, r, state, [&d](const E& snap, const E& now) { d |= !(snap == now); });
    return d;
  }
  // The snapshot of pixel (x, y) (image coordinates), which must lie next to a tile boundary.
  E at(std::int64_t x, std::int64_t y) const {
    const std::int64_t ax = x - area_.x0, ay = y - area_.y0, r = row_slot_[ay];
    if (r >= 0) return rows_[r * area_.width() + ax];
    assert(col_slot_[ax] >= 0);
    return cols_[col_slot_[ax] * area_.height() + ay];
  }

 private:
  // f(snapshot element, state element) over tile r's edge rows and columns that have a slot.
  // Self is EdgeSnapshot or const EdgeSnapshot.
  template <class Self, class F>
  static void visit_edges(Self& self, const Rect& r, const E* state, F&& f) {
    const Rect& a = self.area_;
    const std::int64_t s = self.stride_;
    // First and last row, then first and last column; a one-row (column) tile has one.
    for (int k = 0; k < 2 && (k == 0 || r.height() > 1); ++k) {
      const std::int64_t y = k == 0 ? r.y0 : r.y1 - 1, slot = self.row_slot_[y - a.y0];
      if (slot >= 0)
        for (std::int64_t x = r.x0; x < r.x1; ++x) f(self.rows_[slot * a.width() + x - a.x0], state[y * s + x]);
    }
    for (int k = 0; k < 2 && (k == 0 || r.width() > 1); ++k) {
      const std::int64_t x = k == 0 ? r.x0 : r.x1 - 1, slot = self.col_slot_[x - a.x0];
      if (slot >= 0)
        for (std::int64_t y = r.y0; y < r.y1; ++y) f(self.cols_[slot * a.height() + y - a.y0], state[y * s + x]);
    }
  }
  Rect area_;
  std::int64_t stride_;
  std::vector<std::int64_t> row_slot_, col_slot_;  // area row / column -> slot, -1 where none
  std::vector<E> rows_, cols_;
};

}  // namespace repix::tiling
