#include "harness/figures.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "harness/ncu.hpp"

namespace repix::figures {

namespace fs = std::filesystem;

namespace {

bool g_enabled = true;

std::string package_dir() { return std::string(REPIX_SOURCE_DIR) + "/figures"; }

// The child sees the package first on its PYTHONPATH (this process's own PYTHONPATH after it).
void export_pythonpath() {
  static bool done = false;
  if (done) return;
  const char* old = std::getenv("PYTHONPATH");
  const std::string value = package_dir() + (old && *old ? std::string(":") + old : "");
  ::setenv("PYTHONPATH", value.c_str(), 1);
  done = true;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

}  // namespace

std::vector<std::string> python_candidates() {
  std::vector<std::string> found;
  const char* path = std::getenv("PATH");
  for (const std::string& dir : cli::split(path ? path : "", ':'))
    if (::access((dir + "/python3").c_str(), X_OK) == 0) found.push_back(dir + "/python3");
  if (::access("/usr/bin/python3", X_OK) == 0) found.push_back("/usr/bin/python3");
  return found;
}

std::string find_python(std::string* why) {
  static std::string found, reason;
  static bool looked = false;
  if (!looked) {
    looked = true;
    export_pythonpath();
    const std::vector<std::string> candidates = python_candidates();
    if (!fs::exists(package_dir() + "/repix_figures/__init__.py")) {
      reason = "the figures package is not at " + package_dir() + " (the sources this repix was built from)";
    } else if (candidates.empty()) {
      reason = "no python3 on PATH or at /usr/bin/python3";
    } else {
      std::vector<std::string> tried;
      for (const std::string& py : candidates) {
        if (std::find(tried.begin(), tried.end(), py) != tried.end()) continue;
        tried.push_back(py);
        std::string out;
        // --check: exit 0 when matplotlib imports (3 and its reason on stderr when not).
        if (ncu::spawn({py, "-m", "repix_figures", "--check"}, &out) == 0) {
          found = py;
          break;
        }
      }
      if (found.empty()) {
        std::string list;
        for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
        reason = "no python3 here can import matplotlib (tried " + list +
                 "; scripts/setup installs python3-matplotlib, or: python3 -m pip install matplotlib)";
      }
    }
  }
  if (why) *why = reason;
  return found;
}

std::vector<std::string> draw(const std::string& report_path, const std::string& out_dir, const std::string& stem,
                              bool required) {
  std::string why;
  const std::string py = find_python(&why);
  if (py.empty()) {
    if (required) throw Error("cannot draw figures: " + why);
    std::fprintf(stderr, "repix: figures skipped: %s\n", why.c_str());
    return {};
  }
  std::vector<std::string> argv = {py, "-m", "repix_figures", report_path, "--out", out_dir};
  if (!stem.empty()) argv.insert(argv.end(), {"--stem", stem});
  std::string out;
  const int rc = ncu::spawn(argv, &out);  // its errors go to our stderr as they come
  if (rc != 0) throw Error("drawing the figures of " + report_path + " failed (exit " + std::to_string(rc) + ")");
  return split_lines(out);
}

void draw_one(const std::string& report_path, const std::string& figure, const std::string& to) {
  std::string why;
  const std::string py = find_python(&why);
  if (py.empty()) throw Error("cannot draw " + to + ": " + why);
  std::string out;
  const int rc = ncu::spawn({py, "-m", "repix_figures", report_path, "--only", figure, "--to", to}, &out);
  if (rc != 0) throw Error("drawing " + to + " failed (exit " + std::to_string(rc) + ")");
}

void set_enabled(bool on) { g_enabled = on; }
bool enabled() { return g_enabled; }

void after_table(const std::string& json_path) {
  if (!g_enabled) return;
  try {
    const std::vector<std::string> written = draw(json_path, fs::path(json_path).parent_path().string(), "", false);
    if (!written.empty())
      std::fprintf(stderr, "repix: drew %zu figure files beside %s\n", written.size(), json_path.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "repix: figures of %s: %s\n", json_path.c_str(), e.what());
  }
}

int command(const cli::Args& a) {
  if (a.positional.size() != 1) throw cli::UsageError("plot takes one report (a repix JSON report)");
  a.only({"out"});
  const std::string report = a.positional[0];
  if (!fs::is_regular_file(report)) throw Error(report + ": no such report");
  {  // checked here, so that a report that is no JSON is this one line and not the drawing's too
    std::ifstream in(report, std::ios::binary);
    try {
      const nlohmann::json parsed = nlohmann::json::parse(in);
      (void)parsed;
    } catch (const nlohmann::json::exception& e) {
      throw Error(report + " is not a JSON report (" + e.what() + ")");
    }
  }
  const std::string out = a.get("out", fs::path(report).parent_path().string());
  const std::vector<std::string> written = draw(report, out.empty() ? "." : out, "", true);
  for (const auto& w : written) std::cout << w << "\n";
  if (written.empty()) std::fprintf(stderr, "repix plot: %s defines no figure\n", report.c_str());
  return 0;
}

}  // namespace repix::figures
