// gpu-opt's per-thread functions (edt_gpu_opt_core.hpp) run on the CPU, one call per simulated
// GPU thread in kernel order, must give seq-exact's distances bit for bit and nearest sites:
// the algorithm of the GPU variant is verified here without a GPU (the kernels only add the
// grid-stride loops).
#include <gtest/gtest.h>

#include "datasets/datasets.hpp"
#include "iwpp/edt.hpp"
#include "iwpp/edt_detail.hpp"
#include "iwpp/edt_gpu_opt_core.hpp"
#include "iwpp/edt_test_images.hpp"
#include "iwpp/edt_verify.hpp"

namespace repix {
namespace {

using namespace edt::gpu_opt;

// per_pixel: gpu-opt's fill (thread per pixel); else gpu-exact-rowfill's (thread per band and row).
edt::Result simulate(const HostImage& img, bool per_pixel) {
  const i64 nx = img.shape().nx, ny = img.shape().ny;
  const i64 nseg = (ny + kSeg - 1) / kSeg, nbands = (nx + kBand - 1) / kBand;
  std::vector<unsigned> mask(static_cast<std::size_t>(nseg * nx));
  // Poisoned, so that anything read before it is written shows.
  std::vector<int> up(mask.size(), -7), down(mask.size(), -7);
  const std::size_t slots = static_cast<std::size_t>(nbands * kBand * ny);
  std::vector<int> centre(slots, -7), start(slots, -7), row(slots, -7), count(static_cast<std::size_t>(nbands * ny), -7);
  edt::Result r;
  r.distance = HostImage(DType::f32, img.shape());
  r.sites.assign(static_cast<std::size_t>(img.size()), -7);
  visit_image(img, [&](auto v) {
    for (i64 t = 0; t < nx * nseg; ++t) mask[t] = mask_word(v.data, nx, ny, t % nx, t / nx);
  });
  for (i64 x = 0; x < nx; ++x) scan_column(mask.data(), nx, nseg, x, up.data(), down.data());
  const Columns cols{mask.data(), up.data(), down.data(), nx};
  const Envelopes env{centre.data(), start.data(), row.data(), count.data(), ny};
  for (i64 t = 0; t < nbands * ny; ++t) band_envelope(cols, env, nx, t / ny, t % ny);
  auto* sites = reinterpret_cast<long long*>(r.sites.data());  // int64_t is long here
  if (per_pixel) {
    for (i64 t = 0; t < nx * ny; ++t) pixel_fill(env, nx, nbands, t % nx, t / nx, r.distance.data<float>(), sites);
  } else {
    for (i64 t = 0; t < nbands * ny; ++t) band_fill(env, nx, nbands, t / ny, t % ny, r.distance.data<float>(), sites);
  }
  return r;
}

TEST(EdtGpuOptCore, SimulatedKernelsEqualSeqExact) {
  std::vector<HostImage> imgs = test::exact_variant_inputs();
  imgs.push_back(datasets::generate("sparse:1024x300:density=0.001:seed=1"));
  imgs.push_back(test::sparse_image(1100, 40, 0.0003, 77));
  for (const HostImage& img : imgs) {
    const edt::Result want = edt::run_seq_exact(img, {});
    for (bool pixel : {true, false}) {
      const edt::Check c = edt::compare_exact(img, want, simulate(img, pixel));
      EXPECT_TRUE(c.ok) << (pixel ? "pixel" : "row") << " fill on " << test::describe(img) << ": " << c.first_violation;
    }
  }
}

// Sites along a diagonal make many bands' envelopes compete for every pixel (the fill's
// outward band search must not stop early).
TEST(EdtGpuOptCore, DiagonalSitesAcrossManyBands) {
  HostImage img = test::const_image(1500, 600, 255);
  for (int i = 0; i < 600; ++i) img.data<std::uint8_t>()[i * 1500 + i * 2] = 0;
  const edt::Result want = edt::run_seq_exact(img, {});
  for (bool pixel : {true, false}) {
    const edt::Check c = edt::compare_exact(img, want, simulate(img, pixel));
    EXPECT_TRUE(c.ok) << c.first_violation;
  }
}

}  // namespace
}  // namespace repix
