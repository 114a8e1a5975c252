// `gpu-opt`: the fastest max-tree here: gpu-tile-settle with two small changes:
//  - the tile zips' atomics on shared-window addresses from a base taken once
//    (packed_engine.cuh's TileWindowAtomics): the generic addresses had been converted again in
//    every zip iteration, an S2R of the CTA's cluster rank and two more instructions, 37 M of the
//    build's 803 M warp instructions at 6000x4000 8-bit (Nsight Compute source counters, H200);
//  - the border merges in blocks of 128 threads, not 256 (fewer threads held by a block's longest
//    climb): 0.5-0.8 % on the 6000x4000 inputs in the same process, the same at 1920x1080.
// Measured beside Blin et al.'s code: docs/maxtree.md.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_opt_variant() {
  return make_gpu_variant<PackedTiles<OptPolicy>::type>(
      "gpu-opt", "tile-window", "gpu-tile-settle with the tile zips' atomics on shared-window addresses taken once and 128-thread border-merge blocks");
}

}  // namespace repix::maxtree::gpu
