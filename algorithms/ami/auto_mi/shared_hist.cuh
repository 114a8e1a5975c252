// The privatised shared-memory counting kernel of gpu-shared-hist and gpu-opt (they differ in
// Aggregate): one block per chunk of one lag's pairs, the whole k x k joint histogram in shared
// memory as 16-bit counters, two per 32-bit word (nmi_core.hpp says why and how they stay exact:
// rounds of kSharedRoundPairs pairs, counters reaching the flush level moved out after the round's
// barrier). At the end the block adds its nonzero counters to the lag's global histogram.
#pragma once
#include "ami/auto_mi/gpu_common.cuh"

namespace repix::ami::auto_mi::gpu {

constexpr std::int64_t kSharedChunkPairs = std::int64_t(1) << 20;  // 64 rounds per block

// Aggregate: lanes of a warp holding the same bin (__match_any_sync) add once, by popcount: few
// shared atomics where pairs repeat (smooth images: the diagonal), an extra match where they do not.
template <class T, bool Aggregate>
__global__ void __launch_bounds__(kSharedHistThreads, 1) shared_hist_kernel(Batch b) {
  extern __shared__ std::uint32_t words[];
  __shared__ std::uint32_t hot[kHotCapacity];
  __shared__ int hot_count;
  const LagGeometry g = batch_lag(b, blockIdx.y);
  const std::int64_t begin = blockIdx.x * kSharedChunkPairs;
  const std::int64_t end = min(begin + kSharedChunkPairs, g.pairs());
  if (begin >= end) return;  // uniform over the block: before any barrier
  const int tid = threadIdx.x;
  const int nwords = static_cast<int>(shared_hist_words(b.k));
  for (int i = tid; i < nwords; i += kSharedHistThreads) words[i] = 0;
  if (tid == 0) hot_count = 0;
  __syncthreads();
  const T* l = static_cast<const T*>(b.labels);
  std::uint32_t* hist = b.hist + static_cast<std::size_t>(blockIdx.y) * b.k * b.k;
  const std::uint32_t level = b.flush_level;
  PairCursor c(begin + tid, g.cols, kSharedHistThreads);
  for (std::int64_t round = begin; round < end; round += kSharedRoundPairs) {
    const std::int64_t round_end = min(round + std::int64_t(kSharedRoundPairs), end);
    // Every lane runs every step (match_any needs the whole warp); lanes past the end hold no pair.
    for (int s = 0; s < kSharedHistPairsPerThread; ++s, c.advance()) {
      const std::int64_t e = round + std::int64_t(s) * kSharedHistThreads + tid;
      const bool valid = e < round_end;
      std::uint32_t bin = 0xFFFFFFFFu;
      if (valid) {
        const std::int64_t p = c.first(b.w);
        bin = label_at(l, p) * b.k + label_at(l, p + g.offset);
      }
      std::uint32_t add = valid ? 1u : 0u;
      if constexpr (Aggregate) {
        const unsigned peers = __match_any_sync(0xFFFFFFFFu, bin);
        add = valid && (tid & 31) == __ffs(peers) - 1 ? static_cast<std::uint32_t>(__popc(peers)) : 0u;
      }
      if (add != 0) {
        const PackedSlot slot = packed_slot(bin);
        const std::uint32_t old = atomicAdd(&words[slot.word], add << slot.shift);
        if (reaches_flush_level(old, slot.shift, add, level)) {
          const int i = atomicAdd(&hot_count, 1);
          if (i < kHotCapacity) hot[i] = bin;
        }
      }
    }
    __syncthreads();
    const int n_hot = hot_count;
    if (n_hot > kHotCapacity) {
      // The list overflowed: every counter at or above the level, word by word (one thread each).
      for (int i = tid; i < nwords; i += kSharedHistThreads) {
        std::uint32_t word = words[i];
        for (std::uint32_t shift = 0; shift <= 16; shift += 16) {
          const std::uint32_t count = packed_count(word, shift);
          if (count >= level) {
            atomicAdd(&hist[2 * i + shift / 16], count);
            word -= count << shift;
          }
        }
        words[i] = word;
      }
    } else {
      for (int i = tid; i < n_hot; i += kSharedHistThreads) {
        const PackedSlot slot = packed_slot(hot[i]);
        const std::uint32_t count = packed_count(words[slot.word], slot.shift);
        atomicAdd(&hist[hot[i]], count);
        atomicSub(&words[slot.word], count << slot.shift);  // its neighbour may be moved by another thread
      }
    }
    if (tid == 0 && n_hot > 0) atomicAdd(b.hot_flushes, 1ull);
    __syncthreads();
    if (tid == 0) hot_count = 0;
    __syncthreads();
  }
  for (int i = tid; i < nwords; i += kSharedHistThreads) {
    const std::uint32_t word = words[i];
    if (word & 0xFFFFu) atomicAdd(&hist[2 * i], word & 0xFFFFu);
    if (word >> 16) atomicAdd(&hist[2 * i + 1], word >> 16);
  }
}

// The plan of both variants.
template <bool Aggregate>
class SharedHistPlan final : public LagPlan {
 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    const std::int64_t most = lag_geometry(b.h, b.w, b.direction, b.lag0).pairs();
    const dim3 grid(static_cast<unsigned>((most + kSharedChunkPairs - 1) / kSharedChunkPairs),
                    static_cast<unsigned>(b.lags));
    const std::size_t smem = shared_hist_words(b.k) * sizeof(std::uint32_t);
    if (b.u16) launch(shared_hist_kernel<std::uint16_t, Aggregate>, grid, smem, b, stream);
    else launch(shared_hist_kernel<std::uint8_t, Aggregate>, grid, smem, b, stream);
  }

 private:
  static void launch(void (*kernel)(Batch), dim3 grid, std::size_t smem, const Batch& b, cudaStream_t stream) {
    REPIX_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<grid, kSharedHistThreads, smem, stream>>>(b);
    REPIX_CUDA_LAUNCH();
  }
};

}  // namespace repix::ami::auto_mi::gpu
