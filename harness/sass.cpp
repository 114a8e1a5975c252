#include "harness/sass.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/env.hpp"
#include "harness/family.hpp"
#include "harness/figures.hpp"
#include "harness/json_text.hpp"
#include "harness/ncu.hpp"

namespace repix::sass {

namespace {

constexpr const char* kFunctionMark = "Function : ";

// The loop-bound script beside the sources this binary was built from.
std::string loop_bound_script() {
  const std::string p = std::string(REPIX_SOURCE_DIR) + "/scripts/sass-loop-bound";
  if (!std::filesystem::exists(p))
    throw Error("--items-per-iteration needs " + p + " (the sources this repix was built from)");
  return p;
}

std::string find_python() {
  const std::vector<std::string> found = figures::python_candidates();
  if (found.empty()) throw Error("--items-per-iteration needs python3 (on PATH or at /usr/bin/python3)");
  return found.front();
}

std::string decimal(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::optional<double> number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stod(m[1].str());
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> functions(const std::string& sass_text, const std::string& regex) {
  std::regex want;
  try {
    want = std::regex(regex);
  } catch (const std::regex_error& e) {
    throw cli::UsageError("--sass '" + regex + "' is no regular expression: " + e.what());
  }
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t at = sass_text.find(kFunctionMark);
  while (at != std::string::npos) {
    const std::size_t next = sass_text.find(kFunctionMark, at + 1);
    const std::string body = sass_text.substr(at, next == std::string::npos ? std::string::npos : next - at);
    const std::size_t eol = body.find('\n');
    std::string name = body.substr(std::strlen(kFunctionMark), eol == std::string::npos ? std::string::npos
                                                                                       : eol - std::strlen(kFunctionMark));
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    // cuobjdump prints "Function : " after a newline and indentation; keep that form for the script.
    // A build for several architectures holds a kernel once each: the first is kept.
    const bool seen = std::any_of(out.begin(), out.end(), [&](const auto& f) { return f.first == name; });
    if (!seen && std::regex_search(name, want)) out.emplace_back(name, "\n\t\t" + body);
    at = next;
  }
  return out;
}

nlohmann::json parse_loop_bound(const std::string& text) {
  nlohmann::json j = {{"text", text}};
  std::smatch m;
  if (std::regex_search(text, m, std::regex(R"(function: (\S+))"))) j["function"] = m[1].str();
  if (std::regex_search(text, m, std::regex(R"(loop: (\S+), (\d+) instructions)"))) {
    j["loop"] = m[1].str();
    j["loop_instructions"] = std::stoi(m[2].str());
  }
  for (const char* path : {"shortest", "longest", "common"}) {
    if (auto n = number_after(text, std::string("per iteration:.*\\b") + path + " (\\d+)"))
      j["warp_instructions_per_iteration"][path] = *n;
    if (auto g = number_after(text, std::string("issue bound \\(") + path + " path\\): ([0-9.]+) G items/s"))
      j["issue_bound_gitems_per_s"][path] = *g;
  }
  return j;
}

nlohmann::json loop_bound(const std::string& sass_file, const std::string& function, double items_per_iteration,
                          int sms, double ghz) {
  std::string out;
  const std::vector<std::string> cmd = {find_python(), loop_bound_script(), sass_file, function,
                                        "--items-per-iteration", decimal(items_per_iteration),
                                        "--sms", std::to_string(sms), "--ghz", decimal(ghz)};
  const int rc = ncu::spawn(cmd, &out);
  if (rc != 0) throw Error("scripts/sass-loop-bound failed on " + function + " (exit " + std::to_string(rc) + ")");
  return parse_loop_bound(out);
}

std::string report_stem(const std::string& family) { return family + "-sass"; }

int command(const cli::Args& a) {
  if (a.positional.size() != 1) throw cli::UsageError("profile takes the family name");
  const family::Family& f = family::find(a.positional[0]);
  a.only({"sass", "items-per-iteration", "out"});
  const std::string regex = a.get("sass");
  if (regex.empty()) throw cli::UsageError("--sass needs a regular expression naming kernels");
  const double items = a.has("items-per-iteration") ? a.get_double("items-per-iteration", 0, 1, 1e9) : 0;
  const char* path = std::getenv("PATH");
  const char* home = std::getenv("CUDA_HOME");
  const std::string cuobjdump =
      ncu::find_cuda_tool("cuobjdump", "install the CUDA toolkit or put its cuobjdump on PATH", path ? path : "",
                          home ? home : "");
  std::string text;
  const std::vector<std::string> dump = {cuobjdump, "-sass", ncu::self_exe()};
  std::fprintf(stderr, "repix profile: %s\n", ncu::shell_line(dump).c_str());
  if (const int rc = ncu::spawn(dump, &text); rc != 0)
    throw Error("cuobjdump failed (exit " + std::to_string(rc) + ") on " + ncu::self_exe());
  const auto kernels = functions(text, regex);
  if (kernels.empty()) throw Error("no kernel of this build has a name matching '" + regex + "'");

  const std::string dir = a.get("out", ".");
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/" + report_stem(f.name());
  std::string sass_file;
  for (const auto& k : kernels) sass_file += k.second;

  // The issue bound at this GPU's SM count and peak clock; without a GPU, an H100 SXM's.
  const nlohmann::json gpu = env::capture_environment()["gpu"];
  const bool here = gpu.value("available", false) && gpu["sm_count"].is_number() && gpu["sm_clock_peak_khz"].is_number();
  const int sms = here ? gpu["sm_count"].get<int>() : 132;
  const double ghz = here ? gpu["sm_clock_peak_khz"].get<double>() / 1e6 : 1.98;

  nlohmann::json summary = {{"regex", regex}, {"sms", sms}, {"ghz", ghz},
                            {"clock_from", here ? "this GPU" : "no GPU here: an H100 SXM's 132 SMs at 1.98 GHz"},
                            {"kernels", nlohmann::json::array()}};
  std::ostringstream md;
  md << "### SASS of the kernels matching `" << regex << "`\n\n";
  {
    // The script reads a file: a scratch copy of the SASS, gone when this block ends; the outputs
    // appear together once all of them are written.
    struct Scratch {
      std::string path;
      ~Scratch() { std::remove(path.c_str()); }
    } scratch{dir + "/." + report_stem(f.name()) + ".sass.scratch-" + std::to_string(::getpid())};
    if (items > 0) {
      std::ofstream o(scratch.path, std::ios::binary);
      o << sass_file;
      if (!o.flush()) throw Error("cannot write " + scratch.path);
    }
    for (const auto& [name, body] : kernels) {
      nlohmann::json k = {{"name", name}};
      md << "- `" << name << "`";
      if (items > 0) {
        k["loop_bound"] = loop_bound(scratch.path, name, items, sms, ghz);
        md << "\n\n```\n" << k["loop_bound"]["text"].get<std::string>() << "```\n";
      }
      md << "\n";
      summary["kernels"].push_back(k);
    }
    if (items > 0)
      md << "\n(" << sms << " SMs at " << decimal(ghz) << " GHz, " << decimal(items) << " items a warp iteration; "
         << summary["clock_from"].get<std::string>() << ")\n";
    OutputSet set;
    write_file_atomic(base + ".sass", sass_file);
    write_file_atomic(base + ".summary.json", json_text::dump(summary, 1) + "\n");
    write_file_atomic(base + ".summary.md", md.str());
    set.commit();
  }
  std::cout << md.str();
  return 0;
}

}  // namespace repix::sass
