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

}  // namespace repix::gpu
