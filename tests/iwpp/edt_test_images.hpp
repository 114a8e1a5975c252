// Seeded test inputs and a brute-force exact EDT for the edt tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/image.hpp"
#include "core/philox.hpp"
#include "iwpp/edt.hpp"
#include "iwpp/edt_detail.hpp"

namespace repix::test {

// uint8 image, 255 foreground, background where a Philox draw falls below `density`.
inline HostImage sparse_image(std::int64_t nx, std::int64_t ny, double density, std::uint64_t seed) {
  HostImage img(DType::u8, Shape::d2(nx, ny));
  std::uint8_t* p = img.data<std::uint8_t>();
  for (std::int64_t i = 0; i < img.size(); ++i)
    p[i] = philox::uniform_double(philox::bits_at(seed, 2 * i, 7), philox::bits_at(seed, 2 * i + 1, 7)) < density ? 0 : 255;
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

}  // namespace repix::test
