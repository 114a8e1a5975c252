// The ECC paper's tables (Wang, Wagner, Chen, SoCG 2022), one line each.
#include <iostream>

#include "harness/papers/ecc/tables.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

std::vector<TableInfo> ecc_paper_tables() {
  return in_group("ecc", {
      {"ecc-ablation", "ECC optimisation ladder (paper section 4.3) from a bench report: gain per step",
       "--report R.json [--out-dir DIR] [--ncu]",
       [](const cli::Args& a) {
         a.only({"report", "out-dir", "ncu"});
         // --ncu: each step profiled under Nsight Compute (on this machine's GPU), counters beside.
         std::cout << ecc_ablation(report::read_report(a.need("report")), a.get("out-dir"),
                                   ncu::ladder_counters(a, a.get("out-dir")));
         return 0;
       }},
      {"ecc-1", "ECC paper Table 1: CPU (omp) vs GPU (gpu-opt), overall (with file read), end-to-end, kernel",
       ecc_table_usage(1), [](const cli::Args& a) { return run_ecc_table(1, a); }},
      {"ecc-2", "ECC paper Table 2: GPU-only pipeline {13-tap Gaussian smoothing; ECC} iterated N times",
       ecc_table_usage(2), [](const cli::Args& a) { return run_ecc_table(2, a); }},
      {"ecc-3", "ECC paper Table 3: batches of N small images from files, GPU overhead amortised",
       ecc_table_usage(3), [](const cli::Args& a) { return run_ecc_table(3, a); }},
  });
}

}  // namespace repix::tables
