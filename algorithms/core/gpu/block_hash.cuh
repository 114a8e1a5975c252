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
#include "core/gpu/shared_atomics.cuh"

namespace repix::gpu {

// kSpare: slots after the table that no key ever claims (spare(i)): a caller that must issue an
// atomic it has no use for (to stay branch-free) sends it there; a claim of a spare slot always
// succeeds and leaves it empty, an add to it must add 0.
template <int kLog2Slots, int kProbes, int kSpare = 0>
struct BlockHash {
  static constexpr int kSlots = 1 << kLog2Slots;
  std::uint32_t keys[kSlots + kSpare];
  int sums[kSlots + kSpare];  // right behind keys: add() addresses it from keys' address

  __device__ void init() {
    for (int i = block_thread_rank(); i < kSlots + kSpare; i += block_thread_count()) {
      keys[i] = kEmptyKey;
      sums[i] = 0;
    }
  }
  // The table's atomics take a 32-bit shared-window address the caller keeps in a register
  // (address(); why: core/gpu/shared_atomics.cuh). A slot is named by the shared address of its key.
  static constexpr std::uint32_t kNoSlot = ~0u;
  __device__ std::uint32_t address() const { return shared_address(keys); }
  __device__ __forceinline__ static std::uint32_t spare(std::uint32_t at, int i) {
    return at + 4u * static_cast<std::uint32_t>(kSlots + i);
  }
  // The first slot `key` probes.
  __device__ __forceinline__ static std::uint32_t home(std::uint32_t at, std::uint32_t key) {
    return at + 4u * hash_slot(key, kLog2Slots);
  }
  // Claims `slot` for `key` (or finds it there); false when another key holds it.
  __device__ __forceinline__ static bool claim(std::uint32_t slot, std::uint32_t key) {
    return claim_or_spare(slot, slot, key, true);
  }
  // claim(slot, key) when `real`, else the same atomic on spare slot `spare_slot`, which it leaves
  // empty (it expects `key` there, which is never stored in a spare slot) and which reports
  // success: one atomic a call either way, no branch.
  __device__ __forceinline__ static bool claim_or_spare(std::uint32_t slot, std::uint32_t spare_slot,
                                                        std::uint32_t key, bool real) {
    const std::uint32_t prev = cas_shared_if(real ? slot : spare_slot, real ? kEmptyKey : key, key, true);
    return prev == kEmptyKey || prev == key;
  }
  // The probes after `slot` (which another key holds): `key`'s slot, or kNoSlot after kProbes in all.
  __device__ static std::uint32_t find_after(std::uint32_t at, std::uint32_t slot, std::uint32_t key) {
    std::uint32_t h = (slot - at) / 4u;
#pragma unroll 1
    for (int p = 1; p < kProbes; ++p) {
      h = (h + 1u) & (kSlots - 1u);
      if (claim(at + 4u * h, key)) return at + 4u * h;
    }
    return kNoSlot;
  }
  // `key`'s slot (claimed if new), or kNoSlot when kProbes slots were taken by other keys. The
  // first probe is inline: it is the only one most keys make.
  __device__ __forceinline__ static std::uint32_t find(std::uint32_t at, std::uint32_t key) {
    const std::uint32_t slot = home(at, key);
    return claim(slot, key) ? slot : find_after(at, slot, key);
  }
  // Adds to the sum of a slot find() or claim() gave (a spare slot: 0 only).
  __device__ __forceinline__ static void add(std::uint32_t slot, int amount) {
    red_add_shared_if(slot + 4u * (kSlots + kSpare), amount, true);
  }
  // sink(key, sum) for every claimed slot (sums may be 0: the key occurred).
  template <class Sink>
  __device__ void flush(Sink sink) {
    for (int i = block_thread_rank(); i < kSlots; i += block_thread_count())
      if (keys[i] != kEmptyKey) sink(keys[i], sums[i]);
  }
};

}  // namespace repix::gpu
