// The thesis's tables (ami-5.1 .. ami-5.8, harness/papers/ami/): the grid builder computes the
// ratios and carries the thesis's values from synthetic measurements (no GPU needed), and every
// table runs from the CLI at `--sizes small` on whatever machine runs the tests (GPU cells say
// "no GPU" without one; the CPU cells run and are verified).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/gpu.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/papers/ami/grid.hpp"
#include "harness/tables_test_util.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;
namespace ap = tables::ami_paper;
using nlohmann::json;

ap::Timing timing(const std::string& variant, double ms, bool verified = true) {
  ap::Timing t;
  t.variant = variant;
  t.scope = "end-to-end";
  t.samples_ms = {ms, ms};
  t.median_ms = ms;
  t.verified = verified;
  return t;
}

// Table 5.1's shape: seq and omp columns beside the thesis's, the speedup ours and theirs, the
// extrapolated thesis rows starred, a cell that did not run listed with its reason.
TEST(TablesAmi, GridCarriesTheThesisValuesAndComputesTheRatios) {
  const json paper = test::paper_json("ami-5.1");
  ap::Grid g;
  g.id = "ami-5.1";
  g.title = "t";
  g.x_label = "size";
  ap::Column seq, omp;
  seq.heading = "seq (s)";
  seq.paper_key = "seq_s";
  omp.heading = "omp (s)";
  omp.paper_key = "omp_s";
  g.columns = {seq, omp};
  g.ratios = {{"omp speedup", 1, 0, "omp_s", "seq_s", "speedup"}};
  ap::Row small{"128^2", 128, 0, {timing("seq", 1000), timing("omp", 100)}};
  ap::Timing skipped;
  skipped.variant = "seq";
  skipped.not_run = "skipped: not run above 1024^2";
  ap::Row big{"2048^2", 2048, 0, {skipped, timing("omp", 400)}};
  g.rows = {small, big};
  g.paper_row = [&](const ap::Row& r) {
    const json* p = tables::paper_row(paper, [&](const json& row) { return row["size"] == r.size; });
    return p ? *p : json();
  };
  const fs::path dir = test::fresh_dir("ami-tables", "grid");
  const std::string md = ap::render_grid(paper, g, test::table_meta(true, "paper"), dir.string());
  EXPECT_NE(md.find("| 128^2 | 3.252 | 1 | 0.392 | 0.1 | 8.3 | 10 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2048^2 | 1.112e+04* | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("2048^2, seq (s): skipped: not run above 1024^2"), std::string::npos) << md;
  std::ifstream in(dir / "ami-5.1.json");
  const json j = json::parse(in);
  EXPECT_EQ(j["table"], "ami-5.1");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["rows"][0]["ratios"][0]["ours"].get<double>(), 10.0);
  EXPECT_NEAR(j["rows"][0]["ratios"][0]["paper"].get<double>(), 8.295663265, 1e-9);
  EXPECT_TRUE(j["rows"][1]["ratios"][0]["ours"].is_null());  // seq did not run
  EXPECT_DOUBLE_EQ(j["rows"][0]["cells"][1]["paper_seconds"].get<double>(), 0.392);
  // An unverified cell is marked as such, not shown as a plain time.
  g.rows = {{"128^2", 128, 0, {timing("seq", 1000, false), timing("omp", 100)}}};
  EXPECT_NE(ap::render_grid(paper, g, test::table_meta(true, "paper"), "").find("1 (unverified)"), std::string::npos);
}

class TablesAmiCli : public test::CliTest {};

TEST_F(TablesAmiCli, EveryTableRunsSmall) {
  for (int n = 1; n <= 8; ++n) {
    const std::string id = "ami-5." + std::to_string(n);
    SCOPED_TRACE(id);
    const std::string out = path(id);
    const test::CliResult r = run("table " + id + " --sizes small --out '" + out + "'");
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    ASSERT_TRUE(fs::exists(out + "/" + id + ".md"));
    std::ifstream in(out + "/" + id + ".json");
    const json j = json::parse(in);
    EXPECT_EQ(j["table"], id);
    EXPECT_EQ(j["sizes"], "small");
    ASSERT_FALSE(j["rows"].empty());
    int ran = 0;
    for (const auto& row : j["rows"])
      for (const auto& c : row["cells"]) {
        const std::string why = c.value("not_run", "");  // absent when it ran
        ASSERT_EQ(c["seconds"].is_null(), !why.empty()) << c.dump();
        if (why.empty()) {
          ++ran;
          EXPECT_TRUE(c["verified"].get<bool>()) << c.dump();
        } else {
          EXPECT_TRUE((why == "no GPU" && !gpu_available()) || why.rfind("skipped", 0) == 0) << c.dump();
        }
      }
    // The CPU columns (5.1, 5.3, 5.4, 5.7) run everywhere; GPU-only tables where there is one.
    if (gpu_available() || n == 1 || n == 3 || n == 4 || n == 7) EXPECT_GT(ran, 0);
    EXPECT_FALSE(fs::exists(out + "/" + id + ".partial.jsonl"));
  }
}

TEST_F(TablesAmiCli, BadSizesAndBlocksAreUsageErrors) {
  EXPECT_EQ(run("table ami-5.1 --sizes 0 --out '" + path("x") + "'").code, 2);
  EXPECT_EQ(run("table ami-5.1 --sizes 12,abc --out '" + path("x") + "'").code, 2);
  EXPECT_EQ(run("table ami-5.1 --threads 3 --out '" + path("x") + "'").code, 2);
  EXPECT_FALSE(fs::exists(path("x") + "/ami-5.1.md"));
  const std::string out = " --output '" + path("f.csv") + "'";
  EXPECT_EQ(run("run auto-mi --variant gpu-naive --input uniform:8x8:levels=4 --block 1025" + out).code, 2);
  EXPECT_EQ(run("run auto-mi --variant gpu-naive --input uniform:8x8:levels=4 --block -1" + out).code, 2);
  EXPECT_FALSE(fs::exists(path("f.csv")));
}

}  // namespace
}  // namespace repix
