// A block-private hash accumulator in shared memory: 2^kLog2Slots slots of (32-bit key, int
// sum), open addressing with linear probing, keys claimed with a shared-memory atomicCAS, sums
// updated with shared atomicAdd. For keys from a range too large for direct bins (float bit
// patterns, 16-bit values): find() gives a key's slot (claiming a free one for a new key), or
// kNoSlot when kProbes slots were taken by other keys, and the caller then sends that update to its
// global accumulator. flush() hands every claimed slot's (key, sum) to the caller once per block.
// The ECC family's gpu-opt is the first user.
//
// Place one in __shared__ memory; every thread of the block calls init(), then __syncthreads(),
// then, with at = address() kept in a register, find(at, key) and add(slot, amount) as it goes,
// then __syncthreads() and flush().
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
  int sums[kSlots];  // right behind keys: add() addresses it from keys' address

  __device__ void init() {
    for (int i = block_thread_rank(); i < kSlots; i += block_thread_count()) {
      keys[i] = kEmptyKey;
      sums[i] = 0;
    }
  }
  // The table's atomics are PTX on a 32-bit shared-window address the caller keeps in a register
  // (address()): through generic pointers (atomicCAS(&keys[h], ...)) nvcc 13.0 rebuilt the window
  // base from SR_CgaCtaId (S2R, MOV, LEA) at every find and add of gpu-opt's ECC kernels (their
  // SASS at 9bd36e8), and even from __cvta_generic_to_shared it rematerialises it at each use.
  __device__ __forceinline__ static std::uint32_t cas(std::uint32_t slot, std::uint32_t key) {
    std::uint32_t prev;
    asm volatile("atom.shared.cas.b32 %0, [%1], %2, %3;" : "=r"(prev) : "r"(slot), "r"(kEmptyKey), "r"(key) : "memory");
    return prev;
  }
  __device__ std::uint32_t address() const {
    std::uint32_t a = static_cast<std::uint32_t>(__cvta_generic_to_shared(keys));
    asm volatile("" : "+r"(a));  // opaque: held in a register, not recomputed at each use
    return a;
  }

  // The shared address of `key`'s slot (claimed if new), or kNoSlot when kProbes slots were taken
  // by other keys. `at`: address(). The first probe is peeled: it is the only one most keys make,
  // and out of the loop it costs no counter, no YIELD and no loop branch.
  static constexpr std::uint32_t kNoSlot = ~0u;
  __device__ __forceinline__ static std::uint32_t find(std::uint32_t at, std::uint32_t key) {
    std::uint32_t h = hash_slot(key, kLog2Slots);
    std::uint32_t prev = cas(at + 4u * h, key);
    if (prev == kEmptyKey || prev == key) return at + 4u * h;
#pragma unroll 1
    for (int p = 1; p < kProbes; ++p) {
      h = (h + 1u) & (kSlots - 1u);
      prev = cas(at + 4u * h, key);
      if (prev == kEmptyKey || prev == key) return at + 4u * h;
    }
    return kNoSlot;
  }
  // Adds to the sum of the slot find() returned.
  __device__ __forceinline__ static void add(std::uint32_t slot, int amount) {
    asm volatile("red.shared.add.s32 [%0+%2], %1;" :: "r"(slot), "r"(amount), "n"(4 * kSlots) : "memory");
  }
  // sink(key, sum) for every claimed slot (sums may be 0: the key occurred).
  template <class Sink>
  __device__ void flush(Sink sink) {
    for (int i = block_thread_rank(); i < kSlots; i += block_thread_count())
      if (keys[i] != kEmptyKey) sink(keys[i], sums[i]);
  }
};

}  // namespace repix::gpu
