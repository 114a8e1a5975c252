// What the paper-table tests (tests/harness/papers/) share: the committed
// transcriptions, a Meta as a table run would fill it, and a fresh scratch folder.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include "harness/tables_common.hpp"

namespace repix::test {

// results/paper/<name>.json.
inline nlohmann::json paper_json(const std::string& name) {
  std::ifstream in(std::string(REPIX_SOURCE_DIR) + "/results/paper/" + name + ".json");
  return nlohmann::json::parse(in);
}

inline tables::Meta table_meta(bool gpu, const std::string& sizes) {
  tables::Meta m;
  m.command = "test";
  m.tool = {{"git_sha", "0123456789abcdef"}};
  m.gpu = gpu ? "Test GPU" : "no GPU (test)";
  m.sizes = sizes;
  return m;
}

// <tmp>/repix-<prefix>-<name>, removed if it exists (not created).
inline std::filesystem::path fresh_dir(const std::string& prefix, const std::string& name) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() / ("repix-" + prefix + "-" + name);
  std::filesystem::remove_all(d);
  return d;
}

}  // namespace repix::test
