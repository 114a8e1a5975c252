// seq-qb: Vincent's queue-based reconstruction (QB): a FIFO seeded from the maxima of the
// marker, then the same propagation phase as FH, with no raster scan.
//
// Seeds. Vincent seeds the FIFO with the (boundary) pixels of the marker's regional maxima. With
// the propagation test of Algorithm 2 (J(q) < J(p) and I(q) != J(q)) that is not enough: a pixel
// already at its mask value is never raised, hence never re-queued, and whatever it should pass
// on is lost (1D: marker [5 3 0], mask [5 3 3] stays [5 3 0] instead of [5 3 3]; a saturated
// pixel inside a plateau strands the rest of the plateau the same way). So the seeds here are
// every pixel that can raise a neighbour now (some q with J(q) < J(p) and J(q) < I(q)) and that
// no neighbour can raise (no neighbour above it, or J(p) = I(p)): the local maxima of the
// marker, which include every regional-maximum seed of Vincent's that can propagate. Any other
// pixel that can propagate has a higher neighbour that is processed (by induction from the top
// value down) and strictly raises it, so it is queued then, with a larger value. Found in one
// O(n) scan. Stats: queued counts, passes = 0.
#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {

struct Qb {
  HostImage& J;
  const HostImage& mask;
  Stats& st;

  template <class T, int Conn>
  void run() const {
    const std::int64_t nx = mask.shape().nx, ny = mask.shape().ny;
    T* j = J.data<T>();
    const T* m = mask.data<T>();
    using detail::kDx;
    using detail::kDy;
    detail::PixelQueue queue(1 << 16);
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const T v = j[y * nx + x];
        const bool saturated = !(v < m[y * nx + x]);
        bool can_raise = false, raisable = false;
        for (int k = 0; k < Conn; ++k) {
          const std::int64_t qx = x + kDx[k], qy = y + kDy[k];
          if (qx < 0 || qx >= nx || qy < 0 || qy >= ny) continue;
          const std::int64_t q = qy * nx + qx;
          can_raise |= j[q] < v && j[q] < m[q];
          raisable |= !saturated && v < j[q];
        }
        if (can_raise && !raisable) queue.push(x, y);
      }
    const auto initial = static_cast<std::int64_t>(queue.size());
    st.initially_queued = initial;
    st.total_queued = initial + detail::propagate<T, Conn>(detail::Window<T>{j, m, nx, 0, 0, nx, ny}, queue);
  }
};

}  // namespace

Result run_seq_qb(const HostImage& marker, const HostImage& mask, const Options& opt) {
  return detail::run_variant("reconstruct/seq-qb", marker, mask, opt, 1, [&](HostImage& J, Stats& st) { return Qb{J, mask, st}; });
}

}  // namespace repix::reconstruct
