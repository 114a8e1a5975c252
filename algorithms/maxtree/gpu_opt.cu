// `gpu-opt`: the fastest max-tree here: gpu-tile-settle with two small changes:
//  - the tile zips' atomics on shared-window addresses from a base taken once
//    (packed_engine.cuh's TileWindowAtomics): the generic addresses had been converted again in
//    every zip iteration (an S2R of the CTA's cluster rank and two more instructions); on the H200
//    at 6000x4000 8-bit (Nsight Compute) the build's 819 M warp instructions -> 808 M, 1.02 -> 1.00 ms;
//  - the border merges in blocks of 128 threads, not 256 (fewer threads held by a block's longest
//    climb): 0.5-0.8 % on the 6000x4000 inputs in the same process, the same at 1920x1080.
// Together, in one process beside gpu-tile-settle: 6000x4000 8-bit, 4-connectivity 1.789 -> 1.764 ms
// (Blin et al.'s code 1.975: 0.89x), 8-connectivity 2.016 -> 1.984 (2.268).
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_opt_variant() {
  return make_gpu_variant<PackedTiles<OptPolicy>::type>(
      "gpu-opt", "tile-window", "gpu-tile-settle with the tile zips' atomics on shared-window addresses taken once and 128-thread border-merge blocks");
}

}  // namespace repix::maxtree::gpu
