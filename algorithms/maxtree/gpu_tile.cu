// `gpu-tile`: Blin et al.'s tiled GPU max-tree (gpu_tile_engine.cuh): 64x16 tiles zipped in shared
// memory, then the horizontal and vertical tile-border merges in global memory, then the flatten;
// every in-tile edge merged (no pruning: gpu-grid adds it).
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_tile_variant() {
  return make_gpu_variant<TiledBuild<SeminarPolicy>::type>(
      "gpu-tile", "tiled",
      "Blin et al.: 64x16 tiles zipped in shared memory, then the tile-border merges (horizontal, vertical) in global "
      "memory, then the flatten");
}

}  // namespace repix::maxtree::gpu
