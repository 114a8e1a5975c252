// CPU tests of the batched small-image kernel's __host__ __device__ logic
// (gpu_batch_small_core.cuh): sort keys and their order, the reduce of sorted runs, and a CPU
// emulation of a whole thread block (items -> stable sort by key -> per-thread totals ->
// exclusive scan -> emit) against run_seq, for every block shape, on seeded images with many
// ties and with all-distinct values, float extremes, signed zeros, constants, checkerboards and
// edge shapes. Only the block-wide sort and scan (CUB on the device) are emulated here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "core/float_bits.hpp"
#include "ecc/batch.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_batch_small_core.cuh"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

using namespace ecc::small_batch;

// What one block of kThreads x kItems computes for `img`: the (value, ECC) pairs of its output
// slot (slot size = the image's element count, as in the kernel).
template <class T, int kThreads, int kItems>
ecc::Curve emulate_block(const HostImage& img) {
  const Shape& sh = img.shape();
  const int n = static_cast<int>(img.size());
  EXPECT_LE(n, kThreads * kItems);
  const ecc::gpu::Geometry g = ecc::gpu::Geometry::of(sh);
  const int dims = ecc::gpu::rule_dims(sh);

  // 1. Items, thread by thread (striped arrangement).
  std::vector<std::pair<std::uint32_t, signed char>> items;
  for (int t = 0; t < kThreads; ++t) {
    std::uint32_t keys[kItems];
    signed char changes[kItems];
    thread_items<T, kItems>(img.data<T>(), g, n, dims, t, kThreads, keys, changes);
    for (int j = 0; j < kItems; ++j) items.emplace_back(keys[j], changes[j]);
  }
  // The radix sort reads bits [0, kEndBit) only: every key must lie below 2^kEndBit.
  if (SortKey<T>::kEndBit < 32)
    for (const auto& it : items) EXPECT_LT(it.first, std::uint32_t(1) << SortKey<T>::kEndBit);

  // 2. Sort by key; equal keys keep their order, as in a radix sort.
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // 3. Blocked arrangement, successors, totals, exclusive scan, emit.
  std::vector<std::uint32_t> values(static_cast<std::size_t>(n), 0xDEADBEEFu);
  std::vector<std::int32_t> ecc(static_cast<std::size_t>(n), -777);
  auto thread_keys = [&](int t, std::uint32_t (&k)[kItems], signed char (&c)[kItems]) {
    for (int j = 0; j < kItems; ++j) {
      k[j] = items[static_cast<std::size_t>(t * kItems + j)].first;
      c[j] = items[static_cast<std::size_t>(t * kItems + j)].second;
    }
  };
  auto successor = [&](int t) {
    return t + 1 < kThreads ? items[static_cast<std::size_t>((t + 1) * kItems)].first : SortKey<T>::kSentinel;
  };
  std::vector<RunTotals> before(kThreads);
  RunTotals total;
  for (int t = 0; t < kThreads; ++t) {
    std::uint32_t k[kItems];
    signed char c[kItems];
    thread_keys(t, k, c);
    before[t] = total;
    total = AddRunTotals{}(total, thread_totals(k, c, successor(t), SortKey<T>::kSentinel));
  }
  EXPECT_LE(total.runs, n);
  for (int t = 0; t < kThreads; ++t) {
    std::uint32_t k[kItems];
    signed char c[kItems];
    thread_keys(t, k, c);
    thread_emit<T, kItems>(k, c, successor(t), before[t], values.data(), ecc.data());
  }
  ecc::Curve out;
  for (int i = 0; i < total.runs; ++i) {
    out.values.push_back(float_from_bits(values[static_cast<std::size_t>(i)]));
    out.ecc.push_back(ecc[static_cast<std::size_t>(i)]);
  }
  // Nothing written past the count: the host reads exactly `count` pairs.
  for (std::size_t i = static_cast<std::size_t>(total.runs); i < values.size(); ++i) {
    EXPECT_EQ(values[i], 0xDEADBEEFu);
    EXPECT_EQ(ecc[i], -777);
  }
  return out;
}

template <class T, std::size_t... I>
ecc::Curve emulate_tier(const HostImage& img, int tier, std::index_sequence<I...>) {
  ecc::Curve (*const table[])(const HostImage&) = {&emulate_block<T, kTiers[I].threads, kTiers[I].items>...};
  return table[tier](img);
}

ecc::Curve emulate(const HostImage& img, int tier) {
  const auto tiers = std::make_index_sequence<kTierCount>();
  switch (img.dtype()) {
    case DType::u8: return emulate_tier<std::uint8_t>(img, tier, tiers);
    case DType::u16: return emulate_tier<std::uint16_t>(img, tier, tiers);
    case DType::f32: break;
  }
  return emulate_tier<float>(img, tier, tiers);
}

// The block shape the kernel takes for this image, and every larger one (more empty slots).
void expect_every_tier_matches_seq(const HostImage& img) {
  const ecc::Curve want = ecc::run_seq(img, {});
  const int first = tier_for(img.size());
  ASSERT_GE(first, 0) << test::describe(img);
  for (int tier = first; tier < kTierCount; ++tier)
    EXPECT_TRUE(test::same_curve(emulate(img, tier), want))
        << test::describe(img) << " in blocks of " << kTiers[tier].threads << " x " << kTiers[tier].items;
}

TEST(EccBatchSmallCore, TiersAndFit) {
  EXPECT_EQ(tier_for(1), 0);
  EXPECT_EQ(tier_for(kTiers[0].capacity()), 0);
  EXPECT_EQ(tier_for(kTiers[0].capacity() + 1), 1);
  EXPECT_EQ(tier_for(kTiers[1].capacity()), 1);
  EXPECT_EQ(tier_for(kTiers[1].capacity() + 1), 2);
  EXPECT_EQ(tier_for(kMaxElements), kTierCount - 1);
  EXPECT_EQ(tier_for(kMaxElements + 1), -1);
  for (int i = 1; i < kTierCount; ++i) EXPECT_GT(kTiers[i].capacity(), kTiers[i - 1].capacity());
  EXPECT_TRUE(ecc::BatchRunner::small_kernel_fits(Shape::d2(128, 128)));
  EXPECT_TRUE(ecc::BatchRunner::small_kernel_fits(Shape::d2(127, 129)));
  EXPECT_TRUE(ecc::BatchRunner::small_kernel_fits(Shape::d3(16, 16, 64)));
  EXPECT_TRUE(ecc::BatchRunner::small_kernel_fits(Shape::d2(1, 1)));
  EXPECT_TRUE(ecc::BatchRunner::small_kernel_fits(Shape::d1(16384)));
  EXPECT_FALSE(ecc::BatchRunner::small_kernel_fits(Shape::d2(129, 128)));
  EXPECT_FALSE(ecc::BatchRunner::small_kernel_fits(Shape::d3(128, 128, 128)));
  EXPECT_FALSE(ecc::BatchRunner::small_kernel_fits(Shape::d2(0, 5)));
}

TEST(EccBatchSmallCore, BatchPathNames) {
  for (ecc::BatchPath p : {ecc::BatchPath::automatic, ecc::BatchPath::small_kernel, ecc::BatchPath::per_image})
    EXPECT_EQ(ecc::parse_batch_path(ecc::batch_path_name(p)), p);
  EXPECT_EQ(ecc::batch_path_name(ecc::BatchPath::small_kernel), "small-kernel");
  EXPECT_THROW(ecc::parse_batch_path("gpu-opt"), Error);
}

TEST(EccBatchSmallCore, FloatKeysOrderAndFold) {
  const float pool[] = {-FLT_MAX, -1e30f, -3.5f, -1.0f, -FLT_MIN, -FLT_MIN / 3.0f,
                        -std::numeric_limits<float>::denorm_min(), 0.0f,
                        std::numeric_limits<float>::denorm_min(), FLT_MIN / 1024.0f, FLT_MIN, 1.0f,
                        3.5f, std::nextafter(FLT_MAX, 0.0f), FLT_MAX};
  const std::size_t m = sizeof pool / sizeof pool[0];
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint32_t k = SortKey<float>::of(pool[i]);
    EXPECT_LT(k, SortKey<float>::kSentinel);
    EXPECT_EQ(SortKey<float>::value_bits(k), float_bits(pool[i])) << pool[i];
    if (i > 0) EXPECT_LT(SortKey<float>::of(pool[i - 1]), k) << pool[i - 1] << " < " << pool[i];
  }
  // -0 and +0 are one value, reported as +0.
  EXPECT_EQ(SortKey<float>::of(-0.0f), SortKey<float>::of(0.0f));
  EXPECT_EQ(SortKey<float>::value_bits(SortKey<float>::of(-0.0f)), 0u);
}

TEST(EccBatchSmallCore, IntegerKeys) {
  EXPECT_EQ(SortKey<std::uint8_t>::kEndBit, 9);
  EXPECT_EQ(SortKey<std::uint8_t>::kSentinel, 256u);
  EXPECT_EQ(SortKey<std::uint16_t>::kEndBit, 17);
  EXPECT_EQ(SortKey<std::uint16_t>::kSentinel, 65536u);
  for (int v : {0, 1, 200, 255}) {
    EXPECT_EQ(SortKey<std::uint8_t>::of(static_cast<std::uint8_t>(v)), static_cast<std::uint32_t>(v));
    EXPECT_EQ(float_from_bits(SortKey<std::uint8_t>::value_bits(static_cast<std::uint32_t>(v))), static_cast<float>(v));
  }
  EXPECT_EQ(float_from_bits(SortKey<std::uint16_t>::value_bits(65535u)), 65535.0f);
}

// Runs that cross thread boundaries, a run that fills a whole thread, and sentinel padding.
TEST(EccBatchSmallCore, ReduceAcrossThreads) {
  constexpr int kItems = 4;
  constexpr std::uint32_t S = SortKey<std::uint8_t>::kSentinel;
  // Three threads' sorted keys: value 1 x3 | value 2 x5 | value 5 x2, 7 x1, sentinel x2.
  const std::uint32_t keys[3][kItems] = {{1, 1, 1, 2}, {2, 2, 2, 2}, {5, 5, 7, S}};
  const signed char changes[3][kItems] = {{1, -1, 1, -2}, {1, 1, -1, 1}, {3, -4, 1, 0}};
  const std::uint32_t succ[3] = {2, 5, S};
  RunTotals before[3], total;
  for (int t = 0; t < 3; ++t) {
    before[t] = total;
    total = AddRunTotals{}(total, thread_totals(keys[t], changes[t], succ[t], S));
  }
  EXPECT_EQ(before[1].runs, 1);  // value 1 ends in thread 0
  EXPECT_EQ(before[2].runs, 2);  // value 2 ends in thread 1, at its last item
  EXPECT_EQ(total.runs, 4);
  std::uint32_t values[12];
  std::int32_t ecc[12];
  for (int t = 0; t < 3; ++t) thread_emit<std::uint8_t, kItems>(keys[t], changes[t], succ[t], before[t], values, ecc);
  const float want_v[] = {1, 2, 5, 7};
  const std::int32_t want_e[] = {1, 1, 0, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(float_from_bits(values[i]), want_v[i]) << i;
    EXPECT_EQ(ecc[i], want_e[i]) << i;
  }
}

TEST(EccBatchSmallCore, RandomImagesEveryDtypeAndShape) {
  std::uint32_t seed = 7100;
  const Shape shapes[] = {Shape::d2(1, 1),    Shape::d2(1, 37),   Shape::d2(37, 1),   Shape::d2(16, 16),
                          Shape::d2(5, 51),   Shape::d2(257, 1),  Shape::d2(23, 89),  Shape::d2(2049, 1),
                          Shape::d2(17, 15),  Shape::d2(45, 45),  Shape::d2(64, 32),  Shape::d2(127, 129),
                          Shape::d2(128, 128), Shape::d1(300),    Shape::d2(1, 4096), Shape::d2(16384, 1),
                          Shape::d3(1, 1, 1), Shape::d3(3, 4, 5), Shape::d3(1, 1, 9), Shape::d3(9, 1, 1),
                          Shape::d3(6, 7, 1), Shape::d3(16, 16, 64), Shape::d3(25, 25, 26), Shape::d3(2, 3, 257)};
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes)
      for (int levels : {2, 5, 200, 20000}) {
        if (dt == DType::u8 && levels > 256) continue;
        expect_every_tier_matches_seq(test::random_image(dt, sh, levels, seed++));
      }
}

// All-distinct float values (the Table 3 input: uniform noise), ascending and descending runs.
TEST(EccBatchSmallCore, AllDistinctFloats) {
  for (const Shape& sh : {Shape::d2(128, 128), Shape::d2(127, 129), Shape::d3(16, 16, 64), Shape::d2(33, 7)}) {
    HostImage img(DType::f32, sh);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = u(rng);
    expect_every_tier_matches_seq(img);
    for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = static_cast<float>(img.size() - i);
    expect_every_tier_matches_seq(img);
  }
}

TEST(EccBatchSmallCore, SpecialImages) {
  for (const Shape& sh : {Shape::d2(1, 1), Shape::d2(31, 33), Shape::d2(128, 128), Shape::d3(5, 6, 7)}) {
    expect_every_tier_matches_seq(test::float_extremes(sh, 3));
    expect_every_tier_matches_seq(test::signed_zeros(sh, 4));
    for (DType dt : {DType::u8, DType::u16, DType::f32}) {
      expect_every_tier_matches_seq(test::constant_image(dt, sh, 7));
      expect_every_tier_matches_seq(test::checkerboard(dt, sh, 1, 3, 200));
      expect_every_tier_matches_seq(test::checkerboard(dt, sh, 2, 9, 1));
    }
  }
  HostImage top(DType::u16, Shape::d2(20, 20));  // the largest uint16 value next to the sentinel
  for (std::int64_t i = 0; i < top.size(); ++i) top.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(65535 - (i % 3));
  expect_every_tier_matches_seq(top);
}

}  // namespace
}  // namespace repix
