#include <algorithm>
#include <cmath>
#include <vector>

#include "ecc/smooth.hpp"

namespace repix::ecc::smooth {

Weights gaussian_weights(double sigma) {
  std::array<double, kTaps> d{};
  double sum = 0;
  for (int t = 0; t < kTaps; ++t) {
    const double x = t - kRadius;
    d[t] = std::exp(-x * x / (2 * sigma * sigma));
    sum += d[t];
  }
  Weights w{};
  for (int t = 0; t < kTaps; ++t) w[t] = static_cast<float>(d[t] / sum);
  return w;
}

namespace {
// The one accumulation both passes (and the GPU kernels) use: tap order, no contraction.
inline float dot13(const Weights& w, const float* v, std::int64_t stride) {
  float acc = 0.0f;
  for (int t = 0; t < kTaps; ++t) {
    const volatile float prod = w[t] * v[t * stride];  // volatile: keep multiply and add apart
    acc = acc + prod;
  }
  return acc;
}
}  // namespace

HostImage smooth_cpu(const HostImage& img, const Weights& w) {
  if (img.dtype() != DType::f32 || img.shape().ndim != 2)
    throw Error("smoothing takes a float32 2D image, got " + dtype_name(img.dtype()) + " " +
                img.shape().str());
  const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
  const float* in = img.data<float>();
  HostImage tmp(DType::f32, img.shape()), out(DType::f32, img.shape());
  float* t = tmp.data<float>();
  float* o = out.data<float>();
  std::vector<float> line(static_cast<std::size_t>(std::max(nx, ny) + 2 * kRadius));
  auto clampi = [](std::int64_t i, std::int64_t n) { return std::min(std::max(i, std::int64_t(0)), n - 1); };
  for (std::int64_t y = 0; y < ny; ++y) {
    for (std::int64_t i = 0; i < nx + 2 * kRadius; ++i) line[i] = in[y * nx + clampi(i - kRadius, nx)];
    for (std::int64_t x = 0; x < nx; ++x) t[y * nx + x] = dot13(w, &line[x], 1);
  }
  for (std::int64_t x = 0; x < nx; ++x) {
    for (std::int64_t i = 0; i < ny + 2 * kRadius; ++i) line[i] = t[clampi(i - kRadius, ny) * nx + x];
    for (std::int64_t y = 0; y < ny; ++y) o[y * nx + x] = dot13(w, &line[y], 1);
  }
  return out;
}

void round_hundredths_cpu(HostImage& img) {
  if (img.dtype() != DType::f32) throw Error("round_hundredths takes float32, got " + dtype_name(img.dtype()));
  float* p = img.data<float>();
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const volatile float scaled = p[i] * 100.0f;  // volatile: no contraction with the division
    p[i] = std::round(static_cast<float>(scaled)) / 100.0f;
  }
}

}  // namespace repix::ecc::smooth
