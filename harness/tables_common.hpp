// What every paper table (harness/papers/<paper>/) shares: the metadata recorded with
// each table, the paper transcriptions under results/paper/, number formatting and ratios that
// tolerate missing values, the markdown header and the side-by-side .md/.json outputs, and the
// Session that journals every measurement as it is taken and rebuilds a table from a journal.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "harness/args.hpp"
#include "harness/journal.hpp"

namespace repix::tables {

inline constexpr int kTableSchema = 1;  // of the <table>.json files (docs/report-format.md, "Table JSON")

// What every table's JSON carries besides its rows.
struct Meta {
  std::string command;
  nlohmann::json tool;   // env::tool_info()
  nlohmann::json env;    // env::capture_environment()
  std::string gpu;       // GPU name, or "no GPU: <reason>"
  std::string sizes;     // quick | small | default | paper | big | an explicit list
  // Null for a table measured by this run; for one built from a journal (`--from`):
  // {"rebuilt_from_journal", "rebuilt_by", "measurements", "missing": [...], "torn_last_line_ignored",
  //  "elapsed_s"}. header() and meta_json() show it.
  nlohmann::json provenance;
};

// The command line (or `fallback` when the CLI did not set one), tool, environment and GPU name.
Meta capture_meta(const std::string& fallback_command, const std::string& sizes);
bool no_gpu(const Meta& m);  // Meta::gpu says "no GPU ..."

// printf-formatted number.
std::string fmt(const char* f, double v);
// "-" for a missing (non-number) value, else printf-formatted.
std::string cell(const char* f, const nlohmann::json& v);
nlohmann::json num_or_null(double v, bool ok);
// a / b; null when either is missing or b is 0.
nlohmann::json ratio(const nlohmann::json& a, const nlohmann::json& b);

double median_of(std::vector<double> v);  // 0 for none
// A comma-separated list of integers in [lo, hi] for --<name> (--sizes: the tables' sizes); a
// usage error otherwise.
std::vector<std::int64_t> parse_list(const std::string& s, const std::string& name, std::int64_t lo, std::int64_t hi);
double mean_of(const std::vector<double>& v);
double ms_since(std::chrono::steady_clock::time_point t0);

// results/paper/<name>.json, or `override_path` when given: the paper's numbers for the table
// `table`. Throws repix::Error when unreadable, or when the file's "table" field does not name
// `table` (another table's transcription would fill the table with the wrong numbers).
nlohmann::json load_paper(const std::string& name, const std::string& override_path, const std::string& table);
// The first of paper["rows"] that `match` accepts; nullptr when none.
const nlohmann::json* paper_row(const nlohmann::json& paper, const std::function<bool(const nlohmann::json&)>& match);

// {"schema_version", "table", "command", "tool", "env", "gpu", "sizes", "paper": {source, hardware}}.
nlohmann::json meta_json(const std::string& table, const nlohmann::json& paper, const Meta& m);
// "# title", the paper's source and hardware, ours (GPU, commit, sizes).
std::string header(const std::string& title, const nlohmann::json& paper, const Meta& m);
// <out_dir>/<name>.md and .json, atomically; nothing when out_dir is empty.
void write_outputs(const std::string& out_dir, const std::string& name, const std::string& md, const nlohmann::json& j);

// One `repix table ID` run and where its measurements come from. Measuring, every measurement
// goes to the journal <out_dir>/<name>.partial.jsonl the moment it is taken (journal.hpp), and
// done() removes the journal once the table is written; a run that fails or is killed leaves it.
// With `--from JOURNAL` (replaying) nothing is measured: the journal's options, metadata and
// measurements build the table, and what the journal lacks is listed as missing.
class Session {
 public:
  // `id` is the table id; `given` the command line's options. With --from, only --out, --out-dir
  // and --paper may be given besides it (a usage error otherwise): the measurement's own options
  // come from the journal, which must be one of table `id`.
  Session(std::string id, const cli::Args& given);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool replaying() const { return replay_ != nullptr; }
  // The options that decide what is measured (the journal's when replaying) plus the output ones.
  const cli::Args& args() const { return args_; }
  // The run's metadata: captured now (capture_meta), or the journal's when replaying.
  Meta meta(const std::string& fallback_command, const std::string& sizes) const;
  // Where the outputs go by default: the journal's folder when replaying, else results/<machine>/<group>.
  std::string default_out_dir() const;
  // Opens the journal beside the outputs (measuring with a non-empty out_dir; else nothing).
  void start(const std::string& out_dir, const std::string& name, const Meta& meta);
  // The open journal (for a bench run inside the table), or nullptr.
  journal::Writer* writer() const { return writer_.get(); }
  // The journal being replayed, or nullptr.
  const journal::Journal* replay() const { return replay_.get(); }

  // The measurement `key`: measure() now, journalled as nlohmann::json(T); or, replaying, the
  // journal's record read back with get<T>() (std::nullopt when the journal lacks it: the key goes
  // to the missing list). A damaged record is a repix::Error naming the journal and the key.
  template <class T, class Measure>
  std::optional<T> take(const std::string& key, Measure measure);
  // Something the table expected that the journal does not hold (replaying).
  void note_missing(const std::string& what) { missing_.push_back(what); }
  // Seconds the run has taken: since this Session began, or, replaying, up to the journal's last
  // record (-1 when it has none).
  double wall_s() const;
  // Sets meta.provenance when replaying (call before building the table).
  void stamp(Meta& meta) const;
  // The table is written: removes the journal.
  void done();

 private:
  std::string id_;
  cli::Args args_;
  std::string from_;
  std::unique_ptr<journal::Journal> replay_;
  std::unique_ptr<journal::Writer> writer_;
  std::vector<std::string> missing_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

template <class T, class Measure>
std::optional<T> Session::take(const std::string& key, Measure measure) {
  if (replay_) {
    const journal::Record* r = replay_->find("measurement", key);
    if (!r) {
      missing_.push_back(key);
      return std::nullopt;
    }
    try {
      return r->data.get<T>();
    } catch (const std::exception& e) {
      throw Error("journal '" + replay_->path + "': the record '" + key + "' is damaged: " + e.what());
    }
  }
  T t = measure();
  if (writer_) writer_->append("measurement", key, nlohmann::json(t));
  return t;
}

}  // namespace repix::tables
