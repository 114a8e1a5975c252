// Hashing for the GPU accumulators (block_hash.cuh, the families' global tables), callable and
// tested on the host: Fibonacci hashing of 32-bit keys into a power-of-two table.
#pragma once
#include <cstdint>

#include "core/hd.hpp"

namespace repix::gpu {

// The key no slot holds: a free slot. (The ECC family's keys are float bit patterns; this one is
// a NaN pattern, never a canonical finite key.)
inline constexpr std::uint32_t kEmptyKey = 0xFFFFFFFFu;

// The top log2cap bits of key * 2^32/phi: a slot in a table of 2^log2cap (1 <= log2cap <= 32).
REPIX_HD std::uint32_t hash_slot(std::uint32_t key, int log2cap) {
  return (key * 0x9E3779B1u) >> (32 - log2cap);
}

// Probe p (0 <= p < 2^log2cap) of a key whose home slot is h, in a table of 2^log2cap slots grouped
// in buckets of 4 (block_hash.cuh's BucketHash): h, the other 3 slots of h's bucket cyclically from
// h, then each following bucket's 4 slots in the same cyclic order. Probes 0..2^log2cap-1 visit every
// slot once (tests/core/gpu/test_hash.cpp).
REPIX_HD std::uint32_t bucket_probe(std::uint32_t h, int p, int log2cap) {
  const std::uint32_t q = static_cast<std::uint32_t>(p);
  return ((h & ~3u) + 4u * (q >> 2) + ((h + q) & 3u)) & ((1u << log2cap) - 1u);
}

}  // namespace repix::gpu
