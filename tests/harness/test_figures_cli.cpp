// The figures through the CLI: `repix run ecc --plot` draws the run's own curve, `repix plot`
// draws a bench report's ladder from its rows, and what is plotted is the report's numbers (the
// points.json written beside each figure); bad reports are one error line. The figure kinds
// themselves are tested in figures/tests (scripts/test-figures).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/cli_test_util.hpp"
#include "harness/figures.hpp"
#include "harness/report.hpp"

namespace repix {
namespace {

namespace fs = std::filesystem;
using test::CliResult;

class FiguresCli : public test::CliTest {
 protected:
  void SetUp() override {
    test::CliTest::SetUp();
    if (IsSkipped()) return;
    std::string why;
    // scripts/setup installs matplotlib; a machine where it could not is told so here, not skipped.
    ASSERT_FALSE(figures::find_python(&why).empty()) << why;
  }
  nlohmann::json read(const std::string& name) const { return nlohmann::json::parse(slurp(path(name))); }
};

TEST_F(FiguresCli, RunEccPlotDrawsTheCurveOfTheRun) {
  const CliResult r = run("run ecc --variant omp --input grf:48x32:alpha=3:seed=2 --json " + path("c.json") +
                          " --plot " + path("c.svg"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = slurp(path("c.svg"));
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 80);
  EXPECT_NE(svg.find("Euler characteristic curve"), std::string::npos);
  expect_only({"c.json", "c.svg"});  // no scratch left beside the outputs

  const CliResult p = run("plot " + path("c.json") + " --out " + path("f"));
  ASSERT_EQ(p.code, 0) << p.err;
  const nlohmann::json rec = read("c.json"), pts = read("f/c.curve.points.json");
  ASSERT_EQ(pts["series"].size(), 1u);
  EXPECT_EQ(pts["series"][0]["x"], rec["values"]);
  EXPECT_EQ(pts["series"][0]["y"].size(), rec["ecc"].size());
  for (std::size_t i = 0; i < rec["ecc"].size(); ++i)
    EXPECT_EQ(pts["series"][0]["y"][i].get<double>(), rec["ecc"][i].get<double>()) << i;
  EXPECT_TRUE(fs::exists(path("f/c.curve.png")));
  EXPECT_TRUE(fs::exists(path("f/c.curve.svg")));
}

TEST_F(FiguresCli, PlotFailsBeforeComputingOnABadPlotName) {
  const CliResult r = run("run ecc --variant omp --input grf:48x32 --plot " + path("c.pdf"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_FALSE(fs::exists(path("c.pdf")));
  const CliResult dash = run("run ecc --variant omp --input grf:48x32 --plot -");
  EXPECT_EQ(dash.code, 2) << dash.err;
}

TEST_F(FiguresCli, PlotOfABenchReportDrawsItsLadderFromTheRows) {
  const CliResult b = run("bench --family ecc --variants seq,omp --dataset uniform:32x16:levels=3:seed=1 "
                          "--dataset grf:32x16:alpha=3:seed=2 --samples 1 --cpu-samples 1 --out " + path("r.json"));
  ASSERT_EQ(b.code, 0) << b.err;
  const CliResult p = run("plot " + path("r.json"));
  ASSERT_EQ(p.code, 0) << p.err;
  const report::Report rep = report::read_report(path("r.json"));
  ASSERT_FALSE(rep.results.empty());
  const std::string scope = rep.results[0].scope;
  const nlohmann::json pts = read("r.ladder-ecc-" + scope + "-time.points.json");
  ASSERT_EQ(pts["series"].size(), 2u) << pts.dump();  // one series an input
  std::size_t checked = 0;
  for (const auto& s : pts["series"])
    for (std::size_t i = 0; i < s["x"].size(); ++i)
      for (const auto& res : rep.results)
        if (res.variant == s["x"][i].get<std::string>() && res.scope == scope &&
            s["label"].get<std::string>().find(res.dataset.substr(0, res.dataset.find(':'))) == 0) {
          EXPECT_DOUBLE_EQ(s["y"][i].get<double>(), res.median_ms) << res.variant << " " << res.dataset;
          ++checked;
        }
  EXPECT_EQ(checked, 4u) << pts.dump();
  EXPECT_NE(p.out.find("r.ladder-ecc-" + scope + "-speedup.svg"), std::string::npos) << p.out;
}

TEST_F(FiguresCli, BadReportsAreOneErrorLine) {
  const CliResult none = run("plot " + path("none.json"));
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("no such report"), std::string::npos) << none.err;
  std::ofstream(path("bad.json")) << "{ not json";
  const CliResult bad = run("plot " + path("bad.json"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("is not a JSON report"), std::string::npos) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_EQ(lines(none.err), 1) << none.err;
  EXPECT_EQ(run("plot").code, 2);
}

// A machine where no python3 imports matplotlib (simulated: a matplotlib that fails to import comes
// first on PYTHONPATH): a table still writes its numbers and says in one line that its figures
// were skipped and why; `repix plot` and `run --plot` fail with that line, before any work.
TEST_F(FiguresCli, WithoutMatplotlibTablesMeasureAndSayFiguresWereSkipped) {
  fs::create_directories(path("broken/matplotlib"));
  std::ofstream(path("broken/matplotlib/__init__.py")) << "raise ImportError('no matplotlib on this machine')\n";
  const std::string env = "PYTHONPATH='" + path("broken") + "'";
  const CliResult t = run("table ecc-1 --quick --out-dir " + path("t"), env);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_TRUE(fs::exists(path("t/ecc-table1.json")));
  EXPECT_FALSE(fs::exists(path("t/ecc-table1.t1-cpu.svg")));
  EXPECT_NE(t.err.find("repix: figures skipped: no python3 here can import matplotlib"), std::string::npos) << t.err;
  const CliResult p = run("plot " + path("t/ecc-table1.json"), env);
  EXPECT_EQ(p.code, 1);
  EXPECT_EQ(lines(p.err), 1) << p.err;
  EXPECT_NE(p.err.find("cannot draw figures: no python3 here can import matplotlib"), std::string::npos) << p.err;
  const CliResult r = run("run ecc --variant omp --input grf:48x32 --json " + path("c.json") + " --plot " +
                          path("c.svg"), env);
  EXPECT_EQ(r.code, 1);
  EXPECT_FALSE(fs::exists(path("c.json")));  // refused before the work: nothing written
}

}  // namespace
}  // namespace repix
