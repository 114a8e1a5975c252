#include "harness/tables_common.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "harness/env.hpp"
#include "harness/report.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

using nlohmann::json;

Meta capture_meta(const std::string& fallback_command, const std::string& sizes) {
  Meta meta;
  meta.sizes = sizes;
  meta.command = command_line().empty() ? fallback_command : command_line();
  meta.tool = env::tool_info();
  meta.env = env::capture_environment();
  meta.gpu = gpu_available() ? meta.env.value("/gpu/name"_json_pointer, std::string("GPU"))
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

double median_of(std::vector<double> v) { return v.empty() ? 0 : report::summarize(std::move(v)).median; }

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

json load_paper(const std::string& name, const std::string& override_path) {
  const std::string path =
      !override_path.empty() ? override_path : std::string(REPIX_SOURCE_DIR) + "/results/paper/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw Error("cannot read the paper's table '" + path + "' (give --paper PATH)");
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    throw Error("'" + path + "' is not valid JSON: " + e.what());
  }
}

const json* paper_row(const json& paper, const std::function<bool(const json&)>& match) {
  if (!paper.contains("rows") || !paper["rows"].is_array()) return nullptr;
  for (const auto& row : paper["rows"])
    if (match(row)) return &row;
  return nullptr;
}

json meta_json(const std::string& table, const json& paper, const Meta& m) {
  return {{"schema_version", kTableSchema}, {"table", table}, {"command", m.command}, {"tool", m.tool},
          {"env", m.env}, {"gpu", m.gpu}, {"sizes", m.sizes},
          {"paper", {{"source", paper.value("source", "")}, {"hardware", paper.value("hardware", json())}}}};
}

std::string header(const std::string& title, const json& paper, const Meta& m) {
  std::ostringstream o;
  o << "# " << title << "\n\n"
    << "Paper: " << paper.value("source", std::string("?")) << " ("
    << paper.value("/hardware/gpu"_json_pointer, std::string("?")) << "; CPU "
    << paper.value("/hardware/cpu"_json_pointer, std::string("?")) << ").\n"
    << "Ours: " << m.gpu << "; repix " << m.tool.value("git_sha", std::string("?")).substr(0, 12)
    << (m.tool.value("git_dirty", false) ? " (dirty)" : "") << "; sizes `" << m.sizes << "`.\n\n";
  return o.str();
}

void write_outputs(const std::string& out_dir, const std::string& name, const std::string& md, const json& j) {
  if (out_dir.empty()) return;
  std::filesystem::create_directories(out_dir);
  write_file_atomic(out_dir + "/" + name + ".md", md);
  write_file_atomic(out_dir + "/" + name + ".json", j.dump(1) + "\n");
}

}  // namespace repix::tables
