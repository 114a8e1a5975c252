// `gpu-naive`: the thesis's CUDA design (section 4.3.1): one thread per output pixel computes its
// three coefficients on its own: it copies its window from global memory (255 outside the image)
// into a per-thread array (local memory), sorts it (heap sort: no recursion) and sums the midranks
// of each T half by binary search, as seq does. 2-D blocks of `--block` x `--block` threads
// (default 8 x 8, the thesis's best in Table 5.5), enough blocks to cover the image (numbered
// on a 1-D grid, so no grid-dimension limit applies).
#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"

namespace repix::ami::ranklet {
namespace {

__global__ void naive_kernel(const std::uint8_t* img, std::int64_t width, std::int64_t height, int r,
                             std::int64_t blocks_x, float* out) {
  const std::int64_t bx = blockIdx.x % blocks_x, by = blockIdx.x / blocks_x;
  const std::int64_t x = bx * blockDim.x + threadIdx.x, y = by * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  std::uint8_t sorted[kMaxWindow * kMaxWindow];
  gather_window(img, width, height, x, y, r, sorted);
  heap_sort(sorted, r * r);
  std::uint32_t two_u[kOrientations];
  two_u_from_sorted(img, width, height, x, y, r, sorted, two_u);
  const std::int64_t plane = width * height;
  for (int o = 0; o < kOrientations; ++o) out[o * plane + y * width + x] = ranklet_value(two_u[o], r);
}

class NaivePlan final : public PlanBase {
 protected:
  void launch(const std::uint8_t* d_in, std::int64_t width, std::int64_t height, int r, float* out,
              const Options& opt, cudaStream_t stream) override {
    const int b = opt.block;
    if (b < 1 || b > 32) throw Error("--block must be from 1 to 32 (at most 1024 threads a block); got " + std::to_string(b));
    const std::int64_t blocks_x = (width + b - 1) / b, blocks_y = (height + b - 1) / b;
    naive_kernel<<<static_cast<unsigned>(blocks_x * blocks_y), dim3(b, b), 0, stream>>>(d_in, width, height, r, blocks_x,
                                                                                     out);
    REPIX_CUDA_LAUNCH();
  }
};

}  // namespace

Variant gpu_naive_variant() {
  return make_gpu_variant("gpu-naive", "naive",
                          "the thesis's CUDA design: a thread per pixel sorts its own window (local memory), 8x8 blocks",
                          [] { return std::make_unique<NaivePlan>(); });
}

}  // namespace repix::ami::ranklet
