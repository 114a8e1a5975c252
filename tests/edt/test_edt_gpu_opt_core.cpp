// gpu-opt's per-thread functions (edt/gpu_opt_core.hpp) run on the CPU, one call per simulated
// GPU thread in kernel order, must give seq-exact's distances bit for bit and nearest sites:
// the algorithm of the GPU variant is verified here without a GPU (the kernels only add the
// grid-stride loops).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "datasets/datasets.hpp"
#include "edt/edt.hpp"
#include "edt/detail.hpp"
#include "edt/gpu_opt_core.hpp"
#include "edt/test_images.hpp"
#include "edt/verify.hpp"

namespace repix {
namespace {

using namespace edt::gpu_opt;

enum class Fill { band, pixel, window };  // gpu-exact-rowfill, gpu-exact-envelope, gpu-opt
const Fill kFills[] = {Fill::band, Fill::pixel, Fill::window};
const char* name(Fill f) { return f == Fill::band ? "band" : f == Fill::pixel ? "pixel" : "window"; }

// The three row fills of the separable engine (edt/separable.cuh): band = gpu_exact_rowfill.cu,
// pixel = gpu_exact_envelope.cu, window = gpu_opt.cu. window: gpu-opt's blocks (row, chunk)
// with the block's shared window, then the envelope path only on the flagged rows (the other
// rows' envelope scratch stays poisoned). `fallback_rows` (optional) gets how many rows were redone.
// `bounds`: Options::column_bounds (the image a part of a larger one), empty for a whole image.
edt::Result simulate(const HostImage& img, Fill fill, i64* fallback_rows = nullptr,
                     const std::vector<std::int32_t>& bounds = {}) {
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
  for (i64 x = 0; x < nx; ++x)
    scan_column(mask.data(), nx, nseg, x, up.data(), down.data(), bounds.empty() ? edt::kNoRow : bounds[x],
                bounds.empty() ? edt::kNoRow : bounds[nx + x]);
  const Columns cols{mask.data(), up.data(), down.data(), nx};
  const Envelopes env{centre.data(), start.data(), row.data(), count.data(), ny};
  auto* sites = reinterpret_cast<long long*>(r.sites.data());  // int64_t is long here
  float* dist = r.distance.data<float>();
  std::vector<i64> rows;
  if (fill == Fill::window) {
    std::vector<int> off(kChunk + 2 * kWindow);
    const i64 nchunks = (nx + kChunk - 1) / kChunk;
    std::vector<bool> flagged(static_cast<std::size_t>(ny));
    for (i64 task = 0; task < nchunks * ny; ++task) {
      const i64 y = task / nchunks, x0 = (task % nchunks) * kChunk;
      for (int j = 0; j < kChunk + 2 * kWindow; ++j) off[j] = window_entry(cols, nx, y, x0, j);
      for (int j = 0; j < kChunk && x0 + j < nx; ++j)
        if (!window_pixel(off.data() + kWindow + j, nx, x0 + j, y, dist, sites)) flagged[y] = true;
    }
    for (i64 y = 0; y < ny; ++y)
      if (flagged[y]) rows.push_back(y);
    if (fallback_rows) *fallback_rows = static_cast<i64>(rows.size());
  } else {
    for (i64 y = 0; y < ny; ++y) rows.push_back(y);
  }
  for (i64 band = 0; band < nbands; ++band)
    for (i64 y : rows) band_envelope(cols, env, nx, band, y);
  for (i64 y : rows) {
    if (fill == Fill::band) {
      for (i64 band = 0; band < nbands; ++band) band_fill(env, nx, nbands, band, y, dist, sites);
    } else {
      for (i64 x = 0; x < nx; ++x) pixel_fill(env, nx, nbands, x, y, dist, sites);
    }
  }
  return r;
}

TEST(EdtGpuOptCore, SimulatedKernelsEqualSeqExact) {
  std::vector<HostImage> imgs = test::exact_variant_inputs();
  imgs.push_back(datasets::generate("sparse:1024x300:density=0.001:seed=1"));
  imgs.push_back(test::sparse_image(1100, 40, 0.0003, 77));
  for (const HostImage& img : imgs) {
    const edt::Result want = edt::run_seq_exact(img, {});
    for (Fill f : kFills) {
      const edt::Check c = edt::compare_exact(img, want, simulate(img, f));
      EXPECT_TRUE(c.ok) << name(f) << " fill on " << test::describe(img) << ": " << c.first_violation;
    }
  }
}

// Sites along a diagonal make many bands' envelopes compete for every pixel (the fill's
// outward band search must not stop early).
TEST(EdtGpuOptCore, DiagonalSitesAcrossManyBands) {
  HostImage img = test::const_image(1500, 600, 255);
  for (int i = 0; i < 600; ++i) img.data<std::uint8_t>()[i * 1500 + i * 2] = 0;
  const edt::Result want = edt::run_seq_exact(img, {});
  for (Fill f : kFills) {
    const edt::Check c = edt::compare_exact(img, want, simulate(img, f));
    EXPECT_TRUE(c.ok) << name(f) << ": " << c.first_violation;
  }
}

// gpu-opt's window boundary: sites exactly kWindow and kWindow + 1 columns away (resolved), and
// kWindow + 2 (only the envelope path can settle it), across chunk edges; and a mix where some
// rows fall back and the others must not (their envelope scratch is never written).
TEST(EdtGpuOptCore, WindowEdgesAndPartialFallback) {
  for (int gap : {kWindow - 1, kWindow, kWindow + 1, kWindow + 2, 3 * kWindow}) {
    for (i64 x_site : {i64(0), i64(kChunk - 1), i64(kChunk), i64(kChunk + kWindow)}) {
      HostImage img = test::const_image(2 * kChunk + 300, 3, 255);
      std::uint8_t* p = img.data<std::uint8_t>();
      for (i64 y = 0; y < 3; ++y) p[y * img.shape().nx + x_site] = 0;
      if (x_site + 2 * gap < img.shape().nx)
        for (i64 y = 0; y < 3; ++y) p[y * img.shape().nx + x_site + 2 * gap] = 0;
      const edt::Check c = edt::compare_exact(img, edt::run_seq_exact(img, {}), simulate(img, Fill::window));
      EXPECT_TRUE(c.ok) << "gap " << gap << " site at x=" << x_site << ": " << c.first_violation;
    }
  }
  // Pixel (100, 0): inside the window only the site (110, 70) at 10^2 + 70^2 = 5000 > (kWindow +
  // 1)^2; the nearest, (100 + kWindow + 2, 0) at 66^2 = 4356, lies outside it. Accepting the
  // window's best there would be wrong: the row must fall back. Sites on row 1 away from the
  // middle settle every other pixel of row 0 by the window, so only this rule sends the row back.
  {
    HostImage trap = test::const_image(300, 80, 255);
    std::uint8_t* t = trap.data<std::uint8_t>();
    t[100 + kWindow + 2] = 0;
    t[70 * 300 + 110] = 0;
    for (int x = 0; x < 300; ++x)
      if (x < 30 || x > 170) t[300 + x] = 0;
    const edt::Check ct = edt::compare_exact(trap, edt::run_seq_exact(trap, {}), simulate(trap, Fill::window));
    EXPECT_TRUE(ct.ok) << ct.first_violation;
  }
  // Sites every 10 columns on rows 0..99, none on row 100: every pixel is within a few pixels of a
  // site, so no row falls back. Then one site in a corner of a wide image: every row has pixels
  // far beyond the window, so every row falls back.
  HostImage img = test::const_image(700, 101, 255);
  std::uint8_t* p = img.data<std::uint8_t>();
  for (i64 y = 0; y < 100; ++y)
    for (i64 x = 0; x < 700; x += 10) p[y * 700 + x] = 0;
  i64 fallback = -1;
  const edt::Check c = edt::compare_exact(img, edt::run_seq_exact(img, {}), simulate(img, Fill::window, &fallback));
  EXPECT_TRUE(c.ok) << c.first_violation;
  EXPECT_EQ(fallback, 0);
  HostImage far = test::const_image(3000, 200, 255);
  far.data<std::uint8_t>()[0] = 0;
  const edt::Check c2 = edt::compare_exact(far, edt::run_seq_exact(far, {}), simulate(far, Fill::window, &fallback));
  EXPECT_TRUE(c2.ok) << c2.first_violation;
  EXPECT_EQ(fallback, 200);
  // The GPU test's blobs (test_edt_gpu.cpp, GpuOptFallbackRows): settled by the window alone.
  const HostImage blobs = datasets::generate("blobs:1500x900:radius=24:fill=0.45:seed=9");
  const edt::Check c3 = edt::compare_exact(blobs, edt::run_seq_exact(blobs, {}), simulate(blobs, Fill::window, &fallback));
  EXPECT_TRUE(c3.ok) << c3.first_violation;
  EXPECT_EQ(fallback, 0);
}

// A part of rows of a larger image (the distributed runs' GPU ranks): each column's nearest
// background rows above and below the part (Options::column_bounds) stand for the rest of the
// image. Every fill on every part must give seq-exact's distances on the whole image in those
// rows, and, its sites shifted by the part's first row, the same fill's sites on the whole image
// (a fill breaks ties between equally near sites its own way, the same wherever the pixel lies):
// parts of one row, parts whose columns have their nearest site in another part only, none at
// all, or sites far beyond gpu-opt's window.
TEST(EdtGpuOptCore, PartsWithColumnBoundsEqualTheWholeImage) {
  std::vector<HostImage> imgs;
  imgs.push_back(datasets::generate("sparse:300x97:density=0.002:seed=3"));
  imgs.push_back(test::sparse_image(1100, 90, 0.0003, 78));
  imgs.push_back(test::const_image(40, 30, 255));
  HostImage corner = test::const_image(2500, 70, 255);
  corner.data<std::uint8_t>()[69 * 2500 + 2499] = 0;  // one site, in the last part's last row
  imgs.push_back(std::move(corner));
  for (const HostImage& img : imgs) {
    const i64 nx = img.shape().nx, ny = img.shape().ny;
    const edt::Result want = edt::run_seq_exact(img, {});
    const auto* f = img.data<std::uint8_t>();
    for (const std::vector<i64>& cuts : std::vector<std::vector<i64>>{{0, ny / 3, ny / 2, ny}, {0, 1, ny - 1, ny}}) {
      for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
        const i64 first = cuts[k], last = cuts[k + 1];
        std::vector<std::int32_t> bounds(static_cast<std::size_t>(2 * nx), edt::kNoRow);
        for (i64 x = 0; x < nx; ++x) {
          for (i64 y = first - 1; y >= 0; --y)
            if (f[y * nx + x] == 0) {
              bounds[static_cast<std::size_t>(x)] = static_cast<std::int32_t>(y - first);
              break;
            }
          for (i64 y = last; y < ny; ++y)
            if (f[y * nx + x] == 0) {
              bounds[static_cast<std::size_t>(nx + x)] = static_cast<std::int32_t>(y - first);
              break;
            }
        }
        HostImage part(DType::u8, Shape::d2(nx, last - first));
        std::memcpy(part.raw(), f + first * nx, static_cast<std::size_t>(part.size()));
        for (Fill fill : kFills) {
          const std::vector<std::int64_t> want_sites = simulate(img, fill).sites;
          edt::Result got = simulate(part, fill, nullptr, bounds);
          const float* d = got.distance.data<float>();
          for (i64 i = 0; i < part.size(); ++i) {
            if (std::isfinite(d[i])) got.sites[static_cast<std::size_t>(i)] += first * nx;
            const std::size_t w = static_cast<std::size_t>(first * nx + i);
            ASSERT_TRUE(d[i] == want.distance.data<float>()[w] && got.sites[static_cast<std::size_t>(i)] == want_sites[w])
                << name(fill) << " fill on " << test::describe(img) << ", rows [" << first << ", " << last << ") at ("
                << i % nx << ", " << first + i / nx << "): distance " << d[i] << " site "
                << got.sites[static_cast<std::size_t>(i)] << ", want " << want.distance.data<float>()[w] << " site "
                << want_sites[w];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace repix
