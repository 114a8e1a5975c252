// Output files that are never half-written, never damage what they replace, and are never
// written through a link someone planted (issue 12):
//
// - A regular file (or a name that does not exist yet) is written to a temporary created
//   exclusively (mkstemp: O_CREAT|O_EXCL, a random name ".repix-XXXXXX" that no symlink can
//   pre-empt, short enough for any valid file name) in the destination's own folder, fsynced,
//   then renamed over the destination; the folder is fsynced after the rename.
// - An existing special file (/dev/null, a FIFO, a character device) is written in place, never
//   replaced by a regular file. "-" is standard output.
// - A failure, an exception unwinding past an uncommitted AtomicFile, or SIGINT/SIGTERM/SIGHUP/SIGPIPE
//   (the signal handler below) removes the temporary.
// - While an OutputSet is alive, commit() only stages the finished temporary; the set renames
//   all of them once every output of the command has been written (OutputSet::commit), and
//   removes them all otherwise: a run with several outputs leaves all or none.
#pragma once
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace repix {

// Registers a path to be unlinked if SIGINT, SIGTERM, SIGHUP or SIGPIPE ends the process (the handler
// unlinks every registered path, async-signal-safely, then re-raises the signal so that the exit
// status is the signal's). Destruction only unregisters; removing the file is the owner's job.
// Signals the process ignores (nohup) stay ignored.
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  int slot_ = -1;  // -1: the registry was full (the file is still removed on every normal path)
};

// Tests: called right after AtomicFile has created its temporary, before the signal handler knows
// it (a signal raised here must still remove it). nullptr in every real run.
inline void (*g_after_temporary_created_for_tests)() = nullptr;

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws repix::Error naming `path` when it cannot be written
  ~AtomicFile();                          // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() const { return fp_; }
  // The temporary being written ("" for a special file written in place or standard output):
  // other processes may write into it by name before commit() (the ranks of a distributed run).
  const std::string& temporary() const { return tmp_; }
  void write(const void* data, std::size_t bytes);
  // Flush and fsync; then rename over `path` (and fsync its folder), or hand the temporary to the
  // current OutputSet. Throws repix::Error on any failure (the temporary is removed).
  void commit();

 private:
  enum class Kind { staged, in_place, standard_output };
  std::string path_, tmp_;
  std::FILE* fp_ = nullptr;
  Kind kind_ = Kind::staged;
  std::unique_ptr<RemoveOnSignal> guard_;
  bool committed_ = false;
};

// All outputs of one command, committed together. While alive it is the current set: every
// AtomicFile committed meanwhile is staged here instead of renamed. commit() renames them all, in
// the order they were written; destruction without commit() removes them all. Sets nest (the
// innermost is current).
class OutputSet {
 public:
  OutputSet();
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  void commit();
  static OutputSet* current();

 private:
  friend class AtomicFile;
  struct Staged {
    std::string path, tmp;
    std::unique_ptr<RemoveOnSignal> guard;
  };
  void stage(const std::string& path, const std::string& tmp, std::unique_ptr<RemoveOnSignal> guard);
  std::vector<Staged> staged_;
  OutputSet* previous_ = nullptr;
};

// Whole-string convenience.
void write_file_atomic(const std::string& path, const std::string& content);

// True when `path` names an existing file that is not a regular file or a folder (a device, a
// FIFO, a socket), following links: such outputs are written in place.
bool is_special_file(const std::string& path);

}  // namespace repix
