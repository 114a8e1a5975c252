// `gpu-run-merge` (gpu-opt until the epoch kernel of epoch_hist.cuh beat it: the ablation step
// between gpu-shared-warp-agg and gpu-opt; also the uint16-label path of the epoch kernels):
// the shared-memory 16-bit histogram of gpu-shared-hist (shared_hist.cuh) walked by
// items of kRunPairs consecutive pairs of one overlap row instead of one pair per grid-stride
// step: the row/column arithmetic once per item (not per pair), neighbouring loads from one base
// pointer, and runs of equal bins added once (add_runs, nmi_core.hpp), which removes most shared
// atomics on smooth images (and a warp whose items all end on one bin adds once); uint8 rows a
// multiple of 8 wide load 8 labels at once. A round is kRunSteps items per thread = kSharedRoundPairs pairs, so
// the 16-bit counters stay exact with the same flush level.
#include <cstdint>

#include "ami/auto_mi/shared_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {
namespace {

constexpr int kRunSteps = static_cast<int>(kSharedRoundPairs) / (kSharedHistThreads * kRunPairs);
static_assert(kRunSteps * kSharedHistThreads * kRunPairs == static_cast<int>(kSharedRoundPairs),
              "a round must be exactly the pairs the flush level allows");
constexpr std::int64_t kItemsPerBlock = kSharedChunkPairs / kRunPairs;

// Packed: uint8 labels, rows a multiple of 8 wide (8-byte aligned items): a full item's 8 first
// labels are one 64-bit load and its 8 partners at most two (unaligned_word), instead of 16 byte
// loads; L1 wavefronts per pair drop about fivefold. Items at a row's end, and the image's last
// bytes (an aligned partner word must not read past the image), take the byte path.
template <class T, bool Packed>
__global__ void __launch_bounds__(kSharedHistThreads, 1) run_hist_kernel(Batch b) {
  const LagGeometry g = block_lag(b);
  const std::int64_t segs = run_segments(g.cols);
  const std::int64_t begin = block_chunk() * kItemsPerBlock;
  const std::int64_t end = min(begin + kItemsPerBlock, g.rows * segs);
  if (begin >= end) return;  // uniform over the block: before any barrier
  REPIX_AMI_SHARED_HIST(sh, b);
  const T* l = static_cast<const T*>(b.labels);
  std::uint32_t* hist = block_hist(b);
  const std::uint32_t k = static_cast<std::uint32_t>(b.k);
  const std::int64_t pixels = b.h * b.w;
  auto add = [&sh](std::uint32_t bin, std::uint32_t run) { sh.add(bin, run); };
  PairCursor c(begin + threadIdx.x, segs, kSharedHistThreads);  // (row, segment) of the thread's item
  for (std::int64_t round = begin; round < end; round += std::int64_t(kRunSteps) * kSharedHistThreads) {
    // Every lane runs every step (the warp votes below); lanes past the end hold no pairs.
    for (int s = 0; s < kRunSteps; ++s, c.advance()) {
      const std::int64_t q = round + std::int64_t(s) * kSharedHistThreads + threadIdx.x;
      const bool valid = q < end;
      Run last{0xFFFFFFFFu, 0};
      if (valid) {
        const std::int64_t x0 = c.x * kRunPairs;
        const std::int64_t p = c.y * b.w + x0, p2 = p + g.offset;
        const int n = static_cast<int>(min(std::int64_t(kRunPairs), g.cols - x0));
        bool done = false;
        if constexpr (Packed) {
          const unsigned mis = static_cast<unsigned>(p2 & 7);
          const std::int64_t base2 = p2 - mis;
          if (n == kRunPairs && base2 + (mis ? 16 : 8) <= pixels) {
            const auto* words = static_cast<const unsigned long long*>(b.labels);
            const std::uint64_t first = __ldg(words + p / 8);
            const std::uint64_t lo = __ldg(words + base2 / 8);
            const std::uint64_t second = unaligned_word(lo, mis ? __ldg(words + base2 / 8 + 1) : 0ull, mis);
            last = add_runs(kRunPairs, [&](int j) { return byte_of(first, j) * k + byte_of(second, j); }, add);
            done = true;
          }
        }
        if (!done) last = add_runs(n, [&](int j) { return label_at(l, p + j) * k + label_at(l, p2 + j); }, add);
      }
      // A warp whose items all end on the same bin (a smooth region: often the whole item is one
      // run) adds once for all 32 lanes (at most 256 pairs, within the round's bound) instead of
      // 32 atomics on one shared address.
      int same = 0;
      __match_all_sync(0xFFFFFFFFu, last.bin, &same);
      if (same) {
        const std::uint32_t total = __reduce_add_sync(0xFFFFFFFFu, last.length);
        if ((threadIdx.x & 31) == 0 && valid) sh.add(last.bin, total);
      } else if (valid) {
        sh.add(last.bin, last.length);
      }
    }
    sh.end_round(hist, b.hot_flushes);
  }
  sh.finish(hist);
}

}  // namespace

void count_run_merged(const Batch& b, cudaStream_t stream) {
    const LagGeometry g = lag_geometry(b.h, b.w, b.direction, b.lag0);  // the batch's largest lag
    const std::int64_t chunks = (g.rows * run_segments(g.cols) + kItemsPerBlock - 1) / kItemsPerBlock;
    const bool packed = !b.u16 && b.w % 8 == 0 && reinterpret_cast<std::uintptr_t>(b.labels) % 8 == 0;
    if (b.u16) launch_shared_hist(run_hist_kernel<std::uint16_t, false>, chunks, b, stream);
    else if (packed) launch_shared_hist(run_hist_kernel<std::uint8_t, true>, chunks, b, stream);
    else launch_shared_hist(run_hist_kernel<std::uint8_t, false>, chunks, b, stream);
}

namespace {
class RunHistPlan final : public LagPlan {
 protected:
  void count(const Batch& b, cudaStream_t stream) override { count_run_merged(b, stream); }
};
}  // namespace

Variant gpu_run_merge_variant() {
  return make_lag_variant<RunHistPlan>(
      "gpu-run-merge", "run-merged",
      "shared 16-bit histogram walked 8 consecutive pairs of a row per thread, equal neighbouring pairs added once");
}

}  // namespace repix::ami::auto_mi::gpu
