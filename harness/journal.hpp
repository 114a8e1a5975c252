// Measurements kept as they are taken. A long `repix bench --out R.json` or `repix table ID`
// appends every measurement, the moment it is complete, to an append-only JSON-lines file beside
// its output, <output>.partial.jsonl: the first line says which run it belongs to (command,
// options, tool, environment), every further line is one record. The run that wrote it removes
// it once its report or table is written; a run that fails or is killed at any point leaves it,
// and `repix bench --from` / `repix table ID --from` build the report or table from what it holds
// (journal-aware code in bench.cpp and tables_common.hpp).
//
// Line format: {"record": TYPE, "key": KEY, "elapsed_s": seconds since the journal was created,
// "data": ...}. Each line is written with one write()
// and synced to disk before the run goes on, so a kill can at most cut the last line short; a
// reader ignores (and counts) such a torn last line.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace repix::journal {

inline constexpr int kJournalVersion = 1;

// The journal of an output file: "<output>.partial.jsonl".
std::string path_for(const std::string& output);

class Writer {
 public:
  // Creates `path` (replacing a journal left there by an earlier run) with the header line
  // {"repix_journal": 1, "kind": kind, "id": id, ...header}. Throws repix::Error when the file
  // cannot be written.
  Writer(std::string path, const std::string& kind, const std::string& id, const nlohmann::json& header);
  // Closes the file and leaves it; before done() (a run ending early) it also says on stderr
  // where the measurements are and the command that builds the report or table from them.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // One record, on disk when this returns. Throws repix::Error when it cannot be written.
  void append(const std::string& type, const std::string& key, const nlohmann::json& data);
  // The run's final outputs are written: removes the journal.
  void done();
  const std::string& path() const { return path_; }

 private:
  void write_line(const nlohmann::json& line);
  std::string path_, kind_, id_;
  int fd_ = -1;
  long records_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct Record {
  std::string type, key;
  double elapsed_s = -1;  // when it was taken, in seconds from the start of the run; -1 unknown
  nlohmann::json data;
};

struct Journal {
  std::string path;
  std::string kind, id;   // from the header
  nlohmann::json header;  // the whole header line
  std::vector<Record> records;
  bool torn_tail = false;  // the last line was cut short (a kill while writing it) and is ignored

  // The last record of `type` with `key`; nullptr when there is none.
  const Record* find(const std::string& type, const std::string& key) const;
  std::vector<const Record*> all(const std::string& type) const;
};

// Reads a journal of `kind` ("bench" or "table"). Throws repix::Error naming the file for a
// missing or unreadable file, a first line that is not a repix journal header of that kind or
// version, or a damaged line other than the last.
Journal read(const std::string& path, const std::string& kind);

}  // namespace repix::journal
