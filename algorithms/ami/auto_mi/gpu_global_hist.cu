// `gpu-global-hist`: many blocks per lag (each a chunk of the lag's pairs), one global atomicAdd
// per pair into the lag's histogram. Parallel over pairs instead of lags; every pair still costs
// a global (L2) atomic.
#include <algorithm>

#include "ami/auto_mi/gpu_common.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kChunkPairs = std::int64_t(1) << 17;  // pairs per block (< 2^15 blocks per lag: grid.y)

template <class T>
__global__ void __launch_bounds__(kThreads) global_hist_kernel(Batch b) {
  const LagGeometry g = block_lag(b);
  const std::int64_t begin = block_chunk() * kChunkPairs;
  const std::int64_t end = min(begin + kChunkPairs, g.pairs());
  if (begin >= end) return;
  const T* l = static_cast<const T*>(b.labels);
  std::uint32_t* hist = block_hist(b);
  PairCursor c(begin + threadIdx.x, g.cols, kThreads);
  for (std::int64_t e = begin + threadIdx.x; e < end; e += kThreads, c.advance()) {
    const std::int64_t p = c.first(b.w);
    atomicAdd(&hist[label_at(l, p) * b.k + label_at(l, p + g.offset)], 1u);
  }
}

class GlobalHistPlan final : public LagPlan {
 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    // The batch's first lag has the most pairs; blocks past a later lag's end return at once.
    const std::int64_t most = lag_geometry(b.h, b.w, b.direction, b.lag0).pairs();
    const dim3 grid = batch_grid(b, (most + kChunkPairs - 1) / kChunkPairs);
    if (b.u16) global_hist_kernel<std::uint16_t><<<grid, kThreads, 0, stream>>>(b);
    else global_hist_kernel<std::uint8_t><<<grid, kThreads, 0, stream>>>(b);
    REPIX_CUDA_LAUNCH();
  }
};

}  // namespace

Variant gpu_global_hist_variant() {
  return make_lag_variant<GlobalHistPlan>("gpu-global-hist", "global-atomics",
                                          "blocks over each lag's pairs, one global atomicAdd per pair");
}

}  // namespace repix::ami::auto_mi::gpu
