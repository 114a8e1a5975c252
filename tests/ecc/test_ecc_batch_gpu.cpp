// The gpu-opt batch runner (Table 3) against seq, image by image: batch sizes below, at and
// above the stream count, 2D and 3D, float and integer images. Skips without a GPU.
#include <gtest/gtest.h>

#include <vector>

#include "core/gpu.hpp"
#include "ecc/batch.hpp"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

TEST(EccBatchGpu, EveryImageMatchesSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  struct Case { DType dt; Shape sh; int levels; };
  for (const Case& c : {Case{DType::f32, Shape::d2(128, 128), 5000}, Case{DType::u8, Shape::d2(33, 17), 7},
                        Case{DType::f32, Shape::d3(20, 9, 13), 300}}) {
    for (int n : {1, 3, 4, 9}) {
      std::vector<HostImage> imgs;
      const std::size_t bytes = static_cast<std::size_t>(c.sh.size()) * dtype_size(c.dt);
      DeviceBuffer<unsigned char> d(bytes * n);
      for (int i = 0; i < n; ++i) {
        imgs.push_back(test::random_image(c.dt, c.sh, c.levels, 1000 + i));
        REPIX_CUDA(cudaMemcpy(d.get() + bytes * i, imgs.back().raw(), bytes, cudaMemcpyHostToDevice));
      }
      ecc::BatchRunner runner(c.dt, c.sh, 4);
      for (int round = 0; round < 2; ++round) {  // plans are reused across batches
        const std::vector<ecc::Curve> got = runner.run(d.get(), n);
        ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i)
          EXPECT_TRUE(got[i] == ecc::run_seq(imgs[i], {})) << c.sh.str() << " n=" << n << " image " << i;
      }
    }
  }
}

}  // namespace
}  // namespace repix
