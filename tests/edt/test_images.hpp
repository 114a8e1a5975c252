// Seeded test inputs and a brute-force exact EDT for the edt tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/philox.hpp"
#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"

namespace repix::test {
// Inline: the names stay test::..., but their symbols are this header's own. Helpers of other
// families' tests share names (describe in tests/ecc/test_images.hpp) with other bodies: one
// program, so without it the linker keeps one of the two definitions for both.
inline namespace edt_tests {

// uint8 image, 255 foreground, background where a Philox draw falls below `density`.
inline HostImage sparse_image(std::int64_t nx, std::int64_t ny, double density, std::uint64_t seed) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  std::uint8_t* p = img.data<std::uint8_t>();
  for (std::int64_t i = 0; i < img.size(); ++i)
    p[i] = philox::uniform_double(philox::bits_at(seed, 2 * i, 7), philox::bits_at(seed, 2 * i + 1, 7)) < density ? 0 : 255;
  return img;
}

// A tissue dataset (datasets/masks.cpp: tissue 96..255, outside 0..47) as an edt input: the
// tissue foreground (255), everything outside it background (0).
inline HostImage tissue_mask(std::int64_t nx, std::int64_t ny, int coverage, std::uint64_t seed) {
  HostImage img = datasets::generate("tissue:" + std::to_string(nx) + "x" + std::to_string(ny) +
                                     ":coverage=" + std::to_string(coverage) + ":seed=" + std::to_string(seed));
  std::uint8_t* p = img.data<std::uint8_t>();
  for (std::int64_t i = 0; i < img.size(); ++i) p[i] = p[i] >= 96 ? 255 : 0;
  return img;
}

inline HostImage const_image(std::int64_t nx, std::int64_t ny, std::uint8_t v) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  std::fill(img.data<std::uint8_t>(), img.data<std::uint8_t>() + img.size(), v);
  return img;
}

inline std::string describe(const HostImage& img) { return dtype_name(img.dtype()) + " " + img.shape().str(); }

// Brute force: the minimum over all background pixels, O(n^2). Distances only.
inline std::vector<float> brute_force_edt(const HostImage& img) {
  const Shape s = img.shape();
  std::vector<std::int64_t> bgs;
  visit_image(img, [&](auto v) {
    for (std::int64_t i = 0; i < v.size(); ++i)
      if (v.data[i] == 0) bgs.push_back(i);
  });
  std::vector<float> out(static_cast<std::size_t>(s.size()), std::numeric_limits<float>::infinity());
  for (std::int64_t i = 0; i < s.size(); ++i) {
    std::int64_t best = -1;
    for (std::int64_t b : bgs) {
      const std::int64_t d = edt::sq_dist(i % s.nx, i / s.nx, b % s.nx, b / s.nx);
      if (best < 0 || d < best) best = d;
    }
    if (best >= 0) out[i] = edt::distance_from_sq(best);
  }
  return out;
}

// The same scattered sites (about `per_997` in 997 pixels, by a multiplicative hash) as float32,
// whose background pixels hold -0 (it compares equal to 0: background), and as uint16.
inline void push_float_and_uint16_sites(std::vector<HostImage>& v, int nx, int ny, unsigned per_997) {
  HostImage f(DType::f32, Shape::d2(nx, ny)), u(DType::u16, Shape::d2(nx, ny));
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const bool bg = (i * 2654435761u) % 997 < per_997;
    f.data<float>()[i] = bg ? -0.0f : 1.5f;
    u.data<std::uint16_t>()[i] = bg ? 0 : 9;
  }
  v.push_back(std::move(f));
  v.push_back(std::move(u));
}

// Inputs for the exact variants: shapes one off gpu-opt's segment (32 rows) and band (256
// columns) sizes at three densities, constant images, a single far site, blobs, float and uint16.
inline std::vector<HostImage> exact_variant_inputs() {
  std::vector<HostImage> v;
  const std::pair<int, int> shapes[] = {{1, 1},   {1, 70},   {70, 1},   {31, 33}, {32, 32}, {33, 31},
                                        {255, 9}, {256, 64}, {257, 65}, {513, 97}, {600, 300}, {3, 1025}, {1023, 7}, {1025, 40}, {2049, 3}};
  std::uint64_t seed = 1;
  for (auto [nx, ny] : shapes) {
    for (double density : {0.0005, 0.02, 0.5}) v.push_back(test::sparse_image(nx, ny, density, ++seed));
    v.push_back(test::const_image(nx, ny, 0));
    v.push_back(test::const_image(nx, ny, 255));
    HostImage corner = test::const_image(nx, ny, 255);
    corner.data<std::uint8_t>()[corner.size() - 1] = 0;
    v.push_back(std::move(corner));
  }
  v.push_back(datasets::generate("blobs:1000x700:radius=24:fill=0.45:seed=3"));
  v.push_back(datasets::generate("blobs:333x1100:radius=60:fill=0.9:seed=4"));
  push_float_and_uint16_sites(v, 300, 200, 3);
  return v;
}

}  // namespace edt_tests
}  // namespace repix::test
