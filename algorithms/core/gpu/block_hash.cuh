// A block-private hash accumulator in shared memory: 2^kLog2Slots slots of (32-bit key, int
// sum), open addressing with linear probing, keys claimed with a shared-memory atomicCAS, sums
// updated with shared atomicAdd. For keys from a range too large for direct bins (float bit
// patterns, 16-bit values): find() gives a key's slot (claiming a free one for a new key), or -1
// when kProbes slots were taken by other keys, and the caller then sends that update to its global
// accumulator. flush() hands every claimed slot's (key, sum) to the caller once per block. The
// ECC family's gpu-opt is the first user.
//
// Place one in __shared__ memory; every thread of the block calls init(), then __syncthreads(),
// then find()/add as it goes, then __syncthreads() and flush().
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/gpu/block.cuh"
#include "core/gpu/hash.hpp"

namespace repix::gpu {

template <int kLog2Slots, int kProbes>
struct BlockHash {
  static constexpr int kSlots = 1 << kLog2Slots;
  std::uint32_t keys[kSlots];
  int sums[kSlots];

  __device__ void init() {
    for (int i = block_thread_rank(); i < kSlots; i += block_thread_count()) {
      keys[i] = kEmptyKey;
      sums[i] = 0;
    }
  }
  // Slot of `key` (claimed if new), -1 when the probe limit is hit.
  __device__ int find(std::uint32_t key) {
    std::uint32_t h = hash_slot(key, kLog2Slots);
#pragma unroll 1
    for (int p = 0; p < kProbes; ++p) {
      const std::uint32_t prev = atomicCAS(&keys[h], kEmptyKey, key);
      if (prev == kEmptyKey || prev == key) return static_cast<int>(h);
      h = (h + 1u) & (kSlots - 1u);
    }
    return -1;
  }
  __device__ __forceinline__ void add(int slot, int amount) { atomicAdd(&sums[slot], amount); }
  // sink(key, sum) for every claimed slot (sums may be 0: the key occurred).
  template <class Sink>
  __device__ void flush(Sink sink) {
    for (int i = block_thread_rank(); i < kSlots; i += block_thread_count())
      if (keys[i] != kEmptyKey) sink(keys[i], sums[i]);
  }
};

}  // namespace repix::gpu
