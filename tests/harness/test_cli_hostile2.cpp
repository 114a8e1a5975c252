// Reliability round two (issue 38): the causes the second hostile round found, each at its root.
// File names of any bytes in every JSON a command writes (json_text), journals owned by one run
// and checked when read back, standard output that cannot be written, exit codes (unknown names
// are usage errors), checks before work, and the smaller things a user meets.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "harness/cli_test_util.hpp"
#include "harness/json_text.hpp"
#include "harness/progress.hpp"
#include "harness/report.hpp"

namespace repix::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- the JSON text mechanism on its own -------------------------------------------------------

TEST(JsonText, AnyBytesRoundTripAndValidTextIsUnchanged) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  const std::vector<std::string> names = {"plain.npy", "caf\xc3\xa9.npy", "a\xff.npy", "back\\slash", "\\x41 literal",
                                          "half \xe2\x82", "surrogate \xed\xa0\x80", "overlong \xc0\xaf", all};
  for (const std::string& n : names) {
    const json j = {{"path", n}, {n, {n, 1}}};
    const std::string text = json_text::dump(j);  // never throws, whatever the bytes
    const json back = json_text::decode(json::parse(text));
    EXPECT_EQ(back["path"].get<std::string>(), n);
    EXPECT_EQ(back[n][0].get<std::string>(), n);
  }
  EXPECT_EQ(json_text::dump(json("caf\xc3\xa9")), "\"caf\xc3\xa9\"");  // valid UTF-8 as it is
  EXPECT_EQ(json_text::dump(json("a\xff.npy")), "\"a\\\\xff.npy\"");   // readable: a\xff.npy
  EXPECT_EQ(json_text::printable("two\nlines\xfe"), "two\\x0alines\\xfe");
  EXPECT_EQ(json_text::printable("keeps \\ and caf\xc3\xa9"), "keeps \\ and caf\xc3\xa9");
}

TEST(ErrorMessages, AFailedAllocationReadsAsOutOfHostMemory) {
  EXPECT_EQ(message_of(std::bad_alloc()), "out of host memory (an allocation failed)");
  EXPECT_EQ(message_of(Error("plain")), "plain");
}

// Without a GPU (CI), the reason names no driver upgrade: the runtime's "CUDA driver version is
// insufficient" is what it says where there is no NVIDIA driver at all.
TEST(GpuProbe, NoDriverIsNotCalledAnOldDriver) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is here";
  const std::string why = gpu_unavailable_reason();
  if (why.find("insufficient") != std::string::npos)
    EXPECT_EQ(why.rfind("no NVIDIA GPU and driver usable here", 0), 0u) << why;
  EXPECT_FALSE(why.empty());
}

class CliHostile2 : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (IsSkipped()) return;
    datasets::write_npy(datasets::generate(datasets::Spec::parse("uniform:24x17:levels=5:dtype=uint8:seed=3")), path("in.npy"));
  }
  // A run in the background (its stdout and stderr dropped): the pid.
  pid_t start(const std::string& args) const {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string cmd = "exec env TMPDIR='" + tmp_.string() + "' '" + cli_ + "' " + args + " >/dev/null 2>&1";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  static bool wait_for(const fs::path& p) {
    for (int i = 0; i < 6000; ++i) {
      if (fs::exists(p)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // `repix ARGS` with standard output sent by `stdout_to` (shell text: "> /dev/full", ">&-").
  CliResult run_out(const std::string& args, const std::string& stdout_to) const {
    const std::string err = path("stderr.txt");
    const std::string cmd = "TMPDIR='" + tmp_.string() + "' '" + cli_ + "' " + args + " " + stdout_to + " 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(err);
    fs::remove(err);
    return r;
  }
};

// ---- file names that are not UTF-8 ------------------------------------------------------------

TEST_F(CliHostile2, NonUtf8FileNamesInEveryRunJsonAndInBenchReports) {
  const std::string odd = path("a\xff\xfe.npy");
  fs::copy_file(path("in.npy"), odd);
  const std::string q = "'" + odd + "'";
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"maxtree", "run maxtree --variant seq --input " + q + " --output " + path("p.npy")},
      {"area-opening", "run area-opening --variant seq --input " + q + " --area 3 --output " + path("p.npy")},
      {"ecc", "run ecc --variant seq --input " + q + " --output " + path("c.csv")},
      {"edt", "run edt --variant seq-exact --input " + q + " --output " + path("d.npy")},
      {"ranklet", "run ranklet --variant seq --windows 2 --input " + q + " --output " + path("r.npy")},
      {"auto-mi", "run auto-mi --variant seq --input " + q + " --output " + path("m.csv")},
      {"ami", "run ami --variant seq --windows 2 --input " + q + " --output " + path("a.csv")},
      {"reconstruct", "run reconstruct --variant seq --marker " + q + " --mask " + q + " --output " + path("o.npy")}};
  for (const auto& [family, args] : runs) {
    SCOPED_TRACE(family);
    const CliResult r = run(args + " --json " + path("r.json"));
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(path("r.json"));
    const json j = json_text::decode(json::parse(in));  // valid JSON, the name exact
    bool found = false;
    std::function<void(const json&)> walk = [&](const json& x) {
      if (x.is_string() && x.get<std::string>().find("a\xff\xfe.npy") != std::string::npos) found = true;
      if (x.is_structured())
        for (const auto& y : x) walk(y);
    };
    walk(j);
    EXPECT_TRUE(found) << j.dump().substr(0, 400);
  }
  // A bench on a file: dataset spec of such a name in its report and journal.
  const CliResult b = run("bench --family ecc --variants seq --dataset 'file:" + odd + "' --samples 2 --out " + path("b.json"));
  ASSERT_EQ(b.code, 0) << b.err;
  const report::Report rep = report::read_report(path("b.json"));
  ASSERT_EQ(rep.datasets.size(), 1u);
  EXPECT_NE(rep.datasets[0].spec.find("a\xff\xfe.npy"), std::string::npos) << rep.datasets[0].spec;
  EXPECT_NE(rep.command.find("a\xff\xfe.npy"), std::string::npos);
}

TEST_F(CliHostile2, ANewlineOrAnInvalidByteInANameKeepsTheErrorOneLine) {
  const CliResult r = run("run ecc --variant seq --input '" + path("missing\nline\xff.npy") + "' --output " + path("c.csv"));
  expect_error(r, 1, "missing\\x0aline\\xff.npy");
}

// ---- journals ---------------------------------------------------------------------------------

TEST_F(CliHostile2, ASecondBenchOnTheSameOutputIsRefusedAndTheFirstKeepsItsJournal) {
  const std::string out = path("r.json"), journal = out + ".partial.jsonl";
  const pid_t first = start("bench --family ecc --variants seq --dataset uniform:512x512:levels=64:dtype=uint8:seed=1 "
                            "--cpu-samples 100000 --out '" + out + "'");
  ASSERT_TRUE(wait_for(journal)) << "the first bench's journal never appeared";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const CliResult second = run("bench --family reconstruct --variants seq --dataset noise-mask:32x32:marker=opening "
                               "--cpu-samples 1 --out '" + out + "'");
  ::kill(first, SIGTERM);
  int status = 0;
  ::waitpid(first, &status, 0);
  expect_error(second, 1, "another repix run is writing the same output");
  // The first run's journal still holds its own header (the second truncated nothing).
  std::ifstream in(journal);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("uniform:512x512"), std::string::npos) << header;
}

TEST_F(CliHostile2, BenchFromAJournalOverItselfIsAUsageErrorAndAnEditedOneIsRefused) {
  const std::string out = path("r.json"), journal = out + ".partial.jsonl";
  // A journal left by a run killed after its first result (the tests' hook). Records: the bounds
  // (with a GPU), the dataset, then the results.
  const CliResult killed = run("bench --family ecc --variants seq,omp --dataset uniform:32x32:levels=5 --samples 2 --out '" +
                                   out + "'",
                               "REPIX_TEST_KILL_AFTER_RECORDS=" + std::to_string(gpu_available() ? 3 : 2));
  ASSERT_TRUE(fs::exists(journal)) << killed.err;
  expect_error(run("bench --from '" + journal + "' --out '" + journal + "'"), 2, "--out");
  expect_error(run("bench --from '" + journal + "' --out '" + path(".") + "/r.json.partial.jsonl'"), 2, "--out");
  EXPECT_TRUE(fs::exists(journal));
  // Edited to hold a negative time: refused, nothing written.
  std::ifstream in(journal);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("\"median_ms\":");
  ASSERT_NE(at, std::string::npos) << text;
  std::string edited = text.substr(0, at) + "\"median_ms\":-3.0,\"was\":" + text.substr(at + 12);
  std::ofstream(path("edited.partial.jsonl")) << edited;
  expect_error(run("bench --from '" + path("edited.partial.jsonl") + "' --out " + path("e.json")), 1,
               "a time no measurement gives");
  EXPECT_FALSE(fs::exists(path("e.json")));
}

// ---- standard output --------------------------------------------------------------------------

TEST_F(CliHostile2, StandardOutputThatCannotBeWrittenFailsTheCommand) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const std::string& args : {std::string("list families"), std::string("help"), std::string("help bench"),
                                  "bench --family ecc --variants seq --dataset uniform:16x16:levels=3 --samples 1 --out " +
                                      path("b.json")}) {
    SCOPED_TRACE(args);
    const CliResult full = run_out(args, "> /dev/full");
    EXPECT_EQ(full.code, 1) << full.err;
    EXPECT_NE(full.err.find("cannot write to standard output"), std::string::npos) << full.err;
  }
  const CliResult closed = run_out("list families", ">&-");
  EXPECT_EQ(closed.code, 1) << closed.err;
  EXPECT_NE(closed.err.find("cannot write to standard output"), std::string::npos) << closed.err;
  // compare too; and a closed standard output never becomes a file the command writes.
  ASSERT_EQ(run("bench --family ecc --variants seq --dataset uniform:16x16:levels=3 --samples 1 --out " + path("a.json")).code, 0);
  EXPECT_EQ(run_out("compare " + path("a.json") + " " + path("a.json"), "> /dev/full").code, 1);
  const CliResult bench_closed =
      run_out("bench --family ecc --variants seq --dataset uniform:16x16:levels=3 --samples 1 --out " + path("c.json"), ">&-");
  EXPECT_EQ(bench_closed.code, 1) << bench_closed.err;
  const report::Report c = report::read_report(path("c.json"));  // the report is a report, not the summary
  EXPECT_EQ(c.results.size(), 1u);
}

// ---- exit codes and messages --------------------------------------------------------------------

TEST_F(CliHostile2, UnknownNamesAreUsageErrors) {
  expect_error(run("bench --family nosuch --samples 1"), 2, "unknown family 'nosuch'");
  expect_error(run("bench --family ecc --variants nosuch --dataset uniform:8x8 --samples 1"), 2, "unknown ecc variant");
  expect_error(run("bench --suite nosuch --samples 1"), 2, "unknown suite 'nosuch'");
  expect_error(run("run nosuch --variant seq"), 2, "unknown family");
  expect_error(run("run ecc --variant nosuch --input " + path("in.npy") + " --output " + path("c.csv")), 2,
               "unknown ecc variant 'nosuch'");
  expect_error(run("table nosuch"), 2, "unknown table 'nosuch'");
  // A dataset spec naming no kind stays a bad input (exit 1), as a missing file is.
  EXPECT_EQ(run("gen notakind:4x4 -o " + path("x.npy")).code, 1);
  // A stray word says what it is; list takes one word it knows.
  expect_error(run("run ecc seq --input " + path("in.npy") + " --output " + path("c.csv")), 2, "'seq' is not one");
  expect_error(run("list families variants"), 2, "list takes one of");
  expect_error(run("list everything"), 2, "got 'everything'");
}

TEST_F(CliHostile2, TableOutputsAndPaperCheckedBeforeAnythingIsMeasured) {
  std::ofstream(path("file")) << "x";
  expect_error(run("table iwpp-fig10 --sizes small --threads 1 --out " + path("file")), 1, "is a file, not a folder");
  expect_error(run("table ecc-1 --quick --out-dir " + path("file")), 1, "is a file, not a folder");
  std::ofstream(path("bad.json")) << "{\"table\": ";
  const CliResult bad = run("table ecc-1 --quick --paper " + path("bad.json") + " --out-dir " + path("t"));
  expect_error(bad, 1, "bad.json");
  EXPECT_FALSE(fs::exists(path("t")));  // nothing measured, nothing written
  // ecc-1 takes --out as the other tables do, and every table names what it wrote.
  const CliResult ok = run("table ecc-1 --quick --out " + path("t"));
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(path("t/ecc-table1-quick.md")) || fs::exists(path("t/ecc-table1.md"))) << ok.err;
  EXPECT_NE(ok.err.find("repix table: wrote " + path("t")), std::string::npos) << ok.err;
}

// ---- limits -----------------------------------------------------------------------------------

TEST_F(CliHostile2, OmpNumThreadsThatOpenMpWouldIgnoreIsRefused) {
  // libgomp itself may warn first ("Invalid value for environment variable"); repix's line is last.
  for (const char* v : {"0", "abc", "4,0", "2,x", "-1"}) {
    SCOPED_TRACE(v);
    const CliResult r = run("list families", std::string("OMP_NUM_THREADS='") + v + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
    EXPECT_EQ(last.rfind("repix: usage error: OMP_NUM_THREADS='", 0), 0u) << r.err;
  }
  EXPECT_EQ(run("list families", "OMP_NUM_THREADS=2").code, 0);
  EXPECT_EQ(run("list families", "OMP_NUM_THREADS=2,1").code, 0);
}

TEST_F(CliHostile2, ValuesBeyondTheDtypeAndCountsBeyondTheCapAreRefused) {
  expect_error(run("gen const:8x8:value=1e39:dtype=float32 -o " + path("x.npy")), 1, "does not fit in float32");
  EXPECT_FALSE(fs::exists(path("x.npy")));
  ASSERT_EQ(run("gen const:8x8:value=3e38:dtype=float32 -o " + path("y.npy")).code, 0);
  expect_error(run("bench --family ecc --variants seq --dataset uniform:8x8 --cpu-samples 2000000000"), 2, "--cpu-samples");
  expect_error(run("bench --family ecc --variants seq --dataset uniform:8x8 --samples 100001"), 2, "--samples");
}

// ---- smaller things ---------------------------------------------------------------------------

TEST_F(CliHostile2, AFileOfJustTheMagicIsATruncatedNpy) {
  std::ofstream(path("magic.npy"), std::ios::binary) << "\x93NUMPY";
  expect_error(run("run ecc --variant seq --input " + path("magic.npy") + " --output " + path("c.csv")), 1,
               "truncated .npy header");
  std::ofstream(path("other.npy"), std::ios::binary) << "GIF89a";
  expect_error(run("run ecc --variant seq --input " + path("other.npy") + " --output " + path("c.csv")), 1,
               "is not an .npy file");
}

TEST_F(CliHostile2, AFifoInputWithAWriterIsRead) {
  ASSERT_EQ(::mkfifo(path("pipe.npy").c_str(), 0600), 0);
  const CliResult direct = run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("want.csv"));
  ASSERT_EQ(direct.code, 0) << direct.err;
  const CliResult r = run("run ecc --variant seq --input " + path("pipe.npy") + " --output " + path("got.csv") + " & "
                          "cat '" + path("in.npy") + "' > '" + path("pipe.npy") + "'; wait $!");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(path("got.csv")), slurp(path("want.csv")));
  for (const auto& e : fs::directory_iterator(tmp_))  // the spooled copy is gone
    EXPECT_EQ(e.path().filename().string().rfind("repix-stdin-", 0), std::string::npos) << e.path();
}

TEST(Heartbeat, SaysALongRunIsStillRunningAndNothingForAShortOne) {
  testing::internal::CaptureStderr();
  { progress::Heartbeat quiet("short", 10); }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  {
    progress::Heartbeat beat("repix run: x/y still running", 0.05);
    std::this_thread::sleep_for(std::chrono::milliseconds(130));
  }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("repix run: x/y still running, 0 s so far...\n"), std::string::npos) << said;
  EXPECT_GE(std::count(said.begin(), said.end(), '\n'), 2);
}

TEST_F(CliHostile2, AreaOpeningSynopsisNamesAreaOnce) {
  const CliResult h = run("run area-opening --help");
  ASSERT_EQ(h.code, 0) << h.err;
  std::string line = h.out.substr(h.out.find("run area-opening"));
  line = line.substr(0, line.find("area opening of"));  // its synopsis, up to its summary line
  const auto first = line.find("--area");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(line.find("--area ", first + 1), std::string::npos) << line.substr(0, 300);
}

}  // namespace
}  // namespace repix::test
