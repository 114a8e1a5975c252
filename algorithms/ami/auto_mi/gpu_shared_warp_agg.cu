// `gpu-shared-warp-agg`: gpu-shared-hist plus warp aggregation: lanes with the same (a, b) pair
// add once by popcount (__match_any_sync). Fewer shared atomics where a warp's pairs repeat
// (smooth images), a match instruction more per pair where they do not (i.i.d. labels): kept as an
// ablation step beside gpu-opt's cheaper run merging.
#include "ami/auto_mi/shared_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_shared_warp_agg_variant() {
  return make_lag_variant<SharedHistPlan<true>>(
      "gpu-shared-warp-agg", "warp-aggregated",
      "gpu-shared-hist with equal pairs of a warp aggregated into one shared atomic (__match_any_sync)");
}

}  // namespace repix::ami::auto_mi::gpu
