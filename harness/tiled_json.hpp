// JSON of what a tiled multi-device run did (tiling::TiledRun): `repix run --json` and the bench
// results' `extra` of the multi-device variants of every family carry it as "tiled".
#pragma once
#include <nlohmann/json.hpp>

#include "core/tiling/tile_stats.hpp"

namespace repix::harness {

inline nlohmann::json tiled_json(const tiling::TiledRun& r) {
  nlohmann::json workers = nlohmann::json::array();
  for (const tiling::WorkerStats& w : r.workers)
    workers.push_back({{"name", w.name},
                       {"threads", w.threads},
                       {"tiles", w.tiles},
                       {"border_tiles", w.border_tiles},
                       {"border_reruns", w.border_reruns},
                       {"busy_ms", w.busy_ms},
                       {"upload_ms", w.upload_ms},
                       {"compute_ms", w.compute_ms},
                       {"download_ms", w.download_ms},
                       {"upload_bytes", w.upload_bytes},
                       {"download_bytes", w.download_bytes}});
  return {{"tile_width", r.tile_width},       {"tile_height", r.tile_height},
          {"tiles", r.tiles},                 {"tile_phase_ms", r.tile_phase_ms},
          {"border_phase_ms", r.border_phase_ms}, {"workers", workers}};
}

// Adds "tiled" to a Stats JSON object when the run was a tiled multi-device one.
inline void add_tiled(nlohmann::json& stats, const tiling::TiledRun& r) {
  if (!r.empty()) stats["tiled"] = tiled_json(r);
}

}  // namespace repix::harness
