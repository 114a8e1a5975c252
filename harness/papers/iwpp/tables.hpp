// The IWPP paper's section-5 results (Teodoro et al., Parallel Computing 2013) regenerated as
// tables beside the numbers its text gives (results/paper/iwpp-*.json):
//   iwpp-table1   the GPU queue ladder (gpu-queue-atomic / -warp-atomic / -scan / -tq) vs raster scans
//   iwpp-table2   EDT speedup over seq vs image size
//   iwpp-fig10    omp-tiled vs omp-nontiled speedup over seq vs threads
//   iwpp-fig11    FH_GPU (gpu-queue-tq, gpu-opt) vs SR_GPU (gpu-sr) vs image size
//   iwpp-fig13    FH_GPU vs SR_GPU vs tissue coverage
//   iwpp-fig14    EDT vs tissue coverage
//   iwpp-fig15/16 the multi-device variant: 1 GPU, 2 GPUs, 2 GPUs + CPU groups
// Building a table (iwpp_table1, speedup_table: formatting and ratio logic on measurement structs,
// tested without a GPU, in tables.cpp) is separate from measuring (measure.hpp: table1.cpp, speedup.cpp,
// multi_device.cpp; register.cpp lists the tables).
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"
#include "harness/report.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables {

// One variant measured on one input in one scope: the result type of bench reports too
// (report::Result: samples, verdict, not_run, the run's counters in `extra`). Queue-ladder cells
// measured with sample stats carry each kernel sample's own counters in extra["sample_stats"].
using Timing = report::Result;
// The median of its samples; 0 when it did not run.
double median_ms(const Timing& t);
// Each kernel sample's Stats::wavefront_ms (the propagation kernels alone, CUDA events inside the
// variant): the reconstruct queue ladder's; empty elsewhere.
std::vector<double> wavefront_ms(const Timing& t);
double wavefront_median_ms(const Timing& t);  // 0 when it did not run or has no wavefront samples
// A cell of a table's JSON: variant, scope, samples_ms, median_ms, wavefront_ms,
// wavefront_median_ms, not_run, verified, verification, stats (the counters, and the error
// statistics where there are any).
nlohmann::json cell_json(const Timing& t);

// ---- iwpp-table1 ---------------------------------------------------------------------------------
// The ladder in table order; the paper has columns for the first (Naive), third (PF) and last (TQ).
extern const char* const kQueueLadder[4];  // gpu-queue-atomic, -warp-atomic, -scan, -tq
struct LadderRow {
  int raster_scans = 0;
  std::vector<Timing> queues;  // kQueueLadder in kernel scope, in that order, with wavefront samples
};
struct LadderBlock {
  std::string marker;   // opening, frame, ...
  std::string dataset;  // the marker spec
  int connectivity = 4;
  int blocks_per_sm = 0;  // the queue kernels' launch (Options::queue_blocks_per_sm): 0 = as many as fit
  std::vector<LadderRow> rows;
  Timing reference;     // gpu-opt in kernel scope (it does no raster scans): one line under the block
};
// wall_s: how long the whole command took (-1 unknown), said under the table and in the JSON.
std::string iwpp_table1(const nlohmann::json& paper, const std::vector<LadderBlock>& blocks, const Meta& meta,
                        const std::string& out_dir, double wall_s = -1);

// ---- the speedup tables: iwpp-table2, -fig10, -fig11, -fig13, -fig14, -fig15, -fig16 ------------
struct SpeedupRow {
  std::string label;    // "4096^2", "25 %", "8 threads", "2 GPUs"
  std::string dataset;  // the input's spec
  Timing seq;           // the single-core baseline every speedup divides
  std::vector<Timing> cells;
  std::string note;
};
struct SpeedupTable {
  std::string id;           // table id, file name and JSON "table"
  std::string title;
  std::string explanation;  // what runs, what is timed, why these sizes
  std::string x_label;      // heading of the label column
  std::vector<SpeedupRow> rows;
  // The paper's row for a label ({} when it has none), and the key of its speedup value.
  std::function<nlohmann::json(const SpeedupRow&)> paper_row;
  std::string paper_key = "speedup";
  // (a, b): how much faster variant a is than variant b, per row and scope, with mean and max.
  std::vector<std::pair<std::string, std::string>> compare;
  // (row a, row b): how much faster each cell of row a is than the same cell of row b.
  std::vector<std::pair<std::string, std::string>> compare_rows;
  double wall_s = -1;       // the whole command, generation and references included; -1 unknown
};
std::string speedup_table(const nlohmann::json& paper, const SpeedupTable& t, const Meta& meta,
                          const std::string& out_dir);

}  // namespace repix::tables
