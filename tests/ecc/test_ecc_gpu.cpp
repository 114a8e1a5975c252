// Every registered GPU variant (the ladder and whatever else is registered: gpu-opt, ...)
// against the reference, exactly, end to end and through its plan; one test per variant
// (EccGpuVariant.*/<id>, EccGpuPlan.*/<id>, EccGpuLarge.*/<id>). Skips where there is no GPU.
//
// Sizes are kept small (many small images rather than few large ones) so the suite stays well
// under a minute under compute-sanitizer racecheck; large cases (> 1M voxels, one > 2^31
// voxels) only run when REPIX_LARGE_TESTS is set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/test_images.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

std::vector<std::string> gpu_variants() {
  return test::variant_ids(ecc::variants(), test::Device::gpu, [](const ecc::Variant& v) { return bool(v.run); });
}

// The GPU variants with a device plan.
std::vector<std::string> plan_variants() {
  return test::variant_ids(ecc::variants(), test::Device::gpu,
                           [](const ecc::Variant& v) { return v.run && v.make_plan; });
}

class EccGpuVariant : public test::VariantTest {
 protected:
  // gpu-opt-cluster's uint16 kernels run on GPUs with thread block clusters only (setup refuses
  // the others in one line).
  void SetUp() override {
    if (GetParam() == "gpu-opt-cluster" && gpu_available() && !ecc::opt::clusters_available())
      GTEST_SKIP() << "gpu-opt-cluster needs thread block clusters (compute capability 9.0 or newer)";
  }
  const ecc::Variant& variant() const { return ecc::find_variant(GetParam()); }
};
REPIX_INSTANTIATE_VARIANTS(EccGpuVariant, gpu_variants());

class EccGpuPlan : public EccGpuVariant {};
REPIX_INSTANTIATE_VARIANTS(EccGpuPlan, plan_variants());

class EccGpuLarge : public EccGpuVariant {};
REPIX_INSTANTIATE_VARIANTS(EccGpuLarge, gpu_variants());

bool is_ladder(const ecc::Variant& v) {
  return v.id == "gpu-naive" || v.id == "gpu-register" || v.id == "gpu-shared-hist" ||
         v.id == "gpu-cached";
}

// HostImage is move-only, so no initializer lists.
std::vector<HostImage> images_of(HostImage a) {
  std::vector<HostImage> v;
  v.push_back(std::move(a));
  return v;
}

bool large_tests() {
  const char* e = std::getenv("REPIX_LARGE_TESTS");
  return e && *e && std::string(e) != "0";
}

// Runs the variant end to end on each image and compares with run_seq (or run_omp), naming the
// image of each mismatch.
void expect_match(const ecc::Variant& v, const std::vector<HostImage>& imgs, bool use_omp_reference = false) {
  for (const HostImage& img : imgs) {
    const ecc::Curve want = use_omp_reference ? ecc::run_omp(img, {}) : ecc::run_seq(img, {});
    ecc::Curve got;
    try {
      got = v.run(img, {});
    } catch (const std::exception& e) {
      ADD_FAILURE() << v.id << " threw on " << test::describe(img) << ": " << e.what();
      continue;
    }
    EXPECT_TRUE(test::same_curve(got, want)) << v.id << " on " << test::describe(img);
  }
}

// Shapes one off the ladder kernels' tiles (32 x 8 in 2D, 32 x 4 x 2 in 3D), thin shapes and
// 1D images.
std::vector<Shape> edge_shapes() {
  return {Shape::d2(1, 1),     Shape::d2(1, 57),    Shape::d2(57, 1),    Shape::d2(31, 7),
          Shape::d2(32, 8),    Shape::d2(33, 9),    Shape::d2(127, 3),   Shape::d2(128, 17),
          Shape::d2(129, 9),   Shape::d2(255, 5),   Shape::d2(256, 8),   Shape::d2(257, 7),
          Shape::d2(2, 300),   Shape::d1(1),        Shape::d1(33),       Shape::d1(300),
          Shape::d3(1, 1, 1),  Shape::d3(1, 1, 37), Shape::d3(37, 1, 1), Shape::d3(1, 37, 1),
          Shape::d3(31, 3, 1), Shape::d3(32, 4, 2), Shape::d3(33, 5, 3), Shape::d3(127, 4, 3),
          Shape::d3(129, 3, 5), Shape::d3(255, 5, 2), Shape::d3(257, 3, 3), Shape::d3(33, 9, 1),
          Shape::d3(5, 7, 33)};
}

TEST_P(EccGpuVariant, EdgeShapesAllDtypesWithTies) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  const int levels[] = {2, 5, 256};
  std::uint32_t seed = 1;
  int k = 0;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : edge_shapes()) imgs.push_back(test::random_image(dt, sh, levels[k++ % 3], seed++));
  expect_match(variant(), imgs);
}

TEST_P(EccGpuVariant, AllLevelsOnTileSizedImages) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  std::uint32_t seed = 1000;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(65, 17), Shape::d3(33, 5, 3)})
      for (int levels : {1, 2, 5, 256}) imgs.push_back(test::random_image(dt, sh, levels, seed++));
  expect_match(variant(), imgs);
}

// More distinct values than the block size, the 1024 threads of a block, and the shared-memory
// windows (2048 bins for uint16, 4096 ranks for float): the global-atomic fallback is exercised.
TEST_P(EccGpuVariant, ManyDistinctValues) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  imgs.push_back(test::random_image(DType::f32, Shape::d2(100, 100), 2000, 1));
  imgs.push_back(test::random_image(DType::f32, Shape::d3(97, 45, 61), 5000, 2));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(300, 300), 70000, 3));
  imgs.push_back(test::random_image(DType::f32, Shape::d3(40, 40, 40), 70000, 4));
  imgs.push_back(test::random_image(DType::u16, Shape::d2(300, 250), 65536, 5));
  imgs.push_back(test::random_image(DType::u16, Shape::d3(41, 37, 29), 2048, 6, 0));     // all in window
  imgs.push_back(test::random_image(DType::u16, Shape::d3(41, 37, 29), 3000, 7, 60000)); // none / wraps
  imgs.push_back(test::random_image(DType::u16, Shape::d2(257, 33), 4096, 8, 0));        // half in
  imgs.push_back(test::random_image(DType::u8, Shape::d2(300, 257), 256, 9));
  expect_match(variant(), imgs);
}

TEST_P(EccGpuVariant, MediumSizes) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  imgs.push_back(test::random_image(DType::u8, Shape::d2(1000, 999), 256, 21));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(1000, 999), 5000, 22));
  imgs.push_back(test::random_image(DType::u16, Shape::d3(97, 45, 61), 5, 23));
  imgs.push_back(test::random_image(DType::u8, Shape::d3(97, 45, 61), 2, 24));
  expect_match(variant(), imgs);
}

TEST_P(EccGpuVariant, ConstantImages) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  for (Shape sh : {Shape::d2(1, 1), Shape::d2(45, 33), Shape::d1(70), Shape::d3(33, 5, 3),
                   Shape::d3(1, 1, 20)}) {
    imgs.push_back(test::constant_image(DType::u8, sh, sh.nx == 1 ? 0 : 255));
    imgs.push_back(test::constant_image(DType::u16, sh, sh.ndim == 3 ? 65535 : 4000));  // 4000: beyond the window
    imgs.push_back(test::constant_image(DType::f32, sh, -0.0));
    imgs.push_back(test::constant_image(DType::f32, sh, -2.5e10));
  }
  expect_match(variant(), imgs);
}

TEST_P(EccGpuVariant, Checkerboards) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  for (Shape sh : {Shape::d2(33, 17), Shape::d3(9, 10, 11), Shape::d3(33, 5, 4)})
    for (int period : {1, 2, 3}) {
      imgs.push_back(test::checkerboard(DType::u8, sh, period, period == 2 ? 200 : 0, period == 2 ? 7 : 1));
      imgs.push_back(test::checkerboard(DType::u16, sh, period, 1, 50000));
      imgs.push_back(test::checkerboard(DType::f32, sh, period, -1.5, 1e-40));
    }
  expect_match(variant(), imgs);
}

TEST_P(EccGpuVariant, FloatExtremes) {
  REPIX_REQUIRE_GPU();
  std::vector<HostImage> imgs;
  std::uint32_t seed = 77;
  for (Shape sh : {Shape::d2(1, 1), Shape::d2(37, 29), Shape::d2(129, 9), Shape::d1(41),
                   Shape::d3(9, 7, 5), Shape::d3(33, 4, 3)}) {
    imgs.push_back(test::float_extremes(sh, seed++));
    imgs.push_back(test::signed_zeros(sh, seed++));
  }
  expect_match(variant(), imgs);
}

// One plan, set up once, computing several inputs of the same shape and dtype: accumulators
// (and float workspace) must be reset by compute(). The float inputs alternate between many and
// few distinct values so stale bins of a previous input would show.
TEST_P(EccGpuPlan, PlanReuse) {
  REPIX_REQUIRE_GPU();
  const ecc::Variant& v = variant();
  for (Shape sh : {Shape::d2(45, 37), Shape::d3(13, 11, 9)})
    for (DType dt : {DType::u8, DType::u16, DType::f32}) {
      std::vector<HostImage> inputs;
      inputs.push_back(test::random_image(dt, sh, 256, 1));
      inputs.push_back(test::random_image(dt, sh, 3, 2));
      inputs.push_back(test::random_image(dt, sh, 5000, 3));
      CudaStream stream;
      std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
      DeviceBuffer<unsigned char> d_in(inputs[0].bytes());
      try {
        plan->setup({dt, sh}, {}, stream.get());
        for (const HostImage& img : inputs) {
          REPIX_CUDA(cudaMemcpyAsync(d_in.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice,
                                     stream.get()));
          plan->compute({d_in.get()}, stream.get());
          const ecc::Curve got = plan->result(stream.get());
          EXPECT_TRUE(test::same_curve(got, ecc::run_seq(img, {})))
              << v.id << " plan reused on " << test::describe(img);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << v.id << " plan threw on " << dtype_name(dt) << " " << sh.str() << ": "
                      << e.what();
      }
    }
}

// A plan asked for an impossible size fails cleanly with CudaOutOfMemory, and the GPU stays
// usable. (The failing cudaMalloc is deliberate: under compute-sanitizer it is reported as an
// API error unless --report-api-errors no is given, or this test is filtered out.) The ladder plans allocate image-sized float workspace in setup(), so they must throw;
// other plans (streaming ones need no image-sized buffers) may also succeed.
TEST_P(EccGpuPlan, ImpossibleSetupThrowsOutOfMemory) {
  REPIX_REQUIRE_GPU();
  const ecc::Variant& v = variant();
  const Shape huge = Shape::d3(200000, 200000, 10);
  {
    CudaStream stream;
    std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
    if (is_ladder(v)) {
      EXPECT_THROW(plan->setup({DType::f32, huge}, {}, stream.get()), CudaOutOfMemory) << v.id;
    } else {
      try {
        plan->setup({DType::f32, huge}, {}, stream.get());
      } catch (const CudaOutOfMemory&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << v.id << ": expected success or CudaOutOfMemory, got: " << e.what();
      }
    }
  }
  // Nothing sticky: every variant still works.
  const std::vector<HostImage> after = images_of(test::random_image(DType::f32, Shape::d2(40, 30), 50, 5));
  for (const std::string& id : gpu_variants()) expect_match(ecc::find_variant(id), after);
}

// ---- large cases: only with REPIX_LARGE_TESTS ---------------------------------------------------

TEST_P(EccGpuLarge, Large2DAnd3D) {
  REPIX_REQUIRE_GPU();
  if (!large_tests()) GTEST_SKIP() << "set REPIX_LARGE_TESTS=1 for the large cases";
  std::vector<HostImage> imgs;
  imgs.push_back(test::random_image(DType::u8, Shape::d2(4096, 4096), 256, 31));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(2048, 2048), 100000, 32));
  imgs.push_back(test::random_image(DType::u16, Shape::d3(256, 256, 256), 65536, 33));
  imgs.push_back(test::random_image(DType::f32, Shape::d3(300, 300, 300), 1000, 34));
  expect_match(variant(), imgs, /*use_omp_reference=*/true);
}

// More than 2^31 voxels: 64-bit indexing everywhere (the reference here is omp, itself checked
// against seq by the CPU tests).
TEST_P(EccGpuLarge, MoreThan2To31Voxels) {
  REPIX_REQUIRE_GPU();
  if (!large_tests()) GTEST_SKIP() << "set REPIX_LARGE_TESTS=1 for the large cases";
  const Shape sh = Shape::d3(2048, 1024, 1025);
  ASSERT_GT(sh.size(), std::int64_t(1) << 31);
  expect_match(variant(), images_of(test::random_image(DType::u8, sh, 256, 41)), /*use_omp_reference=*/true);
}

}  // namespace
}  // namespace repix
