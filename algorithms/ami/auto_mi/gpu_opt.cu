// `gpu-opt`: gpu-shared-hist plus warp aggregation: lanes with the same (a, b) pair add once by
// popcount (__match_any_sync), which removes most shared atomics on smooth images, whose pairs
// crowd the diagonal and repeat within a warp.
#include "ami/auto_mi/shared_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_opt_variant() {
  return make_lag_variant<SharedHistPlan<true>>(
      "gpu-opt", "warp-aggregated",
      "gpu-shared-hist with equal pairs of a warp aggregated into one shared atomic (__match_any_sync)");
}

}  // namespace repix::ami::auto_mi::gpu
