// `gpu-monotone` (gpu-opt until gpu-settle-copy and gpu-opt's planned zips came after it): gpu-packed
// with what the H100 profiles of gpu-packed beside
// Blin et al.'s own code then pointed at (Nsight Compute, 6000x4000 camera 8-bit, H100;
// NOTES.md):
//  - the flatten in one pass, in place (gpu_core::settle: each pixel's parent replaced by the level
//    root of its parent's node, as their flatten kernel does; gpu_core.hpp has why the concurrent
//    walks cannot go wrong, and its accesses are relaxed atomics): gpu-packed's walk of at most 16
//    links did not reach every chain's end on the camera image, so the jump passes ran after it,
//    1.25 ms of its 4.14 ms kernel; in place 0.37 ms, the kernel 3.15 ms;
//  - the two border merges in one grid (border_merge_kernel), so that the vertical one fills what
//    the horizontal one's long climbs leave idle (it ran at 20 % achieved occupancy alone): merges
//    1.5 -> 0.88 ms, the kernel 2.54 ms = 9.4 Gpx/s (Blin's code 2.04 ms in the same process,
//    and slower than this at 16 bits and at 1920x1080);
//  - the tile's zips are the seminar's monotone zip (packed_core::monotone_zip: tight climbs on the
//    words, one atomicMax a hang), not gpu-packed's validated CAS: 1920x1080 0.825 -> 0.721 ms
//    (Blin's 0.784), 8-connectivity 6000x4000 3.08 -> 2.96 ms, 4-connectivity 6000x4000 2.57 -> 2.65
//    ms.
// (Earlier these were gpu-packed's, and gpu-compressed was called gpu-opt.)
// Its policy, MonotonePolicy, is in packed_engine.cuh: the later steps derive from it.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_monotone_variant() {
  return make_gpu_variant<PackedTiles<MonotonePolicy>::type>(
      "gpu-monotone", "beyond-seminar",
      "gpu-packed with the seminar's monotone tile zip, the flatten in one pass in place and both border merges in one grid");
}

}  // namespace repix::maxtree::gpu
