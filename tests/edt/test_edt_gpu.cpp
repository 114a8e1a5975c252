// The exact GPU variants (gpu-opt, gpu-exact-envelope, gpu-exact-rowfill) against seq-exact: identical distances (same integer, same formula) and nearest sites,
// end to end and through its plan (several shapes on one plan: re-setup), on seeded inputs and
// edge shapes one off the kernels' segment (32 rows) and band (256 columns) sizes; one test per
// exact variant (EdtGpuExact.*/<id>). Skips where there is no GPU.
#include <gtest/gtest.h>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/test_images.hpp"
#include "edt/verify.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

void expect_exact(const HostImage& img, const edt::Result& got, const std::string& what) {
  const edt::Result want = edt::run_seq_exact(img, {});
  const edt::Check c = edt::compare_exact(img, want, got);
  EXPECT_TRUE(c.ok) << what << " on " << test::describe(img) << ": " << c.first_violation;
}

// The exact GPU variants (checked against seq-exact, not by properties).
std::vector<std::string> exact_gpu_variants() {
  return test::variant_ids(edt::variants(), test::Device::gpu, [](const edt::Variant& v) { return v.exact; });
}

class EdtGpuExact : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EdtGpuExact, exact_gpu_variants());

TEST(EdtGpu, ExactVariantsRegistered) {
  EXPECT_EQ(exact_gpu_variants(), (std::vector<std::string>{"gpu-exact-rowfill", "gpu-exact-envelope", "gpu-opt"}));
}

TEST_P(EdtGpuExact, EqualsSeqExactEndToEnd) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  const edt::Variant& v = edt::find_variant(id);
  ASSERT_TRUE(v.exact);
  for (const HostImage& img : test::exact_variant_inputs()) expect_exact(img, v.run(img, {}), id);
}

TEST_P(EdtGpuExact, PlanReusedAcrossShapes) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  auto plan = edt::find_variant(id).make_plan();
  CudaStream stream;
  for (const HostImage& img : test::exact_variant_inputs()) {
    DeviceBuffer<unsigned char> d(img.bytes());
    copy_to_device_sync(d.get(), img.raw(), img.bytes());
    plan->setup({img.dtype(), img.shape()}, {}, stream.get());
    plan->compute({d.get()}, stream.get());
    plan->compute({d.get()}, stream.get());  // twice: nothing may depend on a previous run
    expect_exact(img, plan->result(stream.get()), id + " plan");
  }
}

TEST(EdtGpu, GpuOptWithoutSites) {
  REPIX_REQUIRE_GPU();
  const HostImage img = test::sparse_image(500, 300, 0.001, 5);
  edt::Options o;
  o.want_sites = false;
  const edt::Result r = edt::find_variant("gpu-opt").run(img, o);
  EXPECT_TRUE(r.sites.empty());
  expect_exact(img, r, "gpu-opt without sites");
}

// gpu-opt settles nuclei-like blobs by its windowed search alone, and sends every row of an
// image with one site in a corner to the envelope path; both exact.
TEST(EdtGpu, GpuOptFallbackRows) {
  REPIX_REQUIRE_GPU();
  const HostImage blobs = datasets::generate("blobs:1500x900:radius=24:fill=0.45:seed=9");
  const edt::Result rb = edt::find_variant("gpu-opt").run(blobs, {});
  EXPECT_EQ(rb.stats.fallback_rows, 0);
  expect_exact(blobs, rb, "gpu-opt on blobs");
  HostImage corner = test::const_image(2500, 130, 255);
  corner.data<std::uint8_t>()[0] = 0;
  const edt::Result rc = edt::find_variant("gpu-opt").run(corner, {});
  EXPECT_EQ(rc.stats.fallback_rows, 130);
  expect_exact(corner, rc, "gpu-opt, one corner site");
}

TEST(EdtGpu, GpuOptRejectsBadInputs) {
  REPIX_REQUIRE_GPU();
  HostImage d3(DType::u8, Shape::d3(4, 4, 2));
  EXPECT_THROW(edt::find_variant("gpu-opt").run(d3, {}), Error);
}

TEST(EdtGpu, LargeSparseAndBlobs) {
  REPIX_REQUIRE_GPU();
  for (const char* spec : {"sparse:2048x1536:density=0.001:seed=1", "blobs:2048x2048:radius=24:fill=0.45:seed=1"}) {
    const HostImage img = datasets::generate(spec);
    expect_exact(img, edt::find_variant("gpu-opt").run(img, {}), spec);
  }
}

}  // namespace
}  // namespace repix
