// Separable Gaussian smoothing of float32 2D images: the second step of the ECC paper's GPU-only
// pipeline (Table 2: ECC + Gaussian smoothing, iterated). The paper gives the kernel width (13
// taps) but not sigma; we use sigma = 2 (the 13 taps then span +-3 sigma, which holds 99.7 % of
// the mass). Weights are exp(-x^2 / (2 sigma^2)) for x = -6..6, computed in double, normalised
// to sum 1, rounded to float. Borders clamp to the edge (replicate the outermost pixel): no
// darkening at the image edge, so the value range stays inside the input's.
//
// Both passes accumulate in float in tap order with separately rounded multiplies and adds (the
// GPU uses __fmul_rn/__fadd_rn, so no fused multiply-add), rows first, then columns: the GPU and
// CPU results are meant to be bit-identical, and the tests allow only a tight tolerance. That
// matters because the smoothed floats feed ECC's bins, where any difference changes the curve.
#pragma once
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

#include "core/image.hpp"

namespace repix::ecc::smooth {

inline constexpr int kTaps = 13;
inline constexpr int kRadius = kTaps / 2;
inline constexpr double kSigma = 2.0;

using Weights = std::array<float, kTaps>;
Weights gaussian_weights(double sigma = kSigma);

// CPU reference: one smoothing step of a float32 2D image (throws repix::Error otherwise).
HostImage smooth_cpu(const HostImage& img, const Weights& w = gaussian_weights());

// GPU: one smoothing step of an nx*ny float image in device memory, asynchronous on `stream`.
// d_tmp holds nx*ny floats (the row pass); d_out may equal d_in (the column pass reads d_tmp).
void smooth_gpu(const float* d_in, float* d_out, float* d_tmp, std::int64_t nx, std::int64_t ny,
                cudaStream_t stream, const Weights& w = gaussian_weights());

// Rounds every value to the nearest hundredth, as the GRF generator stores its fields:
// roundf(v * 100) / 100 in float (half away from zero), the same IEEE operations on the CPU and
// the GPU. The Table 2 pipeline applies it after each smoothing step: smoothing a 0.01-rounded
// GRF otherwise makes nearly every pixel value distinct (~1M bins at 1024^2), while the paper's
// pipeline, like its inputs, works on a few hundred to ~1000 bins (the authors' code keeps at most
// 1024 per chunk). Keeping the data on the 0.01 grid keeps the ECC exact and comparable.
void round_hundredths_cpu(HostImage& img);
void round_hundredths_gpu(float* d, std::int64_t n, cudaStream_t stream);

}  // namespace repix::ecc::smooth
