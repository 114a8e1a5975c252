// The privatised shared-memory joint histogram of gpu-shared-hist, gpu-shared-warp-agg and gpu-opt:
// one block per chunk of one lag's pairs, the whole k x k histogram in shared memory as 16-bit
// counters, two per 32-bit word (nmi_core.hpp says why and how they stay exact: rounds of at most
// kSharedRoundPairs pairs between barriers, counters reaching the flush level moved to the global
// histogram after the round). At the end the block adds its nonzero counters to the lag's global
// histogram. The variants differ only in how they walk their pairs (their own kernels).
#pragma once
#include "ami/auto_mi/gpu_common.cuh"

namespace repix::ami::auto_mi::gpu {

constexpr std::int64_t kSharedChunkPairs = std::int64_t(1) << 20;  // 64 rounds per block

// The block's shared histogram: dynamic shared memory of shared_hist_words(k) words, plus the
// round's hot list. Every member function is called by every thread of the block.
class SharedHist {
 public:
  __device__ SharedHist(std::uint32_t* words, int k, std::uint32_t level, std::uint32_t* hot, int* hot_count)
      : words_(words), nwords_(static_cast<int>(shared_hist_words(k))), level_(level), hot_(hot), hot_count_(hot_count) {
    for (int i = threadIdx.x; i < nwords_; i += blockDim.x) words_[i] = 0;
    if (threadIdx.x == 0) *hot_count_ = 0;
    __syncthreads();
  }
  // `add` more pairs of `bin` (add >= 1; at most kSharedRoundPairs per round over the block).
  __device__ void add(std::uint32_t bin, std::uint32_t add) {
    const PackedSlot slot = packed_slot(bin);
    const std::uint32_t old = atomicAdd(&words_[slot.word], add << slot.shift);
    if (reaches_flush_level(old, slot.shift, add, level_)) {
      const int i = atomicAdd(hot_count_, 1);
      if (i < kHotCapacity) hot_[i] = bin;
    }
  }
  // After a round: the hot counters (or, when the list overflowed, every counter at or above the
  // level) moved to `hist`; barriers before and after.
  __device__ void end_round(std::uint32_t* hist, unsigned long long* flush_rounds) {
    __syncthreads();
    const int n_hot = *hot_count_;
    if (n_hot > kHotCapacity) {
      for (int i = threadIdx.x; i < nwords_; i += blockDim.x) {  // one thread per word: plain stores
        std::uint32_t word = words_[i];
        for (std::uint32_t shift = 0; shift <= 16; shift += 16) {
          const std::uint32_t count = packed_count(word, shift);
          if (count >= level_) {
            atomicAdd(&hist[2 * i + shift / 16], count);
            word -= count << shift;
          }
        }
        words_[i] = word;
      }
    } else {
      for (int i = threadIdx.x; i < n_hot; i += blockDim.x) {
        const PackedSlot slot = packed_slot(hot_[i]);
        // Atomic read and subtract: the word's other counter may be moved by another thread now.
        const std::uint32_t count = packed_count(atomicOr(&words_[slot.word], 0u), slot.shift);
        atomicAdd(&hist[hot_[i]], count);
        atomicSub(&words_[slot.word], count << slot.shift);
      }
    }
    if (threadIdx.x == 0 && n_hot > 0) atomicAdd(flush_rounds, 1ull);
    __syncthreads();
    if (threadIdx.x == 0) *hot_count_ = 0;
    __syncthreads();
  }
  // Every nonzero counter added to `hist`.
  __device__ void finish(std::uint32_t* hist) {
    for (int i = threadIdx.x; i < nwords_; i += blockDim.x) {
      const std::uint32_t word = words_[i];
      if (word & 0xFFFFu) atomicAdd(&hist[2 * i], word & 0xFFFFu);
      if (word >> 16) atomicAdd(&hist[2 * i + 1], word >> 16);
    }
  }

 private:
  std::uint32_t* words_;
  int nwords_;
  std::uint32_t level_;
  std::uint32_t* hot_;
  int* hot_count_;
};

// The shared state of a counting kernel: `words` is the kernel's dynamic shared memory.
#define REPIX_AMI_SHARED_HIST(name, batch)                  \
  extern __shared__ std::uint32_t repix_ami_words_[];       \
  __shared__ std::uint32_t repix_ami_hot_[kHotCapacity];    \
  __shared__ int repix_ami_hot_count_;                      \
  SharedHist name(repix_ami_words_, (batch).k, (batch).flush_level, repix_ami_hot_, &repix_ami_hot_count_)

// Pair by pair over the chunk, each thread a grid-stride walk (PairCursor), one shared atomic per
// pair. Aggregate: lanes of a warp holding the same bin (__match_any_sync) add once, by popcount.
template <class T, bool Aggregate>
__global__ void __launch_bounds__(kSharedHistThreads, 1) shared_hist_kernel(Batch b) {
  const LagGeometry g = block_lag(b);
  const std::int64_t begin = block_chunk() * kSharedChunkPairs;
  const std::int64_t end = min(begin + kSharedChunkPairs, g.pairs());
  if (begin >= end) return;  // uniform over the block: before any barrier
  REPIX_AMI_SHARED_HIST(sh, b);
  const int tid = threadIdx.x;
  const T* l = static_cast<const T*>(b.labels);
  std::uint32_t* hist = block_hist(b);
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
      if (add != 0) sh.add(bin, add);
    }
    sh.end_round(hist, b.hot_flushes);
  }
  sh.finish(hist);
}

// Launches one of the shared-histogram kernels over a batch: grid (lags, chunks of the batch's
// largest lag: batch_grid); blocks past a smaller lag's end return at once.
inline void launch_shared_hist(void (*kernel)(Batch), std::int64_t chunks, const Batch& b, cudaStream_t stream) {
  const std::size_t smem = shared_hist_words(b.k) * sizeof(std::uint32_t);
  REPIX_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<batch_grid(b, chunks), kSharedHistThreads, smem, stream>>>(b);
  REPIX_CUDA_LAUNCH();
}

// The plan of gpu-shared-hist and gpu-shared-warp-agg.
template <bool Aggregate>
class SharedHistPlan final : public LagPlan {
 protected:
  void count(const Batch& b, cudaStream_t stream) override {
    const std::int64_t most = lag_geometry(b.h, b.w, b.direction, b.lag0).pairs();
    const std::int64_t chunks = (most + kSharedChunkPairs - 1) / kSharedChunkPairs;
    if (b.u16) launch_shared_hist(shared_hist_kernel<std::uint16_t, Aggregate>, chunks, b, stream);
    else launch_shared_hist(shared_hist_kernel<std::uint8_t, Aggregate>, chunks, b, stream);
  }
};

// gpu-run-merge's count (gpu_run_merge.cu): also the uint16-label path of the epoch kernels.
void count_run_merged(const Batch& b, cudaStream_t stream);

}  // namespace repix::ami::auto_mi::gpu
