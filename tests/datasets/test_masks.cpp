// noise-mask and tissue masks and their markers: the properties each promises, the opening
// against a brute-force one, independence of the thread count, and mask_spec().
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "datasets/datasets.hpp"

namespace repix::datasets {
namespace {

const std::uint8_t* px(const HostImage& img) { return img.data<std::uint8_t>(); }

TEST(Masks, NoiseMaskSpansTheFullRange) {
  const HostImage m = generate("noise-mask:300x200:sigma=3:seed=4");
  ASSERT_EQ(m.dtype(), DType::u8);
  ASSERT_EQ(m.shape(), Shape::d2(300, 200));
  EXPECT_EQ(*std::min_element(px(m), px(m) + m.size()), 0);
  EXPECT_EQ(*std::max_element(px(m), px(m) + m.size()), 255);
  // Smooth: neighbouring pixels differ by far less than independent noise would.
  double diff = 0;
  for (std::int64_t i = 1; i < m.size(); ++i) diff += std::abs(px(m)[i] - px(m)[i - 1]);
  EXPECT_LT(diff / static_cast<double>(m.size()), 20.0);
}

TEST(Masks, TissueCoverageIsThePercentageOfForeground) {
  for (int c : {25, 50, 75, 100}) {
    const HostImage m = generate("tissue:256x192:coverage=" + std::to_string(c) + ":seed=3");
    std::int64_t fg = 0;
    for (std::int64_t i = 0; i < m.size(); ++i) fg += px(m)[i] >= 96;
    const double frac = 100.0 * static_cast<double>(fg) / static_cast<double>(m.size());
    EXPECT_GE(frac, c - 0.01) << c;
    EXPECT_LE(frac, c + 1.0) << c;
  }
}

TEST(Masks, MarkersAreBelowTheirMaskAndFollowTheirDefinitions) {
  const std::string mask_text = "tissue:97x83:coverage=50:seed=5";
  const HostImage mask = generate(mask_text);
  const std::int64_t nx = 97, ny = 83;
  for (const char* mk : {"opening", "h-minus", "frame", "single-seed"}) {
    const Spec spec = Spec::parse(mask_text + ":marker=" + mk);
    EXPECT_TRUE(is_marker_spec(spec));
    EXPECT_EQ(mask_spec(spec).str(), Spec::parse(mask_text).str());
    const HostImage marker = generate(spec);
    for (std::int64_t i = 0; i < mask.size(); ++i) ASSERT_LE(px(marker)[i], px(mask)[i]) << mk << " at " << i;
  }
  const HostImage h = generate(mask_text + ":marker=h-minus:h=30");
  for (std::int64_t i = 0; i < mask.size(); ++i) ASSERT_EQ(px(h)[i], std::max(0, px(mask)[i] - 30));
  const HostImage f = generate(mask_text + ":marker=frame");
  for (std::int64_t i = 0; i < mask.size(); ++i) {
    const std::int64_t x = i % nx, y = i / nx;
    ASSERT_EQ(px(f)[i], (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) ? px(mask)[i] : 0);
  }
  const HostImage s = generate(mask_text + ":marker=single-seed");
  const std::int64_t at = std::max_element(px(mask), px(mask) + mask.size()) - px(mask);
  EXPECT_EQ(std::count(px(s), px(s) + s.size(), 0), s.size() - (px(mask)[at] ? 1 : 0));
  EXPECT_EQ(px(s)[at], px(mask)[at]);
}

// Erosion then dilation by the disk, straight from the definition.
HostImage brute_opening(const HostImage& in, int r) {
  const std::int64_t nx = in.shape().nx, ny = in.shape().ny;
  auto pass = [&](const HostImage& src, bool is_min) {
    HostImage out(DType::u8, src.shape());
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        int v = is_min ? 255 : 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            if (dx * dx + dy * dy > r * r) continue;
            const std::int64_t qx = x + dx, qy = y + dy;
            if (qx < 0 || qx >= nx || qy < 0 || qy >= ny) continue;
            const int q = src.data<std::uint8_t>()[qy * nx + qx];
            v = is_min ? std::min(v, q) : std::max(v, q);
          }
        out.data<std::uint8_t>()[y * nx + x] = static_cast<std::uint8_t>(v);
      }
    return out;
  };
  return pass(pass(in, true), false);
}

TEST(Masks, OpeningMatchesTheDefinition) {
  for (int r : {0, 1, 2, 3, 7}) {
    const std::string base = "noise-mask:53x41:sigma=1:seed=" + std::to_string(r + 2);
    const HostImage got = generate(base + ":marker=opening:radius=" + std::to_string(r));
    const HostImage want = brute_opening(generate(base), r);
    ASSERT_EQ(std::memcmp(got.raw(), want.raw(), got.bytes()), 0) << "radius " << r;
  }
}

TEST(Masks, SameBytesForAnyThreadCount) {
  const int saved = omp_get_max_threads();
  std::vector<std::uint64_t> hashes;
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    std::uint64_t h = 0;
    for (const char* spec : {"noise-mask:700x300:sigma=5", "tissue:600x500:coverage=75:marker=opening:radius=4"})
      h = h * 31 + generate(spec).content_hash();
    hashes.push_back(h);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(hashes[0], hashes[1]);
}

}  // namespace
}  // namespace repix::datasets
