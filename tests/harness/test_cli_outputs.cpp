// The CLI's outputs under careless and hostile use (issue 12, items 2-5, 9, 11): planted links,
// special files, several outputs committed together, interrupts, long names, clashing outputs,
// standard output and extensions. Each test runs the binary; test names carry the item number.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "datasets/datasets.hpp"
#include "datasets/io.hpp"
#include "ecc/ecc.hpp"
#include "harness/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

using test::CliResult;

class CliOutputs : public test::CliTest {
 protected:
  void SetUp() override {
    test::CliTest::SetUp();
    if (IsSkipped()) return;
    img_ = datasets::generate(datasets::Spec::parse("uniform:40x30:levels=8:dtype=uint8:seed=3"));
    datasets::save(img_, path("in.npy"));
    mask_ = datasets::generate(datasets::Spec::parse("blobs:64x48:radius=6:fill=0.45:seed=2"));
    datasets::save(mask_, path("mask.npy"));
  }
  // A shell command run in the test's folder with $R the binary and TMPDIR the test's scratch
  // folder; returns the exit code (128 + N for a signal, as sh reports it).
  int sh(const std::string& cmd) const {
    const std::string full = "cd '" + dir_.string() + "' && R='" + cli_ + "' TMPDIR='" + tmp_.string() + "' sh -c '" +
                             cmd + "' >'" + (tmp_ / "sh.out").string() + "' 2>&1";
    const int status = std::system(full.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string csv_of_seq() const {
    const ecc::Curve c = ecc::run_seq(img_, {});
    ecc::write_csv(c, path("want.csv"));
    const std::string s = slurp(path("want.csv"));
    fs::remove(path("want.csv"));
    return s;
  }
  // Starts `repix ARGS` (the process itself, not a shell), in the test's folder, its stderr in
  // TMPDIR/start.err; with a file-size limit when `fsize` > 0 (SIGXFSZ ignored: writes fail).
  pid_t start(const std::string& args, long fsize = 0) const {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(dir_.c_str()) != 0) ::_exit(127);
      if (fsize > 0) {
        const struct rlimit lim = {static_cast<rlim_t>(fsize), static_cast<rlim_t>(fsize)};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        ::signal(SIGXFSZ, SIG_IGN);
      }
      const std::string cmd = "exec env TMPDIR='" + tmp_.string() + "' '" + cli_ + "' " + args + " >/dev/null 2>'" +
                              (tmp_ / "start.err").string() + "'";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }
  // Waits (up to a minute) for an entry of `folder` whose name starts with `prefix`.
  static bool appears(const fs::path& folder, const std::string& prefix) {
    for (int i = 0; i < 6000; ++i) {
      for (const auto& e : fs::directory_iterator(folder))
        if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  static std::vector<std::string> entries(const fs::path& folder) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(folder)) v.push_back(e.path().filename().string());
    return v;
  }
  HostImage img_, mask_;
};

// ---- item 2: temporaries exclusive, never through a planted link ---------------------------

TEST_F(CliOutputs, Item2PlantedSymlinkAtTheOldTemporaryNameIsNotFollowed) {
  std::ofstream(path("victim")) << "precious\n";
  // The old temporary was "<out>.tmp.<pid>": with exec, $$ is the pid repix runs under.
  ASSERT_EQ(sh("ln -s victim o.csv.tmp.$$ && exec \"$R\" run ecc --variant seq --input in.npy --output o.csv"), 0)
      << slurp((tmp_ / "sh.out").string());
  EXPECT_EQ(slurp(path("victim")), "precious\n");
  EXPECT_EQ(slurp(path("o.csv")), csv_of_seq());
  for (const auto& n : entries(dir_)) EXPECT_NE(n.rfind(".repix-", 0), 0u) << "left behind: " << n;
}

// ---- item 3: special files written in place -------------------------------------------------

// A FIFO stands for every special file (/dev/null as root was replaced by a regular file): the
// tests never write to the machine's devices, which a regression would replace when run as root.
TEST_F(CliOutputs, Item3FifoOutputsAreWrittenInPlace) {
  ASSERT_EQ(::mkfifo(path("curve.csv").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);  // no extension: it takes what is written
  ASSERT_EQ(sh("timeout 60 cat curve.csv > got.txt & \"$R\" run ecc --variant seq --input in.npy --output curve.csv; "
               "rc=$?; wait; exit $rc"),
            0)
      << slurp((tmp_ / "sh.out").string());
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(path("curve.csv"))));
  EXPECT_EQ(slurp(path("got.txt")), csv_of_seq());
  ASSERT_EQ(sh("timeout 60 cat pipe > got.npy & \"$R\" gen uniform:8x8:seed=1 -o pipe; rc=$?; wait; exit $rc"), 0)
      << slurp((tmp_ / "sh.out").string());
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(path("pipe"))));
  EXPECT_EQ(datasets::load(path("got.npy")).content_hash(),
            datasets::generate(datasets::Spec::parse("uniform:8x8:seed=1")).content_hash());
  // Two outputs on one special file are a clash like any other (item 11).
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("pipe") + " --json " +
                   path("pipe")),
               2, "name the same file");
  expect_only({"in.npy", "mask.npy", "curve.csv", "pipe", "got.txt", "got.npy"});
}

// ---- item 4: several outputs, all or none ------------------------------------------------------

TEST_F(CliOutputs, Item4AnUnwritableSecondOutputLeavesTheFirstOldFileAlone) {
  std::ofstream(path("j.npy")) << "old j";
  std::ofstream(path("k.csv")) << "old k";
  fs::create_directory(path("dir.json"));
  expect_error(run("run edt --variant seq-exact --input " + path("mask.npy") + " --output " + path("j.npy") +
                   " --sites /nonexistent/s.npy"),
               1, "/nonexistent/s.npy");
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("k.csv") +
                   " --json /nonexistent/k.json"),
               1, "/nonexistent/k.json");
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("k.csv") + " --json " +
                   path("dir.json")),
               1, "is a folder");
  expect_error(run("run reconstruct --variant seq --marker " + path("mask.npy") + " --mask " + path("mask.npy") +
                   " --output " + path("j.npy") + " --json /nonexistent/r.json"),
               1, "/nonexistent/r.json");
  EXPECT_EQ(slurp(path("j.npy")), "old j");
  EXPECT_EQ(slurp(path("k.csv")), "old k");
  expect_only({"in.npy", "mask.npy", "j.npy", "k.csv", "dir.json"});
}

// The paths pass the checks, but the second output fails while it is written (a file-size limit
// the distances fit under and the sites do not; SIGXFSZ ignored, so the write fails with EFBIG):
// the first, already written, must not replace its old file.
TEST_F(CliOutputs, Item4ASecondOutputFailingAfterTheChecksCommitsNothing) {
  const HostImage big = datasets::generate(datasets::Spec::parse("blobs:256x256:radius=8:fill=0.45:seed=1"));
  datasets::save(big, path("big.npy"));
  std::ofstream(path("j.npy")) << "old j";
  std::ofstream(path("s.npy")) << "old s";
  // distances: 256 KiB of float32, sites: 512 KiB of int64; the limit lies between.
  const pid_t pid = start("run edt --variant seq-exact --input big.npy --output j.npy --sites s.npy", 400 << 10);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string err = slurp((tmp_ / "start.err").string());
  EXPECT_NE(err.find("s.npy"), std::string::npos) << err;
  EXPECT_EQ(slurp(path("j.npy")), "old j");
  EXPECT_EQ(slurp(path("s.npy")), "old s");
  expect_only({"in.npy", "mask.npy", "big.npy", "j.npy", "s.npy"});
}

// ---- item 5: interrupts leave no temporaries ---------------------------------------------------

// The distances are written (a staged temporary beside the output) and the JSON then waits on a
// FIFO nobody reads: the signal arrives while an output is half committed.
TEST_F(CliOutputs, Item5SigtermOrSigintWhileWritingLeavesNoTemporary) {
  ASSERT_EQ(::mkfifo(path("stats.json").c_str(), 0600), 0);
  for (int sig : {SIGTERM, SIGINT}) {
    const pid_t pid = start("run edt --variant seq-exact --input mask.npy --output d.npy --json stats.json");
    ASSERT_GT(pid, 0);
    const bool staged = appears(dir_, ".repix-");
    ::kill(pid, staged ? sig : SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(staged) << "no temporary appeared";
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), sig);  // the signal's own status, not a normal exit
    expect_only({"in.npy", "mask.npy", "stats.json"});
  }
}

TEST_F(CliOutputs, Item5KilledBenchWithIoLeavesNoTemporaryNpy) {
  const pid_t pid = start("bench --family ecc --variants seq --dataset uniform:512x512:levels=64:dtype=uint8:seed=1 "
                          "--scopes with-io --cpu-samples 100000 --warmup 0");
  ASSERT_GT(pid, 0);
  const bool written = appears(tmp_, "repix-with-io-");
  ::kill(pid, written ? SIGTERM : SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(written) << "the with-io file never appeared in TMPDIR";
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  for (const auto& n : entries(tmp_))
    if (n != "start.err") ADD_FAILURE() << "left in TMPDIR: " << n;
}

// ---- item 9: long names ---------------------------------------------------------------------------

TEST_F(CliOutputs, Item9A250CharacterOutputNameWorks) {
  const std::string csv = std::string(246, 'c') + ".csv", npy = std::string(246, 'n') + ".npy";
  const CliResult r = run("run ecc --variant seq --input " + path("in.npy") + " --output " + path(csv));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(path(csv)), csv_of_seq());
  const CliResult g = run("gen uniform:8x8:seed=1 -o " + path(npy));
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(datasets::load(path(npy)).content_hash(),
            datasets::generate(datasets::Spec::parse("uniform:8x8:seed=1")).content_hash());
  expect_only({"in.npy", "mask.npy", csv, npy});
}

// ---- item 11: clashing outputs, standard output, extensions --------------------------------------

TEST_F(CliOutputs, Item11ClashingOutputsAndOutputsOverInputsAreUsageErrors) {
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("f.csv") + " --json " + path("f.csv")),
               2, "--output and --json name the same file");
  expect_error(run("run edt --input " + path("mask.npy") + " --output " + path("s.npy") + " --sites " +
                   path("./s.npy")),
               2, "--output and --sites name the same file");
  // The input itself, by its name, another spelling, a link, or as a file: spec.
  fs::create_symlink(path("mask.npy"), path("link.npy"));
  for (const std::string& out : {path("mask.npy"), dir_.string() + "/./mask.npy", path("link.npy")})
    expect_error(run("run edt --input " + path("mask.npy") + " --output " + out), 2, "is the input --input");
  expect_error(run("run reconstruct --marker " + path("mask.npy") + " --mask file:" + path("in.npy") + " --output " +
                   path("in.npy")),
               2, "is the input --mask");
  EXPECT_EQ(datasets::load(path("mask.npy")).content_hash(), mask_.content_hash());
  EXPECT_EQ(datasets::load(path("in.npy")).content_hash(), img_.content_hash());
  expect_only({"in.npy", "mask.npy", "link.npy"});
}

TEST_F(CliOutputs, Item11ExtensionsMustMatchWhatIsWritten) {
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("x.npy")), 2, "written as CSV");
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --json " + path("x.csv")), 2, ".json");
  expect_error(run("run edt --input " + path("mask.npy") + " --output " + path("d.csv")), 2, ".npy");
  expect_error(run("run edt --input " + path("mask.npy") + " --sites " + path("s.raw")), 2, "int64 .npy");
  expect_error(run("gen uniform:8x8 -o " + path("g.csv")), 2, ".npy");
  expect_only({"in.npy", "mask.npy"});
}

TEST_F(CliOutputs, Item11DashMeansStandardOutput) {
  const CliResult r = run("run ecc --variant seq --input " + path("in.npy") + " --output -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, csv_of_seq());
  // Binary .npy to standard output (redirected here to a file): a valid array.
  const CliResult e = run("run edt --variant seq-exact --input " + path("mask.npy") + " --output -");
  ASSERT_EQ(e.code, 0) << e.err;
  std::ofstream(path("d.npy"), std::ios::binary) << e.out;
  const HostImage d = datasets::load(path("d.npy"));
  EXPECT_EQ(d.shape(), mask_.shape());
  EXPECT_EQ(d.dtype(), DType::f32);
  fs::remove(path("d.npy"));
  const CliResult g = run("gen uniform:8x8:seed=1 -o -");
  ASSERT_EQ(g.code, 0) << g.err;
  EXPECT_EQ(g.out.rfind("\x93NUMPY", 0), 0u);
  expect_error(run("run ecc --variant seq --input " + path("in.npy") + " --output - --json -"), 2,
               "name the same file '-'");
  // bench prints its summary there: its report cannot go to standard output too.
  expect_error(run("bench --family ecc --variants seq --dataset uniform:8x8 --out -"), 2, "give --out a file name");
  expect_only({"in.npy", "mask.npy"});  // no file named "-"
}

// ---- item 12 (last part): fsync before the rename, and of the folder after it ----------------
// Observed with strace where it is installed and may trace (skipped otherwise: nothing else can
// see an fsync from outside).
TEST_F(CliOutputs, Item12FileFsyncedBeforeTheRenameAndFolderAfter) {
  const std::string trace = (tmp_ / "trace.txt").string();
  if (std::system(("strace -o /dev/null true >/dev/null 2>&1")) != 0) GTEST_SKIP() << "strace not installed or may not trace here";
  ASSERT_EQ(sh("strace -f -o " + trace + " -e trace=openat,fsync,rename,renameat,renameat2 \"$R\" run ecc --variant seq "
               "--input in.npy --output o.csv"),
            0)
      << slurp((tmp_ / "sh.out").string());
  std::vector<std::string> lines;
  {
    std::ifstream in(trace);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  // The fd a line's call returned ("... = 3"), or -1.
  auto fd_of = [](const std::string& l) {
    const auto eq = l.rfind("= ");
    return eq == std::string::npos ? -1 : std::atoi(l.c_str() + eq + 2);
  };
  std::size_t opened = lines.size(), synced = lines.size(), renamed = lines.size(), folder = lines.size(),
              folder_synced = lines.size();
  int tmp_fd = -1, folder_fd = -1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (opened == lines.size() && l.find("openat(") != std::string::npos && l.find("/.repix-") != std::string::npos &&
        l.find("O_EXCL") != std::string::npos) {
      opened = i;
      tmp_fd = fd_of(l);
    } else if (opened < i && synced == lines.size() && l.find("fsync(" + std::to_string(tmp_fd) + ")") != std::string::npos) {
      synced = i;
    } else if (l.find("rename") != std::string::npos && l.find("o.csv") != std::string::npos) {
      renamed = i;
    } else if (renamed < i && l.find("O_DIRECTORY") != std::string::npos) {
      folder = i;
      folder_fd = fd_of(l);
    } else if (folder < i && l.find("fsync(" + std::to_string(folder_fd) + ")") != std::string::npos) {
      folder_synced = i;
    }
  }
  EXPECT_LT(opened, synced);
  EXPECT_LT(synced, renamed) << "the temporary was not fsynced before the rename";
  EXPECT_LT(renamed, folder_synced) << "the folder was not fsynced after the rename";
  EXPECT_EQ(slurp(path("o.csv")), csv_of_seq());
}

}  // namespace
}  // namespace repix

namespace repix {
namespace {

// A run with none of its outputs named writes its --json record to standard output (the README's
// first `repix run`), for a family read from a dataset spec as for one read from files; and it
// writes no file.
TEST_F(CliOutputs, RunWithoutOutputsPrintsItsJsonRecord) {
  CliResult r = run("run ecc --variant seq --input uniform:40x30:levels=8:dtype=uint8:seed=3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"family\": \"ecc\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"variant\": \"seq\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ecc\""), std::string::npos) << r.out;
  r = run("run reconstruct --variant seq --marker " + path("mask.npy") + " --mask " + path("mask.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << r.out;
  r = run("run edt --variant seq-exact --input " + path("mask.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << r.out;
  r = run("run area-opening --variant seq --area 5 --input " + path("in.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"area\": 5"), std::string::npos) << r.out;
  expect_only({"in.npy", "mask.npy", "stdout.txt", "stderr.txt"});
  // One output named: nothing on standard output.
  r = run("run ecc --variant seq --input " + path("in.npy") + " --output " + path("o.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace repix
