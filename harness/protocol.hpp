// The stopping rule (core/stopping_rule.hpp) on the command line and in reports: its options,
// which `repix bench` and the tables take alike, and the JSON each report row records of how it
// was measured.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/stopping_rule.hpp"
#include "harness/args.hpp"

namespace repix::protocol {

// --min-samples, --max-samples, --min-time, --max-noise, --max-time, --warmup.
const std::vector<std::string>& option_names();
// Their synopsis and one help line each, for `repix help`.
std::string usage();
// `base` with the rule options given in `a` over it; a bad value is a cli::UsageError naming it.
Rule from_args(const cli::Args& a, Rule base);

nlohmann::json to_json(const Rule& r);
// Throws repix::Error on a missing or mistyped field.
Rule rule_from_json(const nlohmann::json& j);
// A report row's "measurement": {"rule": {...}, "stopped_by", "min_samples", "noise_pct",
// "noise_confidence", "noise_reached", "sampling_s"}.
nlohmann::json to_json(const Outcome& o);

}  // namespace repix::protocol
