#include "harness/tables_common.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/env.hpp"
#include "harness/figures.hpp"
#include "harness/json_fields.hpp"
#include "harness/json_text.hpp"
#include "harness/outputs.hpp"
#include "harness/report.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

using json_fields::field_or;
using json_fields::path_or;

using nlohmann::json;

Meta capture_meta(const std::string& fallback_command, const std::string& sizes) {
  Meta meta;
  meta.sizes = sizes;
  meta.command = command_line().empty() ? fallback_command : command_line();
  meta.tool = env::tool_info();
  meta.env = env::capture_environment();
  meta.gpu = gpu_available() ? path_or(meta.env, {"gpu", "name"}, std::string("GPU"))
                             : "no GPU (" + gpu_unavailable_reason() + ")";
  return meta;
}

bool no_gpu(const Meta& m) { return m.gpu.rfind("no GPU", 0) == 0; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string cell(const char* f, const json& v) { return v.is_number() ? fmt(f, v.get<double>()) : "-"; }

json num_or_null(double v, bool ok) { return ok ? json(v) : json(); }

json ratio(const json& a, const json& b) {
  if (!a.is_number() || !b.is_number() || b.get<double>() == 0) return json();
  return a.get<double>() / b.get<double>();
}

std::vector<std::int64_t> parse_list(const std::string& s, const std::string& name, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (const auto& x : cli::split(s, ',')) {
    std::size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(x, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != x.size() || n < lo || n > hi) used = 0;
    if (used == 0) break;
    v.push_back(n);
  }
  if (v.empty() || v.size() != cli::split(s, ',').size())
    throw cli::UsageError("--" + name + " takes a list of integers from " + std::to_string(lo) + " to " +
                          std::to_string(hi) + (name == "sizes" ? " (or small, paper)" : "") + ", got '" + s + "'");
  return v;
}

double median_of(std::vector<double> v) { return v.empty() ? 0 : report::summarize(std::move(v)).median; }

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

json load_paper(const std::string& name, const std::string& override_path, const std::string& table) {
  const std::string path =
      !override_path.empty() ? override_path : std::string(REPIX_SOURCE_DIR) + "/results/paper/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw Error("cannot read the paper's table '" + path + "' (give --paper PATH)");
  json paper;
  try {
    paper = json_text::decode(json::parse(in));
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw Error("'" + path + "' is not valid JSON: " + what);
  }
  const std::string owner = field_or(paper, "table", "");
  if (owner.empty())
    throw Error("'" + path + "' does not say which table it transcribes (no \"table\" field; results/paper/" + name +
                ".json has \"table\": \"" + table + "\")");
  if (owner != table)
    throw Error("'" + path + "' transcribes table " + owner + ", not " + table + " (give " + table +
                "'s --paper file, or none for results/paper/" + name + ".json)");
  return paper;
}

const json* paper_row(const json& paper, const std::function<bool(const json&)>& match) {
  if (!paper.contains("rows") || !paper["rows"].is_array()) return nullptr;
  for (const auto& row : paper["rows"])
    if (match(row)) return &row;
  return nullptr;
}

json meta_json(const std::string& table, const json& paper, const Meta& m) {
  json j = {{"schema_version", kTableSchema}, {"table", table}, {"command", m.command}, {"tool", m.tool},
            {"env", m.env}, {"gpu", m.gpu}, {"sizes", m.sizes},
            {"paper", {{"source", field_or(paper, "source", "")}, {"hardware", field_or(paper, "hardware", json())}}}};
  if (!m.provenance.is_null()) j["provenance"] = m.provenance;
  return j;
}

std::string header(const std::string& title, const json& paper, const Meta& m) {
  std::ostringstream o;
  o << "# " << title << "\n\n"
    << "Paper: " << field_or(paper, "source", std::string("?")) << " ("
    << path_or(paper, {"hardware", "gpu"}, std::string("?")) << "; CPU "
    << path_or(paper, {"hardware", "cpu"}, std::string("?")) << ").\n"
    << "Ours: " << m.gpu << "; repix " << env::describe_source(m.tool) << "; sizes `" << m.sizes << "`.\n\n";
  if (!m.provenance.is_null()) {
    const json missing = field_or(m.provenance, "missing", json::array());
    o << "**Built from the journal `" << field_or(m.provenance, "rebuilt_from_journal", "?")
      << "` of a run that did not finish** (" << field_or(m.provenance, "measurements", 0)
      << (field_or(m.provenance, "measurements", 0) == 1 ? " measurement" : " measurements") << ", taken in " << fmt("%.1f", field_or(m.provenance, "elapsed_s", -1.0)) << " s)";
    if (missing.empty()) {
      o << "; it holds every measurement of the table.\n\n";
    } else {
      o << "; not in it (shown as missing): ";
      const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
      for (std::size_t i = 0; i < shown; ++i) o << (i ? ", " : "") << "`" << missing[i].get<std::string>() << "`";
      if (missing.size() > shown) o << " and " << missing.size() - shown << " more (all in the JSON's provenance)";
      o << ".\n\n";
    }
  }
  return o.str();
}

void write_outputs(const std::string& out_dir, const std::string& name, const std::string& md, const json& j) {
  if (out_dir.empty()) return;
  cli::make_output_folder(out_dir, "out-dir");
  OutputSet both;  // the markdown and the JSON replace their old versions together
  write_file_atomic(out_dir + "/" + name + ".md", md);
  write_file_atomic(out_dir + "/" + name + ".json", json_text::dump(j, 1) + "\n");
  both.commit();
  std::fprintf(stderr, "repix table: wrote %s/%s.md and %s.json\n", out_dir.c_str(), name.c_str(), name.c_str());
  figures::after_table(out_dir + "/" + name + ".json");
}

// ---- Session ---------------------------------------------------------------------------------

namespace {
// Options that name outputs or inputs of the table itself, not what it measures: taken from the
// command line also when replaying, never stored in or read from a journal.
bool output_option(const std::string& k) { return k == "out" || k == "out-dir" || k == "paper" || k == "from"; }
}  // namespace

Session::Session(std::string id, const cli::Args& given) : id_(std::move(id)), args_(given) {
  if (!given.has("from")) return;
  from_ = given.get("from");
  for (const auto& [k, v] : given.options)
    if (!output_option(k))
      throw cli::UsageError("--" + k + " with --from: the measurement's options come from the journal (only --out, "
                            "--out-dir and --paper may be given)");
  replay_ = std::make_unique<journal::Journal>(journal::read(from_, "table"));
  if (replay_->id != id_)
    throw Error("'" + from_ + "' is the journal of table " + (replay_->id.empty() ? "?" : replay_->id) + ", not of " + id_);
  cli::Args a;
  for (const auto& kv : field_or(replay_->header, "args", json::array())) {
    if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string() || !kv[1].is_string())
      throw Error("journal '" + from_ + "': its header's options are damaged");
    if (!output_option(kv[0].get<std::string>())) a.options.emplace(kv[0].get<std::string>(), kv[1].get<std::string>());
  }
  for (const auto& [k, v] : given.options)
    if (k != "from") a.options.emplace(k, v);
  args_ = std::move(a);
}

Session::~Session() = default;

Meta Session::meta(const std::string& fallback_command, const std::string& sizes) const {
  if (!replay_) return capture_meta(fallback_command, sizes);
  const json& h = replay_->header;
  Meta m;
  m.command = field_or(h, "command", "");
  m.tool = field_or(h, "tool", json::object());
  m.env = field_or(h, "env", json::object());
  m.gpu = field_or(h, "gpu", "?");
  m.sizes = field_or(h, "sizes", sizes);
  return m;
}

std::string Session::default_out_dir() const {
  if (!replay_) return "results/" + env::machine_slug() + "/" + find(id_).group;
  const std::string dir = std::filesystem::path(from_).parent_path().string();
  return dir.empty() ? "." : dir;
}

void Session::start(const std::string& out_dir, const std::string& name, const Meta& meta) {
  if (replay_ || out_dir.empty()) return;
  cli::make_output_folder(out_dir, "out-dir");
  json args = json::array();
  for (const auto& [k, v] : args_.options)
    if (!output_option(k)) args.push_back({k, v});
  writer_ = std::make_unique<journal::Writer>(
      journal::path_for(out_dir + "/" + name), "table", id_,
      json{{"command", meta.command}, {"tool", meta.tool}, {"env", meta.env}, {"gpu", meta.gpu},
           {"sizes", meta.sizes}, {"args", args}});
}

double Session::wall_s() const {
  if (!replay_) return ms_since(t0_) / 1e3;
  return replay_->records.empty() ? -1.0 : replay_->records.back().elapsed_s;
}

void Session::stamp(Meta& meta) const {
  if (!replay_) return;
  meta.provenance = {{"rebuilt_from_journal", from_},
                     {"rebuilt_by", command_line()},
                     {"measurements", replay_->all("measurement").size() + replay_->all("result").size()},
                     {"missing", missing_},
                     {"torn_last_line_ignored", replay_->torn_tail},
                     {"elapsed_s", wall_s()}};
}

void Session::done() {
  if (writer_) writer_->done();
}

}  // namespace repix::tables
