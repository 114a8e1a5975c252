// Running the `repix` binary in tests (test_cli.cpp, test_journal.cpp, the tables' CLI tests): its
// path comes from REPIX_CLI (set by CTest; the tests skip without it), each test gets a fresh
// folder, and a run returns the exit code (or the signal that ended it) with stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

namespace repix::test {

struct CliResult {
  int code = -1;    // the exit code; -1 when a signal ended the process
  int signal = 0;   // the signal that ended it, or 0
  std::string err;  // stderr
  std::string out;  // stdout
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* cli = std::getenv("REPIX_CLI");
    if (!cli || !std::filesystem::exists(cli)) GTEST_SKIP() << "REPIX_CLI not set (run through ctest)";
    cli_ = cli;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("repix-cli-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // The CLI's own scratch folders (TMPDIR) go beside the test's folder, so that a run the test
    // kills on purpose leaves nothing in the machine's /tmp; expect_only() does not see them.
    tmp_ = dir_.string() + "-tmp";
    std::filesystem::remove_all(tmp_);
    std::filesystem::create_directories(tmp_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_);
  }
  // `repix ARGS`, run by the shell (ARGS is shell text), with `env` ("NAME=value ...") in front.
  CliResult run(const std::string& args, const std::string& env = "") const {
    const std::string out = (dir_ / "stdout.txt").string(), err = (dir_ / "stderr.txt").string();
    const std::string cmd = "TMPDIR='" + tmp_.string() + "' " + env + (env.empty() ? "" : " ") + "'" + cli_ + "' " +
                            args + " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    CliResult r;
    // system() runs the command through sh, which reports a child killed by signal N as 128 + N.
    if (WIFEXITED(status)) {
      r.code = WEXITSTATUS(status);
      if (r.code > 128) {
        r.signal = r.code - 128;
        r.code = -1;
      }
    } else if (WIFSIGNALED(status)) {
      r.signal = WTERMSIG(status);
    }
    r.out = slurp(out);
    r.err = slurp(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // No file other than the named ones is left in the folder.
  void expect_only(std::initializer_list<std::string> names) const {
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << "left behind: " << n;
    }
  }
  static int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
  // A failed run: exit `code`, one line on stderr that holds `needle`, no signal.
  void expect_error(const CliResult& r, int code, const std::string& needle) const {
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "'" << needle << "' not in: " << r.err;
  }
  std::string cli_;
  std::filesystem::path dir_;
  std::filesystem::path tmp_;
};

}  // namespace repix::test
