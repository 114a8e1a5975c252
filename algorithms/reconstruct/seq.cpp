// seq: Vincent's fast hybrid reconstruction (FH, Teodoro et al. Algorithm 2) on one thread, the
// reference every other variant must equal. Options::raster_scans raster + anti-raster pairs
// (the last one queues the initial wavefront), then the FIFO propagation phase. Stats: pixels
// initially queued, every enqueue, and the number of scans (Table 1 of the paper).
// Options::queue_capacity only sizes the FIFO up front here: CPU queues grow, they never overflow.
#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {
struct Seq {
  HostImage& J;
  const HostImage& mask;
  const Options& opt;
  Stats& st;
  template <class T, int Conn>
  void run() const {
    const Shape& s = mask.shape();
    const detail::Window<T> w{J.data<T>(), mask.data<T>(), s.nx, 0, 0, s.nx, s.ny};
    detail::PixelQueue queue(opt.queue_capacity > 0 ? static_cast<std::size_t>(opt.queue_capacity) : 1 << 16);
    detail::fast_hybrid<T, Conn>(w, opt.raster_scans, queue, st);
  }
};
}  // namespace

Result run_seq(const HostImage& marker, const HostImage& mask, const Options& opt) {
  return detail::run_variant("reconstruct/seq", marker, mask, opt, 1, [&](HostImage& J, Stats& st) { return Seq{J, mask, opt, st}; });
}

}  // namespace repix::reconstruct
