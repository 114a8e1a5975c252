// `repix table ID`: tables regenerated from measurements, side by side with the papers' numbers
// where they exist (results/paper/). Each writes markdown and JSON under an output folder.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/report.hpp"

namespace repix::tables {

struct TableInfo {
  std::string id;
  std::string description;
  std::string usage;                            // options after `repix table <id>`
  std::function<int(const cli::Args&)> run;     // `repix table <id> ...`; returns the exit code
};
// Every table, one line each in tables.cpp; the tables themselves live in tables_<family>.cpp.
const std::vector<TableInfo>& all();
const TableInfo& find(const std::string& id);
// The command line being run (recorded in the tables' JSON); set by the CLI.
void set_command_line(const std::string& s);
const std::string& command_line();

// The ECC ablation ladder from a bench report: for each dataset, the kernel-scope median of each
// GPU variant in registration (ablation) order, the gain over the previous step and over
// gpu-naive, and % of the read bound. Returns the markdown; writes <out_dir>/ecc-ablation.{md,json}.
std::string ecc_ablation(const report::Report& r, const std::string& out_dir);

}  // namespace repix::tables
