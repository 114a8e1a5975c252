// `gpu-opt`: gpu-epoch-pipelined plus run merging inside a thread's 16-pair item (epoch_hist.cuh):
// runs of equal consecutive bins, common on smooth images, cost one shared atomic instead of one
// per pair.
#include "ami/auto_mi/epoch_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_opt_variant() {
  return make_lag_variant<EpochPlan<true, true>>(
      "gpu-opt", "epoch-runs", "gpu-epoch-pipelined with runs of equal consecutive bins in a thread's item added once");
}

}  // namespace repix::ami::auto_mi::gpu
