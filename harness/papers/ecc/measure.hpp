// What the ECC paper's tables share while measuring (measure.cpp, which also holds the command):
// the paper's numbers, the CUDA context's one-time cost, a scratch folder, seeded specs. Each
// table's measurement is in table1.cpp, table2.cpp and table3.cpp; tables.cpp builds the tables.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/papers/ecc/tables.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables::ecc_tables {

// results/paper/ecc-tableN.json (or --paper).
nlohmann::json ecc_paper(int n, const std::string& override_path);

// Times the CUDA context creation (cudaFree(nullptr), the first call that needs the context)
// once per process; -1 without a GPU. Device discovery (gpu_available) happens before it.
double context_ms();

// A scratch folder for the tables' files, removed on scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// `spec` with its seed replaced.
std::string with_seed(const std::string& spec, int seed);
// A list of positive integers ("1,10,100"); a usage error otherwise.
std::vector<int> parse_counts(const std::string& s);

// Table 1's output name: ecc-table1, or ecc-table1-big for the streamed rows.
inline std::string table1_name(const std::string& sizes) { return sizes == "big" ? "ecc-table1-big" : "ecc-table1"; }

// Each table's measurement; the command (measure.cpp) has checked the options and started the
// session, whose meta, output folder and journal they use.
int table1(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session);  // table1.cpp
int table2(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session);  // table2.cpp
int table3(const cli::Args& a, Meta& meta, const std::string& out_dir, Session& session);  // table3.cpp

}  // namespace repix::tables::ecc_tables
