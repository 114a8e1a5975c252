// `seq`: the thesis's sequential ranklet transform (section 4.1, loops A-C), the reference. For
// every window size and pixel: copy the window (255 outside the image), sort it (std::sort: the
// thesis's quicksort), and sum the 1-based midranks of each orientation's T half (ties share
// their average rank), found by binary search in the sorted window. One thread.
#include <algorithm>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {

// One row of window r by sorting: shared with omp, which runs the same rows on several threads.
void sorted_row(const HostImage& input, int r, std::int64_t y, float* const out[kOrientations]) {
  const std::uint8_t* img = input.data<std::uint8_t>();
  const std::int64_t w = input.shape().nx, h = input.shape().ny;
  std::uint8_t sorted[kMaxWindow * kMaxWindow];
  for (std::int64_t x = 0; x < w; ++x) {
    gather_window(img, w, h, x, y, r, sorted);
    std::sort(sorted, sorted + r * r);
    std::uint32_t two_u[kOrientations];
    two_u_from_sorted(img, w, h, x, y, r, sorted, two_u);
    for (int o = 0; o < kOrientations; ++o) out[o][x] = ranklet_value(two_u[o], r);
  }
}

Result run_seq(const HostImage& input, const Options& opt) {
  return run_rows(input, opt, 1, [&](int r, std::int64_t y, float* const out[kOrientations]) { sorted_row(input, r, y, out); });
}

}  // namespace repix::ami::ranklet
