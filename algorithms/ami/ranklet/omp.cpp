// `omp`: the thesis's OpenMP design (section 4.2): loop B (the pixels) in parallel, each pixel
// computed as in seq (sort its window, midranks). Rows are the parallel unit here (one row of
// pixels per task, dynamically scheduled), so a task is long enough to amortise the scheduling.
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {

Result run_omp(const HostImage& input, const Options& opt) {
  return run_rows(input, opt, opt.threads,
                  [&](int r, std::int64_t y, float* const out[kOrientations]) { sorted_row(input, r, y, out); });
}

}  // namespace repix::ami::ranklet
