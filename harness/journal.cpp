#include "harness/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "harness/json_fields.hpp"
#include "harness/json_text.hpp"

namespace repix::journal {

using nlohmann::json;

std::string path_for(const std::string& output) { return output + ".partial.jsonl"; }

Writer::Writer(std::string path, const std::string& kind, const std::string& id, const json& header)
    : path_(std::move(path)), kind_(kind), id_(id) {
  // Owned by one run: opened without truncating, locked, and only then emptied, so that a second
  // run writing the same output (and so the same journal) is refused instead of truncating the
  // first one's measurements. The lock goes with the descriptor: a killed run leaves none.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot write the journal '" + path_ + "': " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error("another repix run is writing the same output right now (its journal '" + path_ +
                  "' is locked); give this run another output name");
    throw Error("cannot lock the journal '" + path_ + "': " + std::strerror(err));
  }
  if (::ftruncate(fd_, 0) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error("cannot write the journal '" + path_ + "': " + std::strerror(err));
  }
  json line = header.is_object() ? header : json::object();
  line["repix_journal"] = kJournalVersion;
  line["kind"] = kind;
  line["id"] = id;
  write_line(line);
}

Writer::~Writer() {
  if (fd_ < 0) return;
  ::close(fd_);
  // Not done(): the run is ending early (an exception unwinding, usually on its way to the
  // CLI's error line). Say where its measurements are and how to use them.
  const std::string rebuild = kind_ == "bench" ? "repix bench --from '" + path_ + "'"
                                                : "repix table " + id_ + " --from '" + path_ + "'";
  std::fprintf(stderr, "repix: the measurements taken so far are kept in %s; `%s` builds the %s from them\n",
               path_.c_str(), rebuild.c_str(), kind_ == "bench" ? "report" : "table");
}

void Writer::write_line(const json& line) {
  if (fd_ < 0) throw Error("internal: journal '" + path_ + "' written after done()");
  // json_text: a file name of any bytes in a message or a spec is kept exactly.
  const std::string text = json_text::dump(line) + "\n";
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write the journal '" + path_ + "': " + std::strerror(errno));
    off += static_cast<std::size_t>(n);
  }
  // On disk before the run goes on: the journal is what survives a crash of the machine too.
  if (::fsync(fd_) != 0 && errno != EINVAL)
    throw Error("cannot sync the journal '" + path_ + "': " + std::strerror(errno));
}

void Writer::append(const std::string& type, const std::string& key, const json& data) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  write_line({{"record", type}, {"key", key}, {"elapsed_s", elapsed}, {"data", data}});
  // The tests kill a run the way a time limit or the OOM killer would, after a chosen record:
  // REPIX_TEST_KILL_AFTER_RECORDS=N sends this process SIGKILL once N records are on disk (a test
  // hook, recorded in a report's env.test_hooks).
  static const long kill_after = [] {
    const char* v = std::getenv("REPIX_TEST_KILL_AFTER_RECORDS");
    return v ? std::atol(v) : 0L;
  }();
  if (kill_after > 0 && ++records_ >= kill_after) ::raise(SIGKILL);
}

void Writer::done() {
  std::remove(path_.c_str());  // while still locked: no other run takes it over in between
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

const Record* Journal::find(const std::string& type, const std::string& key) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->type == type && it->key == key) return &*it;
  return nullptr;
}

std::vector<const Record*> Journal::all(const std::string& type) const {
  std::vector<const Record*> out;
  for (const auto& r : records)
    if (r.type == type) out.push_back(&r);
  return out;
}

namespace {

// The first time in `data` that no measurement gives, as "path: value", or "": a number under a
// key ending in _ms, _us or _s (samples_ms arrays included) must be finite and within what a run
// can take (0 to 1e10 ms, 1e13 us, 1e7 s), or -1, the "not measured" of some counters.
std::string implausible_time(const json& data, const std::string& where) {
  auto limit_of = [](const std::string& key) -> double {
    auto ends = [&](const char* suffix) {
      const std::size_t n = std::strlen(suffix);
      return key.size() >= n && key.compare(key.size() - n, n, suffix) == 0;
    };
    if (ends("_ms")) return 1e10;
    if (ends("_us")) return 1e13;
    if (ends("_s")) return 1e7;
    return 0;  // not a time
  };
  auto bad = [](const json& v, double limit) {
    if (!v.is_number()) return false;  // null: a NaN written out; strings and the rest: not times
    const double x = v.get<double>();
    return !(x == -1 || (x >= 0 && x <= limit));
  };
  if (data.is_object()) {
    for (auto it = data.begin(); it != data.end(); ++it) {
      const std::string at = where.empty() ? it.key() : where + "." + it.key();
      const double limit = limit_of(it.key());
      if (limit > 0 && bad(it.value(), limit)) return at + " = " + it.value().dump();
      if (limit > 0 && it.value().is_array())
        for (std::size_t k = 0; k < it.value().size(); ++k)
          if (bad(it.value()[k], limit)) return at + "[" + std::to_string(k) + "] = " + it.value()[k].dump();
      if (const std::string inner = implausible_time(it.value(), at); !inner.empty()) return inner;
    }
  } else if (data.is_array()) {
    for (std::size_t k = 0; k < data.size(); ++k)
      if (const std::string inner = implausible_time(data[k], where + "[" + std::to_string(k) + "]"); !inner.empty())
        return inner;
  }
  return "";
}

}  // namespace

Journal read(const std::string& path, const std::string& kind) {
  using json_fields::field_or;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read the journal '" + path + "': " + std::strerror(errno));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  auto parse = [](const std::string& text, json& out) {
    try {
      out = json_text::decode(json::parse(text));
      return out.is_object();
    } catch (const std::exception&) {
      return false;
    }
  };
  Journal j;
  j.path = path;
  if (lines.empty() || !parse(lines[0], j.header) || !j.header.contains("repix_journal"))
    throw Error("'" + path + "' is not a repix journal (no header line)");
  if (field_or(j.header, "repix_journal", -1) != kJournalVersion)
    throw Error("'" + path + "' is a repix journal of another version (" + j.header["repix_journal"].dump() +
                "; this repix reads version " + std::to_string(kJournalVersion) + ")");
  j.kind = field_or(j.header, "kind", "");
  j.id = field_or(j.header, "id", "");
  if (j.kind != kind) throw Error("'" + path + "' is a journal of a " + j.kind + " run, not of a " + kind + " run");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    json rec;
    const bool ok = parse(lines[i], rec) && rec.contains("data") && field_or(rec, "record", "") != "";
    if (!ok) {
      // Only the last line can be cut short by a kill while it was being written.
      if (i + 1 == lines.size()) {
        j.torn_tail = true;
        break;
      }
      throw Error("'" + path + "' line " + std::to_string(i + 1) + " is damaged (not a journal record)");
    }
    const std::string key = field_or(rec, "key", "");
    if (const std::string bad = implausible_time(rec["data"], ""); !bad.empty())
      throw Error("'" + path + "' line " + std::to_string(i + 1) + " (" + key + ") holds a time no measurement gives: " +
                  bad + " (an edited or damaged journal)");
    j.records.push_back({field_or(rec, "record", ""), key, field_or(rec, "elapsed_s", -1.0), rec["data"]});
  }
  return j;
}

}  // namespace repix::journal
