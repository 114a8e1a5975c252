// GPU separable Gaussian smoothing (see smooth.hpp): one kernel per axis, each stages a tile of
// the image plus a 6-pixel apron in shared memory so every input pixel is read from global memory
// about once per pass instead of 13 times. The weights travel as a kernel argument (constant
// bank, no per-call upload to time).
#include "core/gpu.hpp"
#include "ecc/smooth.hpp"

namespace repix::ecc::smooth {

namespace {

struct W13 {
  float w[kTaps];
};

constexpr int kRowBX = 128, kRowBY = 4;            // row pass: 128 x 4 outputs per block
constexpr int kColBX = 32, kColBY = 8, kColPer = 4;  // column pass: 32 x 32 outputs per block

__device__ __forceinline__ int clampi(int i, int n) { return min(max(i, 0), n - 1); }

// Same order and rounding as the CPU reference's dot13: tap order, multiply and add rounded
// separately (the _rn intrinsics are never contracted into an FMA).
__device__ __forceinline__ float dot13(const W13& w, const float* v, int stride) {
  float acc = 0.0f;
#pragma unroll
  for (int t = 0; t < kTaps; ++t) acc = __fadd_rn(acc, __fmul_rn(w.w[t], v[t * stride]));
  return acc;
}

__global__ void rows_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, W13 w) {
  __shared__ float tile[kRowBY][kRowBX + 2 * kRadius];
  const int y = blockIdx.y * kRowBY + threadIdx.y;
  const int x0 = blockIdx.x * kRowBX;
  const bool row_ok = y < ny;
  const float* row = in + static_cast<std::size_t>(row_ok ? y : 0) * nx;
  for (int i = threadIdx.x; i < kRowBX + 2 * kRadius; i += kRowBX)
    tile[threadIdx.y][i] = row[clampi(x0 + i - kRadius, nx)];
  __syncthreads();
  const int x = x0 + threadIdx.x;
  if (row_ok && x < nx) out[static_cast<std::size_t>(y) * nx + x] = dot13(w, &tile[threadIdx.y][threadIdx.x], 1);
}

__global__ void cols_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, W13 w) {
  constexpr int kRows = kColBY * kColPer;
  __shared__ float tile[kRows + 2 * kRadius][kColBX];
  const int x = blockIdx.x * kColBX + threadIdx.x;
  const int y0 = blockIdx.y * kRows;
  const int xc = min(x, nx - 1);  // threads past the right edge load a valid column, store nothing
  for (int i = threadIdx.y; i < kRows + 2 * kRadius; i += kColBY)
    tile[i][threadIdx.x] = in[static_cast<std::size_t>(clampi(y0 + i - kRadius, ny)) * nx + xc];
  __syncthreads();
  if (x >= nx) return;
#pragma unroll
  for (int k = 0; k < kColPer; ++k) {
    const int r = threadIdx.y + k * kColBY;
    const int y = y0 + r;
    if (y < ny) out[static_cast<std::size_t>(y) * nx + x] = dot13(w, &tile[r][threadIdx.x], kColBX);
  }
}

__global__ void round_hundredths_kernel(float* d, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    d[i] = __fdiv_rn(roundf(__fmul_rn(d[i], 100.0f)), 100.0f);
}

}  // namespace

void round_hundredths_gpu(float* d, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((n + 255) / 256, 65535);
  round_hundredths_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(d, n);
  REPIX_CUDA_LAUNCH();
}

void smooth_gpu(const float* d_in, float* d_out, float* d_tmp, std::int64_t nx, std::int64_t ny,
                cudaStream_t stream, const Weights& w) {
  if (nx <= 0 || ny <= 0) return;
  if (nx > (1 << 30) || ny > (1 << 30) || nx * ny > (std::int64_t(1) << 40))
    throw Error("smoothing: image too large (" + std::to_string(nx) + "x" + std::to_string(ny) + ")");
  W13 k{};
  for (int t = 0; t < kTaps; ++t) k.w[t] = w[t];
  const int x = static_cast<int>(nx), y = static_cast<int>(ny);
  rows_kernel<<<dim3((x + kRowBX - 1) / kRowBX, (y + kRowBY - 1) / kRowBY), dim3(kRowBX, kRowBY), 0, stream>>>(
      d_in, d_tmp, x, y, k);
  REPIX_CUDA_LAUNCH();
  constexpr int kRows = kColBY * kColPer;
  cols_kernel<<<dim3((x + kColBX - 1) / kColBX, (y + kRows - 1) / kRows), dim3(kColBX, kColBY), 0, stream>>>(
      d_tmp, d_out, x, y, k);
  REPIX_CUDA_LAUNCH();
}

}  // namespace repix::ecc::smooth
