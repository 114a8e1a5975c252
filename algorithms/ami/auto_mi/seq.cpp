// `seq`: the reference. Lag by lag, one k x k joint histogram of exact counts per lag (the
// thesis's loops D-H), its NMI through the canonical nmi_of_histogram, the lags summed in order
// (only those of Options::part, the others 0, where the lags are shared out).
#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "core/nvtx.hpp"

namespace repix::ami::auto_mi {

Features run_seq(const HostImage& labels, const Options& opt) {
  nvtx::Range range("auto-mi/seq");
  check_labels(labels);
  const std::int64_t h = labels.shape().ny, w = labels.shape().nx;
  Features f;
  std::vector<std::uint64_t> hist;
  NmiScratch scratch;
  for (int dir : {kHorizontal, kVertical}) {
    std::vector<double>& out = dir == kHorizontal ? f.nmi_x : f.nmi_y;
    out.resize(lag_count(h, w, dir));
    for (std::int64_t i = 1; i <= static_cast<std::int64_t>(out.size()); ++i)
      if (lag_part(h, w, dir, i, opt.parts) == opt.part) out[i - 1] = lag_nmi_cpu(labels, dir, i, hist, scratch);
  }
  finish_features(f, h, w);
  return f;
}

}  // namespace repix::ami::auto_mi
