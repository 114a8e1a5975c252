// `gpu-epoch-pipelined`: gpu-opt's epoch kernel with the next item's global loads issued before
// this item's shared atomics (epoch_hist.cuh): its top stall on the H100 was long_scoreboard (2.2
// warps per issue, 2048^2 uniform) with only 32 warps per SM to hide it. Kept as a
// measured loser (H100, 8192^2): 568 ms uniform, 562 ms smooth, against 518 / 514 ms:
// its top stall becomes short_scoreboard (the shared atomics, 3.8 warps per issue): the atomics,
// not the loads, limit the kernel.
#include "ami/auto_mi/epoch_hist.cuh"
#include "ami/auto_mi/variants.hpp"

namespace repix::ami::auto_mi::gpu {

Variant gpu_epoch_pipelined_variant() {
  return make_lag_variant<EpochPlan<false, true>>(
      "gpu-epoch-pipelined", "epoch-pipelined", "gpu-opt with the next item's loads in flight during this item's atomics");
}

}  // namespace repix::ami::auto_mi::gpu
