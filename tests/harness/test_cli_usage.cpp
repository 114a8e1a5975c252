// The command line's own manners (issue 12): every command answers --help, an option given twice
// is refused rather than half-ignored, and a bench that measures nothing fails instead of
// writing an empty report. Runs the `repix` binary (REPIX_CLI, set by CTest).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/gpu.hpp"
#include "harness/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using test::CliResult;
class CliUsage : public test::CliTest {};

const char* const kCommands[] = {"list", "gen", "run", "bench", "table", "experiment", "compare", "profile", "help"};

TEST_F(CliUsage, EveryCommandAnswersHelp) {
  for (const char* cmd : kCommands) {
    SCOPED_TRACE(cmd);
    const CliResult long_form = run(std::string(cmd) + " --help");
    ASSERT_EQ(long_form.code, 0) << long_form.err;
    EXPECT_TRUE(long_form.err.empty()) << long_form.err;
    EXPECT_EQ(long_form.out.rfind("usage:", 0), 0u) << long_form.out;
    EXPECT_NE(long_form.out.find(std::string("  ") + cmd), std::string::npos) << long_form.out;
    EXPECT_EQ(run(std::string(cmd) + " -h").out, long_form.out);
    if (std::string(cmd) != "help") EXPECT_EQ(run(std::string("help ") + cmd).out, long_form.out);
  }
  // `repix help` alone (and `repix --help`) lists every command.
  const CliResult all = run("help");
  ASSERT_EQ(all.code, 0) << all.err;
  for (const char* cmd : kCommands) EXPECT_NE(all.out.find(std::string("\n  ") + cmd), std::string::npos) << cmd;
  EXPECT_EQ(run("--help").out, all.out);
  EXPECT_EQ(run("help --help").out, all.out);
}

// --help wins wherever it stands, also where an option expects a value (it used to be taken as
// that value: "option --help needs a value").
TEST_F(CliUsage, HelpWinsOverOptionsExpectingValues) {
  for (const char* args : {"run ecc --variant --help", "bench --samples --help", "gen --help -o",
                           "table iwpp-fig10 --sizes --help", "profile edt --dataset -h"}) {
    SCOPED_TRACE(args);
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("usage:", 0), 0u) << r.out;
  }
}

// Asked about one family, run and profile show only it, with every option explained.
TEST_F(CliUsage, FamilyHelpExplainsEachOption) {
  const CliResult r = run("run reconstruct --help");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("run reconstruct --variant V"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[--queue-blocks-per-sm N]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("persistent blocks per SM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(default 8)"), std::string::npos) << r.out;  // --connectivity
  EXPECT_EQ(r.out.find("run ecc"), std::string::npos) << r.out;
  const CliResult p = run("profile ecc --help");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("ecc options:"), std::string::npos) << p.out;
  EXPECT_EQ(p.out.find("reconstruct"), std::string::npos) << p.out;
}

TEST_F(CliUsage, TableHelpShowsTheNamedTable) {
  const CliResult r = run("table iwpp-fig10 --help");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("iwpp-fig10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[--threads 1,2,4]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ecc-1 "), std::string::npos) << r.out;
  const CliResult all = run("table --help");
  for (const char* id : {"ecc-1", "iwpp-table1", "iwpp-fig16"}) EXPECT_NE(all.out.find(id), std::string::npos) << id;
}

// An unknown name in a help request is the usual one-line error, with nothing on stdout.
TEST_F(CliUsage, HelpAboutUnknownNamesIsAnError) {
  const CliResult table = run("table nope --help");
  EXPECT_EQ(table.code, 2);
  EXPECT_TRUE(table.out.empty()) << table.out;
  EXPECT_NE(table.err.find("unknown table 'nope'"), std::string::npos) << table.err;
  EXPECT_EQ(lines(table.err), 1) << table.err;
  const CliResult family = run("run nope --help");
  EXPECT_NE(family.code, 0);
  EXPECT_TRUE(family.out.empty()) << family.out;
  const CliResult command = run("help nope");
  EXPECT_EQ(command.code, 2);
  EXPECT_NE(command.err.find("no command 'nope'"), std::string::npos) << command.err;
}

// An option given twice is refused (the second used to be dropped without a word: `--variant seq
// --variant gpu-opt` ran seq); options meant to repeat (--dataset, --variants) still do.
TEST_F(CliUsage, RepeatedOptionsAreRefused) {
  ASSERT_EQ(run("gen uniform:8x8:levels=4 -o " + path("u.npy")).code, 0);
  const CliResult r = run("run ecc --variant seq --variant omp --input " + path("u.npy") + " --output " + path("o.csv"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--variant given more than once"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(path("o.csv")));
  const CliResult twice = run("gen uniform:8x8 -o " + path("a.npy") + " -o " + path("b.npy"));
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("--output given more than once"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(path("a.npy")) || fs::exists(path("b.npy")));
  const CliResult repeatable = run("bench --family ecc --variants seq --dataset uniform:8x8:levels=4:seed=1 "
                                   "--dataset uniform:8x8:levels=4:seed=2 --cpu-samples 1 --out " + path("r.json"));
  EXPECT_EQ(repeatable.code, 0) << repeatable.err;
}

// A family's flag on the bench's command line is a flag there too: the option after it is not
// taken for its value (ecc's --timeline was, at first); =1/=0 are accepted, another value and a
// family that does not declare it are usage errors.
TEST_F(CliUsage, BenchFamilyFlagsTakeNoValue) {
  const std::string common = "bench --variants seq --dataset uniform:8x8:levels=4 --scopes end-to-end";
  for (const std::string& flag : {"--timeline --cpu-samples 1", "--cpu-samples 1 --timeline", "--timeline=0 --cpu-samples 1"}) {
    SCOPED_TRACE(flag);
    const CliResult r = run(common + " --family ecc " + flag + " --out " + path("r.json"));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(path("r.json")));
    fs::remove(path("r.json"));
  }
  const CliResult bad = run(common + " --family ecc --timeline=maybe --cpu-samples 1 --out " + path("r.json"));
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--timeline is a flag"), std::string::npos) << bad.err;
  const CliResult other = run("bench --family reconstruct --variants seq-sr --dataset noise-mask:16x16 --timeline "
                              "--cpu-samples 1 --out " + path("r.json"));
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("--timeline applies to the ecc family"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(path("r.json")));
  // run takes it too: a variant that records no timeline says so, and the curve is written.
  const CliResult cpu = run("run ecc --variant seq --timeline --input uniform:8x8:levels=4 --output " + path("c.csv") +
                            " --json " + path("c.json"));
  EXPECT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_NE(cpu.err.find("no timeline: variant seq records none"), std::string::npos) << cpu.err;
  EXPECT_TRUE(fs::exists(path("c.csv")) && fs::exists(path("c.json")));
  if (gpu_available()) {  // gpu-opt records one: on stderr and in --json
    const CliResult gpu = run("run ecc --variant gpu-opt --timeline --input uniform:64x64:levels=4 --output " +
                              path("g.csv") + " --json " + path("g.json"));
    EXPECT_EQ(gpu.code, 0) << gpu.err;
    EXPECT_NE(gpu.err.find("repix run: timeline (us): 1 chunk(s)"), std::string::npos) << gpu.err;
    std::ifstream in(path("g.json"));
    const nlohmann::json j = nlohmann::json::parse(in);
    ASSERT_TRUE(j.contains("timeline")) << j.dump();
    EXPECT_GT(j["timeline"]["gpu_finished_us"].get<double>(), 0);
    EXPECT_GT(j["timeline"]["host_curve_work_us"].get<double>(), 0);
  }
}

// A bench that measures nothing exits 1 with the reason and writes no report (it used to exit 0
// with an empty "(no results)" report).
TEST_F(CliUsage, BenchThatMeasuresNothingFails) {
  const std::string common = "bench --family ecc --dataset uniform:8x8:levels=4 --cpu-samples 1 --out " + path("r.json");
  struct Case {
    std::string args;
    const char* why;
  };
  for (const Case& c : {Case{common + " --variants seq --benchmark_filter=matches-nothing",
                             "no case matched the --benchmark_filter"},
                        Case{common + " --variants seq --exclude seq", "no variant or peer was selected"}}) {
    SCOPED_TRACE(c.args);
    const CliResult r = run(c.args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find(std::string("nothing ran: ") + c.why), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no report written"), std::string::npos) << r.err;
    expect_only({});  // neither a report nor a journal
  }
  if (!gpu_available()) {  // only GPU variants asked for, on a machine without one
    const CliResult r = run(common + " --variants gpu-opt");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("nothing ran: no variant or peer was selected that runs without a GPU"), std::string::npos)
        << r.err;
    expect_only({});
  }
}

// A missing or damaged dataset stops the bench before anything is timed: one error naming it,
// not one per variant after the others ran.
TEST_F(CliUsage, BenchChecksItsDatasetsFirst) {
  {
    std::ofstream bad(path("bad.npy"));
    bad << "not an npy file";
  }
  for (const std::string& spec : {path("missing.npy"), path("bad.npy"), "file:" + path("missing.npy")}) {
    SCOPED_TRACE(spec);
    const CliResult r = run("bench --family ecc --variants seq,omp --dataset uniform:8x8:levels=4 --dataset " + spec +
                            " --cpu-samples 1 --out " + path("r.json"));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("repix: error: dataset '" + spec + "'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("measuring"), std::string::npos) << r.err;  // nothing started
    EXPECT_EQ(r.out.find("ecc/seq"), std::string::npos) << r.out;     // nothing timed
    EXPECT_FALSE(fs::exists(path("r.json")));
  }
}

// A report path that cannot be written stops the bench before anything is timed (item 10: it used
// to fail after all the timing, leaving only a journal).
TEST_F(CliUsage, BenchChecksItsReportPathFirst) {
  fs::create_directories(path("folder"));
  for (const std::string& out : {path("folder"), path("missing/r.json")}) {
    SCOPED_TRACE(out);
    const CliResult r = run("bench --family ecc --variants seq --dataset uniform:8x8:levels=4 --cpu-samples 1 --out '" +
                            out + "'");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("--out '" + out + "'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("ecc/seq"), std::string::npos) << r.out;  // nothing timed
    EXPECT_FALSE(fs::exists(out + ".partial.jsonl"));
    EXPECT_FALSE(fs::exists(path("missing")));
  }
}

}  // namespace
}  // namespace repix
