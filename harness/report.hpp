// The versioned JSON report every `repix bench` / `repix table` run writes (schema in docs/report-format.md).
// Plain structs filled by the harness; to_json/from_json and validation in report.cpp.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace repix::report {

inline constexpr int kSchemaVersion = 1;

struct DatasetInfo {
  std::string spec;    // e.g. "grf:512x512x512:alpha=3:seed=4" or "file:img.npy"
  std::string shape;   // "512x512x512"
  std::string dtype;   // "float32"
  std::string hash;    // content hash, 16 hex digits (FNV-1a 64 of dtype, shape and bytes)
  std::int64_t elements = 0;
  std::int64_t distinct_values = -1;  // where the family cares (ECC bins); -1 unknown
};

struct Result {
  std::string family;            // the family's name (harness/families.cpp)
  std::string variant;           // "gpu-opt"
  std::string dataset;           // the DatasetInfo::spec it ran on
  std::string scope;             // "kernel" | "end-to-end" | "with-io"
  std::vector<double> samples_ms;  // every raw sample, in order
  double median_ms = 0, q1_ms = 0, q3_ms = 0, min_ms = 0;
  double items = 0;              // voxels (or pixels, pairs) processed per sample
  std::string unit;              // "GVox/s"
  double throughput = 0;         // items / median, in `unit`
  std::optional<double> pct_of_bound;  // throughput as % of `bound`
  std::string bound;             // name of the bound in Report::bounds, e.g. "dram-read"
  bool verified = false;
  std::string verification;      // what was checked ("exact match with seq", or the mismatch)
  nlohmann::json errors = nlohmann::json::object();  // error statistics (approximate families)
  nlohmann::json extra = nlohmann::json::object();   // variant-specific counters
  // Why it has no samples, "<tag>: <details>" ("no GPU", "absent: ...", "skipped: ...", "error: ...",
  // "wrong output: ..."); "" when it ran. A bench report holds only results that ran (written
  // only when set: an optional field of schema 1); the paper tables show the others as cells.
  std::string not_run;
  // How the samples were taken (harness/protocol.hpp: the stopping rule, what stopped it, the
  // noise reached); null where the samples came from elsewhere (a report of an older repix).
  // Written only when set, as `options` and `reference`: optional fields of schema 1.
  nlohmann::json measurement;
  // Every option value of the family the variant ran with, defaults included ({"threads": 0, ...});
  // null where unknown (peers, older reports).
  nlohmann::json options;
  // The variant whose output this row was checked against (the reference variant itself, or one
  // the family's tests prove identical to it: `verification` says which); "" when unknown.
  std::string reference;

  bool ran() const { return not_run.empty() && !samples_ms.empty(); }
  // Sampling ended on a time or sample limit before the noise target was met (false where the
  // rule had no noise target, or nothing says).
  bool noise_above_target() const;
  // Ran and was not verified, or stopped with an error or a wrong output.
  bool failed() const {
    return (ran() && !verified) || not_run.rfind("error", 0) == 0 || not_run.rfind("wrong output", 0) == 0;
  }
};

// A measured ceiling, e.g. {"dram-read", "GB/s", 3010.5, "device-to-device copy, read+write
// bytes / 2"}; throughputs are converted to items/s with the per-item bytes of each result.
struct Bound {
  std::string name;
  std::string unit;
  double value = 0;
  std::string how;
};

struct Report {
  int schema_version = kSchemaVersion;
  nlohmann::json tool;     // name, version, git_sha, git_dirty
  std::string command;     // the command line
  nlohmann::json env;      // environment (env.hpp); clocks before/after inside env.gpu
  std::vector<DatasetInfo> datasets;
  std::vector<Bound> bounds;
  std::vector<Result> results;
  // Null for a report written by the run that measured it; for one rebuilt from a journal
  // (`repix bench --from`): {"rebuilt_from_journal": path, "results": n, "torn_last_line_ignored"}.
  // Written as "provenance" only when set (an optional field of schema 1).
  nlohmann::json provenance;
};

nlohmann::json to_json(const Report& r);
// The parts on their own (bench journals keep results one by one); the readers throw
// repix::Error like from_json.
nlohmann::json to_json(const Result& r);
nlohmann::json to_json(const DatasetInfo& d);
nlohmann::json to_json(const Bound& b);
Result result_from_json(const nlohmann::json& j);
// The same for nlohmann's conversions (json(r), j.get<Result>(): the tables' journals).
inline void to_json(nlohmann::json& j, const Result& r) { j = to_json(r); }
inline void from_json(const nlohmann::json& j, Result& r) { r = result_from_json(j); }
DatasetInfo dataset_from_json(const nlohmann::json& j);
Bound bound_from_json(const nlohmann::json& j);
// Throws repix::Error with the first missing or mistyped field ("results[3].median_ms: ...").
Report from_json(const nlohmann::json& j);
// Atomic (temporary file, then rename); creates parent directories.
void write_report(const Report& r, const std::string& path);
// Also refuses a report whose timings no measurement gives (a median of 0, negative, not finite,
// above 1e10 ms): what compare and the tables divide by.
Report read_report(const std::string& path);
// That check alone (repix::Error naming the first such field), for reports built otherwise.
void check_timings(const Report& r);

// Medians and quartiles (linear interpolation between order statistics, as numpy's default).
struct Stats {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
};
Stats summarize(std::vector<double> samples);
// The median (as summarize's) of each numeric field of `samples`, an array of JSON objects (the
// fields of the first; a sample without one, or where it is not a number, counts without it).
nlohmann::json median_fields(const nlohmann::json& samples);
// Fills median/q1/q3/min and throughput from samples_ms and items (unit chosen by the caller).
void finalize(Result& r, double items_per_unit);

// A time in milliseconds with 4 significant digits, fixed notation ("0.01235", "1235").
std::string format_ms(double ms);

// Human-readable summary, one line per result (what scripts/bench prints last).
std::string summary_table(const Report& r);
// Two reports side by side, matched on (family, variant, dataset, scope), with B/A ratios. A
// matched row whose two `options` differ is marked " [n]" after its variant, and footnote [n]
// below the table names each differing option with its value in A and in B.
std::string compare_table(const Report& a, const Report& b);

}  // namespace repix::report
