#include "core/stopping_rule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace repix::protocol {

Rule Rule::fixed(int n) {
  Rule r;
  r.min_samples = n;
  r.max_samples = n;
  r.min_time_s = 0;
  r.max_noise_pct = 0;
  r.max_time_s = 0;
  return r;
}

void Rule::validate() const {
  auto bad = [](const std::string& what) { throw Error("measurement rule: " + what); };
  if (min_samples < 0) bad("--min-samples must be 0 (automatic) or more");
  if (max_samples < 1) bad("--max-samples must be at least 1");
  if (min_samples > max_samples) bad("--min-samples is above --max-samples");
  if (!(min_time_s >= 0) || !std::isfinite(min_time_s)) bad("--min-time must be a finite number of seconds >= 0");
  if (!(max_time_s >= 0) || !std::isfinite(max_time_s)) bad("--max-time must be a finite number of seconds >= 0");
  if (!(max_noise_pct >= 0) || !std::isfinite(max_noise_pct)) bad("--max-noise must be a finite percentage >= 0");
  if (warmup < 0) bad("--warmup must be 0 or more");
}

const char* stop_name(Stop s) {
  switch (s) {
    case Stop::kNoise: return "noise";
    case Stop::kMaxTime: return "max-time";
    case Stop::kMaxSamples: return "max-samples";
    case Stop::kNone: break;
  }
  return "";
}

namespace {

// P(B <= k) for B ~ Binomial(n, 1/2), in log space (n up to millions without underflow).
double binomial_half_cdf(int n, int k) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  const double log_half_n = n * std::log(0.5);
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + log_half_n);
  return std::min(1.0, sum);
}

}  // namespace

Noise median_noise(std::vector<double> s) {
  Noise out;
  const int n = static_cast<int>(s.size());
  if (n < 2) {
    out.pct = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  // [x(j), x(n+1-j)] (1-based) covers the median with probability 1 - 2 P(B <= j - 1). The
  // largest j with coverage >= 95 %, or j = 1 (min and max) below 6 samples.
  int j = 1;
  if (n >= 64) {
    // The normal approximation (Conover), a few samples conservative, past where summing the
    // binomial costs more than the samples.
    j = std::max(1, static_cast<int>(std::floor((n - 1.96 * std::sqrt(static_cast<double>(n))) / 2.0)));
  } else {
    while (j + 1 <= n / 2 && 1 - 2 * binomial_half_cdf(n, j) >= 0.95) ++j;
  }
  out.confidence = 1 - 2 * binomial_half_cdf(n, j - 1);
  std::nth_element(s.begin(), s.begin() + (j - 1), s.end());
  const double lo = s[static_cast<std::size_t>(j - 1)];
  std::nth_element(s.begin(), s.begin() + (n - j), s.end());
  const double hi = s[static_cast<std::size_t>(n - j)];
  // The median as report::summarize computes it (numpy's linear interpolation).
  std::sort(s.begin(), s.end());
  const double h = (n - 1) * 0.5;
  const auto a = static_cast<std::size_t>(std::floor(h));
  const double median = s[a] + (h - static_cast<double>(a)) * (s[std::min<std::size_t>(a + 1, s.size() - 1)] - s[a]);
  out.pct = median > 0 ? 100.0 * (hi - lo) / (2.0 * median) : std::numeric_limits<double>::quiet_NaN();
  return out;
}

Sampler::Sampler(const Rule& rule) : rule_(rule), min_samples_(rule.min_samples) { rule_.validate(); }

Stop Sampler::add(double sample_ms, double elapsed_s) {
  samples_.push_back(sample_ms);
  sum_ms_ += sample_ms;
  if (min_samples_ == 0) min_samples_ = std::min(rule_.max_samples, sample_ms >= kLongSampleMs ? kMinSamplesLong : kMinSamplesShort);
  const int n = static_cast<int>(samples_.size());
  if (n >= rule_.max_samples) return Stop::kMaxSamples;
  if (n < min_samples_) return Stop::kNone;
  if (rule_.max_noise_pct > 0 && sum_ms_ >= rule_.min_time_s * 1e3) {
    const Noise noise = median_noise(samples_);
    if (noise.pct <= rule_.max_noise_pct) return Stop::kNoise;  // false for NaN
  }
  if (rule_.max_time_s > 0 && elapsed_s >= rule_.max_time_s) return Stop::kMaxTime;
  return Stop::kNone;
}

bool Outcome::noise_reached() const { return rule.max_noise_pct > 0 && noise.pct <= rule.max_noise_pct; }

Outcome sample_until(const Rule& rule, const std::function<double()>& sample, const std::function<double()>& clock) {
  const auto t0 = std::chrono::steady_clock::now();
  auto now = [&] {
    if (clock) return clock();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double start = now();
  Sampler sampler(rule);
  Outcome out;
  out.rule = rule;
  for (;;) {
    const double ms = sample();
    out.stopped_by = sampler.add(ms, now() - start);
    if (out.stopped_by != Stop::kNone) break;
  }
  out.sampling_s = now() - start;
  out.samples_ms = sampler.samples();
  out.min_samples = sampler.min_samples();
  out.noise = median_noise(out.samples_ms);
  return out;
}

}  // namespace repix::protocol
