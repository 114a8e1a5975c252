// edt's `multi-device` variant: every result must pass check_propagation against seq-exact (the
// property checks of every wave variant), with CPU groups alone (any machine; the engine
// configuration is explicit, so these also run without GPUs on the GPU machine) and with GPU
// workers (skipped without a GPU). Tiny and non-square tiles make waves cross many borders.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "edt/test_images.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/verify.hpp"
#include "edt/variants.hpp"
#include "core/tiling/multi_device_test_support.hpp"

namespace repix {
namespace {

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

using test::first_gpus;
using test::pinned_copy;
using test::TileShape;
using test::workers;

::testing::AssertionResult propagation_ok(const HostImage& img, const edt::Result& got) {
  const edt::Result exact = edt::run_seq_exact(img, {});
  const edt::Check c = edt::check_propagation(img, exact, got);
  if (!c.ok) return ::testing::AssertionFailure() << test::describe(img) << ": " << c.first_violation;
  if (c.max_abs > edt::kMaxPropagationError)
    return ::testing::AssertionFailure() << test::describe(img) << ": error " << c.max_abs << " px";
  if (got.sites.size() != static_cast<std::size_t>(img.size()))
    return ::testing::AssertionFailure() << "no sites (" << got.sites.size() << ")";
  return ::testing::AssertionSuccess();
}

// Edge shapes and the datasets' kinds: sparse sites at three densities, tissue, blobs, constant
// images, one far site, float (-0 is background) and uint16.
std::vector<HostImage> inputs() {
  std::vector<HostImage> v;
  std::uint64_t seed = 40;
  for (auto [nx, ny] : {std::pair<int, int>{1, 1}, {1, 70}, {70, 1}, {31, 33}, {129, 70}})
    for (double density : {0.002, 0.05, 0.5}) v.push_back(test::sparse_image(nx, ny, density, ++seed));
  v.push_back(test::const_image(23, 17, 0));
  v.push_back(test::const_image(23, 17, 255));
  HostImage corner = test::const_image(150, 120, 255);
  corner.data<std::uint8_t>()[corner.size() - 1] = 0;  // one site, waves across every tile
  v.push_back(std::move(corner));
  v.push_back(test::tissue_mask(160, 110, 50, 3));
  v.push_back(datasets::generate("blobs:190x130:radius=12:fill=0.45:seed=2"));
  test::push_float_and_uint16_sites(v, 90, 61, 5);
  return v;
}

// ---- CPU groups -----------------------------------------------------------------------------------

TEST(EdtMultiDeviceCpu, PassesPropertyChecksOnEveryTilingAndGroupCount) {
  for (const HostImage& img : inputs())
    for (const TileShape& tile : {TileShape{7, 5}, TileShape{16, 16}, TileShape{1000, 1000}})
      for (int groups : {1, 2, 3})
        for (int threads : {1, 2}) {
          const edt::Result r = edt::run_multi_device_with(img, {}, workers({}, groups, threads, tile));
          ASSERT_TRUE(propagation_ok(img, r)) << "tile " << tile.str() << " groups " << groups << " threads " << threads;
        }
}

TEST(EdtMultiDeviceCpu, OneFarSiteCrossesManyTiles) {
  HostImage img = test::const_image(150, 120, 255);
  img.data<std::uint8_t>()[0] = 0;
  for (const TileShape& tile : {TileShape{7, 5}, TileShape{30, 11}}) {
    const edt::Result r = edt::run_multi_device_with(img, {}, workers({}, 3, 1, tile));
    ASSERT_TRUE(propagation_ok(img, r)) << "tile " << tile.str();
    EXPECT_GE(r.stats.passes, 10) << "the wave crosses one tile per round";
  }
}

TEST(EdtMultiDeviceCpu, NoBackgroundAndSitesOnlyWhenAsked) {
  const HostImage none = test::const_image(31, 19, 7);
  const edt::Result r = edt::run_multi_device_with(none, {}, workers({}, 2, 1, {8, 8}));
  for (std::int64_t i = 0; i < none.size(); ++i) {
    ASSERT_TRUE(std::isinf(r.distance.data<float>()[i]));
    ASSERT_EQ(r.sites[i], -1);
  }
  edt::Options o;
  o.want_sites = false;
  EXPECT_TRUE(edt::run_multi_device_with(test::sparse_image(40, 30, 0.05, 2), o, workers({}, 2, 1, {8, 8})).sites.empty());
}

TEST(EdtMultiDeviceCpu, StatsAndRegisteredVariant) {
  const edt::Variant& v = edt::find_variant("multi-device");
  EXPECT_TRUE(v.gpu);
  EXPECT_FALSE(v.exact) << "a wave variant: checked by properties";
  EXPECT_FALSE(v.make_plan) << "the image lives in host memory: no kernel scope";
  const HostImage img = datasets::generate("blobs:120x90:radius=10:fill=0.45:seed=5");
  edt::Options o;
  o.cpu_groups = 3;
  o.cpu_group_threads = 1;
  o.tile = 25;
  const edt::Result r = v.run(img, o);
  ASSERT_TRUE(propagation_ok(img, r));
  const tiling::TiledRun& t = r.stats.tiled;
  EXPECT_EQ(t.tile_width, 25);
  EXPECT_EQ(t.tiles, 5 * 4);
  std::int64_t tiles = 0, groups = 0;
  for (const auto& w : t.workers) {
    tiles += w.tiles;
    groups += w.name.rfind("cpu", 0) == 0;
  }
  EXPECT_EQ(tiles, 20);
  EXPECT_EQ(groups, 3);
  EXPECT_GE(r.stats.passes, 2) << "the tile phase and at least one border round";
  EXPECT_GT(r.stats.initially_queued, 0);
  EXPECT_GE(r.stats.total_queued, r.stats.initially_queued);
}

TEST(EdtMultiDeviceCpu, ErrorsAreOneLine) {
  const edt::Variant& v = edt::find_variant("multi-device");
  auto expect_error = [&](const HostImage& img, const edt::Options& o, const std::string& needle) {
    try {
      v.run(img, o);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  edt::Options groups;
  groups.cpu_groups = 1;
  HostImage nan(DType::f32, Shape::d2(5, 4));
  std::fill(nan.data<float>(), nan.data<float>() + nan.size(), 1.0f);
  nan.data<float>()[6] = std::nanf("");
  expect_error(nan, groups, "NaN");
  expect_error(HostImage(DType::u8, Shape::d3(2, 2, 2)), groups, "2D");
  edt::Options negative = groups;
  negative.cpu_groups = -1;
  expect_error(test::const_image(4, 4, 0), negative, "cpu groups");
  if (!gpu_available()) expect_error(test::const_image(4, 4, 0), {}, "no workers");
}

// ---- GPU workers ----------------------------------------------------------------------------------

// gpus = 1 and all, with and without CPU groups, pinned and pageable inputs; GPU workers must
// have computed tiles, and sparse inputs with small tiles must send border waves to the GPU.
TEST(EdtMultiDeviceGpu, PassesPropertyChecksOnEveryWorkerMix) {
  REPIX_REQUIRE_GPU();
  const int all = static_cast<int>(first_gpus(1 << 20).size());
  for (const HostImage& img : inputs())
    for (bool pinned : {false, true}) {
      const HostImage pin = pinned ? pinned_copy(img) : HostImage();
      const HostImage& in = pinned ? pin : img;
      for (int gpus : {1, all})
        for (int groups : {0, 2})
          for (const TileShape& tile : {TileShape{33, 17}, TileShape{64, 64}, TileShape{1000, 1000}}) {
            const edt::Result r = edt::run_multi_device_with(in, {}, workers(first_gpus(gpus), groups, 1, tile));
            const std::string where = test::describe(img) + (pinned ? " pinned" : " pageable") + " gpus " +
                                      std::to_string(gpus) + " groups " + std::to_string(groups) + " tile " + tile.str();
            ASSERT_TRUE(propagation_ok(img, r)) << where;
            std::int64_t gpu_tiles = 0, tiles = 0;
            for (const auto& w : r.stats.tiled.workers) {
              tiles += w.tiles;
              if (w.name.rfind("gpu", 0) == 0) gpu_tiles += w.tiles;
            }
            EXPECT_EQ(tiles, r.stats.tiled.tiles) << where;
            if (groups == 0) EXPECT_EQ(gpu_tiles, tiles) << where;
          }
    }
}

TEST(EdtMultiDeviceGpu, BorderWavesGoBackToTheGpu) {
  REPIX_REQUIRE_GPU();
  HostImage img = test::const_image(300, 200, 255);
  img.data<std::uint8_t>()[0] = 0;  // one far site: every tile's wave comes across its border
  const edt::Result r = edt::run_multi_device_with(img, {}, workers(first_gpus(1), 0, 1, {64, 48}));
  ASSERT_TRUE(propagation_ok(img, r));
  std::int64_t reruns = 0;
  for (const auto& w : r.stats.tiled.workers) reruns += w.border_reruns;
  EXPECT_GT(reruns, 0) << "border waves never reached the GPU's propagate_from";
}

// Tiles of several MiB of sites: pageable copies go round the pinned chunk ring (4 x 4 MiB) more
// than once (a 2600 x 1700 tile holds 35 MB of sites).
TEST(EdtMultiDeviceGpu, LargeTilesThroughTheChunkRing) {
  REPIX_REQUIRE_GPU();
  const HostImage img = test::sparse_image(2600, 2100, 0.0002, 9);
  const edt::Result r = edt::run_multi_device_with(img, {}, workers(first_gpus(1 << 20), 0, 1, {2600, 1700}));
  ASSERT_TRUE(propagation_ok(img, r));
  edt::Options o;  // the registered variant with default Options: every GPU, automatic tiles
  ASSERT_TRUE(propagation_ok(img, edt::find_variant("multi-device").run(img, o)));
}

}  // namespace
}  // namespace repix
