// Float <-> bit-pattern helpers shared by host and device code: bit casts, and the
// order-preserving map of float bits to unsigned integers (unsigned order == float order for
// non-NaN values; -0 sorts just below +0) used for radix sorts and hash keys.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/hd.hpp"

namespace repix {

REPIX_HD std::uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

REPIX_HD float float_from_bits(std::uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Negative floats: flip all bits (larger magnitude -> smaller key); non-negative: set the sign bit.
REPIX_HD std::uint32_t ordered_key(std::uint32_t fbits) {
  return (fbits & 0x80000000u) ? ~fbits : (fbits | 0x80000000u);
}
REPIX_HD std::uint32_t unordered_key(std::uint32_t k) {
  return (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
}

}  // namespace repix
