// `repix table ecc-ablation`: the ECC optimisation ladder (the paper's section 4.3) from a bench
// report, with the gain of each step.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/env.hpp"
#include "harness/json_fields.hpp"
#include "harness/json_text.hpp"
#include "harness/ncu.hpp"
#include "harness/outputs.hpp"
#include "harness/papers/ecc/tables.hpp"
#include "harness/registry.hpp"

namespace repix::tables {

using json_fields::path_or;

std::string ecc_ablation(const report::Report& r, const std::string& out_dir, const ncu::StepCounters& counters) {
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
        "`vs` over the first step of the ladder the report holds for that input (gpu-naive when "
        "the whole ladder ran).\n\n";
  if (counters)
    md << "Hardware counters (Nsight Compute, one timed run of each step, kernels of its NVTX ranges; "
          "occupancy, DRAM and L2 weighted by kernel duration; summaries per kernel under ncu/).\n\n";
  for (const auto& ds : datasets) {
    // The base of the `vs` column: the first step of the ladder this report ran on `ds` (a report
    // of the steps after gpu-naive alone compares them with its first).
    const report::Result* first = nullptr;
    for (const auto& id : order) {
      auto it = kernel.find({ds, id});
      if (it != kernel.end()) {
        first = it->second;
        break;
      }
    }
    if (!first) continue;  // only variants outside the ladder (peers) ran on it
    md << "## " << ds << "\n\n| variant | step | median ms | GVox/s | gain | vs " << first->variant
       << " | % of read bound | verified |"
       << (counters ? ncu::counters_header() : "") << "\n"
       << "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |" << (counters ? ncu::counters_separator() : "")
       << "\n";
    const report::Result* prev = nullptr;
    for (const auto& id : order) {
      auto it = kernel.find({ds, id});
      if (it == kernel.end()) continue;
      const report::Result& res = *it->second;
      std::string step;
      for (const auto& v : registry::variants("ecc"))
        if (v.id == id) step = v.step;
      const double gain = prev ? prev->median_ms / res.median_ms : 1.0;
      const double vs_first = first->median_ms / res.median_ms;
      md << "| " << id << " | " << step << " | " << fmt("%.4f", res.median_ms) << " | "
         << fmt("%.2f", res.throughput) << " | " << (prev ? fmt("%.2fx", gain) : "-") << " | "
         << fmt("%.2fx", vs_first) << " | "
         << (res.pct_of_bound ? fmt("%.1f %%", *res.pct_of_bound) : "-") << " | "
         << (res.verified ? "yes" : "NO") << " |";
      nlohmann::json step_counters;
      if (counters) {
        step_counters = counters("ecc", id, ds);
        md << ncu::counters_cells(step_counters);
      }
      md << "\n";
      rows.push_back({{"dataset", ds}, {"variant", id}, {"step", step}, {"median_ms", res.median_ms},
                      {"throughput_gvox_s", res.throughput}, {"gain_over_previous", gain},
                      {"gain_over_first", vs_first}, {"first_variant", first->variant},
                      {"pct_of_bound", res.pct_of_bound ? nlohmann::json(*res.pct_of_bound) : nlohmann::json()},
                      {"verified", res.verified}});
      if (counters) rows.back()["ncu"] = step_counters;
      prev = &res;
    }
    md << "\n";
  }
  write_outputs(out_dir, "ecc-ablation", md.str(),
                {{"table", "ecc-ablation"}, {"gpu", gpu}, {"tool", r.tool}, {"command", r.command}, {"rows", rows}});
  return md.str();
}

}  // namespace repix::tables
