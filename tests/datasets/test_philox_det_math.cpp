// Philox known answers, deterministic math accuracy against libm (as an oracle only), and the
// distribution helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/det_math.hpp"
#include "core/philox.hpp"

namespace repix {
namespace {

TEST(Philox, Random123KnownAnswers) {
  struct Kat {
    philox::Block ctr;
    std::uint32_t k0, k1;
    philox::Block want;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const auto& k : kats) {
    const philox::Block got = philox::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.v[i], k.want.v[i]) << "word " << i;
  }
}

TEST(Philox, BitsAtIsWordOfBlock) {
  for (std::uint64_t i : {0ull, 1ull, 2ull, 3ull, 4ull, 7ull, 1000001ull, (1ull << 40) + 5}) {
    const auto b = philox::draw(42, i / 4, 7);
    EXPECT_EQ(philox::bits_at(42, i, 7), b.v[i % 4]);
  }
  // Seeds and streams give different numbers.
  EXPECT_NE(philox::bits_at(1, 0, 0), philox::bits_at(2, 0, 0));
  EXPECT_NE(philox::bits_at(1, 0, 0), philox::bits_at(1, 0, 1));
  EXPECT_NE(philox::bits_at(1ull << 32, 0, 0), philox::bits_at(0, 0, 0));  // high seed word used
}

TEST(Philox, UniformHelpers) {
  EXPECT_EQ(philox::uniform_float(0), 0.0f);
  EXPECT_LT(philox::uniform_float(0xffffffffu), 1.0f);
  EXPECT_EQ(philox::uniform_float(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
  EXPECT_LT(philox::uniform_double(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(philox::uniform_below(0xffffffffu, 7), 6u);
  EXPECT_EQ(philox::uniform_below(0, 7), 0u);
  // All of 0..n-1 appear, nothing outside, roughly equally often.
  std::vector<int> count(10);
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const std::uint32_t v = philox::uniform_below(philox::bits_at(3, i), 10);
    ASSERT_LT(v, 10u);
    ++count[v];
  }
  for (int c : count) EXPECT_NEAR(c, 10000, 500);
}

TEST(Philox, NormalMoments) {
  double s1 = 0, s2 = 0, s4 = 0;
  const int n = 100000;
  for (int i = 0; i < n / 2; ++i) {
    double a, b;
    philox::normal_pair(philox::draw(9, static_cast<std::uint64_t>(i)), &a, &b);
    for (double z : {a, b}) {
      ASSERT_TRUE(std::isfinite(z));
      s1 += z;
      s2 += z * z;
      s4 += z * z * z * z;
    }
  }
  EXPECT_NEAR(s1 / n, 0.0, 0.02);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
  EXPECT_NEAR(s4 / n, 3.0, 0.1);  // kurtosis of a normal
}

TEST(DetMath, SinCosMatchLibm) {
  double worst = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const double x = i * 0.00137 + 1e-3;  // up to ~274 rad
    double s, c;
    det::sincos(x, &s, &c);
    worst = std::max({worst, std::fabs(s - std::sin(x)), std::fabs(c - std::cos(x))});
  }
  EXPECT_LT(worst, 1e-15);
  for (double x : {1e-300, 1e-20, 1e-8, 0.5, 0.785398, 3.14159, 1e4, 123456.789, 1e6}) {
    EXPECT_NEAR(det::sin(x), std::sin(x), 2e-15 * std::max(1.0, std::fabs(x) / 1e5)) << x;
    EXPECT_NEAR(det::cos(x), std::cos(x), 2e-15 * std::max(1.0, std::fabs(x) / 1e5)) << x;
    EXPECT_EQ(det::sin(-x), -det::sin(x));
    EXPECT_EQ(det::cos(-x), det::cos(x));
  }
  EXPECT_EQ(det::sin(0.0), 0.0);
  EXPECT_EQ(det::cos(0.0), 1.0);
  EXPECT_TRUE(std::isnan(det::sin(NAN)));
  EXPECT_TRUE(std::isnan(det::cos(INFINITY)));
}

TEST(DetMath, SinCosTurns) {
  double worst = 0;
  for (int n : {3, 7, 64, 100, 4096, 12345}) {
    for (int k = 0; k < n; k += std::max(1, n / 500)) {
      double s, c;
      det::sincos_turns(static_cast<double>(k) / n, &s, &c);
      const long double a = 2.0L * 3.14159265358979323846264338327950288L * k / n;
      worst = std::max({worst, static_cast<double>(std::fabs(s - std::sin(a))),
                        static_cast<double>(std::fabs(c - std::cos(a)))});
    }
  }
  EXPECT_LT(worst, 5e-16);
  double s, c;
  det::sincos_turns(0.25, &s, &c);
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(c, 0.0);
  det::sincos_turns(0.5, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, -1.0);
  det::sincos_turns(-0.75, &s, &c);
  EXPECT_EQ(s, 1.0);
  det::sincos_turns(1.0 / 8, &s, &c);
  EXPECT_NEAR(s, std::sqrt(0.5), 2e-16);
  EXPECT_NEAR(c, std::sqrt(0.5), 2e-16);
}

TEST(DetMath, LogExpPow) {
  double worst = 0;
  for (int i = 1; i <= 200000; ++i) {
    const double x = std::ldexp(1.0 + (i % 1000) * 0.001237, i / 1000 - 100);
    worst = std::max(worst, std::fabs(det::log(x) - std::log(x)) / std::max(1.0, std::fabs(std::log(x))));
  }
  EXPECT_LT(worst, 1e-15);
  for (double x : {1.0 - 1e-12, 1.0 + 1e-12, 0.5, 2.0, 1e-310, 5e-324, 1e308, 0.7071, 1.4142})
    EXPECT_NEAR(det::log(x), std::log(x), 1e-15 * std::max(1.0, std::fabs(std::log(x)))) << x;
  EXPECT_EQ(det::log(1.0), 0.0);
  EXPECT_EQ(det::log(0.0), -INFINITY);
  EXPECT_TRUE(std::isnan(det::log(-1.0)));
  EXPECT_EQ(det::log(INFINITY), INFINITY);

  worst = 0;
  for (int i = -70000; i <= 70000; ++i) {
    const double x = i * 0.01;
    worst = std::max(worst, std::fabs(det::exp(x) - std::exp(x)) / std::exp(x));
  }
  EXPECT_LT(worst, 1e-15);
  EXPECT_EQ(det::exp(0.0), 1.0);
  EXPECT_EQ(det::exp(1000.0), INFINITY);
  EXPECT_EQ(det::exp(-1000.0), 0.0);
  EXPECT_NEAR(det::exp(-740.0), std::exp(-740.0), 1e-15 * std::exp(-740.0) + 1e-323);
  EXPECT_NEAR(det::pow_pos(2.0, 0.5), std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(det::pow_pos(12345.0, -0.75), std::pow(12345.0, -0.75), 1e-15 * std::pow(12345.0, -0.75));
}

}  // namespace
}  // namespace repix
