// The edt queue ladder (gpu-queue-atomic / -warp-atomic / -scan / -tq) and its tile API (TilePropagator):
// check_propagation vs seq-exact on seeded inputs and edge shapes (1x1, 1xN, Nx1, one off the
// 256-thread blocks and the 32x8 pixel blocks, non-square), end to end and through the plan,
// with forced tiny queue capacities (reruns > 0, still right); the tile API on windows of a
// larger image (global sites, nothing written outside the window's buffer) and windows combined
// by border rounds. The ladder's tests run once per variant (EdtGpuQueueVariant.*/<id>), the tile
// API's once per ladder variant on that variant's queue policy (EdtGpuQueueTile.*/<id>). GPU
// tests skip where there is no GPU; sizes stay small for compute-sanitizer memcheck and racecheck.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_tile.hpp"
#include "edt/propagate.hpp"
#include "edt/test_images.hpp"
#include "edt/tile_test_support.hpp"
#include "edt/verify.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

const char* const kLadder[] = {"gpu-queue-atomic", "gpu-queue-warp-atomic", "gpu-queue-scan", "gpu-queue-tq"};
const iwpp::QueuePolicy kPolicies[] = {iwpp::QueuePolicy::atomic, iwpp::QueuePolicy::warp_atomic,
                                       iwpp::QueuePolicy::scan, iwpp::QueuePolicy::thread_queue};

std::string policy_name(iwpp::QueuePolicy p) {
  switch (p) {
    case iwpp::QueuePolicy::atomic: return "atomic";
    case iwpp::QueuePolicy::warp_atomic: return "warp_atomic";
    case iwpp::QueuePolicy::scan: return "scan";
    case iwpp::QueuePolicy::thread_queue: return "thread_queue";
  }
  return "?";
}

std::vector<HostImage> ladder_inputs() {
  std::vector<HostImage> v;
  const std::pair<int, int> shapes[] = {{1, 1},   {1, 300},  {300, 1},  {255, 7},   {256, 9}, {257, 5},
                                        {31, 9},  {33, 7},   {255, 255}, {257, 257}, {1023, 17}, {17, 1025}};
  std::uint64_t seed = 100;
  for (auto [nx, ny] : shapes) {
    v.push_back(test::sparse_image(nx, ny, nx * ny > 4000 ? 0.002 : 0.05, ++seed));
    v.push_back(test::const_image(nx, ny, 0));    // all background
    v.push_back(test::const_image(nx, ny, 255));  // no background: +inf, no site
    HostImage one = test::const_image(nx, ny, 255);
    one.data<std::uint8_t>()[one.size() - 1] = 0;  // all foreground but one (a corner): the longest waves
    v.push_back(std::move(one));
  }
  for (std::uint64_t s = 1; s <= 3; ++s)
    v.push_back(datasets::generate("blobs:300x200:radius=12:fill=0.45:seed=" + std::to_string(s)));
  v.push_back(datasets::generate("blobs:257x511:radius=40:fill=0.9:seed=4"));
  v.push_back(test::tissue_mask(384, 256, 60, 5));
  v.push_back(datasets::generate("sparse:500x300:density=0.0005:seed=6"));
  HostImage f(DType::f32, Shape::d2(130, 70));
  HostImage u(DType::u16, Shape::d2(130, 70));
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const bool bg = (i * 2654435761u) % 997 < 5;
    f.data<float>()[i] = bg ? -0.0f : 2.5f;  // -0 is background too
    u.data<std::uint16_t>()[i] = bg ? 0 : 700;
  }
  v.push_back(std::move(f));
  v.push_back(std::move(u));
  return v;
}

// The registry's queue ladder (the GPU variants gpu-queue-*, in registry order: kLadder).
std::vector<std::string> ladder() {
  return test::variant_ids(edt::variants(), test::Device::gpu,
                           [](const edt::Variant& v) { return v.id.rfind("gpu-queue-", 0) == 0; });
}

class EdtGpuQueueVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EdtGpuQueueVariant, ladder());

// The queue policy a ladder variant runs on (each gpu_queue_*.cu passes its policy to
// make_queue_variant; the registry does not expose it).
iwpp::QueuePolicy policy_of(const std::string& id) {
  if (id == "gpu-queue-atomic") return iwpp::QueuePolicy::atomic;
  if (id == "gpu-queue-warp-atomic") return iwpp::QueuePolicy::warp_atomic;
  if (id == "gpu-queue-scan") return iwpp::QueuePolicy::scan;
  if (id == "gpu-queue-tq") return iwpp::QueuePolicy::thread_queue;
  throw Error("no queue policy known for the edt variant " + id);
}

void expect_propagation_ok(const HostImage& img, const edt::Result& got, const std::string& what) {
  const edt::Result exact = edt::run_seq_exact(img, {});
  const edt::Check c = edt::check_propagation(img, exact, got);
  EXPECT_TRUE(c.ok) << what << " on " << test::describe(img) << ": " << c.first_violation;
  EXPECT_LE(c.max_abs, edt::kMaxPropagationError) << what << " on " << test::describe(img);
}

TEST(EdtGpuQueue, RegistryHasTheLadderBeforeTheExactVariants) {
  std::vector<std::string> ids;
  for (const edt::Variant& v : edt::variants())
    if (v.gpu) ids.push_back(v.id);
  const std::vector<std::string> want = {"gpu-queue-atomic", "gpu-queue-warp-atomic", "gpu-queue-scan", "gpu-queue-tq", "gpu-exact-rowfill",
                                         "gpu-exact-envelope", "gpu-opt", "multi-device"};
  EXPECT_EQ(ids, want);
  EXPECT_EQ(ladder(), std::vector<std::string>(std::begin(kLadder), std::end(kLadder)));
  // The tile tests, one per ladder variant, cover every policy once.
  std::vector<iwpp::QueuePolicy> policies;
  for (const std::string& id : ladder()) policies.push_back(policy_of(id));
  EXPECT_EQ(policies, std::vector<iwpp::QueuePolicy>(std::begin(kPolicies), std::end(kPolicies)));
  for (const char* id : kLadder) {
    EXPECT_FALSE(edt::find_variant(id).exact) << id;  // checked by properties, like seq
    EXPECT_TRUE(edt::find_variant(id).make_plan) << id;
  }
}

TEST_P(EdtGpuQueueVariant, PassesPropertyChecksEndToEnd) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  for (const HostImage& img : ladder_inputs()) {
    const edt::Result seq = edt::run_seq(img, {});
    const edt::Result r = edt::find_variant(id).run(img, {});
    expect_propagation_ok(img, r, id);
    // The seeds are Algorithm 3's initial queue, whatever the order of the rest.
    EXPECT_EQ(r.stats.initially_queued, seq.stats.initially_queued) << id << " on " << test::describe(img);
    EXPECT_GE(r.stats.total_queued, r.stats.initially_queued) << id;
  }
}

// Capacities far below the initial queue: every episode overflows until the re-seeded ones
// finish the job; the result must still pass, and the reruns must be counted.
TEST_P(EdtGpuQueueVariant, TinyQueueCapacityOverflowsAndStillPasses) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  std::vector<HostImage> imgs;
  imgs.push_back(test::sparse_image(40, 23, 0.03, 11));
  imgs.push_back(datasets::generate("blobs:37x29:radius=5:fill=0.5:seed=12"));
  HostImage corner = test::const_image(33, 9, 255);
  corner.data<std::uint8_t>()[0] = 0;
  imgs.push_back(std::move(corner));
  for (const HostImage& img : imgs) {
    const edt::Result seq = edt::run_seq(img, {});
    for (std::int64_t cap : {1, 3, 16}) {
      edt::Options o;
      o.queue_capacity = cap;
      const std::string what = id + " capacity " + std::to_string(cap);
      const edt::Result r = edt::find_variant(id).run(img, o);
      expect_propagation_ok(img, r, what);
      // One seed fits, the rest must be re-seeded (the corner image has a single seed, but
      // its waves still overflow one-element block queues).
      EXPECT_GT(r.stats.overflow_reruns, 0) << what << " on " << test::describe(img);
      EXPECT_LE(r.stats.initially_queued, cap) << what;
      EXPECT_LE(r.stats.initially_queued, seq.stats.initially_queued) << what;
    }
  }
}

TEST_P(EdtGpuQueueVariant, PlansReusedAcrossShapesWithAndWithoutSites) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  std::vector<HostImage> imgs;
  imgs.push_back(test::sparse_image(257, 31, 0.01, 21));
  imgs.push_back(test::const_image(1, 1, 0));
  imgs.push_back(datasets::generate("blobs:100x300:radius=9:fill=0.5:seed=22"));
  imgs.push_back(test::sparse_image(1023, 17, 0.002, 23));
  auto plan = edt::find_variant(id).make_plan();
  CudaStream stream;
  for (bool sites : {true, false}) {
    for (const HostImage& img : imgs) {
      DeviceBuffer<unsigned char> d(img.bytes());
      copy_to_device_sync(d.get(), img.raw(), img.bytes());
      edt::Options o;
      o.want_sites = sites;
      plan->setup({img.dtype(), img.shape()}, o, stream.get());
      plan->compute({d.get()}, stream.get());
      plan->compute({d.get()}, stream.get());  // twice: nothing may depend on a previous run
      const edt::Result r = plan->result(stream.get());
      EXPECT_EQ(r.sites.empty(), !sites) << id;
      expect_propagation_ok(img, r, id + " plan" + (sites ? "" : " without sites"));
    }
  }
}

// Refused in setup with one clear line, before anything is allocated (so no GPU is needed).
TEST_P(EdtGpuQueueVariant, PlanSetupRejectsWhatItCannotIndex) {
  const std::string& id = GetParam();
  auto plan = edt::find_variant(id).make_plan();
  edt::Options o;
  EXPECT_THROW(plan->setup({DType::u8, Shape::d2(70000, 70000)}, o, nullptr), Error) << id;  // > 2^32-1 pixels
  EXPECT_THROW(plan->setup({DType::u8, Shape::d2(std::int64_t(1) << 31, 1)}, o, nullptr), Error) << id;
  EXPECT_THROW(plan->setup({DType::u8, Shape::d3(4, 4, 4)}, o, nullptr), Error) << id;
  EXPECT_THROW(plan->compute({nullptr}, nullptr), Error) << id << ": compute before setup";
  EXPECT_THROW(plan->result(nullptr), Error) << id << ": result before compute";
}

// Likewise for the tile API.
TEST(EdtGpuQueue, TileSetupRejectsWhatItCannotIndex) {
  edt::TilePropagator tile;
  EXPECT_THROW(tile.setup(65536, 65536, iwpp::QueuePolicy::scan), Error);  // 2^32 pixels
  EXPECT_THROW(tile.setup(0, 5, iwpp::QueuePolicy::scan), Error);
  EXPECT_THROW(tile.propagate_frontier({0, 0, 1, 1}, nullptr, nullptr), Error) << "before setup";
}

TEST_P(EdtGpuQueueVariant, LargeBlobsAndSparse) {
  REPIX_REQUIRE_GPU();
  const std::string& id = GetParam();
  for (const char* spec : {"blobs:1024x768:radius=24:fill=0.45:seed=1", "sparse:768x1024:density=0.0002:seed=2"}) {
    const HostImage img = datasets::generate(spec);
    expect_propagation_ok(img, edt::find_variant(id).run(img, {}), id);
  }
}

// ---- the tile API -----------------------------------------------------------------------------------

constexpr std::int64_t kGuard = 1024;                // sites on each side of a window's buffer
constexpr std::int64_t kPoison = 0x5a5a5a5a5a5a5a5all;  // never a packed site of these images

// A window's sites on the device between two poisoned guard zones.
class GuardedSites {
 public:
  explicit GuardedSites(std::int64_t n) : n_(n), buf_(static_cast<std::size_t>(n + 2 * kGuard)) {
    std::vector<std::int64_t> poison(buf_.size(), kPoison);
    copy_to_device_sync(buf_.get(), poison.data(), buf_.bytes());
  }
  std::int64_t* window() { return buf_.get() + kGuard; }
  void upload(const std::vector<std::int64_t>& sites) {
    copy_to_device_sync(window(), sites.data(), static_cast<std::size_t>(n_) * sizeof(std::int64_t));
  }
  // The window's sites; fails the test if a guard was written.
  std::vector<std::int64_t> download(const std::string& what) const {
    std::vector<std::int64_t> all(buf_.size());
    REPIX_CUDA(cudaMemcpy(all.data(), buf_.get(), buf_.bytes(), cudaMemcpyDeviceToHost));
    std::int64_t touched = 0;
    for (std::int64_t i = 0; i < kGuard; ++i) touched += (all[i] != kPoison) + (all[kGuard + n_ + i] != kPoison);
    EXPECT_EQ(touched, 0) << what << ": written outside the window";
    return {all.begin() + kGuard, all.begin() + kGuard + n_};
  }

 private:
  std::int64_t n_;
  DeviceBuffer<std::int64_t> buf_;
};

template <class T>
DeviceBuffer<T> to_device(const T* p, std::size_t n) {
  DeviceBuffer<T> d(n);
  if (n) copy_to_device_sync(d.get(), p, n * sizeof(T));
  return d;
}

std::int64_t pixels(const edt::Window& w) { return (w.x1 - w.x0) * (w.y1 - w.y0); }

// The driver's window propagator on a TilePropagator (device copies in and out per call, with
// guards around the window's buffer).
test::WindowPropagator gpu_window_propagator(edt::TilePropagator& tile, const HostImage& img, CudaStream& stream) {
  test::WindowPropagator p;
  const std::int64_t nx = img.shape().nx, ny = img.shape().ny;
  p.init = [&tile, &stream, nx, ny](const edt::Window& w, const HostImage& in) {
    DeviceBuffer<unsigned char> d_in = to_device(static_cast<const unsigned char*>(in.raw()), in.bytes());
    GuardedSites sites(pixels(w));
    tile.init_and_propagate(d_in.get(), in.dtype(), w, nx, ny, sites.window(), stream.get());
    return sites.download("init " + test::window_name(w));
  };
  p.propagate_from = [&tile, &stream](const edt::Window& w, std::vector<std::int64_t>& host_sites,
                                      const std::vector<std::uint32_t>& seeds) {
    GuardedSites sites(pixels(w));
    sites.upload(host_sites);
    DeviceBuffer<std::uint32_t> d_seeds = to_device(seeds.data(), seeds.size());
    tile.propagate_from(d_seeds.get(), static_cast<std::int64_t>(seeds.size()), w, sites.window(), stream.get());
    host_sites = sites.download("border round " + test::window_name(w));
  };
  return p;
}

// The tile tests run once per ladder variant, on its queue policy (one test each: the tiny
// capacities make thousands of re-seeded episodes, which compute-sanitizer runs one test per
// process, in parallel).
class EdtGpuQueueTile : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(EdtGpuQueueTile, ladder());

// One window of a larger image: global sites of background pixels inside the window, a fixed
// point inside it, seeded like the CPU's init_window on the same window, nothing written
// outside the window's buffer; propagate_frontier after knocking sites out restores a fixed point.
TEST_P(EdtGpuQueueTile, WindowOfALargerImage) {
  REPIX_REQUIRE_GPU();
  const HostImage img = datasets::generate("blobs:300x200:radius=9:fill=0.5:seed=31");
  const std::vector<std::uint8_t> bg = edt::background_mask(img, 1);
  const edt::Window windows[] = {{37, 21, 190, 150}, {0, 0, 1, 200}, {299, 199, 300, 200}, {3, 150, 300, 151},
                                 {44, 0, 257, 200}};
  const iwpp::QueuePolicy policy = policy_of(GetParam());
  for (std::int64_t cap : {0, 5}) {
    edt::TilePropagator tile;
    tile.setup(260, 200, policy, cap);  // windows of up to 52000 pixels
    CudaStream stream;
    const test::WindowPropagator p = gpu_window_propagator(tile, img, stream);
    for (const edt::Window& w : windows) {
      const std::string what = policy_name(policy) + " capacity " + std::to_string(cap) + " " + test::window_name(w);
      tile.reset_stats();
      std::vector<std::int64_t> sites = p.init(w, test::window_input(img, w));
      EXPECT_EQ(test::window_fixed_point_violation(img, w, sites), "") << what;
      std::vector<std::int64_t> vr(bg.size());
      edt::Fifo q;
      const std::int64_t contour = edt::init_window(bg.data(), img.shape().nx, img.shape().ny, w, vr.data(), q);
      if (cap == 0) EXPECT_EQ(tile.stats().initially_queued, contour) << what;
      if (cap > 0 && contour > cap) EXPECT_GT(tile.stats().overflow_reruns, 0) << what;
      // Knock out every third foreground pixel's site (a valid partial state: sites only
      // improve from there) and let the frontier bring the window back to a fixed point.
      for (std::size_t i = 0; i < sites.size(); i += 3)
        if (sites[i] != edt::kNoSite && edt::sq_to_site(w.x0 + static_cast<std::int64_t>(i) % (w.x1 - w.x0),
                                                        w.y0 + static_cast<std::int64_t>(i) / (w.x1 - w.x0), sites[i]) > 0)
          sites[i] = edt::kNoSite;
      GuardedSites d(pixels(w));
      d.upload(sites);
      tile.propagate_frontier(w, d.window(), stream.get());
      EXPECT_EQ(test::window_fixed_point_violation(img, w, d.download(what + " frontier")), "") << what << " frontier";
    }
  }
}

// Windows combined by border rounds through the tile API (as the multi-device engine does) pass
// check_propagation on the whole image; with tiny capacities too (propagate_from overflows).
TEST_P(EdtGpuQueueTile, WindowsWithBorderRoundsPassPropertyChecks) {
  REPIX_REQUIRE_GPU();
  std::vector<test::Split> splits;
  splits.push_back({datasets::generate("blobs:300x200:radius=11:fill=0.45:seed=41"), {0, 128, 300}, {0, 77, 200}});
  splits.push_back({datasets::generate("sparse:260x190:density=0.0008:seed=42"), {0, 1, 100, 101, 259, 260}, {0, 95, 190}});
  splits.push_back({test::tissue_mask(256, 256, 70, 43), {0, 255, 256}, {0, 17, 256}});
  for (const test::Split& s : splits) {
    const HostImage& img = s.img;
    const edt::Result exact = edt::run_seq_exact(img, {});
    const iwpp::QueuePolicy policy = policy_of(GetParam());
    for (std::int64_t cap : {0, 2}) {
      edt::TilePropagator tile;
      tile.setup(img.shape().nx, img.shape().ny, policy, cap);
      CudaStream stream;
      const test::TiledRun run = test::run_tiled(img, s.xcuts, s.ycuts, gpu_window_propagator(tile, img, stream));
      const edt::Result got = edt::result_from_packed(img.shape(), run.sites, true, 1);
      const edt::Check c = edt::check_propagation(img, exact, got);
      EXPECT_TRUE(c.ok) << test::describe(img) << " " << policy_name(policy) << " capacity " << cap << ": " << c.first_violation;
      EXPECT_GT(run.border_rounds, 0) << test::describe(img);
      if (cap > 0) EXPECT_GT(tile.stats().overflow_reruns, 0) << test::describe(img) << " " << policy_name(policy);
    }
  }
}

// The distances of a window (with linear sites of the whole image) agree with the host formula.
TEST(EdtGpuQueue, TileDistancesFromSites) {
  REPIX_REQUIRE_GPU();
  const HostImage img = test::sparse_image(200, 120, 0.004, 51);
  const edt::Window w{30, 40, 170, 101};
  edt::TilePropagator tile;
  tile.setup(200, 120, iwpp::QueuePolicy::thread_queue);
  CudaStream stream;
  const std::vector<std::int64_t> sites = gpu_window_propagator(tile, img, stream).init(w, test::window_input(img, w));
  DeviceBuffer<std::int64_t> d_sites = to_device(sites.data(), sites.size()), d_linear(sites.size());
  DeviceBuffer<float> d_dist(sites.size());
  edt::distances_from_sites(d_sites.get(), w, 200, d_dist.get(), d_linear.get(), stream.get());
  stream.sync();
  std::vector<float> dist(sites.size());
  std::vector<std::int64_t> linear(sites.size());
  REPIX_CUDA(cudaMemcpy(dist.data(), d_dist.get(), d_dist.bytes(), cudaMemcpyDeviceToHost));
  REPIX_CUDA(cudaMemcpy(linear.data(), d_linear.get(), d_linear.bytes(), cudaMemcpyDeviceToHost));
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const std::int64_t x = w.x0 + static_cast<std::int64_t>(i) % (w.x1 - w.x0), y = w.y0 + static_cast<std::int64_t>(i) / (w.x1 - w.x0);
    bad += !(dist[i] == edt::distance_to_site(x, y, sites[i])) || linear[i] != edt::linear_site(sites[i], 200);
  }
  EXPECT_EQ(bad, 0);
}

TEST(EdtGpuQueue, TileRejectsBadArguments) {
  REPIX_REQUIRE_GPU();
  edt::TilePropagator tile;
  tile.setup(16, 16, iwpp::QueuePolicy::atomic);
  CudaStream stream;
  DeviceBuffer<std::int64_t> sites(16 * 16);
  DeviceBuffer<std::uint8_t> in(16 * 16);
  REPIX_CUDA(cudaMemset(in.get(), 0, in.bytes()));
  REPIX_CUDA(cudaDeviceSynchronize());  // cudaMemset may return before it is done
  EXPECT_THROW(tile.init_and_propagate(in.get(), DType::u8, {0, 0, 17, 16}, 40, 40, sites.get(), stream.get()), Error)
      << "more pixels than set up for";
  EXPECT_THROW(tile.init_and_propagate(in.get(), DType::u8, {30, 30, 41, 35}, 40, 40, sites.get(), stream.get()), Error)
      << "outside the image";
  EXPECT_THROW(tile.init_and_propagate(in.get(), DType::u8, {5, 5, 5, 9}, 40, 40, sites.get(), stream.get()), Error)
      << "empty window";
  tile.init_and_propagate(in.get(), DType::u8, {0, 0, 16, 16}, 40, 40, sites.get(), stream.get());
  const std::vector<std::uint32_t> seeds = {3, 255, 256};
  DeviceBuffer<std::uint32_t> d_seeds = to_device(seeds.data(), seeds.size());
  EXPECT_THROW(tile.propagate_from(d_seeds.get(), 3, {0, 0, 16, 16}, sites.get(), stream.get()), Error)
      << "seed 256 is outside a 16x16 window";
  tile.propagate_from(d_seeds.get(), 2, {0, 0, 16, 16}, sites.get(), stream.get());  // the valid ones alone
  tile.propagate_from(d_seeds.get(), 0, {0, 0, 16, 16}, sites.get(), stream.get());  // nothing to do
}

}  // namespace
}  // namespace repix
