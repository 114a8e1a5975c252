// reconstruct's `multi-device` variant against seq, bit for bit: CPU groups alone (any machine;
// the engine configuration is given explicitly, so these run without GPUs on the GPU machine
// too), then GPU workers with and without CPU groups (skipped without a GPU). Tiny and
// non-square tiles make many border rounds; edge shapes, every dtype, both connectivities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "reconstruct/variants.hpp"
#include "reconstruct/reconstruct.hpp"
#include "reconstruct/oracle.hpp"
#include "core/tiling/multi_device_test_support.hpp"

namespace repix {
namespace {

using reconstruct::Options;
using test::MarkerKind;
using test::random_marker;
using test::random_mask;
using test::first_gpus;
using test::pinned_copy;
using test::same_image;
using test::TileShape;
using test::workers;

#define REPIX_REQUIRE_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

// Same values and the same bits (seq writes -0 as +0; so must multi-device).
::testing::AssertionResult same_bits(const HostImage& got, const HostImage& want) {
  ::testing::AssertionResult same = same_image(got, want);
  if (!same) return same;
  if (std::memcmp(got.raw(), want.raw(), want.bytes()) != 0)
    return ::testing::AssertionFailure() << "equal values but different bits (a signed zero?)";
  return ::testing::AssertionSuccess();
}

HostImage seq(const HostImage& marker, const HostImage& mask, const Options& opt) {
  return reconstruct::find_variant("seq").run(marker, mask, opt).image;
}

// ---- CPU groups -----------------------------------------------------------------------------------

TEST(ReconstructMultiDeviceCpu, RandomInputsEdgeShapesTinyTiles) {
  const Shape shapes[] = {Shape::d2(1, 1),   Shape::d2(1, 37),  Shape::d2(41, 1),  Shape::d2(2, 2),
                          Shape::d2(23, 17), Shape::d2(64, 64), Shape::d2(65, 63), Shape::d2(129, 70)};
  const TileShape tiles[] = {{7, 5}, {16, 16}, {1000, 1000}};  // the last is larger than every image
  std::uint32_t seed = 3000;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes)
      for (int conn : {4, 8})
        for (int k = 0; k < 5; ++k) {
          const HostImage mask = random_mask(dt, sh, 60, seed++);
          const HostImage marker = random_marker(mask, test::kMarkerKinds[k], seed++);
          Options opt;
          opt.connectivity = conn;
          const HostImage want = seq(marker, mask, opt);
          for (const TileShape& tile : tiles)
            for (int groups : {1, 2, 3}) {
              const auto r = reconstruct::run_multi_device_with(marker, mask, opt, workers({}, groups, 1, tile));
              ASSERT_TRUE(same_bits(r.image, want))
                  << test::case_name(dt, sh, conn, k) << " tile " << tile.str() << " groups " << groups;
            }
        }
}

// The generated datasets the other reconstruct tests use (smoothed-noise and tissue masks with
// every marker kind), several tiles, groups and group threads.
TEST(ReconstructMultiDeviceCpu, GeneratedMarkersAndMasks) {
  test::for_each_generated_pair([](const std::string& what, const HostImage& mk, const HostImage& mask) {
    for (int conn : {4, 8}) {
      Options opt;
      opt.connectivity = conn;
      const HostImage want = seq(mk, mask, opt);
      for (const TileShape& tile : {TileShape{7, 5}, TileShape{16, 16}, TileShape{50, 32}})
        for (int groups : {1, 2, 3})
          for (int threads : {1, 2}) {
            const auto r = reconstruct::run_multi_device_with(mk, mask, opt, workers({}, groups, threads, tile));
            ASSERT_TRUE(same_bits(r.image, want)) << what << " conn " << conn << " tile " << tile.str()
                                                  << " groups " << groups << " threads " << threads;
          }
    }
  });
}

// A serpentine corridor: the wave crosses the tiles back and forth, one border round at a time.
TEST(ReconstructMultiDeviceCpu, SerpentineCorridorNeedsManyBorderRounds) {
  const auto [marker, mask] = test::serpentine_corridor(Shape::d2(61, 59));
  for (int conn : {4, 8}) {
    Options opt;
    opt.connectivity = conn;
    const HostImage want = test::oracle_reconstruct(marker, mask, conn);
    for (const TileShape& tile : {TileShape{3, 3}, TileShape{5, 2}, TileShape{8, 13}}) {
      const auto r = reconstruct::run_multi_device_with(marker, mask, opt, workers({}, 3, 1, tile));
      ASSERT_TRUE(same_bits(r.image, want)) << "conn " << conn << " tile " << tile.str();
      // The corridor is ~15 wall rows long, each row crossing several tiles: many rounds.
      EXPECT_GE(r.stats.passes, 10) << "conn " << conn << " tile " << tile.str();
    }
  }
}

TEST(ReconstructMultiDeviceCpu, FloatExtremesAndSignedZeros) {
  const auto [marker, mask] = test::float_extremes(Shape::d2(33, 29), 3);
  for (int conn : {4, 8}) {
    Options opt;
    opt.connectivity = conn;
    const HostImage want = seq(marker, mask, opt);
    for (const TileShape& tile : {TileShape{4, 3}, TileShape{10, 10}})
      ASSERT_TRUE(same_bits(reconstruct::run_multi_device_with(marker, mask, opt, workers({}, 2, 1, tile)).image, want))
          << "conn " << conn << " tile " << tile.str();
  }
}

TEST(ReconstructMultiDeviceCpu, StatsCountTilesRoundsAndWorkers) {
  const HostImage mask = datasets::generate("noise-mask:100x90:sigma=2:seed=7");
  const HostImage marker = datasets::generate("noise-mask:100x90:sigma=2:seed=7:marker=frame");
  Options opt;
  const auto r = reconstruct::run_multi_device_with(marker, mask, opt, workers({}, 3, 1, {32, 20}));
  const tiling::TiledRun& t = r.stats.tiled;
  EXPECT_EQ(t.tile_width, 32);
  EXPECT_EQ(t.tile_height, 20);
  EXPECT_EQ(t.tiles, 4 * 5);
  ASSERT_EQ(t.workers.size(), 3u);
  std::int64_t tiles = 0, border = 0;
  for (std::size_t i = 0; i < t.workers.size(); ++i) {
    EXPECT_EQ(t.workers[i].name, "cpu" + std::to_string(i));
    EXPECT_EQ(t.workers[i].threads, 1);
    EXPECT_GE(t.workers[i].busy_ms, 0.0);
    EXPECT_EQ(t.workers[i].upload_bytes, 0);
    tiles += t.workers[i].tiles;
    border += t.workers[i].border_tiles;
  }
  EXPECT_EQ(tiles, 20) << "every tile once in the tile phase";
  EXPECT_GE(r.stats.passes, 3) << "a frame marker floods inwards over several border rounds";
  EXPECT_GE(border, 20) << "the first border round visits every tile";
  EXPECT_GT(r.stats.total_queued, 0);
  EXPECT_GE(r.stats.total_queued, r.stats.initially_queued);
  EXPECT_GE(t.tile_phase_ms, 0.0);
  EXPECT_GE(t.border_phase_ms, 0.0);
  // One tile: no border round at all.
  const auto one = reconstruct::run_multi_device_with(marker, mask, opt, workers({}, 2, 1, {100, 90}));
  EXPECT_EQ(one.stats.passes, 1) << "the tile phase only";
  EXPECT_EQ(one.stats.tiled.tiles, 1);
}

// The registered variant takes its workers and tiles from Options (and uses every GPU where there
// are some).
TEST(ReconstructMultiDeviceCpu, RegisteredVariantTakesOptions) {
  const reconstruct::Variant& v = reconstruct::find_variant("multi-device");
  EXPECT_TRUE(v.gpu) << "a GPU variant: the default bench suite runs it where GPUs exist";
  EXPECT_FALSE(v.make_plan) << "the image lives in host memory: no kernel scope";
  const HostImage mask = datasets::generate("tissue:120x77:coverage=75:seed=5");
  const HostImage marker = datasets::generate("tissue:120x77:coverage=75:seed=5:marker=h-minus:h=20");
  Options opt;
  opt.cpu_groups = 2;
  opt.cpu_group_threads = 2;
  opt.tile = 24;
  const auto r = v.run(marker, mask, opt);
  ASSERT_TRUE(same_bits(r.image, seq(marker, mask, opt)));
  EXPECT_EQ(r.stats.tiled.tile_width, 24);
  EXPECT_EQ(r.stats.tiled.tiles, 5 * 4);
  std::int64_t groups = 0;
  for (const auto& w : r.stats.tiled.workers) groups += w.name.rfind("cpu", 0) == 0;
  EXPECT_EQ(groups, 2);
}

TEST(ReconstructMultiDeviceCpu, NoWorkersIsAClearError) {
  if (gpu_available()) GTEST_SKIP() << "with a GPU, --gpus 0 means every GPU: there is always a worker";
  const HostImage mask = random_mask(DType::u8, Shape::d2(8, 6), 10, 1);
  const HostImage marker = random_marker(mask, MarkerKind::below, 2);
  try {
    reconstruct::find_variant("multi-device").run(marker, mask, {});
    FAIL() << "ran without a GPU and without CPU groups";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no workers"), std::string::npos) << msg;
    EXPECT_NE(msg.find("reconstruct/multi-device"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(ReconstructMultiDeviceCpu, BadInputsAndOptionsAreOneLineErrors) {
  const reconstruct::Variant& v = reconstruct::find_variant("multi-device");
  const HostImage mask = random_mask(DType::u16, Shape::d2(20, 10), 50, 8);
  HostImage marker = random_marker(mask, MarkerKind::below, 9);
  test::set_pixel(marker, 3 * 20 + 7, test::pixel(mask, 3 * 20 + 7) + 1);  // (x=7, y=3) above the mask
  Options opt;
  opt.cpu_groups = 1;
  auto expect_error = [&](const HostImage& mk, const HostImage& ms, const Options& o, const std::string& needle) {
    try {
      v.run(mk, ms, o);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  };
  expect_error(marker, mask, opt, "(x=7, y=3)");
  expect_error(random_mask(DType::u16, Shape::d2(10, 20), 50, 8), mask, opt, "shapes differ");
  expect_error(random_mask(DType::u8, Shape::d2(20, 10), 50, 8), mask, opt, "dtypes differ");
  Options negative = opt;
  negative.tile = -3;
  expect_error(mask, mask, negative, "tile");
  // Clipping instead: the reconstruction of the clipped marker.
  opt.clip = true;
  opt.tile = 6;
  const auto r = v.run(marker, mask, opt);
  EXPECT_TRUE(same_bits(r.image, test::oracle_reconstruct(marker, mask, 8)));
}

// More workers than tiles, repeated: a scheduling race would show as a run-to-run difference.
TEST(ReconstructMultiDeviceCpu, StableUnderManyGroups) {
  const HostImage mask = datasets::generate("noise-mask:151x149:sigma=2:seed=9");
  const HostImage marker = datasets::generate("noise-mask:151x149:sigma=2:seed=9:marker=frame");
  const HostImage want = seq(marker, mask, {});
  for (int rep = 0; rep < 3; ++rep)
    for (const TileShape& tile : {TileShape{40, 40}, TileShape{9, 11}})
      ASSERT_TRUE(same_bits(reconstruct::run_multi_device_with(marker, mask, {}, workers({}, 6, 1, tile)).image, want))
          << "repetition " << rep << " tile " << tile.str();
}

// ---- GPU workers ----------------------------------------------------------------------------------

struct GpuCase {
  std::string mask_spec, marker;
};

// gpus = 1 and all, with and without CPU groups, tiles off gpu-opt's 32x32 sub-tiles; GPU
// workers must have computed tiles, and the small-tile frame cases must send border waves back
// to the GPU (not only finish them on the host).
TEST(ReconstructMultiDeviceGpu, EqualsSeqOnEveryWorkerMix) {
  REPIX_REQUIRE_GPU();
  const int all = static_cast<int>(first_gpus(1 << 20).size());
  const GpuCase cases[] = {{"noise-mask:203x141:sigma=2:seed=4", "frame"},
                           {"noise-mask:203x141:sigma=2:seed=4", "opening:radius=3"},
                           {"tissue:190x130:coverage=50:seed=2", "h-minus:h=15"},
                           {"tissue:190x130:coverage=75:seed=3", "single-seed"}};
  for (const GpuCase& c : cases) {
    const HostImage mask = datasets::generate(c.mask_spec);
    const HostImage marker = datasets::generate(c.mask_spec + ":marker=" + c.marker);
    for (int conn : {4, 8}) {
      Options opt;
      opt.connectivity = conn;
      const HostImage want = seq(marker, mask, opt);
      for (int gpus : {1, all})
        for (int groups : {0, 2})
          for (const TileShape& tile : {TileShape{33, 17}, TileShape{64, 64}, TileShape{100, 141}, TileShape{500, 500}}) {
            const auto r = reconstruct::run_multi_device_with(marker, mask, opt, workers(first_gpus(gpus), groups, 1, tile));
            const std::string where = c.mask_spec + " " + c.marker + " conn " + std::to_string(conn) + " gpus " +
                                      std::to_string(gpus) + " groups " + std::to_string(groups) + " tile " +
                                      tile.str();
            ASSERT_TRUE(same_bits(r.image, want)) << where;
            std::int64_t gpu_tiles = 0, gpu_reruns = 0, tiles = 0;
            for (const auto& w : r.stats.tiled.workers) {
              tiles += w.tiles;
              if (w.name.rfind("gpu", 0) == 0) {
                gpu_tiles += w.tiles;
                gpu_reruns += w.border_reruns;
                EXPECT_EQ(w.download_bytes % static_cast<std::int64_t>(dtype_size(mask.dtype())), 0);
              }
            }
            EXPECT_EQ(tiles, r.stats.tiled.tiles) << where;
            if (groups == 0) EXPECT_EQ(gpu_tiles, tiles) << where;
            if (groups == 0 && c.marker == "frame" && tile.w == 33)
              EXPECT_GT(gpu_reruns, 0) << where << ": border waves never went back to the GPU";
          }
    }
  }
}

TEST(ReconstructMultiDeviceGpu, EveryDtypeEdgeShapesPinnedAndPageable) {
  REPIX_REQUIRE_GPU();
  const Shape shapes[] = {Shape::d2(1, 1), Shape::d2(1, 77), Shape::d2(77, 1), Shape::d2(33, 31), Shape::d2(65, 63)};
  std::uint32_t seed = 7000;
  for (DType dt : {DType::u8, DType::u16, DType::f32})
    for (const Shape& sh : shapes)
      for (int conn : {4, 8})
        for (MarkerKind kind : {MarkerKind::below, MarkerKind::frame}) {
          const HostImage mask = random_mask(dt, sh, 60, seed++);
          const HostImage marker = random_marker(mask, kind, seed++);
          Options opt;
          opt.connectivity = conn;
          const HostImage want = seq(marker, mask, opt);
          for (bool pinned : {false, true}) {
            const HostImage mk = pinned ? pinned_copy(marker) : HostImage();
            const HostImage ms = pinned ? pinned_copy(mask) : HostImage();
            const HostImage& use_mk = pinned ? mk : marker;
            const HostImage& use_ms = pinned ? ms : mask;
            for (const TileShape& tile : {TileShape{7, 5}, TileShape{32, 32}})
              ASSERT_TRUE(same_bits(
                  reconstruct::run_multi_device_with(use_mk, use_ms, opt, workers(first_gpus(1), 0, 1, tile)).image, want))
                  << test::case_name(dt, sh, conn, static_cast<int>(kind)) << (pinned ? " pinned" : " pageable") << " tile "
                  << tile.w << "x" << tile.h;
          }
        }
}

HostImage as_float(const HostImage& u8) {
  HostImage f(DType::f32, u8.shape());
  for (std::int64_t i = 0; i < u8.size(); ++i) f.data<float>()[i] = u8.data<std::uint8_t>()[i] * 0.5f - 20.0f;
  return f;
}

// Tiles of several MiB: pageable copies go round the pinned chunk ring (4 x 4 MiB) more than once
// (a 2600 x 1700 float tile is 17.7 MB).
TEST(ReconstructMultiDeviceGpu, LargeTilesThroughTheChunkRing) {
  REPIX_REQUIRE_GPU();
  const HostImage mask = as_float(datasets::generate("noise-mask:2600x2100:sigma=2:seed=11"));
  const HostImage marker = as_float(datasets::generate("noise-mask:2600x2100:sigma=2:seed=11:marker=frame"));
  const HostImage want = seq(marker, mask, {});
  for (bool pinned : {false, true}) {
    const HostImage mk = pinned ? pinned_copy(marker) : HostImage();
    const HostImage ms = pinned ? pinned_copy(mask) : HostImage();
    const auto r = reconstruct::run_multi_device_with(pinned ? mk : marker, pinned ? ms : mask, {},
                                                      workers(first_gpus(1 << 20), 0, 1, {2600, 1700}));
    ASSERT_TRUE(same_bits(r.image, want)) << (pinned ? "pinned" : "pageable");
  }
  // The registered variant with default Options: every GPU, automatic tiles.
  EXPECT_TRUE(same_bits(reconstruct::find_variant("multi-device").run(marker, mask, {}).image, want));
}

}  // namespace
}  // namespace repix
