// What a tiled multi-device run did (core/tiling/multi_device.hpp), per worker and per phase: enough to
// explain its scaling (which worker took how many tiles, how many border rounds there were, and
// where a GPU worker's time went: uploads, compute, downloads, as in the paper's Figure 15b).
// Part of the reconstruct and edt Stats; empty for every other variant.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace repix::tiling {

struct WorkerStats {
  std::string name;                 // "gpu0" (CUDA device 0), "cpu1" (CPU group 1)
  int threads = 1;                  // CPU group: OpenMP threads; GPU worker: 1 (its host thread)
  std::int64_t tiles = 0;           // tiles it computed in the tile phase
  std::int64_t border_tiles = 0;    // tiles it took in border rounds (edge pulls)
  std::int64_t border_reruns = 0;   // of those, the ones whose wave was too large for a local
                                    // FIFO: re-run on the GPU / by the CPU group's tiled code
  double busy_ms = 0;               // wall time spent on its tiles (a CPU group's compute time)
  double upload_ms = 0;             // GPU: host-to-device copies (CUDA events)
  double compute_ms = 0;            // GPU: the plan's / propagator's compute (CUDA events)
  double download_ms = 0;           // GPU: device-to-host copies into the host image (wall time)
  std::int64_t upload_bytes = 0, download_bytes = 0;
};

struct TiledRun {
  std::int64_t tile_width = 0, tile_height = 0, tiles = 0;
  double tile_phase_ms = 0;     // every tile on its own
  double border_phase_ms = 0;   // all border rounds (their count is Stats::passes)
  std::vector<WorkerStats> workers;
  bool empty() const { return workers.empty(); }
};

}  // namespace repix::tiling
