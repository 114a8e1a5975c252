// The ablation steps after gpu-opt against seq on the GPU, beyond what every registered variant
// gets (EccGpuVariant.*/<id>, EccGpuPlan.*/<id>: edge shapes, all dtypes).
// gpu-opt, gpu-opt-direct (direct-index) and gpu-opt-warp (which keeps it): uint16 images whose
// blocks see thousands of values (gpu-opt's small block hash overflows: most keys go by value to
// the global bins, the step's only path), few values (all in gpu-opt's block hash; every thread of
// the step hammers the same global bins), and constant images, 2D and 3D, rows whose width is and
// is not a multiple of 4 (vector and scalar loads), through the variant's end-to-end run and
// through one reused plan. uint8 and float32 run gpu-opt's kernels unchanged in both steps; one
// case each checks the wiring.
// gpu-opt-warp (warp-aggregation): float32 images smooth along x (long runs of equal values in a
// warp: the case it is for), a warp's lanes split between a few values, random values (groups of
// one), constants, widths that leave lanes outside the image (their voxels must add nothing), 1D,
// 2D and 3D. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/gpu_opt_core.cuh"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

TEST(EccOptSteps, RegisteredAfterGpuOptInLadderOrder) {
  const auto& all = ecc::variants();
  std::vector<std::string> ids, steps;
  for (const auto& v : all) {
    ids.push_back(v.id);
    steps.push_back(v.step);
  }
  // The ablation table's ladder follows the registry: each step right after the one it builds on.
  // gpu-opt-static is gpu-opt before its dynamic schedule and gpu-opt-fresh-rows before its carried
  // row words: the two steps right before it.
  const std::vector<std::string> want = {"gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt", "gpu-opt-direct", "gpu-opt-warp",
                                         "gpu-opt-cluster", "gpu-opt-bins16", "gpu-opt-hash-bins16",
                                         "gpu-opt-sampled16"};
  const auto at = std::find(ids.begin(), ids.end(), "gpu-opt-static");
  ASSERT_NE(at, ids.end());
  ASSERT_LE(static_cast<std::size_t>(at - ids.begin()) + want.size(), ids.size());
  EXPECT_EQ(std::vector<std::string>(at, at + want.size()), want);
  for (const char* id :
       {"gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt-direct", "gpu-opt-warp", "gpu-opt-cluster", "gpu-opt-bins16",
        "gpu-opt-hash-bins16", "gpu-opt-sampled16"}) {
    const ecc::Variant& v = ecc::find_variant(id);
    EXPECT_TRUE(v.gpu && v.run && v.make_plan) << id;
  }
  EXPECT_EQ(ecc::find_variant("gpu-opt-static").step, "static-schedule");
  EXPECT_EQ(ecc::find_variant("gpu-opt-fresh-rows").step, "fresh-row-words");
  EXPECT_EQ(ecc::find_variant("gpu-opt-direct").step, "direct-index");
  EXPECT_EQ(ecc::find_variant("gpu-opt-warp").step, "warp-aggregation");
  EXPECT_EQ(ecc::find_variant("gpu-opt-cluster").step, "cluster-bins");
  EXPECT_EQ(ecc::find_variant("gpu-opt-bins16").step, "shared-bins16");
  EXPECT_EQ(ecc::find_variant("gpu-opt-hash-bins16").step, "hash-bins16");
  EXPECT_EQ(ecc::find_variant("gpu-opt-sampled16").step, "sampled-choice");
}

// End to end and through one plan computed twice (the accumulators are cleared between computes).
void expect_equal_to_seq(const ecc::Variant& v, const std::vector<HostImage>& imgs) {
  for (const HostImage& img : imgs) {
    const ecc::Curve want = ecc::run_seq(img, {});
    EXPECT_TRUE(test::same_curve(v.run(img, {}), want)) << v.id << " end to end, " << test::describe(img);
    CudaStream stream;
    std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
    DeviceBuffer<unsigned char> d_in(img.bytes());
    plan->setup({img.dtype(), img.shape()}, {}, stream.get());
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), img.raw(), img.bytes(), cudaMemcpyHostToDevice, stream.get()));
    for (int rep = 0; rep < 2; ++rep) {
      plan->compute({d_in.get()}, stream.get());
      EXPECT_TRUE(test::same_curve(plan->result(stream.get()), want))
          << v.id << " plan, compute " << rep << ", " << test::describe(img);
    }
  }
}

TEST(EccOptSteps, Uint16ManyAndFewValuesEqualSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  std::vector<HostImage> imgs;
  std::uint32_t seed = 40;
  for (const Shape sh : {Shape::d2(512, 300), Shape::d2(515, 301), Shape::d3(96, 40, 33), Shape::d3(97, 41, 35)})
    for (int levels : {65536, 20000, 2}) imgs.push_back(test::random_image(DType::u16, sh, levels, seed++));
  imgs.push_back(test::random_image(DType::u16, Shape::d2(300, 200), 1000, seed++, 65000));  // wraps past 65535
  imgs.push_back(test::constant_image(DType::u16, Shape::d3(70, 9, 20), 65535));
  imgs.push_back(test::checkerboard(DType::u16, Shape::d2(257, 129), 3, 0, 65535));
  imgs.push_back(test::random_image(DType::u8, Shape::d3(67, 33, 17), 256, seed++));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(403, 211), 30000, seed++));
  for (const char* id : {"gpu-opt-static", "gpu-opt-fresh-rows", "gpu-opt", "gpu-opt-direct", "gpu-opt-warp", "gpu-opt-cluster",
                         "gpu-opt-bins16", "gpu-opt-hash-bins16", "gpu-opt-sampled16"}) {
    if (std::string(id) == "gpu-opt-cluster" && !ecc::opt::clusters_available()) continue;  // Hopper and newer
    expect_equal_to_seq(ecc::find_variant(id), imgs);
  }
}

// gpu-opt-cluster's bins live in the shared memory of a cluster's 8 blocks: every block adds into
// every other's. Launches of many clusters, whose blocks take several items each or none (the
// tests' cap on items a taker grows the grid; blocks past the items still open and close their
// cluster's bins), under the dynamic and the static schedule, 2D and 3D, with values in every
// block's share of the bins and all in one block's (65535 and its neighbours: the last block's).
TEST(EccOptSteps, ClusterBinsAcrossManyClustersEqualSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  if (!ecc::opt::clusters_available()) GTEST_SKIP() << "no thread block clusters on this GPU (compute capability < 9.0)";
  std::vector<HostImage> imgs;
  std::uint32_t seed = 80;
  for (const Shape sh : {Shape::d2(1024, 700), Shape::d2(259, 1003), Shape::d3(130, 70, 45), Shape::d1(5000)}) {
    imgs.push_back(test::random_image(DType::u16, sh, 65536, seed++));
    imgs.push_back(test::random_image(DType::u16, sh, 40, seed++, 65500));  // wraps: 65500.. and 0..3
  }
  imgs.push_back(test::constant_image(DType::u16, Shape::d2(700, 600), 8191));  // a block's last bin
  imgs.push_back(test::constant_image(DType::u16, Shape::d3(64, 64, 64), 8192));  // the next block's first
  const ecc::Variant& v = ecc::find_variant("gpu-opt-cluster");
  struct Restore {
    ~Restore() { ecc::opt::set_schedule_for_tests(-1, 0); }
  } restore;
  for (int dynamic : {1, 0})
    for (std::int64_t cap : {std::int64_t{1}, std::int64_t{3}, std::int64_t{0}}) {
      ecc::opt::set_schedule_for_tests(dynamic, cap);
      SCOPED_TRACE("dynamic " + std::to_string(dynamic) + ", cap " + std::to_string(cap));
      expect_equal_to_seq(v, imgs);
    }
}

// gpu-opt-bins16's 16-bit counters (and gpu-opt-hash-bins16's, behind its block hash, which the
// high-entropy images fill and the skewed one's frequent value stays in): a block's counter of a
// frequent value passes the take-back limit
// ([-8192, 8192)) and the adds after it go to the global bins, on every value at once (few levels, a
// constant, a checkerboard) or on a few among many (a skewed image: half its voxels one value);
// high-entropy images whose every block sees most of the 65536 values; many blocks (the tests' cap
// on items a taker grows the grid, so more rows of counters than SMs) under the dynamic and the
// static schedule; widths that take the vector and the scalar loads; 1D; and 3D, which runs
// gpu-opt-direct's kernel in gpu-opt-bins16 and gpu-opt's in gpu-opt-hash-bins16.
HostImage skewed_u16(Shape sh, std::uint32_t seed) {
  HostImage img = test::random_image(DType::u16, sh, 65536, seed);
  auto* p = img.data<std::uint16_t>();
  for (std::int64_t i = 0; i < sh.size(); i += 2) p[i] = 40000;  // every other voxel: one high-half value
  return img;
}
// Rows [0, ny/2) of 65536 random values (they fill gpu-opt-hash-bins16's block hashes), the rest a
// checkerboard of two values, whose counters then pass the limit in the bins.
HostImage noise_then_checkerboard_u16(Shape sh, std::uint32_t seed) {
  HostImage img = test::random_image(DType::u16, sh, 65536, seed);
  auto* p = img.data<std::uint16_t>();
  for (std::int64_t y = sh.ny / 2; y < sh.ny; ++y)
    for (std::int64_t x = 0; x < sh.nx; ++x) p[y * sh.nx + x] = (x + y) % 2 ? 65533 : 3;
  return img;
}

TEST(EccOptSteps, Bins16PastTheLimitAndAcrossManyBlocksEqualSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  std::vector<HostImage> imgs;
  std::uint32_t seed = 120;
  for (const Shape sh : {Shape::d2(1024, 1024), Shape::d2(1023, 517), Shape::d1(300000)}) {
    imgs.push_back(test::random_image(DType::u16, sh, 65536, seed++));
    imgs.push_back(test::random_image(DType::u16, sh, 3, seed++, 32767));  // 32767, 32768, 32769: both halves
    imgs.push_back(skewed_u16(sh, seed++));
  }
  imgs.push_back(test::constant_image(DType::u16, Shape::d2(2048, 1024), 7));
  // A checkerboard's higher value changes the curve by -1 a voxel: every block's counter of it
  // passes -8192 (the high half, then the low half).
  imgs.push_back(test::checkerboard(DType::u16, Shape::d2(4096, 2048), 1, 0, 65535));
  imgs.push_back(test::checkerboard(DType::u16, Shape::d2(4092, 2050), 1, 0, 5));
  imgs.push_back(noise_then_checkerboard_u16(Shape::d2(4096, 4096), seed++));
  imgs.push_back(test::random_image(DType::u16, Shape::d3(130, 70, 45), 5, seed++));
  struct Restore {
    ~Restore() { ecc::opt::set_schedule_for_tests(-1, 0); }
  } restore;
  for (const char* id : {"gpu-opt-bins16", "gpu-opt-hash-bins16"})
    for (int dynamic : {1, 0})
      for (std::int64_t cap : {std::int64_t{1}, std::int64_t{0}}) {
        ecc::opt::set_schedule_for_tests(dynamic, cap);
        SCOPED_TRACE(std::string(id) + ", dynamic " + std::to_string(dynamic) + ", cap " + std::to_string(cap));
        expect_equal_to_seq(ecc::find_variant(id), imgs);
      }
}

// gpu-opt-sampled16 on images of 2^22 voxels and more, where it samples: each image is first checked
// to take the choice it is meant to (the CPU replay of the sample kernel, sampled_choice below), so
// both kernels run behind the gate, each with the other's blocks returning at once: high-entropy
// and 1000-level noise, a ramp along x (the 16-bit bins), few levels, a constant, a checkerboard
// (gpu-opt's block hash); widths that take the vector and the scalar loads; many blocks under the
// dynamic and the static schedule; a plan computing an image of each kind in turn (the choice is made
// each pass). Smaller images run gpu-opt's kernel alone (Uint16ManyAndFewValuesEqualSeq).
std::uint32_t sampled_choice(const HostImage& img) {
  namespace s16 = ecc::opt::sampled16;
  const auto* p = img.data<std::uint16_t>();
  std::vector<bool> seen(65536);
  unsigned distinct = 0;
  for (int seg = 0; seg < s16::kSegments; ++seg) {
    const std::int64_t at = s16::segment_start(seg, img.shape().size());
    for (int i = 0; i < s16::kSegmentValues; ++i)
      if (!seen[p[at + i]]) {
        seen[p[at + i]] = true;
        ++distinct;
      }
  }
  return s16::choice(distinct);
}

HostImage ramp_u16(Shape sh) {
  HostImage img(DType::u16, sh);
  for (std::int64_t y = 0; y < sh.ny; ++y)
    for (std::int64_t x = 0; x < sh.nx; ++x) img.data<std::uint16_t>()[y * sh.nx + x] = static_cast<std::uint16_t>((x * 37 + y) & 0xFFFF);
  return img;
}

// The choice on the images its threshold was set from (the ecc-u16 experiment's; gpu_opt_core.cuh's
// sampled16): the 16-bit textures and few levels take gpu-opt's kernel, 1000 levels and more and
// the ramp the 16-bit bins. CPU only.
TEST(EccOptSteps, Sampled16ChoosesAsMeasured) {
  namespace s16 = ecc::opt::sampled16;
  for (const auto& [spec, choice] : std::vector<std::pair<std::string, std::uint32_t>>{
           {"texture:8192x8192:name=camera:dtype=uint16", s16::kHash},
           {"texture:4096x4096:name=grass:dtype=uint16", s16::kHash},
           {"uniform:8192x8192:levels=16:dtype=uint16:seed=3", s16::kHash},
           {"ramp:8192x8192:dtype=uint16", s16::kBins16},
           {"uniform:4096x4096:levels=1000:dtype=uint16:seed=3", s16::kBins16},
           {"uniform:4096x4096:levels=65536:dtype=uint16:seed=7", s16::kBins16}})
    EXPECT_EQ(sampled_choice(datasets::generate(spec)), choice) << spec;
}

TEST(EccOptSteps, Sampled16BothChoicesEqualSeq) {
  namespace s16 = ecc::opt::sampled16;
  std::vector<HostImage> imgs;
  std::vector<std::uint32_t> want;  // the choice each must take
  auto add = [&](HostImage img, std::uint32_t choice) {
    imgs.push_back(std::move(img));
    want.push_back(choice);
  };
  std::uint32_t seed = 160;
  for (const Shape sh : {Shape::d2(2048, 2048), Shape::d2(2051, 2047)}) {
    add(test::random_image(DType::u16, sh, 65536, seed++), s16::kBins16);
    add(test::random_image(DType::u16, sh, 1000, seed++, 64900), s16::kBins16);  // wraps past 65535
    add(ramp_u16(sh), s16::kBins16);
    add(test::random_image(DType::u16, sh, 16, seed++), s16::kHash);
    add(test::random_image(DType::u16, sh, 300, seed++, 32700), s16::kHash);  // both halves
  }
  add(test::constant_image(DType::u16, Shape::d2(4096, 1024), 40000), s16::kHash);
  add(test::checkerboard(DType::u16, Shape::d2(2048, 2048), 1, 0, 65535), s16::kHash);
  add(noise_then_checkerboard_u16(Shape::d2(4096, 1024), seed++), s16::kBins16);
  for (std::size_t i = 0; i < imgs.size(); ++i) {
    ASSERT_GE(imgs[i].shape().size(), s16::kFrom) << test::describe(imgs[i]);
    EXPECT_EQ(sampled_choice(imgs[i]), want[i]) << test::describe(imgs[i]);
  }
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  struct Restore {
    ~Restore() { ecc::opt::set_schedule_for_tests(-1, 0); }
  } restore;
  const ecc::Variant& v = ecc::find_variant("gpu-opt-sampled16");
  for (int dynamic : {1, 0})
    for (std::int64_t cap : {std::int64_t{1}, std::int64_t{0}}) {
      ecc::opt::set_schedule_for_tests(dynamic, cap);
      SCOPED_TRACE("dynamic " + std::to_string(dynamic) + ", cap " + std::to_string(cap));
      expect_equal_to_seq(v, imgs);
    }
  // One plan, the choice flipping from pass to pass (images 0-4 are 2048^2).
  CudaStream stream;
  std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
  plan->setup({DType::u16, imgs[0].shape()}, {}, stream.get());
  DeviceBuffer<unsigned char> d_in(imgs[0].bytes());
  for (int i : {0, 3, 2, 4, 1, 3}) {
    REPIX_CUDA(cudaMemcpyAsync(d_in.get(), imgs[i].raw(), imgs[i].bytes(), cudaMemcpyHostToDevice, stream.get()));
    plan->compute({d_in.get()}, stream.get());
    EXPECT_TRUE(test::same_curve(plan->result(stream.get()), ecc::run_seq(imgs[i], {}))) << "image " << i;
  }
}

// The same with the sampling floor lowered to one sampled run (set_sampled_from_for_tests), so that
// small images take both kernels: the sanitizers' case. Shapes with one row, one column, widths that
// take the scalar loads, and an image of fewer values than a run (no sample: gpu-opt's kernel alone).
TEST(EccOptSteps, Sampled16SmallImagesBothChoicesEqualSeq) {
  namespace s16 = ecc::opt::sampled16;
  std::vector<HostImage> imgs;
  std::uint32_t seed = 200;
  for (const Shape sh : {Shape::d2(300, 200), Shape::d2(515, 301), Shape::d2(5000, 1), Shape::d2(1, 3000)}) {
    imgs.push_back(test::random_image(DType::u16, sh, 65536, seed++));
    EXPECT_EQ(sampled_choice(imgs.back()), s16::kBins16) << test::describe(imgs.back());
    imgs.push_back(test::random_image(DType::u16, sh, 16, seed++, 65530));  // wraps: both halves
    EXPECT_EQ(sampled_choice(imgs.back()), s16::kHash) << test::describe(imgs.back());
  }
  imgs.push_back(test::random_image(DType::u16, Shape::d2(10, 12), 65536, seed++));  // under one run
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  struct Restore {
    ~Restore() {
      ecc::opt::set_sampled_from_for_tests(0);
      ecc::opt::set_schedule_for_tests(-1, 0);
    }
  } restore;
  ecc::opt::set_sampled_from_for_tests(s16::kSegmentValues);
  const ecc::Variant& v = ecc::find_variant("gpu-opt-sampled16");
  for (int dynamic : {1, 0}) {
    ecc::opt::set_schedule_for_tests(dynamic, 1);
    SCOPED_TRACE("dynamic " + std::to_string(dynamic));
    expect_equal_to_seq(v, imgs);
  }
  // An input one value past an 8-byte boundary: the sample's 2-byte loads instead of its 8-byte ones.
  CudaStream stream;
  std::unique_ptr<ecc::DevicePlan> plan = v.make_plan();
  plan->setup({DType::u16, imgs[0].shape()}, {}, stream.get());
  DeviceBuffer<std::uint16_t> d_in(static_cast<std::size_t>(imgs[0].shape().size()) + 1);
  for (int i : {0, 1}) {
    REPIX_CUDA(cudaMemcpyAsync(d_in.get() + 1, imgs[i].raw(), imgs[i].bytes(), cudaMemcpyHostToDevice, stream.get()));
    plan->compute({d_in.get() + 1}, stream.get());
    EXPECT_TRUE(test::same_curve(plan->result(stream.get()), ecc::run_seq(imgs[i], {}))) << "misaligned, image " << i;
  }
}

// Values smooth along x: a quantised sum of slow waves (steps of `q`), so a warp's 32 lanes share a
// few values in long runs, as in GRF images.
HostImage smooth_float(Shape sh, double q, std::uint32_t seed) {
  HostImage img(DType::f32, sh);
  const double ph = seed * 0.7;
  for (std::int64_t z = 0; z < sh.nz; ++z)
    for (std::int64_t y = 0; y < sh.ny; ++y)
      for (std::int64_t x = 0; x < sh.nx; ++x) {
        const double v = std::sin(x / 53.0 + ph) + std::cos(y / 37.0 - ph) + 0.5 * std::sin(z / 29.0 + x / 97.0);
        img.data<float>()[(z * sh.ny + y) * sh.nx + x] = static_cast<float>(std::round(v / q) * q);
      }
  return img;
}

TEST(EccOptSteps, WarpAggregationSmoothAndRoughFloatsEqualSeq) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  std::vector<HostImage> imgs;
  std::uint32_t seed = 60;
  for (const Shape sh : {Shape::d2(512, 97), Shape::d2(301, 83), Shape::d2(129, 5), Shape::d1(1000),
                         Shape::d3(128, 24, 19), Shape::d3(131, 9, 13), Shape::d3(5, 3, 40)})
    for (double q : {0.01, 0.25, 3.0}) imgs.push_back(smooth_float(sh, q, seed++));
  imgs.push_back(test::random_image(DType::f32, Shape::d2(515, 77), 3, seed++));      // few values
  imgs.push_back(test::random_image(DType::f32, Shape::d3(67, 21, 11), 50000, seed++));  // groups of one
  imgs.push_back(test::constant_image(DType::f32, Shape::d2(333, 41), -2.5));
  imgs.push_back(test::checkerboard(DType::f32, Shape::d3(40, 40, 10), 2, -1, 1));
  imgs.push_back(test::float_extremes(Shape::d2(200, 50), seed++));
  expect_equal_to_seq(ecc::find_variant("gpu-opt-warp"), imgs);
}

}  // namespace
}  // namespace repix
