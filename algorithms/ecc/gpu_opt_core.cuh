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
#include <cmath>
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

// The compute value of an integer v < 2^23: the float 2^23 + v, whose bits are 0x4B000000 | v (one
// LOP3, no I2F). It orders as v does, and the difference of two is the difference of the integers,
// exactly (both in [2^23, 2^24)), so the rule reads them as it would v; the key is the bits back
// (one IADD). v itself (2^23 + v - 2^23) cost a FADD more each way: ~9 instructions a 4-voxel row
// step of the uint8/uint16 kernels (5 values converted, 4 keys).
REPIX_HD float offset_float(std::uint32_t v) { return float_from_bits(0x4B000000u | v); }
REPIX_HD std::uint32_t uint_of_offset_float(float f) { return float_bits(f) - 0x4B000000u; }

template <class T>
REPIX_HD float to_compute(T v) {
  if constexpr (sizeof(T) == 4) return canon(v);
  else return offset_float(static_cast<std::uint32_t>(v));
}

// Accumulation key of a compute value: the canonical float bits (float) or the integer itself.
template <class T>
REPIX_HD std::uint32_t key_of_compute(float c) {
  if constexpr (sizeof(T) == 4) return float_bits(c);
  else return uint_of_offset_float(c);
}


// ---- win words -------------------------------------------------------------------------------
// A row holds x0-1 .. x0+4 (index 0..5); the run's voxels are indices 1..4.

// Words for the three neighbours (dx = -1, 0, +1) in another row n. `before` is true when that
// row precedes the run's row in linear order (p wins with `<`), false when it follows (`<=`).
struct Words3 {
  std::uint32_t m, z, p;  // dx = -1, 0, +1
};

// The signs sign(n - c) behind the words of a following row n (row_words(c, n, false) before its
// complement). They are also the next row's words for this one: when n's own step compares n
// with c as its preceding row, it takes the same differences (change4_2d_carried).
struct DownSigns {
  std::uint32_t m, z, p;  // dx = -1, 0, +1 (seen from c)
};

REPIX_HD DownSigns down_signs(const float (&c)[6], const float (&n)[6]) {
  DownSigns s;
  s.m = sign4(dsub(n[0], c[1]), dsub(n[1], c[2]), dsub(n[2], c[3]), dsub(n[3], c[4]));
  s.z = sign4(dsub(n[1], c[1]), dsub(n[2], c[2]), dsub(n[3], c[3]), dsub(n[4], c[4]));
  s.p = sign4(dsub(n[2], c[1]), dsub(n[3], c[2]), dsub(n[4], c[3]), dsub(n[5], c[4]));
  return s;
}

// The words for the following row from its signs: win = [c <= n] = !(n < c) = ~sign(n - c).
REPIX_HD Words3 words_below(const DownSigns& s) { return Words3{~s.m, ~s.z, ~s.p}; }

REPIX_HD Words3 row_words(const float (&c)[6], const float (&n)[6], bool before) {
  Words3 w;
  if (before) {  // win = [c < n] = sign(c - n)
    w.m = sign4(dsub(c[1], n[0]), dsub(c[2], n[1]), dsub(c[3], n[2]), dsub(c[4], n[3]));
    w.z = sign4(dsub(c[1], n[1]), dsub(c[2], n[2]), dsub(c[3], n[3]), dsub(c[4], n[4]));
    w.p = sign4(dsub(c[1], n[2]), dsub(c[2], n[3]), dsub(c[3], n[4]), dsub(c[4], n[5]));
  } else {
    w = words_below(down_signs(c, n));
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

// The words for a row above from the signs its own step left (`above` = down_signs(up, c)):
// [c < up] = sign(c - up) is the difference that step took. Two bytes need a new difference each
// (voxel 0's neighbour up[0], voxel 3's up[5]); the others are `above`'s bytes shifted by one voxel.
// Bit for bit row_words(c, up, true), for 2 FADD and 2 PRMT instead of 12 and 9.
REPIX_HD Words3 row_words_above(const DownSigns& above, const float (&c)[6], const float (&up)[6]) {
  Words3 u;
  u.z = above.z;                                   // sign(c_i - up_i)
  u.m = prmt(above.p, dsub(c[1], up[0]), 0x210Fu);  // (sign(c_1 - up_0), above.p bytes 0..2)
  u.p = prmt(above.m, dsub(c[4], up[5]), 0xF321u);  // (above.m bytes 1..3, sign(c_4 - up_5))
  return u;
}

// ---- cell logic --------------------------------------------------------------------------------

// 2D, from the words for the row above (u), below (d) and the run's own row (x). Returns bytes
// change_i + kBias2.
REPIX_HD std::uint32_t change4_2d_words(const Words3& u, const Words3& d, const Words2& x) {
  // Edges (-1 each): the voxel beats its one edge neighbour.
  const std::uint32_t e = (x.m & kOnes) + (x.p & kOnes) + (u.z & kOnes) + (d.z & kOnes);
  // Vertices (+1 each): beats the two edge neighbours and the diagonal one.
  const std::uint32_t v = (x.m & u.z & u.m & kOnes) + (x.p & u.z & u.p & kOnes) +
                          (x.m & d.z & d.m & kOnes) + (x.p & d.z & d.p & kOnes);
  return kOnes * 4u + v - e;  // + 1 for the square, +3 bias: 4 + v - e = change + 3
}

// 2D. Rows y-1, y, y+1 (x0-1 .. x0+4 each).
REPIX_HD std::uint32_t change4_2d(const float (&up)[6], const float (&mid)[6],
                                  const float (&dn)[6]) {
  return change4_2d_words(row_words(mid, up, true), row_words(mid, dn, false), own_row_words(mid));
}

// change4_2d for a thread that walks down its columns: the words for the row above from the signs
// the step of that row left (`above` = down_signs(up, mid); row_words_above). Bit for bit
// change4_2d's word (the same differences, NaN signs included). Sets `below` = down_signs(mid, dn)
// for the next row.
REPIX_HD std::uint32_t change4_2d_carried(DownSigns above, const float (&up)[6], const float (&mid)[6],
                                          const float (&dn)[6], DownSigns& below) {
  const Words3 u = row_words_above(above, mid, up);
  below = down_signs(mid, dn);
  return change4_2d_words(u, words_below(below), own_row_words(mid));
}

// 3D, from the words for row y of plane z-1 (l1) and of plane z+1 (h1), given or carried.
REPIX_HD std::uint32_t change4_3d_words(const float (&lo)[3][6], const float (&mi)[3][6],
                                        const float (&hi)[3][6], const Words3& l1, const Words3& h1) {
  const float (&c)[6] = mi[1];
  // W[dz+1][dy+1] for the 6 other rows.
  const Words3 l0 = row_words(c, lo[0], true), l2 = row_words(c, lo[2], true);
  const Words3 m0 = row_words(c, mi[0], true), m2 = row_words(c, mi[2], false);
  const Words3 h0 = row_words(c, hi[0], false), h2 = row_words(c, hi[2], false);
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

// 3D. Planes z-1, z, z+1, each rows y-1, y, y+1. Returns bytes change_i + kBias3.
REPIX_HD std::uint32_t change4_3d(const float (&lo)[3][6], const float (&mi)[3][6],
                                  const float (&hi)[3][6]) {
  return change4_3d_words(lo, mi, hi, row_words(mi[1], lo[1], true), row_words(mi[1], hi[1], false));
}

// change4_3d for a thread that walks its run along z: row y of plane z-1 is the row "above" whose
// signs the step of plane z-1 left (`above` = down_signs(lo[1], mi[1]); the other rows of plane z-1
// are other warps' rows y). Bit for bit change4_3d's word. Sets `below` = down_signs(mi[1], hi[1]).
REPIX_HD std::uint32_t change4_3d_carried(DownSigns above, const float (&lo)[3][6], const float (&mi)[3][6],
                                          const float (&hi)[3][6], DownSigns& below) {
  const Words3 l1 = row_words_above(above, mi[1], lo[1]);
  below = down_signs(mi[1], hi[1]);
  return change4_3d_words(lo, mi, hi, l1, words_below(below));
}

// ---- cell-centric 3D rule (NOTES-gpu-opt.md, "The owner formulas, worked out") ---------------
// Each cell is anchored at the block q + {0,1}^3 of its lowest voxel q, whose 7 owner comparisons
// (faces Wx, Wy, Wz; edges Exy, Exz, Eyz of pair minima; the vertex V of quad minima) are made once
// for the block, where change4_3d makes 26 comparisons a voxel, each pair twice (once for each of
// its voxels). A voxel's change is then bit logic on the words of its own block and of its lower
// neighbours' (p-x, p-y, p-z, ...). Host-tested against the reference; no kernel on main uses it:
// the kernel built on it (branch ecc-3d-cell) measured no faster on the H100, held back by its
// per-plane barrier rather than the rule (NOTES-gpu-opt.md).
// SASS of one step's rule (sm_90, nvcc 13.0, a test kernel with plane z's minima and the words of
// (y-1, z), (y, z-1), (y-1, z-1) given, as a kernel would carry or exchange them): 116 instructions
// (FADD 32, LOP3 26, PRMT 25, FMNMX 20, IADD3 13), 84 on the ALU pipe, where change4_3d takes 228
// (FADD 101, PRMT 76, LOP3 38, IADD3 13), 127 on the ALU pipe.

// Words of one row of block positions: byte i is position x0+i; `_m` words are positions x0-1+i
// (the blocks of p-x).
struct OwnerWords {
  std::uint32_t wx, wx_m, wy, wz, exy, exy_m, exz, exz_m, eyz, v, v_m;
};

// Minima over a row pair (rows y and y+1 of one plane, x0-1 .. x0+4 as a row of change4_3d): mx0
// and mx1 of each row's x-pairs (position x0-1+k, k = 0..4), mxy of the quads, my of the y-pairs
// (position x0+i).
struct PairMins {
  float mx0[5], mx1[5], mxy[5], my[4];
};

REPIX_HD PairMins pair_mins(const float (&r0)[6], const float (&r1)[6]) {
  PairMins m;
  for (int k = 0; k < 5; ++k) {
    m.mx0[k] = fminf(r0[k], r0[k + 1]);
    m.mx1[k] = fminf(r1[k], r1[k + 1]);
    m.mxy[k] = fminf(m.mx0[k], m.mx1[k]);
  }
  for (int i = 0; i < 4; ++i) m.my[i] = fminf(r0[i + 1], r1[i + 1]);
  return m;
}

// [lo <= hi] (the lower group owns, winning ties: every voxel of it precedes every voxel of the
// upper one) at positions x0+i and, in `m`, x0-1+i, from the 5 positions x0-1+k: one sign4 and a
// PRMT, as own_row_words.
struct LeWords {
  std::uint32_t at, m;
};

REPIX_HD LeWords le_words5(const float (&lo)[5], const float (&hi)[5]) {
  const std::uint32_t a = sign4(dsub(hi[1], lo[1]), dsub(hi[2], lo[2]), dsub(hi[3], lo[3]), dsub(hi[4], lo[4]));
  LeWords w;
  w.at = ~a;
  w.m = ~prmt(a, dsub(hi[0], lo[0]), 0x210Fu);  // (sign at x0-1, a.b0, a.b1, a.b2)
  return w;
}

REPIX_HD std::uint32_t le_words4(const float* lo, const float* hi) {
  return ~sign4(dsub(hi[0], lo[0]), dsub(hi[1], lo[1]), dsub(hi[2], lo[2]), dsub(hi[3], lo[3]));
}

// The owner words of the blocks at rows y, y+1 of planes z (a0, a1; minima ma) and z+1 (b0;
// minima mb).
REPIX_HD OwnerWords owner_words(const float (&a0)[6], const float (&a1)[6], const PairMins& ma,
                                const float (&b0)[6], const PairMins& mb) {
  OwnerWords o;
  float lo[5], hi[5];
  for (int k = 0; k < 5; ++k) {
    lo[k] = a0[k];
    hi[k] = a0[k + 1];
  }
  const LeWords wx = le_words5(lo, hi), exy = le_words5(ma.mx0, ma.mx1), exz = le_words5(ma.mx0, mb.mx0),
                v = le_words5(ma.mxy, mb.mxy);
  o.wx = wx.at;
  o.wx_m = wx.m;
  o.wy = le_words4(a0 + 1, a1 + 1);
  o.wz = le_words4(a0 + 1, b0 + 1);
  o.exy = exy.at;
  o.exy_m = exy.m;
  o.exz = exz.at;
  o.exz_m = exz.m;
  o.eyz = le_words4(ma.my, mb.my);
  o.v = v.at;
  o.v_m = v.m;
  return o;
}

// Bytes change_i + kBias3 of the voxels x0+i of row y, plane z from the owner words of the blocks
// at (row y, plane z) `at`, (y-1, z) `ym`, (y, z-1) `zm` and (y-1, z-1) `yzm`.
REPIX_HD std::uint32_t change4_from_owners(const OwnerWords& at, const OwnerWords& ym, const OwnerWords& zm,
                                           const OwnerWords& yzm) {
  constexpr std::uint32_t K = kOnes;
  // Faces (+1): the voxel owns the face to its upper neighbour where it wins, to its lower one where
  // that one loses.
  const std::uint32_t faces = (at.wx & K) + (~at.wx_m & K) + (at.wy & K) + (~ym.wy & K) + (at.wz & K) +
                              (~zm.wz & K);
  // z-edges (-1): the voxel's pair owns the edge (Exy, complemented for the block below in y) and
  // the voxel its pair (Wx, complemented for the block left of it). Each is also the xy part of
  // two vertices (planes z and z-1 of the same quad).
  const std::uint32_t ez00 = at.exy & at.wx & K, ez10 = at.exy_m & ~at.wx_m & K;
  const std::uint32_t ez01 = ~ym.exy & at.wx & K, ez11 = ~ym.exy_m & ~at.wx_m & K;
  const std::uint32_t ey = (at.exz & at.wx & K) + (at.exz_m & ~at.wx_m & K) + (~zm.exz & at.wx & K) +
                           (~zm.exz_m & ~at.wx_m & K);
  const std::uint32_t ex = (at.eyz & at.wy & K) + (ym.eyz & ~ym.wy & K) + (~zm.eyz & at.wy & K) +
                           (~yzm.eyz & ~ym.wy & K);
  const std::uint32_t edges = ez00 + ez10 + ez01 + ez11 + ey + ex;
  // Vertices (+1): the voxel's quad owns the vertex (V, complemented for the block below in z),
  // then the z-edge part above.
  const std::uint32_t verts = (at.v & ez00) + (at.v_m & ez10) + (ym.v & ez01) + (ym.v_m & ez11) +
                              (~zm.v & ez00) + (~zm.v_m & ez10) + (~yzm.v & ez01) + (~yzm.v_m & ez11);
  // -1 for the cube, +13 bias: byte = change + 13.
  return kOnes * 12u + faces + verts - edges;
}

// change4_3d's contract from the cell-centric words (planes z-1, z, z+1, each rows y-1, y, y+1):
// for the host tests; a kernel would carry plane z's words and minima to the next plane instead of
// recomputing them, and take row y-1's words from the warp that computed them.
REPIX_HD std::uint32_t change4_3d_cells(const float (&lo)[3][6], const float (&mi)[3][6],
                                        const float (&hi)[3][6]) {
  const PairMins lo_y = pair_mins(lo[1], lo[2]), lo_ym = pair_mins(lo[0], lo[1]);
  const PairMins mi_y = pair_mins(mi[1], mi[2]), mi_ym = pair_mins(mi[0], mi[1]);
  const PairMins hi_y = pair_mins(hi[1], hi[2]), hi_ym = pair_mins(hi[0], hi[1]);
  const OwnerWords at = owner_words(mi[1], mi[2], mi_y, hi[1], hi_y);
  const OwnerWords ym = owner_words(mi[0], mi[1], mi_ym, hi[0], hi_ym);
  const OwnerWords zm = owner_words(lo[1], lo[2], lo_y, mi[1], mi_y);
  const OwnerWords yzm = owner_words(lo[0], lo[1], lo_ym, mi[0], mi_ym);
  return change4_from_owners(at, ym, zm, yzm);
}

REPIX_HD int byte_of(std::uint32_t s, int i) { return static_cast<int>((s >> (8 * i)) & 0xFFu); }

// gpu-opt-bins16's block counters (BlockKind::bins16 in gpu_opt_kernels.cuh): the 65536 uint16
// values' VCECs as signed 16-bit halves of 32768 shared words, value v in word v & 0x7FFF, the low
// half for v < 32768 and the high half for the others. A word w is read as 65536 H + L with L and H
// in [-32768, 32767], so adding d to a half is adding d (low) or d * 65536 (high) to the word as a
// 32-bit integer, negative d included (the sign's borrow is part of the reading), and both halves
// are exact while each stays within int16. The kernel keeps them there without epochs: an add whose
// returned word has its half outside [-kLimit, kLimit) is taken back (the negated increment) and goes
// to the global bin. Every add either left its half inside when it was made or is taken back by the
// thread that made it, so a half never leaves +-(kLimit + 2 B), where B bounds the sum of |d| of the
// adds made and not yet taken back (the block's threads x the |d| of a thread's adds in flight:
// 768 x 12, the kernels' static_assert).
namespace bins16 {
constexpr int kLimit = 8192;
REPIX_HD std::uint32_t word_of(std::uint32_t v) { return v & 0x7FFFu; }
REPIX_HD bool high(std::uint32_t v) { return (v >> 15) != 0u; }
// The 32-bit increment that adds d to value v's half.
REPIX_HD std::uint32_t increment(std::uint32_t v, int d) {
  const std::uint32_t u = static_cast<std::uint32_t>(d);  // two's complement: the borrow is in the reading
  return high(v) ? u << 16 : u;
}
REPIX_HD int low_half(std::uint32_t w) {
  const int l = static_cast<int>(w & 0xFFFFu);
  return l >= 0x8000 ? l - 0x10000 : l;
}
REPIX_HD int high_half(std::uint32_t w) {
  const std::uint32_t t = (w + 0x8000u) >> 16;  // H + 2^16 for negative H, from (w - L) / 65536
  return t >= 0x8000u ? static_cast<int>(t) - 0x10000 : static_cast<int>(t);
}
REPIX_HD int half_of(std::uint32_t w, std::uint32_t v) { return high(v) ? high_half(w) : low_half(w); }
// Whether the add that left word w took value v's half outside [-kLimit, kLimit) = [-2^13, 2^13):
// the half's top three bits differ, tested on the half moved to the word's top (the high half with
// the low half's borrow undone) in four ALU instructions; the decoded compare was ~10 (SASS).
// outside_bits: non-zero exactly when beyond (so a thread ORs its voxels' and tests once).
REPIX_HD std::uint32_t outside_bits(std::uint32_t w, std::uint32_t v) {
  static_assert(kLimit == 1 << 13, "the test reads bits 29..31");
  const std::uint32_t top = high(v) ? w + 0x8000u : w << 16;
  return (top ^ (top << 1)) & 0xC0000000u;
}
REPIX_HD bool beyond(std::uint32_t w, std::uint32_t v) { return outside_bits(w, v) != 0u; }
}  // namespace bins16

// gpu-opt-sampled16's choice, made on the GPU before each pass over a 2D uint16 image of kFrom voxels
// or more (Engine::accumulate's sample kernel): kSegments runs of kSegmentValues consecutive values
// at scattered places (a fixed hash of the run's index, not a stride, which lands on one column of
// an image whose row length divides it), their distinct values counted in a 65536-bit set; from
// kBins16From distinct values the 16-bit shared bins run (gpu-opt-bins16's kernel), below them
// gpu-opt's block hash. Why 512: the block hash (2048 slots, 2 probes) holds a few hundred keys and
// the 16-bit counters fill on few values (gpu-opt-bins16 at 16 levels: 9.4 ms against gpu-opt's
// 0.21, H200 8192^2), while at 1000 levels the bins already won (0.190 against 0.213 ms) and at
// 4000 by 3.2x; the 16-bit textures camera 8192^2 and grass 4096^2 have 256 and 241 distinct
// values in all and ran 1.10x and 1.16x faster with the hash. The choice costs 6-10 us a pass
// (the sample and the other kernel's empty launch, NOTES-gpu-opt.md), near what the bins save at
// kFrom (65536 levels at 2048^2: 17 us): smaller images run gpu-opt's kernel alone.
namespace sampled16 {
constexpr std::int64_t kFrom = std::int64_t(1) << 22;
constexpr int kSegments = 64;
constexpr int kSegmentValues = 128;
constexpr unsigned kBins16From = 512;
constexpr std::uint32_t kHash = 0, kBins16 = 1;  // the gate's values (Geom::gate)
// The first value of run `seg` in an image of n >= kSegmentValues values: splitmix64's finaliser of
// the index scaled into [0, n - kSegmentValues] by a high multiply (a 64-bit modulo is a long
// software routine on the GPU), then down to a multiple of 4 so that a lane's 4 values can be one
// 8-byte load.
REPIX_HD std::int64_t segment_start(int seg, std::int64_t n) {
  std::uint64_t z = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(seg + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const std::uint64_t range = static_cast<std::uint64_t>(n - kSegmentValues + 1);
#ifdef __CUDA_ARCH__
  const std::uint64_t at = __umul64hi(z, range);
#else
  const std::uint64_t at = static_cast<std::uint64_t>((static_cast<unsigned __int128>(z) * range) >> 64);
#endif
  return static_cast<std::int64_t>(at & ~std::uint64_t{3});
}
REPIX_HD std::uint32_t choice(unsigned distinct) { return distinct >= kBins16From ? kBins16 : kHash; }
}  // namespace sampled16

}  // namespace repix::ecc::opt
