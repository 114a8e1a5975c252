// gpu-opt against seq on the GPU: edge shapes around the tile sizes (128-column warp segments,
// 8-row 3D tiles, runs of 4, vector and scalar load paths), all dtypes, constant and checker
// images, float images with many distinct values (block table overflow), the forced global
// overflow fallback, extreme values and plan reuse. Skips without a GPU. Sizes stay small (the
// suite runs under compute-sanitizer racecheck); REPIX_LARGE_TESTS adds large inputs.
#include <gtest/gtest.h>

#include <cfloat>
#include <cstdlib>
#include <random>

#include "core/gpu.hpp"
#include "core/slab_source.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"

namespace repix {
namespace {

#define REPIX_NEED_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

bool large_tests() { return std::getenv("REPIX_LARGE_TESTS") != nullptr; }

enum class Pattern { random, constant, checker, distinct, extremes };

HostImage make_image(DType dt, Shape sh, Pattern pat, int levels, std::uint32_t seed,
                     bool pinned = false) {
  HostImage img(dt, sh, pinned);
  std::mt19937 rng(seed);
  for (std::int64_t i = 0; i < img.size(); ++i) {
    const std::int64_t x = i % sh.nx, y = (i / sh.nx) % sh.ny, z = i / (sh.nx * sh.ny);
    std::int64_t v = 0;
    switch (pat) {
      case Pattern::random: v = static_cast<std::int64_t>(rng() % static_cast<unsigned>(levels)); break;
      case Pattern::constant: v = 7; break;
      case Pattern::checker: v = (x + y + z) % 2; break;
      case Pattern::distinct: v = i; break;
      case Pattern::extremes: v = static_cast<std::int64_t>(rng() % 6); break;
    }
    switch (dt) {
      case DType::u8: img.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v * 37); break;
      case DType::u16: img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(v * 997); break;
      case DType::f32: {
        float f = static_cast<float>(v) * 0.013f - 1.5f;
        if (pat == Pattern::distinct) f = static_cast<float>(rng()) * 1e-6f - 2000.0f;
        if (pat == Pattern::extremes) {
          static const float e[] = {FLT_MAX, -FLT_MAX, 0.0f, -0.0f, FLT_MIN, -1e-45f};
          f = e[v];
        }
        img.data<float>()[i] = f;
        break;
      }
    }
  }
  return img;
}

// Uploads the image and runs the plan (kernel scope), like the harness does.
ecc::Curve run_plan(ecc::OptPlan& plan, const HostImage& img, bool do_setup = true, const ecc::Options& opt = {}) {
  CudaStream s;
  DeviceBuffer<unsigned char> d(img.bytes());
  copy_to_device_sync(d.get(), img.raw(), img.bytes());
  if (do_setup) plan.setup({img.dtype(), img.shape()}, opt, s.get());
  plan.compute({d.get()}, s.get());
  return plan.result(s.get());
}

void expect_same(const ecc::Curve& got, const ecc::Curve& want, const std::string& what) {
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  ASSERT_EQ(got.values, want.values) << what;
  ASSERT_EQ(got.ecc, want.ecc) << what;
}

std::string label(DType dt, const Shape& sh, int levels) {
  return dtype_name(dt) + " " + sh.str() + " L" + std::to_string(levels);
}

TEST(EccGpuOpt, EdgeShapesAllDtypes) {
  REPIX_NEED_GPU();
  const Shape shapes[] = {
      Shape::d2(1, 1),     Shape::d1(1),        Shape::d1(130),      Shape::d2(1, 37),
      Shape::d2(37, 1),    Shape::d2(127, 5),   Shape::d2(128, 4),   Shape::d2(129, 3),
      Shape::d2(4, 23),    Shape::d2(8, 25),    Shape::d2(5, 26),    Shape::d2(260, 50),
      Shape::d3(1, 1, 1),  Shape::d3(1, 1, 19), Shape::d3(19, 1, 1), Shape::d3(1, 19, 1),
      Shape::d3(127, 7, 2), Shape::d3(128, 8, 3), Shape::d3(129, 9, 4), Shape::d3(6, 17, 5),
      Shape::d3(12, 9, 20), Shape::d3(5, 3, 1)};
  std::uint32_t seed = 1;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes)
      for (int levels : {1, 2, 5, 300}) {
        const HostImage img = make_image(dt, sh, Pattern::random, levels, seed++);
        ecc::OptPlan plan;
        expect_same(run_plan(plan, img), ecc::run_seq(img, {}), label(dt, sh, levels));
        EXPECT_FALSE(plan.used_fallback());
      }
}

// The kernels' other register budgets (2D at 2 blocks an SM, 3D at 3: --blocks-2d 2 --blocks-3d 3),
// which only the ablation and the tuning runs select: the same code under other registers and
// spills, on both load paths (widths 4k and not), every dtype, few and many values.
TEST(EccGpuOpt, OtherRegisterBudgetsEqualSeq) {
  REPIX_NEED_GPU();
  ecc::Options opt;
  opt.tuning.blocks_2d = 2;
  opt.tuning.blocks_3d = 3;
  std::uint32_t seed = 900;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : {Shape::d2(260, 50), Shape::d2(515, 97), Shape::d3(128, 8, 3), Shape::d3(129, 17, 13),
                            Shape::d3(12, 9, 20)})
      for (int levels : {3, 3000}) {
        const HostImage img = make_image(dt, sh, Pattern::random, levels, seed++);
        ecc::OptPlan plan;
        expect_same(run_plan(plan, img, true, opt), ecc::run_seq(img, {}), label(dt, sh, levels));
      }
}

// Small work items (--min-chunk-2d / --min-chunk-3d, for the tuning runs): many items along the
// slowest axis, each with its own warm-up rows or planes and halos shared with its neighbours.
TEST(EccGpuOpt, SmallWorkItemsEqualSeq) {
  REPIX_NEED_GPU();
  std::uint32_t seed = 1700;
  for (int floor : {1, 3, 6}) {
    ecc::Options opt;
    opt.tuning.min_chunk_2d = opt.tuning.min_chunk_3d = floor;
    for (DType dt : {DType::u8, DType::u16, DType::f32})
      for (const Shape& sh : {Shape::d2(515, 97), Shape::d2(260, 50), Shape::d3(129, 17, 13), Shape::d3(128, 8, 31)})
        for (int levels : {3, 3000}) {
          const HostImage img = make_image(dt, sh, Pattern::random, levels, seed++);
          ecc::OptPlan plan;
          expect_same(run_plan(plan, img, true, opt), ecc::run_seq(img, {}),
                      label(dt, sh, levels) + " floor " + std::to_string(floor));
        }
  }
}

// The work distribution (gpu_opt_schedule.hpp): static strides, dynamic tickets, and tickets
// capped at 1 or 2 items a warp (2D) or block (3D), where the grid must grow to cover every item;
// small floors make many items. On an H100 (132 SMs) the larger shapes at floor 1 also have a
// dynamic head (Geom::head_bands: 1030 x 1500 and 130 x 64 x 120 leave 3 or more slabs an item).
// A ticket counter left non-zero by a launch would skip items of the next one on its lane: each
// plan computes twice, and gpu-stream runs many chunks on 1-3 lanes.
TEST(EccGpuOpt, SchedulesEqualSeq) {
  REPIX_NEED_GPU();
  struct Restore {
    ~Restore() { ecc::opt::set_schedule_for_tests(-1, 0); }
  } restore;
  struct Schedule {
    int dynamic;
    std::int64_t cap;
  };
  std::uint32_t seed = 1900;
  for (const Schedule sc : {Schedule{0, 0}, Schedule{1, 0}, Schedule{1, 1}, Schedule{1, 2}}) {
    ecc::opt::set_schedule_for_tests(sc.dynamic, sc.cap);
    const std::string how = " dynamic " + std::to_string(sc.dynamic) + " cap " + std::to_string(sc.cap);
    for (int floor : {1, 24}) {
      ecc::Options tuned;
      tuned.tuning.min_chunk_2d = tuned.tuning.min_chunk_3d = floor;
      for (DType dt : {DType::u8, DType::f32})
        for (const Shape& sh : {Shape::d2(515, 97), Shape::d2(1030, 1500), Shape::d3(129, 17, 13), Shape::d3(130, 64, 120)}) {
          const HostImage a = make_image(dt, sh, Pattern::random, 3000, seed++);
          const HostImage b = make_image(dt, sh, Pattern::random, 7, seed++);
          const std::string what = label(dt, sh, 3000) + " floor " + std::to_string(floor) + how;
          ecc::OptPlan plan;
          expect_same(run_plan(plan, a, true, tuned), ecc::run_seq(a, {}), what + " first");
          expect_same(run_plan(plan, b, true, tuned), ecc::run_seq(b, {}), what + " second");
          ecc::Options opt = tuned;
          opt.chunk_bytes = std::max<std::size_t>(1, a.bytes() / 7);
          opt.streams = 3;
          expect_same(ecc::run_gpu_stream(a, opt), ecc::run_seq(a, {}), what + " gpu-stream");
        }
    }
  }
}

TEST(EccGpuOpt, ConstantCheckerExtremes) {
  REPIX_NEED_GPU();
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(33, 17), Shape::d3(9, 10, 11), Shape::d2(132, 2)})
      for (Pattern p : {Pattern::constant, Pattern::checker, Pattern::extremes}) {
        const HostImage img = make_image(dt, sh, p, 0, 5);
        ecc::OptPlan plan;
        expect_same(run_plan(plan, img), ecc::run_seq(img, {}), label(dt, sh, static_cast<int>(p)));
      }
}

TEST(EccGpuOpt, ManyDistinctFloats) {
  REPIX_NEED_GPU();
  // > 1024 values, > a block's 4096-slot table, and every voxel distinct (blocks spill into the
  // global table).
  for (Shape sh : {Shape::d2(97, 31), Shape::d2(256, 130), Shape::d3(40, 33, 12)}) {
    for (Pattern p : {Pattern::random, Pattern::distinct}) {
      const HostImage img = make_image(DType::f32, sh, p, 5000, 11);
      ecc::OptPlan plan;
      expect_same(run_plan(plan, img), ecc::run_seq(img, {}), sh.str());
      EXPECT_FALSE(plan.used_fallback());
    }
  }
  const HostImage u16 = make_image(DType::u16, Shape::d2(300, 200), Pattern::distinct, 0, 3);
  ecc::OptPlan plan;
  expect_same(run_plan(plan, u16), ecc::run_seq(u16, {}), "u16 distinct");
}

TEST(EccGpuOpt, GlobalOverflowFallbackIsExact) {
  REPIX_NEED_GPU();
  for (Shape sh : {Shape::d2(70, 45), Shape::d3(21, 13, 9)}) {
    const HostImage img = make_image(DType::f32, sh, Pattern::random, 2000, 21);
    ecc::OptPlan plan;
    CudaStream s;
    plan.setup({img.dtype(), img.shape()}, {}, s.get());
    plan.set_global_capacity_for_tests(16);
    expect_same(run_plan(plan, img, false), ecc::run_seq(img, {}), "fallback " + sh.str());
    EXPECT_TRUE(plan.used_fallback());
    // The same plan again, then with a normal table: still exact, no fallback.
    expect_same(run_plan(plan, img, false), ecc::run_seq(img, {}), "fallback again " + sh.str());
    EXPECT_TRUE(plan.used_fallback());
    plan.set_global_capacity_for_tests(0);
    expect_same(run_plan(plan, img, false), ecc::run_seq(img, {}), "after " + sh.str());
    EXPECT_FALSE(plan.used_fallback());
  }
}

TEST(EccGpuOpt, PlanReuseOnTwoInputs) {
  REPIX_NEED_GPU();
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (Shape sh : {Shape::d2(131, 29), Shape::d3(17, 10, 6)}) {
      const HostImage a = make_image(dt, sh, Pattern::random, 40, 100);
      const HostImage b = make_image(dt, sh, Pattern::random, 700, 200);
      ecc::OptPlan plan;
      CudaStream s;
      plan.setup({dt, sh}, {}, s.get());
      expect_same(run_plan(plan, a, false), ecc::run_seq(a, {}), "a " + label(dt, sh, 40));
      expect_same(run_plan(plan, b, false), ecc::run_seq(b, {}), "b " + label(dt, sh, 700));
      expect_same(run_plan(plan, a, false), ecc::run_seq(a, {}), "a again " + label(dt, sh, 40));
    }
}

// The kernel-scope timer's pattern: compute() repeated without result() (each pass's finishing
// kernel overwrites the last one's read-back and empties the accumulator), then result(); then
// another input on the same plan. Every dtype; uint16 values in all 64 segments of the read-back
// and in a few; float with more distinct values than the first read-back holds (4096: the rest
// comes from device memory) and with few.
TEST(EccGpuOpt, RepeatedPassesThenResultEqualSeq) {
  REPIX_NEED_GPU();
  struct Case {
    DType dt;
    Shape sh;
    Pattern pat;
    int levels;
  };
  const Case cases[] = {
      {DType::u8, Shape::d2(131, 29), Pattern::random, 256},   {DType::u8, Shape::d3(17, 10, 6), Pattern::random, 3},
      {DType::u16, Shape::d2(300, 41), Pattern::random, 66},   {DType::u16, Shape::d3(40, 9, 7), Pattern::random, 5},
      {DType::f32, Shape::d2(131, 61), Pattern::distinct, 0},  {DType::f32, Shape::d3(23, 11, 9), Pattern::random, 40},
  };
  for (const Case& c : cases) {
    const HostImage a = make_image(c.dt, c.sh, c.pat, c.levels, 11);
    const HostImage b = make_image(c.dt, c.sh, Pattern::random, 9, 12);
    const std::string what = label(c.dt, c.sh, c.levels);
    ecc::OptPlan plan;
    CudaStream s;
    plan.setup({c.dt, c.sh}, {}, s.get());
    DeviceBuffer<unsigned char> da(a.bytes()), db(b.bytes());
    copy_to_device_sync(da.get(), a.raw(), a.bytes());
    copy_to_device_sync(db.get(), b.raw(), b.bytes());
    for (int i = 0; i < 3; ++i) plan.compute({da.get()}, s.get());
    expect_same(plan.result(s.get()), ecc::run_seq(a, {}), "a after 3 passes " + what);
    expect_same(plan.result(s.get()), ecc::run_seq(a, {}), "a asked again " + what);
    plan.compute({db.get()}, s.get());
    expect_same(plan.result(s.get()), ecc::run_seq(b, {}), "b " + what);
  }
}

// uint16 read-backs in both forms (gpu_opt_readback.hpp): every value of a segment drawn (dense),
// few of them (sparse), none, side by side in one image; then with the dense form's VCEC limit
// lowered (set_dense_limit_for_tests) to 1, so that nearly every segment is sparse, and to 3, so
// that segments with a VCEC beyond it fall back to sparse among dense ones: what int32-overflowing
// VCECs of billion-voxel images do. Each through a plan twice (its accumulator emptied by the
// finish) and end to end, 2D and 3D.
TEST(EccGpuOpt, Uint16DenseAndSparseSegmentsEqualSeq) {
  REPIX_NEED_GPU();
  struct Restore {
    ~Restore() { ecc::opt::set_dense_limit_for_tests(0); }
  } restore;
  std::mt19937 rng(31);
  for (const Shape sh : {Shape::d2(700, 397), Shape::d3(70, 61, 67)}) {
    HostImage img(DType::u16, sh);
    for (std::int64_t i = 0; i < img.size(); ++i) {
      const std::uint32_t segment = rng() % 64;
      // Segments 0 mod 3: any of their 1024 values; 1 mod 3: 5 of them; 2 mod 3: none but segment 2.
      const std::uint32_t seg = segment % 3 == 2 && segment != 2 ? segment - 1 : segment;
      const std::uint32_t in = seg % 3 == 0 ? rng() % 1024 : seg == 2 ? rng() % 1024 : (rng() % 5) * 200;
      img.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(seg * 1024 + in);
    }
    const ecc::Curve want = ecc::run_seq(img, {});
    for (const long long limit : {0LL, 1LL, 3LL}) {
      ecc::opt::set_dense_limit_for_tests(limit);
      const std::string what = sh.str() + " dense limit " + std::to_string(limit);
      ecc::OptPlan plan;
      expect_same(run_plan(plan, img), want, "plan " + what);
      expect_same(run_plan(plan, img, false), want, "plan again " + what);
      expect_same(ecc::run_gpu_opt(img, {}), want, "end to end " + what);
    }
  }
}

// A pass cut before its finish (a caller that threw between accumulate() and finish_queued())
// leaves the accumulator in use: the next reset() must empty it (the finished passes' reset()
// queues nothing).
TEST(EccGpuOpt, ResetAfterUnfinishedPassEqualSeq) {
  REPIX_NEED_GPU();
  for (DType dt : {DType::u8, DType::u16, DType::f32}) {
    const Shape sh = Shape::d2(150, 33);
    const HostImage a = make_image(dt, sh, Pattern::random, 50, 21), b = make_image(dt, sh, Pattern::random, 7, 22);
    DeviceBuffer<unsigned char> da(a.bytes()), db(b.bytes());
    copy_to_device_sync(da.get(), a.raw(), a.bytes());
    copy_to_device_sync(db.get(), b.raw(), b.bytes());
    CudaStream s;
    ecc::opt::Engine engine;
    engine.setup(dt, sh, false, ecc::OptTuning{});
    engine.reset(s.get());
    engine.accumulate(da.get(), 0, 0, slab_count(sh), s.get());  // never finished
    engine.reset(s.get());
    engine.accumulate(db.get(), 0, 0, slab_count(sh), s.get());
    engine.finish_queued(s.get());
    ecc::Curve got;
    ASSERT_TRUE(engine.collect(s.get(), got)) << dtype_name(dt);
    expect_same(got, ecc::run_seq(b, {}), "b after an unfinished pass over a, " + dtype_name(dt));
  }
}

TEST(EccGpuOpt, RegisteredAndEndToEnd) {
  REPIX_NEED_GPU();
  const ecc::Variant& v = ecc::find_variant("gpu-opt");
  EXPECT_TRUE(v.gpu);
  ASSERT_TRUE(v.make_plan);
  const HostImage img = make_image(DType::f32, Shape::d3(30, 20, 10), Pattern::random, 90, 8);
  expect_same(v.run(img, {}), ecc::run_seq(img, {}), "run");
}

TEST(EccGpuOpt, LargeInputs) {
  REPIX_NEED_GPU();
  if (!large_tests()) GTEST_SKIP() << "set REPIX_LARGE_TESTS=1";
  for (DType dt : {DType::u8, DType::f32})
    for (Shape sh : {Shape::d2(2048, 2047), Shape::d3(256, 255, 129)}) {
      const HostImage img = make_image(dt, sh, Pattern::random, 256, 77);
      ecc::OptPlan plan;
      expect_same(run_plan(plan, img), ecc::run_omp(img, {}), label(dt, sh, 256));
    }
  const HostImage img = make_image(DType::f32, Shape::d2(3000, 3000), Pattern::distinct, 0, 78);
  ecc::OptPlan plan;
  expect_same(run_plan(plan, img), ecc::run_omp(img, {}), "9M distinct floats");
  EXPECT_TRUE(plan.used_fallback());
}

}  // namespace
}  // namespace repix
