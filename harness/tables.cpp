#include "harness/tables.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/find_by_name.hpp"
#include "harness/env.hpp"
#include "harness/json_fields.hpp"
#include "harness/registry.hpp"
#include "harness/tables_common.hpp"
#include "harness/tables_ecc.hpp"
#include "harness/tables_iwpp.hpp"

namespace repix::tables {

using json_fields::path_or;

namespace {
// An IWPP paper table (tables_iwpp.hpp): same options for all but a few extras.
TableInfo iwpp(const std::string& id, const std::string& description) {
  return {id, description, iwpp_table_usage(id), [id](const cli::Args& a) { return run_iwpp_table(id, a); }};
}
}  // namespace

const std::vector<TableInfo>& all() {
  static const std::vector<TableInfo> t = {
      {"ecc-ablation", "ECC optimisation ladder (paper section 4.3) from a bench report: gain per step",
       "--report R.json [--out-dir DIR]",
       [](const cli::Args& a) {
         a.only({"report", "out-dir"});
         std::cout << ecc_ablation(report::read_report(a.need("report")), a.get("out-dir"));
         return 0;
       }},
      {"ecc-1", "ECC paper Table 1: CPU (omp) vs GPU (gpu-opt), overall (with file read), end-to-end, kernel",
       ecc_table_usage(1), [](const cli::Args& a) { return run_ecc_table(1, a); }},
      {"ecc-2", "ECC paper Table 2: GPU-only pipeline {13-tap Gaussian smoothing; ECC} iterated N times",
       ecc_table_usage(2), [](const cli::Args& a) { return run_ecc_table(2, a); }},
      {"ecc-3", "ECC paper Table 3: batches of N small images from files, GPU overhead amortised",
       ecc_table_usage(3), [](const cli::Args& a) { return run_ecc_table(3, a); }},
      iwpp("iwpp-table1", "IWPP paper Table 1: GPU queue ladder (atomic / scan / tq) vs initial raster scans, 4-conn"),
      iwpp("iwpp-table2", "IWPP paper Table 2: EDT speedup over one core vs image size"),
      iwpp("iwpp-fig10", "IWPP paper Figure 10: omp-tiled vs omp-nontiled reconstruction speedup vs threads"),
      iwpp("iwpp-fig11", "IWPP paper Figure 11: reconstruction FH_GPU vs SR_GPU speedup vs image size"),
      iwpp("iwpp-fig13", "IWPP paper Figure 13: reconstruction FH_GPU vs SR_GPU speedup vs tissue coverage"),
      iwpp("iwpp-fig14", "IWPP paper Figure 14: EDT speedup vs tissue coverage"),
      iwpp("iwpp-fig15", "IWPP paper Figure 15: reconstruction on 1-2 GPUs and CPU groups (multi-device variant)"),
      iwpp("iwpp-fig16", "IWPP paper Figure 16: EDT on 1-2 GPUs and CPU groups (multi-device variant)"),
  };
  return t;
}

namespace {
std::string& command_line_store() {
  static std::string s;
  return s;
}
}  // namespace
void set_command_line(const std::string& s) { command_line_store() = s; }
const std::string& command_line() { return command_line_store(); }

const TableInfo& find(const std::string& id) {
  return find_by_name(all(), id, "table", [](const TableInfo& t) { return t.id; });
}

std::string ecc_ablation(const report::Report& r, const std::string& out_dir) {
  std::vector<std::string> order;
  for (const auto& v : registry::variants("ecc"))
    if (v.gpu) order.push_back(v.id);
  std::vector<std::string> datasets;
  std::map<std::pair<std::string, std::string>, const report::Result*> kernel;
  for (const auto& res : r.results) {
    if (res.family != "ecc" || res.scope != "kernel") continue;
    if (std::find(datasets.begin(), datasets.end(), res.dataset) == datasets.end())
      datasets.push_back(res.dataset);
    kernel[{res.dataset, res.variant}] = &res;
  }
  if (datasets.empty()) throw Error("the report has no ECC kernel-scope results (run `repix bench` on a GPU)");

  std::ostringstream md;
  nlohmann::json rows = nlohmann::json::array();
  const std::string gpu = path_or(r.env, {"gpu", "name"}, "?");
  md << "# ECC ablation ladder (kernel scope, data in GPU memory)\n\n"
     << "GPU: " << gpu << "; repix " << env::describe_source(r.tool)
     << "; medians of raw samples, L2 flushed before each. `gain` is over the previous step, "
        "`vs naive` over gpu-naive.\n\n";
  for (const auto& ds : datasets) {
    md << "## " << ds << "\n\n| variant | step | median ms | GVox/s | gain | vs naive | % of read bound | verified |\n"
       << "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    const report::Result* prev = nullptr;
    const report::Result* naive = nullptr;
    for (const auto& id : order) {
      auto it = kernel.find({ds, id});
      if (it == kernel.end()) continue;
      const report::Result& res = *it->second;
      if (!naive) naive = &res;
      std::string step;
      for (const auto& v : registry::variants("ecc"))
        if (v.id == id) step = v.step;
      const double gain = prev ? prev->median_ms / res.median_ms : 1.0;
      const double vs_naive = naive->median_ms / res.median_ms;
      md << "| " << id << " | " << step << " | " << fmt("%.4f", res.median_ms) << " | "
         << fmt("%.2f", res.throughput) << " | " << (prev ? fmt("%.2fx", gain) : "-") << " | "
         << fmt("%.2fx", vs_naive) << " | "
         << (res.pct_of_bound ? fmt("%.1f %%", *res.pct_of_bound) : "-") << " | "
         << (res.verified ? "yes" : "NO") << " |\n";
      rows.push_back({{"dataset", ds}, {"variant", id}, {"step", step}, {"median_ms", res.median_ms},
                      {"throughput_gvox_s", res.throughput}, {"gain_over_previous", gain},
                      {"gain_over_naive", vs_naive},
                      {"pct_of_bound", res.pct_of_bound ? nlohmann::json(*res.pct_of_bound) : nlohmann::json()},
                      {"verified", res.verified}});
      prev = &res;
    }
    md << "\n";
  }
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    write_file_atomic(out_dir + "/ecc-ablation.md", md.str());
    nlohmann::json j = {{"table", "ecc-ablation"}, {"gpu", gpu}, {"tool", r.tool}, {"command", r.command}, {"rows", rows}};
    write_file_atomic(out_dir + "/ecc-ablation.json", j.dump(1) + "\n");
  }
  return md.str();
}

}  // namespace repix::tables
