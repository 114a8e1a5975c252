// Measurements kept as they are taken (harness/journal.hpp) and the runs that read them back:
// `repix table ID --from` and `repix bench --from`, after a run killed mid-way (the process sends
// itself SIGKILL after a chosen record: REPIX_TEST_KILL_AFTER_RECORDS). Also the optional-field
// reading every reader of JSON written elsewhere uses (json_fields.hpp), and the source
// description of a build without git (the source-archive crash these came from).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/env.hpp"
#include "harness/journal.hpp"
#include "harness/json_fields.hpp"
#include "harness/report.hpp"
#include "harness/tables_common.hpp"
#include "harness/tables_test_util.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using nlohmann::json;

// ---- json_fields ------------------------------------------------------------------------------

TEST(JsonFields, MissingNullAndMistypedGiveTheFallback) {
  using json_fields::field_or;
  using json_fields::path_or;
  const json j = {{"b", true}, {"n", nullptr}, {"s", "x"}, {"i", 7}, {"d", 2.5}, {"o", {{"k", "v"}, {"z", nullptr}}}};
  EXPECT_TRUE(field_or(j, "b", false));
  EXPECT_FALSE(field_or(j, "n", false));   // present but null: what nlohmann's value() throws on
  EXPECT_FALSE(field_or(j, "s", false));   // mistyped
  EXPECT_FALSE(field_or(j, "missing", false));
  EXPECT_EQ(field_or(j, "s", "?"), "x");
  EXPECT_EQ(field_or(j, "n", "?"), "?");
  EXPECT_EQ(field_or(j, "i", "?"), "?");
  EXPECT_EQ(field_or(j, "i", 0), 7);
  EXPECT_EQ(field_or(j, "d", 0), 0);       // not an integer
  EXPECT_EQ(field_or(j, "d", 0.0), 2.5);
  EXPECT_EQ(field_or(j, "i", 0.0), 7.0);
  EXPECT_TRUE(field_or(j, "n", json()).is_null());
  EXPECT_EQ(field_or(j, "o", json())["k"], "v");
  EXPECT_EQ(field_or(json(nullptr), "b", true), true);  // not an object
  EXPECT_EQ(field_or(json::array(), "b", true), true);
  EXPECT_EQ(path_or(j, {"o", "k"}, "?"), "v");
  EXPECT_EQ(path_or(j, {"o", "z"}, "?"), "?");
  EXPECT_EQ(path_or(j, {"s", "k"}, "?"), "?");  // a step through a non-object
  EXPECT_EQ(path_or(j, {"x", "k"}, "?"), "?");
}

// ---- a build without git (the source-archive bug) ------------------------------------------

TEST(SourceArchive, HeadersReadNullAndMissingGitFields) {
  tables::Meta m = test::table_meta(false, "quick");
  const json paper = {{"source", "P"}, {"hardware", nullptr}};
  for (const json& tool : {json{{"git_sha", "unknown"}, {"git_dirty", nullptr}, {"git_source", "unknown"}},
                           json{{"git_sha", "0123456789abcdef0123"}, {"git_dirty", nullptr}, {"git_source", "archive"}},
                           json{{"git_sha", nullptr}}, json::object(), json()}) {
    m.tool = tool;
    std::string md;
    EXPECT_NO_THROW(md = tables::header("T", paper, m)) << tool.dump();
    EXPECT_NO_THROW((void)tables::meta_json("t", paper, m)) << tool.dump();
    report::Report r;
    r.tool = tool;
    EXPECT_NO_THROW((void)report::summary_table(r)) << tool.dump();
  }
}

TEST(SourceArchive, DescribeSourceSaysWhereTheCodeCameFrom) {
  EXPECT_EQ(env::describe_source({{"git_sha", "0123456789abcdef"}, {"git_dirty", false}, {"git_source", "git"}}),
            "0123456789ab");
  EXPECT_EQ(env::describe_source({{"git_sha", "0123456789abcdef"}, {"git_dirty", true}, {"git_source", "git"}}),
            "0123456789ab (dirty)");
  EXPECT_EQ(env::describe_source({{"git_sha", "0123456789abcdef"}, {"git_dirty", nullptr}, {"git_source", "archive"}}),
            "0123456789ab (source archive)");
  EXPECT_EQ(env::describe_source({{"git_sha", "unknown"}, {"git_dirty", nullptr}}), "unversioned source");
  EXPECT_EQ(env::describe_source(json()), "unversioned source");
}

// ---- the journal itself --------------------------------------------------------------------

class JournalFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_dir("journal", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "r.json.partial.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void append_raw(const std::string& text) const {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(JournalFile, RecordsComeBackInOrderAndDoneRemovesTheFile) {
  {
    journal::Writer w(path_, "table", "ecc-2", {{"command", "repix table ecc-2"}, {"args", json::array()}});
    w.append("measurement", "a", {{"x", 1}});
    w.append("measurement", "b", json::array({1, 2}));
    w.append("measurement", "a", {{"x", 2}});  // a later record of a key wins
    const journal::Journal j = journal::read(path_, "table");
    EXPECT_EQ(j.kind, "table");
    EXPECT_EQ(j.id, "ecc-2");
    EXPECT_EQ(j.header["command"], "repix table ecc-2");
    ASSERT_EQ(j.records.size(), 3u);
    EXPECT_EQ(j.records[1].key, "b");
    EXPECT_GE(j.records[1].elapsed_s, 0.0);
    ASSERT_NE(j.find("measurement", "a"), nullptr);
    EXPECT_EQ(j.find("measurement", "a")->data["x"], 2);
    EXPECT_EQ(j.find("measurement", "c"), nullptr);
    EXPECT_EQ(j.all("measurement").size(), 3u);
    EXPECT_FALSE(j.torn_tail);
    w.done();
  }
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(JournalFile, WithoutDoneTheFileStays) {
  { journal::Writer w(path_, "bench", "bench", json::object()); }
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_TRUE(journal::read(path_, "bench").records.empty());
}

TEST_F(JournalFile, ACutOffLastLineIsIgnoredAndCounted) {
  {
    journal::Writer w(path_, "bench", "bench", json::object());
    w.append("result", "k", {{"v", 1}});
  }
  append_raw("{\"record\": \"result\", \"key\": \"k2\", \"da");  // killed while writing
  const journal::Journal j = journal::read(path_, "bench");
  EXPECT_EQ(j.records.size(), 1u);
  EXPECT_TRUE(j.torn_tail);
}

TEST_F(JournalFile, DamageElsewhereWrongKindAndNonJournalsAreErrors) {
  {
    journal::Writer w(path_, "bench", "bench", json::object());
    w.append("result", "k", {{"v", 1}});
  }
  EXPECT_THROW(journal::read(path_, "table"), Error);  // a bench journal where a table's is expected
  append_raw("not json\n{\"record\": \"result\", \"key\": \"k3\", \"data\": 1}\n");
  EXPECT_THROW(journal::read(path_, "bench"), Error);  // a damaged line that is not the last
  std::ofstream(path_) << "{\"a\": 1}\n";
  EXPECT_THROW(journal::read(path_, "bench"), Error);  // no header
  std::ofstream(path_) << "{\"repix_journal\": 99, \"kind\": \"bench\"}\n";
  EXPECT_THROW(journal::read(path_, "bench"), Error);  // another version
  EXPECT_THROW(journal::read((dir_ / "missing.jsonl").string(), "bench"), Error);
}

// ---- killed runs, then --from ----------------------------------------------------------------

class JournalCli : public test::CliTest {
 protected:
  json read_json(const std::string& name) const {
    std::ifstream in(path(name));
    return json::parse(in);
  }
  // Runs `repix ARGS` killed after `records` journal records; expects it to have died by SIGKILL.
  void run_killed(const std::string& args, int records) const {
    const test::CliResult r = run(args, "REPIX_TEST_KILL_AFTER_RECORDS=" + std::to_string(records));
    ASSERT_EQ(r.signal, SIGKILL) << args << ": exit " << r.code << "\n" << r.err;
  }
};

// Each table killed after a few measurements leaves its journal and no table; --from builds the
// table from the journal, marks it as such and lists what is missing; the journal stays.
TEST_F(JournalCli, EveryKindOfTableIsRebuiltFromTheJournalOfAKilledRun) {
  struct Case {
    const char* id;
    const char* sizes;
    const char* out_option;
    const char* name;  // output name
    int records;       // kill after this many
  };
  for (const Case& c : {Case{"ecc-1", "--quick", "--out-dir", "ecc-table1", 2},
                        Case{"ecc-2", "--quick", "--out-dir", "ecc-table2", 2},
                        Case{"ecc-3", "--quick", "--out-dir", "ecc-table3", 3},
                        Case{"iwpp-table1", "--sizes small", "--out", "iwpp-table1", 4},
                        Case{"iwpp-fig10", "--sizes small", "--out", "iwpp-fig10", 2},
                        Case{"iwpp-table2", "--sizes small", "--out", "iwpp-table2", 2},
                        Case{"ami-5.1", "--sizes small", "--out", "ami-5.1", 2}}) {
    SCOPED_TRACE(c.id);
    const std::string out = path(c.id);
    run_killed(std::string("table ") + c.id + " " + c.sizes + " " + c.out_option + " '" + out + "'", c.records);
    const std::string journal = out + "/" + c.name + ".partial.jsonl";
    ASSERT_TRUE(fs::exists(journal));
    EXPECT_FALSE(fs::exists(out + "/" + c.name + ".md"));
    EXPECT_FALSE(fs::exists(out + "/" + c.name + ".json"));
    const journal::Journal j = journal::read(journal, "table");
    EXPECT_EQ(j.records.size(), static_cast<std::size_t>(c.records));

    const test::CliResult r = run(std::string("table ") + c.id + " --from '" + journal + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Built from the journal"), std::string::npos) << r.out;
    const json t = read_json(std::string(c.id) + "/" + c.name + ".json");
    EXPECT_EQ(t["table"], c.id);
    ASSERT_TRUE(t.contains("provenance"));
    EXPECT_EQ(t["provenance"]["rebuilt_from_journal"], journal);
    EXPECT_FALSE(t["provenance"]["missing"].empty()) << t["provenance"].dump();
    EXPECT_EQ(t["command"], j.header["command"]);  // the measuring run's, not the rebuild's
    EXPECT_TRUE(fs::exists(journal));              // the user's file: kept
  }
}

// A replayed cell is the journalled measurement itself; a missing one says so.
TEST_F(JournalCli, ReplayedCellsAreTheJournalledMeasurements) {
  const std::string out = path("t");
  run_killed("table iwpp-fig10 --sizes small --threads 1,2 --out '" + out + "'", 3);
  const std::string journal = out + "/iwpp-fig10.partial.jsonl";
  const journal::Journal j = journal::read(journal, "table");
  ASSERT_EQ(run("table iwpp-fig10 --from '" + journal + "' --out '" + path("rebuilt") + "'").code, 0);
  const json t = read_json("rebuilt/iwpp-fig10.json");
  ASSERT_EQ(t["rows"].size(), 2u);  // --threads 1,2 came from the journal
  const json& first = t["rows"][0]["cells"][0];
  const journal::Record* rec = j.find("measurement", "threads 1 omp-tiled end-to-end");
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(first["samples_ms"], rec->data["samples_ms"]);
  EXPECT_TRUE(first["verified"].get<bool>());
  const json& missing = t["rows"][1]["cells"][1];
  EXPECT_EQ(missing["not_run"].get<std::string>().rfind("missing", 0), 0u) << missing.dump();
  EXPECT_TRUE(missing["samples_ms"].empty());
}

TEST_F(JournalCli, AFinishedTableLeavesNoJournal) {
  const test::CliResult r = run("table ecc-3 --quick --out-dir '" + path("o") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("o/ecc-table3.md")));
  EXPECT_FALSE(fs::exists(path("o/ecc-table3.partial.jsonl")));
}

TEST_F(JournalCli, FromRefusesOtherOptionsOtherTablesAndBenchJournals) {
  const std::string out = path("t");
  run_killed("table ecc-2 --quick --out-dir '" + out + "'", 1);
  const std::string journal = out + "/ecc-table2.partial.jsonl";
  test::CliResult r = run("table ecc-2 --from '" + journal + "' --sizes default");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--sizes with --from"), std::string::npos) << r.err;
  r = run("table ecc-3 --from '" + journal + "'");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("journal of table ecc-2, not of ecc-3"), std::string::npos) << r.err;
  r = run("bench --from '" + journal + "'");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("not of a bench run"), std::string::npos) << r.err;
  r = run("table ecc-2 --from '" + path("none.jsonl") + "'");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(test::CliTest::lines(r.err), 1) << r.err;
}

// A failing run (not killed) says where its measurements are and how to use them.
TEST_F(JournalCli, AFailedRunNamesItsJournal) {
  // The table's markdown cannot be written (a folder holds its name): the run fails at its last
  // step, after the measurements (a bad --paper is refused before them).
  fs::create_directories(path("o/ecc-table3.md"));
  const test::CliResult r = run("table ecc-3 --quick --out-dir '" + path("o") + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("ecc-table3.partial.jsonl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("repix table ecc-3 --from"), std::string::npos) << r.err;
  const test::CliResult again =
      run("table ecc-3 --from '" + path("o/ecc-table3.partial.jsonl") + "' --out-dir '" + path("o2") + "'");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(fs::exists(path("o2/ecc-table3.md")));
}

TEST_F(JournalCli, ABenchKilledMidwayGivesAReportOfWhatItMeasured) {
  const std::string report = path("r.json");
  // Records: the bounds (with a GPU), the two datasets (marker and mask), then the results: killed
  // after the first result.
  run_killed("bench --family reconstruct --dataset noise-mask:96x80:marker=opening --variants seq,seq-sr,omp-tiled "
             "--cpu-samples 2 --out '" + report + "'",
             gpu_available() ? 4 : 3);
  EXPECT_FALSE(fs::exists(report));
  const std::string journal = report + ".partial.jsonl";
  ASSERT_TRUE(fs::exists(journal));
  const test::CliResult r = run("bench --from '" + journal + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rebuilt from the journal"), std::string::npos) << r.out;
  const report::Report rep = report::read_report(report);
  ASSERT_FALSE(rep.results.empty());
  EXPECT_LT(rep.results.size(), 3u);
  for (const auto& res : rep.results) EXPECT_TRUE(res.verified) << res.variant;
  EXPECT_EQ(rep.provenance["rebuilt_from_journal"], journal);
  EXPECT_FALSE(rep.datasets.empty());
}

TEST_F(JournalCli, AFinishedBenchLeavesNoJournal) {
  const test::CliResult r =
      run("bench --family reconstruct --dataset noise-mask:64x48:marker=opening --variants seq --cpu-samples 1 "
          "--out '" + path("r.json") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("r.json")));
  EXPECT_FALSE(fs::exists(path("r.json.partial.jsonl")));
  // Google Benchmark's "Library was built as DEBUG" warning is not printed (harness/gbench.hpp).
  EXPECT_EQ(r.err.find("built as DEBUG"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("built as DEBUG"), std::string::npos) << r.out;
}

// The crash of issue 17: git_dirty recorded as null (no work tree, or REPIX_GIT_SHA without
// REPIX_GIT_DIRTY, as on the GPU machine) made every table fail at its last step.
TEST_F(JournalCli, TablesRunWithUnknownGitState) {
  // REPIX_GIT_DIRTY unset, also where the caller's environment has it (scripts/device-check).
  const test::CliResult r =
      run("table ecc-2 --quick --out-dir '" + path("o") + "'", "env -u REPIX_GIT_DIRTY REPIX_GIT_SHA=0123abcd");
  ASSERT_EQ(r.code, 0) << r.err;
  const json t = read_json("o/ecc-table2.json");
  EXPECT_TRUE(t["tool"]["git_dirty"].is_null());
  EXPECT_NE(r.out.find("repix 0123abcd;"), std::string::npos) << r.out.substr(0, 600);
}

}  // namespace
}  // namespace repix
