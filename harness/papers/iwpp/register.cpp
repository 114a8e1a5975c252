// The IWPP paper's tables and figures (Teodoro et al., Parallel Computing 2013), one line each:
// id, description, the options the table adds to the common ones, its measurement (measure.hpp).
#include "harness/papers/iwpp/measure.hpp"
#include "harness/tables.hpp"

namespace repix::tables {

std::vector<TableInfo> iwpp_paper_tables() {
  using namespace iwpp_paper;
  std::vector<TableInfo> v;
  for (const TableDef& d : std::vector<TableDef>{
           {"iwpp-table1", "IWPP paper Table 1: GPU queue ladder (atomic / scan / tq) vs initial raster scans, 4-conn",
            " [--markers opening,frame] [--raster-scans 7,9,...] [--blocks-per-sm 1,0]",
            {"markers", "raster-scans", "blocks-per-sm"}, table1},
           {"iwpp-table2", "IWPP paper Table 2: EDT speedup over one core vs image size", "", {}, table2},
           {"iwpp-fig10", "IWPP paper Figure 10: omp-tiled vs omp-nontiled reconstruction speedup vs threads",
            " [--threads 1,2,4]", {"threads"}, fig10},
           {"iwpp-fig11", "IWPP paper Figure 11: reconstruction FH_GPU vs SR_GPU speedup vs image size", "", {}, fig11},
           {"iwpp-fig13", "IWPP paper Figure 13: reconstruction FH_GPU vs SR_GPU speedup vs tissue coverage", "", {},
            fig13},
           {"iwpp-fig14", "IWPP paper Figure 14: EDT speedup vs tissue coverage", "", {}, fig14},
           {"iwpp-fig15", "IWPP paper Figure 15: reconstruction on 1-2 GPUs and CPU groups (multi-device variant)",
            " [--cpu-groups N] [--cpu-group-threads N]", {"cpu-groups", "cpu-group-threads"}, fig15},
           {"iwpp-fig16", "IWPP paper Figure 16: EDT on 1-2 GPUs and CPU groups (multi-device variant)",
            " [--cpu-groups N] [--cpu-group-threads N]", {"cpu-groups", "cpu-group-threads"}, fig16},
       })
    v.push_back(table_info(d));
  return in_group("iwpp", std::move(v));
}

}  // namespace repix::tables
