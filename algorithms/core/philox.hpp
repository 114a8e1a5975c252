// Philox4x32-10 counter-based random numbers (Salmon et al., SC'11), for host and device code.
//
// Why counter-based: a value is a pure function of (key, counter), so element i of a dataset
// can be produced on its own, on any thread, CPU or GPU, without generating elements 0..i-1.
// That makes generators chunk-addressable (a slab of a 256 GiB volume can be streamed) and
// their output independent of the thread count.
//
// Everything here is integer arithmetic or exact floating-point scaling, except the normal
// variates, which use the deterministic det:: functions: the same inputs give the same bits on
// every machine. The known-answer vectors of the Random123 reference are checked in the tests.
#pragma once
#include <cstdint>

#include "core/det_math.hpp"

namespace repix::philox {

struct Block {
  std::uint32_t v[4];
};

namespace detail {
REPIX_HOST_DEVICE inline void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t* hi, std::uint32_t* lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  *hi = static_cast<std::uint32_t>(p >> 32);
  *lo = static_cast<std::uint32_t>(p);
}
}  // namespace detail

// The raw bijection: 10 rounds of Philox4x32 on counter `c` with key (k0, k1).
REPIX_HOST_DEVICE inline Block philox4x32_10(Block c, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;  // key schedule (Weyl) increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += W0;
      k1 += W1;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    detail::mulhilo(M0, c.v[0], &hi0, &lo0);
    detail::mulhilo(M1, c.v[2], &hi1, &lo1);
    c = Block{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

// The convention used across repix: key = the 64-bit seed, counter = (64-bit index, 32-bit
// stream, 0). `stream` separates independent uses of one seed (each generator kind has its own).
REPIX_HOST_DEVICE inline Block draw(std::uint64_t seed, std::uint64_t index, std::uint32_t stream = 0) {
  const Block c{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), stream, 0u}};
  return philox4x32_10(c, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
}

// 32 random bits for element `i` of a stream: word (i mod 4) of draw(seed, i / 4, stream).
// One Philox evaluation serves four consecutive elements, and any element is still a pure
// function of (seed, stream, i).
REPIX_HOST_DEVICE inline std::uint32_t bits_at(std::uint64_t seed, std::uint64_t i, std::uint32_t stream = 0) {
  return draw(seed, i >> 2, stream).v[i & 3];
}

// Uniform float in [0, 1) from the top 24 bits of w (every value a multiple of 2^-24; exact).
REPIX_HOST_DEVICE inline float uniform_float(std::uint32_t w) {
  return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
}

// Uniform double in [0, 1) with 53 random bits (hi's 32 bits then lo's top 21).
REPIX_HOST_DEVICE inline double uniform_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t m = (static_cast<std::uint64_t>(hi) << 21) | (lo >> 11);
  return det::mul(static_cast<double>(m), 1.0 / 9007199254740992.0);  // exact (power of two)
}

// Uniform integer in [0, n), n >= 1: multiply-shift (Lemire) on a 64-bit product. The bias is
// at most n / 2^32 relative (1.5e-5 for n = 65536), far below anything a dataset can show.
REPIX_HOST_DEVICE inline std::uint32_t uniform_below(std::uint32_t w, std::uint32_t n) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(w) * n) >> 32);
}

// Two independent standard normals from one block (Box-Muller, deterministic det:: math):
// u1 in (0, 1] from words 0-1, u2 in [0, 1) from words 2-3; z0 = r cos(2 pi u2),
// z1 = r sin(2 pi u2), r = sqrt(-2 log u1).
REPIX_HOST_DEVICE inline void normal_pair(const Block& b, double* z0, double* z1) {
  const double u1 = det::sub(1.0, uniform_double(b.v[0], b.v[1]));  // (0, 1]: log is finite
  const double u2 = uniform_double(b.v[2], b.v[3]);
  const double r = det::sqrt(det::mul(-2.0, det::log(u1)));
  double s, c;
  det::sincos_turns(u2, &s, &c);
  *z0 = det::mul(r, c);
  *z1 = det::mul(r, s);
}

}  // namespace repix::philox
