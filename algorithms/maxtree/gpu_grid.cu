// `gpu-grid`: gpu-tile plus Blin et al.'s grid-connection pruning (gpu_tile_engine.cuh with
// GridPolicy): in the tile build, a thread skips the zip with its left neighbour when the pair above
// already connects the two at a level at least the lower of theirs (gpu_core::grid_prunes, where the
// argument is written out), which on plateaus and smooth images saves most horizontal zips.
// Everything else is gpu-tile's.
#include "maxtree/gpu_tile_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_grid_variant() {
  return make_gpu_variant<TiledBuild<GridPolicy>::type>(
      "gpu-grid", "grid-pruning",
      "gpu-tile, skipping each in-tile zip with the left neighbour that the pair above already implies");
}

}  // namespace repix::maxtree::gpu
