// `gpu-opt`: the fastest exact ranklet kernels we have (see gpu_opt_core.hpp for the per-thread and
// per-lane logic). r <= 8: a 32 x 8 tile of output pixels per block, the tile's input (with its
// window halo, 255 outside the image) staged once in shared memory, a thread per pixel counting
// quadrant pairs in registers. r = 16, 32: a warp per run of 32 pixels of a row (grid-stride,
// consecutive warps on neighbouring runs so their windows share L1 lines), quadrant histograms in
// the warp's 4 KiB of shared memory, built for the run's first pixel and slid one column at a time
// for the others, with warp-aggregated updates (__match_any_sync: the many equal values of a
// smooth image cost one add per value, not one per lane), one 8-bin pass per lane. All three
// orientations come from one histogram; every 2U is an exact integer.
#include "ami/ranklet/gpu_opt_core.hpp"
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {
namespace {

constexpr int kTileW = 32, kTileH = 8;      // pairwise kernel: output tile = block
constexpr int kWarpsPerBlock = 8;           // histogram kernel
constexpr unsigned kFull = 0xffffffffu;

template <int R>
__global__ void __launch_bounds__(kTileW * kTileH)
    pairwise_kernel(const std::uint8_t* __restrict__ img, std::int64_t width, std::int64_t height,
                    std::int64_t tiles_x, float* __restrict__ out) {
  constexpr int H = R / 2, SW = kTileW + R - 1, SH = kTileH + R - 1;
  __shared__ std::uint8_t tile[SH][SW];
  const std::int64_t tx = blockIdx.x % tiles_x, ty = blockIdx.x / tiles_x;
  const std::int64_t x0 = tx * kTileW - H + 1, y0 = ty * kTileH - H + 1;  // input origin of the tile's windows
  for (int e = threadIdx.y * kTileW + threadIdx.x; e < SH * SW; e += kTileW * kTileH) {
    const int i = e / SW, j = e - i * SW;
    tile[i][j] = pixel_or_pad(img, width, height, x0 + j, y0 + i);
  }
  __syncthreads();
  const std::int64_t x = tx * kTileW + threadIdx.x, y = ty * kTileH + threadIdx.y;
  if (x >= width || y >= height) return;
  std::uint8_t win[R * R];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < R; ++j) win[i * R + j] = tile[threadIdx.y + i][threadIdx.x + j];
  std::uint32_t two_u[kOrientations];
  opt::two_u_pairwise<R>(win, two_u);
  const std::int64_t plane = width * height, at = y * width + x;
#pragma unroll
  for (int o = 0; o < kOrientations; ++o) out[o * plane + at] = ranklet_value(two_u[o], R);
}

// Warp-aggregated update of the warp's histogram: the lanes holding the same word add (or take
// away) their count once (__match_any_sync), so a smooth image's many equal values cost one shared
// atomic per distinct word instead of one per lane.
__device__ __forceinline__ void aggregated_update(std::uint32_t* hw, int key, bool adding, int lane) {
  const unsigned same = __match_any_sync(kFull, key);
  if (__ffs(same) - 1 == lane) {
    const std::uint32_t n = static_cast<std::uint32_t>(__popc(same));
    atomicAdd(&hw[key], adding ? n : 0u - n);  // uint32 arithmetic: the counts wrap back exactly
  }
}

template <int R>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    histogram_kernel(const std::uint8_t* __restrict__ img, std::int64_t width, std::int64_t height,
                     std::int64_t runs_x, float* __restrict__ out) {
  static_assert(R * R % 32 == 0 && 2 * R % 32 == 0, "every lane takes part in every update round");
  __shared__ std::uint32_t hist[kWarpsPerBlock][4 * 256];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  std::uint32_t* hw = hist[warp];
  const std::int64_t pixels = width * height, runs = runs_x * height;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  // Consecutive warps take consecutive runs of a row: their windows share L1 lines.
  for (std::int64_t run = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp; run < runs; run += stride) {
    const std::int64_t y = run / runs_x, x0 = (run - y * runs_x) * opt::kRun;
    const std::int64_t x_end = x0 + opt::kRun < width ? x0 + opt::kRun : width;
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
      for (int k = 0; k < opt::kBinsPerLane; ++k) hw[q * 256 + k * 32 + lane] = 0;
    __syncwarp();
    // The run's first window whole (lanes walk it row by row: coalesced byte loads).
#pragma unroll 4
    for (int e = lane; e < R * R; e += 32) aggregated_update(hw, opt::window_key<R>(img, width, height, x0, y, e), true, lane);
    for (std::int64_t x = x0; x < x_end; ++x) {
      if (x > x0) {  // slide from x - 1: the four changed columns
#pragma unroll
        for (int u = lane; u < 2 * R; u += 32) aggregated_update(hw, opt::slide_key<R>(img, width, height, x, y, u, true), true, lane);
#pragma unroll
        for (int u = lane; u < 2 * R; u += 32) aggregated_update(hw, opt::slide_key<R>(img, width, height, x, y, u, false), false, lane);
      }
      __syncwarp();
      std::uint32_t c[4][opt::kBinsPerLane], above[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        std::uint32_t total = 0;
#pragma unroll
        for (int k = 0; k < opt::kBinsPerLane; ++k) {
          c[q][k] = hw[q * 256 + k * 32 + lane];
          total += c[q][k];
        }
        std::uint32_t suffix = total;  // inclusive suffix sum over lanes lane .. 31
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
          const std::uint32_t v = __shfl_down_sync(kFull, suffix, d);
          if (lane + d < 32) suffix += v;
        }
        above[q] = suffix - total;
      }
      std::uint32_t two_u[kOrientations];
      opt::lane_two_u(c, above, two_u);
#pragma unroll
      for (int o = 0; o < kOrientations; ++o)
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) two_u[o] += __shfl_xor_sync(kFull, two_u[o], d);
      if (lane < kOrientations) {
        const std::uint32_t mine = lane == 0 ? two_u[0] : lane == 1 ? two_u[1] : two_u[2];
        out[lane * pixels + y * width + x] = ranklet_value(mine, R);
      }
      __syncwarp();  // every lane has read its bins before the next updates (or the next run's clearing)
    }
  }
}

class OptPlan final : public PlanBase {
 protected:
  void launch(const std::uint8_t* d_in, std::int64_t width, std::int64_t height, int r, float* out, const Options&,
              cudaStream_t stream) override {
    switch (r) {
      case 2: return pairwise<2>(d_in, width, height, out, stream);
      case 4: return pairwise<4>(d_in, width, height, out, stream);
      case 8: return pairwise<8>(d_in, width, height, out, stream);
      case 16: return histogram<16>(d_in, width, height, out, stream);
      case 32: return histogram<32>(d_in, width, height, out, stream);
      default: throw Error("internal: gpu-opt has no kernel for window " + std::to_string(r));
    }
  }

 private:
  template <int R>
  static void pairwise(const std::uint8_t* d_in, std::int64_t width, std::int64_t height, float* out, cudaStream_t stream) {
    static_assert(R <= opt::kPairwiseMaxWindow, "pairwise kernels are for small windows");
    const std::int64_t tiles_x = (width + kTileW - 1) / kTileW, tiles_y = (height + kTileH - 1) / kTileH;
    pairwise_kernel<R><<<static_cast<unsigned>(tiles_x * tiles_y), dim3(kTileW, kTileH), 0, stream>>>(d_in, width, height,
                                                                                                   tiles_x, out);
    REPIX_CUDA_LAUNCH();
  }
  template <int R>
  static void histogram(const std::uint8_t* d_in, std::int64_t width, std::int64_t height, float* out, cudaStream_t stream) {
    const std::int64_t runs_x = (width + opt::kRun - 1) / opt::kRun, runs = runs_x * height;
    // Enough warps to fill the machine many times over; each walks the runs with a grid stride.
    const std::int64_t blocks = std::min<std::int64_t>((runs + kWarpsPerBlock - 1) / kWarpsPerBlock, std::int64_t(1) << 20);
    histogram_kernel<R><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(d_in, width, height, runs_x, out);
    REPIX_CUDA_LAUNCH();
  }
};

}  // namespace

std::unique_ptr<PlanBase> make_gpu_opt_plan() { return std::make_unique<OptPlan>(); }

Variant gpu_opt_variant() {
  return make_gpu_variant("gpu-opt", "beyond-paper",
                          "r <= 8: thread per pixel counting quadrant pairs from a shared-memory tile; r >= 16: warp per "
                          "32-pixel run, quadrant histograms in shared memory slid a column at a time, 8 bins per lane; "
                          "all orientations at once",
                          [] { return make_gpu_opt_plan(); });
}

}  // namespace repix::ami::ranklet
