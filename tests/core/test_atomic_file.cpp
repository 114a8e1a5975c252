// The output mechanism itself (core/atomic_file.hpp, issue 12): exclusive, unpredictable
// temporaries in the destination's folder that never follow a planted link; special files
// written in place; OutputSet committing all outputs or none; temporaries removed when a signal
// ends the process; names as long as the file system allows.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;

namespace repix {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("repix-atomic-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void put(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  // The folder's entries, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  // Runs `child` in a forked process, which must end by signal `sig` with the folder left empty.
  template <class Child>
  void expect_killed_leaving_nothing(int sig, Child child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      child();
      ::_exit(0);  // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(entries().empty()) << "left behind: " << (entries().empty() ? "" : entries()[0]);
  }
  fs::path dir_;
};

// Item 2: the old name "<path>.tmp.<pid>" planted as a link to a victim is not written through,
// and while the output is open its temporary is one new regular file named ".repix-XXXXXX" in
// the destination's folder (not a link, not predictable from the pid).
TEST_F(AtomicFileTest, TemporaryIsExclusiveAndNeverFollowsAPlantedLink) {
  put(path("victim"), "precious");
  fs::create_symlink(path("victim"), path("o.csv.tmp." + std::to_string(::getpid())));
  const std::vector<std::string> before = entries();
  {
    AtomicFile f(path("o.csv"));
    f.write("new", 3);
    std::vector<std::string> now = entries();
    ASSERT_EQ(now.size(), before.size() + 1);
    std::string tmp;
    for (const auto& n : now)
      if (std::find(before.begin(), before.end(), n) == before.end()) tmp = n;
    EXPECT_EQ(tmp.rfind(".repix-", 0), 0u) << tmp;
    EXPECT_EQ(tmp.size(), 13u) << tmp;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path(tmp)))) << tmp;
    f.commit();
  }
  EXPECT_EQ(slurp(path("victim")), "precious");
  EXPECT_EQ(slurp(path("o.csv")), "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(path("o.csv.tmp." + std::to_string(::getpid())))));
  // Two temporaries at once get different names.
  AtomicFile a(path("a")), b(path("b"));
  std::vector<std::string> names;
  for (const auto& n : entries())
    if (n.rfind(".repix-", 0) == 0) names.push_back(n);
  EXPECT_EQ(names.size(), 2u);
}

// Item 3: an existing FIFO is written in place and stays what it was. (It stands for /dev/null and
// every device: the tests never write to the machine's devices, which a regression would replace
// when run as root.)
TEST_F(AtomicFileTest, SpecialFilesAreWrittenInPlace) {
  ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
  EXPECT_TRUE(is_special_file(path("pipe")));
  std::string got;
  std::thread reader([&] { got = slurp(path("pipe")); });
  write_file_atomic(path("pipe"), "through the pipe\n");
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(path("pipe"))));
  EXPECT_EQ(entries(), std::vector<std::string>{"pipe"});  // no temporary, no regular file beside it

  // A folder is refused, not replaced.
  fs::create_directory(path("folder"));
  EXPECT_THROW(AtomicFile f(path("folder")), Error);
  EXPECT_TRUE(fs::is_directory(path("folder")));
}

// Item 4: an OutputSet renames its outputs only on commit(); an exception before that (the second
// output failing) leaves every old file as it was and no temporary.
TEST_F(AtomicFileTest, OutputSetCommitsAllOrNone) {
  put(path("a.csv"), "old a");
  put(path("b.json"), "old b");
  try {
    OutputSet set;
    write_file_atomic(path("a.csv"), "new a");
    EXPECT_EQ(slurp(path("a.csv")), "old a");  // staged, not yet renamed
    write_file_atomic(path("missing/b.json"), "new b");  // throws: no such folder
    set.commit();
    FAIL() << "the second output should have failed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/b.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(path("a.csv")), "old a");
  EXPECT_EQ(slurp(path("b.json")), "old b");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.csv", "b.json"}));

  {
    OutputSet set;
    write_file_atomic(path("a.csv"), "new a");
    write_file_atomic(path("b.json"), "new b");
    EXPECT_EQ(slurp(path("b.json")), "old b");
    set.commit();
  }
  EXPECT_EQ(slurp(path("a.csv")), "new a");
  EXPECT_EQ(slurp(path("b.json")), "new b");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.csv", "b.json"}));
  EXPECT_EQ(OutputSet::current(), nullptr);

  // Two outputs of one set naming the same file: refused, nothing replaced.
  EXPECT_THROW(
      {
        OutputSet set;
        write_file_atomic(path("a.csv"), "x");
        write_file_atomic(path("a.csv"), "y");
        set.commit();
      },
      Error);
  EXPECT_EQ(slurp(path("a.csv")), "new a");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.csv", "b.json"}));
}

// Item 5: a signal ending the process while a temporary exists removes it, and the exit status is
// the signal's. Run in a child process, which raises the signal itself (deterministic).
TEST_F(AtomicFileTest, SignalRemovesLiveTemporariesAndKeepsItsStatus) {
  for (int sig : {SIGTERM, SIGINT}) {
    expect_killed_leaving_nothing(sig, [&] {
      AtomicFile staged(path("out.npy"));
      staged.write("partial", 7);
      OutputSet set;  // a finished output waiting for the others
      write_file_atomic(path("first.json"), "{}");
      RemoveOnSignal scratch(path("scratch.npy"));  // bench's with-io file
      put(path("scratch.npy"), "scratch");
      ::raise(sig);
    });
  }
}

// A signal between the temporary's creation and its registration with the handler (the first
// output of a process also installs the handler there) still removes it: CI once found
// ".repix-XXXXXX" left behind by a SIGTERM sent as soon as the file appeared. The hook raises the
// signal in exactly that window; the child must die of it with nothing left.
TEST_F(AtomicFileTest, SignalRightAfterTheTemporaryIsCreatedStillRemovesIt) {
  for (int sig : {SIGTERM, SIGINT}) {
    expect_killed_leaving_nothing(sig, [&] {
      static int raised;
      raised = sig;
      g_after_temporary_created_for_tests = [] { ::raise(raised); };
      AtomicFile staged(path("out.npy"));  // the signal is delivered in here
    });
  }
}

// Item 9: the temporary's name does not lengthen the destination's: a 250-character name works.
TEST_F(AtomicFileTest, LongFileNamesWork) {
  const std::string name = std::string(246, 'n') + ".csv";
  ASSERT_EQ(name.size(), 250u);
  write_file_atomic(path(name), "long");
  EXPECT_EQ(slurp(path(name)), "long");
  EXPECT_EQ(entries(), std::vector<std::string>{name});
}

// A replaced file keeps its permissions; a new one gets 0666 less the umask (not mkstemp's 0600).
TEST_F(AtomicFileTest, ModesArePreservedOrTheUsualOnes) {
  put(path("kept"), "old");
  fs::permissions(path("kept"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_file_atomic(path("kept"), "new");
  EXPECT_EQ(fs::status(path("kept")).permissions() & fs::perms::mask,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const mode_t mask = ::umask(022);
  ::umask(mask);
  write_file_atomic(path("fresh"), "new");
  EXPECT_EQ(static_cast<mode_t>(fs::status(path("fresh")).permissions() & fs::perms::mask), 0666 & ~mask);
}

}  // namespace
}  // namespace repix
