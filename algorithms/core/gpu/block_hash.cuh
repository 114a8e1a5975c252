// Block-private hash accumulators in shared memory: 2^kLog2Slots slots of (32-bit key, int sum)
// (HashSlots), open addressing, keys claimed with a shared-memory atomicCAS, sums updated with
// shared atomicAdd. For keys from a range too large for direct bins (float bit patterns, 16-bit
// values): find() gives a key's slot (claiming a free one for a new key), or kNoSlot when kProbes
// slots were taken by other keys, and the caller then sends that update to its global accumulator.
// flush() hands every claimed slot's (key, sum) to the caller once per block. BlockHash probes
// linearly from the home slot with an atomic a probe; BucketHash finds keys already claimed with
// plain loads of their home slot and bucket. The ECC family's gpu-opt is the first user.
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

// The slots of a block hash in shared memory, and what every probing scheme does with them:
// 2^kLog2Slots slots of (32-bit key, int sum), keys kEmptyKey until claimed. kSpare: slots after
// the table that no key ever claims (spare(i)): a caller that must issue an atomic it has no use
// for (to stay branch-free) sends it there; a claim of a spare slot always succeeds and leaves it
// empty, an add to it must add 0.
template <int kLog2Slots, int kSpare>
struct HashSlots {
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
  // Adds to the sum of a slot the table gave (a spare slot: 0 only).
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

// Linear probing from a key's home slot.
template <int kLog2Slots, int kProbes, int kSpare = 0>
struct BlockHash : HashSlots<kLog2Slots, kSpare> {
  using Base = HashSlots<kLog2Slots, kSpare>;
  using Base::kNoSlot;
  using Base::kSlots;
  using Base::home;
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
};

// A block hash for keys looked up far more often than inserted, found without atomics, with
// probing in buckets of 4 slots so that a key off its home slot is still found by one 16-byte
// shared load.
//
// A key's probe sequence: its home slot h, the other 3 slots of h's bucket (cyclically from h),
// then the next buckets' slots. Every insert() of a key follows the sequence with atomic claims, so
// the key lands in the first slot of it that was free when the key was first claimed; slots are
// never freed, so every later insert() passes only slots other keys hold and reaches the same slot,
// and a key seen in any slot (plain loads: holds(), in_bucket()) is in its one slot.
//
// The caller looks first at the home slot (holds(): one 4-byte load and a compare), then, for the
// few keys not there, at the home bucket (in_bucket(): a 16-byte load and 4 compares), and only
// keys in neither (new to the block, or pushed out of their bucket) take insert()'s atomics. Why in
// this order (ECC's float32 kernels, H100, issue 15): with the home slot alone, data with more
// distinct values than fit their home slots (1024 levels, GRF) sent most warp steps of 128 voxels
// through the atomic probes; with the bucket alone, its 4 compares cost data whose keys all sit at
// home 25 % on the 8192^2 256-level image.
template <int kLog2Slots, int kProbes, int kSpare = 0>
struct alignas(16) BucketHash : HashSlots<kLog2Slots, kSpare> {
  using Base = HashSlots<kLog2Slots, kSpare>;
  using Base::kNoSlot;
  using Base::kSlots;
  using Base::home;
  static_assert(kLog2Slots >= 2);
  // True when `slot` holds `key` (one shared load; lanes reading one slot share it, where their
  // atomics on it would be serialised).
  __device__ __forceinline__ static bool holds(std::uint32_t slot, std::uint32_t key) {
    return ld_shared(slot) == key;
  }
  // `key`'s slot when its home bucket holds it, else kNoSlot.
  __device__ __forceinline__ static std::uint32_t in_bucket(std::uint32_t at, std::uint32_t key) {
    const std::uint32_t b = home(at, key) & ~15u;  // `at` is 16-byte aligned
    const uint4 q = ld_shared_v4(b);
    std::uint32_t slot = q.w == key ? b + 12u : kNoSlot;
    slot = q.z == key ? b + 8u : slot;
    slot = q.y == key ? b + 4u : slot;
    return q.x == key ? b : slot;
  }
  // `key`'s slot, claimed if new, within kProbes slots of its probe sequence; kNoSlot when other
  // keys hold them all (the caller then sends the update to its global accumulator).
  __device__ static std::uint32_t insert(std::uint32_t at, std::uint32_t key) {
    const std::uint32_t h = hash_slot(key, kLog2Slots);
#pragma unroll 1
    for (int p = 0; p < kProbes; ++p) {
      const std::uint32_t s = bucket_probe(h, p, kLog2Slots);
      const std::uint32_t prev = cas_shared_if(at + 4u * s, kEmptyKey, key, true);
      if (prev == kEmptyKey || prev == key) return at + 4u * s;
    }
    return kNoSlot;
  }
  // `key`'s slot, claimed if new, for a key not seen at its home slot: its bucket, then insert().
  __device__ __forceinline__ static std::uint32_t find_past_home(std::uint32_t at, std::uint32_t key) {
    const std::uint32_t slot = in_bucket(at, key);
    return slot != kNoSlot ? slot : insert(at, key);
  }
  __device__ __forceinline__ static std::uint32_t find(std::uint32_t at, std::uint32_t key) {
    const std::uint32_t slot = home(at, key);
    return holds(slot, key) ? slot : find_past_home(at, key);
  }
};

}  // namespace repix::gpu
