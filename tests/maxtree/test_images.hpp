// Seeded inputs for the maxtree tests: random images with few or many levels (8 and 16 bits),
// checkerboards, constants, the edge shapes (1x1, 1xN, Nx1, 2x2) and sizes off the tile sizes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/philox.hpp"

namespace repix::test {
// Inline: the names stay test::..., their symbols this header's own (other families' test headers
// share helper names).
inline namespace maxtree_tests {

struct Input {
  std::string name;
  HostImage image;
};

// Levels 0..levels-1 drawn per pixel (Philox), scaled by `step` (16-bit images use the high bits).
inline HostImage random_image(DType dtype, std::int64_t nx, std::int64_t ny, std::uint32_t levels, std::uint64_t seed,
                              std::uint32_t step = 1) {
  HostImage img(dtype, Shape::d2(nx, ny));
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const std::uint32_t v = philox::uniform_below(philox::bits_at(seed, static_cast<std::uint64_t>(i), 11), levels) * step;
    if (dtype == DType::u8) img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v);
    else img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v);
  }
  return img;
}

// Squares of `period` pixels alternating lo and hi.
inline HostImage checker_image(DType dtype, std::int64_t nx, std::int64_t ny, std::int64_t period, std::uint32_t lo,
                               std::uint32_t hi) {
  HostImage img(dtype, Shape::d2(nx, ny));
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::uint32_t v = ((x / period + y / period) % 2) ? hi : lo;
      if (dtype == DType::u8) img.data<std::uint8_t>()[y * nx + x] = static_cast<std::uint8_t>(v);
      else img.data<std::uint16_t>()[y * nx + x] = static_cast<std::uint16_t>(v);
    }
  return img;
}

inline HostImage const_image(DType dtype, std::int64_t nx, std::int64_t ny, std::uint32_t v) {
  return checker_image(dtype, nx, ny, 1, v, v);
}

inline std::string size_name(std::int64_t nx, std::int64_t ny) { return std::to_string(nx) + "x" + std::to_string(ny); }

// The small inputs (the brute-force oracle's cost grows with levels x pixels): every edge shape,
// few and many levels, 8 and 16 bits, checkerboards, constants.
inline std::vector<Input> small_inputs(std::uint64_t seed) {
  std::vector<Input> v;
  const std::int64_t sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {3, 3}, {5, 4}, {17, 13}, {31, 7}, {23, 29}};
  for (const auto& s : sizes) {
    const std::int64_t nx = s[0], ny = s[1];
    v.push_back({"u8-3levels-" + size_name(nx, ny), random_image(DType::u8, nx, ny, 3, seed)});
    v.push_back({"u8-256levels-" + size_name(nx, ny), random_image(DType::u8, nx, ny, 256, seed + 1)});
    v.push_back({"u16-full-" + size_name(nx, ny), random_image(DType::u16, nx, ny, 65536, seed + 2)});
    v.push_back({"u16-4levels-high-bits-" + size_name(nx, ny), random_image(DType::u16, nx, ny, 4, seed + 3, 16384)});
  }
  v.push_back({"checker-1-u8", checker_image(DType::u8, 11, 10, 1, 0, 255)});
  v.push_back({"checker-3-u16", checker_image(DType::u16, 20, 14, 3, 1000, 60000)});
  v.push_back({"const-u8", const_image(DType::u8, 13, 6, 42)});
  v.push_back({"const-u16-1x1", const_image(DType::u16, 1, 1, 65535)});
  return v;
}

// Larger inputs for the variants against seq: sizes off the tile sizes (omp's default 256 and the
// small tiles the tests ask for), plateau-heavy and many-level images, 8 and 16 bits.
inline std::vector<Input> large_inputs(std::uint64_t seed) {
  std::vector<Input> v;
  v.push_back({"u8-2levels-257x255", random_image(DType::u8, 257, 255, 2, seed)});
  v.push_back({"u8-256levels-300x97", random_image(DType::u8, 300, 97, 256, seed + 1)});
  v.push_back({"u16-full-129x263", random_image(DType::u16, 129, 263, 65536, seed + 2)});
  v.push_back({"u16-6levels-513x33", random_image(DType::u16, 513, 33, 6, seed + 3, 9000)});
  v.push_back({"u8-1x700", random_image(DType::u8, 1, 700, 7, seed + 4)});
  v.push_back({"u8-700x1", random_image(DType::u8, 700, 1, 7, seed + 5)});
  v.push_back({"checker-1-u8-258x257", checker_image(DType::u8, 258, 257, 1, 3, 200)});
  v.push_back({"checker-5-u16-101x99", checker_image(DType::u16, 101, 99, 5, 7, 9)});
  v.push_back({"const-u8-300x300", const_image(DType::u8, 300, 300, 0)});
  return v;
}

}  // namespace maxtree_tests
}  // namespace repix::test
