// `gpu-climbing-merges`: gpu-opt with its border merges zipping by gpu_core::climbing_merge (tight
// climbs over the parents, one validated CAS a hang) instead of gpu_core::merge's steps.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_climbing_merges_variant() {
  return make_gpu_variant<PackedTiles<ClimbingMergesPolicy>::type>(
      "gpu-climbing-merges", "climbing-merges", "gpu-opt with its border merges zipping in tight climbs, one validated CAS a hang");
}

}  // namespace repix::maxtree::gpu
