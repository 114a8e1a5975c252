// gpu-opt-direct (the direct-index ablation step) against seq on the GPU, beyond what every
// registered variant gets (EccGpuVariant.*/gpu_opt_direct, EccGpuPlan.*/gpu_opt_direct: edge
// shapes, all dtypes): uint16 images whose blocks see thousands of values (the case the step is
// for: gpu-opt's block hash overflows there), few values (every thread hammers the same global
// bins), and constant images, 2D and 3D, rows whose width is and is not a multiple of 4 (vector
// and scalar loads), through the variant's end-to-end run and through one reused plan. uint8 and
// float32 run gpu-opt's kernels unchanged; one case each checks the wiring. Skips without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/gpu.hpp"
#include "ecc/ecc.hpp"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

TEST(EccOptDirect, RegisteredAfterGpuOptAsTheDirectIndexStep) {
  const ecc::Variant& v = ecc::find_variant("gpu-opt-direct");
  EXPECT_TRUE(v.gpu);
  EXPECT_EQ(v.step, "direct-index");
  EXPECT_TRUE(v.run && v.make_plan);
  const auto& all = ecc::variants();
  std::size_t opt = all.size(), direct = all.size();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].id == "gpu-opt") opt = i;
    if (all[i].id == "gpu-opt-direct") direct = i;
  }
  EXPECT_EQ(direct, opt + 1);  // the ablation table's ladder follows the registry
}

TEST(EccOptDirect, Uint16ManyAndFewValuesEqualSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  const ecc::Variant& v = ecc::find_variant("gpu-opt-direct");
  std::vector<HostImage> imgs;
  std::uint32_t seed = 40;
  for (const Shape sh : {Shape::d2(512, 300), Shape::d2(515, 301), Shape::d3(96, 40, 33), Shape::d3(97, 41, 35)})
    for (int levels : {65536, 20000, 2}) imgs.push_back(test::random_image(DType::u16, sh, levels, seed++));
  imgs.push_back(test::random_image(DType::u16, Shape::d2(300, 200), 1000, seed++, 65000));  // wraps past 65535
  imgs.push_back(test::constant_image(DType::u16, Shape::d3(70, 9, 20), 65535));
  imgs.push_back(test::checkerboard(DType::u16, Shape::d2(257, 129), 3, 0, 65535));
  imgs.push_back(test::random_image(DType::u8, Shape::d3(67, 33, 17), 256, seed++));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(403, 211), 30000, seed++));
  for (const HostImage& img : imgs) {
    const ecc::Curve want = ecc::run_seq(img, {});
    EXPECT_TRUE(test::same_curve(v.run(img, {}), want)) << "end to end, " << test::describe(img);
    // One plan, computed twice: the global bins are cleared between computes.
    CudaStream stream;
    std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
    DeviceBuffer<unsigned char> d_in(img.bytes());
    plan->setup({img.dtype(), img.shape()}, {}, stream.get());
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream.get()));
    for (int rep = 0; rep < 2; ++rep) {
      plan->compute({d_in.get()}, stream.get());
      EXPECT_TRUE(test::same_curve(plan->result(stream.get()), want))
          << "plan, compute " << rep << ", " << test::describe(img);
    }
  }
}

}  // namespace
}  // namespace repix
