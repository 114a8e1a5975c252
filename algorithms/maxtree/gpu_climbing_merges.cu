// `gpu-climbing-merges` (gpu-opt until the paired loads): gpu-planned-zips with its border merges zipping by
// gpu_core::climbing_merge (tight climbs over the parents, one validated CAS a hang) instead of
// gpu_core::merge's steps (one validated step a loop, both levels loaded again after each atomic).
// On the H200, in one process beside gpu-planned-zips and Blin et al.'s code (kernel medians, ms):
//   6000x4000 8-bit, 4-connectivity 2.243 -> 1.930 (Blin's 1.994), 8-connectivity 2.445 -> 2.136 (2.288);
//   1920x1080 16-bit, 4-connectivity 0.661 -> 0.494 (0.672).
// The border merges had 2x the warp instructions of Blin's two merge kernels (0.227 G against 0.115 G
// at 6000x4000 8-bit) with their stalls on the relaxed loads of the parents.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_climbing_merges_variant() {
  return make_gpu_variant<PackedTiles<ClimbingMergesPolicy>::type>(
      "gpu-climbing-merges", "climbing-merges", "gpu-planned-zips with its border merges zipping in tight climbs, one validated CAS a hang");
}

}  // namespace repix::maxtree::gpu
