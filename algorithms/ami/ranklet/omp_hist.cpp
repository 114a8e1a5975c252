// `omp-hist`: seq-hist's rows (sliding quadrant histograms, one row per task) over OpenMP threads.
// Not in the thesis: the fastest exact CPU form, and the bench's reference at large sizes, where
// seq's per-window sort takes tens of minutes (harness/families/ami/ranklet.cpp).
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {

Result run_omp_hist(const HostImage& input, const Options& opt) {
  return run_rows(input, opt, opt.threads,
                  [&](int r, std::int64_t y, float* const out[kOrientations]) { hist_row(input, r, y, out); });
}

}  // namespace repix::ami::ranklet
