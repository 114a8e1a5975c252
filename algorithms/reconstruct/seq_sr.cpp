// seq-sr: Vincent's sequential reconstruction (SR): raster and anti-raster scans alternate until
// a raster + anti-raster pair changes nothing (then J is stable against both half
// neighbourhoods, hence against the whole one). Stats::passes counts the scans.
#include "reconstruct/common.hpp"
#include "reconstruct/variants.hpp"

namespace repix::reconstruct {

namespace {
struct Sr {
  HostImage& J;
  const HostImage& mask;
  Stats& st;
  template <class T, int Conn>
  void run() const {
    const Shape& s = mask.shape();
    const detail::Window<T> w{J.data<T>(), mask.data<T>(), s.nx, 0, 0, s.nx, s.ny};
    for (;;) {
      const bool a = detail::raster_scan<T, Conn, true>(w);
      const bool b = detail::anti_raster_scan<T, Conn, true>(w, nullptr);
      st.passes += 2;
      if (!a && !b) return;
    }
  }
};
}  // namespace

Result run_seq_sr(const HostImage& marker, const HostImage& mask, const Options& opt) {
  return detail::run_variant("reconstruct/seq-sr", marker, mask, opt, 1, [&](HostImage& J, Stats& st) { return Sr{J, mask, st}; });
}

}  // namespace repix::reconstruct
