// `gpu-shared-hist`: privatised shared-memory joint histograms with 16-bit counters (shared_hist.cuh),
// one shared atomic per pair, global atomics only for flushed and final counters.
#include "ami/auto_mi/shared_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_shared_hist_variant() {
  return make_lag_variant<SharedHistPlan<false>>(
      "gpu-shared-hist", "shared-16bit",
      "a block per lag chunk, whole joint histogram in shared memory as 16-bit counters flushed before overflow");
}

}  // namespace repix::ami::auto_mi::gpu
