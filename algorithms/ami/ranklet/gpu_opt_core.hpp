// gpu-opt's per-thread and per-lane logic, __host__ __device__ so that the CPU tests run exactly
// the code the kernels run (tests/ami/ranklet/test_ranklet_gpu_opt_core.cpp).
//
// Small windows (r <= 8, h <= 4): a thread per pixel counts the pairs between the quadrants
// directly (6 quadrant pairs of h^2 x h^2 comparisons; at most 1536 for r = 8), the window in
// registers: no histogram to clear or scan.
//
// Large windows (r = 16, 32): a warp per run of kRun pixels of a row. The window's pixels go into
// four quadrant histograms (256 bins each) in the warp's shared memory, lane l owning the values
// 8l .. 8l+7 of every quadrant; a suffix sum over the lanes gives each lane the counts above its
// values, and each lane runs accumulate_bin over its 8 bins (lane_two_u); the warp sums the
// lanes' 2U. The next pixel of the run slides the histograms (slide_key: 4r updates, not r^2). The
// cost per pixel is 4r / 32 shared-memory updates plus a fixed 8-bin pass per lane.
#pragma once
#include <cstdint>

#include "ami/ranklet/ranklet.hpp"
#include "core/hd.hpp"  // REPIX_HD, REPIX_UNROLL


namespace repix::ami::ranklet::opt {

constexpr int kPairwiseMaxWindow = 8;  // r <= 8: pairwise threads; r >= 16: histogram warps
constexpr int kBinsPerLane = 256 / 32;

// s(t, c) doubled: 2 when t > c, 1 when equal, 0 when below.
REPIX_HD std::uint32_t pair_score(std::uint32_t t, std::uint32_t c) {
  return static_cast<std::uint32_t>(t > c) + static_cast<std::uint32_t>(t >= c);
}

// 2U of H, V, D for the window win[0, R*R) (row-major) by direct pair counting between quadrants.
// P(a, b) = sum of pair_score over quadrant a x quadrant b, P(b, a) = 2 h^4 - P(a, b).
template <int R>
REPIX_HD void two_u_pairwise(const std::uint8_t* win, std::uint32_t two_u[kOrientations]) {
  constexpr int H = R / 2, NQ = H * H;
  std::uint32_t q[4][NQ];
  REPIX_UNROLL
  for (int i = 0; i < H; ++i)
    REPIX_UNROLL
    for (int j = 0; j < H; ++j) {
      q[0][i * H + j] = win[i * R + j];
      q[1][i * H + j] = win[i * R + j + H];
      q[2][i * H + j] = win[(i + H) * R + j];
      q[3][i * H + j] = win[(i + H) * R + j + H];
    }
  std::uint32_t p01 = 0, p02 = 0, p03 = 0, p12 = 0, p13 = 0, p23 = 0;
  REPIX_UNROLL
  for (int a = 0; a < NQ; ++a)
    REPIX_UNROLL
    for (int b = 0; b < NQ; ++b) {
      p01 += pair_score(q[0][a], q[1][b]);
      p02 += pair_score(q[0][a], q[2][b]);
      p03 += pair_score(q[0][a], q[3][b]);
      p12 += pair_score(q[1][a], q[2][b]);
      p13 += pair_score(q[1][a], q[3][b]);
      p23 += pair_score(q[2][a], q[3][b]);
    }
  constexpr std::uint32_t full = 2u * NQ * NQ;  // P(a, b) + P(b, a)
  two_u[0] = p01 + p03 + (full - p12) + p23;           // H: T = {TL, BL}, C = {TR, BR}
  two_u[1] = p02 + p03 + p12 + p13;                    // V: T = {TL, TR}, C = {BL, BR}
  two_u[2] = p01 + p02 + (full - p13) + (full - p23);  // D: T = {TL, BR}, C = {TR, BL}
}

// Where quadrant q's count of value v sits in a warp's histogram (4 x 256 words): lane l's bins
// (values 8l + k) at q*256 + k*32 + l, so the 32 lanes' reads of bin k hit 32 different banks.
REPIX_HD int hist_index(int q, int v) { return q * 256 + (v & 7) * 32 + (v >> 3); }

// The histogram word that window element e (0 .. R*R-1, row-major: lanes walk the window row by
// row, R consecutive lanes per row, so their byte loads coalesce) of output pixel (x, y) adds one
// to.
template <int R>
REPIX_HD int window_key(const std::uint8_t* img, std::int64_t width, std::int64_t height, std::int64_t x,
                        std::int64_t y, int e) {
  constexpr int H = R / 2;
  const int i = e / R, j = e % R;
  return hist_index(quadrant_of(i, j, H), pixel_or_pad(img, width, height, x - H + 1 + j, y - H + 1 + i));
}

// Sliding one pixel right (from x - 1 to x) changes four columns of quadrant membership, each a
// whole window column (rows y-h+1 .. y+h; its top h pixels belong to a top quadrant, the rest to
// a bottom one): column x-h leaves the left quadrants, column x moves from the right quadrants to
// the left ones, column x+h enters the right ones. Update u (0 .. 2R-1) of kind `adding`: the
// histogram word it changes (by +1 when adding, -1 otherwise). Adds: column x into the left
// quadrants (u < R), column x+h into the right ones; removes: column x-h from the left quadrants
// (u < R), column x from the right ones.
template <int R>
REPIX_HD int slide_key(const std::uint8_t* img, std::int64_t width, std::int64_t height, std::int64_t x,
                       std::int64_t y, int u, bool adding) {
  constexpr int H = R / 2;
  const bool left = u < R;
  const int i = left ? u : u - R;  // row in the window
  const std::int64_t column = adding ? (left ? x : x + H) : (left ? x - H : x);
  const int q = (left ? 0 : 1) | (i >= H ? 2 : 0);
  return hist_index(q, pixel_or_pad(img, width, height, column, y - H + 1 + i));
}

// Output pixels per warp run in the histogram kernel: the first is built from its whole window
// (R*R adds), each next one by slide_key's 4R updates.
constexpr int kRun = 32;

// One lane's share of the three 2U: c[q][k] = quadrant q's count of value 8 * lane + k, above[q]
// = quadrant q's count of values above 8 * lane + 7. Summed over the 32 lanes: the window's 2U.
REPIX_HD void lane_two_u(const std::uint32_t c[4][kBinsPerLane], const std::uint32_t above[4],
                         std::uint32_t two_u[kOrientations]) {
  std::uint32_t g[4] = {above[0], above[1], above[2], above[3]};
  two_u[0] = two_u[1] = two_u[2] = 0;
  REPIX_UNROLL
  for (int k = kBinsPerLane - 1; k >= 0; --k) {
    const std::uint32_t cb[4] = {c[0][k], c[1][k], c[2][k], c[3][k]};
    accumulate_bin(cb, g, two_u);
  }
}

}  // namespace repix::ami::ranklet::opt
