// Shared by the CPU and GPU reconstruct tests: the definitional oracle, seeded small inputs and an
// exact comparison that names the first differing pixel.
//
// The oracle is the definition itself, computed a different way from every variant: Jacobi
// iterations J' = min(dilate(J), I) over the whole image (each step reads only the previous
// image, elementary dilation by the 3x3 square or the cross, nothing across the border) until an
// iteration changes nothing. O(n * path length): small images only.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <random>
#include <sstream>
#include <string>

#include "core/image.hpp"
#include "datasets/datasets.hpp"
#include "reconstruct/reconstruct.hpp"

namespace repix::test {
// Inline: the names stay test::..., but their symbols are this header's own. Helpers of other
// families' tests share names (float_extremes in tests/ecc/test_images.hpp) with other bodies: one
// program, so without it the linker keeps one of the two definitions for both.
inline namespace reconstruct_tests {

template <class T>
void oracle_typed(HostImage& J, const HostImage& mask, int conn, std::int64_t* iterations) {
  const std::int64_t nx = mask.shape().nx, ny = mask.shape().ny;
  const T* m = mask.data<T>();
  HostImage next(J.dtype(), J.shape());
  for (bool changed = true; changed;) {
    changed = false;
    const T* j = J.data<T>();
    T* o = next.data<T>();
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        T v = j[y * nx + x];
        for (std::int64_t dy = -1; dy <= 1; ++dy)
          for (std::int64_t dx = -1; dx <= 1; ++dx) {
            if (conn == 4 && dx != 0 && dy != 0) continue;
            const std::int64_t qx = x + dx, qy = y + dy;
            if (qx < 0 || qx >= nx || qy < 0 || qy >= ny) continue;
            if (v < j[qy * nx + qx]) v = j[qy * nx + qx];
          }
        if (m[y * nx + x] < v) v = m[y * nx + x];
        if (v != j[y * nx + x]) changed = true;
        o[y * nx + x] = v;
      }
    std::swap(J, next);
    ++*iterations;
  }
}

// The reconstruction by the definition (marker clipped to the mask first). `iterations` (if
// given) receives the number of dilation steps, the length of the longest propagation + 1.
inline HostImage oracle_reconstruct(const HostImage& marker, const HostImage& mask, int conn,
                                    std::int64_t* iterations = nullptr) {
  HostImage J(mask.dtype(), mask.shape());
  std::int64_t it = 0;
  switch (mask.dtype()) {
    case DType::u8: {
      for (std::int64_t i = 0; i < J.size(); ++i)
        J.data<std::uint8_t>()[i] = std::min(marker.data<std::uint8_t>()[i], mask.data<std::uint8_t>()[i]);
      oracle_typed<std::uint8_t>(J, mask, conn, &it);
      break;
    }
    case DType::u16: {
      for (std::int64_t i = 0; i < J.size(); ++i)
        J.data<std::uint16_t>()[i] = std::min(marker.data<std::uint16_t>()[i], mask.data<std::uint16_t>()[i]);
      oracle_typed<std::uint16_t>(J, mask, conn, &it);
      break;
    }
    case DType::f32: {
      for (std::int64_t i = 0; i < J.size(); ++i)
        J.data<float>()[i] = std::min(marker.data<float>()[i], mask.data<float>()[i]);
      oracle_typed<float>(J, mask, conn, &it);
      break;
    }
  }
  if (iterations) *iterations = it;
  return J;
}

// Pixel value as double (every uint16 and float32 value is exact in a double).
inline double pixel(const HostImage& img, std::int64_t i) {
  switch (img.dtype()) {
    case DType::u8: return img.data<std::uint8_t>()[i];
    case DType::u16: return img.data<std::uint16_t>()[i];
    case DType::f32: break;
  }
  return img.data<float>()[i];
}

inline void set_pixel(HostImage& img, std::int64_t i, double v) {
  switch (img.dtype()) {
    case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); return;
    case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v); return;
    case DType::f32: img.data<float>()[i] = static_cast<float>(v); return;
  }
}

// Exact equality (values compared with ==, so -0 equals +0) with the first differing pixel.
inline ::testing::AssertionResult same_image(const HostImage& got, const HostImage& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return ::testing::AssertionFailure() << "got " << dtype_name(got.dtype()) << " " << got.shape().str()
                                         << ", want " << dtype_name(want.dtype()) << " " << want.shape().str();
  for (std::int64_t i = 0; i < got.size(); ++i)
    if (pixel(got, i) != pixel(want, i)) {
      std::ostringstream o;
      o.precision(9);
      o << "first difference at (x=" << i % got.shape().nx << ", y=" << i / got.shape().nx << "): got "
        << pixel(got, i) << ", want " << pixel(want, i);
      return ::testing::AssertionFailure() << o.str();
    }
  return ::testing::AssertionSuccess();
}

// Seeded mask: `levels` integer levels (uint8: v; uint16: v * 251; float32: v * 0.37 - 3), with
// some smoothing so plateaus and long ridges exist (each pixel takes the max of itself and its
// left neighbour with probability 1/2).
inline HostImage random_mask(DType dt, Shape sh, int levels, std::uint32_t seed) {
  HostImage img(dt, sh);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, levels - 1);
  std::vector<int> v(static_cast<std::size_t>(img.size()));
  for (std::int64_t i = 0; i < img.size(); ++i) {
    v[i] = d(rng);
    if (i % sh.nx > 0 && (rng() & 1)) v[i] = std::max(v[i], v[i - 1]);
  }
  for (std::int64_t i = 0; i < img.size(); ++i) {
    switch (dt) {
      case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v[i]); break;
      case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v[i] * 251); break;
      case DType::f32: img.data<float>()[i] = static_cast<float>(v[i]) * 0.37f - 3.0f; break;
    }
  }
  return img;
}

enum class MarkerKind { below, sparse, frame, single, zero_floor };

// A marker <= mask: `below` (mask minus a random amount, clamped at the dtype's floor / the
// mask's minimum), `sparse` (the mask at ~2% of the pixels, the floor elsewhere), `frame` (the
// mask on the image border, the floor inside), `single` (the mask at one pixel), `zero_floor`
// (the floor everywhere). The floor is the mask's minimum value.
inline HostImage random_marker(const HostImage& mask, MarkerKind kind, std::uint32_t seed) {
  HostImage mk(mask.dtype(), mask.shape());
  std::mt19937 rng(seed);
  double floor = pixel(mask, 0);
  for (std::int64_t i = 0; i < mask.size(); ++i) floor = std::min(floor, pixel(mask, i));
  const std::int64_t nx = mask.shape().nx, ny = mask.shape().ny;
  const std::int64_t one = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(mask.size()));
  for (std::int64_t i = 0; i < mask.size(); ++i) {
    const double mv = pixel(mask, i);
    const std::int64_t x = i % nx, y = i / nx;
    double v = floor;
    switch (kind) {
      case MarkerKind::below: {
        const double step = mask.dtype() == DType::u16 ? 251 : mask.dtype() == DType::f32 ? 0.37 : 1;
        v = std::max(floor, mv - step * static_cast<double>(rng() % 40));
        if (mask.dtype() == DType::f32) v = std::max(floor, static_cast<double>(static_cast<float>(v)));
        break;
      }
      case MarkerKind::sparse: v = (rng() % 50 == 0) ? mv : floor; break;
      case MarkerKind::frame: v = (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) ? mv : floor; break;
      case MarkerKind::single: v = i == one ? mv : floor; break;
      case MarkerKind::zero_floor: v = floor; break;
    }
    set_pixel(mk, i, std::min(v, mv));
  }
  return mk;
}

inline constexpr MarkerKind kMarkerKinds[] = {MarkerKind::below, MarkerKind::sparse, MarkerKind::frame,
                                              MarkerKind::single, MarkerKind::zero_floor};

// A random case's name in failure messages.
inline std::string case_name(DType dt, Shape sh, int conn, int kind) {
  return dtype_name(dt) + " " + sh.str() + " conn " + std::to_string(conn) + " marker kind " + std::to_string(kind);
}

// float32 (marker, mask) over the extremes: +-max, -1e30, -1, both zeros, the smallest denormal,
// 1; the marker is the lower of two draws (a third of the pixels) or -max.
inline std::pair<HostImage, HostImage> float_extremes(Shape sh, std::uint32_t seed) {
  HostImage marker(DType::f32, sh), mask(DType::f32, sh);
  std::mt19937 rng(seed);
  const float pool[] = {-std::numeric_limits<float>::max(), -1e30f, -1.0f, -0.0f, 0.0f,
                        std::numeric_limits<float>::denorm_min(), 1.0f, std::numeric_limits<float>::max()};
  for (std::int64_t i = 0; i < mask.size(); ++i) {
    const float a = pool[rng() % 8], b = pool[rng() % 8];
    mask.data<float>()[i] = std::max(a, b);
    marker.data<float>()[i] = (rng() % 3 == 0) ? std::min(a, b) : -std::numeric_limits<float>::max();
  }
  return {std::move(marker), std::move(mask)};
}

// uint8 (marker, mask): a serpentine corridor (walls on every fourth row, with a gap alternately
// at the right and the left end) and the marker at the corridor's start only: the longest path
// the shape allows, back and forth across any tiling.
inline std::pair<HostImage, HostImage> serpentine_corridor(Shape sh) {
  HostImage marker(DType::u8, sh), mask(DType::u8, sh);
  for (std::int64_t y = 0; y < sh.ny; ++y)
    for (std::int64_t x = 0; x < sh.nx; ++x) {
      const bool wall = (y % 4 == 2) && !((y / 4) % 2 == 0 ? x == sh.nx - 1 : x == 0);
      mask.data<std::uint8_t>()[y * sh.nx + x] = wall ? 0 : static_cast<std::uint8_t>(200 - (y % 7));
      marker.data<std::uint8_t>()[y * sh.nx + x] = 0;
    }
  marker.data<std::uint8_t>()[0] = 200;
  return {std::move(marker), std::move(mask)};
}

// f(what, marker, mask) for the generated datasets the reconstruct tests share: both mask kinds
// (smoothed noise, tissue) at sizes off the tile sizes, with every marker kind.
template <class F>
void for_each_generated_pair(F&& f) {
  for (const std::string& mask_spec : {std::string("noise-mask:203x141:sigma=2:seed=4"),
                                       std::string("tissue:190x130:coverage=50:seed=2")})
    for (const std::string marker : {"opening:radius=3", "h-minus:h=15", "frame", "single-seed"}) {
      const HostImage mask = datasets::generate(mask_spec);
      const HostImage mk = datasets::generate(mask_spec + ":marker=" + marker);
      f(mask_spec + " " + marker, mk, mask);
    }
}

}  // namespace reconstruct_tests
}  // namespace repix::test
