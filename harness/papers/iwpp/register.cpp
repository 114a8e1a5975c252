// The IWPP paper's tables and figures (Teodoro et al., Parallel Computing 2013), one line each.
#include "harness/papers/iwpp/tables.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

namespace {
// Same options for all but a few extras (run.cpp).
TableInfo iwpp(const std::string& id, const std::string& description) {
  return {id, description, iwpp_table_usage(id), [id](const cli::Args& a) { return run_iwpp_table(id, a); }};
}
}  // namespace

std::vector<TableInfo> iwpp_paper_tables() {
  return {
      iwpp("iwpp-table1", "IWPP paper Table 1: GPU queue ladder (atomic / scan / tq) vs initial raster scans, 4-conn"),
      iwpp("iwpp-table2", "IWPP paper Table 2: EDT speedup over one core vs image size"),
      iwpp("iwpp-fig10", "IWPP paper Figure 10: omp-tiled vs omp-nontiled reconstruction speedup vs threads"),
      iwpp("iwpp-fig11", "IWPP paper Figure 11: reconstruction FH_GPU vs SR_GPU speedup vs image size"),
      iwpp("iwpp-fig13", "IWPP paper Figure 13: reconstruction FH_GPU vs SR_GPU speedup vs tissue coverage"),
      iwpp("iwpp-fig14", "IWPP paper Figure 14: EDT speedup vs tissue coverage"),
      iwpp("iwpp-fig15", "IWPP paper Figure 15: reconstruction on 1-2 GPUs and CPU groups (multi-device variant)"),
      iwpp("iwpp-fig16", "IWPP paper Figure 16: EDT on 1-2 GPUs and CPU groups (multi-device variant)"),
  };
}

}  // namespace repix::tables
