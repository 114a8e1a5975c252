// `omp`: the thesis's OpenMP form: the lags of both directions in parallel (dynamic schedule: a
// lag's overlap shrinks with the lag), each thread with its own joint histogram; the reduction
// over lags is the ordered sum of the per-lag NMIs, so the result equals seq's bit for bit.
#include <omp.h>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "core/nvtx.hpp"

namespace repix::ami::auto_mi {

Features run_omp(const HostImage& labels, const Options& opt) {
  nvtx::Range range("auto-mi/omp");
  check_labels(labels);
  const std::int64_t h = labels.shape().ny, w = labels.shape().nx;
  Features f;
  f.nmi_x.resize(lag_count(h, w, kHorizontal));
  f.nmi_y.resize(lag_count(h, w, kVertical));
  const std::int64_t nx = static_cast<std::int64_t>(f.nmi_x.size());
  const std::int64_t all = nx + static_cast<std::int64_t>(f.nmi_y.size());
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::uint64_t> hist;
    NmiScratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t j = 0; j < all; ++j) {
      const int dir = j < nx ? kHorizontal : kVertical;
      const std::int64_t lag = j < nx ? j + 1 : j - nx + 1;
      if (lag_part(h, w, dir, lag, opt.parts) != opt.part) continue;  // another part's: left 0
      (j < nx ? f.nmi_x[j] : f.nmi_y[j - nx]) = lag_nmi_cpu(labels, dir, lag, hist, scratch);
    }
  }
  finish_features(f, h, w);
  return f;
}

}  // namespace repix::ami::auto_mi
