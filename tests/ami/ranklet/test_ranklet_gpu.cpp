// The GPU ranklet variants against seq, bit for bit, end to end and through their plans (the
// bench's kernel scope, run twice on one plan); skip cleanly without a GPU.
#include <gtest/gtest.h>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"
#include "ami/ranklet/variants.hpp"
#include "core/gpu.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using namespace test::ranklet;  // rk, noise, constant, oracle, same

#define REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

class RankletGpuVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(RankletGpuVariant, test::variant_ids(rk::variants(), test::Device::gpu));

std::vector<HostImage> inputs() {
  std::vector<HostImage> v;
  for (std::uint64_t seed = 1; seed <= 2; ++seed) {
    v.push_back(noise(67, 45, 256, seed));
    v.push_back(noise(40, 33, 3, seed + 10));
  }
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 37}, {37, 1}, {31, 9}, {33, 8}, {32, 7}, {5, 3}};
  for (auto [nx, ny] : shapes) {
    v.push_back(noise(nx, ny, 2, nx * 100 + ny));
    v.push_back(noise(nx, ny, 256, nx * 100 + ny + 1));
    v.push_back(constant(nx, ny, 7));
  }
  return v;
}

TEST_P(RankletGpuVariant, MatchesSeqEndToEnd) {
  REQUIRE_GPU();
  const rk::Variant& v = rk::find_variant(GetParam());
  rk::Options opt;
  opt.windows = {32, 2, 8, 16, 4};
  for (const HostImage& img : inputs())
    EXPECT_TRUE(same(v.run(img, opt), rk::find_variant("seq").run(img, opt))) << GetParam() << " " << img.shape().str();
}

TEST_P(RankletGpuVariant, PlanRunsTwiceAndMatchesSeq) {
  REQUIRE_GPU();
  const rk::Variant& v = rk::find_variant(GetParam());
  const HostImage img = noise(130, 70, 256, 9);
  const rk::Options opt;
  const rk::Result want = rk::find_variant("seq").run(img, opt);
  CudaStream stream;
  DeviceBuffer<std::uint8_t> d(img.bytes());
  REPIX_CUDA(cudaMemcpyAsync(d.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream.get()));
  auto plan = v.make_plan();
  plan->setup({img.dtype(), img.shape()}, opt, stream.get());
  for (int i = 0; i < 2; ++i) {
    plan->compute({d.get()}, stream.get());
    const rk::Result got = plan->result(stream.get());
    EXPECT_TRUE(same(got, want)) << GetParam() << " run " << i;
    EXPECT_GT(got.stats.kernel_ms, 0) << "the plan times its kernels";
    EXPECT_EQ(plan->stats().kernel_ms, got.stats.kernel_ms);
  }
}

TEST(RankletGpu, NaiveBlockSizes) {
  REQUIRE_GPU();
  const HostImage img = noise(45, 23, 256, 11);
  rk::Options opt;
  opt.windows = {4, 32};
  const rk::Result want = rk::find_variant("seq").run(img, opt);
  for (int b : {1, 2, 4, 16, 32}) {
    opt.block = b;
    EXPECT_TRUE(same(rk::find_variant("gpu-naive").run(img, opt), want)) << "block " << b;
  }
}

}  // namespace
}  // namespace repix

namespace repix {
namespace {

// The ami pipeline reads gpu-opt's planes on the device: they are the result's planes.
TEST(RankletGpu, OptPlanDeviceOutputIsTheResult) {
  REQUIRE_GPU();
  const HostImage img = noise(50, 21, 256, 12);
  rk::Options opt;
  opt.windows = {8, 16};
  CudaStream stream;
  DeviceBuffer<std::uint8_t> d(img.bytes());
  REPIX_CUDA(cudaMemcpyAsync(d.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream.get()));
  const std::unique_ptr<rk::PlanBase> plan = rk::make_gpu_opt_plan();
  plan->setup({img.dtype(), img.shape()}, opt, stream.get());
  plan->compute({d.get()}, stream.get());
  const rk::Result r = plan->result(stream.get());
  std::vector<float> on_device(static_cast<std::size_t>(r.ranklet.size()));
  REPIX_CUDA(cudaMemcpy(on_device.data(), plan->device_output(), r.ranklet.bytes(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(std::memcmp(on_device.data(), r.ranklet.raw(), r.ranklet.bytes()), 0);
  EXPECT_TRUE(same(r, rk::find_variant("seq").run(img, opt)));
}

}  // namespace
}  // namespace repix
