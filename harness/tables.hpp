// `repix table ID`: tables regenerated from measurements, side by side with the papers' numbers
// where they exist (results/paper/). Each writes markdown and JSON under an output folder.
#pragma once
#include <string>
#include <vector>

#include "harness/report.hpp"

namespace repix::tables {

struct TableInfo {
  std::string id;
  std::string description;
};
const std::vector<TableInfo>& all();

// The ECC ablation ladder from a bench report: for each dataset, the kernel-scope median of each
// GPU variant in registration (ablation) order, the gain over the previous step and over
// gpu-naive, and % of the read bound. Returns the markdown; writes <out_dir>/ecc-ablation.{md,json}.
std::string ecc_ablation(const report::Report& r, const std::string& out_dir);

}  // namespace repix::tables
