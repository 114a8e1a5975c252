// BatchRunner (Table 3) against seq, image by image, on both paths: the small-image kernel (every
// dtype; 1x1, 1xN, Nx1, sizes at and one off the block shapes' capacities of 256, 2048 and 16384
// elements, 127x129, 128x128, 1D and 3D shapes; images with many ties, all-distinct values, float
// extremes, signed zeros, constants, checkerboards; N = 1, 2, 5, 1000; several read-back rounds)
// and the per-image gpu-opt path (forced on small images, chosen for large ones; its queued
// read-back, the read-back of more distinct values than queued, and the overflow fallback).
// Runners are reused across batches. Skips without a GPU. Sizes stay moderate (device-check runs
// every GPU test under compute-sanitizer memcheck and racecheck); REPIX_LARGE_TESTS adds N = 1000 of 128^2 float32, 260 of 127x129, 9000 of 1x1 (automatic round
// sizes) and more shapes of the largest block shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "ecc/batch.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

bool large_tests() { return std::getenv("REPIX_LARGE_TESTS") != nullptr; }

using ecc::BatchPath;

HostImage uniform_floats(const Shape& sh, std::uint32_t seed) {
  HostImage img(DType::f32, sh);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = u(rng);
  return img;
}

// Images of one type and shape with their seq curves.
struct Batch {
  std::vector<HostImage> images;
  std::vector<ecc::Curve> want;
  void add(HostImage img) {
    want.push_back(ecc::run_seq(img, {}));
    images.push_back(std::move(img));
  }
};

// Runs batches of each of `counts` images (cycling through the batch's distinct ones; seq runs
// once per distinct image) on one runner, then the first count again: the runner's buffers and
// plans are reused and grown across batches. `round_images` > 0 caps the small-kernel rounds.
void expect_batch_matches_seq(const Batch& b, const std::vector<std::int64_t>& counts, BatchPath path,
                              BatchPath expect_path, const std::string& what, std::int64_t round_images = 0) {
  ASSERT_FALSE(b.images.empty());
  const DType dt = b.images[0].dtype();
  const Shape sh = b.images[0].shape();
  const std::size_t bytes = b.images[0].bytes();
  const std::int64_t most = *std::max_element(counts.begin(), counts.end());
  DeviceBuffer<unsigned char> d(bytes * static_cast<std::size_t>(most));
  for (std::int64_t i = 0; i < most; ++i)
    copy_to_device_sync(d.get() + bytes * static_cast<std::size_t>(i), b.images[i % b.images.size()].raw(), bytes);
  ecc::BatchRunner runner(dt, sh, 4, path);
  ASSERT_EQ(runner.path(), expect_path) << what;
  runner.set_round_images_for_tests(round_images);
  std::vector<std::int64_t> order = counts;
  order.push_back(counts.front());
  for (std::int64_t count : order) {
    const std::vector<ecc::Curve> got = runner.run(d.get(), count);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(count)) << what;
    for (std::int64_t i = 0; i < count; ++i)
      ASSERT_TRUE(test::same_curve(got[i], b.want[i % b.want.size()]))
          << what << " " << dtype_name(dt) << " " << sh.str() << " (ndim " << sh.ndim << ") N=" << count
          << " image " << i << " path " << ecc::batch_path_name(runner.path()) << " rounds of "
          << (round_images ? std::to_string(round_images) : std::string("auto"));
  }
}

// Seeded images of one type and shape: heavy ties, many values, and (float) all distinct.
Batch mixed_batch(DType dt, const Shape& sh, std::uint32_t seed) {
  Batch b;
  b.add(test::random_image(dt, sh, 3, seed));
  b.add(test::random_image(dt, sh, dt == DType::u8 ? 256 : 20000, seed + 1));
  if (dt == DType::f32) b.add(uniform_floats(sh, seed + 2));
  b.add(test::random_image(dt, sh, 2, seed + 3));
  b.add(test::random_image(dt, sh, 40, seed + 4));
  return b;
}

// Around the block shapes' capacities (256, 2048, 16384 elements) and the edge shapes.
const Shape kSmallShapes[] = {
    Shape::d2(1, 1),    Shape::d2(1, 100),  Shape::d2(100, 1),    Shape::d2(5, 51),    Shape::d2(16, 16),
    Shape::d2(257, 1),  Shape::d2(23, 89),  Shape::d2(64, 32),    Shape::d2(2049, 1),  Shape::d2(127, 129),
    Shape::d2(128, 128), Shape::d1(300),    Shape::d3(1, 1, 1),   Shape::d3(3, 4, 5),  Shape::d3(1, 1, 9),
    Shape::d3(9, 1, 1), Shape::d3(16, 16, 64), Shape::d3(2, 3, 257)};
// More of the largest block shape (REPIX_LARGE_TESTS: sanitizer time).
const Shape kLargeSmallShapes[] = {Shape::d2(1, 4096), Shape::d2(16384, 1), Shape::d3(25, 25, 26),
                                   Shape::d2(90, 182)};

TEST(EccBatchGpu, SmallKernelEveryDtypeAndShape) {
  REPIX_REQUIRE_GPU();
  std::uint32_t seed = 9000;
  std::vector<Shape> shapes(std::begin(kSmallShapes), std::end(kSmallShapes));
  if (large_tests()) shapes.insert(shapes.end(), std::begin(kLargeSmallShapes), std::end(kLargeSmallShapes));
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes) {
      const Batch b = mixed_batch(dt, sh, seed);
      seed += 10;
      expect_batch_matches_seq(b, {1, 2, 5}, BatchPath::automatic, BatchPath::small_kernel, "mixed");
    }
}

TEST(EccBatchGpu, SmallKernelSpecialImages) {
  REPIX_REQUIRE_GPU();
  for (const Shape& sh : {Shape::d2(1, 1), Shape::d2(31, 33), Shape::d2(128, 128), Shape::d3(5, 6, 7)}) {
    Batch f;
    f.add(test::float_extremes(sh, 3));
    f.add(test::signed_zeros(sh, 4));
    f.add(test::constant_image(DType::f32, sh, -0.0));
    f.add(test::checkerboard(DType::f32, sh, 1, -1e-45, 1e-45));
    expect_batch_matches_seq(f, {4}, BatchPath::small_kernel, BatchPath::small_kernel, "float specials");
    for (DType dt : {DType::u8, DType::u16, DType::f32}) {
      Batch b;
      b.add(test::constant_image(dt, sh, 7));
      b.add(test::constant_image(dt, sh, 0));
      b.add(test::checkerboard(dt, sh, 1, 3, 200));
      b.add(test::checkerboard(dt, sh, 2, 9, 1));
      expect_batch_matches_seq(b, {4}, BatchPath::small_kernel, BatchPath::small_kernel, "constant/checker");
    }
  }
  Batch top;  // uint16's largest values, next to the kernel's empty-slot key
  HostImage img(DType::u16, Shape::d2(20, 20));
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(65535 - (i % 3));
  top.add(std::move(img));
  expect_batch_matches_seq(top, {2}, BatchPath::small_kernel, BatchPath::small_kernel, "uint16 top");
}

// Several read-back rounds (both buffers, a partial last round) and N = 1000.
TEST(EccBatchGpu, SmallKernelRoundsAndThousand) {
  REPIX_REQUIRE_GPU();
  {
    Batch b;
    for (std::uint32_t s = 0; s < 3; ++s) b.add(uniform_floats(Shape::d2(128, 128), 300 + s));
    b.add(test::random_image(DType::f32, Shape::d2(128, 128), 50, 310));
    expect_batch_matches_seq(b, {7, 2}, BatchPath::automatic, BatchPath::small_kernel, "128^2, rounds of 2", 2);
  }
  expect_batch_matches_seq(mixed_batch(DType::u8, Shape::d2(16, 16), 500), {1000}, BatchPath::automatic,
                           BatchPath::small_kernel, "u8 16x16 x1000");
  expect_batch_matches_seq(mixed_batch(DType::f32, Shape::d2(1, 1), 510), {1000, 3}, BatchPath::automatic,
                           BatchPath::small_kernel, "f32 1x1 x1000, rounds of 300", 300);
  expect_batch_matches_seq(mixed_batch(DType::u16, Shape::d3(8, 8, 8), 520), {9, 1}, BatchPath::automatic,
                           BatchPath::small_kernel, "u16 8^3, rounds of 4", 4);
}

// The automatic round sizes (about 16 MiB or 4096 images) over real batch sizes.
TEST(EccBatchGpu, SmallKernelLargeBatches) {
  REPIX_REQUIRE_GPU();
  if (!large_tests()) GTEST_SKIP() << "set REPIX_LARGE_TESTS=1";
  Batch uniform;
  for (std::uint32_t s = 0; s < 16; ++s) uniform.add(uniform_floats(Shape::d2(128, 128), 700 + s));
  expect_batch_matches_seq(uniform, {1000}, BatchPath::automatic, BatchPath::small_kernel, "uniform 128^2 x1000");
  Batch odd;  // 16383 elements: 128 images a round
  for (std::uint32_t s = 0; s < 4; ++s) odd.add(uniform_floats(Shape::d2(127, 129), 720 + s));
  expect_batch_matches_seq(odd, {260}, BatchPath::automatic, BatchPath::small_kernel, "127x129 x260");
  expect_batch_matches_seq(mixed_batch(DType::f32, Shape::d2(1, 1), 730), {9000}, BatchPath::automatic,
                           BatchPath::small_kernel, "1x1 x9000");
}

TEST(EccBatchGpu, PerImagePathMatchesSeq) {
  REPIX_REQUIRE_GPU();
  std::uint32_t seed = 8000;
  std::vector<Shape> shapes = {Shape::d2(33, 17), Shape::d3(20, 9, 13)};
  if (large_tests()) shapes.push_back(Shape::d2(128, 128));
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes) {
      const Batch b = mixed_batch(dt, sh, seed);
      seed += 10;
      // Below, at and above the 4 streams.
      expect_batch_matches_seq(b, {1, 4, 9}, BatchPath::per_image, BatchPath::per_image, "forced per-image");
    }
  // Too large for the small-image kernel: automatic takes the per-image path.
  for (const Shape& sh : {Shape::d2(129, 128), Shape::d3(40, 30, 20)}) {
    const Batch b = mixed_batch(DType::f32, sh, seed);
    seed += 10;
    expect_batch_matches_seq(b, {5}, BatchPath::automatic, BatchPath::per_image, "large");
  }
}

// OptPlan's queued pair directly: a float image with more distinct values than the first
// read-back holds (the rest is copied after the wait; later images read back more up front), and
// the overflow fallback taken from collect().
TEST(EccBatchGpu, QueuedReadBackAndFallback) {
  REPIX_REQUIRE_GPU();
  const HostImage many = uniform_floats(Shape::d2(100, 100), 11);  // 10000 distinct values
  const HostImage few = test::random_image(DType::f32, Shape::d2(100, 100), 30, 12);
  const ecc::Curve want_many = ecc::run_seq(many, {}), want_few = ecc::run_seq(few, {});
  DeviceBuffer<unsigned char> dm(many.bytes()), df(few.bytes());
  copy_to_device_sync(dm.get(), many.raw(), many.bytes());
  copy_to_device_sync(df.get(), few.raw(), few.bytes());
  CudaStream s;
  ecc::OptPlan plan;
  plan.setup({DType::f32, many.shape()}, {}, s.get());
  for (int i = 0; i < 2; ++i) {
    plan.compute_queued(dm.get(), s.get());
    EXPECT_TRUE(test::same_curve(plan.collect(s.get()), want_many)) << "many, pass " << i;
    EXPECT_FALSE(plan.used_fallback());
    plan.compute_queued(df.get(), s.get());
    EXPECT_TRUE(test::same_curve(plan.collect(s.get()), want_few)) << "few, pass " << i;
  }
  plan.set_global_capacity_for_tests(16);
  plan.compute_queued(dm.get(), s.get());
  EXPECT_TRUE(test::same_curve(plan.collect(s.get()), want_many)) << "fallback";
  EXPECT_TRUE(plan.used_fallback());
  plan.set_global_capacity_for_tests(0);
  plan.compute_queued(df.get(), s.get());
  EXPECT_TRUE(test::same_curve(plan.collect(s.get()), want_few)) << "after the fallback";
  EXPECT_FALSE(plan.used_fallback());
  // The synchronous pair still works on the same plan.
  plan.compute({dm.get()}, s.get());
  EXPECT_TRUE(test::same_curve(plan.result(s.get()), want_many)) << "compute/result";
}

TEST(EccBatchGpu, BadRequests) {
  REPIX_REQUIRE_GPU();
  EXPECT_THROW(ecc::BatchRunner(DType::f32, Shape::d2(129, 128), 4, BatchPath::small_kernel), Error);
  ecc::BatchRunner runner(DType::u8, Shape::d2(8, 8));
  EXPECT_TRUE(runner.run(nullptr, 0).empty());
  EXPECT_THROW(runner.run(nullptr, -1), Error);
}

}  // namespace
}  // namespace repix
