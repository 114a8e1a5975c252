// Seeded test images for the ECC tests (CPU and GPU): random values with many ties or many distinct
// values, constants, checkerboards, float extremes; plus an exact curve comparison that says
// where two curves first differ, and the message of an error a run throws.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/image.hpp"
#include "ecc/ecc.hpp"

namespace repix::test {

// `levels` distinct integer levels drawn uniformly, mapped per dtype: uint8 v (levels <= 256),
// uint16 v * 997 mod 65536 (spread over all 65536 bins), float v * 0.37 - 3 (distinct for any
// level count used here). `offset` is added to uint16 values (to put them beyond a window).
inline HostImage random_image(DType dt, Shape sh, int levels, std::uint32_t seed,
                              int u16_offset = -1) {
  HostImage img(dt, sh);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, levels - 1);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const int v = d(rng);
    switch (dt) {
      case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); break;
      case DType::u16:
        img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(
            u16_offset < 0 ? (v * 997) % 65536 : (u16_offset + v) % 65536);
        break;
      case DType::f32: img.data<float>()[i] = static_cast<float>(v) * 0.37f - 3.0f; break;
    }
  }
  return img;
}

inline HostImage constant_image(DType dt, Shape sh, double value) {
  HostImage img(dt, sh);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    switch (dt) {
      case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(value); break;
      case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(value); break;
      case DType::f32: img.data<float>()[i] = static_cast<float>(value); break;
    }
  }
  return img;
}

// Checkerboard of cells `period` voxels wide: lo where (x/p + y/p + z/p) is even, else hi.
inline HostImage checkerboard(DType dt, Shape sh, int period, double lo, double hi) {
  HostImage img(dt, sh);
  std::int64_t i = 0;
  for (std::int64_t z = 0; z < sh.nz; ++z)
    for (std::int64_t y = 0; y < sh.ny; ++y)
      for (std::int64_t x = 0; x < sh.nx; ++x, ++i) {
        const double v = ((x / period + y / period + z / period) & 1) ? hi : lo;
        switch (dt) {
          case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); break;
          case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v); break;
          case DType::f32: img.data<float>()[i] = static_cast<float>(v); break;
        }
      }
  return img;
}

// Floats drawn from the extremes: +-FLT_MAX, +-FLT_MIN, +-smallest denormal, a mid denormal,
// +0 and -0, +-1, and a few ordinary values.
inline HostImage float_extremes(Shape sh, std::uint32_t seed) {
  const float pool[] = {FLT_MAX,
                        -FLT_MAX,
                        FLT_MIN,
                        -FLT_MIN,
                        std::numeric_limits<float>::denorm_min(),
                        -std::numeric_limits<float>::denorm_min(),
                        FLT_MIN / 1024.0f,
                        -FLT_MIN / 3.0f,
                        0.0f,
                        -0.0f,
                        1.0f,
                        -1.0f,
                        std::nextafter(FLT_MAX, 0.0f),
                        -std::nextafter(FLT_MAX, 0.0f),
                        3.5f,
                        -1e30f};
  HostImage img(DType::f32, sh);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, static_cast<int>(sizeof pool / sizeof pool[0]) - 1);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = pool[d(rng)];
  return img;
}

// Only +0 and -0 (a single value, 0, in the curve).
inline HostImage signed_zeros(Shape sh, std::uint32_t seed) {
  HostImage img(DType::f32, sh);
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = (rng() & 1) ? -0.0f : 0.0f;
  return img;
}

inline std::string describe(const HostImage& img) {
  return dtype_name(img.dtype()) + " " + img.shape().str() + " (ndim " +
         std::to_string(img.shape().ndim) + ")";
}

// Exact equality of two curves, with the first difference in the message.
inline ::testing::AssertionResult same_curve(const ecc::Curve& got, const ecc::Curve& want) {
  if (got == want) return ::testing::AssertionSuccess();
  std::ostringstream o;
  o.precision(9);
  o << "curves differ: " << got.values.size() << " values (want " << want.values.size() << ")";
  const std::size_t n = std::min(got.values.size(), want.values.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (got.values[i] != want.values[i] || got.ecc[i] != want.ecc[i]) {
      o << "; first difference at #" << i << ": got (" << got.values[i] << ", " << got.ecc[i]
        << "), want (" << want.values[i] << ", " << want.ecc[i] << ")";
      break;
    }
  }
  if (got.ecc.size() != got.values.size()) o << "; malformed curve (ecc/values sizes differ)";
  return ::testing::AssertionFailure() << o.str();
}

// The message of the repix::Error that `run` throws; "" when it throws none (the ECC paths report
// bad input, NaN/inf, as one error whose text the tests compare between paths).
template <class Run>
std::string error_of(Run run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace repix::test
