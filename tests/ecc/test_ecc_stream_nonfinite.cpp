// gpu-stream finds NaN/inf on the GPU as chunks arrive (streamed sources are never whole in host
// memory): the error must name the first bad voxel, whatever chunk it falls in, for in-memory
// images and for slab sources alike.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "core/gpu.hpp"
#include "core/slab_source.hpp"
#include "ecc/ecc.hpp"
#include "ecc/test_images.hpp"

namespace repix {
namespace {

HostImage ramp(Shape sh) {
  HostImage img(DType::f32, sh);
  for (std::int64_t i = 0; i < img.size(); ++i) img.data<float>()[i] = static_cast<float>(i % 97) * 0.5f;
  return img;
}

TEST(EccGpuStreamNonFinite, FirstBadVoxelIsReportedFromAnyChunk) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  const ecc::Variant& v = ecc::find_variant("gpu-stream");
  std::uint32_t all_ones = 0xFFFFFFFFu;  // a NaN whose bits equal no canonical NaN
  float nan_all_ones;
  std::memcpy(&nan_all_ones, &all_ones, sizeof nan_all_ones);
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(), nan_all_ones,
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  for (const Shape sh : {Shape::d2(37, 23), Shape::d3(9, 7, 11)}) {
    const std::int64_t n = sh.size();
    for (const std::int64_t at : {std::int64_t(0), n / 3, n - 1}) {
      for (float bad : bad_values) {
        HostImage img = ramp(sh);
        img.data<float>()[at] = bad;
        if (at + 5 < n) img.data<float>()[at + 5] = bad;  // a later one must not win
        const std::int64_t x = at % sh.nx, y = (at / sh.nx) % sh.ny, z = at / sh.slice_size();
        std::string where = "(x=" + std::to_string(x) + ", y=" + std::to_string(y);
        if (sh.ndim == 3) where += ", z=" + std::to_string(z);
        const std::string kind = bad != bad ? "NaN" : "infinity";
        for (std::size_t chunk_slabs : {std::size_t(1), std::size_t(2), std::size_t(1000)}) {
          ecc::Options opt;
          opt.chunk_bytes = chunk_slabs * static_cast<std::size_t>(slab_elems(sh)) * sizeof(float);
          const std::string e1 = test::error_of([&] { v.run(img, opt); });
          EXPECT_NE(e1.find(kind + " in the input at " + where), std::string::npos)
              << sh.str() << " at " << at << ": '" << e1 << "'";
          ImageSlabSource src(img);
          const std::string e2 = test::error_of([&] { v.run_source(src, opt); });
          EXPECT_EQ(e1, e2);
        }
      }
    }
  }
}

TEST(EccGpuStreamNonFinite, FiniteInputsStillWorkAfterAnError) {
  if (!gpu_available()) GTEST_SKIP() << "no GPU: " << gpu_unavailable_reason();
  const ecc::Variant& v = ecc::find_variant("gpu-stream");
  HostImage img = ramp(Shape::d2(40, 30));
  img.data<float>()[100] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(v.run(img, {}), Error);
  img.data<float>()[100] = 1.25f;
  EXPECT_EQ(v.run(img, {}), ecc::run_seq(img, {}));
}

}  // namespace
}  // namespace repix
