// Experiments as data (harness/experiments.hpp): every one listed, every paper table one of them,
// every plan naming only what exists, and a CPU experiment run end to end into the
// <out>/<gpu>/<group>/<name>.{json,md} layout. The CLI tests run the `repix` binary (REPIX_CLI).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/env.hpp"
#include "harness/experiments.hpp"
#include "harness/family.hpp"
#include "harness/options.hpp"
#include "harness/registry.hpp"
#include "harness/tables.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using test::CliResult;

TEST(Experiments, NamesAreUniqueAndGroupsArePapersOrSuites) {
  const std::set<std::string> groups = {"ecc", "iwpp", "ami", "maxtree", "suites"};
  std::set<std::string> names;
  for (const auto& e : experiments::all()) {
    SCOPED_TRACE(e.name);
    EXPECT_TRUE(names.insert(e.name).second) << "declared twice";
    EXPECT_TRUE(groups.count(e.group)) << "group " << e.group;
    EXPECT_FALSE(e.description.empty());
    EXPECT_EQ(e.description.find('\n'), std::string::npos);
    EXPECT_FALSE(e.steps.empty());
  }
  // The stages scripts/device-check used to spell out in bash.
  for (const char* n : {"ecc-roofline-kernel", "ecc-roofline-kernel-int", "ecc-roofline-e2e", "ecc-e2e-timeline",
                        "ecc-u16", "ecc-carried-rows", "ecc-chunk-sweep", "ecc-grf-gap", "ecc-issue-bound", "ami-2gpu", "ami-2gpu-pipeline",
                        "maxtree-seminar", "maxtree-peers", "maxtree-profile", "iwpp", "iwpp-skimage",
                        "iwpp-edt-ladder", "default", "targets", "quick", "profile", "smoke"})
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(Experiments, EveryTableIsAnExperimentOfItsGroup) {
  for (const auto& t : tables::all()) {
    SCOPED_TRACE(t.id);
    EXPECT_FALSE(t.group.empty());
    const experiments::Experiment& e = experiments::find(t.id);
    EXPECT_EQ(e.group, t.group);
    bool has_table = false;
    for (const auto& s : e.steps) has_table = has_table || (s.kind == experiments::Kind::table && s.table == t.id);
    EXPECT_TRUE(has_table);
  }
}

TEST(Experiments, EveryPlanNamesOnlyWhatExists) {
  for (const auto& e : experiments::all()) {
    SCOPED_TRACE(e.name);
    try {
      experiments::validate(e);
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
    }
  }
}

TEST(Experiments, ValidationRefusesWhatDoesNotExist) {
  auto with = [](auto change) {
    experiments::Experiment e{"x", "suites", "a test", {experiments::bench("b", "")}};
    e.steps[0].suite = "quick";
    change(e);
    return e;
  };
  EXPECT_NO_THROW(experiments::validate(with([](auto&) {})));
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps[0].variants = {"no-such-variant"}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps[0].suite = "no-such-suite"; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps[0].scopes = {"warp"}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps[0].options = {{"no-such-option", "1"}}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps[0].options = {{"samples", "zero"}}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) {
                 e.steps[0].suite = "";
                 e.steps[0].family = registry::families().front();
                 e.steps[0].datasets = {"nonsense:1x1"};
               })),
               Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps.push_back(experiments::table("no-such-table")); })),
               Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) {
                 experiments::Step t = experiments::table(tables::all().front().id);
                 t.reports = {"not-a-step"};
                 e.steps.push_back(t);
               })),
               Error);
  EXPECT_THROW(experiments::validate(with([](auto& e) { e.steps.push_back(e.steps[0]); })), Error);  // label twice
}

class ExperimentsCli : public test::CliTest {};

TEST_F(ExperimentsCli, ListNamesEveryExperimentWithGroupAndNeeds) {
  const CliResult r = run("list experiments");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& e : experiments::all()) {
    const std::string line_start = "  " + e.name + " ";
    const auto at = r.out.find(line_start);
    ASSERT_NE(at, std::string::npos) << e.name << " not listed:\n" << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(" " + e.group + " "), std::string::npos) << line;
    EXPECT_NE(line.find(experiments::needs_text(e.needs())), std::string::npos) << line;
  }
  for (const auto& t : tables::all()) EXPECT_NE(r.out.find("  " + t.id + " "), std::string::npos) << t.id;
  const CliResult help = run("help");
  ASSERT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("list [families|variants|datasets|tables|experiments]"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("experiment NAME"), std::string::npos) << help.out;
}

TEST_F(ExperimentsCli, PlanPrintsTheStepsAndWritesNothing) {
  const CliResult r = run("experiment maxtree-seminar --plan --out '" + path("res") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("experiment maxtree-seminar (maxtree)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("repix table maxtree-seminar"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--connectivity 8"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("res")));
  // A subset of steps that leaves the table without its reports is refused.
  const CliResult part = run("experiment maxtree-seminar --plan --steps bench-4,maxtree-seminar");
  expect_error(part, 1, "bench-noise");
  expect_error(run("experiment maxtree-seminar --plan --steps nope"), 2, "no step 'nope'");
}

// maxtree-profile profiles Blin's kernels through a bench run of the peer (needing it, skipped
// where it is missing); a profile of a peer takes bench's samples, not profile's iterations.
TEST_F(ExperimentsCli, APeerProfileStepRunsThroughABenchAndNeedsThePeer) {
  const CliResult r = run("experiment maxtree-profile --plan");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("needs: GPU, ncu, peer:blin-maxtree"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blin-maxtree (profile; needs GPU, ncu, peer:blin-maxtree): repix profile maxtree --variant "
                       "peer:blin-maxtree --dataset texture:6000x4000:name=camera --ncu"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--kernels tile_build|"), std::string::npos) << r.out;
  auto with = [](auto change) {
    experiments::Experiment e{
        "x", "maxtree", "a test", {experiments::profile("p", "maxtree", "peer:blin-maxtree", "texture:64x64:name=camera")}};
    change(e.steps[0]);
    return e;
  };
  EXPECT_EQ(with([](auto&) {}).steps[0].needs.peers, std::vector<std::string>{"peer:blin-maxtree"});
  EXPECT_NO_THROW(experiments::validate(with([](auto& s) { s.options = {{"samples", "2"}, {"kernels", "merge"}}; })));
  EXPECT_NO_THROW(experiments::validate(with([](auto& s) { s.options = {{"connectivity", "8"}}; })));
  EXPECT_THROW(experiments::validate(with([](auto& s) { s.options = {{"iterations", "2"}}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& s) { s.options = {{"kernels", ""}}; })), Error);
  EXPECT_THROW(experiments::validate(with([](auto& s) { s.needs.peers.clear(); })), Error);
}

TEST_F(ExperimentsCli, UnknownNameIsOneLineAndExitTwo) {
  const CliResult r = run("experiment no-such-experiment --out '" + path("res") + "'");
  expect_error(r, 2, "unknown experiment 'no-such-experiment'");
  EXPECT_FALSE(fs::exists(path("res")));
  expect_error(run("experiment"), 2, "one experiment name");
}

TEST_F(ExperimentsCli, AnUnwritableOutIsOneLineAndLeavesNothing) {
  std::ofstream(path("afile")) << "x";
  const CliResult r = run("experiment smoke --out '" + path("afile") + "/results'");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("afile"), std::string::npos) << r.err;
  expect_only({"afile"});
}

TEST_F(ExperimentsCli, AMachineWithoutWhatItNeedsRefusesClearly) {
  if (experiments::needs_text(experiments::find("ami-2gpu").needs()).find("2 GPUs") == std::string::npos)
    GTEST_FAIL() << "ami-2gpu should need 2 GPUs";
  const CliResult probe = run("experiment ami-2gpu-pipeline --plan");
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_NE(probe.out.find("--gpus 2"), std::string::npos) << probe.out;
  EXPECT_NE(run("experiment ami-2gpu-pipeline --plan --gpus 1").out.find("--gpus 1"), std::string::npos);
  if (gpu_available()) GTEST_SKIP() << "this machine has a GPU";
  const CliResult r = run("experiment ami-2gpu --out '" + path("res") + "'");
  expect_error(r, 1, "needs 2 GPUs");
  EXPECT_FALSE(fs::exists(path("res")));
}

TEST_F(ExperimentsCli, SmokeRunsEndToEndIntoTheResultsLayout) {
  const CliResult r = run("experiment smoke --out '" + path("res") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path dir = fs::path(path("res")) / env::machine_slug() / "suites";
  ASSERT_TRUE(fs::exists(dir / "smoke.json")) << r.err;
  ASSERT_TRUE(fs::exists(dir / "smoke.md"));
  const nlohmann::json j = nlohmann::json::parse(slurp((dir / "smoke.json").string()));
  EXPECT_NE(j.at("command").get<std::string>().find("experiment smoke --out"), std::string::npos) << j["command"];
  EXPECT_TRUE(j.at("tool").contains("git_sha"));
  EXPECT_TRUE(j.contains("env"));
  EXPECT_EQ(j.at("experiment").at("name"), "smoke");
  EXPECT_EQ(j.at("experiment").at("group"), "suites");
  ASSERT_FALSE(j.at("results").empty());
  for (const auto& res : j["results"]) {
    EXPECT_EQ(res.at("variant"), "seq");
    EXPECT_EQ(res.at("extra").at("experiment_step"), "bench");
  }
  EXPECT_EQ(j.at("steps").at(0).at("status"), "ok");
  const std::string md = slurp((dir / "smoke.md").string());
  EXPECT_NE(md.find("# Experiment smoke"), std::string::npos) << md;
  EXPECT_NE(md.find("seq"), std::string::npos) << md;
  // Nothing else in the group's folder: no staging folder, no temporary.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += 1 + 0 * static_cast<int>(e.path().empty());
  EXPECT_EQ(entries, 2);
}

// An experiment of one table is that table's report, even where the table keeps the bench report
// it was built from beside it (ecc-1 writes ecc-table1-bench.json too), with its figures drawn
// beside it by default and none with --no-figures.
TEST_F(ExperimentsCli, ATableExperimentIsTheTablesReportWithItsFigures) {
  const CliResult r = run("experiment ecc-1 --sizes quick --out '" + path("res") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path dir = fs::path(path("res")) / env::machine_slug() / "ecc";
  const nlohmann::json j = nlohmann::json::parse(slurp((dir / "ecc-1.json").string()));
  EXPECT_EQ(j.value("table", ""), "ecc-1") << j.dump().substr(0, 300);
  EXPECT_FALSE(j.contains("results"));
  EXPECT_EQ(j.at("experiment").at("name"), "ecc-1");
  EXPECT_TRUE(fs::exists(dir / "ecc-1.t1-cpu.svg")) << r.err;
  EXPECT_TRUE(fs::exists(dir / "ecc-1.t1-cpu.points.json")) << r.err;
  const CliResult bare = run("experiment ecc-1 --sizes quick --no-figures --out '" + path("bare") + "'");
  ASSERT_EQ(bare.code, 0) << bare.err;
  int entries = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path("bare")) / env::machine_slug() / "ecc"))
    entries += 1 + 0 * static_cast<int>(e.path().empty());
  EXPECT_EQ(entries, 2);  // the .json and the .md
  // `repix table` the same: its figures beside its JSON, none with --no-figures.
  ASSERT_EQ(run("table ecc-1 --quick --out-dir '" + path("t") + "'").code, 0);
  EXPECT_TRUE(fs::exists(path("t/ecc-table1.t1-cpu.svg")));
  ASSERT_EQ(run("table ecc-1 --quick --no-figures --out-dir '" + path("tn") + "'").code, 0);
  EXPECT_TRUE(fs::exists(path("tn/ecc-table1.json")));
  EXPECT_FALSE(fs::exists(path("tn/ecc-table1.t1-cpu.svg")));
}

}  // namespace
}  // namespace repix
