#include "harness/protocol.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"

namespace repix::protocol {

using nlohmann::json;

namespace {
// Past these no measurement is plausible: a report keeps every raw sample (100000 of them is
// ~2 MB of JSON a row), and a row sampled for a day is a typo.
constexpr int kSamplesCap = 100000;
constexpr double kSecondsCap = 86400;
}  // namespace

const std::vector<std::string>& option_names() {
  static const std::vector<std::string> names = {"min-samples", "max-samples", "min-time",
                                                 "max-noise",   "max-time",    "warmup"};
  return names;
}

std::string usage() {
  const Rule d;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "  the stopping rule of every timed row (each row records it and what stopped it):\n"
                "        [--min-samples N]   at least N samples (default auto: %d, or %d when one takes %g ms or more)\n"
                "        [--min-time S]      and at least S seconds of sampled time (default %g) before\n"
                "        [--max-noise PCT]   stopping once the median's 95%% interval is within +-PCT %% (default %g;\n"
                "                            0: never on noise)\n"
                "        [--max-time S]      never sampling past S seconds a row once N are in (default %g; 0: no limit)\n"
                "        [--max-samples N]   nor past N samples (default %d)\n"
                "        [--warmup N]        untimed runs first (default %d; the verifying run counts as the first)\n",
                kMinSamplesShort, kMinSamplesLong, kLongSampleMs, d.min_time_s, d.max_noise_pct, d.max_time_s,
                d.max_samples, d.warmup);
  return buf;
}

Rule from_args(const cli::Args& a, Rule base) {
  base.min_samples = a.get_int("min-samples", base.min_samples, 0, kSamplesCap);
  base.max_samples = a.get_int("max-samples", base.max_samples, 1, kSamplesCap);
  base.min_time_s = a.get_double("min-time", base.min_time_s, 0, kSecondsCap);
  base.max_noise_pct = a.get_double("max-noise", base.max_noise_pct, 0, 100);
  base.max_time_s = a.get_double("max-time", base.max_time_s, 0, kSecondsCap);
  base.warmup = a.get_int("warmup", base.warmup, 0, 1000);
  if (base.min_samples > base.max_samples) {
    // Either one given alone moves the other with it; both given crossed is a usage error.
    if (a.has("min-samples") && a.has("max-samples"))
      throw cli::UsageError("--min-samples " + std::to_string(base.min_samples) + " is above --max-samples " +
                            std::to_string(base.max_samples));
    if (a.has("min-samples")) base.max_samples = base.min_samples;
    else base.min_samples = base.max_samples;
  }
  try {
    base.validate();
  } catch (const Error& e) {
    throw cli::UsageError(e.what());
  }
  return base;
}

json to_json(const Rule& r) {
  return {{"min_samples", r.min_samples == 0 ? json("auto") : json(r.min_samples)},
          {"max_samples", r.max_samples},
          {"min_time_s", r.min_time_s},
          {"max_noise_pct", r.max_noise_pct},
          {"max_time_s", r.max_time_s},
          {"warmup", r.warmup}};
}

Rule rule_from_json(const json& j) {
  try {
    Rule r;
    const json& m = j.at("min_samples");
    r.min_samples = m.is_string() && m.get<std::string>() == "auto" ? 0 : m.get<int>();
    r.max_samples = j.at("max_samples").get<int>();
    r.min_time_s = j.at("min_time_s").get<double>();
    r.max_noise_pct = j.at("max_noise_pct").get<double>();
    r.max_time_s = j.at("max_time_s").get<double>();
    r.warmup = j.at("warmup").get<int>();
    r.validate();
    return r;
  } catch (const json::exception& e) {
    throw Error(std::string("measurement rule: ") + e.what());
  }
}

json to_json(const Outcome& o) {
  return {{"rule", to_json(o.rule)},
          {"stopped_by", stop_name(o.stopped_by)},
          {"min_samples", o.min_samples},
          {"noise_pct", std::isfinite(o.noise.pct) ? json(o.noise.pct) : json(nullptr)},
          {"noise_confidence", o.noise.confidence},
          {"noise_reached", o.noise_reached()},
          {"sampling_s", o.sampling_s}};
}

}  // namespace repix::protocol
