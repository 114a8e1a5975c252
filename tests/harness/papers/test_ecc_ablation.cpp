#include <gtest/gtest.h>

#include <filesystem>

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
  EXPECT_TRUE(std::filesystem::exists(dir / "ecc-ablation.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "ecc-ablation.json"));
  std::filesystem::remove_all(dir);
}

TEST(Tables, AblationNeedsKernelResults) {
  report::Report rep;
  EXPECT_THROW(tables::ecc_ablation(rep, ""), Error);
}

}  // namespace
}  // namespace repix
