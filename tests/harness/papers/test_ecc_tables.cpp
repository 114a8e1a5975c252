// The ECC paper tables (ecc-1/2/3): the builders on synthetic measurements (pure formatting and
// ratio logic, no GPU), and the quick CLI runs on whatever machine runs the tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/papers/ecc/tables.hpp"
#include "harness/tables_test_util.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json paper(int n) { return test::paper_json("ecc-table" + std::to_string(n)); }

tables::Meta meta(bool gpu) { return test::table_meta(gpu, "default"); }

report::Result result(const std::string& variant, const std::string& scope, double ms) {
  report::Result r;
  r.family = "ecc";
  r.variant = variant;
  r.dataset = "grf:2048x2048:alpha=3:seed=7";
  r.scope = scope;
  r.samples_ms = {ms};
  r.median_ms = r.q1_ms = r.q3_ms = r.min_ms = ms;
  r.items = 2048.0 * 2048;
  r.unit = "GVox/s";
  r.throughput = r.items / (ms * 1e-3) / 1e9;
  r.verified = true;
  return r;
}

fs::path fresh_dir(const std::string& name) { return test::fresh_dir("tables-ecc", name); }

TEST(TablesEcc, Table1MatchesPaperRowsAndComputesSpeedups) {
  report::Report rep;
  rep.results = {result("omp", "end-to-end", 80), result("omp", "with-io", 100),
                 result("gpu-opt", "kernel", 0.2), result("gpu-opt", "end-to-end", 20),
                 result("gpu-opt", "with-io", 25)};
  rep.results[2].pct_of_bound = 42.0;
  const fs::path dir = fresh_dir("t1");
  const std::string md = tables::ecc_table1(paper(1), rep, meta(true), dir.string());
  // Paper 0.09 s / 0.18 s = 0.5x (printed 0.55x from unrounded times); ours 100 / 25 = 4x.
  EXPECT_NE(md.find("| grf | 2048x2048 | 0.09 / 0.1 | 0.18 / 0.025 | 0.50x / 4.00x | 0.08 / 0.02 |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 0.45 / 0.2 | 9.36 / 20.97 | 2.2x | 42.0 % | 0.03 / 0.005 | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("victre 287x359x202: VICTRE breast phantoms"), std::string::npos) << md;
  EXPECT_NE(md.find("cmb 6400x3200"), std::string::npos) << md;
  std::ifstream in(dir / "ecc-table1.json");
  const json j = json::parse(in);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["rows"][0]["ratios"]["ours_speedup_overall"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["rows"][0]["ratios"]["ours_speedup_end_to_end"].get<double>(), 4.0);
  EXPECT_NEAR(j["rows"][0]["ratios"]["gpu_read_share_ours"].get<double>(), 0.2, 1e-12);  // (25 - 20) / 25
  EXPECT_EQ(j["not_reproducible"].size(), 7u);
  EXPECT_EQ(j["report"]["results"].size(), 5u);  // the raw measurements travel with the table
  fs::remove_all(dir);
}

TEST(TablesEcc, Table1WithoutGpuSaysSo) {
  report::Report rep;
  rep.results = {result("omp", "with-io", 100)};
  rep.results[0].verified = false;
  const std::string md = tables::ecc_table1(paper(1), rep, meta(false), "");
  EXPECT_NE(md.find("0.18 / no GPU"), std::string::npos) << md;
  EXPECT_NE(md.find("| NO |"), std::string::npos) << md;
}

TEST(TablesEcc, Table2AveragesAndRatios) {
  tables::PipelineRun r;
  r.iterations = 10;
  r.gpu = true;
  r.setup_ms = 5;
  r.loop_ms = 15;  // overall 20 ms, 2 ms per iteration
  r.smooth_ms.assign(10, 0.05);
  r.ecc_exec_ms.assign(10, 0.10);
  r.ecc_mem_ms.assign(10, 0.02);
  r.verified = true;
  tables::PipelineInfo info;
  info.dataset = "grf:1024x1024:alpha=3:seed=1";
  info.disk_read_ms = 1.5;
  info.smoothing = "test smoothing";
  const fs::path dir = fresh_dir("t2");
  const std::string md = tables::ecc_table2(paper(2), {r}, info, meta(true), dir.string());
  EXPECT_NE(md.find("| 10 | 172.80 / 20.00 | 17.280 / 2.000 | 0.060 / 0.020 | 0.150 / 0.100 | 0.200 / 0.050 | "
                    "7.38 / 1.50 | 1.33 / 0.50 | 49.37 / 13.33 | yes |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("not run at these sizes: N = 1, 100, 1000, 10000"), std::string::npos) << md;
  std::ifstream in(dir / "ecc-table2.json");
  const json j = json::parse(in);
  EXPECT_EQ(j["rows"][0]["raw"]["smooth_ms"].size(), 10u);
  fs::remove_all(dir);
}

TEST(TablesEcc, Table3AmortisationPerGroup) {
  auto run = [](int n, double overall_batch_ms) {
    tables::BatchRun b;
    b.input = "uniform";
    b.shape = "128x128";
    b.count = n;
    b.gpu = true;
    b.path = "small-kernel";
    b.overall_ms = {overall_batch_ms};
    b.read_ms = {0.1 * n};
    b.device_ms = {0.01 * n};
    b.cpu_ms = {0.5 * n};
    b.verified = true;
    return b;
  };
  const std::string md = tables::ecc_table3(paper(3), {run(1, 10), run(100, 50)}, 80.0, meta(true), "");
  // avg(100) = 0.5 ms, avg(1) = 10 ms: 0.05; the paper's 1.77 / 119.83 = 0.0148.
  EXPECT_NE(md.find("| uniform 128x128 | 100 | small-kernel | 1.770 / 0.500 | 0.460 / 0.100 | 0.0100 | 0.500 | 0.015 / 0.050 | 0.26 / 0.20 | yes |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("80.0 ms"), std::string::npos) << md;
}

// The quick tables through the CLI: on a machine without a GPU the GPU columns say so and the
// CPU parts still run and verify.
TEST(TablesEcc, QuickTablesRunFromTheCli) {
  const char* cli = std::getenv("REPIX_CLI");
  if (!cli || !fs::exists(cli)) GTEST_SKIP() << "REPIX_CLI not set (run through ctest)";
  const fs::path dir = fresh_dir("cli");
  for (const char* t : {"ecc-3", "ecc-2", "ecc-1"}) {
    const std::string cmd = std::string("'") + cli + "' table " + t + " --quick --out-dir '" + dir.string() +
                            "' > '" + (dir.string() + ".out") + "' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << t;
    const std::string base = std::string("ecc-table") + t[4];
    EXPECT_TRUE(fs::exists(dir / (base + ".md"))) << t;
    std::ifstream in(dir / (base + ".json"));
    const json j = json::parse(in);
    EXPECT_EQ(j["table"], t);
    for (const auto& row : j["rows"])
      if (row.contains("verified") && (row["ours"].value("cpu_omp_avg_ms", json()).is_number() ||
                                       row["ours"].value("cpu_overall_s", json()).is_number()))
        EXPECT_TRUE(row["verified"].get<bool>()) << t << ": " << row.dump();
  }
  const std::string bad = std::string("'") + cli + "' table ecc-2 --counts-2d 3 > /dev/null 2>&1";
  const int status = std::system(bad.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  fs::remove_all(dir);
  fs::remove(dir.string() + ".out");
}

}  // namespace
}  // namespace repix
