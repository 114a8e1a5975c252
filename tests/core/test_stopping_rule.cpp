// The stopping rule (core/stopping_rule.hpp) on synthetic sample streams with a synthetic clock:
// it stops on noise, on max-time and on max-samples, never below min-samples, resolves the
// automatic minimum from the first sample, waits for min-time before a noise stop, and its noise
// is the distribution-free interval of the median (checked against order statistics by hand).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/stopping_rule.hpp"

namespace repix::protocol {
namespace {

// A stream of samples (ms) from `next`, each advancing a clock by `wall_per_sample` seconds (the
// sample's own time plus what a real harness spends around it).
struct Stream {
  std::function<double(int)> next;
  double wall_per_sample = 0.001;
  int taken = 0;
  double now = 0;
  Outcome run(const Rule& rule) {
    return sample_until(
        rule,
        [&] {
          now += wall_per_sample;
          return next(taken++);
        },
        [&] { return now; });
  }
};

Rule rule_with(int min_samples, double min_time_s, double max_noise_pct, double max_time_s, int max_samples = 1000) {
  Rule r;
  r.min_samples = min_samples;
  r.min_time_s = min_time_s;
  r.max_noise_pct = max_noise_pct;
  r.max_time_s = max_time_s;
  r.max_samples = max_samples;
  return r;
}

TEST(StoppingRule, QuietStreamStopsOnNoiseOnceMinSamplesAndMinTimeAreIn) {
  // 2 ms samples, +-0.1 %: noise is reached at once, so min-time (0.049 s: 25 samples) decides.
  Stream s{[](int i) { return 2.0 * (1 + 0.001 * ((i % 3) - 1)); }};
  const Outcome o = s.run(rule_with(10, 0.049, 1.0, 10));
  EXPECT_EQ(o.stopped_by, Stop::kNoise);
  EXPECT_EQ(o.samples_ms.size(), 25u);
  EXPECT_TRUE(o.noise_reached());
  EXPECT_LE(o.noise.pct, 1.0);
  EXPECT_GE(o.noise.confidence, 0.95);
}

TEST(StoppingRule, NeverBelowMinSamplesEvenPastMaxTime) {
  // Each sample "takes" 5 s of wall time: max-time (1 s) is passed at the first, yet 7 are taken.
  Stream s{[](int) { return 5000.0; }, 5.0};
  const Outcome o = s.run(rule_with(7, 0, 0.0, 1.0));
  EXPECT_EQ(o.samples_ms.size(), 7u);
  EXPECT_EQ(o.stopped_by, Stop::kMaxTime);
  EXPECT_EQ(o.min_samples, 7);
}

TEST(StoppingRule, NoisyStreamStopsOnMaxTimeWithTheNoiseAboveTheTarget) {
  // Samples alternating 1 and 3 ms: the median's interval never narrows under 1 %.
  Stream s{[](int i) { return i % 2 ? 3.0 : 1.0; }, 0.0078125};  // 2^-7 s: exact sums
  const Outcome o = s.run(rule_with(10, 0.01, 1.0, 0.5));
  EXPECT_EQ(o.stopped_by, Stop::kMaxTime);
  EXPECT_EQ(o.samples_ms.size(), 64u);  // 0.5 s at 2^-7 s a sample
  EXPECT_FALSE(o.noise_reached());
  EXPECT_GT(o.noise.pct, 1.0);
}

TEST(StoppingRule, StopsOnMaxSamples) {
  Stream s{[](int i) { return i % 2 ? 3.0 : 1.0; }};
  const Outcome o = s.run(rule_with(0, 0, 0.5, 0, 40));
  EXPECT_EQ(o.stopped_by, Stop::kMaxSamples);
  EXPECT_EQ(o.samples_ms.size(), 40u);
}

TEST(StoppingRule, NoNoiseStopBeforeMinTime) {
  // Identical samples (noise 0) of 1 ms: min-time 0.2 s needs 200 of them.
  Stream s{[](int) { return 1.0; }};
  const Outcome o = s.run(rule_with(3, 0.2, 1.0, 100));
  EXPECT_EQ(o.stopped_by, Stop::kNoise);
  EXPECT_EQ(o.samples_ms.size(), 200u);
}

TEST(StoppingRule, NoiseTargetZeroNeverStopsOnNoise) {
  Stream s{[](int) { return 1.0; }};
  const Outcome o = s.run(rule_with(3, 0, 0.0, 0, 17));
  EXPECT_EQ(o.stopped_by, Stop::kMaxSamples);
  EXPECT_EQ(o.samples_ms.size(), 17u);
  EXPECT_FALSE(o.noise_reached());
}

TEST(StoppingRule, FixedRuleTakesExactlyN) {
  for (int n : {1, 2, 5, 30}) {
    Stream s{[](int i) { return 1.0 + i; }, 100.0};  // slow and noisy: neither matters
    const Outcome o = s.run(Rule::fixed(n));
    EXPECT_EQ(o.samples_ms.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(o.stopped_by, Stop::kMaxSamples);
  }
}

TEST(StoppingRule, AutomaticMinimumFollowsTheFirstSample) {
  // max-time 0: only noise (reached at once: identical samples) or the minimum decide.
  Stream longs{[](int) { return kLongSampleMs; }};
  const Outcome a = longs.run(rule_with(0, 0, 1.0, 0));
  EXPECT_EQ(a.min_samples, kMinSamplesLong);
  EXPECT_EQ(a.samples_ms.size(), static_cast<std::size_t>(kMinSamplesLong));
  Stream shorts{[](int) { return kLongSampleMs / 2; }};
  const Outcome b = shorts.run(rule_with(0, 0, 1.0, 0));
  EXPECT_EQ(b.min_samples, kMinSamplesShort);
  EXPECT_EQ(b.samples_ms.size(), static_cast<std::size_t>(kMinSamplesShort));
  // The minimum never exceeds the maximum.
  Stream few{[](int) { return 1.0; }};
  EXPECT_EQ(few.run(rule_with(0, 0, 1.0, 0, 4)).samples_ms.size(), 4u);
}

TEST(StoppingRule, SamplerDecidesSampleBySample) {
  Sampler s(rule_with(3, 0, 10.0, 1.0));
  EXPECT_EQ(s.add(1.0, 0.1), Stop::kNone);
  EXPECT_EQ(s.add(1.0, 0.2), Stop::kNone);
  EXPECT_EQ(s.add(1.0, 0.3), Stop::kNoise);  // the third: min-samples met, noise 0
  Sampler t(rule_with(3, 0, 1.0, 1.0));
  EXPECT_EQ(t.add(1.0, 0.5), Stop::kNone);
  EXPECT_EQ(t.add(2.0, 1.5), Stop::kNone);    // past max-time, but 2 < min-samples
  EXPECT_EQ(t.add(3.0, 1.6), Stop::kMaxTime);  // noise 50 %: time decides
}

// The interval by hand: the largest j with 1 - 2 P(B(n, 1/2) <= j - 1) >= 0.95.
TEST(StoppingRule, MedianNoiseIsTheOrderStatisticInterval) {
  // n = 6: j = 1 (coverage 1 - 2/64 = 96.9 %): [min, max].
  const Noise six = median_noise({10, 11, 12, 13, 14, 20});
  EXPECT_NEAR(six.pct, 100.0 * (20 - 10) / (2 * 12.5), 1e-9);
  EXPECT_NEAR(six.confidence, 1 - 2.0 / 64, 1e-12);
  // n = 20: j = 6 (P(B <= 5) = 0.0207, coverage 95.9 %; j = 7: P(B <= 6) = 0.0577, 88.5 %).
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(100 + i);  // x(6) = 106, x(15) = 115, median 110.5
  std::swap(twenty[0], twenty[19]);                          // order does not matter
  const Noise n20 = median_noise(twenty);
  EXPECT_NEAR(n20.pct, 100.0 * (115 - 106) / (2 * 110.5), 1e-9);
  EXPECT_NEAR(n20.confidence, 0.9586, 1e-4);
  // Below 6 samples min and max bound it, with their lower coverage (3: 75 %).
  const Noise three = median_noise({1, 2, 4});
  EXPECT_NEAR(three.pct, 100.0 * 3 / 4, 1e-9);
  EXPECT_NEAR(three.confidence, 0.75, 1e-12);
  EXPECT_TRUE(std::isnan(median_noise({5}).pct));
  EXPECT_TRUE(std::isnan(median_noise({}).pct));
}

TEST(StoppingRule, NoiseShrinksWithMoreSamplesOfOneDistribution) {
  // What makes the rule converge: the same distribution, more samples, a narrower interval
  // (IQR / median would not shrink).
  std::mt19937 gen(7);
  std::normal_distribution<double> d(10.0, 0.5);
  std::vector<double> x;
  for (int i = 0; i < 2000; ++i) x.push_back(d(gen));
  const double at50 = median_noise(std::vector<double>(x.begin(), x.begin() + 50)).pct;
  const double at2000 = median_noise(x).pct;
  EXPECT_LT(at2000, at50 / 3);
  EXPECT_GT(at2000, 0);
}

TEST(StoppingRule, InvalidRulesAreRefused) {
  Rule r;
  r.max_samples = 0;
  EXPECT_THROW(r.validate(), Error);
  r = Rule{};
  r.min_samples = 10;
  r.max_samples = 5;
  EXPECT_THROW(r.validate(), Error);
  r = Rule{};
  r.max_noise_pct = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(r.validate(), Error);
  r = Rule{};
  r.min_time_s = -1;
  EXPECT_THROW(r.validate(), Error);
  EXPECT_THROW(Sampler{r}, Error);
}

}  // namespace
}  // namespace repix::protocol
