// gpu-opt end to end (the default of `repix run ecc`): the CPU-side policy (which images are
// streamed, in what chunks), the one-entry workspace cache, and on a GPU (skipped without) the
// run against seq through both paths (whole image and streamed), pinned and pageable, repeated
// calls that reuse the cached workspace, changes of shape and dtype in between, a requested chunk
// size, NaN/inf reported at the same position by both paths, the timeline of a call, and the
// graph path (off by default).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/gpu.hpp"
#include "core/reuse_cache.hpp"
#include "ecc/ecc.hpp"
#include "ecc/gpu_opt.cuh"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

constexpr std::size_t MiB = std::size_t(1) << 20;

TEST(EccEndToEndPolicy, SmallImagesAndSingleSlabsRunWhole) {
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(0, 0, 0), 0u);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(2 * ecc::kMinEndToEndChunk - 1, 1024, 0), 0u);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(512 * MiB, 1, 0), 0u);         // one slab: one chunk
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(512 * MiB, 1, 4 * MiB), 0u);   // even when asked
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(4 * MiB, 64, 4 * MiB), 0u);    // one requested chunk
}

TEST(EccEndToEndPolicy, LargerImagesStreamInAboutEightChunksOfAtLeast4MiB) {
  // The smallest end-to-end targets: 2048^2 float32 in 4 chunks, 128^3 float32 in 2,
  // 2048^2 and 128^3 uint8 whole.
  EXPECT_EQ(ecc::kMinEndToEndChunk, 4 * MiB);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(16 * MiB, 2048, 0), 4 * MiB);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(8 * MiB, 128, 0), 4 * MiB);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(4 * MiB, 2048, 0), 0u);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(2 * MiB, 128, 0), 0u);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(64 * MiB, 4096, 0), 8 * MiB);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(256 * MiB, 8192, 0), 32 * MiB);
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(std::size_t(4) << 30, 1024, 0), 128 * MiB);  // capped
  for (std::size_t bytes : {8 * MiB, 9 * MiB + 5, 16 * MiB, 512 * MiB, std::size_t(8) << 30}) {
    const std::size_t c = ecc::end_to_end_chunk_bytes(bytes, 1000, 0);
    SCOPED_TRACE(bytes);
    EXPECT_GE(c, ecc::kMinEndToEndChunk);
    EXPECT_LT(c, bytes);  // at least two chunks, or the pipeline overlaps nothing
  }
  EXPECT_EQ(ecc::end_to_end_chunk_bytes(16 * MiB, 2048, 3 * MiB), 3 * MiB);  // --chunk-mib wins
}

TEST(ReuseCache, HandsOutOnlyForTheSameKeyAndHoldsOneEntry) {
  struct W {
    int id;
  };
  ReuseCache<int, W> cache;
  EXPECT_EQ(cache.take(1), nullptr);
  cache.put(1, std::make_unique<W>(W{7}));
  EXPECT_EQ(cache.take(2), nullptr);  // a different key frees the entry ...
  EXPECT_EQ(cache.take(1), nullptr);  // ... so it is gone for the first key too
  cache.put(1, std::make_unique<W>(W{8}));
  auto w = cache.take(1);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->id, 8);
  EXPECT_EQ(cache.take(1), nullptr);  // handed out: never shared by two callers
}

#define REPIX_NEED_GPU() \
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason()

HostImage pinned_copy(const HostImage& img) {
  HostImage p(img.dtype(), img.shape(), true);
  std::memcpy(p.raw(), img.raw(), img.bytes());
  return p;
}

TEST(EccEndToEndGpu, BothPathsEqualSeqPinnedAndPageableRepeated) {
  REPIX_NEED_GPU();
  struct Case {
    DType dt;
    Shape sh;
    int levels;
  };
  // Whole-image sizes (float ones checked for NaN/inf on the GPU) and streamed ones (>= 8 MiB),
  // odd extents so that chunks end mid-image, the smallest end-to-end targets (128^3
  // uint8 whole, 128^3 float32 in 2 chunks), and back to a small shape between large ones (the
  // cache switches key). Sizes stay near the 8 MiB threshold so that the test finishes under
  // compute-sanitizer (device-check's sanitize stage runs it).
  const Case cases[] = {
      {DType::f32, Shape::d2(37, 29), 5},          {DType::f32, Shape::d2(1024, 1024), 256},
      {DType::u8, Shape::d3(128, 128, 128), 256},  {DType::f32, Shape::d3(128, 128, 128), 900},
      {DType::u16, Shape::d3(129, 67, 131), 3000}, {DType::f32, Shape::d3(131, 129, 127), 40000},
      {DType::u8, Shape::d2(1, 9000000), 7},       {DType::u16, Shape::d2(2049, 2063), 65536},
      {DType::f32, Shape::d1(5000), 100},
  };
  std::uint32_t seed = 11;
  for (const Case& c : cases) {
    const HostImage img = test::random_image(c.dt, c.sh, c.levels, seed++);
    const ecc::Curve want = ecc::run_seq(img, {});
    const HostImage pinned = pinned_copy(img);
    SCOPED_TRACE(test::describe(img) + " chunk " +
                 std::to_string(ecc::end_to_end_chunk_bytes(img.bytes(), slab_count(img.shape()), 0)));
    for (int rep = 0; rep < 2; ++rep) {  // the second call runs on the cached workspace
      EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(img, {}), want)) << "pageable, call " << rep;
      EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(pinned, {}), want)) << "pinned, call " << rep;
    }
    ecc::Options o;
    o.chunk_bytes = std::max<std::size_t>(1, img.bytes() / 5);  // --chunk-mib, any size
    EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(img, o), want)) << "requested chunks";
  }
}

// Options::timeline (the bench's --timeline): a call with it leaves one EndToEndTimeline, in the
// order its events happen, through both paths and gpu-stream; a call without it leaves none, and
// the curve is the same either way.
TEST(EccEndToEndGpu, TimelineInTheOrderOfItsEvents) {
  REPIX_NEED_GPU();
  struct Case {
    DType dt;
    Shape sh;
    bool stream_variant;
  };
  const Case cases[] = {{DType::f32, Shape::d2(300, 200), false},    // whole
                        {DType::u8, Shape::d2(2048, 2048), false},     // whole, 4 MiB
                        {DType::f32, Shape::d2(2048, 2048), false},    // 4 chunks
                        {DType::u16, Shape::d3(129, 67, 500), false},  // 3 chunks (4 MiB: 242 slabs)
                        {DType::f32, Shape::d2(1024, 1024), true}};    // gpu-stream, 1 chunk
  std::uint32_t seed = 5;
  for (const Case& c : cases) {
    const HostImage img = test::random_image(c.dt, c.sh, 300, seed++);
    SCOPED_TRACE(test::describe(img) + (c.stream_variant ? " gpu-stream" : " gpu-opt"));
    const ecc::Curve want = ecc::run_seq(img, {});
    ecc::Options on;
    on.timeline = true;
    auto run = [&](const ecc::Options& o) { return c.stream_variant ? ecc::run_gpu_stream(img, o) : ecc::run_gpu_opt(img, o); };
    EXPECT_TRUE(test::same_curve(run(on), want));
    const std::optional<ecc::EndToEndTimeline> t = ecc::take_timeline();
    ASSERT_TRUE(t.has_value());
    EXPECT_FALSE(ecc::take_timeline().has_value()) << "taken twice";
    const std::size_t chunk = c.stream_variant ? 0 : ecc::end_to_end_chunk_bytes(img.bytes(), slab_count(img.shape()), 0);
    if (!c.stream_variant) {  // gpu-stream's chunks of whole slabs
      const std::int64_t slabs = slab_count(img.shape()),
                         per_chunk = static_cast<std::int64_t>(chunk / (img.bytes() / static_cast<std::size_t>(slabs)));
      EXPECT_EQ(t->chunks, chunk ? (slabs + per_chunk - 1) / per_chunk : 1);
    }
    EXPECT_GE(t->gpu_uploaded_us, 0);
    if (t->chunks > 1 || c.stream_variant) {
      EXPECT_GE(t->gpu_kernels_us, t->gpu_uploaded_us);
      EXPECT_GE(t->gpu_finished_us, t->gpu_kernels_us);
    } else {
      EXPECT_EQ(t->gpu_kernels_us, -1);  // the pass and its finish are one step
    }
    EXPECT_GT(t->gpu_finished_us, t->gpu_uploaded_us);
    EXPECT_GT(t->host_issued_us, 0);
    EXPECT_GE(t->host_woken_us, t->host_issued_us);
    EXPECT_GE(t->host_returned_us, t->host_woken_us);
    EXPECT_GT(t->host_curve_work_us, 0);  // a part of the host's time after the wait
    EXPECT_LE(t->host_curve_work_us, t->host_returned_us - t->host_woken_us);
    EXPECT_TRUE(test::same_curve(run({}), want));
    EXPECT_FALSE(ecc::take_timeline().has_value()) << "a call without the option";
  }
}

TEST(EccEndToEndGpu, NonFiniteReportedAtTheSamePlaceByBothPaths) {
  REPIX_NEED_GPU();
  for (const Shape sh : {Shape::d2(61, 43), Shape::d2(1024, 1024), Shape::d2(2048, 1031)}) {  // whole, whole, streamed
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      HostImage img = test::random_image(DType::f32, sh, 50, 3);
      const std::int64_t at = sh.size() - sh.nx - 2;  // in the last chunk: every chunk is checked
      img.data<float>()[at] = bad;
      const std::string seq_msg = test::error_of([&] { ecc::run_seq(img, {}); });
      const std::string gpu_msg = test::error_of([&] { ecc::run_gpu_opt(img, {}); });
      SCOPED_TRACE(test::describe(img));
      EXPECT_FALSE(seq_msg.empty());
      EXPECT_EQ(gpu_msg, seq_msg);
    }
    // The failed run dropped its workspace; the next one is right.
    const HostImage ok = test::random_image(DType::f32, sh, 50, 4);
    EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(ok, {}), ecc::run_seq(ok, {})));
  }
}

// Several non-finite values: the first in index order is reported, whichever thread, batch slot
// or chunk finds each. Spaced 2^17 values apart: one thread's batch of the check's loads at 1024^2
// (512 blocks of 256 threads), and across the streamed image's chunks at 2048 x 1031.
TEST(EccEndToEndGpu, FirstOfSeveralNonFiniteIsReported) {
  REPIX_NEED_GPU();
  for (const Shape sh : {Shape::d2(1024, 1024), Shape::d2(2048, 1031)}) {
    HostImage img = test::random_image(DType::f32, sh, 50, 5);
    const std::int64_t step = std::int64_t(1) << 17;
    for (const std::int64_t k : {5, 3, 7}) img.data<float>()[1000 + k * step] = std::numeric_limits<float>::quiet_NaN();
    img.data<float>()[1000 + 2 * step] = -std::numeric_limits<float>::infinity();  // the first
    const std::string seq_msg = test::error_of([&] { ecc::run_seq(img, {}); });
    SCOPED_TRACE(test::describe(img));
    ASSERT_NE(seq_msg.find("inf"), std::string::npos) << seq_msg;
    EXPECT_EQ(test::error_of([&] { ecc::run_gpu_opt(img, {}); }), seq_msg);
  }
}

// The graph path (--graph-chunks; off by default), forced on: 1, 3 and 16 chunks (more
// than an image's slabs: clamped), every dtype, 2D and 3D, a float image of more distinct values
// than the first read-back holds (its second call re-captures a larger finish), each call on a
// different pinned image of the same shape (the replayed copies read the new one), NaN/inf
// reported as the other paths report it, and a timeline.
TEST(EccEndToEndGpu, GraphPathEqualsSeq) {
  REPIX_NEED_GPU();
  struct Case {
    DType dt;
    Shape sh;
    int levels;
  };
  const Case cases[] = {{DType::f32, Shape::d2(37, 29), 5},        {DType::f32, Shape::d2(1024, 1024), 256},
                        {DType::u8, Shape::d2(2048, 2048), 256},    {DType::u16, Shape::d3(129, 67, 131), 3000},
                        {DType::f32, Shape::d3(131, 129, 127), 40000}, {DType::u16, Shape::d2(2049, 2063), 65536},
                        {DType::f32, Shape::d1(5000), 100}};
  for (const int chunks : {1, 3, 16}) {
    ecc::Options graph;
    graph.tuning.graph_chunks = chunks;
    std::uint32_t seed = 100;
    for (const Case& c : cases) {
      for (int call = 0; call < 3; ++call) {
        const HostImage img = pinned_copy(test::random_image(c.dt, c.sh, c.levels, seed++));
        SCOPED_TRACE(test::describe(img) + " chunks " + std::to_string(chunks) + " call " + std::to_string(call));
        ecc::Options o = graph;
        o.timeline = call == 2;
        EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(img, o), ecc::run_seq(img, {})));
        if (call == 2) {
          const std::optional<ecc::EndToEndTimeline> t = ecc::take_timeline();
          ASSERT_TRUE(t.has_value());
          EXPECT_GE(t->gpu_uploaded_us, 0);
          EXPECT_GT(t->gpu_finished_us, t->gpu_uploaded_us);
          EXPECT_GE(t->host_returned_us, t->host_woken_us);
          EXPECT_GT(t->host_curve_work_us, 0);
          EXPECT_LE(t->host_curve_work_us, t->host_returned_us - t->host_woken_us);
        }
      }
    }
    HostImage bad = pinned_copy(test::random_image(DType::f32, Shape::d2(1024, 1024), 50, 9));
    bad.data<float>()[bad.size() - 1000] = std::numeric_limits<float>::quiet_NaN();
    const std::string seq_msg = test::error_of([&] { ecc::run_seq(bad, {}); });
    const std::string gpu_msg = test::error_of([&] { ecc::run_gpu_opt(bad, graph); });
    EXPECT_FALSE(seq_msg.empty());
    EXPECT_EQ(gpu_msg, seq_msg) << "chunks " << chunks;
    const HostImage ok = pinned_copy(test::random_image(DType::f32, Shape::d2(1024, 1024), 50, 10));
    EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(ok, graph), ecc::run_seq(ok, {}))) << "after the NaN, chunks " << chunks;
  }
}

// The graph path (one chunk) on a pinned 16 MiB float image whose distinct values outnumber the
// global table's 2^21 slots: the graph's finish finds the table overflowed and the exact fallback
// runs on the uploaded image; the workspace is dropped and the next call (a different image of the
// same shape) builds and captures a new one.
TEST(EccEndToEndGpu, GraphPathOverflowFallbackEqualsSeq) {
  REPIX_NEED_GPU();
  ecc::Options graph;
  graph.tuning.graph_chunks = 1;
  for (std::uint32_t seed : {21u, 22u}) {
    const HostImage img = pinned_copy(test::random_image(DType::f32, Shape::d2(2048, 2048), 1 << 24, seed));
    const ecc::Curve want = ecc::run_seq(img, {});
    ASSERT_GT(want.values.size(), std::size_t(1) << 21) << "the image must overflow the table";
    EXPECT_TRUE(test::same_curve(ecc::run_gpu_opt(img, graph), want)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace repix
