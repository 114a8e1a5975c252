// Every ami pipeline variant against the oracle built from the stage references (ranklet seq ->
// Q -> auto-mi seq) on seeded inputs and edge shapes; the Q vs Q - 1 relabelling the pipeline
// relies on (ami.hpp), proven on images; and the registry's pairs. GPU variants skip without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ami/ami.hpp"
#include "ami/pipeline/ami_test_support.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"
#include "core/gpu.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using test::ranklet::constant;
using test::ranklet::noise;

bool close(double got, double want) { return std::fabs(got - want) <= std::max(1e-9 * std::fabs(want), 1e-12); }

struct Case {
  std::string name;
  HostImage img;
  std::vector<int> windows;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  v.push_back({"noise 37x23", noise(37, 23, 256, 1), {4, 8, 16, 32}});
  v.push_back({"ties 3 levels 40x29", noise(40, 29, 3, 2), {4, 8, 16, 32}});
  v.push_back({"two levels 19x26, windows in any order", noise(19, 26, 2, 3), {16, 2, 32, 8}});
  v.push_back({"1x37", noise(1, 37, 256, 4), {4, 8}});
  v.push_back({"37x1", noise(37, 1, 256, 5), {8, 4}});
  v.push_back({"1x1", noise(1, 1, 256, 6), {4}});
  v.push_back({"5x3, smaller than the windows", noise(5, 3, 256, 7), {32, 16, 4}});
  v.push_back({"constant 7 (the 255 padding makes borders differ)", constant(23, 17, 7), {4, 8}});
  return v;
}

class AmiVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(AmiVariant, test::variant_ids(ami::variants(), test::Device::any));

TEST_P(AmiVariant, MatchesTheStageReferences) {
  const ami::Variant& v = ami::find_variant(GetParam());
  if (v.gpu && !gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  for (const Case& c : cases()) {
    ami::Options opt;
    opt.windows = c.windows;
    opt.threads = 3;  // more threads than some images have rows
    const ami::Result got = v.run(c.img, opt);
    const std::vector<double> want = test::ami_pipeline::oracle(c.img, c.windows);
    ASSERT_EQ(got.windows, c.windows) << c.name;
    ASSERT_EQ(got.features.size(), want.size()) << c.name;
    for (std::size_t i = 0; i < want.size(); ++i) {
      // CPU pairs: their stages equal the stage references bit for bit (ranklet omp/omp-hist and
      // auto-mi omp sum in seq's order), so omp-hist can stand in as the bench's reference.
      if (!v.gpu)
        EXPECT_EQ(got.features[i], want[i]) << c.name << " feature " << i;
      else
        EXPECT_TRUE(close(got.features[i], want[i])) << c.name << " feature " << i << ": " << got.features[i] << " vs " << want[i];
    }
    EXPECT_EQ(got.stats.pairs, ami::auto_mi::total_pairs(c.img.shape().ny, c.img.shape().nx) * 3 *
                                   static_cast<std::int64_t>(c.windows.size()))
        << c.name;
  }
}

// The kernel scope: one plan (setup once), the image already on the device, compute twice; both
// results equal the oracle (the label buffer and the auto-mi plan are reused between planes).
TEST_P(AmiVariant, PlanComputesTwiceOnDeviceInput) {
  const ami::Variant& v = ami::find_variant(GetParam());
  if (!v.make_plan) GTEST_SKIP() << v.id << " has no device plan (CPU, or a stage without one)";
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  for (const Case& c : cases()) {
    ami::Options opt;
    opt.windows = c.windows;
    std::unique_ptr<ami::DevicePlan> plan = v.make_plan();
    CudaStream stream;
    DeviceBuffer<std::uint8_t> d_in(static_cast<std::size_t>(c.img.bytes()));
    plan->setup({c.img.dtype(), c.img.shape()}, opt, stream.get());
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), c.img.raw(), c.img.bytes(), cudaMemcpyHostToDevice, stream.get()));
    const std::vector<double> want = test::ami_pipeline::oracle(c.img, c.windows);
    for (int round = 0; round < 2; ++round) {
      plan->compute({d_in.get()}, stream.get());
      const ami::Result got = plan->result(stream.get());
      ASSERT_EQ(got.features.size(), want.size()) << c.name;
      for (std::size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(close(got.features[i], want[i])) << c.name << " round " << round << " feature " << i;
      EXPECT_EQ(plan->stats().pairs, ami::auto_mi::total_pairs(c.img.shape().ny, c.img.shape().nx) * 3 *
                                         static_cast<std::int64_t>(c.windows.size()))
          << c.name;
    }
  }
}

// An image of 255 alone reads the same as its padding: R = 0.5 everywhere, one level per plane,
// so every NMI and every feature is 0.
TEST_P(AmiVariant, ConstantPaddingValueGivesZeros) {
  const ami::Variant& v = ami::find_variant(GetParam());
  if (v.gpu && !gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  const ami::Result got = v.run(constant(29, 21, 255), {});
  ASSERT_EQ(got.features.size(), 24u);
  for (double f : got.features) EXPECT_EQ(f, 0.0);
}

TEST_P(AmiVariant, BadInputIsRefused) {
  const ami::Variant& v = ami::find_variant(GetParam());
  if (v.gpu && !gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  EXPECT_THROW(v.run(HostImage(DType::u16, Shape::d2(5, 4)), {}), Error);
  EXPECT_THROW(v.run(HostImage(DType::u8, Shape::d3(5, 4, 2)), {}), Error);
  ami::Options bad;
  bad.windows = {6};
  EXPECT_THROW(v.run(noise(5, 4, 3, 1), bad), Error);
}

// A constant image below 255 is not featureless: the padding enters T or C unevenly near the
// borders, so the labels vary there (ranklet.hpp); the oracle test above checks the values.
TEST(AmiPipeline, ConstantImageBelowPaddingHasBorderTexture) {
  const ami::Result got = ami::find_variant("seq").run(constant(23, 17, 7), {});
  EXPECT_GT(*std::max_element(got.features.begin(), got.features.end()), 0.0);
}

// The relabelling the pipeline stores (Q - 1 in uint8) gives auto-mi seq the same features, bit
// for bit, as Q itself in uint16 (1..256), on noise, ties, a smooth-ish image and the R = 1 clamp.
TEST(AmiPipeline, QMinusOneInUint8EqualsQInUint16) {
  const HostImage imgs[] = {noise(53, 41, 256, 11), noise(48, 36, 3, 12), noise(33, 65, 2, 13), constant(20, 18, 0)};
  int planes_checked = 0;
  for (const HostImage& img : imgs) {
    ami::ranklet::Options ro;
    ro.windows = {2, 4, 8, 32};
    const ami::ranklet::Result planes = ami::ranklet::find_variant("seq").run(img, ro);
    for (std::size_t w = 0; w < ro.windows.size(); ++w)
      for (int o = 0; o < ami::kOrientations; ++o) {
        const HostImage q = test::ami_pipeline::q_labels(planes, w, o);
        HostImage q1(DType::u8, q.shape());
        ami::quantise_plane(ami::ranklet::plane(planes, w, o), q.size(), ro.windows[w], q1.data<std::uint8_t>(), 2);
        for (std::int64_t i = 0; i < q.size(); ++i)
          ASSERT_EQ(q1.data<std::uint8_t>()[i] + 1, q.data<std::uint16_t>()[i]);
        const auto& seq = ami::auto_mi::find_variant("seq");
        const ami::auto_mi::Features a = seq.run(q, {}), b = seq.run(q1, {});
        EXPECT_EQ(a.horizontal, b.horizontal);
        EXPECT_EQ(a.vertical, b.vertical);
        EXPECT_EQ(a.nmi_x, b.nmi_x);
        EXPECT_EQ(a.nmi_y, b.nmi_y);
        ++planes_checked;
      }
  }
  EXPECT_EQ(planes_checked, 4 * 4 * 3);
}

// Q reaches both ends: level 1 (R = 0: every T pixel below every C pixel) and the R = 1 clamp into
// 256, stored as 0 and 255.
TEST(AmiPipeline, QuantiseStoresLevelsMinusOne) {
  const float values[] = {0.0f, 0.5f, 1.0f};
  std::uint8_t out[3];
  ami::quantise_plane(values, 3, 4, out, 1);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 128);
  EXPECT_EQ(out[2], 255);
}

TEST(AmiPipeline, RegistryNamesThePairs) {
  const std::pair<const char*, std::pair<const char*, const char*>> pairs[] = {
      {"seq", {"seq", "seq"}},          {"omp", {"omp", "omp"}},
      {"omp-hist", {"omp-hist", "omp"}}, {"gpu-naive", {"gpu-naive", "gpu-naive"}},
      {"gpu-opt", {"gpu-opt", "gpu-opt"}}, {"multi-device", {"gpu-opt", "multi-device"}}};
  for (const auto& [id, pair] : pairs) {
    const ami::Variant& v = ami::find_variant(id);
    EXPECT_EQ(v.ranklet_id, pair.first) << id;
    EXPECT_EQ(v.auto_mi_id, pair.second) << id;
  }
  EXPECT_FALSE(ami::find_variant("omp-hist").gpu);
  // Both stages have device plans: the bench's kernel scope times the whole descriptor.
  EXPECT_TRUE(static_cast<bool>(ami::find_variant("gpu-naive").make_plan));
  EXPECT_TRUE(static_cast<bool>(ami::find_variant("gpu-opt").make_plan));
  EXPECT_TRUE(ami::find_variant("gpu-opt").gpu);
}

}  // namespace
}  // namespace repix
