// CPU tests of gpu-opt's __host__ __device__ core (gpu_opt_core.cuh): the byte-sliced win words
// and cell logic against cell_rules.hpp's reference voxel_change, key canonicalisation and order,
// and a CPU emulation of the kernels' tiling (runs of 4 along x, +inf outside) against run_seq.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "ecc/cell_rules.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt_core.cuh"

namespace repix {
namespace {

using namespace ecc::opt;
constexpr float kInf = std::numeric_limits<float>::infinity();

struct NanSign {
  explicit NanSign(int s) { g_host_nan_sign = s; }
  ~NanSign() { g_host_nan_sign = -1; }
};

// Random value with heavy ties; `outside` probability of +inf (an out-of-image neighbour).
float draw(std::mt19937& rng, int levels, double outside) {
  std::uniform_real_distribution<double> u(0, 1);
  if (u(rng) < outside) return kInf;
  static const float specials[] = {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                                   1e-45f, -1e-45f, 1.0f, -1.0f};
  if (u(rng) < 0.1) return specials[rng() % 10];
  return static_cast<float>(static_cast<int>(rng() % levels)) * 0.5f - 1.0f;
}

// Reference change of run voxel i (row index i+1) from cell_rules.hpp.
int reference_change(const float (&b)[3][3][6], int i, int dims) {
  bool wins[3][3][3];
  const float c = b[1][1][i + 1];
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        bool w = true;
        const bool in_plane = dims == 3 || dz == 0;
        if ((dx | dy | dz) != 0 && in_plane) {
          const float n = b[dz + 1][dy + 1][i + 1 + dx];
          const bool before = dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)));
          if (!std::isinf(n)) w = before ? (c < n) : (c <= n);
        }
        wins[dz + 1][dy + 1][dx + 1] = w;
      }
  return ecc::voxel_change(wins, dims);
}

void canon_block(float (&b)[3][3][6]) {
  for (auto& p : b)
    for (auto& r : p)
      for (float& v : r) v = canon(v);
}

TEST(EccOptCore, Prmt) {
  EXPECT_EQ(prmt(0x33221100u, 0x77665544u, 0x3210u), 0x33221100u);
  EXPECT_EQ(prmt(0x33221100u, 0x77665544u, 0x7654u), 0x77665544u);
  EXPECT_EQ(prmt(0x80000000u, 0x7F000000u, 0xFBFBu), 0x00FF00FFu);
  EXPECT_EQ(sign4(0x80000000u, 0u, 0xFFFFFFFFu, 0x7FFFFFFFu), 0x00FF00FFu);
  EXPECT_EQ(sign4(0u, 0x80000000u, 0u, 0x80000000u), 0xFF00FF00u);
}

// A rule on 60000 random blocks (planes z-1..z+1, rows y-1..y+1, columns x0-1..x0+4) for each sign
// of the NaN that +inf - +inf gives: heavy ties, specials, +inf neighbours (outside the image) with
// probability `outside` (none every third block); centres finite, except some padding voxels (+inf)
// whose bytes are ignored. rule(canonical block) gives the change bytes (+ bias) of the run's 4
// voxels, each checked against cell_rules.hpp's voxel_change.
template <class Rule>
void expect_rule_matches_reference(std::uint32_t seed, double outside_p, int dims, int bias, Rule rule) {
  for (int nan_sign : {0, 1}) {
    NanSign ns(nan_sign);
    std::mt19937 rng(seed + nan_sign);
    for (int iter = 0; iter < 60000; ++iter) {
      const int levels = 1 + static_cast<int>(rng() % 4);
      const double outside = (iter % 3 == 0) ? 0.0 : outside_p;
      float b[3][3][6];
      for (auto& p : b)
        for (auto& r : p)
          for (float& v : r) v = draw(rng, levels, outside);
      bool real[4];
      for (int i = 0; i < 4; ++i) {
        real[i] = (iter % 5 != 0) || (rng() % 2 == 0);
        if (real[i] && std::isinf(b[1][1][i + 1])) b[1][1][i + 1] = draw(rng, levels, 0.0);
        if (!real[i]) b[1][1][i + 1] = kInf;
      }
      float raw[3][3][6];
      std::copy(&b[0][0][0], &b[0][0][0] + 54, &raw[0][0][0]);
      canon_block(b);
      const std::uint32_t s = rule(b);
      for (int i = 0; i < 4; ++i) {
        if (!real[i]) continue;
        ASSERT_EQ(byte_of(s, i) - bias, reference_change(raw, i, dims)) << "iter " << iter << " i " << i;
      }
    }
  }
}

TEST(EccOptCore, Change4MatchesReference3D) {
  expect_rule_matches_reference(1234, 0.15, 3, kBias3,
                                [](const float (&b)[3][3][6]) { return change4_3d(b[0], b[1], b[2]); });
}

// The cell-centric rule (owner comparisons made once a block) on blocks drawn like change4_3d's.
TEST(EccOptCore, CellOwnersMatchReference3D) {
  expect_rule_matches_reference(4321, 0.15, 3, kBias3,
                                [](const float (&b)[3][3][6]) { return change4_3d_cells(b[0], b[1], b[2]); });
}

TEST(EccOptCore, Change4MatchesReference2D) {
  expect_rule_matches_reference(99, 0.2, 2, kBias2,
                                [](const float (&b)[3][3][6]) { return change4_2d(b[1][0], b[1][1], b[1][2]); });
}

// The carried form (the row above's words from the signs its own step left) on blocks drawn like
// change4_2d's, through the reference ...
TEST(EccOptCore, Change4CarriedMatchesReference2D) {
  expect_rule_matches_reference(77, 0.2, 2, kBias2, [](const float (&b)[3][3][6]) {
    DownSigns below{};
    return change4_2d_carried(down_signs(b[1][0], b[1][1]), b[1][0], b[1][1], b[1][2], below);
  });
}

// Walks of `kSteps` slices (rows in 2D, planes in 3D) with both NaN signs and the host's own, each
// step's carried rule (taking the previous step's signs) bit for bit the fresh rule's word, padding
// bytes included, and the signs it leaves equal to down_signs of its own and the next slice's run rows
// (`run_row(slice)`). `fresh(a, b, c)`, `carried(above, a, b, c, below)`.
template <class Slice, int kSteps, class RunRow, class Fresh, class Carried>
void expect_carried_walks_equal_fresh(std::uint32_t seed, int walks, double outside_p, RunRow run_row, Fresh fresh,
                                      Carried carried) {
  for (int nan_sign : {-1, 0, 1}) {
    NanSign ns(nan_sign);
    std::mt19937 rng(seed + nan_sign);
    for (int walk = 0; walk < walks; ++walk) {
      const int levels = 1 + static_cast<int>(rng() % 5);
      const double outside = (walk % 4 == 0) ? 0.0 : outside_p;
      Slice slices[kSteps];
      float* v = reinterpret_cast<float*>(slices);
      for (std::size_t i = 0; i < sizeof(slices) / sizeof(float); ++i) v[i] = canon(draw(rng, levels, outside));
      DownSigns carry = down_signs(run_row(slices[0]), run_row(slices[1]));
      for (int k = 1; k + 1 < kSteps; ++k) {
        DownSigns below{};
        const std::uint32_t got = carried(carry, slices[k - 1], slices[k], slices[k + 1], below);
        ASSERT_EQ(got, fresh(slices[k - 1], slices[k], slices[k + 1])) << "walk " << walk << " step " << k << " nan " << nan_sign;
        const DownSigns want = down_signs(run_row(slices[k]), run_row(slices[k + 1]));
        ASSERT_EQ(below.m, want.m);
        ASSERT_EQ(below.z, want.z);
        ASSERT_EQ(below.p, want.p);
        carry = below;
      }
    }
  }
}

using Row = float[6];
using Plane = float[3][6];

// ... and bit for bit change4_2d's word, rows walked down as a kernel's thread does.
TEST(EccOptCore, Change4CarriedEqualsFresh2D) {
  expect_carried_walks_equal_fresh<Row, 12>(
      31, 4000, 0.25, [](const Row& r) -> const Row& { return r; },
      [](const Row& a, const Row& b, const Row& c) { return change4_2d(a, b, c); },
      [](DownSigns above, const Row& a, const Row& b, const Row& c, DownSigns& below) {
        return change4_2d_carried(above, a, b, c, below);
      });
}

// 3D: a run walked along z, row y of plane z-1 carried from the step of that plane.
TEST(EccOptCore, Change4CarriedMatchesReference3D) {
  expect_rule_matches_reference(78, 0.15, 3, kBias3, [](const float (&b)[3][3][6]) {
    DownSigns below{};
    return change4_3d_carried(down_signs(b[0][1], b[1][1]), b[0], b[1], b[2], below);
  });
}

// ... and bit for bit change4_3d's word, planes walked along z.
TEST(EccOptCore, Change4CarriedEqualsFresh3D) {
  expect_carried_walks_equal_fresh<Plane, 8>(
      57, 2000, 0.2, [](const Plane& p) -> const Row& { return p[1]; },
      [](const Plane& a, const Plane& b, const Plane& c) { return change4_3d(a, b, c); },
      [](DownSigns above, const Plane& a, const Plane& b, const Plane& c, DownSigns& below) {
        return change4_3d_carried(above, a, b, c, below);
      });
}

TEST(EccOptCore, KeysCanonicalAndOrdered) {
  EXPECT_EQ(key_of_compute<float>(to_compute(-0.0f)), key_of_compute<float>(to_compute(0.0f)));
  EXPECT_EQ(key_of_compute<float>(to_compute(-0.0f)), 0u);
  std::mt19937 rng(5);
  std::vector<float> v = {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f};
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t bits = rng();
    float f = float_from_bits(bits);
    if (std::isfinite(f)) v.push_back(f);
  }
  for (float a : v) {
    const std::uint32_t ka = key_of_compute<float>(to_compute(a));
    EXPECT_NE(ka, kEmptyKey);
    EXPECT_EQ(unordered_key(ordered_key(ka)), ka);
    EXPECT_EQ(float_from_bits(ka), a + 0.0f);
  }
  for (std::size_t i = 0; i + 1 < v.size(); ++i) {
    const float a = v[i], b = v[i + 1];
    const std::uint32_t oa = ordered_key(key_of_compute<float>(to_compute(a)));
    const std::uint32_t ob = ordered_key(key_of_compute<float>(to_compute(b)));
    EXPECT_EQ(a < b, oa < ob) << a << " " << b;
    EXPECT_EQ(a == b, oa == ob) << a << " " << b;
  }
  // Integers: 2^23 + v, ordered as the integers, differences exact, the key the integer back.
  for (std::uint32_t u = 0; u < 65536; ++u) {
    const float f = to_compute(static_cast<std::uint16_t>(u));
    ASSERT_EQ(f, 8388608.0f + static_cast<float>(u));
    ASSERT_EQ(key_of_compute<std::uint16_t>(f), u);
    const std::uint32_t w = rng() % 65536;
    const float g = to_compute(static_cast<std::uint16_t>(w));
    ASSERT_EQ(f - g, static_cast<float>(static_cast<int>(u) - static_cast<int>(w)));
    ASSERT_EQ(f < g, u < w);
    ASSERT_LT(f, kInf);
  }
  for (std::uint32_t u = 0; u < 256; ++u)
    ASSERT_EQ(key_of_compute<std::uint8_t>(to_compute(static_cast<std::uint8_t>(u))), u);
  for (int lg = 1; lg <= 22; ++lg)
    for (int i = 0; i < 1000; ++i) ASSERT_LT(hash_slot(rng(), lg), 1u << lg);
}

// ---- CPU emulation of the kernels' tiling --------------------------------------------------------

// `cells`: 3D runs through the cell-centric rule (change4_3d_cells) instead of change4_3d.
// `carry_rows`: as gpu-opt's kernels walk a run down its rows (2D) or along z (3D), the words for the
// row above (plane below) carried from the step before (change4_2d_carried, change4_3d_carried),
// afresh at the first row (plane) of every `carry_rows` (a work item).
template <class T>
ecc::Curve emulate(const ImageView<T>& img, bool cells = false, int carry_rows = 0) {
  const Shape& s = img.shape;
  const bool three = s.ndim == 3;
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) -> float {
    if (x < 0 || y < 0 || z < 0 || x >= s.nx || y >= s.ny || z >= s.nz) return kInf;
    return to_compute(img(x, y, z));
  };
  std::map<float, std::int64_t> vcec;
  std::map<std::pair<std::int64_t, std::int64_t>, DownSigns> carried;  // by run (y in 3D, x0): its signs
  for (std::int64_t z = 0; z < s.nz; ++z)
    for (std::int64_t y = 0; y < s.ny; ++y)
      for (std::int64_t x0 = 0; x0 < s.nx; x0 += 4) {
        float b[3][3][6];
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int i = 0; i < 6; ++i)
              b[dz + 1][dy + 1][i] = (three || dz == 0) ? at(x0 - 1 + i, y + dy, z + dz) : kInf;
        std::uint32_t w = 0;
        if (!three && carry_rows > 0) {
          DownSigns& c = carried[{0, x0}];
          if (y % carry_rows == 0) c = down_signs(b[1][0], b[1][1]);
          w = change4_2d_carried(c, b[1][0], b[1][1], b[1][2], c);
        } else if (three && carry_rows > 0) {
          DownSigns& c = carried[{y, x0}];
          if (z % carry_rows == 0) c = down_signs(b[0][1], b[1][1]);
          w = change4_3d_carried(c, b[0], b[1], b[2], c);
        } else {
          w = !three ? change4_2d(b[1][0], b[1][1], b[1][2])
              : cells ? change4_3d_cells(b[0], b[1], b[2])
                      : change4_3d(b[0], b[1], b[2]);
        }
        for (int i = 0; i < 4 && x0 + i < s.nx; ++i) {
          const float c = b[1][1][i + 1];
          const std::uint32_t key = key_of_compute<T>(c);
          const float value = sizeof(T) == 4 ? float_from_bits(key) : static_cast<float>(key);
          vcec[value] += byte_of(w, i) - (three ? kBias3 : kBias2);
        }
      }
  ecc::Curve out;
  std::int64_t acc = 0;
  for (auto& [v, d] : vcec) {
    acc += d;
    out.values.push_back(v);
    out.ecc.push_back(acc);
  }
  return out;
}

TEST(EccOptCore, EmulatedTilingMatchesSeq) {
  std::mt19937 rng(7);
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d1(9), Shape::d2(5, 1), Shape::d2(1, 6), Shape::d2(13, 11),
                     Shape::d2(8, 8), Shape::d3(1, 1, 1), Shape::d3(1, 1, 7), Shape::d3(7, 5, 4),
                     Shape::d3(9, 3, 1), Shape::d3(4, 4, 4)})
      for (int levels : {1, 2, 3, 17, 1000}) {
        HostImage img(dt, sh);
        for (std::int64_t i = 0; i < img.size(); ++i) {
          const int v = static_cast<int>(rng() % levels);
          switch (dt) {
            case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v); break;
            case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v * 61); break;
            case DType::f32: {
              float f = v == 0 ? -0.0f : v == 1 ? FLT_MAX : v == 2 ? -FLT_MAX : v * 0.25f - 2.0f;
              img.data<float>()[i] = f;
              break;
            }
          }
        }
        const ecc::Curve want = ecc::run_seq(img, {});
        const ecc::Curve got = visit_image(img, [](auto view) { return emulate(view); });
        ASSERT_EQ(got.values, want.values) << dtype_name(dt) << " " << sh.str() << " L" << levels;
        ASSERT_EQ(got.ecc, want.ecc) << dtype_name(dt) << " " << sh.str() << " L" << levels;
        for (int carry_rows : {1, 3, 1000}) {
          const ecc::Curve c = visit_image(img, [&](auto view) { return emulate(view, false, carry_rows); });
          ASSERT_EQ(c.values, want.values) << "carried " << carry_rows << " " << dtype_name(dt) << " " << sh.str();
          ASSERT_EQ(c.ecc, want.ecc) << "carried " << carry_rows << " " << dtype_name(dt) << " " << sh.str();
        }
        if (sh.ndim == 3) {
          const ecc::Curve cells = visit_image(img, [](auto view) { return emulate(view, true); });
          ASSERT_EQ(cells.values, want.values) << "cells " << dtype_name(dt) << " " << sh.str() << " L" << levels;
          ASSERT_EQ(cells.ecc, want.ecc) << "cells " << dtype_name(dt) << " " << sh.str() << " L" << levels;
        }
      }
}

}  // namespace
}  // namespace repix
