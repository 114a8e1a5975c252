// `gpu-paired-loads`: gpu-climbing-merges with each step of a climb (the border merges') and of a
// settle walk (the flatten's) loading the next pixel's level and its parent together, before the
// test of either: one L2 round trip a step where the parent's load had waited for the level's test
// (gpu_core::climbing_merge<true>, gpu_core::settled_entry<true>).
// On the H200, in one process beside gpu-climbing-merges (kernel medians, ms, 6000x4000 8-bit,
// 4-connectivity): 1.924 -> 1.855 (Blin's code 1.960); Nsight Compute: the border merges 562 ->
// 531 us, the flatten 314 -> 288 us (the L2 then at 74 % of its peak). 2-5 % faster on all eight
// seminar inputs.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_paired_loads_variant() {
  return make_gpu_variant<PackedTiles<PairedLoadsPolicy>::type>(
      "gpu-paired-loads", "paired-loads", "gpu-climbing-merges with each climb and settle step loading the next level and parent together");
}

}  // namespace repix::maxtree::gpu
