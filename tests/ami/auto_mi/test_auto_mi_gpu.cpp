// Every GPU auto-mi variant against seq, end to end and through its device plan (one test per
// variant id: AutoMiGpuVariant.*/<id>); skips where there is no GPU. Sizes stay small (many
// shapes rather than large images) so the suite runs quickly under compute-sanitizer, except one
// 1025^2 case whose lag-1 overlap needs two shared-histogram chunks (> 2^20 pairs).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "ami/auto_mi/auto_mi.hpp"
#include "ami/auto_mi/nmi_core.hpp"
#include "ami/auto_mi/oracle.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

namespace am = ami::auto_mi;
using namespace test::auto_mi;

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

class AutoMiGpuVariant : public test::VariantTest {
 protected:
  const am::Variant& variant() const { return am::find_variant(GetParam()); }
  // The variants with 16-bit shared counters take the flush level.
  bool has_shared_counters() const {
    for (const char* id : {"gpu-shared-hist", "gpu-shared-warp-agg", "gpu-run-merge", "gpu-epoch-pipelined", "gpu-epoch-runs", "gpu-opt"})
      if (GetParam() == id) return true;
    return false;
  }
  // The variant's plan, set up for `img`, which is uploaded to `d`.
  std::unique_ptr<am::DevicePlan> plan_for(const HostImage& img, DeviceBuffer<unsigned char>& d, cudaStream_t s) const {
    auto plan = variant().make_plan();
    if (!plan) return plan;
    d.allocate(img.bytes());
    copy_to_device_sync(d.get(), img.raw(), img.bytes());
    plan->setup({img.dtype(), img.shape()}, {}, s);
    return plan;
  }
};
REPIX_INSTANTIATE_VARIANTS(AutoMiGpuVariant, test::variant_ids(am::variants(), test::Device::gpu));

TEST_P(AutoMiGpuVariant, MatchesSeqOnEdgeShapes) {
  REPIX_REQUIRE_GPU();
  std::uint32_t seed = 301;
  for (const Case& c : edge_cases()) {
    const HostImage img = random_labels(c.h, c.w, c.levels, seed++);
    const am::Features got = variant().run(img, {});
    expect_equivalent(got, am::run_seq(img, {}), GetParam() + " " + std::to_string(c.h) + "x" + std::to_string(c.w));
    EXPECT_EQ(got.stats.pairs, am::total_pairs(c.h, c.w));
  }
}

TEST_P(AutoMiGpuVariant, MatchesSeqOnLargerAndSmoothImages) {
  REPIX_REQUIRE_GPU();
  for (int levels : {2, 3, 256}) {
    const HostImage img = random_labels(150, 97, levels, 40 + levels);
    expect_equivalent(variant().run(img, {}), am::run_seq(img, {}), GetParam() + " levels " + std::to_string(levels));
  }
  // Smooth: long runs of equal labels (warp aggregation's case).
  HostImage smooth = random_labels(120, 130, 1, 0);
  for (std::int64_t i = 0; i < smooth.size(); ++i)
    smooth.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i % 130) / 20 + 3 * ((i / 130) / 25));
  expect_equivalent(variant().run(smooth, {}), am::run_seq(smooth, {}), GetParam() + " smooth");
}

TEST_P(AutoMiGpuVariant, RowsAMultipleOf8Wide) {
  REPIX_REQUIRE_GPU();
  // gpu-opt's packed path (8 labels per load): every misalignment of a horizontal partner, items
  // at the image's last bytes, smooth and i.i.d. rows.
  std::uint32_t seed = 500;
  for (const Case& c : std::vector<Case>{{1, 8, 3}, {1, 64, 256}, {5, 8, 2}, {8, 8, 256}, {37, 64, 3}, {64, 64, 256},
                                         {3, 200, 256}}) {
    const HostImage img = random_labels(c.h, c.w, c.levels, seed++);
    expect_equivalent(variant().run(img, {}), am::run_seq(img, {}), GetParam() + " " + std::to_string(c.h) + "x" + std::to_string(c.w));
  }
  HostImage smooth = random_labels(48, 96, 1, 0);
  for (std::int64_t i = 0; i < smooth.size(); ++i)
    smooth.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i % 96) / 11 + 7 * ((i / 96) / 13));
  expect_equivalent(variant().run(smooth, {}), am::run_seq(smooth, {}), GetParam() + " smooth 48x96");
}

TEST_P(AutoMiGpuVariant, Uint16WithLabel256AndConstants) {
  REPIX_REQUIRE_GPU();
  const HostImage u16 = random_labels(45, 38, 5, 8, 252, true);
  expect_equivalent(variant().run(u16, {}), am::run_seq(u16, {}), GetParam() + " u16");
  const HostImage all = random_labels(30, 41, 257, 9, 0, true);
  expect_equivalent(variant().run(all, {}), am::run_seq(all, {}), GetParam() + " u16 0..256");
  for (int v : {0, 200, 256}) {
    const am::Features f = variant().run(labels_of(17, 23, std::vector<int>(17 * 23, v)), {});
    EXPECT_EQ(f.horizontal, 0.0) << v;
    EXPECT_EQ(f.vertical, 0.0) << v;
  }
}

TEST_P(AutoMiGpuVariant, RefusesLabelsAbove256) {
  REPIX_REQUIRE_GPU();
  HostImage img = random_labels(8, 8, 5, 1, 0, true);
  img.data<std::uint16_t>()[63] = 300;
  EXPECT_THROW(variant().run(img, {}), Error);
  if (!variant().make_plan) return;  // end to end only
  // The plan checks on the device too (the kernel scope skips the host check).
  CudaStream stream;
  DeviceBuffer<unsigned char> d;
  auto plan = plan_for(img, d, stream.get());
  ASSERT_TRUE(plan);
  plan->compute({d.get()}, stream.get());
  EXPECT_THROW(plan->result(stream.get()), Error);
}

// The pairs bound (PairsBoundSource): measured after a compute, positive, and the plan computes
// correctly again afterwards (the replay reuses its buffers).
TEST_P(AutoMiGpuVariant, PairsBoundIsMeasuredAndLeavesThePlanUsable) {
  REPIX_REQUIRE_GPU();
  if (!variant().make_plan) GTEST_SKIP() << GetParam() << " runs end to end only";
  const HostImage img = random_labels(150, 97, 256, 5);
  CudaStream stream;
  DeviceBuffer<unsigned char> d;
  auto plan = plan_for(img, d, stream.get());
  ASSERT_TRUE(plan);
  auto* source = dynamic_cast<am::PairsBoundSource*>(plan.get());
  const bool epoch = GetParam() == "gpu-opt" || GetParam() == "gpu-epoch-pipelined" || GetParam() == "gpu-epoch-runs";
  ASSERT_EQ(source != nullptr, epoch) << "the epoch plans, and only they, measure the bound";
  if (!source) return;
  plan->compute({d.get()}, stream.get());
  EXPECT_GT(source->measure_pairs_bound(stream.get()), 0.0);
  plan->compute({d.get()}, stream.get());
  expect_equivalent(plan->result(stream.get()), am::run_seq(img, {}), GetParam() + " after the bound");
}

TEST_P(AutoMiGpuVariant, PlanReusedAcrossComputes) {
  REPIX_REQUIRE_GPU();
  if (!variant().make_plan) GTEST_SKIP() << GetParam() << " runs end to end only";
  const HostImage img = random_labels(70, 53, 256, 12);
  const am::Features want = am::run_seq(img, {});
  CudaStream stream;
  DeviceBuffer<unsigned char> d;
  auto plan = plan_for(img, d, stream.get());
  ASSERT_TRUE(plan);
  for (int i = 0; i < 3; ++i) {
    plan->compute({d.get()}, stream.get());
    expect_equivalent(plan->result(stream.get()), want, GetParam() + " plan run " + std::to_string(i));
  }
  EXPECT_EQ(plan->stats().pairs, am::total_pairs(70, 53));
}

TEST_P(AutoMiGpuVariant, ForcedTinyFlushLevelStaysExact) {
  REPIX_REQUIRE_GPU();
  if (!has_shared_counters()) GTEST_SKIP() << GetParam() << " has no 16-bit counters";
  std::uint32_t seed = 77;
  for (int level : {1, 2, 3, 1000}) {
    for (int levels : {2, 256}) {  // few bins: the hot list; many: its overflow and the scan
      const HostImage img = random_labels(90, 110, levels, seed++);
      am::Options opt;
      opt.flush_level = level;
      const am::Features got = variant().run(img, opt);
      expect_equivalent(got, am::run_seq(img, {}), GetParam() + " flush level " + std::to_string(level));
      if (level <= 3) EXPECT_GT(got.stats.hot_flushes, 0) << "level " << level << " must flush";
    }
  }
  am::Options bad;
  bad.flush_level = static_cast<int>(am::kMaxFlushLevel) + 1;
  EXPECT_THROW(variant().run(random_labels(4, 4, 2, 1), bad), Error);
}

TEST_P(AutoMiGpuVariant, LagPartsAddUpToTheWhole) {
  REPIX_REQUIRE_GPU();
  // What multi-device does across GPUs, on one: every part's lags only, the others 0; the parts
  // added give every lag once (checked here for every plan variant, with 1..4 parts).
  if (!variant().make_plan) GTEST_SKIP() << GetParam() << " shares no lags out";
  const HostImage img = random_labels(41, 67, 5, 21);
  const am::Features want = am::run_seq(img, {});
  for (int parts : {1, 2, 3, 4}) {
    am::Features sum = want;
    std::fill(sum.nmi_x.begin(), sum.nmi_x.end(), 0.0);
    std::fill(sum.nmi_y.begin(), sum.nmi_y.end(), 0.0);
    std::int64_t pairs = 0;
    for (int part = 0; part < parts; ++part) {
      am::Options opt;
      opt.part = part;
      opt.parts = parts;
      const am::Features f = variant().run(img, opt);
      for (std::size_t i = 0; i < sum.nmi_x.size(); ++i) sum.nmi_x[i] += f.nmi_x[i];
      for (std::size_t i = 0; i < sum.nmi_y.size(); ++i) sum.nmi_y[i] += f.nmi_y[i];
      pairs += f.stats.pairs;
    }
    am::finish_features(sum, 41, 67);
    expect_equivalent(sum, want, GetParam() + " " + std::to_string(parts) + " parts");
    EXPECT_EQ(pairs, am::total_pairs(41, 67));
  }
}

TEST_P(AutoMiGpuVariant, ChunkBoundary) {
  REPIX_REQUIRE_GPU();
  // 1025 x 1025: lag 1 has 1024 * 1025 = 2^20 + 1024 pairs, two blocks of the shared kernels.
  const HostImage img = random_labels(1025, 1025, 256, 5);
  expect_equivalent(variant().run(img, {}), am::run_omp(img, {}), GetParam() + " 1025^2");
}

}  // namespace
}  // namespace repix
