// Ranklet stage, CPU side: seq against the brute-force pair-counting oracle; every CPU variant
// against seq (RankletCpuVariant.*/<id>) on seeded inputs and on the edge shapes (smaller than the
// window, 1xN, Nx1, non-square, heavy ties, constant images); constant images against a closed
// form of the 255 padding; quantisation (the R = 1 clamp); windows in any order; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ami/ranklet/ranklet.hpp"
#include "ami/ranklet/variants.hpp"
#include "ami/ranklet/ranklet_test_support.hpp"
#include "support/variants.hpp"

namespace repix {
namespace {

using namespace test::ranklet;  // rk, noise, constant, oracle, same

std::vector<std::string> cpu_variants() { return test::variant_ids(rk::variants(), test::Device::cpu); }

class RankletCpuVariant : public test::VariantTest {};
REPIX_INSTANTIATE_VARIANTS(RankletCpuVariant, cpu_variants());

rk::Options with_windows(std::vector<int> w) {
  rk::Options o;
  o.windows = std::move(w);
  return o;
}

TEST(RankletCpu, VariantsRegisteredInOrder) {
  std::vector<std::string> ids;
  for (const auto& v : rk::variants()) ids.push_back(v.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"seq", "seq-hist", "omp", "omp-hist", "gpu-naive", "gpu-opt"}));
  for (const auto& v : rk::variants()) {
    EXPECT_FALSE(v.step.empty()) << v.id;
    EXPECT_FALSE(v.description.empty()) << v.id;
    EXPECT_EQ(v.gpu, static_cast<bool>(v.make_plan)) << v.id << ": GPU variants have a plan for the kernel scope";
  }
}

// The reference against the oracle: every window size, seeded noise with and without ties, odd
// shapes and sizes below the window.
TEST(RankletCpu, SeqMatchesPairCountingOracle) {
  const std::vector<int> all = {2, 4, 8, 16, 32};
  std::vector<HostImage> images;
  images.push_back(noise(13, 11, 256, 1));
  images.push_back(noise(9, 14, 3, 2));
  images.push_back(noise(1, 7, 256, 3));
  images.push_back(noise(6, 1, 2, 4));
  images.push_back(constant(5, 4, 17));
  for (const HostImage& img : images) {
    const rk::Result got = rk::find_variant("seq").run(img, with_windows(all));
    EXPECT_TRUE(same(got, test::ranklet::oracle(img, all))) << img.shape().str();
  }
  // A larger one at the smaller windows (the oracle is O(N^2) per pixel).
  const HostImage big = noise(41, 29, 256, 5);
  EXPECT_TRUE(same(rk::find_variant("seq").run(big, with_windows({8, 2, 4})), test::ranklet::oracle(big, {8, 2, 4})));
}

// The thesis's Figure 2.1 window (r = 4), whose ranks it prints: the rank sum of each T half by
// hand from that figure gives R_H = (2+5+3+16+15+1+11+7 - 36)/64, R_V = (2+5+6+9+3+16+13+8 - 36)/64,
// R_D = (2+5+3+16+14+10+4+12 - 36)/64.
TEST(RankletCpu, ThesisFigure21Window) {
  const std::uint8_t p[16] = {12, 81, 98, 125, 25, 243, 196, 114, 210, 9, 203, 165, 178, 112, 48, 181};
  HostImage img(DType::u8, Shape::d2(4, 4));
  std::copy(p, p + 16, img.data<std::uint8_t>());
  // Output pixel (1, 1): its window is rows 0..3, columns 0..3 (the bottom-right pixel of TL).
  const rk::Result r = rk::find_variant("seq").run(img, with_windows({4}));
  const int at = 1 * 4 + 1;
  EXPECT_EQ(rk::plane(r, 0, 0)[at], (60.0f - 36.0f) / 64.0f);
  EXPECT_EQ(rk::plane(r, 0, 1)[at], (62.0f - 36.0f) / 64.0f);
  EXPECT_EQ(rk::plane(r, 0, 2)[at], (66.0f - 36.0f) / 64.0f);
}

// Every CPU variant equals seq bit for bit.
TEST_P(RankletCpuVariant, MatchesSeqOnSeededInputs) {
  const rk::Variant& v = rk::find_variant(GetParam());
  const rk::Variant& ref = rk::find_variant("seq");
  const rk::Options opt;  // 4, 8, 16, 32
  for (std::uint64_t seed = 1; seed <= 3; ++seed)
    for (const HostImage& img : {noise(37, 29, 256, seed), noise(40, 33, 3, seed + 10)})
      EXPECT_TRUE(same(v.run(img, opt), ref.run(img, opt))) << GetParam() << " seed " << seed << " " << img.shape().str();
}

TEST_P(RankletCpuVariant, EdgeShapesAndTies) {
  const rk::Variant& v = rk::find_variant(GetParam());
  const rk::Variant& ref = rk::find_variant("seq");
  const rk::Options opt = with_windows({2, 4, 8, 16, 32});
  const std::pair<int, int> shapes[] = {{1, 1}, {1, 23}, {23, 1}, {3, 5}, {31, 2}, {2, 31}, {33, 17}, {17, 40}};
  for (auto [nx, ny] : shapes) {
    for (int levels : {2, 3, 256}) {
      const HostImage img = noise(nx, ny, levels, nx * 100 + ny + levels);
      EXPECT_TRUE(same(v.run(img, opt), ref.run(img, opt))) << GetParam() << " " << nx << "x" << ny << " levels " << levels;
    }
    for (std::uint8_t c : {0, 128, 255}) {
      const HostImage img = constant(nx, ny, c);
      EXPECT_TRUE(same(v.run(img, opt), ref.run(img, opt))) << GetParam() << " constant " << int(c);
    }
  }
}

// Windows in any order: each window's planes are the same as when it is asked alone.
TEST_P(RankletCpuVariant, WindowsInAnyOrder) {
  const rk::Variant& v = rk::find_variant(GetParam());
  const HostImage img = noise(23, 19, 256, 7);
  const std::vector<int> order = {16, 2, 32, 8, 4};
  const rk::Result all = v.run(img, with_windows(order));
  ASSERT_EQ(all.windows, order);
  for (std::size_t w = 0; w < order.size(); ++w) {
    const rk::Result one = v.run(img, with_windows({order[w]}));
    for (int o = 0; o < rk::kOrientations; ++o)
      EXPECT_TRUE(std::equal(rk::plane(all, w, o), rk::plane(all, w, o) + img.size(), rk::plane(one, 0, o)))
          << GetParam() << " window " << order[w] << " orientation " << o;
  }
}

// A constant image of value c < 255: T holds a padded (255) pixels, C holds b, of n = N/2 each;
// 255 > c, so 2U = a b (ties) + 2 a (n - b) + (n - a)(n - b) (ties). R = 0.5 where no padding.
TEST(RankletCpu, ConstantImageFollowsThePaddingRule) {
  const std::int64_t nx = 21, ny = 13;
  for (std::uint8_t c : {std::uint8_t(0), std::uint8_t(254)}) {
    const HostImage img = constant(nx, ny, c);
    const std::vector<int> windows = {2, 4, 8, 16, 32};
    const rk::Result r = rk::find_variant("seq").run(img, with_windows(windows));
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const int rr = windows[w], h = rr / 2;
      const std::int64_t n = rr * rr / 2;
      for (int o = 0; o < 3; ++o)
        for (std::int64_t y = 0; y < ny; ++y)
          for (std::int64_t x = 0; x < nx; ++x) {
            std::int64_t a = 0, b = 0;
            for (int i = 0; i < rr; ++i)
              for (int j = 0; j < rr; ++j) {
                const std::int64_t px = x - h + 1 + j, py = y - h + 1 + i;
                if (px >= 0 && px < nx && py >= 0 && py < ny) continue;
                const bool right = j >= h, bottom = i >= h;
                const bool t = o == 0 ? !right : o == 1 ? !bottom : right == bottom;
                (t ? a : b) += 1;
              }
            const std::int64_t two_u = a * b + 2 * a * (n - b) + (n - a) * (n - b);
            const float want = static_cast<float>(static_cast<double>(two_u) / (2.0 * n * n));
            ASSERT_EQ(rk::plane(r, w, o)[y * nx + x], want) << "r " << rr << " o " << o << " x " << x << " y " << y;
            if (a == 0 && b == 0) ASSERT_EQ(want, 0.5f);
          }
    }
  }
  // 255 alone: the padding ties with everything, R = 0.5 everywhere.
  const rk::Result all255 = rk::find_variant("seq").run(constant(5, 3, 255), rk::Options{});
  for (std::int64_t i = 0; i < all255.ranklet.size(); ++i) ASSERT_EQ(all255.ranklet.data<float>()[i], 0.5f);
}

TEST(RankletCpu, QuantisationAndTheROneClamp) {
  for (int r : {2, 4, 8, 16, 32}) {
    const std::uint32_t scale = rk::two_u_scale(r);
    EXPECT_EQ(scale, static_cast<std::uint32_t>(r * r) * static_cast<std::uint32_t>(r * r) / 2);
    EXPECT_EQ(rk::ranklet_value(scale, r), 1.0f);
    EXPECT_EQ(rk::quantise_two_u(scale, r), 256) << "R = 1 is clamped into level 256";
    EXPECT_EQ(rk::quantise(1.0f, r), 256);
    EXPECT_EQ(rk::quantise_two_u(0, r), 1);
    EXPECT_EQ(rk::quantise(0.0f, r), 1);
    EXPECT_EQ(rk::quantise(0.5f, r), 129);  // floor(128) + 1
    for (std::uint32_t two_u = 0; two_u <= scale; two_u += (r >= 16 ? 97 : 1)) {
      const float value = rk::ranklet_value(two_u, r);
      EXPECT_EQ(static_cast<double>(value), static_cast<double>(two_u) / scale) << "exact in float32";
      EXPECT_EQ(rk::two_u_of(value, r), two_u);
      const long long want = std::min<long long>(256, static_cast<long long>(std::floor(256.0 * two_u / scale)) + 1);
      ASSERT_EQ(rk::quantise_two_u(two_u, r), want) << "r " << r << " 2U " << two_u;
      ASSERT_EQ(rk::quantise(value, r), want);
    }
  }
  // R = 1 happens: a window whose T half is all above its C half.
  HostImage img = constant(4, 4, 0);
  for (int y = 0; y < 4; ++y) img.data<std::uint8_t>()[y * 4 + 0] = img.data<std::uint8_t>()[y * 4 + 1] = 200;
  const rk::Result r = rk::find_variant("seq").run(img, with_windows({4}));
  const float horizontal = rk::plane(r, 0, 0)[1 * 4 + 1];  // window rows 0..3, columns 0..3
  EXPECT_EQ(horizontal, 1.0f);
  EXPECT_EQ(rk::quantise(horizontal, 4), 256);
}

TEST(RankletCpu, HeapSortSorts) {
  for (int n : {0, 1, 2, 3, 16, 64, 1024}) {
    const HostImage img = noise(n > 0 ? n : 1, 1, n == 64 ? 3 : 256, n + 1);
    std::vector<std::uint8_t> a(img.data<std::uint8_t>(), img.data<std::uint8_t>() + (n > 0 ? n : 0)), b = a;
    rk::heap_sort(a.data(), n);
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << n;
  }
}

TEST(RankletCpu, WindowsAndInputsAreChecked) {
  EXPECT_EQ(rk::parse_windows("32,4"), (std::vector<int>{32, 4}));
  EXPECT_EQ(rk::windows_text({16, 2}), "16,2");
  for (const char* bad : {"", "4,", ",4", "3", "64", "1", "0", "4,4", "8,x", "4;8", "-4", "4, 8"})
    EXPECT_THROW(rk::parse_windows(bad), Error) << bad;
  EXPECT_THROW(rk::check_windows({}), Error);
  const rk::Variant& seq = rk::find_variant("seq");
  EXPECT_THROW(seq.run(HostImage(DType::f32, Shape::d2(4, 4)), {}), Error);
  EXPECT_THROW(seq.run(HostImage(DType::u16, Shape::d2(4, 4)), {}), Error);
  EXPECT_THROW(seq.run(HostImage(DType::u8, Shape::d3(4, 4, 2)), {}), Error);
  EXPECT_THROW(seq.run(HostImage(DType::u8, Shape::d1(4)), {}), Error);
  EXPECT_THROW(seq.run(constant(4, 4, 1), with_windows({6})), Error);
}

}  // namespace
}  // namespace repix
