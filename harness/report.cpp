#include "harness/report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <tuple>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/env.hpp"
#include "harness/json_fields.hpp"
#include "harness/json_text.hpp"

namespace repix::report {

using json_fields::field_or;

using nlohmann::json;

namespace {

// ---- serialisation helpers ------------------------------------------------------------------------

// NaN/inf are not JSON: they are written as null (and read back as NaN where a number may be null).
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// ---- validation -----------------------------------------------------------------------------------

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("invalid report: " + path + ": " + what);
}
[[noreturn]] void mistyped(const std::string& path, const char* expected, const json& got) {
  fail(path, std::string("expected ") + expected + ", got " + got.type_name());
}

// `path` by value: GCC 13's -Wdangling-reference would take a temporary path ("") for a
// temporary the returned reference could point into (it points into `obj`).
const json& field(const json& obj, std::string path, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(join(path, key), "missing");
  return *it;
}

void require_object(const json& j, const std::string& path) {
  if (!j.is_object()) mistyped(path.empty() ? "(top level)" : path, "an object", j);
}

std::string get_string(const json& obj, const std::string& path, const char* key) {
  const json& v = field(obj, path, key);
  if (!v.is_string()) mistyped(join(path, key), "a string", v);
  return v.get<std::string>();
}

bool get_bool(const json& obj, const std::string& path, const char* key) {
  const json& v = field(obj, path, key);
  if (!v.is_boolean()) mistyped(join(path, key), "a boolean", v);
  return v.get<bool>();
}

double as_number(const json& v, const std::string& path, bool null_is_nan) {
  if (v.is_null() && null_is_nan) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) mistyped(path, "a number", v);
  return v.get<double>();
}

double get_number(const json& obj, const std::string& path, const char* key) {
  return as_number(field(obj, path, key), join(path, key), /*null_is_nan=*/true);
}

std::int64_t get_int(const json& obj, const std::string& path, const char* key) {
  const json& v = field(obj, path, key);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  // Python writers may emit 5.0 for 5.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
      return static_cast<std::int64_t>(d);
  }
  mistyped(join(path, key), "an integer", v);
}

json get_object(const json& obj, const std::string& path, const char* key) {
  const json& v = field(obj, path, key);
  if (!v.is_object()) mistyped(join(path, key), "an object", v);
  return v;
}

const json& get_array(const json& obj, std::string path, const char* key) {  // path: see field()
  const json& v = field(obj, path, key);
  if (!v.is_array()) mistyped(join(path, key), "an array", v);
  return v;
}

DatasetInfo dataset_from(const json& j, const std::string& p) {
  require_object(j, p);
  DatasetInfo d;
  d.spec = get_string(j, p, "spec");
  d.shape = get_string(j, p, "shape");
  d.dtype = get_string(j, p, "dtype");
  d.hash = get_string(j, p, "hash");
  d.elements = get_int(j, p, "elements");
  d.distinct_values = get_int(j, p, "distinct_values");
  return d;
}

Bound bound_from(const json& j, const std::string& p) {
  require_object(j, p);
  Bound b;
  b.name = get_string(j, p, "name");
  b.unit = get_string(j, p, "unit");
  b.value = get_number(j, p, "value");
  b.how = get_string(j, p, "how");
  return b;
}

Result result_from(const json& j, const std::string& p) {
  require_object(j, p);
  Result r;
  r.family = get_string(j, p, "family");
  r.variant = get_string(j, p, "variant");
  r.dataset = get_string(j, p, "dataset");
  r.scope = get_string(j, p, "scope");
  const json& samples = get_array(j, p, "samples_ms");
  const std::string sp = join(p, "samples_ms");
  r.samples_ms.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i)
    r.samples_ms.push_back(as_number(samples[i], index(sp, i), /*null_is_nan=*/false));
  r.median_ms = get_number(j, p, "median_ms");
  r.q1_ms = get_number(j, p, "q1_ms");
  r.q3_ms = get_number(j, p, "q3_ms");
  r.min_ms = get_number(j, p, "min_ms");
  r.items = get_number(j, p, "items");
  r.unit = get_string(j, p, "unit");
  r.throughput = get_number(j, p, "throughput");
  const json& pct = field(j, p, "pct_of_bound");
  if (pct.is_null()) {
    r.pct_of_bound.reset();
  } else {
    r.pct_of_bound = as_number(pct, join(p, "pct_of_bound"), false);
  }
  r.bound = get_string(j, p, "bound");
  r.verified = get_bool(j, p, "verified");
  r.verification = get_string(j, p, "verification");
  r.errors = get_object(j, p, "errors");
  r.extra = get_object(j, p, "extra");
  if (j.contains("not_run")) r.not_run = get_string(j, p, "not_run");
  if (j.contains("measurement")) r.measurement = get_object(j, p, "measurement");
  if (j.contains("reference")) r.reference = get_string(j, p, "reference");
  if (j.contains("options")) r.options = get_object(j, p, "options");
  return r;
}

// ---- plausibility of what was read ----------------------------------------------------------------

// The range a time of repix's can take, in milliseconds: no timer it uses resolves less than a
// nanosecond, and no measurement runs for 116 days.
constexpr double kMinMs = 1e-6, kMaxMs = 1e10;

void check_time(double ms, const std::string& path, bool zero_ok) {
  if (std::isfinite(ms) && ms <= kMaxMs && (ms >= kMinMs || (zero_ok && ms == 0))) return;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", ms);
  fail(path, std::string(buf) + " is not a time a measurement gives (expected " + (zero_ok ? "0 or " : "") +
                 "1e-06 to 1e+10 ms)");
}

// What compare and the tables divide by: the timings of every result that ran are finite and
// within what a measurement gives (a median of 0, negative, NaN or 1e308 is an edited or damaged
// report, and would print as "nan" or "inf" ratios); throughputs are finite or null (NaN).
}  // namespace

void check_timings(const Report& r) {
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const Result& x = r.results[i];
    if (x.samples_ms.empty()) continue;  // not run: nothing is divided by its times
    const std::string p = index("results", i);
    for (std::size_t k = 0; k < x.samples_ms.size(); ++k) check_time(x.samples_ms[k], index(join(p, "samples_ms"), k), true);
    check_time(x.median_ms, join(p, "median_ms"), false);
    check_time(x.q1_ms, join(p, "q1_ms"), true);
    check_time(x.q3_ms, join(p, "q3_ms"), true);
    check_time(x.min_ms, join(p, "min_ms"), true);
    if (!(x.items >= 0) || !std::isfinite(x.items)) fail(join(p, "items"), "not a count of items");
    if (std::isinf(x.throughput) || x.throughput < 0) fail(join(p, "throughput"), "not a throughput");
  }
}

namespace {

// ---- text tables ----------------------------------------------------------------------------------

// v with `sig` significant digits in fixed notation (no exponents in tables): 1234.5 -> "1235",
// 12.345 -> "12.35", 0.012345 -> "0.01235".
std::string fmt_sig(double v, int sig = 4) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  const int mag = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::clamp(sig - 1 - mag, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_throughput(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "n/a";
  return fmt_sig(v) + (unit.empty() ? "" : " " + unit);
}

std::string fmt_pct(const std::optional<double>& p, const std::string& bound) {
  if (!p || !std::isfinite(*p)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *p);
  return bound.empty() ? std::string(buf) : std::string(buf) + " " + bound;
}

class Table {
 public:
  // Columns whose name starts with '>' are right-aligned (the '>' is not printed).
  explicit Table(std::vector<std::string> header) {
    for (auto& h : header) {
      right_.push_back(!h.empty() && h[0] == '>');
      if (right_.back()) h.erase(0, 1);
    }
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) {
    row.resize(right_.size());
    rows_.push_back(std::move(row));
  }
  std::string render(const std::string& indent = "") const {
    std::vector<std::size_t> w(right_.size(), 0);
    for (const auto& r : rows_)
      for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
    std::ostringstream o;
    auto line = [&](const std::vector<std::string>& r) {
      std::string s = indent;
      for (std::size_t c = 0; c < r.size(); ++c) {
        const std::string pad(w[c] - r[c].size(), ' ');
        if (c) s += "  ";
        s += right_[c] ? pad + r[c] : r[c] + pad;
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      o << s << "\n";
    };
    line(rows_[0]);
    std::vector<std::string> rule;
    for (std::size_t c = 0; c < w.size(); ++c) rule.push_back(std::string(w[c], '-'));
    line(rule);
    for (std::size_t i = 1; i < rows_.size(); ++i) line(rows_[i]);
    return o.str();
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};


std::string gpu_name(const Report& r) {
  if (!r.env.is_object()) return "unknown GPU";
  const auto g = r.env.find("gpu");
  if (g == r.env.end() || !g->is_object()) return "unknown GPU";
  if (!field_or(*g, "available", false)) return "no GPU";
  return field_or(*g, "name", "unknown GPU");
}

// "repix 0.1.0 @ <sha> (dirty), NVIDIA H100 80GB HBM3, 2025-01-31T12:34:56Z"
std::string describe(const Report& r) {
  std::string s = field_or(r.tool, "name", "repix") + " " + field_or(r.tool, "version", "?");
  s += " @ " + env::describe_source(r.tool);
  s += ", " + gpu_name(r);
  const std::string ts = field_or(r.env, "timestamp", "");
  if (!ts.empty()) s += ", " + ts;
  return s;
}

std::string sag_warning(const Report& r) {
  if (!r.env.is_object()) return "";
  const auto g = r.env.find("gpu");
  if (g == r.env.end() || !g->is_object()) return "";
  const auto s = g->find("clocks_sagged");
  if (s == g->end() || !s->is_boolean() || !s->get<bool>()) return "";
  const std::string why = field_or(*g, "clocks_sagged_why", "");
  return "WARNING: GPU clocks sagged during the run" + (why.empty() ? "" : ": " + why);
}

// The report's OpenMP threads slept while waiting (OMP_WAIT_POLICY=passive in its environment).
bool waits_passively(const Report& r) {
  if (!r.env.is_object()) return false;
  const auto cpu = r.env.find("cpu");
  if (cpu == r.env.end() || !cpu->is_object()) return false;
  const auto omp = cpu->find("openmp");
  if (omp == cpu->end()) return false;
  const std::string policy = field_or(*omp, "OMP_WAIT_POLICY", "");
  std::string lower;
  for (char c : policy) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "passive";
}

using Key = std::tuple<std::string, std::string, std::string, std::string>;
Key key_of(const Result& x) { return {x.family, x.variant, x.dataset, x.scope}; }

}  // namespace

// ---- JSON -----------------------------------------------------------------------------------------

json to_json(const DatasetInfo& d) {
  return {{"spec", d.spec}, {"shape", d.shape}, {"dtype", d.dtype}, {"hash", d.hash},
          {"elements", d.elements}, {"distinct_values", d.distinct_values}};
}

json to_json(const Bound& b) {
  return {{"name", b.name}, {"unit", b.unit}, {"value", num(b.value)}, {"how", b.how}};
}

json to_json(const Result& x) {
  json o = json::object();
  o["family"] = x.family;
  o["variant"] = x.variant;
  o["dataset"] = x.dataset;
  o["scope"] = x.scope;
  json samples = json::array();
  for (double v : x.samples_ms) samples.push_back(num(v));
  o["samples_ms"] = std::move(samples);
  o["median_ms"] = num(x.median_ms);
  o["q1_ms"] = num(x.q1_ms);
  o["q3_ms"] = num(x.q3_ms);
  o["min_ms"] = num(x.min_ms);
  o["items"] = num(x.items);
  o["unit"] = x.unit;
  o["throughput"] = num(x.throughput);
  o["pct_of_bound"] = x.pct_of_bound ? num(*x.pct_of_bound) : json(nullptr);
  o["bound"] = x.bound;
  o["verified"] = x.verified;
  o["verification"] = x.verification;
  o["errors"] = x.errors.is_null() ? json::object() : x.errors;
  o["extra"] = x.extra.is_null() ? json::object() : x.extra;
  if (!x.not_run.empty()) o["not_run"] = x.not_run;
  if (!x.measurement.is_null()) o["measurement"] = x.measurement;
  if (!x.reference.empty()) o["reference"] = x.reference;
  if (!x.options.is_null()) o["options"] = x.options;
  return o;
}

bool Result::noise_above_target() const {
  if (!measurement.is_object()) return false;
  const auto reached = measurement.find("noise_reached");
  const auto rule = measurement.find("rule");
  if (reached == measurement.end() || !reached->is_boolean() || rule == measurement.end() || !rule->is_object())
    return false;
  return !reached->get<bool>() && field_or(*rule, "max_noise_pct", 0.0) > 0;
}

DatasetInfo dataset_from_json(const json& j) { return dataset_from(j, "dataset"); }
Bound bound_from_json(const json& j) { return bound_from(j, "bound"); }
Result result_from_json(const json& j) { return result_from(j, "result"); }

json to_json(const Report& r) {
  json j = json::object();
  j["schema_version"] = r.schema_version;
  j["tool"] = r.tool.is_null() ? json::object() : r.tool;
  j["command"] = r.command;
  j["env"] = r.env.is_null() ? json::object() : r.env;
  json ds = json::array();
  for (const auto& d : r.datasets) ds.push_back(to_json(d));
  j["datasets"] = std::move(ds);
  json bs = json::array();
  for (const auto& b : r.bounds) bs.push_back(to_json(b));
  j["bounds"] = std::move(bs);
  json rs = json::array();
  for (const auto& x : r.results) rs.push_back(to_json(x));
  j["results"] = std::move(rs);
  if (!r.provenance.is_null()) j["provenance"] = r.provenance;
  return j;
}

Report from_json(const json& j) {
  require_object(j, "");
  // The version first: a report from another schema should say so, not trip over a field.
  const json& sv = field(j, "", "schema_version");
  if (!sv.is_number_integer()) mistyped("schema_version", "an integer", sv);
  const auto version = sv.get<std::int64_t>();
  if (version != kSchemaVersion) {
    throw Error("report schema_version is " + std::to_string(version) + ", but this repix reads " +
                "schema_version " + std::to_string(kSchemaVersion) +
                (version > kSchemaVersion ? " (written by a newer repix; upgrade to read it)"
                                          : " (written by an older repix; re-run it to convert)"));
  }
  Report r;
  r.schema_version = static_cast<int>(version);
  r.tool = get_object(j, "", "tool");
  r.command = get_string(j, "", "command");
  r.env = get_object(j, "", "env");
  const json& ds = get_array(j, "", "datasets");
  for (std::size_t i = 0; i < ds.size(); ++i) r.datasets.push_back(dataset_from(ds[i], index("datasets", i)));
  const json& bs = get_array(j, "", "bounds");
  for (std::size_t i = 0; i < bs.size(); ++i) r.bounds.push_back(bound_from(bs[i], index("bounds", i)));
  const json& rs = get_array(j, "", "results");
  for (std::size_t i = 0; i < rs.size(); ++i) r.results.push_back(result_from(rs[i], index("results", i)));
  if (j.contains("provenance")) r.provenance = j["provenance"];
  return r;
}

void write_report(const Report& r, const std::string& path) {
  if (path.empty()) throw Error("cannot write report: empty path");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw Error("cannot create directory '" + parent.string() + "': " + ec.message());
  }
  // Validate what we write with the same reader users have: never commit an unreadable report.
  const json j = to_json(r);
  from_json(j);
  write_file_atomic(path, json_text::dump(j, 2) + "\n");
}

Report read_report(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error("cannot read report '" + path + "': no such file");
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error("cannot read report '" + path + "': not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read report '" + path + "': cannot open");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error("cannot read report '" + path + "': read error");
  json j;
  try {
    j = json_text::decode(json::parse(buf.str()));
  } catch (const json::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    throw Error("report '" + path + "' is not valid JSON: " + msg);
  }
  try {
    Report r = from_json(j);
    check_timings(r);
    return r;
  } catch (const Error& e) {
    throw Error("report '" + path + "': " + e.what());
  }
}

// ---- statistics -----------------------------------------------------------------------------------

Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error("cannot summarise timings: no samples");
  for (double s : samples)
    if (!std::isfinite(s)) throw Error("cannot summarise timings: a sample is not a finite number");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  // numpy.percentile/quantile default ("linear"): position (n - 1) * p between order statistics.
  auto quantile = [&](double p) {
    const double h = static_cast<double>(n - 1) * p;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, n - 1);
    return samples[lo] + (h - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
  };
  Stats s;
  s.min = samples.front();
  s.max = samples.back();
  s.q1 = quantile(0.25);
  s.median = quantile(0.5);
  s.q3 = quantile(0.75);
  return s;
}

json median_fields(const json& samples) {
  json out = json::object();
  if (!samples.is_array() || samples.empty() || !samples.front().is_object()) return out;
  for (const auto& [key, first] : samples.front().items()) {
    if (!first.is_number()) continue;
    std::vector<double> v;
    for (const auto& sample : samples)
      if (sample.is_object() && sample.contains(key) && sample[key].is_number()) v.push_back(sample[key].get<double>());
    out[key] = summarize(v).median;
  }
  return out;
}

void finalize(Result& r, double items_per_unit) {
  if (!(items_per_unit > 0) || !std::isfinite(items_per_unit))
    throw Error("finalize: items_per_unit must be a positive number");
  const Stats s = summarize(r.samples_ms);
  r.median_ms = s.median;
  r.q1_ms = s.q1;
  r.q3_ms = s.q3;
  r.min_ms = s.min;
  // A zero median (timer resolution) has no meaningful throughput: NaN, written as null.
  r.throughput = s.median > 0 ? r.items / (s.median * 1e-3) / items_per_unit
                              : std::numeric_limits<double>::quiet_NaN();
}

// ---- tables ---------------------------------------------------------------------------------------

std::string format_ms(double ms) { return fmt_sig(ms); }

std::string summary_table(const Report& r) {
  std::ostringstream o;
  o << "# " << describe(r) << "\n";
  if (!r.provenance.is_null())
    o << "# rebuilt from the journal " << field_or(r.provenance, "rebuilt_from_journal", "?")
      << " of a run that did not finish\n";
  if (const std::string w = sag_warning(r); !w.empty()) o << "# " << w << "\n";
  if (r.results.empty()) {
    o << "(no results)\n";
    return o.str();
  }
  Table t({"family", "variant", "dataset", "scope", ">median ms", ">IQR ms", ">IQR %", ">n", ">noise %",
           ">throughput", ">% of bound", "verified"});
  int unverified = 0, noisy = 0;
  for (const auto& x : r.results) {
    if (!x.verified) ++unverified;
    if (x.samples_ms.empty()) {  // verified wrong before any sample (not_run says why)
      t.add({x.family, x.variant, x.dataset, x.scope, "-", "-", "-", "0", "-", "-", "-", x.verified ? "yes" : "NO"});
      continue;
    }
    const double iqr = x.q3_ms - x.q1_ms;
    const double rel = (x.median_ms > 0 && std::isfinite(iqr)) ? 100.0 * iqr / x.median_ms
                                                               : std::numeric_limits<double>::quiet_NaN();
    char relbuf[32];
    if (std::isfinite(rel)) std::snprintf(relbuf, sizeof relbuf, "%.1f", rel);
    else std::snprintf(relbuf, sizeof relbuf, "n/a");
    // The noise the stopping rule reached; "!" where sampling stopped on time or count above the
    // rule's target (the footnote says so).
    std::string noise = "-";
    if (x.measurement.is_object()) {
      const auto n = x.measurement.find("noise_pct");
      if (n != x.measurement.end() && n->is_number()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", n->get<double>());
        noise = buf;
      } else {
        noise = "n/a";
      }
      if (x.noise_above_target()) {
        noise += "!";
        ++noisy;
      }
    }
    t.add({x.family, x.variant, x.dataset, x.scope, fmt_sig(x.median_ms), fmt_sig(iqr), relbuf,
           std::to_string(x.samples_ms.size()), noise, fmt_throughput(x.throughput, x.unit),
           fmt_pct(x.pct_of_bound, x.bound), x.verified ? "yes" : "NO"});
  }
  o << t.render();
  o << "# noise %: half-width of the median's 95 % interval over the median (the stopping rule's measure)\n";
  if (noisy) {
    o << "# " << noisy << " of " << r.results.size()
      << " results (noise marked !) stopped on --max-time or --max-samples above the --max-noise target: "
         "their medians are less certain than the rule asked (a longer --max-time narrows them)\n";
    if (!waits_passively(r))
      o << "# CPU rows: OpenMP's threads spin while they wait (libgomp's default); on a machine busy with other "
           "work that makes them noisy, and OMP_WAIT_POLICY=passive steadies them (docs/measuring.md)\n";
  }
  if (unverified) o << "# " << unverified << " of " << r.results.size() << " results NOT verified\n";
  return o.str();
}

namespace {
// "min-chunk-2d: A 12, B 24; graph-chunks: A (none), B 4": the options two rows ran with that
// differ (a key one row lacks counts as differing); "" when they agree or either row's are unknown
// (null: peers, older reports).
std::string options_difference(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object() || !b.is_object()) return "";
  std::map<std::string, std::pair<std::string, std::string>> diff;
  auto text = [](const nlohmann::json& o, const std::string& k) {
    const auto it = o.find(k);
    return it == o.end() ? std::string("(none)") : it->dump();
  };
  for (const nlohmann::json* side : {&a, &b})
    for (const auto& [k, v] : side->items()) {
      (void)v;
      const std::string x = text(a, k), y = text(b, k);
      if (x != y) diff[k] = {x, y};
    }
  std::string out;
  for (const auto& [k, v] : diff) out += (out.empty() ? "" : "; ") + k + ": A " + v.first + ", B " + v.second;
  return out;
}
}  // namespace

std::string compare_table(const Report& a, const Report& b) {
  std::ostringstream o;
  o << "A: " << describe(a) << (a.command.empty() ? "" : " | " + a.command) << "\n";
  o << "B: " << describe(b) << (b.command.empty() ? "" : " | " + b.command) << "\n";
  if (const std::string w = sag_warning(a); !w.empty()) o << "A: " << w << "\n";
  if (const std::string w = sag_warning(b); !w.empty()) o << "B: " << w << "\n";
  o << "speedup B/A = A median / B median (> 1: B is faster than A)\n";

  // Match in order: the i-th occurrence of a key in A pairs with the i-th occurrence in B.
  std::vector<bool> used_b(b.results.size(), false);
  std::vector<const Result*> only_a;
  Table t({"family", "variant", "dataset", "scope", ">A median ms", ">B median ms", ">speedup B/A",
           ">A throughput", ">B throughput", "verified A/B"});
  int matched = 0, ratios = 0;
  double log_sum = 0;
  std::vector<std::string> notes;  // rows whose options differ: the footnotes [1], [2], ...
  for (const auto& x : a.results) {
    const Result* y = nullptr;
    for (std::size_t i = 0; i < b.results.size(); ++i) {
      if (!used_b[i] && key_of(b.results[i]) == key_of(x)) {
        used_b[i] = true;
        y = &b.results[i];
        break;
      }
    }
    if (!y) {
      only_a.push_back(&x);
      continue;
    }
    ++matched;
    double ratio = std::numeric_limits<double>::quiet_NaN();
    if (x.median_ms > 0 && y->median_ms > 0) {
      ratio = x.median_ms / y->median_ms;
      if (std::isfinite(ratio)) {
        log_sum += std::log(ratio);
        ++ratios;
      }
    }
    std::string variant = x.variant;
    if (const std::string d = options_difference(x.options, y->options); !d.empty()) {
      notes.push_back(d);
      variant += " [" + std::to_string(notes.size()) + "]";
    }
    t.add({x.family, variant, x.dataset, x.scope, fmt_sig(x.median_ms), fmt_sig(y->median_ms),
           std::isfinite(ratio) ? fmt_sig(ratio, 3) + "x" : "n/a",
           fmt_throughput(x.throughput, x.unit), fmt_throughput(y->throughput, y->unit),
           std::string(x.verified ? "yes" : "NO") + "/" + (y->verified ? "yes" : "NO")});
  }
  if (matched) {
    o << t.render();
    for (std::size_t i = 0; i < notes.size(); ++i)
      o << "[" << i + 1 << "] options differ: " << notes[i] << "\n";
    if (ratios)
      o << "geometric mean speedup B/A over " << ratios << " matched results: "
        << fmt_sig(std::exp(log_sum / ratios), 3) << "x\n";
  } else {
    o << "(no results match on family, variant, dataset and scope)\n";
  }
  auto unmatched = [&](const char* side, const std::vector<const Result*>& rows) {
    if (rows.empty()) return;
    o << "only in " << side << " (" << rows.size() << "):\n";
    Table u({"family", "variant", "dataset", "scope", ">median ms", ">throughput"});
    for (const Result* x : rows)
      u.add({x->family, x->variant, x->dataset, x->scope, fmt_sig(x->median_ms),
             fmt_throughput(x->throughput, x->unit)});
    o << u.render("  ");
  };
  std::vector<const Result*> only_b;
  for (std::size_t i = 0; i < b.results.size(); ++i)
    if (!used_b[i]) only_b.push_back(&b.results[i]);
  unmatched("A", only_a);
  unmatched("B", only_b);
  return o.str();
}

}  // namespace repix::report
