// `seq-hist`: distribution counting instead of sorting. Along each row the four quadrant
// histograms (256 bins) slide one column at a time (each quadrant loses one column of h pixels and
// gains one), and the three orientations' 2U come from one pass over the bins (accumulate_bin,
// the Mann-Whitney form): O(r + 256) per pixel instead of O(N log N). One thread (omp-hist runs
// the same rows on several).
#include <cstring>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {

void hist_row(const HostImage& input, int r, std::int64_t y, float* const out[kOrientations]) {
  const std::uint8_t* img = input.data<std::uint8_t>();
  const std::int64_t w = input.shape().nx, h = input.shape().ny;
  const int hh = r / 2;
  std::uint32_t hist[4][256];
  std::memset(hist, 0, sizeof hist);
  // Column c's pixels of the top (rows y-h+1 .. y) or bottom (rows y+1 .. y+h) half into
  // quadrant q, with weight +1 or -1.
  const auto column = [&](int q, std::int64_t c, bool bottom, int sign) {
    const std::int64_t y0 = bottom ? y + 1 : y - hh + 1;
    for (int i = 0; i < hh; ++i) hist[q][pixel_or_pad(img, w, h, c, y0 + i)] += static_cast<std::uint32_t>(sign);
  };
  for (int j = 0; j < r; ++j) {  // the window of x = 0
    const std::int64_t c = j - hh + 1;
    column(j < hh ? 0 : 1, c, false, 1);
    column(j < hh ? 2 : 3, c, true, 1);
  }
  for (std::int64_t x = 0; x < w; ++x) {
    if (x > 0) {  // slide from x - 1: columns x-h (leaves), x (left <- right), x+h (enters)
      for (int bottom = 0; bottom < 2; ++bottom) {
        const int left = bottom ? 2 : 0, right = left + 1;
        column(left, x - hh, bottom, -1);
        column(left, x, bottom, 1);
        column(right, x, bottom, -1);
        column(right, x + hh, bottom, 1);
      }
    }
    std::uint32_t two_u[kOrientations] = {0, 0, 0}, g[4] = {0, 0, 0, 0};
    for (int v = 255; v >= 0; --v) {
      const std::uint32_t c[4] = {hist[0][v], hist[1][v], hist[2][v], hist[3][v]};
      accumulate_bin(c, g, two_u);
    }
    for (int o = 0; o < kOrientations; ++o) out[o][x] = ranklet_value(two_u[o], r);
  }
}

Result run_seq_hist(const HostImage& input, const Options& opt) {
  return run_rows(input, opt, 1, [&](int r, std::int64_t y, float* const out[kOrientations]) { hist_row(input, r, y, out); });
}

}  // namespace repix::ami::ranklet
