// `gpu-opt`: the shared-memory 16-bit histogram of gpu-shared-hist (shared_hist.cuh) walked by
// items of kRunPairs consecutive pairs of one overlap row instead of one pair per grid-stride
// step: the row/column arithmetic once per item (not per pair), neighbouring loads from one base
// pointer, and runs of equal bins added once (add_runs, nmi_core.hpp), which removes most shared
// atomics on smooth images. A round is kRunSteps items per thread = kSharedRoundPairs pairs, so
// the 16-bit counters stay exact with the same flush level.
#include "ami/auto_mi/shared_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {
namespace {

constexpr int kRunSteps = static_cast<int>(kSharedRoundPairs) / (kSharedHistThreads * kRunPairs);
static_assert(kRunSteps * kSharedHistThreads * kRunPairs == static_cast<int>(kSharedRoundPairs),
              "a round must be exactly the pairs the flush level allows");
constexpr std::int64_t kItemsPerBlock = kSharedChunkPairs / kRunPairs;

template <class T>
__global__ void __launch_bounds__(kSharedHistThreads, 1) run_hist_kernel(Batch b) {
  const LagGeometry g = batch_lag(b, blockIdx.y);
  const std::int64_t segs = run_segments(g.cols);
  const std::int64_t begin = blockIdx.x * kItemsPerBlock;
  const std::int64_t end = min(begin + kItemsPerBlock, g.rows * segs);
  if (begin >= end) return;  // uniform over the block: before any barrier
  REPIX_AMI_SHARED_HIST(sh, b);
  const T* l = static_cast<const T*>(b.labels);
  std::uint32_t* hist = b.hist + static_cast<std::size_t>(blockIdx.y) * b.k * b.k;
  const std::uint32_t k = static_cast<std::uint32_t>(b.k);
  PairCursor c(begin + threadIdx.x, segs, kSharedHistThreads);  // (row, segment) of the thread's item
  for (std::int64_t round = begin; round < end; round += std::int64_t(kRunSteps) * kSharedHistThreads) {
    for (int s = 0; s < kRunSteps; ++s, c.advance()) {
      const std::int64_t q = round + std::int64_t(s) * kSharedHistThreads + threadIdx.x;
      if (q >= end) continue;
      const std::int64_t x0 = c.x * kRunPairs;
      const T* first = l + c.y * b.w + x0;
      add_runs(first, first + g.offset, static_cast<int>(min(std::int64_t(kRunPairs), g.cols - x0)), k,
               [](const T* p, int j) { return label_at(p, j); },
               [&sh](std::uint32_t bin, std::uint32_t run) { sh.add(bin, run); });
    }
    sh.end_round(hist, b.hot_flushes);
  }
  sh.finish(hist);
}

class RunHistPlan final : public LagPlan {
 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    const LagGeometry g = lag_geometry(b.h, b.w, b.direction, b.lag0);  // the batch's largest lag
    const std::int64_t chunks = (g.rows * run_segments(g.cols) + kItemsPerBlock - 1) / kItemsPerBlock;
    if (b.u16) launch_shared_hist(run_hist_kernel<std::uint16_t>, chunks, b, stream);
    else launch_shared_hist(run_hist_kernel<std::uint8_t>, chunks, b, stream);
  }
};

}  // namespace

Variant gpu_opt_variant() {
  return make_lag_variant<RunHistPlan>(
      "gpu-opt", "run-merged",
      "shared 16-bit histogram walked 8 consecutive pairs of a row per thread, equal neighbouring pairs added once");
}

}  // namespace repix::ami::auto_mi::gpu
