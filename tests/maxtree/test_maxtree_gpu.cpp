// The GPU max-tree variants on the device (they skip without a GPU; they run on an H100 or H200, also under compute-sanitizer memcheck and racecheck): the edge shapes where parallel code
// breaks (1x1, 1xN, Nx1, 2x2, sizes just off and exactly on gpu-tile's 64x16 tiles), plateaus,
// checkerboards and constants, 8 and 16 bits, both connectivities, against seq exactly; the plan
// reused across computes (kernel scope) and the wide index path; and the error of bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "core/download.hpp"
#include "core/gpu.hpp"
#include "core/pinned_pool.hpp"
#include "maxtree/maxtree.hpp"
#include "maxtree/test_images.hpp"
#include "support/variants.hpp"

namespace repix::maxtree {
namespace {

class MaxtreeGpuVariant : public test::VariantTest {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  }
};
REPIX_INSTANTIATE_VARIANTS(MaxtreeGpuVariant, test::variant_ids(variants(), test::Device::gpu));

std::vector<test::Input> edge_inputs(std::uint64_t seed) {
  std::vector<test::Input> v;
  const std::int64_t sizes[][2] = {{1, 1},   {1, 2},   {2, 1},   {2, 2},   {1, 100}, {100, 1}, {1, 1000}, {1000, 1},
                                   {63, 15}, {64, 16}, {65, 17}, {127, 33}, {128, 32}, {129, 31}, {200, 3}, {3, 200}};
  for (const auto& s : sizes) {
    const std::int64_t nx = s[0], ny = s[1];
    const std::string n = test::size_name(nx, ny);
    v.push_back({"u8-2levels-" + n, test::random_image(DType::u8, nx, ny, 2, seed)});
    v.push_back({"u8-256levels-" + n, test::random_image(DType::u8, nx, ny, 256, seed + 1)});
    v.push_back({"u16-full-" + n, test::random_image(DType::u16, nx, ny, 65536, seed + 2)});
    v.push_back({"u16-3levels-" + n, test::random_image(DType::u16, nx, ny, 3, seed + 3, 30000)});
    v.push_back({"checker-1-u8-" + n, test::checker_image(DType::u8, nx, ny, 1, 0, 255)});
    v.push_back({"checker-7-u16-" + n, test::checker_image(DType::u16, nx, ny, 7, 500, 501)});
    v.push_back({"const-u8-" + n, test::const_image(DType::u8, nx, ny, 9)});
    v.push_back({"const-u16-" + n, test::const_image(DType::u16, nx, ny, 65535)});
  }
  // Larger plateaus across many tiles: one 8-bit image of two levels and one constant one.
  v.push_back({"u8-2levels-1000x700", test::random_image(DType::u8, 1000, 700, 2, seed + 4)});
  v.push_back({"const-u8-513x511", test::const_image(DType::u8, 513, 511, 0)});
  v.push_back({"u16-full-1031x517", test::random_image(DType::u16, 1031, 517, 65536, seed + 5)});
  return v;
}

TEST_P(MaxtreeGpuVariant, EdgeShapesPlateausCheckerboardsConstantsMatchSeq) {
  const Variant& v = find_variant(GetParam());
  for (const test::Input& in : edge_inputs(61)) {
    for (const int c : {4, 8}) {
      Options o;
      o.connectivity = c;
      const Result want = find_variant("seq").run(in.image, o);
      const Result got = v.run(in.image, o);
      ASSERT_TRUE(got.parent == want.parent) << v.id << " on " << in.name << ", connectivity " << c;
    }
  }
}

// The kernel scope's use of a plan: set up once, computed several times on device-resident input,
// each result the normal form; then set up again for another shape and dtype.
// Small enough for compute-sanitizer racecheck (which instruments every shared-memory access of
// the tile build's zips and did not finish the larger tests in minutes): two tiles across and two
// down with ragged edges, a few levels (long plateaus across tile borders) and 16-bit noise (deep
// branches), both connectivities, against seq.
TEST_P(MaxtreeGpuVariant, RacecheckSizedTilesMatchSeq) {
  const Variant& v = find_variant(GetParam());
  const test::Input inputs[] = {{"u8-3levels-100x20", test::random_image(DType::u8, 100, 20, 3, 31)},
                                {"u16-full-70x30", test::random_image(DType::u16, 70, 30, 65536, 32)}};
  for (const test::Input& in : inputs)
    for (const int c : {4, 8}) {
      Options o;
      o.connectivity = c;
      ASSERT_TRUE(v.run(in.image, o).parent == find_variant("seq").run(in.image, o).parent)
          << v.id << " on " << in.name << ", connectivity " << c;
    }
}

// The end-to-end run keeps its workspace for the next call with the same input type, shape and
// options (core/reuse_cache.hpp): back-to-back calls on different contents of one shape, then a
// change of shape, dtype or connectivity in between, each equal to seq.
TEST_P(MaxtreeGpuVariant, EndToEndWorkspaceReusedAcrossCallsMatchesSeq) {
  const Variant& v = find_variant(GetParam());
  struct Call {
    test::Input in;
    int connectivity;
  };
  std::vector<Call> calls;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    calls.push_back({{"u8-256levels-300x200", test::random_image(DType::u8, 300, 200, 256, 70 + seed)}, 4});
    calls.push_back({{"u8-2levels-300x200", test::random_image(DType::u8, 300, 200, 2, 80 + seed)}, 4});
  }
  calls.push_back({{"u8-2levels-300x200", test::random_image(DType::u8, 300, 200, 2, 90)}, 8});
  calls.push_back({{"u8-256levels-200x300", test::random_image(DType::u8, 200, 300, 256, 91)}, 8});
  calls.push_back({{"u16-full-200x300", test::random_image(DType::u16, 200, 300, 65536, 92)}, 8});
  calls.push_back({{"u16-full-200x300", test::random_image(DType::u16, 200, 300, 65536, 93)}, 8});
  calls.push_back({{"const-u8-300x200", test::const_image(DType::u8, 300, 200, 3)}, 4});
  for (const Call& call : calls) {
    Options o;
    o.connectivity = call.connectivity;
    ASSERT_TRUE(v.run(call.in.image, o).parent == find_variant("seq").run(call.in.image, o).parent)
        << v.id << " on " << call.in.name << ", connectivity " << call.connectivity;
  }
}

// The end-to-end run's download. From 4 MiB of output up its parent image is a pinned block of the
// pool (core/pinned_pool.hpp), which gpu-opt fills in bands of at least 4 MiB as its flatten
// finishes each (gpu_engine.cuh's settle_in_bands; the others in one copy after the flatten):
// 8 and 16 bits at 1100x1000 (one band), int64 indices (8.8 MB: two bands), 2048x1537 (12.6 MB:
// three, of sizes that do not divide evenly), the same from a pinned input, each twice (a new
// workspace and a freshly pinned block, then the reused workspace and the block back from the
// pool), equal to seq. Its GPU work is the smaller tests'; compute-sanitizer leaves it out
// (device-check's filter: *Megapixel*), racecheck would take hours.
TEST_P(MaxtreeGpuVariant, EndToEndFromAMegapixelMatchesSeq) {
  const Variant& v = find_variant(GetParam());
  struct Case {
    DType dtype;
    std::int64_t nx, ny;
    bool wide, pinned_input;
  };
  for (const Case& c : {Case{DType::u8, 1100, 1000, false, false}, Case{DType::u16, 1100, 1000, false, false},
                        Case{DType::u8, 1100, 1000, true, false}, Case{DType::u8, 2048, 1537, false, false},
                        Case{DType::u8, 2048, 1537, false, true}}) {
    const HostImage drawn = test::random_image(c.dtype, c.nx, c.ny, c.dtype == DType::u8 ? 40 : 65536, 95);
    HostImage img(c.dtype, drawn.shape(), c.pinned_input);
    std::memcpy(img.raw(), drawn.raw(), drawn.bytes());
    ASSERT_EQ(img.pinned(), c.pinned_input);
    Options o;
    o.wide_index = c.wide;
    const Result want = find_variant("seq").run(img, o);
    const std::string what = v.id + ", " + dtype_name(c.dtype) + " " + std::to_string(c.nx) + "x" + std::to_string(c.ny) +
                             (c.wide ? ", int64" : "") + (c.pinned_input ? ", pinned input" : "");
    for (int call = 0; call < 2; ++call) {
      const PinnedPoolCounters before = pinned_pool_counters();
      const Result got = v.run(img, o);
      ASSERT_TRUE(got.parent == want.parent) << what << ", call " << call;
      const void* data = c.wide ? static_cast<const void*>(got.parent.wide_.data()) : got.parent.narrow.data();
      EXPECT_TRUE(is_pinned(data)) << what << ", call " << call;
      if (call == 1) EXPECT_EQ(pinned_pool_counters().reused, before.reused + 1) << what << ": the first call's block";
      if (call == 1) EXPECT_EQ(pinned_pool_counters().pinned, before.pinned) << what << ": nothing pinned again";
    }
  }
}

TEST_P(MaxtreeGpuVariant, PlanReusedAcrossComputesAndShapes) {
  const Variant& v = find_variant(GetParam());
  ASSERT_TRUE(v.make_plan);
  std::unique_ptr<DevicePlan> plan = v.make_plan();
  CudaStream stream;
  for (const DType dt : {DType::u8, DType::u16}) {
    const HostImage img = test::random_image(dt, 131, 45, dt == DType::u8 ? 5 : 65536, 71);
    Options o;
    o.connectivity = 8;
    const Result want = find_variant("seq").run(img, o);
    DeviceBuffer<unsigned char> d(img.bytes());
    copy_to_device_sync(d.get(), img.raw(), img.bytes());
    plan->setup({img.dtype(), img.shape()}, o, stream.get());
    for (int rep = 0; rep < 3; ++rep) {
      plan->compute({d.get()}, stream.get());
      const Result got = plan->result(stream.get());
      ASSERT_TRUE(got.parent == want.parent) << v.id << ", " << dtype_name(dt) << ", repetition " << rep;
      EXPECT_GE(got.stats.canonical_ms, 0.0);
    }
  }
}

bool same_pixels(const HostImage& a, const HostImage& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

// The area opening with tree and filter on the GPU (gpu_engine.cuh's area_filter): end to end on
// the edge shapes, plateaus, checkerboards and constants, thresholds from 1 to above the image's
// area (the root kept), against the CPU filter on seq's tree; then its plan (the kernel scope)
// reused across computes, thresholds and dtypes, with the filter's time in the stats.
TEST_P(MaxtreeGpuVariant, AreaOpeningOnTheGpuMatchesTheCpuFilter) {
  const AreaVariant& v = find_area_variant(GetParam());
  ASSERT_TRUE(v.gpu && v.make_plan) << v.id << " has no GPU area opening";
  for (const test::Input& in : edge_inputs(63)) {
    const std::int64_t n = in.image.size();
    for (const int c : {4, 8})
      for (const std::int64_t a : {std::int64_t(1), std::int64_t(3), std::int64_t(100), n + 1}) {
        Options o;
        o.connectivity = c;
        o.area = a;
        const HostImage want = area_opening(in.image, find_variant("seq").run(in.image, o).parent, a, 1);
        const HostImage got = v.run(in.image, o).image;
        ASSERT_TRUE(same_pixels(got, want)) << v.id << " on " << in.name << ", connectivity " << c << ", A = " << a;
      }
  }
  std::unique_ptr<AreaDevicePlan> plan = v.make_plan();
  CudaStream stream;
  for (const DType dt : {DType::u8, DType::u16})
    for (const std::int64_t a : {std::int64_t(2), std::int64_t(50)}) {
      const HostImage img = test::random_image(dt, 131, 45, dt == DType::u8 ? 5 : 65536, 72);
      Options o;
      o.connectivity = 8;
      o.area = a;
      const HostImage want = area_opening(img, find_variant("seq").run(img, o).parent, a, 1);
      DeviceBuffer<unsigned char> d(img.bytes());
      copy_to_device_sync(d.get(), img.raw(), img.bytes());
      plan->setup({img.dtype(), img.shape()}, o, stream.get());
      for (int rep = 0; rep < 2; ++rep) {
        plan->compute({d.get()}, stream.get());
        const AreaResult got = plan->result(stream.get());
        ASSERT_TRUE(same_pixels(got.image, want)) << v.id << ", " << dtype_name(dt) << ", A = " << a;
        EXPECT_GT(got.stats.filter_ms, 0.0);
      }
    }
}

// The area opening's end-to-end output from 4 MiB up is a pinned block of the pool
// (AreaPlan::result), downloaded in one DMA: 16 bits at 2100x1000 (4.2 MB), twice (the block back
// from the pool the second time), equal to the CPU filter on seq's tree. compute-sanitizer leaves it
// out (*Megapixel*): its GPU work is the smaller tests'.
TEST_P(MaxtreeGpuVariant, AreaOpeningEndToEndFromAMegapixelIsPinnedAndMatches) {
  const AreaVariant& v = find_area_variant(GetParam());
  const HostImage img = test::random_image(DType::u16, 2100, 1000, 300, 96);
  Options o;
  o.area = 100;
  const HostImage want = area_opening(img, find_variant("seq").run(img, o).parent, o.area, 1);
  for (int call = 0; call < 2; ++call) {
    const PinnedPoolCounters before = pinned_pool_counters();
    const HostImage got = v.run(img, o).image;
    ASSERT_TRUE(same_pixels(got, want)) << v.id << ", call " << call;
    EXPECT_TRUE(got.pinned()) << v.id << ", call " << call;
    if (call == 1) EXPECT_EQ(pinned_pool_counters().pinned, before.pinned) << v.id << ": nothing pinned again";
  }
}

// The same filter on inputs small enough for compute-sanitizer (the test above makes about a
// thousand GPU calls and did not finish in 215 s under memcheck or racecheck on the H100; racecheck
// took 39-65 s for RacecheckSizedTilesMatchSeq's four trees): the racecheck-sized images (two tiles
// across and down, ragged edges, plateaus across tile borders, 16-bit noise), one connectivity each,
// thresholds from 1 to above the area, and the plan once: seven trees and filters.
TEST_P(MaxtreeGpuVariant, RacecheckSizedAreaOpeningMatchesTheCpuFilter) {
  const AreaVariant& v = find_area_variant(GetParam());
  ASSERT_TRUE(v.gpu && v.make_plan) << v.id << " has no GPU area opening";
  const struct {
    test::Input in;
    int connectivity;
  } cases[] = {{{"u8-3levels-100x20", test::random_image(DType::u8, 100, 20, 3, 33)}, 4},
               {{"u16-full-70x30", test::random_image(DType::u16, 70, 30, 65536, 34)}, 8}};
  for (const auto& [in, c] : cases)
    for (const std::int64_t a : {std::int64_t(1), std::int64_t(40), in.image.size() + 1}) {
      Options o;
      o.connectivity = c;
      o.area = a;
      const HostImage want = area_opening(in.image, find_variant("seq").run(in.image, o).parent, a, 1);
      ASSERT_TRUE(same_pixels(v.run(in.image, o).image, want))
          << v.id << " on " << in.name << ", connectivity " << c << ", A = " << a;
    }
  const HostImage& img = cases[1].in.image;
  Options o;
  o.area = 5;
  std::unique_ptr<AreaDevicePlan> plan = v.make_plan();
  CudaStream stream;
  DeviceBuffer<unsigned char> d(img.bytes());
  copy_to_device_sync(d.get(), img.raw(), img.bytes());
  plan->setup({img.dtype(), img.shape()}, o, stream.get());
  plan->compute({d.get()}, stream.get());
  const HostImage want = area_opening(img, find_variant("seq").run(img, o).parent, o.area, 1);
  EXPECT_TRUE(same_pixels(plan->result(stream.get()).image, want)) << v.id << ", plan";
}

TEST_P(MaxtreeGpuVariant, WideIndexOnAPlateauImage) {
  const Variant& v = find_variant(GetParam());
  const HostImage img = test::random_image(DType::u16, 300, 77, 3, 81, 1000);
  Options o;
  o.connectivity = 4;
  const Result want = find_variant("seq").run(img, o);
  o.wide_index = true;
  const Result got = v.run(img, o);
  ASSERT_TRUE(got.parent.wide);
  EXPECT_TRUE(got.parent == want.parent);
}

// A plan asked for an impossible size fails cleanly with CudaOutOfMemory (three int64 arrays of
// 4e10 pixels: ~1 TB), and the GPU stays usable. (The failing cudaMalloc is deliberate: under
// compute-sanitizer it is an API error unless --report-api-errors no is given.)
TEST_P(MaxtreeGpuVariant, ImpossibleSetupThrowsOutOfMemory) {
  const Variant& v = find_variant(GetParam());
  {
    CudaStream stream;
    std::unique_ptr<DevicePlan> plan = v.make_plan();
    EXPECT_THROW(plan->setup({DType::u8, Shape::d2(200000, 200000)}, Options{}, stream.get()), CudaOutOfMemory) << v.id;
  }
  const HostImage img = test::random_image(DType::u8, 70, 20, 3, 91);
  EXPECT_TRUE(v.run(img, Options{}).parent == find_variant("seq").run(img, Options{}).parent) << v.id;
}

TEST_P(MaxtreeGpuVariant, BadInputIsOneClearError) {
  const Variant& v = find_variant(GetParam());
  Options o;
  o.connectivity = 6;
  EXPECT_THROW(v.run(test::const_image(DType::u8, 4, 4, 1), o), Error);
  o.connectivity = 4;
  EXPECT_THROW(v.run(HostImage(DType::f32, Shape::d2(4, 4)), o), Error);
}

}  // namespace
}  // namespace repix::maxtree

namespace repix::maxtree {
namespace {
// Without a GPU, a GPU variant's run says so in one error (what `repix run` prints), nothing else.
TEST(MaxtreeGpuWithoutDevice, RunIsOneClearError) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is present";
  for (const std::string id : test::variant_ids(variants(), test::Device::gpu)) {
    try {
      find_variant(id).run(test::const_image(DType::u8, 4, 4, 1), Options{});
      ADD_FAILURE() << id << " ran without a GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << id << ": " << e.what();
    }
    // Its area opening (tree and filter on the GPU) too.
    try {
      find_area_variant(id).run(test::const_image(DType::u8, 4, 4, 1), Options{});
      ADD_FAILURE() << id << "'s area opening ran without a GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << id << ": " << e.what();
    }
  }
}
}  // namespace
}  // namespace repix::maxtree
