// Inputs and the independent oracle of the ranklet tests: U counted pair by pair from its
// definition (#{t > c} + 1/2 #{t = c}, here doubled), no sorting, no ranks, no histograms.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ami/ranklet/ranklet.hpp"

namespace repix::test::ranklet {

namespace rk = ami::ranklet;

// Seeded uint8 noise with `levels` grey levels (values spread over 0..255, 255 included when
// levels > 1, so ties with the padding happen too).
inline HostImage noise(std::int64_t nx, std::int64_t ny, int levels, std::uint64_t seed) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  std::uint8_t* d = img.data<std::uint8_t>();
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::int64_t i = 0; i < img.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int level = static_cast<int>((state >> 33) % static_cast<std::uint64_t>(levels));
    d[i] = static_cast<std::uint8_t>(levels == 1 ? 0 : level * 255 / (levels - 1));
  }
  return img;
}

// An empty (0 x 4) uint8 .npy, written by hand (repix never writes one): bad input for the CLI tests.
inline void write_empty_u8_npy(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  std::string h = "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }";
  h.append(64 - (10 + h.size() + 1) % 64, ' ');
  h.push_back('\n');
  f << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(h.size() & 0xff) << static_cast<char>(h.size() >> 8) << h;
}

inline HostImage constant(std::int64_t nx, std::int64_t ny, std::uint8_t v) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  std::memset(img.raw(), v, img.bytes());
  return img;
}

// 2U of orientation o (0 H, 1 V, 2 D) at (x, y), window r, by brute-force pair counting.
inline std::uint32_t oracle_two_u(const HostImage& img, int r, std::int64_t x, std::int64_t y, int o) {
  const std::int64_t w = img.shape().nx, h = img.shape().ny;
  const std::uint8_t* d = img.data<std::uint8_t>();
  const int hh = r / 2;
  const auto at = [&](int i, int j) -> int {
    const std::int64_t px = x - hh + 1 + j, py = y - hh + 1 + i;
    return (px >= 0 && px < w && py >= 0 && py < h) ? d[py * w + px] : 255;
  };
  const auto treatment = [&](int i, int j) {
    const bool right = j >= hh, bottom = i >= hh;
    return o == 0 ? !right : o == 1 ? !bottom : right == bottom;
  };
  std::uint32_t two_u = 0;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) {
      if (!treatment(i, j)) continue;
      for (int k = 0; k < r; ++k)
        for (int l = 0; l < r; ++l) {
          if (treatment(k, l)) continue;
          const int t = at(i, j), c = at(k, l);
          two_u += t > c ? 2 : t == c ? 1 : 0;
        }
    }
  return two_u;
}

// The whole oracle output, laid out as a Result.
inline rk::Result oracle(const HostImage& img, const std::vector<int>& windows) {
  rk::Result r = rk::make_result(img.shape(), windows);
  for (std::size_t w = 0; w < windows.size(); ++w)
    for (int o = 0; o < rk::kOrientations; ++o) {
      float* p = rk::plane(r, w, o);
      for (std::int64_t y = 0; y < img.shape().ny; ++y)
        for (std::int64_t x = 0; x < img.shape().nx; ++x)
          p[y * img.shape().nx + x] =
              static_cast<float>(oracle_two_u(img, windows[w], x, y, o)) / static_cast<float>(rk::two_u_scale(windows[w]));
    }
  return r;
}

// Bit-for-bit comparison with a message naming the first difference.
inline ::testing::AssertionResult same(const rk::Result& got, const rk::Result& want) {
  if (got.windows != want.windows) return ::testing::AssertionFailure() << "windows differ";
  if (got.ranklet.shape() != want.ranklet.shape())
    return ::testing::AssertionFailure() << "shape " << got.ranklet.shape().str() << " vs " << want.ranklet.shape().str();
  const float* a = got.ranklet.data<float>();
  const float* b = want.ranklet.data<float>();
  const Shape& s = want.ranklet.shape();
  for (std::int64_t i = 0; i < want.ranklet.size(); ++i)
    if (std::memcmp(a + i, b + i, sizeof(float)) != 0) {
      const std::int64_t p = i / s.slice_size(), yx = i % s.slice_size();
      return ::testing::AssertionFailure() << "window " << want.windows[p / 3] << " orientation " << "HVD"[p % 3]
                                           << " at x=" << yx % s.nx << " y=" << yx / s.nx << ": " << a[i] << " vs "
                                           << b[i];
    }
  return ::testing::AssertionSuccess();
}

}  // namespace repix::test::ranklet
