// CPU-only tests (no GPU needed, run in CI) of the host/device helpers the ladder kernels run:
// the float -> ordered-key mapping, the rank search, the tile decomposition, the per-voxel
// introduction rules of each kernel, and a CPU emulation of each kernel's accumulation (same
// helpers, same tiles, same binning) against the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "ecc/cpu_accumulate.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_common.hpp"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

using ecc::gpu::float_from_order_key;
using ecc::gpu::float_order_key;

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Finite floats of every kind: random bit patterns (all exponents, denormals included), the
// special values, and close neighbours of each other.
std::vector<float> assorted_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v = {0.0f,     -0.0f,    FLT_MAX,  -FLT_MAX, FLT_MIN, -FLT_MIN,
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          FLT_MIN / 2, -FLT_MIN / 2, 1.0f, -1.0f,
                          std::nextafter(0.0f, 1.0f), std::nextafter(-0.0f, -1.0f),
                          std::nextafter(FLT_MAX, 0.0f), std::nextafter(-FLT_MAX, 0.0f)};
  while (v.size() < n) {
    std::uint32_t u = rng();
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (!std::isfinite(f)) continue;
    v.push_back(f);
    if (rng() % 4 == 0) v.push_back(std::nextafter(f, FLT_MAX));
    if (rng() % 8 == 0) v.push_back(-f);
  }
  return v;
}

TEST(EccLadderKeys, OrderMatchesFloatOrder) {
  std::vector<float> v = assorted_floats(20000, 7);
  std::vector<float> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const float a = sorted[i - 1], b = sorted[i];
    if (a < b)
      ASSERT_LT(float_order_key(a), float_order_key(b)) << a << " < " << b;
    else
      ASSERT_EQ(float_order_key(a), float_order_key(b)) << a << " == " << b;
  }
  std::mt19937 rng(3);
  for (int k = 0; k < 200000; ++k) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    ASSERT_EQ(a < b, float_order_key(a) < float_order_key(b)) << a << " vs " << b;
    ASSERT_EQ(a == b, float_order_key(a) == float_order_key(b)) << a << " vs " << b;
  }
}

TEST(EccLadderKeys, RoundTripAndSignedZero) {
  EXPECT_EQ(float_order_key(0.0f), float_order_key(-0.0f));
  EXPECT_EQ(bits_of(float_from_order_key(float_order_key(-0.0f))), 0u) << "-0 comes back as +0";
  for (float f : assorted_floats(50000, 11)) {
    const float back = float_from_order_key(float_order_key(f));
    if (f == 0.0f)
      ASSERT_EQ(bits_of(back), 0u);
    else
      ASSERT_EQ(bits_of(back), bits_of(f)) << f;
  }
}

// Sorting keys, dropping duplicates and mapping back (what the GPU binning does with CUB)
// gives exactly the reference's distinct values.
TEST(EccLadderKeys, DistinctKeysGiveReferenceValues) {
  const std::vector<float> v = assorted_floats(300000, 5);  // > 4 x 65536: several parts to merge
  std::vector<std::uint32_t> keys(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) keys[i] = float_order_key(v[i]);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<float> values(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) values[i] = float_from_order_key(keys[i]);
  for (int threads : {1, 3, 8}) {
    const std::vector<float> want = ecc::sorted_distinct(v.data(), static_cast<std::int64_t>(v.size()), threads);
    ASSERT_EQ(values.size(), want.size()) << threads << " threads";
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(bits_of(values[i]), bits_of(want[i])) << i;
  }
}

TEST(EccLadderKeys, LowerBoundMatchesStd) {
  std::mt19937 rng(9);
  for (int m : {0, 1, 2, 3, 7, 8, 64, 1000, 4097}) {
    std::set<std::uint32_t> s;
    while (static_cast<int>(s.size()) < m) s.insert(rng() % (4u * static_cast<unsigned>(m) + 3u));
    const std::vector<std::uint32_t> keys(s.begin(), s.end());
    for (std::uint32_t q = 0; q < 4u * static_cast<unsigned>(m) + 6u; ++q) {
      const auto want = std::lower_bound(keys.begin(), keys.end(), q) - keys.begin();
      ASSERT_EQ(ecc::gpu::lower_bound_key(keys.data(), m, q), want) << "m " << m << " q " << q;
    }
    ASSERT_EQ(ecc::gpu::lower_bound_key(keys.data(), m, 0xffffffffu),
              std::lower_bound(keys.begin(), keys.end(), 0xffffffffu) - keys.begin());
  }
}

// Every voxel is visited by exactly one (tile, thread); threads past the image edge map outside.
TEST(EccLadderTiles, CoverEveryVoxelOnce) {
  for (Shape sh : {Shape::d2(1, 1), Shape::d2(1, 70), Shape::d2(70, 1), Shape::d2(31, 7),
                   Shape::d2(33, 9), Shape::d2(257, 17), Shape::d1(100), Shape::d3(1, 1, 9),
                   Shape::d3(9, 1, 1), Shape::d3(33, 5, 3), Shape::d3(31, 4, 2),
                   Shape::d3(20, 7, 1)}) {
    const ecc::gpu::TileGrid t = ecc::gpu::ladder_tiles(sh);
    ASSERT_EQ(t.bx * t.by * t.bz, 256) << sh.str();
    std::vector<int> hits(static_cast<std::size_t>(sh.size()), 0);
    for (std::int64_t tile = 0; tile < t.total; ++tile)
      for (int iz = 0; iz < t.bz; ++iz)
        for (int iy = 0; iy < t.by; ++iy)
          for (int ix = 0; ix < t.bx; ++ix) {
            std::int64_t x, y, z;
            t.voxel(tile, ix, iy, iz, x, y, z);
            ASSERT_GE(x, 0);
            ASSERT_GE(y, 0);
            ASSERT_GE(z, 0);
            if (x >= sh.nx || y >= sh.ny || z >= sh.nz) continue;
            ++hits[static_cast<std::size_t>(x + sh.nx * (y + sh.ny * z))];
          }
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << sh.str() << " voxel " << i;
  }
}

// For every voxel of `view`: the ladder kernels' rules agree with cell_rules.hpp.
template <int Dims, class T>
void check_rules(const ImageView<T>& view, const std::string& what) {
  const Shape& s = view.shape;
  const ecc::gpu::Geometry g = ecc::gpu::Geometry::of(s);
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return view(x, y, z); };
  for (std::int64_t z = 0; z < s.nz; ++z)
    for (std::int64_t y = 0; y < s.ny; ++y)
      for (std::int64_t x = 0; x < s.nx; ++x) {
        const T c = view(x, y, z);
        bool ref[3][3][3], mine[3][3][3];
        ecc::neighbour_wins_3d(c, at, x, y, z, s.nx, s.ny, s.nz, ref);
        ecc::gpu::neighbour_wins<Dims>(c, at, g, x, y, z, mine);
        const int want = ecc::voxel_change(ref, Dims);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            for (int d = 0; d < 3; ++d)
              if (Dims == 3 || a == 1)
                ASSERT_EQ(mine[a][b][d], ref[a][b][d]) << what << " at " << x << "," << y << "," << z;
        int emitted = 0, cells = 0;
        ecc::gpu::for_each_introduced_cell<Dims>(mine, [&](int sign) {
          ASSERT_TRUE(sign == 1 || sign == -1);
          emitted += sign;
          ++cells;
        });
        ASSERT_EQ(emitted, want) << what << " naive cells at " << x << "," << y << "," << z;
        ASSERT_GE(cells, 1) << "the voxel itself is always introduced";
        ASSERT_EQ(ecc::gpu::introduced_change<Dims>(mine), want) << what;
        const ecc::gpu::PredicatedNeighbours<T> nb(view.data + g.index(x, y, z), g, x, y, z);
        ASSERT_EQ(ecc::gpu::cached_change<Dims>(c, nb), want)
            << what << " cached rule at " << x << "," << y << "," << z;
      }
}

// All 3^9 3x3 images with values 0..2: every tie pattern of a 2D neighbourhood, at every
// position (centre, edges, corners).
TEST(EccLadderRules, Exhaustive3x3) {
  HostImage img(DType::u8, Shape::d2(3, 3));
  std::uint8_t* d = img.data<std::uint8_t>();
  for (int code = 0; code < 19683; ++code) {
    int c = code;
    for (int i = 0; i < 9; ++i, c /= 3) d[i] = static_cast<std::uint8_t>(c % 3);
    check_rules<2>(img.view<std::uint8_t>(), "3x3 #" + std::to_string(code));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(EccLadderRules, RandomImagesAllDtypes) {
  std::uint32_t seed = 500;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d2(1, 9), Shape::d2(9, 1), Shape::d2(7, 6),
                     Shape::d1(12), Shape::d3(1, 1, 1), Shape::d3(3, 3, 3), Shape::d3(1, 1, 7),
                     Shape::d3(7, 1, 1), Shape::d3(1, 6, 1), Shape::d3(5, 4, 6), Shape::d3(6, 5, 1)})
      for (int levels : {1, 2, 3, 50}) {
        const HostImage img = test::random_image(dt, sh, levels, seed++);
        visit_image(img, [&](auto view) {
          if (sh.ndim == 3)
            check_rules<3>(view, test::describe(img));
          else
            check_rules<2>(view, test::describe(img));
        });
        if (::testing::Test::HasFatalFailure()) return;
      }
}

// Many random 3x3x3 neighbourhoods with 2 and 3 levels (every voxel checked, so borders too).
TEST(EccLadderRules, Random3x3x3) {
  std::uint32_t seed = 900;
  for (int k = 0; k < 3000; ++k) {
    const HostImage img = test::random_image(DType::u8, Shape::d3(3, 3, 3), 2 + k % 2, seed++);
    check_rules<3>(img.view<std::uint8_t>(), "3x3x3 #" + std::to_string(k));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// ---- CPU emulation of the ladder kernels ------------------------------------------------------

enum class Kernel { naive, reg, cached };

// The binning of LadderPlan, on the CPU: integers bin by value; floats by rank among the sorted
// distinct order keys (lower_bound_key), values recovered with float_from_order_key.
struct EmulatedBins {
  std::vector<std::uint32_t> bin;   // per voxel
  std::vector<float> values;        // per bin
  bool counts = true;
};

EmulatedBins emulate_binning(const HostImage& img) {
  EmulatedBins b;
  const std::size_t n = static_cast<std::size_t>(img.size());
  b.bin.resize(n);
  if (img.dtype() == DType::f32) {
    const float* d = img.data<float>();
    std::vector<std::uint32_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = float_order_key(d[i]);
    std::vector<std::uint32_t> distinct = keys;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (std::size_t i = 0; i < n; ++i)
      b.bin[i] = static_cast<std::uint32_t>(ecc::gpu::lower_bound_key(
          distinct.data(), static_cast<std::int64_t>(distinct.size()), keys[i]));
    for (std::uint32_t k : distinct) b.values.push_back(float_from_order_key(k));
    b.counts = false;
  } else {
    visit_image(img, [&](auto view) {
      for (std::size_t i = 0; i < n; ++i) b.bin[i] = static_cast<std::uint32_t>(view.data[i]);
    });
    b.values.resize(img.dtype() == DType::u8 ? 256 : 65536);
    for (std::size_t i = 0; i < b.values.size(); ++i) b.values[i] = static_cast<float>(i);
  }
  return b;
}

template <int Dims>
ecc::Curve emulate_kernel(const HostImage& img, Kernel k) {
  const EmulatedBins b = emulate_binning(img);
  const Shape& s = img.shape();
  const ecc::gpu::Geometry g = ecc::gpu::Geometry::of(s);
  const ecc::gpu::TileGrid t = ecc::gpu::ladder_tiles(s);
  const std::uint32_t* elem = b.bin.data();  // the kernels see the bins (values or ranks)
  std::vector<std::int64_t> vcec(b.values.size()), count(b.values.size());
  auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return elem[g.index(x, y, z)]; };
  for (std::int64_t tile = 0; tile < t.total; ++tile)
    for (int iz = 0; iz < t.bz; ++iz)
      for (int iy = 0; iy < t.by; ++iy)
        for (int ix = 0; ix < t.bx; ++ix) {
          std::int64_t x, y, z;
          t.voxel(tile, ix, iy, iz, x, y, z);
          if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
          const std::uint32_t c = at(x, y, z);
          bool wins[3][3][3];
          switch (k) {
            case Kernel::naive:
              ecc::gpu::neighbour_wins<Dims>(c, at, g, x, y, z, wins);
              ecc::gpu::for_each_introduced_cell<Dims>(wins, [&](int sign) { vcec[c] += sign; });
              break;
            case Kernel::reg:
              ecc::gpu::neighbour_wins<Dims>(c, at, g, x, y, z, wins);
              vcec[c] += ecc::gpu::introduced_change<Dims>(wins);
              break;
            case Kernel::cached: {
              const ecc::gpu::PredicatedNeighbours<std::uint32_t> nb(elem + g.index(x, y, z), g, x, y, z);
              vcec[c] += ecc::gpu::cached_change<Dims>(c, nb);
              break;
            }
          }
          ++count[c];
        }
  if (!b.counts) std::fill(count.begin(), count.end(), 1);
  return ecc::curve_from_bins(b.values, vcec, count);
}

TEST(EccLadderEmulation, KernelsMatchSeq) {
  std::uint32_t seed = 4000;
  std::vector<HostImage> imgs;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(1, 1), Shape::d2(33, 9), Shape::d2(1, 40), Shape::d1(40),
                     Shape::d3(17, 5, 3), Shape::d3(1, 1, 30), Shape::d3(12, 9, 1)})
      for (int levels : {2, 5, 256}) imgs.push_back(test::random_image(dt, sh, levels, seed++));
  imgs.push_back(test::float_extremes(Shape::d2(23, 19), 1));
  imgs.push_back(test::float_extremes(Shape::d3(7, 6, 5), 2));
  imgs.push_back(test::signed_zeros(Shape::d2(9, 8), 3));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(90, 80), 6000, 4));
  imgs.push_back(test::checkerboard(DType::u16, Shape::d3(6, 7, 8), 1, 3, 60000));
  for (const HostImage& img : imgs) {
    const ecc::Curve want = ecc::run_seq(img, {});
    for (Kernel k : {Kernel::naive, Kernel::reg, Kernel::cached}) {
      const ecc::Curve got = img.shape().ndim == 3 ? emulate_kernel<3>(img, k) : emulate_kernel<2>(img, k);
      ASSERT_TRUE(test::same_curve(got, want)) << test::describe(img) << " kernel " << int(k);
    }
  }
}

// The ladder variants are registered, in ablation order, as GPU variants with plans.
TEST(EccLadderRegistry, LadderVariantsInOrder) {
  const char* ids[] = {"gpu-naive", "gpu-register", "gpu-shared-hist", "gpu-cached"};
  const char* steps[] = {"naive", "register-accumulation", "shared-histogram", "cached-neighbours"};
  std::vector<std::size_t> pos;
  const auto& all = ecc::variants();
  for (int i = 0; i < 4; ++i) {
    const ecc::Variant& v = ecc::find_variant(ids[i]);
    EXPECT_TRUE(v.gpu) << ids[i];
    EXPECT_EQ(v.step, steps[i]);
    EXPECT_FALSE(v.description.empty());
    EXPECT_TRUE(static_cast<bool>(v.run));
    EXPECT_TRUE(static_cast<bool>(v.make_plan));
    pos.push_back(static_cast<std::size_t>(&v - all.data()));
  }
  EXPECT_TRUE(std::is_sorted(pos.begin(), pos.end()));
}

}  // namespace
}  // namespace repix
