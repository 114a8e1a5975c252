// Gaussian smoothing (Table 2's pipeline step): the CPU reference against a direct 2D convolution
// oracle (the outer product of the weights, in double), and the GPU kernels against the CPU
// reference on edge shapes around the tile sizes (128-wide row tiles, 32x32 column tiles). The
// GPU is meant to be bit-identical to the CPU (same order, no FMA); the test allows 1 ulp-ish.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/float_bits.hpp"
#include "core/gpu.hpp"
#include "ecc/smooth.hpp"

namespace repix {
namespace {

using ecc::smooth::kRadius;
using ecc::smooth::kTaps;

HostImage random_float_image(std::int64_t nx, std::int64_t ny, std::uint32_t seed) {
  HostImage img(DType::f32, Shape::d2(nx, ny));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = d(rng);
  return img;
}

// Direct 2D convolution with clamp-to-edge borders: a different computation of the same result.
std::vector<double> oracle(const HostImage& img, const ecc::smooth::Weights& w) {
  const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
  const float* in = img.data<float>();
  std::vector<double> out(static_cast<std::size_t>(nx * ny));
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      double acc = 0;
      for (int j = 0; j < kTaps; ++j)
        for (int i = 0; i < kTaps; ++i) {
          const std::int64_t xx = std::clamp<std::int64_t>(x + i - kRadius, 0, nx - 1);
          const std::int64_t yy = std::clamp<std::int64_t>(y + j - kRadius, 0, ny - 1);
          acc += double(w[i]) * double(w[j]) * in[yy * nx + xx];
        }
      out[y * nx + x] = acc;
    }
  return out;
}

TEST(EccSmooth, WeightsAreANormalisedSymmetricGaussian) {
  const auto w = ecc::smooth::gaussian_weights();
  double sum = 0;
  for (int t = 0; t < kTaps; ++t) sum += w[t];
  EXPECT_NEAR(sum, 1.0, 1e-6);
  for (int t = 0; t < kRadius; ++t) EXPECT_EQ(w[t], w[kTaps - 1 - t]);
  for (int t = 0; t < kRadius; ++t) EXPECT_LT(w[t], w[t + 1]);
  EXPECT_NEAR(w[kRadius + 1] / w[kRadius], std::exp(-1.0 / (2 * 2.0 * 2.0)), 1e-6);  // sigma 2
}

TEST(EccSmooth, CpuMatchesDirectConvolution) {
  for (auto [nx, ny] : {std::pair<int, int>{1, 1}, {1, 9}, {17, 1}, {31, 23}, {64, 70}}) {
    const HostImage img = random_float_image(nx, ny, 7 + nx * 3 + ny);
    const HostImage out = ecc::smooth::smooth_cpu(img);
    const auto want = oracle(img, ecc::smooth::gaussian_weights());
    for (std::int64_t i = 0; i < img.size(); ++i)
      ASSERT_NEAR(out.data<float>()[i], want[i], 2e-6) << nx << "x" << ny << " at " << i;
  }
}

TEST(EccSmooth, ConstantStaysConstantAndRangeIsKept) {
  HostImage img(DType::f32, Shape::d2(20, 15));
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = 0.25f;
  const HostImage out = ecc::smooth::smooth_cpu(img);
  for (std::int64_t i = 0; i < img.size(); ++i) EXPECT_NEAR(out.data<float>()[i], 0.25f, 1e-6f);
}

TEST(EccSmooth, RejectsNonFloatOr3D) {
  EXPECT_THROW(ecc::smooth::smooth_cpu(HostImage(DType::u8, Shape::d2(4, 4))), Error);
  EXPECT_THROW(ecc::smooth::smooth_cpu(HostImage(DType::f32, Shape::d3(4, 4, 4))), Error);
}

TEST(EccSmoothGpu, MatchesCpuOnEdgeShapesAndInPlace) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  CudaStream s;
  for (auto [nx, ny] : {std::pair<int, int>{1, 1}, {1, 40}, {129, 5}, {127, 33}, {128, 32},
                        {300, 257}, {1024, 64}}) {
    const HostImage img = random_float_image(nx, ny, 100 + nx + 7 * ny);
    const HostImage want = ecc::smooth::smooth_cpu(img);
    DeviceBuffer<float> d(img.size()), tmp(img.size());
    copy_to_device_sync(d.get(), img.raw(), img.bytes());
    ecc::smooth::smooth_gpu(d.get(), d.get(), tmp.get(), nx, ny, s.get());  // in place
    s.sync();
    std::vector<float> got(static_cast<std::size_t>(img.size()));
    REPIX_CUDA(cudaMemcpy(got.data(), d.get(), img.bytes(), cudaMemcpyDeviceToHost));
    double worst = 0;
    std::int64_t differ = 0;
    for (std::int64_t i = 0; i < img.size(); ++i) {
      const double diff = std::fabs(double(got[i]) - want.data<float>()[i]);
      worst = std::max(worst, diff);
      differ += diff != 0;
    }
    EXPECT_LE(worst, 1e-6) << nx << "x" << ny;
    // Same order, same rounding: expected bit-identical (the pipeline's ECC check relies on the
    // GPU's own values, so this is a quality bar rather than a correctness need).
    EXPECT_EQ(differ, 0) << nx << "x" << ny << ": " << differ << " elements differ, worst " << worst;
  }
}

TEST(EccSmooth, RoundHundredthsCpu) {
  HostImage img(DType::f32, Shape::d2(6, 1));
  const float in[] = {0.004f, -0.004f, 0.005f, -1.236f, 2.0f, 123.4567f};
  std::copy(in, in + 6, img.data<float>());
  ecc::smooth::round_hundredths_cpu(img);
  const float want[] = {0.0f, -0.0f, 0.01f, -1.24f, 2.0f, 123.46f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(img.data<float>()[i], want[i]) << i;
}

// The pipeline's rounding on the GPU equals the CPU's bit for bit (a one-ulp difference before
// rounding could move a value to the next hundredth and change the ECC).
TEST(EccSmoothGpu, RoundHundredthsMatchesCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  HostImage img = random_float_image(333, 71, 5);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] *= 7.0f;  // beyond [-1, 1]
  DeviceBuffer<float> d(img.size());
  copy_to_device_sync(d.get(), img.raw(), img.bytes());
  CudaStream s;
  ecc::smooth::round_hundredths_gpu(d.get(), img.size(), s.get());
  s.sync();
  std::vector<float> got(static_cast<std::size_t>(img.size()));
  REPIX_CUDA(cudaMemcpy(got.data(), d.get(), img.bytes(), cudaMemcpyDeviceToHost));
  ecc::smooth::round_hundredths_cpu(img);
  for (std::int64_t i = 0; i < img.size(); ++i)
    ASSERT_EQ(float_bits(got[static_cast<std::size_t>(i)]), float_bits(img.data<float>()[i])) << i;
}

}  // namespace
}  // namespace repix
