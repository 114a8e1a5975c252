// The measurement protocol every timing of repix follows (bench, tables, profile, and whatever
// times later): verify the output, warm up, take samples until a stopping rule holds, verify the
// timed path's output again. This file is the stopping rule (nvbench's idea): at least
// `min_samples` samples and `min_time_s` of sampled time, then stop once the samples' noise is
// under `max_noise_pct`, and never sample past `max_time_s` of wall time once `min_samples` are
// in (nor past `max_samples`). The rest of the protocol is bench::measure_case (harness/bench.hpp),
// the rule's options and JSON harness/protocol.hpp.
//
// Noise is the half-width of a distribution-free confidence interval of the median, relative to
// the median: the order statistics x(j) and x(n+1-j) with the largest j whose interval covers the
// median with at least 95 % probability (binomial, p = 1/2). Unlike IQR/median, which is a property
// of the timing distribution and does not shrink with more samples, it falls as 1/sqrt(n), so
// sampling longer reaches any target on a stable machine; it needs 6 samples for 95 % coverage,
// and below that min and max bound it (75 % coverage at 3 samples, said in `noise_confidence`).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace repix::protocol {

// A first sample at least this long makes the automatic minimum kMinSamplesLong, else
// kMinSamplesShort: three runs of a 10 ms+ variant already cost a human-visible wait.
inline constexpr double kLongSampleMs = 10;
inline constexpr int kMinSamplesLong = 3;
inline constexpr int kMinSamplesShort = 10;

struct Rule {
  int min_samples = 0;          // 0: automatic (kMinSamplesLong or kMinSamplesShort, from the first sample)
  int max_samples = 1000;       // never more (raw samples are kept in every report)
  double min_time_s = 0.1;      // sampled time (the sum of the samples) before noise may stop
  double max_noise_pct = 1.0;   // stop once the noise is at most this (0: never on noise)
  double max_time_s = 1.0;      // wall time of the sampling, once min_samples are in (0: no limit)
  int warmup = 1;               // untimed runs before sampling (the verifying run is the first)

  // Exactly n samples, whatever their noise and time (profile's fixed count; --samples N).
  static Rule fixed(int n);
  // Throws repix::Error naming the first parameter out of range (by its option, --max-noise).
  void validate() const;
};

enum class Stop { kNone, kNoise, kMaxTime, kMaxSamples };
// "noise", "max-time", "max-samples" ("" for kNone).
const char* stop_name(Stop s);

struct Noise {
  double pct = 0;         // half-width of the interval over the median, in %; NaN below 2 samples
  double confidence = 0;  // the interval's coverage of the median (0.95 or more from 6 samples)
};
Noise median_noise(std::vector<double> samples_ms);

// The rule's decision after each sample.
class Sampler {
 public:
  explicit Sampler(const Rule& rule);
  // Records a sample (milliseconds) taken `elapsed_s` wall seconds into the sampling; returns
  // why sampling stops now, or kNone to go on.
  Stop add(double sample_ms, double elapsed_s);
  const std::vector<double>& samples() const { return samples_; }
  int min_samples() const { return min_samples_; }  // 0 until the first sample sets it (automatic)
  const Rule& rule() const { return rule_; }

 private:
  Rule rule_;
  int min_samples_ = 0;
  double sum_ms_ = 0;
  std::vector<double> samples_;
};

struct Outcome {
  Rule rule;
  std::vector<double> samples_ms;
  Stop stopped_by = Stop::kNone;
  int min_samples = 0;   // the minimum in force (the automatic one resolved)
  Noise noise;           // of all samples
  double sampling_s = 0; // wall time of the sampling
  // The noise target was met (always false for a rule with max_noise_pct 0).
  bool noise_reached() const;
};

// Calls sample() (one timed run, milliseconds) until the rule stops; `clock` gives seconds (the
// steady clock when empty; tests give their own).
Outcome sample_until(const Rule& rule, const std::function<double()>& sample,
                     const std::function<double()>& clock = {});

}  // namespace repix::protocol
