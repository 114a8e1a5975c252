#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "harness/papers/ecc/tables.hpp"

namespace repix {
namespace {

report::Result kernel_result(const std::string& variant, double median, bool verified = true) {
  report::Result r;
  r.family = "ecc";
  r.variant = variant;
  r.dataset = "grf:64x64:alpha=3:seed=1";
  r.scope = "kernel";
  r.samples_ms = {median};
  r.median_ms = r.q1_ms = r.q3_ms = r.min_ms = median;
  r.items = 4096;
  r.unit = "GVox/s";
  r.throughput = 4096 / (median * 1e-3) / 1e9;
  r.verified = verified;
  return r;
}

TEST(Tables, AblationOrdersStepsAndComputesGains) {
  report::Report rep;
  rep.tool = {{"git_sha", "abcdef0123456789"}};
  rep.env = {{"gpu", {{"name", "Test GPU"}}}};
  // Out of ladder order on purpose: the table follows the registry, not the report.
  rep.results = {kernel_result("gpu-cached", 1.0), kernel_result("gpu-naive", 8.0),
                 kernel_result("gpu-register", 4.0, false)};
  const auto dir = std::filesystem::temp_directory_path() / "repix-table-test";
  std::filesystem::remove_all(dir);
  const std::string md = tables::ecc_ablation(rep, dir.string());
  const auto naive = md.find("| gpu-naive"), reg = md.find("| gpu-register"), cached = md.find("| gpu-cached");
  ASSERT_NE(naive, std::string::npos);
  ASSERT_NE(reg, std::string::npos);
  ASSERT_NE(cached, std::string::npos);
  EXPECT_LT(naive, reg);
  EXPECT_LT(reg, cached);
  EXPECT_NE(md.find("| 2.00x | 2.00x |"), std::string::npos) << md;  // register: 8 -> 4
  EXPECT_NE(md.find("| 4.00x | 8.00x |"), std::string::npos) << md;  // cached: 4 -> 1
  EXPECT_NE(md.find("| NO |"), std::string::npos) << md;
  EXPECT_NE(md.find("| gain | vs gpu-naive |"), std::string::npos) << md;
  EXPECT_TRUE(std::filesystem::exists(dir / "ecc-ablation.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "ecc-ablation.json"));
  std::filesystem::remove_all(dir);
}

// A report of the later steps alone (no gpu-naive) compares them with its first step, and says so
// in the column's name and the JSON rows.
TEST(Tables, AblationOfAPartialLadderNamesItsBase) {
  report::Report rep;
  rep.results = {kernel_result("gpu-opt", 0.5), kernel_result("gpu-cached", 2.0)};
  const auto dir = std::filesystem::temp_directory_path() / ("repix-ablation-partial-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string md = tables::ecc_ablation(rep, dir.string());
  EXPECT_NE(md.find("| gain | vs gpu-cached |"), std::string::npos) << md;
  EXPECT_EQ(md.find("gpu-naive |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4.00x | 4.00x |"), std::string::npos) << md;  // gpu-opt: 2 -> 0.5
  std::ifstream in(dir / "ecc-ablation.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["variant"], "gpu-opt");
  EXPECT_EQ(j["rows"][1]["first_variant"], "gpu-cached");
  EXPECT_DOUBLE_EQ(j["rows"][1]["gain_over_first"].get<double>(), 4.0);
  std::filesystem::remove_all(dir);
}

// --ncu: each step's counters (ncu::StepCounters; here a stand-in) beside its times, asked once
// per step with the step's own identity, and in the JSON rows; a step that failed says so.
TEST(Tables, AblationWithCountersPerStep) {
  report::Report rep;
  rep.results = {kernel_result("gpu-naive", 8.0), kernel_result("gpu-cached", 1.0)};
  std::vector<std::string> asked;
  const ncu::StepCounters counters = [&](const std::string& f, const std::string& v, const std::string& ds) {
    asked.push_back(f + "|" + v + "|" + ds);
    if (v == "gpu-cached") return nlohmann::json{{"error", "ncu exited with status 1"}};
    return nlohmann::json{{"kernels", 2}, {"duration_us_total", 123.4}, {"achieved_occupancy_pct", 55.5},
                          {"dram_throughput_pct_of_peak", 70.0}, {"l2_throughput_pct_of_peak", 40.0},
                          {"top_stall", "long_scoreboard"}, {"shared_bank_conflicts", nullptr}, {"atomics", 4096}};
  };
  const auto dir = std::filesystem::temp_directory_path() / ("repix-ablation-ncu-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string md = tables::ecc_ablation(rep, dir.string(), counters);
  EXPECT_EQ(asked, (std::vector<std::string>{"ecc|gpu-naive|grf:64x64:alpha=3:seed=1",
                                             "ecc|gpu-cached|grf:64x64:alpha=3:seed=1"}));
  EXPECT_NE(md.find("| verified | kernels | ncu µs | occupancy % | DRAM % | L2 % | top stall |"), std::string::npos) << md;
  EXPECT_NE(md.find("| yes | 2 | 123.4 | 55.5 | 70.0 | 40.0 | long_scoreboard | - | 4096 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| yes | - | - | - | - | - | not profiled | - | - |"), std::string::npos) << md;
  std::ifstream in(dir / "ecc-ablation.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["rows"][0]["ncu"]["kernels"], 2);
  EXPECT_TRUE(j["rows"][1]["ncu"].contains("error"));
  std::filesystem::remove_all(dir);
  // Without counters the table is as before: no ncu columns, no "ncu" in the rows.
  EXPECT_EQ(tables::ecc_ablation(rep, "").find("ncu"), std::string::npos);
}

TEST(Tables, AblationNeedsKernelResults) {
  report::Report rep;
  EXPECT_THROW(tables::ecc_ablation(rep, ""), Error);
}

}  // namespace
}  // namespace repix
