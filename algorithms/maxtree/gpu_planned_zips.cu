// `gpu-planned-zips` (gpu-opt until gpu-opt's climbing border merges came after it): gpu-settle-copy
// with each tile column's zips planned first, as
// bit masks over its rows, then zipped (packed_core::plan_column_zips, zip_planned, where the
// profile that asked for it is). On the H200, in one process beside gpu-settle-copy and Blin et al.'s
// code (kernel medians, ms; 4-connectivity):
//   6000x4000 8-bit 2.557 -> 2.242 (Blin's 1.966), 16-bit 2.636 -> 2.321 (3.291),
//   1920x1080 8-bit 0.708 -> 0.646 (0.787), 16-bit 0.721 -> 0.661 (0.670);
// 8-connectivity 6000x4000 8-bit 2.848 -> 2.448 (2.302). The build's warp instructions 1.09 G ->
// 0.80 G at 6000x4000 8-bit. Each zip is still entered by one thread of its warp at a time.
#include "maxtree/packed_engine.cuh"
#include "maxtree/variants.hpp"

namespace repix::maxtree::gpu {

Variant gpu_planned_zips_variant() {
  return make_gpu_variant<PackedTiles<PlannedZipsPolicy>::type>(
      "gpu-planned-zips", "planned-zips",
      "gpu-settle-copy with each tile column's zips planned as row masks first (a loop the warp runs together), then zipped");
}

}  // namespace repix::maxtree::gpu
