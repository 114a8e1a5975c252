// IWPP paper Table 1: the GPU queue ladder (gpu-queue-atomic, -warp-atomic, -scan, -tq) in kernel
// scope against the number of initial raster-scan pairs, at the paper's launch (one block per SM)
// and at repix's default, with each sample's wavefront-phase time; gpu-opt as the reference line.
#include <cstdio>
#include <iostream>

#include "harness/papers/iwpp/measure.hpp"

namespace repix::tables::iwpp_paper {

int table1(Run& run) {
  const std::int64_t n = run.pick_one(64, 4096);
  const std::vector<std::string> markers = cli::split(run.args->get("markers", "opening,frame"), ',');
  std::vector<int> scans = {7, 9, 11, 13, 15, 17, 19};
  if (run.args->has("raster-scans")) {
    scans.clear();
    for (auto x : parse_list(run.args->get("raster-scans"), "raster-scans", 0, 1000)) scans.push_back(static_cast<int>(x));
  }
  // The paper's launch (one block per SM) first, then repix's default (as many as fit).
  std::vector<int> launches;
  for (auto x : parse_list(run.args->get("blocks-per-sm", "1,0"), "blocks-per-sm", 0, 64)) launches.push_back(static_cast<int>(x));
  std::vector<LadderBlock> blocks;
  for (const auto& marker : markers) {
    bench::Reps once = run.reps;  // seq is only the reference here: one run
    once.cpu = protocol::Rule::fixed(1);
    once.cpu.warmup = 0;
    Input in = input(run, "reconstruct", tissue_spec(n, 100, marker), family_options({{"connectivity", "4"}}), once);
    const Timing reference = cell(run, "reconstruct", in, "reference " + marker + " gpu-opt kernel", "gpu-opt", "kernel");
    // Each sample's own stats: the propagation kernels' time (Stats::wavefront_ms), the paper's
    // "wavefront phase".
    bench::Reps ladder = run.reps;
    ladder.sample_stats = true;
    for (int launch : launches) {
      LadderBlock b;
      b.marker = marker;
      b.connectivity = 4;
      b.blocks_per_sm = launch;
      b.dataset = in.spec;
      b.reference = reference;
      for (int s : scans) {
        if (!run.replaying())
          std::fprintf(stderr, "repix table iwpp-table1: %s, blocks per SM %d, %d raster scan pairs...\n",
                       marker.c_str(), launch, s);
        LadderRow row;
        row.raster_scans = s;
        const cli::Args opt = family_options({{"raster-scans", std::to_string(s)},
                                              {"queue-blocks-per-sm", std::to_string(launch)}});
        for (const char* id : kQueueLadder) {
          const std::string key = marker + " blocks-per-sm " + std::to_string(launch) + " raster-scans " +
                                  std::to_string(s) + " " + id + " kernel";
          row.queues.push_back(cell(run, "reconstruct", in, key, id, "kernel", opt, &ladder));
        }
        b.rows.push_back(std::move(row));
      }
      blocks.push_back(std::move(b));
    }
  }
  run.session->stamp(run.meta);
  std::cout << iwpp_table1(run.paper, blocks, run.meta, run.out_dir, run.wall_s());
  std::fprintf(stderr, "repix table iwpp-table1: %.1f s\n", run.wall_s());
  for (const auto& b : blocks) {
    if (b.reference.failed()) return 1;
    for (const auto& r : b.rows)
      for (const auto& t : r.queues)
        if (t.failed()) return 1;
  }
  return 0;
}

}  // namespace repix::tables::iwpp_paper
