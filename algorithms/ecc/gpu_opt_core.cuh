// gpu-opt's per-voxel arithmetic, written as __host__ __device__ functions so that the CPU tests
// check exactly the code the kernels run (tests/ecc/test_ecc_opt_core.cpp).
//
// Byte-sliced win words. A thread handles a run of 4 voxels along x (one 16-byte load of
// float32). For every neighbour direction d it builds one 32-bit "win word": byte i is 0xFF when
// voxel i beats its neighbour in direction d, 0x00 when it loses. A comparison costs one FADD
// (the sign bit of a - b is [a < b] for canonical finite floats: a - b is never 0 for a != b
// thanks to gradual underflow, and x - x = +0) plus 3/4 of a PRMT that gathers four sign bits
// into four bytes (sign-replicating selector). Which cells a voxel introduces is then plain
// bitwise logic on whole words (one LOP3 handles 4 voxels), and the signed cell counts are byte
// lane sums: S = bias + faces + vertices - edges, each byte in [0, 26], so no byte ever carries
// into its neighbour in the final word (intermediate wrap-arounds cancel modulo 2^32).
//
// Values are the "compute type": float, with -0 folded into +0 (canon) and integers converted
// exactly. Out-of-image neighbours are +inf: every finite voxel value is < +inf, so a voxel beats
// them under both `<` and `<=` exactly as the rule "outside the image p always wins" demands, and
// +inf never ties with an input value (inputs are finite: check_input). The only inexact case,
// +inf - +inf = NaN, arises when both compared voxels are outside or padding, and such bytes
// belong to padding voxels whose changes are never accumulated (the CPU tests run both NaN signs).
#pragma once
#include <cstdint>
#include <cstring>

#include "core/float_bits.hpp"
#include "core/gpu/hash.hpp"
#include "core/hd.hpp"

namespace repix::ecc::opt {

constexpr std::uint32_t kOnes = 0x01010101u;
constexpr int kBias2 = 3;   // 2D: byte = change + 3, in [0, 8]
constexpr int kBias3 = 13;  // 3D: byte = change + 13, in [0, 26]
// The free slot of the hash tables (a NaN pattern: never a canonical finite key) and the slot of a
// key: core/gpu/hash.hpp.
using ::repix::gpu::kEmptyKey;
using ::repix::gpu::hash_slot;

#ifndef __CUDA_ARCH__
// Test hook (host only): the sign of NaN produced by +inf - +inf differs between x86 (negative
// default NaN) and the GPU (positive). -1 keeps the host's; 0/1 forces a sign, so the CPU tests
// can prove that such bytes never matter.
inline int g_host_nan_sign = -1;
#endif

// Bits of a - b; bit 31 is [a < b] for canonical finite (or +inf) operands.
REPIX_HD std::uint32_t dsub(float a, float b) {
  const float d = a - b;
#ifndef __CUDA_ARCH__
  if (d != d && g_host_nan_sign >= 0) return g_host_nan_sign ? 0xFFC00000u : 0x7FFFFFFFu;
#endif
  return float_bits(d);
}

// PTX prmt.b32 (default mode): byte n of the result is byte (sel_n & 7) of {b, a}; when sel_n & 8
// the sign bit of that byte is replicated over the whole result byte.
REPIX_HD std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
#ifdef __CUDA_ARCH__
  std::uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
#else
  const std::uint64_t src = (static_cast<std::uint64_t>(b) << 32) | a;
  std::uint32_t r = 0;
  for (int n = 0; n < 4; ++n) {
    const unsigned s = (sel >> (4 * n)) & 0xFu;
    std::uint32_t byte = static_cast<std::uint32_t>(src >> (8 * (s & 7u))) & 0xFFu;
    if (s & 8u) byte = (byte & 0x80u) ? 0xFFu : 0x00u;
    r |= byte << (8 * n);
  }
  return r;
#endif
}

// Byte i = 0xFF when the sign bit of d_i is set.
REPIX_HD std::uint32_t sign4(std::uint32_t d0, std::uint32_t d1, std::uint32_t d2,
                             std::uint32_t d3) {
  const std::uint32_t lo = prmt(d0, d1, 0xFBFBu);    // bytes 0,1 = sign(d0), sign(d1)
  const std::uint32_t hi = prmt(d2, d3, 0xFB00u);    // bytes 2,3 = sign(d2), sign(d3)
  return prmt(lo, hi, 0x7610u);
}

// -0 -> +0 (x + 0 is exact for every other value; compilers may not fold it without fast-math).
REPIX_HD float canon(float v) { return v + 0.0f; }

// Exact float of a small unsigned integer without I2F: 2^23 + v has v in its mantissa.
REPIX_HD float small_uint_to_float(std::uint32_t v) { return float_from_bits(0x4B000000u | v) - 8388608.0f; }
REPIX_HD std::uint32_t float_to_small_uint(float f) { return float_bits(f + 8388608.0f) - 0x4B000000u; }

template <class T>
REPIX_HD float to_compute(T v) {
  if constexpr (sizeof(T) == 4) return canon(v);
  else return small_uint_to_float(static_cast<std::uint32_t>(v));
}

// Accumulation key of a compute value: the canonical float bits (float) or the integer itself.
template <class T>
REPIX_HD std::uint32_t key_of_compute(float c) {
  if constexpr (sizeof(T) == 4) return float_bits(c);
  else return float_to_small_uint(c);
}


// ---- win words -------------------------------------------------------------------------------
// A row holds x0-1 .. x0+4 (index 0..5); the run's voxels are indices 1..4.

// Words for the three neighbours (dx = -1, 0, +1) in another row n. `before` is true when that
// row precedes the run's row in linear order (p wins with `<`), false when it follows (`<=`).
struct Words3 {
  std::uint32_t m, z, p;  // dx = -1, 0, +1
};

REPIX_HD Words3 row_words(const float (&c)[6], const float (&n)[6], bool before) {
  Words3 w;
  if (before) {  // win = [c < n] = sign(c - n)
    w.m = sign4(dsub(c[1], n[0]), dsub(c[2], n[1]), dsub(c[3], n[2]), dsub(c[4], n[3]));
    w.z = sign4(dsub(c[1], n[1]), dsub(c[2], n[2]), dsub(c[3], n[3]), dsub(c[4], n[4]));
    w.p = sign4(dsub(c[1], n[2]), dsub(c[2], n[3]), dsub(c[3], n[4]), dsub(c[4], n[5]));
  } else {  // win = [c <= n] = !(n < c) = ~sign(n - c)
    w.m = ~sign4(dsub(n[0], c[1]), dsub(n[1], c[2]), dsub(n[2], c[3]), dsub(n[3], c[4]));
    w.z = ~sign4(dsub(n[1], c[1]), dsub(n[2], c[2]), dsub(n[3], c[3]), dsub(n[4], c[4]));
    w.p = ~sign4(dsub(n[2], c[1]), dsub(n[3], c[2]), dsub(n[4], c[3]), dsub(n[5], c[4]));
  }
  return w;
}

// Words for the left (before) and right (after) neighbours in the run's own row. The five
// differences D_k = c_{k+1} - c_k serve both sides: right win = ~sign(D_i), left win = sign(D_{i-1}).
struct Words2 {
  std::uint32_t m, p;
};

REPIX_HD Words2 own_row_words(const float (&c)[6]) {
  const std::uint32_t a = sign4(dsub(c[2], c[1]), dsub(c[3], c[2]), dsub(c[4], c[3]),
                                dsub(c[5], c[4]));
  Words2 w;
  w.p = ~a;
  w.m = prmt(a, dsub(c[1], c[0]), 0x210Fu);  // (sign D_-1, a.b0, a.b1, a.b2)
  return w;
}

// ---- cell logic --------------------------------------------------------------------------------

// 2D. r[dy+1][i]: rows y-1, y, y+1. Returns bytes change_i + kBias2.
REPIX_HD std::uint32_t change4_2d(const float (&up)[6], const float (&mid)[6],
                                  const float (&dn)[6]) {
  const Words3 u = row_words(mid, up, true);
  const Words3 d = row_words(mid, dn, false);
  const Words2 x = own_row_words(mid);
  // Edges (-1 each): the voxel beats its one edge neighbour.
  const std::uint32_t e = (x.m & kOnes) + (x.p & kOnes) + (u.z & kOnes) + (d.z & kOnes);
  // Vertices (+1 each): beats the two edge neighbours and the diagonal one.
  const std::uint32_t v = (x.m & u.z & u.m & kOnes) + (x.p & u.z & u.p & kOnes) +
                          (x.m & d.z & d.m & kOnes) + (x.p & d.z & d.p & kOnes);
  return kOnes * 4u + v - e;  // + 1 for the square, +3 bias: 4 + v - e = change + 3
}

// 3D. Planes z-1, z, z+1, each rows y-1, y, y+1. Returns bytes change_i + kBias3.
REPIX_HD std::uint32_t change4_3d(const float (&lo)[3][6], const float (&mi)[3][6],
                                  const float (&hi)[3][6]) {
  const float (&c)[6] = mi[1];
  // W[dz+1][dy+1] for the 8 other rows.
  const Words3 l0 = row_words(c, lo[0], true), l1 = row_words(c, lo[1], true),
               l2 = row_words(c, lo[2], true);
  const Words3 m0 = row_words(c, mi[0], true), m2 = row_words(c, mi[2], false);
  const Words3 h0 = row_words(c, hi[0], false), h1 = row_words(c, hi[1], false),
               h2 = row_words(c, hi[2], false);
  const Words2 x = own_row_words(c);

  // Face neighbours, masked to one bit per byte.
  const std::uint32_t fxm = x.m & kOnes, fxp = x.p & kOnes;
  const std::uint32_t fym = m0.z & kOnes, fyp = m2.z & kOnes;
  const std::uint32_t fzm = l1.z & kOnes, fzp = h1.z & kOnes;
  const std::uint32_t faces = fxm + fxp + fym + fyp + fzm + fzp;

  // Edges: two faces and the diagonal between them.
  const std::uint32_t exy_mm = fxm & fym & m0.m, exy_pm = fxp & fym & m0.p;
  const std::uint32_t exy_mp = fxm & fyp & m2.m, exy_pp = fxp & fyp & m2.p;
  const std::uint32_t exz_mm = fxm & fzm & l1.m, exz_pm = fxp & fzm & l1.p;
  const std::uint32_t exz_mp = fxm & fzp & h1.m, exz_pp = fxp & fzp & h1.p;
  const std::uint32_t eyz_mm = fym & fzm & l0.z, eyz_pm = fyp & fzm & l2.z;
  const std::uint32_t eyz_mp = fym & fzp & h0.z, eyz_pp = fyp & fzp & h2.z;
  const std::uint32_t edges = exy_mm + exy_pm + exy_mp + exy_pp + exz_mm + exz_pm + exz_mp +
                              exz_pp + eyz_mm + eyz_pm + eyz_mp + eyz_pp;

  // Vertices (sx, sy, sz): edges xy(sx,sy) and xz(sx,sz), plus yz diagonal and the corner.
  const std::uint32_t verts =
      (exy_mm & exz_mm & l0.z & l0.m) + (exy_pm & exz_pm & l0.z & l0.p) +
      (exy_mp & exz_mm & l2.z & l2.m) + (exy_pp & exz_pm & l2.z & l2.p) +
      (exy_mm & exz_mp & h0.z & h0.m) + (exy_pm & exz_pp & h0.z & h0.p) +
      (exy_mp & exz_mp & h2.z & h2.m) + (exy_pp & exz_pp & h2.z & h2.p);

  // -1 for the cube, +12 bias: 12 - 1 + faces + verts - edges + 1... byte = change + 13.
  return kOnes * 12u + faces + verts - edges;
}

REPIX_HD int byte_of(std::uint32_t s, int i) { return static_cast<int>((s >> (8 * i)) & 0xFFu); }

}  // namespace repix::ecc::opt
