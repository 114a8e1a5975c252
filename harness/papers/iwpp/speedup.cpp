// The IWPP paper's single-GPU and multicore speedup tables: Table 2 (EDT vs size), Figure 10
// (omp-tiled vs omp-nontiled vs threads), Figures 11 and 13 (reconstruction FH_GPU vs SR_GPU vs size
// and coverage) and Figure 14 (EDT vs coverage).
#include <omp.h>

#include <cstdio>
#include <iostream>
#include <limits>

#include "harness/papers/iwpp/measure.hpp"

namespace repix::tables::iwpp_paper {

using nlohmann::json;

namespace {

SpeedupRow recon_row(const Run& run, const std::string& label, const std::string& spec, int connectivity,
                     const std::vector<std::string>& ids) {
  return speedup_row(run, "reconstruct", label, spec, family_options({{"connectivity", std::to_string(connectivity)}}), ids);
}

SpeedupRow edt_row(const Run& run, const std::string& label, const std::string& spec, const std::vector<std::string>& ids) {
  return speedup_row(run, "edt", label, spec, {}, ids);
}

const std::vector<std::string> kFhSr = {"gpu-queue-tq", "gpu-opt", "gpu-sr"};
const std::vector<std::pair<std::string, std::string>> kFhOverSr = {{"gpu-queue-tq", "gpu-sr"}, {"gpu-opt", "gpu-sr"}};

}  // namespace

int table2(Run& run) {
  SpeedupTable t = titled("IWPP paper Table 2: distance transform speedup over one core vs image size", "size");
  const auto sizes = run.pick({64, 96}, {4096, 8192, 16384});
  t.explanation = std::string("Inputs: `blobs` masks of each size, fill 0.99, ball radius 24 (4 below 1024^2): the "
                  "stand-in for a tile with 100 % tissue (foreground blobs covering 99 %, zero background between "
                  "them). ") + kEdtTimed + " " + seq_runs_text(run.reps) +
                  " `--sizes paper` stops at 16384^2: seq alone would take minutes at 32768^2 (the device round's "
                  "budget for all IWPP tables is ~6 min); `--sizes 4096,8192,16384,32768` adds it.";
  for (std::int64_t n : sizes) t.rows.push_back(edt_row(run, size_label(n), edt_spec(n, 100), {"gpu-opt", "gpu-queue-tq"}));
  t.paper_row = paper_by(run.paper, "size", [](const SpeedupRow& r) {
    return json(std::stoll(r.label.substr(0, r.label.find('^'))));
  });
  return finish(run, t);
}

int fig10(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 10: multicore reconstruction, tiled vs non-tiled, speedup over seq vs threads", "threads");
  // 4096^2 (the paper's Table 1 tile): omp-nontiled runs ~9x longer than seq, so 8192^2 would
  // cost over a minute of the device round for this CPU-only figure.
  const std::int64_t n = run.pick_one(128, 4096);
  // The measuring machine's cores decide the rows: the journal's count when replaying.
  const int cores = run.session->take<int>("cores", [] { return omp_get_num_procs(); }).value_or(omp_get_num_procs());
  std::vector<int> threads;
  if (run.args->has("threads")) {
    // Counts above max_threads() were refused before anything was measured (table_info).
    for (auto x : parse_list(run.args->get("threads"), "threads", 1, std::numeric_limits<int>::max()))
      threads.push_back(static_cast<int>(x));
  } else {
    for (int x : {1, 2, 4, 8, 12, 16})
      if (x <= cores) threads.push_back(x);
    if (cores < 16 && threads.back() != cores) threads.push_back(cores);
  }
  Input in = input(run, "reconstruct", tissue_spec(n, 100, "opening"), family_options({{"connectivity", "8"}}), run.reps);
  t.explanation = "Input " + in.spec + ", 8-connectivity. `omp-tiled` (the paper's tile-based parallelisation: FH per tile, "
                  "then border rounds) and `omp-nontiled` (the initial wavefront dealt round-robin to the threads, "
                  "atomic compare-and-swap updates) with Options::threads = the row's count, host clock, on the "
                  "machine's " + std::to_string(cores) + " cores (counts above that are left out). seq = FH on one "
                  "core; speedup = seq / variant. Every output equals seq's pixel for pixel. " + seq_runs_text(run.reps);
  for (int th : threads) {
    SpeedupRow row;
    row.label = std::to_string(th);
    row.dataset = in.spec;
    row.seq = in.seq;
    for (const char* id : {"omp-tiled", "omp-nontiled"}) {
      if (!run.replaying()) std::fprintf(stderr, "repix table iwpp-fig10: %s with %d threads...\n", id, th);
      row.cells.push_back(cell(run, "reconstruct", in, "threads " + row.label + " " + id + " end-to-end", id,
                               "end-to-end", family_options({{"threads", std::to_string(th)}})));
    }
    t.rows.push_back(std::move(row));
  }
  t.paper_row = paper_by(run.paper, "threads", [](const SpeedupRow& r) { return json(std::stoi(r.label)); });
  t.paper_key = "tiled_speedup";
  t.compare = {{"omp-tiled", "omp-nontiled"}};
  return finish(run, t);
}

int fig11(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 11: reconstruction FH_GPU vs SR_GPU speedups over one core vs image size", "size");
  const auto sizes = run.pick({64, 96}, {4096, 8192, 16384});
  t.explanation = "Inputs: tissue masks with 100 % coverage and their opening markers (" + tissue_spec(sizes.back(), 100, "opening") +
                  " ...), 8-connectivity, one image per size (the paper cuts a 64K x 64K image into tiles of the "
                  "size; we run whole images of it). FH_GPU = `gpu-queue-tq` (the paper's queue) and `gpu-opt` "
                  "(ours, tiled wavefronts); SR_GPU = `gpu-sr` (raster scans until stable). " + kReconTimed + " " +
                  seq_runs_text(run.reps) + " `--sizes paper` stops at 16384^2 (the paper saw no gain beyond 16K): "
                  "32768^2 adds over a minute of input generation and seq to the device round; "
                  "`--sizes 4096,8192,16384,32768` adds it.";
  for (std::int64_t n : sizes)
    t.rows.push_back(recon_row(run, size_label(n), tissue_spec(n, 100, "opening"), 8, kFhSr));
  t.compare = kFhOverSr;
  return finish(run, t);
}

int fig13(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 13: reconstruction FH_GPU vs SR_GPU speedups over one core vs tissue coverage", "coverage");
  const std::int64_t n = run.pick_one(96, 8192);
  t.explanation = "Inputs: " + size_label(n) + " tissue masks with 25, 50, 75 and 100 % coverage and their opening "
                  "markers, 8-connectivity (the paper: 64K x 64K images in 16K x 16K tiles; ours: one image per "
                  "coverage). FH_GPU = `gpu-queue-tq` and `gpu-opt`; SR_GPU = `gpu-sr`. " + kReconTimed + " " +
                  seq_runs_text(run.reps);
  for (int c : {25, 50, 75, 100})
    t.rows.push_back(recon_row(run, std::to_string(c) + " %", tissue_spec(n, c, "opening"), 8, kFhSr));
  t.compare = kFhOverSr;
  return finish(run, t);
}

int fig14(Run& run) {
  SpeedupTable t = titled("IWPP paper Figure 14: distance transform speedup over one core vs tissue coverage", "coverage");
  const std::int64_t n = run.pick_one(96, 8192);
  t.explanation = "Inputs: " + size_label(n) + " blob masks covering 25, 50, 75 and 99 % (" + edt_spec(n, 25) +
                  " ...: foreground blobs on zero background; the tissue masks have no zero background at 100 %, "
                  "where every distance would be infinite, so 100 % is the generator's maximum, 99 %). " + kEdtTimed +
                  " " + seq_runs_text(run.reps);
  for (int c : {25, 50, 75, 100}) t.rows.push_back(edt_row(run, std::to_string(c) + " %", edt_spec(n, c), {"gpu-opt", "gpu-queue-tq"}));
  return finish(run, t);
}

}  // namespace repix::tables::iwpp_paper
