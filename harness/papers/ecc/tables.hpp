// The ECC paper's Tables 1-3 (Wang, Wagner, Chen, SoCG 2022) regenerated side by side with the
// transcribed numbers in results/paper/ecc-table{1,2,3}.json:
//   ecc-1  CPU (omp) vs GPU (gpu-opt; gpu-stream for the out-of-core rows): with-io ("overall",
//          file read included), end-to-end and kernel scopes, GVox/s, speedups
//   ecc-2  the GPU-only pipeline {Gaussian smoothing; ECC} iterated N times on a 1024^2 GRF
//   ecc-3  batches of N small images (128^2 uniform, 128^3 GRF) read from files, GPU overhead
//          amortised
// Building the tables (the ecc_table* builders in tables.cpp: formatting and ratio logic on
// measurement structs, tested without a GPU) is separate from measuring (measure.hpp: the
// command in measure.cpp, each table's measurement in table1/2/3.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/ncu.hpp"
#include "harness/report.hpp"
#include "harness/tables_common.hpp"

namespace repix::tables {

// ---- Table 1 ------------------------------------------------------------------------------------
// From a bench report with omp and gpu-opt/gpu-stream results in the scopes kernel, end-to-end
// and with-io. Rows are the report's datasets, matched to the paper's rows by kind and shape;
// the paper's non-reproducible rows are listed with their reason.
// Writes <out_dir>/<name>.{md,json} (name: ecc-table1, or ecc-table1-big for the streamed rows).
std::string ecc_table1(const nlohmann::json& paper, const report::Report& r, const Meta& meta,
                       const std::string& out_dir, const std::string& name = "ecc-table1");

// ---- Table 2 ------------------------------------------------------------------------------------
struct PipelineRun {
  int iterations = 0;
  double setup_ms = 0;       // device buffers, gpu-opt plan setup, one upload (host clock)
  double loop_ms = 0;        // host clock over all iterations
  std::vector<double> smooth_ms, ecc_exec_ms, ecc_mem_ms;  // per iteration
  bool gpu = false;          // false: not run (no GPU)
  bool verified = false;
  std::string verification;
};
struct PipelineInfo {
  std::string dataset;
  double disk_read_ms = 0;   // reading the .npy once (median of a few reads)
  double context_ms = -1;    // the first CUDA call of the process; -1 not measured
  std::string smoothing;     // what the smoothing step is (taps, sigma, border)
};
// As journalled (Session::take) and read back.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PipelineRun, iterations, setup_ms, loop_ms, smooth_ms, ecc_exec_ms, ecc_mem_ms,
                                   gpu, verified, verification)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PipelineInfo, dataset, disk_read_ms, context_ms, smoothing)
std::string ecc_table2(const nlohmann::json& paper, const std::vector<PipelineRun>& runs,
                       const PipelineInfo& info, const Meta& meta, const std::string& out_dir);

// ---- Table 3 ------------------------------------------------------------------------------------
struct BatchRun {
  std::string input;                 // "uniform" | "grf" (the paper's row group)
  std::string shape;                 // "128x128"
  std::string spec;                  // dataset spec of image 0 (others vary the seed)
  int count = 0;
  int distinct = 0;                  // distinct images among the count (seeds cycled)
  std::string path;                  // BatchRunner's path on the GPU ("small-kernel", "per-image"); empty: not run
  std::vector<double> overall_ms;    // per repetition, whole batch: setup + read + upload + ECC
  std::vector<double> read_ms;       // the file-read part of each repetition
  std::vector<double> device_ms;     // ECC of the device-resident batch (host clock, synchronous)
  std::vector<double> cpu_ms;        // whole batch on the CPU: read + omp per image
  bool gpu = false;
  bool verified = false;
  std::string verification;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BatchRun, input, shape, spec, count, distinct, path, overall_ms, read_ms, device_ms,
                                   cpu_ms, gpu, verified, verification)
std::string ecc_table3(const nlohmann::json& paper, const std::vector<BatchRun>& runs,
                       double context_ms, const Meta& meta, const std::string& out_dir);

// The ECC ablation ladder from a bench report: for each dataset, the kernel-scope median of each
// GPU variant in registration (ablation) order, the gain over the previous step and over
// gpu-naive, and % of the read bound. Returns the markdown; writes <out_dir>/ecc-ablation.{md,json}.
// With `counters` (repix table ecc-ablation --ncu: ncu::ladder_step), each step's hardware counters
// beside its times (and as "ncu" in its JSON row).
std::string ecc_ablation(const report::Report& r, const std::string& out_dir, const ncu::StepCounters& counters = {});

// `repix table ecc-N ...` (N = 1, 2, 3): measures, then writes <out-dir>/ecc-tableN.{md,json}.
int run_ecc_table(int n, const cli::Args& a);
const char* ecc_table_usage(int n);

}  // namespace repix::tables
