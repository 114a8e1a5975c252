// Every max-tree variant (one test per registered id, tests/support/variants.hpp) against seq, the
// reference: exact equality of the normal form, on the edge shapes, plateau-heavy and many-level
// images, 8 and 16 bits, both connectivities, tiles of many sizes (1 pixel, sizes that do not divide
// the image, the default) and several thread counts; then against the brute-force oracle on small
// inputs. The area-opening variants against the brute-force area opening. GPU variants are in the
// same suites (the tile and thread options mean nothing to them) and skip without a GPU.
#include <gtest/gtest.h>

#include "core/gpu.hpp"

#include "maxtree/maxtree.hpp"
#include "maxtree/oracle.hpp"
#include "maxtree/parent_compare.hpp"
#include "maxtree/test_images.hpp"
#include "support/variants.hpp"

namespace repix::maxtree {
namespace {

class MaxtreeVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(MaxtreeVariant, test::variant_ids(variants(), test::Device::any));

class AreaOpeningVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(AreaOpeningVariant, test::variant_ids(area_variants(), test::Device::any));

#define REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v) \
  if ((v).gpu && !gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

using test::where;

TEST_P(MaxtreeVariant, MatchesSeqOnEveryShapeTileAndThreadCount) {
  const Variant& v = find_variant(GetParam());
  REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v);
  // Threads beyond the 2 cores of the development machines make OpenMP's spinning barriers slow
  // there: one uneven split (3) is enough to catch what more threads would.
  const std::vector<std::pair<int, int>> tiles_threads = {{0, 0}, {1, 2}, {7, 3}, {16, 2}, {100, 1}};
  for (const std::uint64_t seed : {11u, 12u}) {
    std::vector<test::Input> inputs = test::small_inputs(seed);
    for (test::Input& in : test::large_inputs(seed)) inputs.push_back(std::move(in));
    for (const test::Input& in : inputs) {
      for (const int c : {4, 8}) {
        Options o;
        o.connectivity = c;
        const Result want = find_variant("seq").run(in.image, o);
        for (const auto& [tile, threads] : tiles_threads) {
          o.tile = tile;
          o.threads = threads;
          const Result got = v.run(in.image, o);
          ASSERT_TRUE(got.parent == want.parent) << v.id << " on " << in.name << " (seed " << seed << "), connectivity "
                                                 << c << ", tile " << tile << ", threads " << threads << ": "
                                                 << where(got.parent, want.parent);
        }
      }
    }
  }
}

TEST_P(MaxtreeVariant, MatchesBruteForceLabelling) {
  const Variant& v = find_variant(GetParam());
  REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v);
  for (const test::Input& in : test::small_inputs(21)) {
    for (const int c : {4, 8}) {
      Options o;
      o.connectivity = c;
      o.tile = 4;
      o.threads = 2;
      const Result got = v.run(in.image, o);
      const std::vector<std::int64_t> want = test::MaxtreeOracle(in.image, c).parent();
      for (std::int64_t i = 0; i < in.image.size(); ++i)
        ASSERT_EQ(got.parent[i], want[i]) << v.id << " on " << in.name << ", connectivity " << c << ", pixel " << i;
    }
  }
}

TEST_P(MaxtreeVariant, WideIndexPathMatchesSeq) {
  const Variant& v = find_variant(GetParam());
  REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v);
  const HostImage img = test::random_image(DType::u8, 131, 67, 9, 31);
  Options o;
  o.connectivity = 8;
  o.tile = 32;
  o.threads = 2;
  const Result want = find_variant("seq").run(img, o);
  o.wide_index = true;
  const Result got = v.run(img, o);
  ASSERT_TRUE(got.parent.wide);
  EXPECT_TRUE(got.parent == want.parent) << where(got.parent, want.parent);
}

TEST_P(AreaOpeningVariant, MatchesBruteForceAndKeepsTheRoot) {
  const AreaVariant& v = find_area_variant(GetParam());
  REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v);
  for (const test::Input& in : test::small_inputs(41)) {
    for (const int c : {4, 8}) {
      const test::MaxtreeOracle oracle(in.image, c);
      for (const std::int64_t a : {std::int64_t(1), std::int64_t(4), std::int64_t(25), in.image.size() + 1}) {
        Options o;
        o.connectivity = c;
        o.area = a;
        o.tile = 5;
        o.threads = 3;
        const AreaResult got = v.run(in.image, o);
        ASSERT_EQ(got.image.dtype(), in.image.dtype());
        ASSERT_EQ(got.image.shape(), in.image.shape());
        ASSERT_EQ(test::values_of(got.image), oracle.area_opening(a))
            << v.id << " on " << in.name << ", connectivity " << c << ", area " << a;
      }
    }
  }
}

TEST_P(AreaOpeningVariant, MatchesSeqOnLargerImages) {
  const AreaVariant& v = find_area_variant(GetParam());
  REPIX_SKIP_GPU_VARIANT_WITHOUT_GPU(v);
  for (const test::Input& in : test::large_inputs(51)) {
    for (const std::int64_t a : {std::int64_t(1), std::int64_t(3), std::int64_t(50), std::int64_t(5000)}) {
      Options o;
      o.connectivity = 4;
      o.area = a;
      o.threads = 2;
      o.tile = 33;
      const AreaResult want = find_area_variant("seq").run(in.image, o);
      const AreaResult got = v.run(in.image, o);
      ASSERT_EQ(test::values_of(got.image), test::values_of(want.image)) << v.id << " on " << in.name << ", area " << a;
    }
  }
}

}  // namespace
}  // namespace repix::maxtree
