// A block-private histogram in shared memory: int32 counters over bins [0, window), each
// updated with a shared-memory atomicAdd, merged into the caller's global accumulator once per
// block instead of one global atomic per update. It counts any number of bins: an update of a
// bin at or beyond the window goes straight to the global accumulator (`spill`), so only the
// speed-up is limited to the window. The ECC ladder (gpu-shared-hist, gpu-cached) is the first
// user; joint histograms too large for shared memory (the AMI family's 256x256) are the next.
//
// Usage by every thread of the block (no early return before flush()):
//   BlockHistogram h(smem, window); h.init(); __syncthreads();
//   ... h.add(bin, amount, spill) ...      spill(bin, amount): the global add
//   __syncthreads(); h.flush(spill);       spill(bin, count) for every non-zero counter
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/gpu/block.cuh"

namespace repix::gpu {

struct BlockHistogram {
  int* counts;  // window counters in shared memory
  int window;

  __device__ __forceinline__ BlockHistogram(int* smem, int window_) : counts(smem), window(window_) {}

  // Block-strided zeroing: thread i clears bins i, i + block size, ...
  __device__ __forceinline__ void init() const {
    for (int i = block_thread_rank(); i < window; i += block_thread_count()) counts[i] = 0;
  }

  template <class Spill>
  __device__ __forceinline__ void add(std::uint32_t bin, int amount, Spill spill) const {
    if (bin < static_cast<std::uint32_t>(window)) atomicAdd(counts + bin, amount);
    else spill(bin, amount);
  }

  // Block-strided merge: bins that stayed zero cost nothing (most of them when the window is
  // large and the data sparse).
  template <class Spill>
  __device__ __forceinline__ void flush(Spill spill) const {
    for (int i = block_thread_rank(); i < window; i += block_thread_count()) {
      const int c = counts[i];
      if (c != 0) spill(static_cast<std::uint32_t>(i), c);
    }
  }
};

}  // namespace repix::gpu
