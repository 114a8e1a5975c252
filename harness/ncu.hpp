// Nsight Compute as a first-class workflow: `repix profile FAMILY --variant V --dataset SPEC --ncu`
// re-runs this very binary's `repix profile` under ncu, filtered by NVTX to the variant's timed
// ranges (core/nvtx.hpp: `repix@<family>/<variant>/`, warm-up excluded with `repix@warmup/`; set-up
// and uploads sit outside the variant's ranges), then imports the report as CSV (`--page raw`) and
// writes beside it a summary per kernel (duration, achieved occupancy, registers per thread, DRAM
// and L2 throughput as % of peak, top stall reasons, shared-memory bank conflicts and atomics where
// the report has them). Generic: any family, any GPU variant; the ablation tables put the
// per-step aggregate (step_counters) beside their times.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/args.hpp"

namespace repix::ncu {

// ncu on PATH (`path_env`, ':'-separated), else in <cuda_home>/bin, else in <fallback>/bin;
// throws repix::Error "ncu not found ..." naming where it looked.
std::string find_ncu(const std::string& path_env, const std::string& cuda_home,
                     const std::string& fallback = "/usr/local/cuda");
std::string find_ncu();  // from $PATH and $CUDA_HOME
// Any CUDA tool the same way (ncu, cuobjdump); `advice` ends the error.
std::string find_cuda_tool(const std::string& name, const std::string& advice, const std::string& path_env,
                           const std::string& cuda_home, const std::string& fallback = "/usr/local/cuda");
// Runs argv (no shell); its stdout into *out when given, else through. Returns the exit status
// (128 + signal when killed); throws repix::Error when it cannot start.
int spawn(const std::vector<std::string>& argv, std::string* out);
std::string self_exe();  // this program's path (/proc/self/exe)

// The NVTX filters: the variant's ranges, and the warm-up excluded.
std::string include_filter(const std::string& family, const std::string& variant);  // repix@F/V/
inline const char* kWarmupExclude = "repix@warmup/";
// The sections collected when --sections is not given (their metrics are the summary's).
std::vector<std::string> default_sections();

// What to profile: `repix profile <family> --variant <variant> --dataset <dataset> <extra...>`
// under the NVTX filter of the variant's timed ranges. A peer (`peer:<id>`) opens no repix range
// (its code is its own): it is profiled through a bench run instead,
// `repix bench --family <family> --variants <variant> --dataset <dataset> --out <base>.bench.json
// <extra...>` (bench_extra's defaults: kernel scope, one sample, no warm-up), with no NVTX filter,
// its kernels chosen by the kernel-name filter alone.
struct Target {
  std::string family, variant, dataset;
  std::vector<std::string> extra;  // further `repix profile` (a peer: `repix bench`) options
  std::string kernels = "";        // ncu's kernel-name filter (`-k regex:<kernels>`); "": every kernel
  // No NVTX filter: every launch of the process (set-up, warm-up, L2 flushes, timed runs), to see
  // what the filter keeps out (`repix profile ... --ncu --all-launches`).
  bool all_launches = false;
};
bool is_peer(const std::string& variant);
// The reports' file stem in the output folder: <family>-<variant>, a peer's ':' written '_'
// (maxtree-peer_blin-maxtree).
std::string report_stem(const Target& t);
// A peer's bench options: `extra` with --scopes=kernel, --samples=1 and --warmup=0 added where
// not given (one timed call of its kernels); --iterations is refused (a bench counts samples).
std::vector<std::string> bench_extra(std::vector<std::string> extra);

// The ncu command line that profiles `t` with the binary `repix` into `report_base`.ncu-rep.
std::vector<std::string> profile_command(const std::string& ncu, const std::string& repix, const Target& t,
                                         const std::vector<std::string>& sections, const std::string& report_base);
// The ncu command line that prints the report's raw metrics as CSV.
std::vector<std::string> import_command(const std::string& ncu, const std::string& report);
// A command line as a shell would take it (printed before it runs).
std::string shell_line(const std::vector<std::string>& argv);

// `ncu --csv --page raw`: a row of metric names, a row of units, then one row per profiled kernel
// launch. Lines before the header that are ncu's own (`==PROF==`, `==WARNING==`) are skipped.
struct Csv {
  std::vector<std::string> names, units;
  std::vector<std::vector<std::string>> rows;
};
Csv parse_csv(const std::string& text);
// A CSV number: thousands separators dropped; nullopt for an empty or non-numeric field ("n/a").
std::optional<double> number(const std::string& field);

// One kernel (all its launches in the report): medians and means over the launches; a metric the
// report lacks stays empty.
struct Kernel {
  std::string name;
  int launches = 0;
  double total_us = 0, median_us = 0;
  std::optional<double> occupancy_pct, registers, dram_pct, l2_pct, bank_conflicts;
  std::optional<double> warp_instructions, executed_ipc;  // per launch; IPC per SM (4 issue slots)
  std::vector<std::pair<std::string, double>> top_stalls;  // reason, warps stalled per issue (top 3)
  std::map<std::string, double> atomics;                    // metric, mean per launch
};
std::vector<Kernel> summarise(const Csv& csv);
nlohmann::json to_json(const std::vector<Kernel>& kernels);
// The kernels of to_json as a markdown table.
std::string to_markdown(const nlohmann::json& kernels);

// The whole round: runs ncu (printing its command line), imports, and writes under `out_dir`
// report_stem(t).ncu-rep, .raw.csv, .summary.json and .summary.md (a peer: its bench report
// .bench.json too). Returns the summary JSON.
// Throws repix::Error when ncu is absent, fails, or captured no kernel.
nlohmann::json profile(const Target& t, const std::vector<std::string>& sections, const std::string& out_dir);

// `repix profile FAMILY --variant V --dataset SPEC --ncu [--sections A,B] [--kernels REGEX]
// [--out DIR] [...]`; V may be a peer this machine has (`peer:<id>`, through a bench run).
int command(const cli::Args& a);

// One ablation step's counters from a summary: kernels, total µs, and the duration-weighted
// occupancy, DRAM %, L2 %, the dominant stall, bank conflicts and atomics summed over the kernels.
nlohmann::json step_counters(const nlohmann::json& summary);
// The markdown columns an ablation table adds for them: header cells, separators, a row's cells.
std::string counters_header();
std::string counters_separator();
std::string counters_cells(const nlohmann::json& step);  // "-" cells for null (not profiled)
// A ladder step profiled: `repix profile` under ncu into <out_dir>/ncu/, its step_counters (and
// "summary": the summary's path); {"error": ...} when the profile failed, so one failing step does
// not lose the others.
nlohmann::json ladder_step(const Target& t, const std::string& out_dir);
// What an ablation table asks for each step: (family, variant, dataset) -> counters JSON.
using StepCounters = std::function<nlohmann::json(const std::string& family, const std::string& variant,
                                                  const std::string& dataset)>;
// `repix table <family>-ablation ... --ncu`: ladder_step into `out_dir` ("." when empty); empty
// (no counters) without --ncu.
StepCounters ladder_counters(const cli::Args& a, const std::string& out_dir);

}  // namespace repix::ncu
