// The JSON report: round trip, validation messages that name the offending path, atomic writes,
// numpy-compatible statistics and the summary/compare tables.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "harness/report.hpp"

namespace repix::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("repix_test_report_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Result make_result(std::string family, std::string variant, std::string dataset, std::string scope,
                   std::vector<double> samples, double items = 1e6) {
  Result r;
  r.family = std::move(family);
  r.variant = std::move(variant);
  r.dataset = std::move(dataset);
  r.scope = std::move(scope);
  r.samples_ms = std::move(samples);
  r.items = items;
  r.unit = "GVox/s";
  r.verified = true;
  r.verification = "exact match with seq";
  finalize(r, 1e9);
  return r;
}

Report make_report() {
  Report r;
  r.tool = {{"name", "repix"}, {"version", "0.1.0"}, {"git_sha", std::string(40, 'a')}, {"git_dirty", false}};
  r.command = "repix bench --family ecc --dataset grf:64x64x64:alpha=3:seed=4";
  r.env = {{"gpu", {{"available", true}, {"name", "NVIDIA H100 80GB HBM3"}, {"sm_count", 132}}},
           {"cpu", {{"model", "x"}, {"logical_cores", 16}}},
           {"timestamp", "2025-01-31T12:34:56Z"}};
  r.datasets.push_back({"grf:64x64x64:alpha=3:seed=4", "64x64x64", "float32", "0123456789abcdef",
                        64 * 64 * 64, 812});
  r.datasets.push_back({"uniform:32x32:levels=256:seed=1", "32x32", "uint8", "fedcba9876543210", 1024, -1});
  r.bounds.push_back({"dram-read", "GB/s", 3010.5, "device-to-device copy, read+write bytes / 2"});
  Result a = make_result("ecc", "gpu-opt", "grf:64x64x64:alpha=3:seed=4", "kernel", {0.5, 0.25, 0.75, 1.0});
  a.pct_of_bound = 42.5;
  a.bound = "dram-read";
  a.extra = {{"blocks", 1024}, {"atomics", "shared"}};
  Result b = make_result("ecc", "seq", "uniform:32x32:levels=256:seed=1", "end-to-end", {3.0, 1.0, 2.0});
  b.verified = false;
  b.verification = "mismatch at bin 17: 4 vs 5";
  b.errors = {{"max_abs", 1.0}, {"mismatches", 3}};
  r.results = {a, b};
  return r;
}

// The message of the repix::Error that `f` throws (fails the test when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a repix::Error";
  return {};
}

// ---- JSON ---------------------------------------------------------------------------------------

TEST(Report, JsonRoundTripOfAFullReport) {
  const Report r = make_report();
  const json j = to_json(r);
  const Report back = from_json(json::parse(j.dump()));
  EXPECT_EQ(to_json(back), j);

  EXPECT_EQ(back.schema_version, kSchemaVersion);
  EXPECT_EQ(back.command, r.command);
  EXPECT_EQ(back.tool, r.tool);
  EXPECT_EQ(back.env, r.env);
  ASSERT_EQ(back.datasets.size(), 2u);
  EXPECT_EQ(back.datasets[0].hash, "0123456789abcdef");
  EXPECT_EQ(back.datasets[0].elements, 64 * 64 * 64);
  EXPECT_EQ(back.datasets[1].distinct_values, -1);
  ASSERT_EQ(back.bounds.size(), 1u);
  EXPECT_EQ(back.bounds[0].value, 3010.5);
  ASSERT_EQ(back.results.size(), 2u);
  const Result& a = back.results[0];
  EXPECT_EQ(a.samples_ms, (std::vector<double>{0.5, 0.25, 0.75, 1.0}));  // raw order kept
  EXPECT_DOUBLE_EQ(a.median_ms, 0.625);
  ASSERT_TRUE(a.pct_of_bound.has_value());
  EXPECT_DOUBLE_EQ(*a.pct_of_bound, 42.5);
  EXPECT_EQ(a.extra["atomics"], "shared");
  const Result& b = back.results[1];
  EXPECT_FALSE(b.pct_of_bound.has_value());
  EXPECT_TRUE(j["results"][1]["pct_of_bound"].is_null());
  EXPECT_FALSE(b.verified);
  EXPECT_EQ(b.errors["mismatches"], 3);
}

TEST(Report, NonFiniteNumbersAreWrittenAsNullAndReadBackAsNaN) {
  Report r = make_report();
  r.results[0].throughput = std::numeric_limits<double>::quiet_NaN();
  r.results[0].pct_of_bound = std::numeric_limits<double>::infinity();
  const json j = json::parse(to_json(r).dump());
  EXPECT_TRUE(j["results"][0]["throughput"].is_null());
  EXPECT_TRUE(j["results"][0]["pct_of_bound"].is_null());
  const Report back = from_json(j);
  EXPECT_TRUE(std::isnan(back.results[0].throughput));
  EXPECT_FALSE(back.results[0].pct_of_bound.has_value());
}

TEST(Report, FromJsonNamesTheMissingField) {
  json j = to_json(make_report());
  j["results"][1].erase("median_ms");
  const std::string msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("results[1].median_ms"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;

  json k = to_json(make_report());
  k.erase("env");
  EXPECT_NE(error_of([&] { from_json(k); }).find("env: missing"), std::string::npos);
}

TEST(Report, FromJsonNamesTheMistypedField) {
  json j = to_json(make_report());
  j["results"][0]["median_ms"] = "fast";
  std::string msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("results[0].median_ms"), std::string::npos) << msg;
  EXPECT_NE(msg.find("number"), std::string::npos) << msg;
  EXPECT_NE(msg.find("string"), std::string::npos) << msg;

  j = to_json(make_report());
  j["datasets"][1]["elements"] = 1.5;
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("datasets[1].elements"), std::string::npos) << msg;

  j = to_json(make_report());
  j["results"][1]["samples_ms"][2] = "x";
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("results[1].samples_ms[2]"), std::string::npos) << msg;

  j = to_json(make_report());
  j["results"][0]["verified"] = 1;
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("results[0].verified"), std::string::npos) << msg;

  j = to_json(make_report());
  j["results"] = json::object();
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("results: expected an array"), std::string::npos) << msg;

  msg = error_of([&] { from_json(json::array()); });
  EXPECT_NE(msg.find("top level"), std::string::npos) << msg;
}

TEST(Report, FromJsonRejectsOtherSchemaVersions) {
  json j = to_json(make_report());
  j["schema_version"] = 2;
  j.erase("results");  // the version is reported first, not the missing field
  std::string msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("schema_version is 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("schema_version 1"), std::string::npos) << msg;

  j = to_json(make_report());
  j.erase("schema_version");
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("schema_version: missing"), std::string::npos) << msg;

  j = to_json(make_report());
  j["schema_version"] = "1";
  msg = error_of([&] { from_json(j); });
  EXPECT_NE(msg.find("schema_version: expected an integer"), std::string::npos) << msg;
}

// ---- files --------------------------------------------------------------------------------------

TEST(Report, WriteCreatesDirectoriesAndLeavesNoTemporary) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "results" / "h100";
  const std::string path = (dir / "ecc.json").string();
  const Report r = make_report();
  write_report(r, path);
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"ecc.json"});
  EXPECT_EQ(to_json(read_report(path)), to_json(r));

  // Overwriting replaces the file in place, still without leftovers.
  Report r2 = r;
  r2.command = "second run";
  write_report(r2, path);
  EXPECT_EQ(list_dir(dir), std::vector<std::string>{"ecc.json"});
  EXPECT_EQ(read_report(path).command, "second run");
}

TEST(Report, WriteRefusesAnUnreadableReportAndLeavesNothing) {
  TempDir tmp;
  Report r = make_report();
  r.results[0].samples_ms[1] = std::numeric_limits<double>::quiet_NaN();
  const std::string path = (tmp.path() / "bad.json").string();
  const std::string msg = error_of([&] { write_report(r, path); });
  EXPECT_NE(msg.find("results[0].samples_ms[1]"), std::string::npos) << msg;
  EXPECT_TRUE(list_dir(tmp.path()).empty());
}

TEST(Report, ReadMissingOrTruncatedFileThrowsOneLineError) {
  TempDir tmp;
  const std::string missing = (tmp.path() / "nope.json").string();
  std::string msg = error_of([&] { read_report(missing); });
  EXPECT_NE(msg.find("nope.json"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;

  const std::string text = to_json(make_report()).dump(2);
  const std::string truncated = (tmp.path() / "truncated.json").string();
  {
    std::ofstream out(truncated, std::ios::binary);
    out << text.substr(0, text.size() / 2);
  }
  msg = error_of([&] { read_report(truncated); });
  EXPECT_NE(msg.find("truncated.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;

  const std::string empty = (tmp.path() / "empty.json").string();
  { std::ofstream out(empty); }
  EXPECT_FALSE(error_of([&] { read_report(empty); }).empty());

  // Valid JSON but not a report: the file and the path of the field are both named.
  const std::string other = (tmp.path() / "other.json").string();
  {
    std::ofstream out(other);
    out << R"({"schema_version": 1, "tool": {}})";
  }
  msg = error_of([&] { read_report(other); });
  EXPECT_NE(msg.find("other.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("command: missing"), std::string::npos) << msg;

  EXPECT_FALSE(error_of([&] { read_report(tmp.path().string()); }).empty());  // a directory
}

// ---- statistics ---------------------------------------------------------------------------------

// An end-to-end case's per-sample breakdowns (extra["sample_breakdown"]) summarised field by field.
TEST(Report, MedianFieldsOfSampleObjects) {
  const nlohmann::json samples = nlohmann::json::parse(R"([
    {"chunks": 4, "tail_us": 40.0, "path": "stream", "upload_us": 300},
    {"chunks": 4, "tail_us": 10.0, "path": "stream"},
    {"chunks": 4, "tail_us": 30.0, "path": "stream", "upload_us": "n/a"},
    {"chunks": 4, "tail_us": 20.0, "path": "stream", "upload_us": 310}
  ])");
  const nlohmann::json m = median_fields(samples);
  EXPECT_DOUBLE_EQ(m.at("chunks").get<double>(), 4);
  EXPECT_DOUBLE_EQ(m.at("tail_us").get<double>(), 25);     // [10 20 30 40]
  EXPECT_DOUBLE_EQ(m.at("upload_us").get<double>(), 305);  // the samples that have a number
  EXPECT_FALSE(m.contains("path"));                         // not a number
  EXPECT_EQ(m.size(), 3u);
  EXPECT_TRUE(median_fields(nlohmann::json::array()).empty());
  EXPECT_TRUE(median_fields(nlohmann::json::object()).empty());
}

TEST(Report, SummarizeMatchesNumpyLinearInterpolation) {
  // numpy.percentile(x, [25, 50, 75]) with the default method.
  Stats s = summarize({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);

  s = summarize({5, 1, 3});  // odd count, unsorted
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);

  s = summarize({0.5, 2, 7, 1, 10, 3});  // -> [0.5 1 2 3 7 10]: 1.25, 2.5, 6.0
  EXPECT_DOUBLE_EQ(s.q1, 1.25);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q3, 6.0);

  s = summarize({3, 1, 4, 1, 5});  // -> [1 1 3 4 5]: 1, 3, 4
  EXPECT_DOUBLE_EQ(s.q1, 1);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.q3, 4);

  s = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});  // 3.5, 6, 8.5
  EXPECT_DOUBLE_EQ(s.q1, 3.5);
  EXPECT_DOUBLE_EQ(s.median, 6);
  EXPECT_DOUBLE_EQ(s.q3, 8.5);

  s = summarize({4.25});
  EXPECT_DOUBLE_EQ(s.median, 4.25);
  EXPECT_DOUBLE_EQ(s.q1, 4.25);
  EXPECT_DOUBLE_EQ(s.q3, 4.25);
}

TEST(Report, SummarizeRejectsEmptyAndNonFinite) {
  EXPECT_THROW(summarize({}), Error);
  EXPECT_THROW(summarize({1.0, std::numeric_limits<double>::quiet_NaN()}), Error);
}

TEST(Report, FinalizeFillsStatsAndThroughput) {
  Result r;
  r.samples_ms = {4, 1, 3, 2};
  r.items = 1e9;  // 1 Gvox in a 2.5 ms median: 400 GVox/s
  finalize(r, 1e9);
  EXPECT_DOUBLE_EQ(r.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(r.q1_ms, 1.75);
  EXPECT_DOUBLE_EQ(r.q3_ms, 3.25);
  EXPECT_DOUBLE_EQ(r.min_ms, 1);
  EXPECT_DOUBLE_EQ(r.throughput, 400);
  EXPECT_EQ(r.samples_ms, (std::vector<double>{4, 1, 3, 2}));  // raw order untouched

  r.samples_ms = {0, 0, 0};
  finalize(r, 1e9);
  EXPECT_TRUE(std::isnan(r.throughput));
  r.samples_ms.clear();
  EXPECT_THROW(finalize(r, 1e9), Error);
  r.samples_ms = {1};
  EXPECT_THROW(finalize(r, 0), Error);
}

// ---- tables -------------------------------------------------------------------------------------

TEST(Report, SummaryTableHasOneAlignedLinePerResult) {
  Report r = make_report();
  r.env["gpu"]["clocks_sagged"] = true;
  r.env["gpu"]["clocks_sagged_why"] = "SM clock fell from 1980 MHz to 1500 MHz";
  const std::string t = summary_table(r);
  for (const char* s : {"family", "median ms", "IQR", "throughput", "% of bound", "verified", "gpu-opt",
                        "seq", "kernel", "end-to-end", "GVox/s", "42.5% dram-read", "yes", "NO",
                        "NVIDIA H100", "sagged", "1 of 2 results NOT verified"})
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  // Columns line up: the header and every row put "verified" values at the same offset.
  std::istringstream in(t);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line))
    if (line.rfind("#", 0) != 0) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u) << t;  // header, rule, 2 results
  const std::size_t col = lines[0].find("verified");
  EXPECT_EQ(lines[2].find("yes"), col) << t;
  EXPECT_EQ(lines[3].find("NO"), col) << t;

  Report empty = make_report();
  empty.results.clear();
  EXPECT_NE(summary_table(empty).find("no results"), std::string::npos);
}

TEST(Report, CompareTableMatchesRowsAndListsTheUnmatched) {
  Report a = make_report(), b = make_report();
  a.results = {make_result("ecc", "seq", "d1", "kernel", {10}),
               make_result("ecc", "gpu-opt", "d1", "kernel", {2}),
               make_result("ecc", "only-in-a", "d1", "kernel", {7})};
  b.results = {make_result("ecc", "gpu-opt", "d1", "kernel", {0.5}),
               make_result("ecc", "seq", "d1", "kernel", {5}),
               make_result("ecc", "seq", "d1", "end-to-end", {9})};  // other scope: unmatched
  b.command = "repix bench (B)";
  const std::string t = compare_table(a, b);
  for (const char* s : {"A median / B median", "B is faster", "10.00", "5.000", "2.00x", "2.000",
                        "0.5000", "4.00x", "only in A (1)", "only-in-a", "only in B (1)",
                        "end-to-end", "repix bench (B)", "geometric mean", "2.83x"})
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  // The seq row shows both medians and the ratio on one line.
  std::istringstream in(t);
  std::string line;
  bool seq_row = false;
  while (std::getline(in, line))
    if (line.find(" seq ") != std::string::npos && line.find("10.00") != std::string::npos) {
      seq_row = true;
      EXPECT_NE(line.find("5.000"), std::string::npos) << line;
      EXPECT_NE(line.find("2.00x"), std::string::npos) << line;
    }
  EXPECT_TRUE(seq_row) << t;

  EXPECT_EQ(t.find("options differ"), std::string::npos) << t;  // no options: nothing to flag

  Report none = make_report();
  none.results.clear();
  const std::string u = compare_table(a, none);
  EXPECT_NE(u.find("no results match"), std::string::npos) << u;
  EXPECT_NE(u.find("only in A (3)"), std::string::npos) << u;
}

}  // namespace
}  // namespace repix::report

namespace repix::report {
namespace {

// Rows run with different options are compared all the same, marked, with a footnote naming each
// option that differs and its two values (an option one row lacks counts); rows whose options
// agree, or whose options are unknown on either side, are not marked.
TEST(Report, CompareTableFlagsRowsWhoseOptionsDiffer) {
  Report a = make_report(), b = make_report();
  Result a1 = make_result("ecc", "gpu-opt", "d1", "kernel", {2}), b1 = make_result("ecc", "gpu-opt", "d1", "kernel", {1});
  a1.options = {{"threads", 0}, {"min-chunk-2d", 12}, {"blocks-2d", 3}};
  b1.options = {{"threads", 0}, {"min-chunk-2d", 24}, {"blocks-2d", 3}, {"graph-chunks", 4}};
  Result a2 = make_result("ecc", "omp", "d1", "end-to-end", {3}), b2 = make_result("ecc", "omp", "d1", "end-to-end", {3});
  a2.options = b2.options = {{"threads", 2}};
  Result a3 = make_result("ecc", "seq", "d1", "end-to-end", {3}), b3 = make_result("ecc", "seq", "d1", "end-to-end", {3});
  a3.options = {{"threads", 2}};  // b3's unknown (null): an older report
  a.results = {a1, a2, a3};
  b.results = {b1, b2, b3};
  const std::string t = compare_table(a, b);
  EXPECT_NE(t.find("gpu-opt [1]"), std::string::npos) << t;
  EXPECT_NE(t.find("[1] options differ: graph-chunks: A (none), B 4; min-chunk-2d: A 12, B 24\n"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("blocks-2d:"), std::string::npos) << t;  // the same on both sides
  EXPECT_EQ(t.find("[2]"), std::string::npos) << t;         // omp: equal; seq: unknown on one side
  EXPECT_EQ(t.find("omp ["), std::string::npos) << t;
  EXPECT_EQ(t.find("seq ["), std::string::npos) << t;
  // The marked row is still matched and compared.
  EXPECT_NE(t.find("2.00x"), std::string::npos) << t;
}

}  // namespace
}  // namespace repix::report
