// What every paper table (tables_ecc.cpp, tables_iwpp.cpp) shares: the metadata recorded with
// each table, the paper transcriptions under results/paper/, number formatting and ratios that
// tolerate missing values, the markdown header and the side-by-side .md/.json outputs.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace repix::tables {

inline constexpr int kTableSchema = 1;  // of the <table>.json files (README "Paper tables")

// What every table's JSON carries besides its rows.
struct Meta {
  std::string command;
  nlohmann::json tool;   // env::tool_info()
  nlohmann::json env;    // env::capture_environment()
  std::string gpu;       // GPU name, or "no GPU: <reason>"
  std::string sizes;     // quick | small | default | paper | big | an explicit list
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
double mean_of(const std::vector<double>& v);
double ms_since(std::chrono::steady_clock::time_point t0);

// results/paper/<name>.json, or `override_path` when given. Throws repix::Error when unreadable.
nlohmann::json load_paper(const std::string& name, const std::string& override_path = "");
// The first of paper["rows"] that `match` accepts; nullptr when none.
const nlohmann::json* paper_row(const nlohmann::json& paper, const std::function<bool(const nlohmann::json&)>& match);

// {"schema_version", "table", "command", "tool", "env", "gpu", "sizes", "paper": {source, hardware}}.
nlohmann::json meta_json(const std::string& table, const nlohmann::json& paper, const Meta& m);
// "# title", the paper's source and hardware, ours (GPU, commit, sizes).
std::string header(const std::string& title, const nlohmann::json& paper, const Meta& m);
// <out_dir>/<name>.md and .json, atomically; nothing when out_dir is empty.
void write_outputs(const std::string& out_dir, const std::string& name, const std::string& md, const nlohmann::json& j);

}  // namespace repix::tables
