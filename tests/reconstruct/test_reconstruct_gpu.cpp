// Every registered GPU reconstruct variant against a definitional oracle (iterate the elementary
// geodesic dilation + min with the mask until nothing changes), exactly, end to end and through its
// plan; one test per variant (ReconstructGpuVariant.*/<id>, ReconstructGpuPlan.*/<id>). Skips
// where there is no GPU. Sizes stay small so the suite is quick under compute-sanitizer memcheck
// and racecheck.
//
// Floats are compared by value (-0 == +0): which zero a pixel ends with depends on the order in
// which equal values propagate, and the GPU orders -0 just below +0.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "reconstruct/reconstruct.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using reconstruct::Options;
using reconstruct::Result;
using reconstruct::Variant;

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

std::vector<std::string> gpu_variants() { return test::variant_ids(reconstruct::variants(), test::Device::gpu); }

// The GPU variants with a device plan (all but multi-device: host-resident by design, its own tests).
std::vector<std::string> plan_variants() {
  return test::variant_ids(reconstruct::variants(), test::Device::gpu, [](const Variant& v) { return bool(v.make_plan); });
}

bool is_queue_variant(const Variant& v) { return v.id.rfind("gpu-queue-", 0) == 0; }

class ReconstructGpuVariant : public test::VariantTest {
 protected:
  const Variant& variant() const { return reconstruct::find_variant(GetParam()); }
};
REPIX_INSTANTIATE_VARIANTS(ReconstructGpuVariant, gpu_variants());

class ReconstructGpuPlan : public ReconstructGpuVariant {};
REPIX_INSTANTIATE_VARIANTS(ReconstructGpuPlan, plan_variants());

// ---- the oracle -----------------------------------------------------------------------------------

template <class T>
std::vector<T> oracle(const T* marker, const T* mask, std::int64_t nx, std::int64_t ny, int conn) {
  const std::int64_t n = nx * ny;
  std::vector<T> J(n), K(n);
  for (std::int64_t i = 0; i < n; ++i) J[i] = mask[i] < marker[i] ? mask[i] : marker[i];
  for (bool changed = true; changed;) {
    changed = false;
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::int64_t p = y * nx + x;
        T m = J[p];
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if (conn == 4 && dx != 0 && dy != 0) continue;
            const std::int64_t qx = x + dx, qy = y + dy;
            if (qx < 0 || qy < 0 || qx >= nx || qy >= ny) continue;
            if (J[qy * nx + qx] > m) m = J[qy * nx + qx];
          }
        K[p] = mask[p] < m ? mask[p] : m;
        if (!(K[p] == J[p])) changed = true;
      }
    J.swap(K);
  }
  return J;
}

// ---- inputs -----------------------------------------------------------------------------------------

constexpr int kLevels = 16;

// Level -> value, non-decreasing in the level; floats include negatives and both zeros (equal),
// -0 before +0 so that a lower level is never above a higher one by value or by bits.
template <class T> T value_of(int level);
template <> std::uint8_t value_of<std::uint8_t>(int level) { return static_cast<std::uint8_t>(level * 17); }
template <> std::uint16_t value_of<std::uint16_t>(int level) { return static_cast<std::uint16_t>(level * 4000 + 7); }
template <> float value_of<float>(int level) {
  static const float v[kLevels] = {-3.0e38f, -7.25f, -1.0f, -0.0f, -0.0f, 0.0f, 0.0f, 0.25f,
                                   1.0f,     1.5f,   3.0f,  10.0f, 1e5f, 2e9f, 3e20f, 3.0e38f};
  return v[level];
}

struct Pair {
  HostImage marker, mask;
  std::string what;
};

enum class Kind { random, frame, maze };

// random: mask of `levels` random levels; the marker is mostly the lowest value, sometimes a random
// level (clipped to the mask) or the mask itself. frame: the marker equals the mask on the image
// border and is lowest inside (long propagation paths). maze: a serpentine corridor (even rows, one
// connecting pixel alternately at the right and left ends) of random high levels between walls at
// the lowest level; the marker is the mask at the corridor's start only (the longest path there is).
template <class T>
Pair make_pair(const Shape& sh, Kind kind, int levels, std::uint32_t seed) {
  Pair p{HostImage(dtype_of<T>(), sh), HostImage(dtype_of<T>(), sh), ""};
  T* mk = p.marker.data<T>();
  T* ms = p.mask.data<T>();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> lev(0, levels - 1), hi(kLevels / 2, kLevels - 1), pct(0, 99);
  const std::int64_t nx = sh.nx, ny = sh.ny;
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::int64_t i = y * nx + x;
      switch (kind) {
        case Kind::random: {
          const int m = lev(rng), r = pct(rng);
          ms[i] = value_of<T>(m);
          mk[i] = r < 5 ? ms[i] : r < 25 ? value_of<T>(std::min(m, lev(rng))) : value_of<T>(0);
          break;
        }
        case Kind::frame: {
          ms[i] = value_of<T>(1 + lev(rng) % (kLevels - 1));
          const bool border = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
          mk[i] = border ? ms[i] : value_of<T>(0);
          break;
        }
        case Kind::maze: {
          const bool corridor = y % 2 == 0 || (y % 4 == 1 && x == nx - 1) || (y % 4 == 3 && x == 0);
          ms[i] = corridor ? value_of<T>(hi(rng)) : value_of<T>(0);
          mk[i] = i == 0 ? ms[i] : value_of<T>(0);
          break;
        }
      }
    }
  std::ostringstream o;
  o << dtype_name(dtype_of<T>()) << " " << sh.str() << " "
    << (kind == Kind::random ? "random" : kind == Kind::frame ? "frame" : "maze") << " levels=" << levels
    << " seed=" << seed;
  p.what = o.str();
  return p;
}

Pair make_pair(DType dt, const Shape& sh, Kind kind, int levels, std::uint32_t seed) {
  switch (dt) {
    case DType::u8: return make_pair<std::uint8_t>(sh, kind, levels, seed);
    case DType::u16: return make_pair<std::uint16_t>(sh, kind, levels, seed);
    case DType::f32: break;
  }
  return make_pair<float>(sh, kind, levels, seed);
}

// Empty string when `got` equals the oracle's reconstruction of `p`, else the first difference.
std::string compare_with_oracle(const Pair& p, const HostImage& got, int conn) {
  if (got.dtype() != p.mask.dtype() || got.shape() != p.mask.shape()) return "wrong dtype or shape";
  return visit_image(p.mask, [&](auto k) -> std::string {
    using T = std::remove_const_t<std::remove_reference_t<decltype(k.data[0])>>;
    const std::vector<T> want = oracle(p.marker.data<T>(), k.data, k.shape.nx, k.shape.ny, conn);
    const T* g = got.data<T>();
    for (std::int64_t i = 0; i < k.size(); ++i)
      if (!(g[i] == want[i])) {
        std::ostringstream o;
        o << "pixel (" << i % k.shape.nx << ", " << i / k.shape.nx << "): got " << +g[i] << ", want "
          << +want[i];
        return o.str();
      }
    return "";
  });
}

// Runs the variant end to end on `p` and compares with the oracle.
void expect_match(const Variant& v, const Pair& p, const Options& opt) {
  Result r;
  try {
    r = v.run(p.marker, p.mask, opt);
  } catch (const std::exception& e) {
    ADD_FAILURE() << v.id << " threw on " << p.what << " conn=" << opt.connectivity << ": " << e.what();
    return;
  }
  const std::string diff = compare_with_oracle(p, r.image, opt.connectivity);
  EXPECT_EQ(diff, "") << v.id << " on " << p.what << " conn=" << opt.connectivity;
  EXPECT_GE(r.stats.passes, 1) << v.id << " on " << p.what;
  EXPECT_GE(r.stats.total_queued, r.stats.initially_queued) << v.id;
}

// Off the 32x8 launch blocks, the 32x32 tiles of gpu-opt and the 256-thread queue blocks.
std::vector<Shape> edge_shapes() {
  return {Shape::d2(1, 1),   Shape::d2(1, 77),  Shape::d2(77, 1),  Shape::d2(33, 17),
          Shape::d2(31, 33), Shape::d2(32, 32), Shape::d2(33, 31), Shape::d2(64, 64),
          Shape::d2(65, 63), Shape::d2(2, 129), Shape::d2(257, 255)};
}

TEST(ReconstructGpu, OracleSelfCheck) {
  // Mask 5 3 4 1 6, marker 0 4 0 0 0 (above the mask at pixel 1): the start is min = 0 3 0 0 0;
  // the 3 spreads left (min(3, 5)) and right (min(3, 4), then min(3, 1) = 1, then min(1, 6) = 1).
  const std::uint8_t mask[] = {5, 3, 4, 1, 6}, marker[] = {0, 4, 0, 0, 0};
  const std::vector<std::uint8_t> want = {3, 3, 3, 1, 1};
  EXPECT_EQ(oracle(marker, mask, 5, 1, 4), want);
  EXPECT_EQ(oracle(marker, mask, 5, 1, 8), want);
}

TEST_P(ReconstructGpuVariant, RandomEdgeShapes) {
  REPIX_REQUIRE_GPU();
  std::uint32_t seed = 1;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : edge_shapes())
      for (int conn : {4, 8}) {
        Options opt;
        opt.connectivity = conn;
        expect_match(variant(), make_pair(dt, sh, Kind::random, seed % 2 ? 3 : kLevels, seed), opt);
        ++seed;
      }
}

TEST_P(ReconstructGpuVariant, LongPathsFrameAndMaze) {
  REPIX_REQUIRE_GPU();
  for (int conn : {4, 8}) {
    Options opt;
    opt.connectivity = conn;
    expect_match(variant(), make_pair(DType::u8, Shape::d2(200, 150), Kind::frame, kLevels, 11), opt);
    expect_match(variant(), make_pair(DType::f32, Shape::d2(97, 33), Kind::frame, kLevels, 12), opt);
    expect_match(variant(), make_pair(DType::u16, Shape::d2(61, 53), Kind::maze, kLevels, 13), opt);
    expect_match(variant(), make_pair(DType::f32, Shape::d2(33, 65), Kind::maze, kLevels, 14), opt);
  }
}

TEST_P(ReconstructGpuVariant, ZerosOfBothSigns) {
  REPIX_REQUIRE_GPU();
  for (const Shape& sh : {Shape::d2(1, 1), Shape::d2(45, 33), Shape::d2(64, 1)}) {
    Pair p{HostImage(DType::f32, sh), HostImage(DType::f32, sh), "zeros f32 " + sh.str()};
    for (std::int64_t i = 0; i < sh.size(); ++i) {
      p.mask.data<float>()[i] = i % 2 ? -0.0f : 0.0f;
      p.marker.data<float>()[i] = i % 3 ? -2.5e10f : -0.0f;
    }
    for (int conn : {4, 8}) {
      Options opt;
      opt.connectivity = conn;
      expect_match(variant(), p, opt);
    }
  }
}

// Options::clip: a marker above the mask is clipped to it (the variants start from the min).
TEST_P(ReconstructGpuVariant, ClippedMarker) {
  REPIX_REQUIRE_GPU();
  Pair p = make_pair(DType::u16, Shape::d2(70, 45), Kind::random, kLevels, 21);
  std::mt19937 rng(5);
  for (std::int64_t i = 0; i < p.marker.size(); ++i)
    if (rng() % 4 == 0) p.marker.data<std::uint16_t>()[i] = 65535;
  Options opt;
  opt.clip = true;
  expect_match(variant(), p, opt);
}

// Queue capacities far below the initial queue: every queue variant overflows, re-seeds from the
// current state and still gets the exact result; the others ignore the capacity.
TEST_P(ReconstructGpuVariant, TinyQueueCapacityOverflowsAndStaysExact) {
  REPIX_REQUIRE_GPU();
  const Variant& v = variant();
  std::vector<Pair> pairs;
  // Small: with capacity 1 each episode may raise only a few pixels.
  pairs.push_back(make_pair(DType::u8, Shape::d2(24, 17), Kind::random, kLevels, 31));
  pairs.push_back(make_pair(DType::f32, Shape::d2(19, 13), Kind::frame, kLevels, 32));
  for (const Pair& p : pairs)
    for (std::int64_t cap : {1, 3, 16})
      for (int conn : {4, 8}) {
        Options opt;
        opt.connectivity = conn;
        opt.queue_capacity = cap;
        opt.raster_scans = 0;  // keep the initial queue large
        Result r;
        try {
          r = v.run(p.marker, p.mask, opt);
        } catch (const std::exception& e) {
          ADD_FAILURE() << v.id << " threw on " << p.what << " capacity " << cap << ": " << e.what();
          continue;
        }
        EXPECT_EQ(compare_with_oracle(p, r.image, conn), "")
            << v.id << " on " << p.what << " capacity " << cap << " conn=" << conn;
        if (is_queue_variant(v))
          EXPECT_GT(r.stats.overflow_reruns, 0) << v.id << " on " << p.what << " capacity " << cap;
      }
}

// Several raster passes before the queue (the Table 1 setting) change nothing in the result.
TEST_P(ReconstructGpuVariant, RasterScanCounts) {
  REPIX_REQUIRE_GPU();
  const Pair p = make_pair(DType::u8, Shape::d2(90, 70), Kind::random, kLevels, 41);
  for (int scans : {0, 2, 5}) {
    Options opt;
    opt.raster_scans = scans;
    expect_match(variant(), p, opt);
  }
}

// The queue kernels' launch (Options::queue_blocks_per_sm: the paper's one block per SM, a few, or
// as many as fit) changes how the initial queue is split, never the result; queue variants time
// their wavefront phase (>= 0, > 0 when something propagated), the others report -1. One test
// per launch and variant (compute-sanitizer runs one test per process, in parallel).
void expect_queue_launches_and_wavefront_time(const Variant& v, int blocks_per_sm) {
  const Pair pairs[] = {make_pair(DType::u8, Shape::d2(300, 200), Kind::frame, kLevels, 61),
                        make_pair(DType::f32, Shape::d2(65, 63), Kind::maze, kLevels, 62),
                        make_pair(DType::u16, Shape::d2(257, 3), Kind::random, kLevels, 63)};
  for (const Pair& p : pairs)
    for (int conn : {4, 8}) {
      Options opt;
      opt.connectivity = conn;
      opt.queue_blocks_per_sm = blocks_per_sm;
      const Result r = v.run(p.marker, p.mask, opt);
      const std::string what = v.id + " on " + p.what + " blocks/SM " + std::to_string(blocks_per_sm) +
                               " conn=" + std::to_string(conn);
      EXPECT_EQ(compare_with_oracle(p, r.image, conn), "") << what;
      if (is_queue_variant(v)) {
        EXPECT_GE(r.stats.wavefront_ms, 0.0) << what;
        if (r.stats.total_queued > r.stats.initially_queued) EXPECT_GT(r.stats.wavefront_ms, 0.0) << what;
      } else {
        EXPECT_EQ(r.stats.wavefront_ms, -1.0) << what;
      }
    }
  Options bad;
  bad.queue_blocks_per_sm = -1;
  if (is_queue_variant(v)) EXPECT_THROW(v.run(pairs[0].marker, pairs[0].mask, bad), Error) << v.id;
}

TEST_P(ReconstructGpuVariant, QueueLaunchesAndWavefrontTimePer1) {
  REPIX_REQUIRE_GPU();
  expect_queue_launches_and_wavefront_time(variant(), 1);
}

TEST_P(ReconstructGpuVariant, QueueLaunchesAndWavefrontTimePer2) {
  REPIX_REQUIRE_GPU();
  expect_queue_launches_and_wavefront_time(variant(), 2);
}

TEST_P(ReconstructGpuVariant, QueueLaunchesAndWavefrontTimeAsManyAsFit) {
  REPIX_REQUIRE_GPU();
  expect_queue_launches_and_wavefront_time(variant(), 0);
}

// One plan, set up once, computes twice on different inputs (and the result of each is exact).
TEST_P(ReconstructGpuPlan, PlanReuse) {
  REPIX_REQUIRE_GPU();
  const Variant& v = variant();
  const Shape sh = Shape::d2(70, 50);
  const Pair a = make_pair(DType::u16, sh, Kind::random, kLevels, 51);
  const Pair b = make_pair(DType::u16, sh, Kind::frame, kLevels, 52);
  CudaStream stream;
  auto plan = v.make_plan();
  Options opt;
  opt.connectivity = 8;
  plan->setup({DType::u16, sh}, opt, stream.get());
  DeviceBuffer<std::uint16_t> marker(static_cast<std::size_t>(sh.size())), mask(static_cast<std::size_t>(sh.size()));
  for (const Pair* p : {&a, &b, &a}) {
    REPIX_CUDA(cudaMemcpyAsync(marker.get(), p->marker.raw(), p->marker.bytes(), cudaMemcpyHostToDevice, stream.get()));
    REPIX_CUDA(cudaMemcpyAsync(mask.get(), p->mask.raw(), p->mask.bytes(), cudaMemcpyHostToDevice, stream.get()));
    plan->compute({marker.get(), mask.get()}, stream.get());
    const Result r = plan->result(stream.get());
    EXPECT_EQ(compare_with_oracle(*p, r.image, 8), "") << v.id << " plan on " << p->what;
  }
}

// Refused in setup with one clear line, before anything is allocated (so no GPU is needed).
TEST_P(ReconstructGpuPlan, PlanSetupRejectsWhatItCannotIndex) {
  const Variant& v = variant();
  auto plan = v.make_plan();
  Options opt;
  EXPECT_THROW(plan->setup({DType::u8, Shape::d2(70000, 70000)}, opt, nullptr), Error) << v.id;
  EXPECT_THROW(plan->setup({DType::u8, Shape::d3(4, 4, 4)}, opt, nullptr), Error) << v.id;
  opt.connectivity = 6;
  EXPECT_THROW(plan->setup({DType::u8, Shape::d2(4, 4)}, opt, nullptr), Error) << v.id;
  EXPECT_THROW(plan->compute({nullptr, nullptr}, nullptr), Error) << v.id << ": compute before setup";
}

TEST(ReconstructGpu, RegistryHasTheLadderInOrder) {
  const std::vector<std::string> want = {"gpu-naive",      "gpu-sr",       "gpu-queue-atomic", "gpu-queue-warp-atomic",
                                         "gpu-queue-scan", "gpu-queue-tq", "gpu-opt", "multi-device"};
  EXPECT_EQ(gpu_variants(), want);
  // Every one but multi-device (host-resident by design) has a plan, so the plan tests run on it.
  std::vector<std::string> with_plans = want;
  with_plans.pop_back();
  EXPECT_EQ(plan_variants(), with_plans);
}

}  // namespace
}  // namespace repix
