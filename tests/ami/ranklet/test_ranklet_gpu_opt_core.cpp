// gpu-opt's per-thread (pairwise, r <= 8) and per-lane (histogram warps, r = 16, 32) logic run on
// the CPU, thread by thread and lane by lane as the kernels run it, against the pair-counting
// oracle: the algorithm is checked on machines without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ami/ranklet/gpu_opt_core.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"

namespace repix {
namespace {

using namespace test::ranklet;  // rk, noise, constant, oracle, same

template <int R>
void check_pairwise(const HostImage& img) {
  const std::int64_t w = img.shape().nx, h = img.shape().ny;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      std::uint8_t win[R * R];
      rk::gather_window(img.data<std::uint8_t>(), w, h, x, y, R, win);
      std::uint32_t two_u[3];
      rk::opt::two_u_pairwise<R>(win, two_u);
      for (int o = 0; o < 3; ++o)
        ASSERT_EQ(two_u[o], oracle_two_u(img, R, x, y, o)) << "r " << R << " x " << x << " y " << y << " o " << o;
    }
}

TEST(RankletGpuOptCore, PairwiseThreadsMatchOracle) {
  for (const HostImage& img : {noise(11, 9, 256, 1), noise(7, 12, 2, 2), noise(1, 5, 3, 3), constant(4, 3, 9)}) {
    check_pairwise<2>(img);
    check_pairwise<4>(img);
    check_pairwise<8>(img);
  }
}

// The warp's work for one pixel, lane by lane: the quadrant histograms in the kernel's layout
// (hist_index), each lane's 8 bins and the counts above them (the kernel's suffix sums), the
// lanes' shares summed (the kernel's xor reduction).
template <int R>
void check_histogram_warp(const HostImage& img) {
  const std::int64_t w = img.shape().nx, h = img.shape().ny;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      std::uint32_t hist[4 * 256] = {};
      for (int e = 0; e < R * R; ++e) ++hist[rk::opt::window_key<R>(img.data<std::uint8_t>(), w, h, x, y, e)];
      std::uint32_t c[32][4][rk::opt::kBinsPerLane], total[32][4] = {};
      for (int lane = 0; lane < 32; ++lane)
        for (int q = 0; q < 4; ++q)
          for (int k = 0; k < rk::opt::kBinsPerLane; ++k) {
            c[lane][q][k] = hist[q * 256 + k * 32 + lane];
            total[lane][q] += c[lane][q][k];
          }
      std::uint32_t sum[3] = {0, 0, 0};
      for (int lane = 0; lane < 32; ++lane) {
        std::uint32_t above[4] = {0, 0, 0, 0};
        for (int m = lane + 1; m < 32; ++m)
          for (int q = 0; q < 4; ++q) above[q] += total[m][q];
        std::uint32_t part[3];
        rk::opt::lane_two_u(c[lane], above, part);
        for (int o = 0; o < 3; ++o) sum[o] += part[o];
      }
      for (int o = 0; o < 3; ++o)
        ASSERT_EQ(sum[o], oracle_two_u(img, R, x, y, o)) << "r " << R << " x " << x << " y " << y << " o " << o;
    }
}

TEST(RankletGpuOptCore, HistogramWarpsMatchOracle) {
  for (const HostImage& img : {noise(6, 5, 256, 4), noise(5, 3, 3, 5), constant(3, 2, 200)}) {
    check_histogram_warp<16>(img);
    check_histogram_warp<32>(img);
  }
  check_histogram_warp<16>(noise(19, 17, 256, 6));
}

// The histogram kernel's runs: the first pixel of a run built whole, every next one slid by
// slide_key's updates; at every pixel the slid histograms equal the ones built from scratch, and
// (through the lanes, as above) give the oracle's 2U.
template <int R>
void check_sliding_runs(const HostImage& img) {
  const std::int64_t w = img.shape().nx, h = img.shape().ny;
  const std::uint8_t* d = img.data<std::uint8_t>();
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x0 = 0; x0 < w; x0 += rk::opt::kRun) {
      std::uint32_t hist[4 * 256] = {};
      for (int e = 0; e < R * R; ++e) ++hist[rk::opt::window_key<R>(d, w, h, x0, y, e)];
      for (std::int64_t x = x0; x < std::min<std::int64_t>(x0 + rk::opt::kRun, w); ++x) {
        if (x > x0) {
          for (int u = 0; u < 2 * R; ++u) ++hist[rk::opt::slide_key<R>(d, w, h, x, y, u, true)];
          for (int u = 0; u < 2 * R; ++u) --hist[rk::opt::slide_key<R>(d, w, h, x, y, u, false)];
        }
        std::uint32_t fresh[4 * 256] = {};
        for (int e = 0; e < R * R; ++e) ++fresh[rk::opt::window_key<R>(d, w, h, x, y, e)];
        ASSERT_TRUE(std::equal(hist, hist + 1024, fresh)) << "r " << R << " x " << x << " y " << y;
        std::uint32_t c[32][4][rk::opt::kBinsPerLane], total[32][4] = {}, sum[3] = {0, 0, 0};
        for (int lane = 0; lane < 32; ++lane)
          for (int q = 0; q < 4; ++q)
            for (int k = 0; k < rk::opt::kBinsPerLane; ++k) total[lane][q] += (c[lane][q][k] = hist[q * 256 + k * 32 + lane]);
        for (int lane = 0; lane < 32; ++lane) {
          std::uint32_t above[4] = {0, 0, 0, 0}, part[3];
          for (int m = lane + 1; m < 32; ++m)
            for (int q = 0; q < 4; ++q) above[q] += total[m][q];
          rk::opt::lane_two_u(c[lane], above, part);
          for (int o = 0; o < 3; ++o) sum[o] += part[o];
        }
        for (int o = 0; o < 3; ++o) ASSERT_EQ(sum[o], oracle_two_u(img, R, x, y, o)) << "r " << R << " x " << x << " o " << o;
      }
    }
}

TEST(RankletGpuOptCore, SlidingRunsMatchFreshHistogramsAndOracle) {
  // Widths around the run length (32): runs that end at the image's edge, and several per row.
  for (const HostImage& img : {noise(70, 3, 256, 7), noise(33, 2, 3, 8), noise(31, 2, 256, 9), constant(40, 1, 5)}) {
    check_sliding_runs<16>(img);
    check_sliding_runs<32>(img);
  }
}

// Lane l owns values 8l .. 8l+7 of every quadrant, each bin once, and bin k of all 32 lanes lies
// in 32 consecutive words (no bank conflicts).
TEST(RankletGpuOptCore, HistogramLayoutIsABijection) {
  std::set<int> seen;
  for (int q = 0; q < 4; ++q)
    for (int v = 0; v < 256; ++v) {
      const int i = rk::opt::hist_index(q, v);
      EXPECT_TRUE(seen.insert(i).second);
      EXPECT_EQ(i, q * 256 + (v % 8) * 32 + v / 8);
    }
  EXPECT_EQ(*seen.rbegin(), 1023);
}

}  // namespace
}  // namespace repix
